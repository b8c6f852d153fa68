"""POST /v1/analysis with a SPEC 12 tree: what a report needs. The `tree` object names the shape,
the verifier, the branching as drafted and the thresholds, and per context how often a node
accepts one of its children, checked exactly against an independent enumeration of SPEC 12.1's
children and SPEC 12.3-12.4's tests for every shape x verifier, D = 1-3, both built-in drafts and
a lossy threshold; the defaults (widths 1-8, the sweep over D = 1..8) are cut to fit the route's
budget and named in `fitted`, never refused, for every shape x verifier; a config without `tree`
answers exactly as before (no `fitted`, no new field)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from specdec_service import create_app
from specdec_service.api.analysis import AnalysisOut
from specdec_service.budget import BUDGETS
from specdec_service.engine.analysis import analysis_cost, parse_analysis

BUDGET = BUDGETS["POST /v1/analysis"].limit
COMBINATIONS = [("chains", "residual"), ("distinct", "residual"), ("chains", "target_only"),
                ("distinct", "target_only"), ("beam", "target_only")]
"""Every shape x verifier SPEC 12 allows."""
LOSSY = {"shape": "beam", "verify": "target_only", "threshold_acc": 0.5}


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def post(client, body):
    response = client.post("/v1/analysis", json=body)
    assert response.status_code == 200, response.get_json()
    answer = response.get_json()
    assert AnalysisOut().validate(answer) == {}
    return answer


# ---------------------------------------------------------------- an independent enumeration


F = Fraction
TOY = {None: [F(1, 2), F(3, 10), F(1, 5)], 0: [F(1, 5), F(3, 5), F(1, 5)], 1: [F(11, 20), F(3, 20), F(3, 10)],
       2: [F(1, 4), F(1, 4), F(1, 2)]}
"""SPEC 1's toy target (vocabulary A, B, C) per context (None: the empty prefix), exactly."""
DRAFTS = {"aligned": TOY, "biased": {c: [F(4, 5), F(3, 20), F(1, 20)] for c in TOY}}
"""SPEC 1's built-in drafts."""
VOCAB = ["A", "B", "C"]


def without(row, drawn):
    """``row`` with the tokens ``drawn`` set to 0, normalised; None without mass."""
    kept = [Fraction(0) if y in drawn else x for y, x in enumerate(row)]
    total = sum(kept)
    return [x / total for x in kept] if total else None


def children_law(shape, q, drafts):
    """SPEC 12.1 at a block's first depth: {children (distinct tokens, in order): probability}."""
    if shape == "beam":  # the D most probable tokens of q, ties in vocabulary order, never a 0
        return {tuple(sorted((y for y in range(len(q)) if q[y]), key=lambda y: (-q[y], y))[:drafts]): F(1)}
    law = {}

    def draw(drawn, weight, left):
        s = q if shape == "chains" else without(q, drawn)
        if left == 0 or s is None:  # distinct: no mass left, no more siblings
            law[tuple(drawn)] = law.get(tuple(drawn), 0) + weight
            return
        for y, sy in enumerate(s):
            if sy:
                draw(drawn if y in drawn else drawn + [y], weight * sy, left - 1)
    draw([], F(1), drafts)
    return law


def residual_accepts(shape, p, q, drafts):
    """SPEC 12.3 at a block's first depth: the probability that one of the candidates is accepted
    (chains: D draws from q, each tested against q; distinct: siblings without replacement, each
    tested against its own proposal law s_j)."""
    def walk(r, drawn, left):
        s = q if shape == "chains" else without(q, drawn)
        if left == 0 or s is None:
            return Fraction(0)
        total = Fraction(0)
        for y, sy in enumerate(s):
            if not sy:
                continue
            accept = min(Fraction(1), r[y] / sy)
            total += sy * accept
            if accept < 1:
                rest = [max(a - b, Fraction(0)) for a, b in zip(r, s)]
                mass = sum(rest)
                r_next = [x / mass for x in rest] if mass else r
                total += sy * (1 - accept) * walk(r_next, drawn + [y], left - 1)
        return total
    return walk(p, [], drafts)


