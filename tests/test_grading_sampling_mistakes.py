"""The catalogued mistakes of row processing (SPEC section 9, grading/faulty_sampling.py): each is a
row reader or a proposal rule with one thing changed, shows the public fault it is built from
(SPEC 9's worked example: total variation 4/17 and 25/136 over the first token), and is named by
the trace grader."""

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from specdec_service.engine import parse_config, run
from specdec_service.engine.distributions import Dist
from specdec_service.engine.decoders import SPECULATIVE
from specdec_service.engine.sampling import with_top_p
from specdec_service.grading import BY_ID, faulty_run, grade
from specdec_service.grading.faulty_sampling import (
    FloatTopPRows,
    RawDraftRowInRatio,
    TargetLeftRaw,
    float_top_p,
    process_float_top_p,
)

WORKED = {"target": "toy", "draft": "biased", "seed": 1, "sampling": {"temperature": 0.5, "top_k": 2, "top_p": 0.8}}
"""SPEC 9's worked example: T = 0.5, top_k 2, top_p 0.8 on the toy and the biased draft."""
SAMPLING_IDS = ("sampling-target-left-raw", "sampling-raw-q-in-ratio", "sampling-top-p-float-test")


def fractions(row: Dist) -> list:
    return [row.probability(i) for i in range(len(row.weights))]


def first_token_law(p: Dist, drawn_from: Dist, in_ratio: Dist) -> list:
    """The exact law of the first committed token of a block (SPEC 4, the token-wise verifier's own
    laws): a proposal drawn from ``drawn_from``, tested with ``in_ratio`` as q, corrected from the
    residual of ``p`` and ``in_ratio``."""
    verifier = SPECULATIVE.verifier
    law = [Fraction(0)] * len(p.weights)
    rejected = Fraction(0)
    for x in range(len(p.weights)):
        q_x = drawn_from.probability(x)
        if q_x:
            accepted = verifier.acceptance_probability(p, in_ratio, x)
            law[x] += q_x * accepted
            rejected += q_x * (1 - accepted)
    if rejected:
        residual = verifier.correction_law(p, in_ratio)
        law = [a + rejected * r for a, r in zip(law, fractions(residual))]
    return law


def total_variation(a: list, b: list) -> Fraction:
    return sum(abs(x - y) for x, y in zip(a, b)) / 2


# ---------------------------------------------------------------- the faults, exactly


def test_target_left_raw_reads_p_beside_q_prime_and_is_4_17_from_p_prime():
    config = parse_config(WORKED)
    rows = TargetLeftRaw().read(config)
    assert fractions(rows.target(None)) == [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]  # the raw p
    assert fractions(rows.draft(None)) == [1, 0, 0]  # q', processed as the config says
    p_prime = fractions(config.rows.target(None))
    assert p_prime == [Fraction(25, 34), Fraction(9, 34), 0]
    law = first_token_law(rows.target(None), rows.draft(None), rows.draft(None))
    assert law == [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]
    assert total_variation(law, p_prime) == Fraction(4, 17)  # SPEC 9


def test_raw_q_in_ratio_draws_from_q_prime_but_tests_with_q_and_is_25_136_from_p_prime():
    config = parse_config(WORKED)
    trace = faulty_run(config, BY_ID["sampling-raw-q-in-ratio"].rules)
    first = trace["blocks"][0]
    assert first["proposal"]["steps"][0]["q"] == [1.0, 0.0, 0.0]  # drawn from q'
    assert first["verification"][0]["q"] == [0.8, 0.15, 0.05]  # tested with the raw q
    assert first["verification"][0]["ratio"] == float(Fraction(25, 34) / Fraction(4, 5))
    rows = config.rows
    p_prime, q_prime, q = rows.target(None), rows.draft(None), config.draft.after(None)
    law = first_token_law(p_prime, q_prime, q)
    assert law == [Fraction(125, 136), Fraction(11, 136), 0]
    assert total_variation(law, fractions(p_prime)) == Fraction(25, 136)  # SPEC 9
    assert first_token_law(p_prime, q_prime, q_prime) == fractions(p_prime)  # the correct rule: exactly p'


def test_float_top_p_keeps_c_at_0_8_where_spec_drops_it():
    row = Dist.of_weights((5, 3, 2))  # the toy's first row [0.5, 0.3, 0.2]
    assert 1.0 - 0.8 < 0.2  # 0.19999999999999996
    assert fractions(float_top_p(row, Fraction(4, 5))) == [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]
    assert fractions(with_top_p(row, Fraction(4, 5))) == [Fraction(5, 8), Fraction(3, 8), 0]
    # the most probable token is always kept, whatever top_p
    assert fractions(float_top_p(row, Fraction(1, 10**6))) == [1, 0, 0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=1, max_size=5), st.integers(1, 64))
def test_float_top_p_is_spec_top_p_when_float64_is_exact(head, j):
    """The one thing changed is the arithmetic: on rows of sixty-fourths and top_p j/64, where every
    float64 sum is exact, the float test keeps exactly SPEC 9.3's tokens (ties included)."""
    row = Dist(tuple(head) + (64 - sum(head),), 64)
    assert float_top_p(row, Fraction(j, 64)) == with_top_p(row, Fraction(j, 64))


