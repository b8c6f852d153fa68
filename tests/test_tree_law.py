"""The exact law of SPEC 12 trees (engine/tree_law.py): SPEC 12.6's figures exactly, section
11's figures and engine/tree_analysis.py's numbers for the default tree, total variation 0 for
every lossless shape x verifier (built-in pairs, sampling parameters, EOS, and random custom rows
by hypothesis), the exact price of the lossy thresholds, and a Monte-Carlo cross-check against
an independent simulation of SPEC 12's rules (fixed seeds, 4.5 standard errors)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from specdec_service.engine import parse_config
from specdec_service.engine.errors import InvalidInput
from specdec_service.engine.state import Config
from specdec_service.engine.tree_analysis import TreeLaw
from specdec_service.engine.tree_law import Tree, TreeShapeLaw, cost, is_lossless, target_only_choice, tree_report
from test_analysis import rows
from test_tree_analysis import EOS_DRAFT, EOS_MODEL

LOSSLESS = [Tree("chains", "residual"), Tree("distinct", "residual"), Tree("chains", "target_only"),
            Tree("distinct", "target_only"), Tree("beam", "target_only")]


ONE_ = Fraction(1)


def config(draft="biased", width=2, drafts=2, **settings_):
    return parse_config({"draft": draft, "mode": "tree", "width": width, "drafts": drafts, "seed": 0, **settings_})


def per_pass(draft, width, drafts, tree):
    return TreeShapeLaw(config(draft, width, drafts), tree).first_block(width, drafts)["committed"]


# ---------------------------------------------------------------- SPEC 12.6


@pytest.mark.parametrize("draft, width, tree, exact", [
    ("biased", 2, Tree("chains", "residual"), Fraction(349449, 160000)),
    ("biased", 2, Tree("distinct", "residual"), Fraction(77, 32)),
    ("biased", 2, Tree("beam", "target_only"), Fraction(11, 5)),
    ("biased", 3, Tree("distinct", "residual"), Fraction(347, 125)),
    ("biased", 3, Tree("beam", "target_only"), Fraction(281, 100)),
    ("aligned", 2, Tree("chains", "residual"), Fraction(3)),
    ("aligned", 2, Tree("distinct", "residual"), Fraction(3)),
    ("aligned", 2, Tree("beam", "target_only"), Fraction(453, 200)),
])
def test_spec_12_6_exact_figures(draft, width, tree, exact):
    assert per_pass(draft, width, width, tree) == exact


@pytest.mark.parametrize("draft, width, tree, about", [
    ("biased", 2, Tree("chains", "target_only"), "1.791"),
    ("biased", 3, Tree("chains", "residual"), "2.591"),
    ("biased", 3, Tree("chains", "target_only"), "2.012"),
    ("aligned", 2, Tree("chains", "target_only"), "1.889"),
])
def test_spec_12_6_figures_about(draft, width, tree, about):
    assert f"{float(per_pass(draft, width, width, tree)):.3f}" == about


def test_spec_12_6_lossy_beam_threshold_acc_one_half():
    lossy = Tree("beam", "target_only", threshold_acc=Fraction(1, 2))
    first = tree_report(config(), lossy, 2, 2, 1)
    three = tree_report(config(), lossy, 2, 2, 3)
    assert first["committed_per_pass"] == three["committed_per_pass"] == 3
    assert (first["tv"], three["tv"]) == (Fraction(1, 2), Fraction(3, 5))
    assert first["verdict"] == three["verdict"] == "lossy" and not is_lossless(lossy)
    # every first token is A: the root's children are A, B and A's slice reaches 1 at u < 1
    assert first["output"] == {(0,): 1} and first["target"] == {(0,): Fraction(1, 2), (1,): Fraction(3, 10),
                                                                   (2,): Fraction(1, 5)}


def test_threshold_single_is_lossy_and_exact():
    # p(A) = 1/2 >= threshold_single 1/2: A is always accepted at the root, whatever u
    report = tree_report(config(), Tree("chains", "target_only", threshold_single=Fraction(1, 2)), 2, 2, 1)
    assert report["verdict"] == "lossy" and report["tv"] > 0
    lossless = tree_report(config(), Tree("chains", "target_only"), 2, 2, 1)
    assert lossless["tv"] == 0 and lossless["verdict"] == "lossless"


# ---------------------------------------------------------------- the target-only draw


def test_target_only_choice_slices():
    p = (Fraction(1, 2), Fraction(3, 10), Fraction(1, 5))
    assert target_only_choice(p, (0, 1), ONE_, ONE_) == ([(0, Fraction(1, 2)), (1, Fraction(3, 10))], Fraction(1, 5))
    assert target_only_choice(p, (0, 1), ONE_, Fraction(1, 2)) == ([(0, 1)], 0)
    # a child of probability 0 is never accepted, even at u = 0 (sglang#35771's inclusive test does)
    zero = (Fraction(0), Fraction(1, 2), Fraction(1, 2))
    assert target_only_choice(zero, (0, 2), ONE_, ONE_) == ([(1, Fraction(1, 2))], Fraction(1, 2))
    assert target_only_choice(p, (1, 0), Fraction(1, 2), ONE_) == ([(0, Fraction(3, 10)), (1, Fraction(7, 10))], 0)


# ---------------------------------------------------------------- the default tree is section 11


@pytest.mark.parametrize("draft", ["biased", "aligned"])
def test_section_11_figures(draft):
    if draft == "biased":
        assert per_pass("biased", 2, 1, Tree()) == Fraction(407, 200)
        assert per_pass("biased", 2, 2, Tree()) == Fraction(349449, 160000)
        assert round(float(TreeShapeLaw(config(drafts=3)).first_block(2, 3)["committed"]), 2) == 2.31
    for width in (1, 2, 3):  # one draft: a chain, whichever shape drafts it (SPEC 12.1)
        assert per_pass(draft, width, 1, Tree()) == per_pass(draft, width, 1, Tree("distinct"))


@pytest.mark.parametrize("settings_", [
    {"draft": "biased", "limit": 4}, {"draft": "aligned", "limit": 3},
    {"target": EOS_MODEL, "draft": EOS_DRAFT, "eos": "$", "limit": 4},
    {"draft": "biased", "limit": 3, "sampling": {"temperature": 0.5, "top_k": 2}},
], ids=["biased", "aligned", "eos", "sampling"])
def test_chains_residual_equals_tree_analysis(settings_):
    cfg = parse_config({"mode": "tree", "seed": 0, "width": 2, "drafts": 2, **settings_})
    mine, today = TreeShapeLaw(cfg), TreeLaw(cfg)
    for width, drafts in itertools.product((1, 2, 3), (1, 2, 3)):
        assert mine.first_block(width, drafts) == today.first_block(width, drafts), (width, drafts)
        assert mine.expectations(width, drafts) == today.expectations(width, drafts), (width, drafts)
        assert mine.output_weights(2, width, drafts) == today.output_weights(2, width, drafts), (width, drafts)


# ---------------------------------------------------------------- lossless: total variation 0


@pytest.mark.parametrize("tree", LOSSLESS, ids=lambda t: f"{t.shape}-{t.verify}")
@pytest.mark.parametrize("settings_", [
    {"draft": "biased", "width": 2, "drafts": 2, "limit": 3},
    {"draft": "aligned", "width": 3, "drafts": 3, "limit": 4},
    {"target": EOS_MODEL, "draft": EOS_DRAFT, "eos": "$", "width": 2, "drafts": 3, "limit": 4},
    {"draft": "biased", "width": 2, "drafts": 2, "limit": 3, "sampling": {"temperature": 0.5, "top_p": 0.9}},
], ids=["biased", "aligned", "eos", "sampling"])
def test_lossless_total_variation_is_zero(tree, settings_):
    cfg = parse_config({"mode": "tree", "seed": 0, **settings_})
    report = tree_report(cfg, tree, cfg.width, cfg.drafts, cfg.limit)
    assert report["tv"] == 0 and report["verdict"] == "lossless"
    assert sum(report["output"].values()) == 1
    counters = report["expected"]
    assert counters["draft_steps"] == counters["accepted"] + counters["rejected"] + counters["discarded"]
    assert counters["discarded"] >= 0


def test_distinct_branching_lists():
    for branching in [(2, 1), (1, 2), (3, 2), (2, 2, 2)]:
        report = tree_report(config(width=3, limit=3), Tree("distinct", "target_only", branching), 3, 2, 3)
        assert report["tv"] == 0
        report = tree_report(config(width=3, limit=3), Tree("distinct", "residual", branching), 3, 2, 3)
        assert report["tv"] == 0
    # branching [1] is one chain: section 4 (SPEC 12.1.2)
    assert per_pass("biased", 3, 1, Tree("distinct", "residual", (1,))) == per_pass("biased", 3, 1, Tree())


def test_beam_with_residual_is_refused():
    with pytest.raises(InvalidInput) as error:
        TreeShapeLaw(config(), Tree("beam", "residual"))
    assert error.value.faults[0].path == ("tree", "verify")


@st.composite
def small_configs(draw):
    size = draw(st.integers(2, 3))
    vocab = [chr(ord("a") + i) for i in range(size)]

    def model():
        return {"vocab": vocab, "start": draw(rows(size)), "next": {v: draw(rows(size)) for v in vocab}}

    return {"target": model(), "draft": model(), "mode": "tree", "seed": 0, "width": draw(st.integers(1, 3)),
            "limit": draw(st.integers(1, 3)), "drafts": draw(st.integers(1, 3)),
            "eos": draw(st.sampled_from([None, *vocab]))}


@given(small_configs(), st.sampled_from(LOSSLESS), st.lists(st.integers(1, 3), min_size=1, max_size=3))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_lossless_on_random_custom_rows(settings_, tree, branching):
    cfg = parse_config(settings_)
    if tree.shape == "distinct":
        tree = tree._replace(branching=tuple(branching))
    report = tree_report(cfg, tree, cfg.width, cfg.drafts, cfg.limit)
    assert report["tv"] == 0
    assert sum(report["output"].values()) == 1


# ---------------------------------------------------------------- cost


def test_cost_grows_with_what_is_enumerated():
    small = cost(config(), Tree("chains", "target_only"), 3, [2])
    assert cost(config(drafts=4), Tree("chains", "target_only"), 3, [2]) > small
    assert cost(config(), Tree("chains", "target_only"), 3, [2, 4, 8]) > small
    assert cost(config(), Tree("chains", "target_only"), 3, [2], range(1, 9)) > small
    assert cost(config(limit=64), Tree("chains", "target_only"), 3, [2]) > small
    assert cost(config(), Tree("beam", "target_only"), 3, [2]) < small


# ---------------------------------------------------------------- Monte Carlo: SPEC 12 simulated


def _sample(row, rng):
    u, acc = rng.random(), 0.0
    for y, x in enumerate(row):
        acc += x
        if u < acc and x > 0:
            return y
    return max(y for y, x in enumerate(row) if x > 0)


def _draft(tree, rows_q, drafts, k, rng):
    """The tree of one block from the empty prefix: {path: [(child token, proposal row)]}."""
    children: dict = {}
    if tree.shape == "chains":
        for _ in range(drafts):
            path = ()
            for _ in range(k):
                y = _sample(rows_q[path[-1] if path else None], rng)
                children.setdefault(path, []).append((y, rows_q[path[-1] if path else None]))
                path += (y,)
        return children
    if tree.shape == "distinct":
        level = [()]
        for depth in range(k):
            width = (tree.branching or (drafts,))[depth] if depth < len(tree.branching or (drafts,)) else 1
            nxt = []
            for path in level:
                s = list(rows_q[path[-1] if path else None])
                for _ in range(width):
                    if sum(s) <= 0:
                        break
                    s = [x / sum(s) for x in s]
                    y = _sample(s, rng)
                    children.setdefault(path, []).append((y, s))
                    nxt.append(path + (y,))
                    s = [0.0 if i == y else x for i, x in enumerate(s)]
            level = nxt
        return children
    level = [((), 1.0)]
    for _ in range(k):
        offers = []
        for rank, (path, score) in enumerate(level):
            q = rows_q[path[-1] if path else None]
            best = sorted((y for y in range(len(q)) if q[y] > 0), key=lambda y: -q[y])[:drafts]
            offers += [(score * q[y], rank, y, path) for y in best]
        offers.sort(key=lambda o: (-o[0], o[1], o[2]))
        level = []
        for score, _, y, path in offers[:drafts]:
            children.setdefault(path, []).append((y, None))
            level.append((path + (y,), score))
    return children


def _walk(tree, children, rows_p, rng):
    """SPEC 12.2-12.4 on a drafted tree: the committed tokens."""
    path: tuple = ()
    while children.get(path):
        p = rows_p[path[-1] if path else None]
        chosen, r = None, list(p)
        if tree.verify == "residual":
            for y, s in children[path]:
                if rng.random() * s[y] < r[y]:
                    chosen = y
                    break
                r = [max(a - b, 0.0) for a, b in zip(r, s)]
                r = [x / sum(r) for x in r]
        else:
            tokens = list(dict.fromkeys(y for y, _ in children[path]))
            u, acc = rng.random(), 0.0
            for y in tokens:
                acc += p[y]
                if p[y] > 0 and (u * float(tree.threshold_acc) < acc or p[y] >= float(tree.threshold_single)):
                    chosen = y
                    break
            r = [0.0 if y in tokens else x for y, x in enumerate(p)]
            r = [x / sum(r) for x in r] if chosen is None else r
        if chosen is None:
            return path + (_sample(r, rng),)
        path += (chosen,)
    return path + (_sample(rows_p[path[-1] if path else None], rng),)


@pytest.mark.parametrize("draft, tree", [
    ("biased", Tree("chains", "residual")), ("biased", Tree("distinct", "residual")),
    ("biased", Tree("chains", "target_only")), ("aligned", Tree("beam", "target_only")),
    ("biased", Tree("beam", "target_only", threshold_acc=Fraction(1, 2))),
], ids=lambda x: x if isinstance(x, str) else f"{x.shape}-{x.verify}-{x.threshold_acc}")
def test_monte_carlo_agrees_with_the_exact_law(draft, tree):
    cfg, blocks, rng = config(draft), 20000, random.Random(12)
    rows_p = {c: [float(x) for x in row] for c, row in TreeShapeLaw(cfg, tree).p_rows.items()}
    rows_q = {c: [float(x) for x in row] for c, row in TreeShapeLaw(cfg, tree).q_rows.items()}
    law = TreeShapeLaw(cfg, tree)
    exact = law.first_block(2, 2)["committed"]
    first = {y: sum(w for (tokens, _, _), w in law.block(None, 2, 2, True, 1)[0].items() if tokens == (y,))
             for y in range(3)}
    lengths, firsts = [], [0, 0, 0]
    for _ in range(blocks):
        committed = _walk(tree, _draft(tree, rows_q, 2, 2, rng), rows_p, rng)
        lengths.append(len(committed))
        firsts[committed[0]] += 1
    mean = sum(lengths) / blocks
    sd = math.sqrt(sum((x - mean) ** 2 for x in lengths) / (blocks - 1))
    assert abs(mean - float(exact)) <= 4.5 * sd / math.sqrt(blocks) + 1e-12, (mean, float(exact))
    for y, p in first.items():
        assert abs(firsts[y] / blocks - float(p)) <= 4.5 * math.sqrt(float(p * (1 - p)) / blocks) + 1e-12, (y, p)


# ---------------------------------------------------------------- POST /v1/analysis


def test_analysis_body_reports_the_verdict():
    from specdec_service.api.analysis import AnalysisOut
    from specdec_service.engine.tree_analysis import analyze_tree

    cfg = config()
    lossy = Tree("beam", "target_only", threshold_acc=Fraction(1, 2))
    body = analyze_tree(cfg, 1, [2], Fraction(0), TreeShapeLaw(cfg, lossy), lossy)
    assert AnalysisOut().validate(body) == {}
    assert {k: body["tree"][k] for k in ("shape", "verify", "branching", "threshold_acc_exact", "verdict")} == {
        "shape": "beam", "verify": "target_only", "branching": None, "threshold_acc_exact": "1/2", "verdict": "lossy"}
    assert body["output"]["tv_exact"] == "1/2"
    assert {(e["drafts"], e["width"]): e["committed_per_pass_exact"] for e in body["tree_sweep"]}[(2, 2)] == "3"
    lossless = Tree("distinct", "residual")
    body = analyze_tree(cfg, 2, [2], Fraction(0), TreeShapeLaw(cfg, lossless), lossless)
    assert body["tree"]["verdict"] == "lossless" and body["output"]["tv_exact"] == "0"
    assert {(e["drafts"], e["width"]): e["committed_per_pass_exact"] for e in body["tree_sweep"]}[(2, 2)] == "77/32"


HAS_TREE = "tree" in {f.name for f in dataclasses.fields(Config)}


@pytest.mark.skipif(not HAS_TREE, reason="the config's tree setting (SPEC 12) is read by the engine's parser")
@pytest.mark.parametrize("tree, tv, verdict, per_pass_exact", [
    ({"shape": "beam", "verify": "target_only", "threshold_acc": 0.5}, "1/2", "lossy", "3"),
    ({"shape": "beam", "verify": "target_only"}, "0", "lossless", "11/5"),
    ({"shape": "distinct", "verify": "residual"}, "0", "lossless", "77/32"),
    ({"shape": "chains", "verify": "residual"}, "0", "lossless", "349449/160000"),
])
def test_post_analysis_with_a_tree(tree, tv, verdict, per_pass_exact):
    from specdec_service import create_app

    client = create_app({"TESTING": True}).test_client()
    response = client.post("/v1/analysis", json={"config": {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2,
                                                            "tree": tree}, "depth": 1, "widths": [2]})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["tree"]["verdict"] == verdict and body["output"]["tv_exact"] == tv
    assert {(e["drafts"], e["width"]): e["committed_per_pass_exact"] for e in body["tree_sweep"]}[(2, 2)] == per_pass_exact


def test_the_sdk_reads_the_verdict_and_the_cli_says_lossy():
    from specdec_client.analysis import Analysis
    from specdec_client.analyze import report
    from specdec_client.render import Style
    from specdec_service.engine.tree_analysis import analyze_tree

    cfg = config()
    lossy = Tree("beam", "target_only", threshold_acc=Fraction(1, 2))
    result = Analysis.from_dict(analyze_tree(cfg, 1, [2], Fraction(0), TreeShapeLaw(cfg, lossy), lossy))
    assert result.tree_verdict == "lossy" and result.output.tv == Fraction(1, 2)
    assert "total variation to the target: 1/2 (lossy: not the target's distribution)" in "\n".join(
        report(result, Style(color=False, unicode=False)))
    plain = Analysis.from_dict(analyze_tree(cfg, 1, [2], Fraction(0)))
    assert plain.tree_verdict is None
