"""Exact analysis of mode block (SPEC section 10; engine/analysis_block.py, docs/analysis.md):
SPEC 10's per-width figures beside token-wise verification, total variation 0 against the target
on random configs (hypothesis), the expectations against the means of seeded traces, the counters'
identities, and the bound on the draft blocks enumerated."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from specdec_service import create_app
from specdec_service.engine import COUNTER_NAMES, parse_config, run
from specdec_service.engine.analysis import analysis_cost, analyze, parse_analysis_config
from specdec_service.engine.analysis_block import (
    MAX_DRAFT_BLOCK_CELLS, BlockLaws, block_expectations, draft_block_cells, draft_block_prefixes,
)
from test_analysis import EOS_DRAFT, EOS_TARGET, small_configs

BLOCK = {"draft": "biased", "mode": "block"}


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def test_section_10_per_width_comparison_over_http(client):
    """SPEC 10: toy, biased, empty prefix, no limit: expected accepted proposals per block 207/200
    (token-wise) against 219/200 (block) at width 2, 483/400 against 1381/1000 at width 3."""
    response = client.post("/v1/analysis", json={"config": {**BLOCK, "width": 2}, "widths": [2, 3], "depth": 3})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    rows = {row["width"]: row for row in body["block"]["comparison"]}
    assert list(rows) == [2, 3]
    assert (rows[2]["token_wise_accepted_per_block_exact"], rows[2]["accepted_per_block_exact"]) == ("207/200", "219/200")
    assert (rows[3]["token_wise_accepted_per_block_exact"], rows[3]["accepted_per_block_exact"]) == ("483/400", "1381/1000")
    assert rows[2]["accepted_per_block"] == 1.095 and rows[3]["accepted_per_block"] == 1.381
    for row in rows.values():  # Sun et al. theorem 2, and a whole session commits more per pass
        assert Fraction(row["accepted_per_block_exact"]) >= Fraction(row["token_wise_accepted_per_block_exact"])
        assert Fraction(row["committed_per_pass_exact"]) >= Fraction(row["token_wise_committed_per_pass_exact"])
    assert body["output"]["tv_exact"] == "0" and body["output"]["distribution"] == body["output"]["target"]
    assert body["naive"] is None
    assert rows[2]["committed_per_pass_exact"] == body["expected"]["committed_per_pass_exact"]
    token_wise = client.post("/v1/analysis", json={"config": {"draft": "biased", "width": 2}, "widths": [2]}).get_json()
    assert "block" not in token_wise
    assert rows[2]["token_wise_committed_per_pass_exact"] == token_wise["expected"]["committed_per_pass_exact"]


def test_width_1_is_token_wise():
    """With one proposal h_1 = w_1 = min(1, p/q): block verification is token-wise verification."""
    result = analyze(parse_analysis_config({**BLOCK, "width": 1}), widths=[1])
    token_wise = analyze(parse_analysis_config({"draft": "biased", "width": 1}), widths=[1])
    assert result["expected"] == token_wise["expected"]


@given(small_configs(), st.integers(1, 3))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_block_output_is_the_target(config, depth):
    """Sun et al. theorem 1, on the caller's own config: total variation exactly 0 over the first
    ``depth`` tokens, and the counters add up (SPEC 7)."""
    config_ = parse_analysis_config({**config, "mode": "block"})
    depth = min(depth, config_.limit)
    result = analyze(config_, depth=depth, widths=[1, 3])
    assert result["output"]["tv_exact"] == "0"
    c = {k: Fraction(v) for k, v in result["expected"]["counters_exact"].items()}
    assert c["draft_steps"] == c["accepted"] + c["rejected"] + c["discarded"]
    assert c["committed"] == c["accepted"] + c["rejected"] + c["bonus_tokens"]
    assert c["draws"] == 2 * c["draft_steps"] + c["rejected"] + c["bonus_tokens"]
    assert 1 <= c["committed"] <= config_.limit


SESSIONS = 6000


@pytest.mark.parametrize("config", [
    {**BLOCK, "width": 3},
    {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "$", "mode": "block", "width": 4, "limit": 6},
], ids=["toy-biased", "eos-custom"])
def test_expectations_match_the_mean_of_seeded_traces(config):
    """Every expected counter within 4.5 standard errors of the mean over seeds 0..5999 (each
    counter's sample standard deviation; a false alarm has probability below 1e-5 per counter)."""
    result = analyze(parse_analysis_config(config), depth=2, widths=[config["width"]])
    sums = dict.fromkeys(COUNTER_NAMES, 0)
    squares = dict.fromkeys(COUNTER_NAMES, 0)
    for seed in range(SESSIONS):
        counters = run(parse_config({**config, "seed": seed}))["counters"]
        for name in COUNTER_NAMES:
            sums[name] += counters[name]
            squares[name] += counters[name] ** 2
    for name in COUNTER_NAMES:
        mean = sums[name] / SESSIONS
        sd = math.sqrt(max(squares[name] / SESSIONS - mean * mean, 0))
        expected = result["expected"]["counters"][name]
        assert abs(mean - expected) <= 4.5 * sd / math.sqrt(SESSIONS) + 1e-12, (name, mean, expected)


def test_the_enumeration_is_bounded_and_the_bound_is_named(client):
    over = client.post("/v1/analysis", json={"config": {**BLOCK, "width": 12}})
    assert over.status_code == 422
    (error,) = over.get_json()["errors"]
    assert error["pointer"] == "#/config/width" and f"{MAX_DRAFT_BLOCK_CELLS:,}" in error["detail"]
    sweep = client.post("/v1/analysis", json={"config": {**BLOCK, "width": 3}, "widths": [3, 10]})
    assert sweep.status_code == 422 and sweep.get_json()["errors"][0]["pointer"] == "#/widths"
    config = parse_analysis_config(BLOCK)
    assert draft_block_cells(config, range(1, 9), 3) <= MAX_DRAFT_BLOCK_CELLS  # the default request is analysable
    token_wise = parse_analysis_config({"draft": "biased"})
    assert analysis_cost(config, 3, range(1, 9)) > analysis_cost(token_wise, 3, range(1, 9))


def test_the_limit_clips_k_and_forbids_the_bonus():
    laws = BlockLaws(parse_analysis_config({**BLOCK, "limit": 2, "width": 3}))
    c = block_expectations(laws, 3)
    # one block of k = 2 commits 2 tokens (the whole block, no bonus, or 1 accepted + a correction)
    # or fewer, so the session commits exactly 2 tokens
    assert c["committed"] == 2 and c["draft_steps"] >= 2 and c["bonus_tokens"] == 0


def _enumerated_prefixes(config, k: int) -> int:
    """The draft-block prefixes of length 1..k from every context, enumerated one by one."""
    rows, eos = config.rows, config.eos

    def below(last, depth: int) -> int:
        if depth == k:
            return 0
        total = 0
        for y, w in enumerate(rows.draft(last).weights):
            if w:
                total += 1 + (0 if y == eos else below(y, depth + 1))
        return total

    return sum(below(c, 0) for c in [None, *range(len(config.vocab))])


@given(small_configs(), st.integers(1, 4))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_prefix_count_is_the_enumeration(config, k):
    """The arithmetic count of draft-block prefixes (all contexts at once) is the number the
    enumeration visits, EOS and zero entries included."""
    config_ = parse_analysis_config({**config, "mode": "block"})
    counts = draft_block_prefixes(config_, k)
    assert counts == [_enumerated_prefixes(config_, j) for j in range(k + 1)]


def _uniform_64(sparse: bool) -> dict:
    """A 64-label model t0..t63: every row 64 x 1/64, or (sparse) 2 labels of 1/2."""
    vocab = [f"t{i}" for i in range(64)]
    row = [0.5, 0.5] + [0] * 62 if sparse else [0.015625] * 64
    return {"vocab": vocab, "start": row, "next": {v: row for v in vocab}}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("sampling", [None, {"temperature": 0.5}], ids=["raw", "sampled"])
def test_the_size_of_64_labels_is_counted_not_enumerated(client, sparse, sampling):
    """64 labels at widths 1-16 and limits 1-256: the width the bound allows is answered or refused
    by count alone (dense rows: 64 + 64^2 prefixes per context at width 2 already exceed it; sparse
    rows: 2 + 4 + .. + 2^k per context), the refusal naming #/config/width."""
    model = _uniform_64(sparse)
    extra = {} if sampling is None else {"sampling": sampling}
    for width in range(1, 17):
        for limit in (1, 43, 256):
            config = parse_analysis_config({"target": model, "draft": model, "mode": "block", "width": width,
                                            "limit": limit, "seed": 0, **extra})
            ks = {k for k in range(1, min(width, limit) + 1)} | {width}
            per_context = [sum(2 ** j if sparse else 64 ** j for j in range(1, k + 1)) for k in range(17)]
            assert draft_block_cells(config, [], 1) == 2 * 64 * 65 * sum(per_context[k] for k in ks)
    config = {"target": model, "draft": model, "mode": "block", "width": 16, "limit": 256, "seed": 0, **extra}
    response = client.post("/v1/analysis", json={"config": config})
    assert response.status_code == 422
    (error,) = response.get_json()["errors"]
    assert error["pointer"] == "#/config/width" and f"{MAX_DRAFT_BLOCK_CELLS:,}" in error["detail"]
