"""Sampling parameters (SPEC section 9): exact row processing, its worked example, and the row
reader that gives every rule the processed rows (no proposal rule or verifier changes)."""

from decimal import Context, Decimal, localcontext
from fractions import Fraction as F

import pytest
from hypothesis import given, settings, strategies as st

from specdec_service.engine import BIASED, SPECULATIVE, TOY, State, parse_config, play
from specdec_service.engine.distributions import Dist, residual
from specdec_service.engine.decoders import swapped
from specdec_service.engine.sampling import (
    ProcessedRows, Sampling, power, process, with_min_p, with_temperature, with_top_k, with_top_p,
)

EXAMPLE = Sampling.of(temperature=0.5, top_k=2, top_p=0.8)
"""SPEC section 9's worked example: T = 0.5, top_k 2, top_p 0.8."""


def exact(d: Dist) -> list:
    return [F(w, d.total) for w in d.weights]


def test_the_worked_example_rows():
    """SPEC 9: at the empty prefix p' = [25/34, 9/34, 0] and q' = [1, 0, 0]; after A p' = [0, 1, 0];
    after B [121/157, 0, 36/157]; after C [1/5, 0, 4/5]."""
    assert exact(process(TOY.start, EXAMPLE)) == [F(25, 34), F(9, 34), 0]
    assert exact(process(BIASED.start, EXAMPLE)) == [1, 0, 0]
    after = [exact(process(TOY.after(t), EXAMPLE)) for t in range(3)]
    assert after == [[0, 1, 0], [F(121, 157), 0, F(36, 157)], [F(1, 5), 0, F(4, 5)]]


def alpha(p: Dist, q: Dist) -> F:
    """The acceptance probability of a proposal drawn from q: sum_x q(x) min(1, p(x)/q(x)), as the
    token-wise verifier states it."""
    verifier = SPECULATIVE.verifier
    return sum((q.probability(x) * verifier.acceptance_probability(p, q, x) for x in range(3) if q.weights[x]), F(0))


def test_the_worked_example_acceptance_with_processed_and_raw_draft_rows():
    """SPEC 9: alpha = 25/34 with the processed draft, 301/340 with draft "raw" (q = [0.8, 0.15, 0.05])."""
    config = parse_config({"draft": "biased", "seed": 0})
    processed = ProcessedRows(EXAMPLE).read(config)
    raw = ProcessedRows(Sampling.of(temperature=0.5, top_k=2, top_p=0.8, draft="raw")).read(config)
    assert alpha(processed.target(None), processed.draft(None)) == F(25, 34)
    assert alpha(raw.target(None), raw.draft(None)) == F(301, 340)
    assert raw.draft(None) == BIASED.start and raw.target(None) == processed.target(None)


def first_token_law(proposal: Dist, p: Dist, q: Dist) -> list:
    """The law of the first committed token when proposals are drawn from ``proposal`` and tested
    (and corrected) against target row ``p`` and draft row ``q``."""
    verifier = SPECULATIVE.verifier
    accept = [proposal.probability(x) * verifier.acceptance_probability(p, q, x) if proposal.weights[x] else F(0)
              for x in range(3)]
    miss = 1 - sum(accept)
    r = exact(verifier.correction_law(p, q)) if miss else [F(0)] * 3
    return [a + miss * ry for a, ry in zip(accept, r)]


def total_variation(a: list, b: list) -> F:
    return sum((abs(x - y) for x, y in zip(a, b)), F(0)) / 2


def test_the_two_public_faults_of_section_9():
    """SPEC 9: the target left raw while the draft is processed is 4/17 from p' over the first
    token; a ratio with the raw q for a proposal drawn from q' is 25/136."""
    p1, q1 = process(TOY.start, EXAMPLE), process(BIASED.start, EXAMPLE)
    assert first_token_law(q1, p1, q1) == exact(p1)  # the correct rule: exactly p'
    assert total_variation(first_token_law(q1, TOY.start, q1), exact(p1)) == F(4, 17)
    assert total_variation(first_token_law(q1, p1, BIASED.start), exact(p1)) == F(25, 136)