def test_float_top_p_rows_process_every_row_with_the_one_step_changed():
    config = parse_config({"target": "toy", "draft": "biased", "seed": 1, "sampling": {"top_p": 0.8}})
    rows = FloatTopPRows().read(config)
    assert fractions(rows.target(None)) == [Fraction(1, 2), Fraction(3, 10), Fraction(1, 5)]  # C kept
    # after A: [0.2, 0.6, 0.2]: SPEC keeps B and A (mass before C is 0.8), the float test keeps C too
    assert fractions(config.rows.target(0)) == [Fraction(1, 4), Fraction(3, 4), 0]
    assert fractions(rows.target(0)) == [Fraction(1, 5), Fraction(3, 5), Fraction(1, 5)]
    # the biased draft's [0.8, 0.15, 0.05]: 0.05 + 0.15 is 0.2000000000000000111 > 1 - 0.8, so B is kept
    assert fractions(config.rows.draft(None)) == [1, 0, 0]
    assert fractions(rows.draft(None)) == [Fraction(16, 19), Fraction(3, 19), 0]
    assert FloatTopPRows().read(config) is rows  # processed once per config
    raw = parse_config({"target": "toy", "draft": "biased", "seed": 1, "sampling": {"top_p": 0.8, "draft": "raw"}})
    assert FloatTopPRows().read(raw).draft(None) == raw.draft.after(None)
    # temperature and top-k before it, min-p after it, as SPEC says
    both = parse_config({**WORKED, "sampling": {**WORKED["sampling"], "min_p": 0.5}})
    assert process_float_top_p(both.target.start, both.sampling) == both.rows.target(None)


# ---------------------------------------------------------------- no sampling: nothing to get wrong


@pytest.mark.parametrize("mistake_id", SAMPLING_IDS)
@pytest.mark.parametrize("sampling", [None, {}], ids=["absent", "empty"])
def test_without_sampling_each_mistake_is_the_reference(mistake_id, sampling):
    settings = {"target": "toy", "draft": "biased", "seed": 3} | ({} if sampling is None else {"sampling": sampling})
    config = parse_config(settings)
    assert faulty_run(config, BY_ID[mistake_id].rules) == run(config)


def test_raw_q_in_ratio_does_not_show_with_the_raw_draft():
    config = parse_config({**WORKED, "sampling": {**WORKED["sampling"], "draft": "raw"}})
    assert faulty_run(config, BY_ID["sampling-raw-q-in-ratio"].rules) == run(config)


# ---------------------------------------------------------------- the grader names each


@pytest.mark.parametrize("mistake_id", SAMPLING_IDS)
@pytest.mark.parametrize("seed", [1, 4, 9])
def test_the_grader_names_the_mistake(mistake_id, seed):
    mistake = BY_ID[mistake_id]
    config = parse_config({**mistake.example, "seed": seed})
    trace = json.loads(json.dumps(faulty_run(config, mistake.rules)))
    report = grade(trace)
    assert report["passed"] is False
    assert [d["id"] for d in report["diagnosis"] if d["exact"]] == [mistake_id]
    assert report["diagnosis"][0]["rule"] == "SPEC section 9"


def test_the_readers_and_the_proposal_rule_are_one_rule_each():
    """Each variant is the correct decoder with one part swapped (rows, or the proposal rule)."""
    assert BY_ID["sampling-target-left-raw"].rules == SPECULATIVE.__class__(
        "speculative", SPECULATIVE.proposal, SPECULATIVE.verifier, TargetLeftRaw())
    assert BY_ID["sampling-top-p-float-test"].rules.rows == FloatTopPRows()
    raw_q = BY_ID["sampling-raw-q-in-ratio"].rules
    assert (raw_q.proposal, raw_q.verifier, raw_q.rows) == (RawDraftRowInRatio(), SPECULATIVE.verifier, SPECULATIVE.rows)


# ---------------------------------------------------------------- grading by samples: against p'


def chain_samples(rows, n: int, length: int = 8, seed: int = 0) -> list:
    import random

    rng, samples = random.Random(seed), []
    for _ in range(n):
        out, c = [], None
        for _ in range(length):
            c = rng.choices(range(3), [float(x) for x in rows(c)])[0]
            out.append("ABC"[c])
        samples.append(out)
    return samples


def test_samples_are_graded_against_the_processed_target():
    """SPEC 9: the output is exactly sampling from p'. Samples of the raw toy fail a config with top_p
    0.8 (C is impossible at the empty prefix); samples of p' pass (fixed seed, 2000 samples)."""
    from specdec_service.grading.samples import grade_samples

    settings = {"target": "toy", "draft": "biased", "limit": 8, "sampling": {"top_p": 0.8}}
    config = parse_config({**settings, "seed": 0})
    raw = grade_samples({"config": settings, "samples": chain_samples(lambda c: fractions(config.target.after(c)), 2000)})
    assert not raw["passed"] and raw["impossible"]
    processed = grade_samples({"config": settings, "samples": chain_samples(lambda c: fractions(config.rows.target(c)), 2000)})
    assert processed["passed"], processed["reason"]
