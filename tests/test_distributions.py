"""Exact distributions and the sampling rules (SPEC sections 1, 3, 4)."""

from fractions import Fraction

from hypothesis import given, strategies as st

from specdec_service.engine import BIASED, TOY, Dist, accepts, argmax, residual, sample
from specdec_service.engine.distributions import acceptance_ratio
from specdec_service.engine.draws import Draw


def at(u: Fraction) -> Draw:
    """A draw with the exact value u (a multiple of 2^-53)."""
    m = u * 2**53
    assert m.denominator == 1
    return Draw(0, int(m), int(m) << 11)


def test_sample_takes_first_token_whose_cumulative_exceeds_u():
    d = TOY.start  # 0.5 0.3 0.2
    assert sample(d, at(Fraction(0))) == 0
    assert sample(d, at(Fraction(1, 2) - Fraction(1, 2**53))) == 0
    assert sample(d, at(Fraction(1, 2))) == 1  # u < 0.5 is false at 0.5 exactly
    assert sample(d, at(Fraction(1) - Fraction(1, 2**53))) == 2


def test_sample_never_returns_a_zero_probability_token():
    d = Dist((0, 3, 0, 1), 4)
    assert {sample(d, at(Fraction(k, 64))) for k in range(64)} == {1, 3}


@given(st.lists(st.integers(0, 5), min_size=2, max_size=8).filter(any), st.integers(0, 2**53 - 1))
def test_sample_returns_a_positive_token(weights, m):
    d = Dist(tuple(weights), sum(weights))
    assert d.weights[sample(d, Draw(0, m, m << 11))] > 0


def test_argmax_ties_go_to_the_earliest_token():
    assert argmax(Dist((1, 3, 3), 7)) == 1
    assert argmax(BIASED.start) == 0
    assert argmax(TOY.rows[0]) == 1


def test_accept_is_exact_at_the_ratio():
    p, q = TOY.start, BIASED.start  # ratio for A is 0.625 exactly
    assert acceptance_ratio(p, q, 0) == 0.625
    assert accepts(at(Fraction(5, 8) - Fraction(1, 2**53)), p, q, 0)
    assert not accepts(at(Fraction(5, 8)), p, q, 0)


def test_accept_always_when_p_at_least_q():
    p, q = TOY.start, BIASED.start  # B: p 0.3 >= q 0.15
    assert acceptance_ratio(p, q, 1) == 2.0
    assert accepts(at(Fraction(1) - Fraction(1, 2**53)), p, q, 1)


def test_residual_at_the_empty_prefix_is_exactly_zero_half_half():
    r = residual(TOY.start, BIASED.start)
    assert [r.probability(i) for i in range(3)] == [0, Fraction(1, 2), Fraction(1, 2)]
    assert r.to_json() == [0.0, 0.5, 0.5]


def test_residual_after_a_is_the_worked_example():
    r = residual(TOY.rows[0], BIASED.rows[0])
    assert [r.probability(i) for i in range(3)] == [0, Fraction(3, 4), Fraction(1, 4)]
    assert r.to_json() == [0.0, 0.75, 0.25]


def test_probabilities_are_exact_decimals():
    d = Dist.from_fractions([Fraction("0.1"), Fraction("0.2"), Fraction("0.7")])
    assert d.probability(0) == Fraction(1, 10)
    assert d.to_json() == [0.1, 0.2, 0.7]


def test_rows_are_normalised_by_their_exact_sum():
    d = Dist.from_fractions([Fraction("0.3333333333"), Fraction("0.3333333333"), Fraction("0.3333333334")])
    assert sum(d.probability(i) for i in range(3)) == 1
    d = Dist.from_fractions([Fraction(1, 3) + Fraction(1, 10**10), Fraction(2, 3)])
    assert d.probability(0) + d.probability(1) == 1


def test_a_ratio_beyond_float64_is_published_as_the_largest_double():
    p = Dist((1, 1), 2)
    q = Dist((1, 10**400), 10**400 + 1)
    assert acceptance_ratio(p, q, 0) == 1.7976931348623157e308
    assert accepts(at(Fraction(1) - Fraction(1, 2**53)), p, q, 0)


def linear_sample(d: Dist, m: int) -> int:
    """SPEC section 3 read literally: scan the cumulative sum."""
    cumulative = 0
    for i, w in enumerate(d.weights):
        cumulative += w
        if Fraction(m, 2**53) < Fraction(cumulative, d.total):
            return i
    raise AssertionError


@given(st.lists(st.integers(0, 10**20), min_size=2, max_size=64).filter(any), st.integers(0, 2**53 - 1))
def test_sample_is_the_spec_definition(weights, m):
    d = Dist(tuple(weights), sum(weights))
    assert sample(d, Draw(0, m, m << 11)) == linear_sample(d, m)


@given(st.lists(st.integers(0, 50), min_size=2, max_size=6).filter(any), st.data())
def test_sample_at_every_boundary(weights, data):
    """Draws exactly at and just below each cumulative boundary."""
    d = Dist(tuple(weights), sum(weights))
    boundary = Fraction(d.cumulative[data.draw(st.integers(0, len(weights) - 1))], d.total)
    for m in ((boundary * 2**53).__floor__(), (boundary * 2**53).__ceil__() - 1):
        if 0 <= m < 2**53:
            assert sample(d, Draw(0, m, m << 11)) == linear_sample(d, m)