def test_each_step_as_section_9_states_it():
    row = Dist.of_weights((5, 3, 2))  # [0.5, 0.3, 0.2]
    assert exact(with_top_p(row, F(4, 5))) == [F(5, 8), F(3, 8), 0]  # 0.5 + 0.3 is not below 0.8
    assert exact(with_top_p(row, F(81, 100))) == exact(row)  # ... but is below 0.81
    assert exact(with_top_p(row, F(1, 2))) == [1, 0, 0] and with_top_p(row, F(1)) == row
    tied = Dist.of_weights((2, 2, 1))
    assert exact(with_top_k(tied, 1)) == [F(1, 2), F(1, 2), 0]  # ties at the boundary are kept
    assert with_top_k(row, 3) == row and with_top_k(row, 64) == row
    assert exact(with_top_p(tied, F(1, 3))) == [1, 0, 0]  # ties ordered in vocabulary order
    assert exact(with_min_p(row, F(1, 2))) == [F(5, 8), F(3, 8), 0]  # 0.2 < 0.5 * 0.5
    assert exact(with_min_p(row, F(2, 5))) == exact(row)  # 0.2 >= 0.4 * 0.5
    assert exact(with_temperature(row, F(0))) == [1, 0, 0]
    assert exact(with_temperature(tied, F(0))) == [1, 0, 0]  # argmax ties to the earliest token
    assert with_temperature(row, F(1)) == row
    assert exact(with_temperature(row, F(1, 2))) == [F(25, 38), F(9, 38), F(4, 38)]  # squares, exactly
    assert exact(with_temperature(Dist.of_weights((1, 0)), F(3))) == [1, 0]  # zero stays zero


def test_the_order_is_temperature_top_k_top_p_min_p():
    row = Dist.of_weights((5, 3, 2))
    both = Sampling.of(top_k=2, top_p=0.7)
    assert exact(process(row, both)) == exact(with_top_p(with_top_k(row, 2), F(7, 10)))
    assert exact(process(row, both)) == [F(5, 8), F(3, 8), 0]  # top-p after top-k: 5/8 < 0.7 keeps B


def correctly_rounded(p: F, exponent: F) -> float:
    with localcontext(Context(prec=150)):
        value = (Decimal(exponent.numerator) / Decimal(exponent.denominator)
                 * (Decimal(p.numerator) / Decimal(p.denominator)).ln()).exp()
        return float(value)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.sampled_from(["0.05", "0.3", "0.7", "1.5", "3", "7.25", "20"]))
def test_a_power_is_exact_or_the_nearest_float64(a, b, temperature):
    """SPEC 9.1: p^(1/T) is exact when 1/T is an integer, else the float64 nearest to the real value."""
    p = F(min(a, b), max(a, b))
    exponent = 1 / F(temperature)
    got = power(p, exponent)
    if exponent.denominator == 1:
        assert got == p ** exponent.numerator
    else:
        assert got == F(correctly_rounded(p, exponent))


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 10**15 - 1), st.sampled_from([10**2, 10**6, 10**15, 2**60, 3**30]),
       st.sampled_from(["0.3", "0.7", "0.95", "1.3", "2.5", "0.07", "0.123", "19.9"]))
def test_the_two_ways_to_the_nearest_float64_agree(k, denominator, temperature):
    """The fast walk from the hardware's guess (exact integer comparisons with the midpoints) and
    the decimal evaluation give the same float64, the one a 150-digit evaluation rounds to."""
    from specdec_service.engine.sampling import _decimal_nearest, _walk

    p, exponent = F(k % denominator or 1, denominator), 1 / F(temperature)
    walked = _walk(p, exponent.numerator, exponent.denominator)
    assert walked is None or walked == _decimal_nearest(p, exponent) == correctly_rounded(p, exponent)


def test_a_temperature_of_many_digits_forms_no_huge_power():
    # 1/T = 10^16/500000000000001: p^(10^16) is never formed (it would not fit in memory)
    exponent = 1 / F("0.0500000000000001")
    assert power(F(1, 4), exponent) == F(correctly_rounded(F(1, 4), exponent))
    assert power(F(999, 1000), exponent) == F(correctly_rounded(F(999, 1000), exponent))
    # a rational root with a huge power: (1/4)^(1/2) = 1/2, then (1/2)^(2 * 10^6 + 1) underflows to 0
    assert power(F(1, 4), F(2 * 10**6 + 1, 2)) == 0