def target_only_accepts(children, p, threshold_single, threshold_acc):
    """SPEC 12.4 at one node: P(some child accepted) with u uniform on [0, 1)."""
    if any(p[y] and p[y] >= threshold_single for y in children):
        return Fraction(1)
    return min(Fraction(1), sum(p[y] for y in children) / threshold_acc)


def expected_accepts(draft, shape, verify, drafts, threshold_single=Fraction(1), threshold_acc=Fraction(1)):
    """Per context, how often a node accepts one of its children, from SPEC 12 alone."""
    target, proposal = TOY, DRAFTS[draft]
    out = {}
    for c in target:
        p, q = target[c], proposal[c]
        if verify == "residual":
            out[c] = residual_accepts(shape, p, q, drafts)
        else:
            out[c] = sum(w * target_only_accepts(ch, p, threshold_single, threshold_acc)
                         for ch, w in children_law(shape, q, drafts).items())
    return out


# ---------------------------------------------------------------- the tree object


@pytest.mark.parametrize("drafts", [1, 2, 3])
@pytest.mark.parametrize("draft", ["biased", "aligned"])
@pytest.mark.parametrize("shape, verify", COMBINATIONS, ids="+".join)
def test_node_acceptance_of_every_shape_and_verifier(client, shape, verify, draft, drafts):
    body = post(client, {"config": {"draft": draft, "mode": "tree", "width": 2, "drafts": drafts,
                                    "tree": {"shape": shape, "verify": verify}}, "widths": [1], "depth": 1})
    tree = body["tree"]
    expected = expected_accepts(draft, shape, verify, drafts)
    assert {n["context"]: Fraction(n["accept_exact"]) for n in tree["nodes"]} == {
        None if c is None else VOCAB[c]: a for c, a in expected.items()}
    assert (tree["shape"], tree["verify"], tree["verdict"]) == (shape, verify, "lossless")
    assert tree["branching"] == ([drafts, 1] if shape == "distinct" else None)
    target_only = verify == "target_only"
    assert (tree["threshold_single_exact"], tree["threshold_acc_exact"]) == (("1", "1") if target_only else (None, None))
    if verify == "residual" and drafts == 1:  # one candidate: SPEC 4's alpha = sum min(p, q)
        assert [n["accept_exact"] for n in tree["nodes"]] == [c["alpha_exact"] for c in body["contexts"]]


@pytest.mark.parametrize("tree, single, acc", [
    (LOSSY, Fraction(1), Fraction(1, 2)),
    ({"shape": "chains", "verify": "target_only", "threshold_single": 0.4}, Fraction(2, 5), Fraction(1)),
    ({"shape": "distinct", "verify": "target_only", "threshold_acc": 0.7, "threshold_single": 0.55},
     Fraction(11, 20), Fraction(7, 10)),
], ids=["beam acc 1/2", "chains single 0.4", "distinct both"])
def test_lossy_thresholds_are_named_and_accept_more(client, tree, single, acc):
    body = post(client, {"config": {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "tree": tree},
                         "widths": [2], "depth": 1})
    got = body["tree"]
    assert (Fraction(got["threshold_single_exact"]), Fraction(got["threshold_acc_exact"])) == (single, acc)
    assert got["verdict"] == "lossy" and Fraction(body["output"]["tv_exact"]) > 0
    expected = expected_accepts("biased", tree["shape"], "target_only", 2, single, acc)
    lossless = expected_accepts("biased", tree["shape"], "target_only", 2)
    for node in got["nodes"]:
        c = None if node["context"] is None else VOCAB.index(node["context"])
        assert Fraction(node["accept_exact"]) == expected[c] >= lossless[c]
    if tree is LOSSY:  # SPEC 12.6: every node accepts, 3 tokens per pass, total variation 1/2 on the first token
        assert [n["accept_exact"] for n in got["nodes"]] == ["1"] * 4 and body["output"]["tv_exact"] == "1/2"


def test_a_branching_list_is_reported_as_drafted(client):
    body = post(client, {"config": {"draft": "biased", "mode": "tree", "width": 4, "drafts": 2, "limit": 3,
                                    "tree": {"shape": "distinct", "branching": [3, 2]}}, "widths": [1], "depth": 1})
    assert body["tree"]["branching"] == [3, 2, 1]  # k = min(width, limit) = 3; 1 past the list's end


