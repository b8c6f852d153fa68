"""POST /v1/analysis in mode tree (SPEC 11): SPEC's exact figures, D = 1 equal to mode speculative
counter for counter, total variation 0 over the first `depth` tokens for D = 1..4 (EOS, limits,
custom models), the counters' identity of SPEC 11.5, and the refusal of a request over the
budget (the recursion grows as D^3 and the output table as V^depth)."""

from __future__ import annotations

import itertools

import pytest

from specdec_service import create_app
from specdec_service.engine import parse_config
from specdec_service.engine.tree_analysis import TreeLaw

BIASED = {"draft": "biased", "mode": "tree"}
EOS_MODEL = {"vocab": ["a", "b", "$"], "start": [0.5, 0.3, 0.2],
             "next": {"a": [0.2, 0.5, 0.3], "b": [0.6, 0.1, 0.3], "$": [0.3, 0.3, 0.4]}}
EOS_DRAFT = {"vocab": ["a", "b", "$"], "start": [0.7, 0.2, 0.1],
             "next": {"a": [0.1, 0.8, 0.1], "b": [0.3, 0.3, 0.4], "$": [0.2, 0.2, 0.6]}}


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def analysis(client, config, **body):
    response = client.post("/v1/analysis", json={"config": config, **body})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_spec_11_figures_in_the_sweep(client):
    body = analysis(client, {**BIASED, "width": 2, "drafts": 2}, widths=[2])
    by_d = {e["drafts"]: e for e in body["tree_sweep"]}
    assert sorted(by_d) == list(range(1, 9))
    assert by_d[1]["committed_per_pass_exact"] == "407/200"
    assert by_d[2]["committed_per_pass_exact"] == "349449/160000"
    assert round(by_d[3]["committed_per_pass"], 2) == 2.31
    assert all(a["committed_per_pass"] < b["committed_per_pass"] for a, b in zip(body["tree_sweep"], body["tree_sweep"][1:]))
    assert body["config"]["drafts"] == 2 and body["leviathan"] is None and body["naive"] is None


@pytest.mark.parametrize("draft", ["aligned", "biased"])
def test_one_draft_is_speculative_counter_for_counter(client, draft):
    for width, limit in itertools.product((1, 2, 3, 5), (1, 4, 8)):
        config = {"draft": draft, "width": width, "limit": limit}
        tree = analysis(client, {**config, "mode": "tree", "drafts": 1}, widths=[1, 3], depth=1)
        chain = analysis(client, config, widths=[1, 3], depth=1)
        assert tree["expected"]["counters_exact"] == chain["expected"]["counters_exact"], config
        assert [s["committed_per_pass_exact"] for s in tree["sweep"]] == [
            s["committed_per_pass_exact"] for s in chain["sweep"]], config


def test_total_variation_is_zero_for_every_d(client):
    configs = [{**BIASED, "width": 2, "limit": 3}, {"draft": "aligned", "mode": "tree", "width": 3, "limit": 4},
               {"target": EOS_MODEL, "draft": EOS_DRAFT, "eos": "$", "mode": "tree", "width": 2, "limit": 4}]
    for config, drafts in itertools.product(configs, range(1, 5)):
        body = analysis(client, {**config, "drafts": drafts}, depth=config["limit"], widths=[1])
        assert body["output"]["tv_exact"] == "0", (config, drafts)


def test_the_counters_identity_and_the_limit():
    for drafts, width in itertools.product((1, 2, 4), (1, 2, 4)):
        config = parse_config({"target": EOS_MODEL, "draft": EOS_DRAFT, "eos": "$", "mode": "tree", "seed": 0,
                               "width": width, "limit": 5, "drafts": drafts})
        e = TreeLaw(config).expectations(width, drafts)
        assert e["draft_steps"] == e["accepted"] + e["rejected"] + e["discarded"]
        assert e["bonus_tokens"] <= e["target_passes"] and e["draws"] >= e["draft_steps"] + e["committed"]
        assert 0 < e["committed"] <= 5
    plain = TreeLaw(parse_config({**BIASED, "seed": 0, "drafts": 3}))
    assert plain.expectations(3, 3)["committed"] == 8  # no EOS: every session commits the limit


def test_a_request_over_the_budget_is_refused_with_its_cost(client):
    response = client.post("/v1/analysis", json={"config": {**BIASED, "drafts": 8, "width": 8}, "depth": 8})
    assert response.status_code == 422
    body = response.get_json()
    assert body["cost"] > body["budget"] == 1_000_000 and "drafts" in body["detail"]


