"""Exact analysis (issue 12, docs/analysis.md): hand-derived values for the toy, the
expectations against the means of 20,000 seeded traces, tv == 0 for speculative and
autoregressive on random configs (hypothesis), EOS, limit 1, the route and its budget."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from specdec_service.budget import BUDGETS
from specdec_service.engine import COUNTER_NAMES, parse_config, run
from specdec_service.engine.decoders import AUTOREGRESSIVE
from specdec_service.engine.analysis import (
    NAIVE, analysis_cost, analyze, expectations, output_distribution, parse_analysis_config, rules_for,
)

BIASED = {"draft": "biased"}
ALIGNED = {"draft": "aligned"}
# vocabulary [a, $], EOS $, draft = target: every proposal is accepted
COIN = {"vocab": ["a", "$"], "start": [0.5, 0.5], "next": {"a": [0.5, 0.5], "$": [0.5, 0.5]}}
# a three-token custom pair with an EOS, target and draft apart
EOS_TARGET = {"vocab": ["a", "b", "$"], "start": [0.5, 0.3, 0.2],
              "next": {"a": [0.2, 0.5, 0.3], "b": [0.6, 0.3, 0.1], "$": [0.3, 0.3, 0.4]}}
EOS_DRAFT = {"vocab": ["a", "b", "$"], "start": [0.3, 0.3, 0.4],
             "next": {"a": [0.6, 0.2, 0.2], "b": [0.2, 0.7, 0.1], "$": [0.5, 0.25, 0.25]}}


def analysis(config: dict, **kwargs) -> dict:
    return analyze(parse_analysis_config(config), **kwargs)


def exact_counters(result: dict) -> dict:
    return {k: Fraction(v) for k, v in result["expected"]["counters_exact"].items()}


# ---------------------------------------------------------------- hand-derived values


def test_alpha_and_residual_per_context_of_the_biased_draft():
    # alpha = sum min(p, q); residual = max(p - q, 0) / (1 - alpha)  (SPEC 1 table, SPEC 4.3)
    contexts = analysis(BIASED)["contexts"]
    assert [c["context"] for c in contexts] == [None, "A", "B", "C"]
    assert [c["alpha_exact"] for c in contexts] == ["7/10", "2/5", "3/4", "9/20"]
    assert contexts[0]["alpha"] == 0.7
    assert [c["residual_exact"] for c in contexts] == [
        ["0", "1/2", "1/2"], ["0", "3/4", "1/4"], ["0", "0", "1"], ["0", "2/11", "9/11"]]
    assert contexts[0]["residual"] == [0.0, 0.5, 0.5]
    assert contexts[1]["p"] == [0.2, 0.6, 0.2] and contexts[1]["q"] == [0.8, 0.15, 0.05]


def test_aligned_draft_never_rejects_and_has_no_residual():
    result = analysis(ALIGNED)
    assert all(c["alpha_exact"] == "1" and c["residual"] is None and c["residual_exact"] is None
               for c in result["contexts"])


def test_naive_rule_at_depth_1_gives_a_with_065_and_tv_3_20():
    # A: accepted at the start min(0.5, 0.8) = 1/2, plus a rejection (3/10) corrected to A from p (1/2): 13/20
    result = analysis(BIASED, depth=1)
    naive = {tuple(o["tokens"]): o["p_exact"] for o in result["naive"]["distribution"]}
    assert naive == {("A",): "13/20", ("B",): "6/25", ("C",): "11/100"}
    assert result["naive"]["tv_exact"] == "3/20" and result["naive"]["tv"] == 0.15
    assert result["output"]["tv_exact"] == "0"
    target = {tuple(o["tokens"]): o["p_exact"] for o in result["output"]["target"]}
    assert target == {("A",): "1/2", ("B",): "3/10", ("C",): "1/5"}


def test_aligned_draft_width_3_limit_8_by_hand():
    # block 1: 3 accepted + bonus (L = 4); block 2: 3 accepted, L + k = 7 < 8, so a bonus again (L = 8).
    result = analysis(ALIGNED)
    assert exact_counters(result) == {"target_passes": 2, "draft_steps": 6, "accepted": 6, "rejected": 0,
                                      "discarded": 0, "bonus_tokens": 2, "committed": 8, "draws": 14}
    assert result["expected"]["committed_per_pass_exact"] == "4"
    assert result["expected"]["acceptance_rate_exact"] == "1"
    assert result["leviathan"] == {"acceptance_rate": 1.0, "width": 3, "tokens_per_pass": 4.0, "speedup": 4.0}


def test_no_bonus_at_the_limit():
    # limit 7: block 2 accepts 3 and reaches the limit, so no bonus: 13 draws, not 14
    counters = exact_counters(analysis({**ALIGNED, "limit": 7}))
    assert counters == {"target_passes": 2, "draft_steps": 6, "accepted": 6, "rejected": 0, "discarded": 0,
                        "bonus_tokens": 1, "committed": 7, "draws": 13}


def test_limit_1():
    # one block, one proposal: accepted with 7/10 (no bonus at the limit), else corrected
    result = analysis({**BIASED, "limit": 1})
    assert exact_counters(result) == {"target_passes": 1, "draft_steps": 1, "accepted": Fraction(7, 10),
                                      "rejected": Fraction(3, 10), "discarded": 0, "bonus_tokens": 0,
                                      "committed": 1, "draws": Fraction(23, 10)}
    assert result["output"]["depth"] == 1 and result["output"]["tv_exact"] == "0"


def test_eos_stops_verification_and_the_session():
    # width 1, limit 2: the proposal is accepted; half the time it is $ (the session ends with
    # one token, no bonus); else a bonus follows (a or $), reaching the limit.
    config = {"target": COIN, "draft": COIN, "eos": "$", "width": 1, "limit": 2}
    result = analysis(config, depth=2)
    assert exact_counters(result) == {"target_passes": 1, "draft_steps": 1, "accepted": 1, "rejected": 0,
                                      "discarded": 0, "bonus_tokens": Fraction(1, 2),
                                      "committed": Fraction(3, 2), "draws": Fraction(5, 2)}
    out = {tuple(o["tokens"]): o["p_exact"] for o in result["output"]["distribution"]}
    assert out == {("$",): "1/2", ("a", "$"): "1/4", ("a", "a"): "1/4"}


def test_eos_drafting_stops_after_a_drafted_eos():
    # width 3 from the start: a drafted $ ends the proposal, so nothing after it is discarded
    config = {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "$", "width": 3, "limit": 1}
    counters = exact_counters(analysis(config))
    # limit 1: k = 1, one proposal, nothing to discard
    assert counters["draft_steps"] == 1 and counters["discarded"] == 0


def test_greedy_expectations_are_its_one_trace():
    # greedy decoding is deterministic: the expectation is the trace's own count
    for config in ({**BIASED, "mode": "greedy"}, {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "$",
                                                   "mode": "greedy", "width": 2, "limit": 6}):
        result = analysis(config)
        trace = run(parse_config({**config, "seed": 7}))
        assert exact_counters(result) == trace["counters"]
        first = [o for o in result["output"]["distribution"]]
        assert len(first) == 1 and first[0]["p_exact"] == "1"
        assert first[0]["tokens"] == trace["output"][:result["output"]["depth"]]
    assert analysis({**BIASED, "mode": "greedy"}, depth=1)["output"]["tv_exact"] == "1/2"


def test_autoregressive_counts_one_pass_per_token():
    result = analysis({**BIASED, "mode": "autoregressive"})
    assert exact_counters(result) == {"target_passes": 8, "draft_steps": 0, "accepted": 0, "rejected": 0,
                                      "discarded": 0, "bonus_tokens": 0, "committed": 8, "draws": 8}
    assert result["expected"]["acceptance_rate"] is None and result["leviathan"] is None
    assert result["naive"] is None and result["output"]["tv_exact"] == "0"


def test_sweep_and_best_width_with_a_draft_cost():
    result = analysis(BIASED, widths=[1, 2, 3, 4, 5, 6, 7, 8], draft_cost=Fraction(1, 20))
    speedups = [Fraction(s["speedup_exact"]) for s in result["sweep"]]
    assert [s["width"] for s in result["sweep"]] == list(range(1, 9))
    best = result["best_width"]
    assert speedups[best - 1] == max(speedups) and best not in (1, 8)
    at_3 = result["sweep"][2]
    assert at_3["speedup_exact"] == result["expected"]["speedup_exact"]
    # speedup = E[committed] / (E[passes] + c E[draft steps]), exactly
    c = exact_counters(result)
    assert Fraction(at_3["speedup_exact"]) == c["committed"] / (c["target_passes"] + Fraction(1, 20) * c["draft_steps"])


def test_leviathan_closed_form_beside_the_exact_figure():
    result = analysis(BIASED, draft_cost=Fraction(1, 20))
    a = Fraction(result["expected"]["acceptance_rate_exact"])
    tokens = (1 - a ** 4) / (1 - a)
    assert result["leviathan"]["tokens_per_pass"] == pytest.approx(float(tokens), rel=1e-15)
    assert result["leviathan"]["speedup"] == pytest.approx(float(tokens / (1 + 3 * Fraction(1, 20))), rel=1e-15)
    # the closed form ignores the limit and the per-context acceptance: it is off
    assert result["leviathan"]["tokens_per_pass"] != result["expected"]["committed_per_pass"]


def test_exact_strings_are_lowest_terms():
    result = analysis(BIASED)
    for value in result["expected"]["counters_exact"].values():
        fraction = Fraction(value)
        assert value == (f"{fraction.numerator}/{fraction.denominator}" if fraction.denominator > 1
                         else str(fraction.numerator))
        assert math.gcd(fraction.numerator, fraction.denominator) == 1


def test_seed_is_ignored():
    assert analysis({**BIASED, "seed": 5}) == analysis(BIASED)


# ---------------------------------------------------------------- against seeded traces

SESSIONS = 20_000


@pytest.mark.parametrize("config", [
    {**BIASED},
    {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "$", "width": 4, "limit": 6},
    {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "$", "mode": "autoregressive", "limit": 5},
], ids=["toy-biased", "eos-custom", "eos-autoregressive"])
def test_expectations_match_the_mean_of_20000_seeded_traces(config):
    """Every expected counter within 4.5 standard errors of the mean over seeds 0..19999
    (each counter's sample standard deviation; a false alarm has probability below 1e-5
    per counter), and the first-two-token frequencies within 4.5 standard errors too."""
    depth = 2
    result = analysis(config, depth=depth)
    sums = dict.fromkeys(COUNTER_NAMES, 0)
    squares = dict.fromkeys(COUNTER_NAMES, 0)
    prefixes: dict = {}
    for seed in range(SESSIONS):
        trace = run(parse_config({**config, "seed": seed}))
        for name in COUNTER_NAMES:
            value = trace["counters"][name]
            sums[name] += value
            squares[name] += value * value
        key = tuple(trace["output"][:depth])
        prefixes[key] = prefixes.get(key, 0) + 1
    for name in COUNTER_NAMES:
        mean = sums[name] / SESSIONS
        sd = math.sqrt(max(squares[name] / SESSIONS - mean * mean, 0))
        expected = result["expected"]["counters"][name]
        assert abs(mean - expected) <= 4.5 * sd / math.sqrt(SESSIONS) + 1e-12, (name, mean, expected)
    distribution = {tuple(o["tokens"]): o["p"] for o in result["output"]["distribution"]}
    assert set(prefixes) <= set(distribution)
    for tokens, p in distribution.items():
        frequency = prefixes.get(tokens, 0) / SESSIONS
        assert abs(frequency - p) <= 4.5 * math.sqrt(p * (1 - p) / SESSIONS) + 1e-12, (tokens, frequency, p)


# ---------------------------------------------------------------- the theorem, on random configs


@st.composite
def rows(draw, size: int):
    cuts = sorted(draw(st.lists(st.integers(0, 20), min_size=size - 1, max_size=size - 1)))
    return [(b - a) / 20 for a, b in zip([0, *cuts], [*cuts, 20])]


@st.composite
def small_configs(draw):
    size = draw(st.integers(2, 4))
    vocab = [chr(ord("a") + i) for i in range(size)]

    def model():
        return {"vocab": vocab, "start": draw(rows(size)), "next": {v: draw(rows(size)) for v in vocab}}

    return {"target": model(), "draft": model(), "width": draw(st.integers(1, 4)), "limit": draw(st.integers(1, 5)),
            "eos": draw(st.sampled_from([None, *vocab])), "mode": draw(st.sampled_from(["speculative", "autoregressive"]))}


@given(small_configs(), st.integers(1, 3))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_speculative_and_autoregressive_output_is_the_target(config, depth):
    config_ = parse_analysis_config(config)
    depth = min(depth, config_.limit)
    rules = rules_for(config_)
    distribution = output_distribution(rules, config_.limit, depth)
    assert sum(distribution.values()) == 1
    assert distribution == output_distribution(rules_for(config_, AUTOREGRESSIVE), config_.limit, depth)
    result = analyze(config_, depth=depth, widths=[1, 2])
    assert result["output"]["tv_exact"] == "0"


@given(small_configs())
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_counters_add_up(config):
    """committed = accepted + rejected + bonus (+ the sampled token when autoregressive);
    draft steps = accepted + rejected + discarded; each session commits at most limit tokens."""
    config_ = parse_analysis_config(config)
    c = expectations(rules_for(config_), config_.limit)
    assert c["draft_steps"] == c["accepted"] + c["rejected"] + c["discarded"]
    if config_.mode == "speculative":
        assert c["committed"] == c["accepted"] + c["rejected"] + c["bonus_tokens"]
        assert c["draws"] == c["draft_steps"] + c["accepted"] + 2 * c["rejected"] + c["bonus_tokens"]
    else:
        assert c["committed"] == c["target_passes"] == c["draws"]
    assert 1 <= c["committed"] <= config_.limit
    if config_.eos is None:
        assert c["committed"] == config_.limit
    naive = output_distribution(rules_for(config_, NAIVE), config_.limit, 1)
    assert sum(naive.values()) == 1


# ---------------------------------------------------------------- the route and its budget


def test_route_answers_the_biased_toy(client):
    response = client.post("/v1/analysis", json={"config": BIASED, "depth": 1, "draft_cost": 0.05})
    assert response.status_code == 200
    body = response.get_json()
    assert body["config"] == {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "limit": 8,
                              "eos": None}
    assert body["contexts"][0]["alpha_exact"] == "7/10"
    assert body["naive"]["tv_exact"] == "3/20"
    assert body["draft_cost_exact"] == "1/20"
    assert body == analysis(BIASED, depth=1, draft_cost=Fraction(1, 20))


def test_route_refuses_bad_fields(client):
    cases = [
        ({"config": BIASED, "widths": [2, 2]}, "#/widths/1"),
        ({"config": BIASED, "widths": [0]}, "#/widths/0"),
        ({"config": BIASED, "draft_cost": -0.5}, "#/draft_cost"),
        ({"config": BIASED, "draft_cost": "1"}, "#/draft_cost"),
        ({"config": {"draft": "nope"}}, "#/config/draft"),
        ({"config": BIASED, "depth": 9}, "#/depth"),
    ]
    for body, pointer in cases:
        response = client.post("/v1/analysis", json=body)
        assert response.status_code == 422, body
        assert response.mimetype == "application/problem+json"
        assert pointer in [e["pointer"] for e in response.get_json()["errors"]], (body, response.get_json())


def test_a_depth_above_the_limit_is_analysed_at_the_limit(client):
    """issue 18: ``{"depth": 6, "config": {"limit": 1}}`` is schema-valid and was refused. Every
    session ends by ``limit`` tokens, so the distribution of its first ``depth`` > ``limit``
    tokens is the one at depth ``limit``: the answer is that one, ``output.depth`` the depth
    analysed. The kind: every limit 1-7 with every depth above it up to 8, on the toy with the
    biased draft and with an EOS, each mode."""
    example = {"depth": 6, "widths": [1], "config": {"draft": "biased", "limit": 1}}
    response = client.post("/v1/analysis", json=example)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["output"]["depth"] == 1
    assert [o["tokens"] for o in response.get_json()["output"]["target"]] == [["A"], ["B"], ["C"]]
    for config in ({**BIASED, "eos": "C"}, {**BIASED, "mode": "greedy"}, {**BIASED, "mode": "autoregressive"}):
        for limit in range(1, 8):
            at_limit = client.post("/v1/analysis", json={"depth": limit, "widths": [1],
                                                         "config": {**config, "limit": limit}}).get_json()
            assert at_limit["output"]["depth"] == limit
            for depth in range(limit + 1, 9):
                body = {"depth": depth, "widths": [1], "config": {**config, "limit": limit}}
                response = client.post("/v1/analysis", json=body)
                assert response.status_code == 200 and response.get_json() == at_limit, body
    config = parse_analysis_config({**BIASED, "limit": 2})
    assert analyze(config, depth=8, widths=[1]) == analyze(config, depth=2, widths=[1])


def test_64_labels_width_16_limit_256_is_refused_up_front_naming_the_cost(client):
    vocab = [f"t{i}" for i in range(64)]
    row = [1 / 64] * 64
    model = {"vocab": vocab, "start": row, "next": {v: row for v in vocab}}
    config = {"target": model, "draft": model, "width": 16, "limit": 256}
    response = client.post("/v1/analysis", json={"config": config})
    assert response.status_code == 422
    body = response.get_json()
    assert body["type"] == "tag:specdec,2026:problem/over-budget"
    budget = BUDGETS["POST /v1/analysis"].limit
    assert body["budget"] == budget and body["cost"] > budget
    assert f"{body['cost']:,}" in body["detail"]
    assert body["cost"] == analysis_cost(parse_analysis_config(config), 3, range(1, 9))


def test_every_builtin_config_is_within_the_budget():
    """Every built-in config is analysable: up to limit 256, width 16, depth 8 with the
    default widths 1-8, or all 16 widths at the default depth 3."""
    budget = BUDGETS["POST /v1/analysis"].limit
    for width in (1, 3, 16):
        config = parse_analysis_config({**BIASED, "width": width, "limit": 256})
        assert analysis_cost(config, 8, range(1, 9)) <= budget
        assert analysis_cost(config, 3, range(1, 17)) <= budget


def test_the_numbers_docs_analysis_quotes():
    """docs/analysis.md's claims: best width 3 at draft cost 0.05 and 2 at 0.2; greedy's one
    outcome A B A (target probability 33/200, so tv 167/200); speculative and autoregressive
    seed-1 traces differ while both have tv 0; Leviathan off at limit 8, close at limit 256."""
    assert analysis(BIASED, draft_cost=Fraction(1, 20))["best_width"] == 3
    assert analysis(BIASED, draft_cost=Fraction(1, 5))["best_width"] == 2
    greedy = analysis({**BIASED, "mode": "greedy"})["output"]
    assert [o["tokens"] for o in greedy["distribution"]] == [["A", "B", "A"]]
    assert {tuple(o["tokens"]): o["p_exact"] for o in greedy["target"]}[("A", "B", "A")] == "33/200"
    assert greedy["tv_exact"] == "167/200"
    outputs = [run(parse_config({**BIASED, "seed": 1, "mode": mode}))["output"]
               for mode in ("speculative", "autoregressive")]
    assert outputs == [list("ACBABABB"), list("BCCBABCC")]
    for mode in ("speculative", "autoregressive"):
        assert analysis({**BIASED, "mode": mode})["output"]["tv_exact"] == "0"
    short = analysis(BIASED, widths=[3])
    assert round(short["expected"]["committed_per_pass"], 3) == 1.868
    assert round(short["leviathan"]["tokens_per_pass"], 3) == 2.039
    long = analysis({**BIASED, "limit": 256}, widths=[3], depth=1)
    assert (round(long["expected"]["committed_per_pass"], 3), round(long["leviathan"]["tokens_per_pass"], 3)) \
        == (1.983, 1.977)