# ---------------------------------------------------------------- the defaults fit the budget


@pytest.mark.parametrize("tree", [{"shape": s, "verify": v} for s, v in COMBINATIONS] + [LOSSY],
                         ids=lambda t: "+".join(str(v) for v in t.values()))
def test_the_default_widths_of_every_tree_fit_the_budget(client, tree):
    config = {"draft": "biased", "mode": "tree", "drafts": 2, "tree": tree}
    body = post(client, {"config": config})
    parsed, depth, _, _ = parse_analysis({"config": config})
    widths = [s["width"] for s in body["sweep"]]
    drafts = sorted({t["drafts"] for t in body["tree_sweep"]})
    fitted = body.get("fitted")
    if fitted is None:  # the defaults fit as they are
        assert (widths, drafts) == (list(range(1, 9)), list(range(1, 9)))
        assert analysis_cost(parsed, depth, widths) <= BUDGET
        return
    assert (fitted["widths"], fitted["drafts"], fitted["default_widths"]) == (widths, drafts, list(range(1, 9)))
    assert widths == list(range(1, len(widths) + 1)) and drafts == list(range(1, len(drafts) + 1))
    assert 2 in drafts  # the config's D keeps its row
    assert fitted["cost"] == analysis_cost(parsed, depth, widths, drafts) <= BUDGET == fitted["budget"]
    assert fitted["default_cost"] == analysis_cost(parsed, depth, range(1, 9)) > BUDGET
    # the longest: one more width (or one more D when every width fits) is over the budget
    assert (analysis_cost(parsed, depth, range(1, len(widths) + 2), drafts) > BUDGET if len(widths) < 8
            else analysis_cost(parsed, depth, widths, range(1, len(drafts) + 2)) > BUDGET)


def test_chains_target_only_fits_widths_1_to_7_and_d_1_to_2(client):
    """The issue's example: its defaults would cost 96,220,224 units, 96 times the budget."""
    body = post(client, {"config": {"draft": "biased", "mode": "tree", "drafts": 2,
                                    "tree": {"shape": "chains", "verify": "target_only"}}})
    assert body["fitted"] == {"widths": [1, 2, 3, 4, 5, 6, 7], "drafts": [1, 2], "cost": 978768,
                              "default_widths": [1, 2, 3, 4, 5, 6, 7, 8], "default_cost": 96220224, "budget": BUDGET}


def test_sent_widths_are_kept_and_only_the_sweep_over_d_is_cut(client):
    config = {"draft": "biased", "mode": "tree", "drafts": 2, "tree": {"shape": "chains", "verify": "target_only"}}
    body = post(client, {"config": config, "widths": [2, 3]})
    assert [s["width"] for s in body["sweep"]] == [2, 3]
    assert body["fitted"]["widths"] == body["fitted"]["default_widths"] == [2, 3]
    assert body["fitted"]["drafts"] == sorted({t["drafts"] for t in body["tree_sweep"]})


def test_a_config_over_the_budget_whatever_the_defaults_is_still_refused(client):
    config = {"draft": "biased", "mode": "tree", "drafts": 8, "tree": {"shape": "chains", "verify": "target_only"}}
    response = client.post("/v1/analysis", json={"config": config})
    problem = response.get_json()
    assert response.status_code == 422 and problem["type"].endswith("over-budget")
    parsed, depth, _, _ = parse_analysis({"config": config})
    assert problem["cost"] == analysis_cost(parsed, depth, range(1, 9)) > BUDGET


@pytest.mark.parametrize("config", [{"draft": "biased"}, {"draft": "biased", "mode": "block"},
                                    {"draft": "biased", "mode": "tree", "drafts": 2}],
                         ids=["speculative", "block", "tree without tree"])
def test_a_config_whose_defaults_fit_answers_as_before(client, config):
    body = post(client, {"config": config, "depth": 2})
    assert "fitted" not in body and "tree" not in body
    assert [s["width"] for s in body["sweep"]] == list(range(1, 9))