LONG_ROWS = {"vocab": ["a", "b"], "start": [0.123456789012345, 0.876543210987655],
             "next": {"a": [0.234567890123456, 0.765432109876544], "b": [0.345678901234567, 0.654321098765433]}}
"""15-digit rows: at temperature 0.05 (SPEC 9: p^20 exactly) the step denominator has 2,881 bits."""


@pytest.mark.parametrize("limit, temperature", [(8, 0.05), (16, 0.05), (64, 0.05), (16, 0.5)])
def test_long_exact_rows_weigh_in_the_cost(client, limit, temperature):
    """The tree analysis's exact fractions grow with the rows' size: on two tokens, D = 2, width 2,
    these took 4.4 s (limit 8) to 126 s (limit 64) of CPU while the estimate said 0.05-0.2 s.
    Their cost now counts the bits (tree_cost): the defaults (widths 1-8, D 1-8) are over the
    budget, so the service analyses the longest that fits, named in `fitted` (0.1-3 s measured)."""
    config = {"target": LONG_ROWS, "draft": {**LONG_ROWS, "start": [0.5, 0.5]}, "seed": 1, "mode": "tree",
              "drafts": 2, "width": 2, "limit": limit, "sampling": {"temperature": temperature}}
    response = client.post("/v1/analysis", json={"config": config})
    assert response.status_code == 200
    fitted = response.get_json()["fitted"]
    assert fitted["default_cost"] > fitted["budget"] == 1_000_000 >= fitted["cost"]
    response = client.post("/v1/analysis", json={"config": {**config, "drafts": 8}, "widths": list(range(1, 9))})
    assert response.status_code == 422  # D = 8 asked: no default left to cut
    body = response.get_json()
    assert body["cost"] > body["budget"] == 1_000_000


def test_the_toys_cost_does_not_change_with_the_bits_term():
    """The toy's rows have a 9-bit step denominator: the growth factor is 1 (toy, D = 8, width 8,
    limit 256, depth 3, widths 1-8: 10,027,008 units, as before the bits term; its limit covers
    its widths, so tree_sweep's blocks add nothing)."""
    from specdec_service.engine.tree_analysis import tree_cost
    config = parse_config({**BIASED, "drafts": 8, "width": 8, "limit": 256, "seed": 1})
    assert tree_cost(config, 3, list(range(1, 9))) == 10_027_008


# ------------------------------------------------------------------ the law of one depth (SpecInfer)

from fractions import Fraction  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from specdec_service.engine.distributions import Dist  # noqa: E402
from specdec_service.engine.verifiers.tree import TreeVerifier  # noqa: E402
from specdec_service.grading.faulty_tree import ResidualNotUpdated  # noqa: E402

ROWS = st.lists(st.integers(0, 20), min_size=2, max_size=4).filter(any)


def committed_law(verifier, p, q, m):
    """The law of the token a depth commits, over every tuple of m candidates drawn i.i.d. from q
    (:meth:`TreeVerifier.depth_law` for each tuple)."""
    size = len(p.weights)
    law = [Fraction(0)] * size
    for cands in itertools.product([y for y in range(size) if q.weights[y]], repeat=m):
        prob = Fraction(1)
        for y in cands:
            prob *= q.probability(y)
        accept, r = verifier.depth_law(p, q, cands)
        for y, a in zip(cands, accept):
            law[y] += prob * a
        miss = 1 - sum(accept)
        if miss:
            for y in range(size):
                law[y] += prob * miss * r.probability(y)
    return law


@settings(max_examples=60)
@given(ROWS, ROWS, st.integers(1, 3))
def test_a_depth_commits_exactly_the_target(pw, qw, m):
    # SPEC 11 (SpecInfer, theorem 4.2): with the recursive residual the committed token is p, for any D
    size = min(len(pw), len(qw))
    if not any(pw[:size]) or not any(qw[:size]):
        return
    p, q = Dist.of_weights(pw[:size]), Dist.of_weights(qw[:size])
    assert committed_law(TreeVerifier(), p, q, m) == [p.probability(y) for y in range(size)]


def test_the_residual_not_updated_is_biased():
    # the catalogued mistake: every candidate tested against p; with two drafts A is over-committed
    p, q = Dist.of_weights((50, 30, 20)), Dist.of_weights((80, 15, 5))
    law = committed_law(ResidualNotUpdated(), p, q, 2)
    assert law != [p.probability(y) for y in range(3)] and law[0] > Fraction(1, 2)