def test_a_rational_power_is_rounded_from_its_exact_value():
    assert power(F(1, 4), F(1, 2)) == F(1, 2) and power(F(8, 27), F(2, 3)) == F(float(F(4, 9)))
    assert power(F(0), F(1, 2)) == 0 and power(F(1), F(7, 3)) == 1


def test_the_processed_rows_reach_every_rule_through_the_row_reader():
    """The row reader is the only seat of processing: the token-wise verifier, unchanged, tests
    the proposal against p' and the draft q' it was drawn from."""
    config = parse_config({"draft": "biased", "seed": 1, "width": 2})
    decoder = swapped(SPECULATIVE, rows=ProcessedRows(EXAMPLE))
    block = play(State(config), decoder).block
    first = block["verification"][0]
    assert first["p"] == [25 / 34, 9 / 34, 0.0] and first["q"] == [1.0, 0.0, 0.0]
    assert block["proposal"]["steps"][0]["q"] == [1.0, 0.0, 0.0] and block["proposal"]["tokens"][0] == "A"
    assert play(State(config), swapped(SPECULATIVE, rows=ProcessedRows(Sampling()))).block == play(State(config), SPECULATIVE).block


@pytest.mark.parametrize("draft", ["processed", "raw"])
def test_processing_keeps_the_residual_defined_where_a_rejection_can_happen(draft):
    config = parse_config({"draft": "biased", "seed": 1})
    rows = ProcessedRows(Sampling.of(temperature=0.5, top_k=2, top_p=0.8, draft=draft)).read(config)
    for context in (None, 0, 1, 2):
        p, q = rows.target(context), rows.draft(context)
        if alpha(p, q) < 1:
            assert sum(residual(p, q).weights) > 0


def test_a_sampling_object_is_read_exactly():
    from specdec_service.engine.sampling import parse_sampling

    assert parse_sampling({"temperature": 0.5, "top_k": 2, "top_p": 0.8}) == EXAMPLE
    assert parse_sampling({}).empty and parse_sampling({"draft": "raw"}).draft == "raw"
    assert parse_sampling({"top_p": 0.1, "min_p": 0, "temperature": 0}) == Sampling(F(0), None, F(1, 10), F(0))
    assert parse_sampling({"temperature": 20, "top_p": 1, "min_p": 1, "top_k": 64}).temperature == 20


@pytest.mark.parametrize("obj, faults", [
    ({"temperature": 0.04}, {"sampling/temperature": "must be 0 or a number from 0.05 to 20"}),
    ({"temperature": 20.5}, {"sampling/temperature": "must be 0 or a number from 0.05 to 20"}),
    ({"temperature": True}, {"sampling/temperature": "must be 0 or a number from 0.05 to 20"}),
    ({"top_k": 0}, {"sampling/top_k": "must be an integer from 1 to 64"}),
    ({"top_k": 65}, {"sampling/top_k": "must be an integer from 1 to 64"}),
    ({"top_k": 2.0}, {"sampling/top_k": "must be an integer from 1 to 64"}),
    ({"top_p": 0}, {"sampling/top_p": "must be a number above 0 and at most 1"}),
    ({"top_p": 1.5}, {"sampling/top_p": "must be a number above 0 and at most 1"}),
    ({"min_p": -0.1, "draft": "q"}, {"sampling/min_p": "must be a number from 0 to 1", "sampling/draft": "must be one of processed, raw"}),
    ({"top_q": 1}, {"sampling/top_q": "is not a sampling parameter (temperature, top_k, top_p, min_p, draft)"}),
    ([], {"sampling": "must be an object with any of temperature, top_k, top_p, min_p and draft"}),
])
def test_a_bad_sampling_field_is_named_with_its_bound(obj, faults):
    from specdec_service.engine import InvalidInput
    from specdec_service.engine.sampling import parse_sampling

    with pytest.raises(InvalidInput) as error:
        parse_sampling(obj)
    assert {"/".join(map(str, f.path)): f.message for f in error.value.faults} == faults
