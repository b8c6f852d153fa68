"""Statistics with fixed seeds: the output has exactly the target's
distribution (Leviathan et al. 2023, Theorem 1; Chen et al. 2023).

Tolerances are stated in each test. The seeds are fixed (0..N-1), so every
run of these tests sees the same samples: they cannot flake.
"""

from collections import Counter
from fractions import Fraction
from itertools import product

import pytest
from scipy.stats import chisquare

from specdec_service.engine import BIASED, SPECULATIVE, TOY, State, parse_config, play, step
from specdec_service.grading.faulty import TargetRowCorrection, swapped

N = 20_000
ALPHA = 0.001


def exact_joint(m: int) -> dict:
    """The target's exact distribution of the first m tokens."""
    joint = {}
    for tokens in product(range(3), repeat=m):
        probability, context = Fraction(1), []
        for token in tokens:
            probability *= TOY.row(context).probability(token)
            context.append(token)
        joint[tokens] = probability
    return joint


def first_tokens(seed: int, m: int = 3, rules=None, **config):
    s = State(parse_config({"draft": "biased", "width": 3, "seed": seed, "limit": m, **config}))
    first_accept = None
    while s.done is None:
        result = step(s) if rules is None else play(s, rules)
        if first_accept is None:
            first_accept = result.block["verification"][0]["accepted"] if result.block["verification"] else None
        s = result.state
    return s.committed, first_accept


def sample_counts(n=N, rules=None, **config):
    counts, accepted = Counter(), 0
    for seed in range(n):
        tokens, first = first_tokens(seed, rules=rules, **config)
        counts[tokens] += 1
        accepted += bool(first)
    return counts, accepted / n


def chi_square_p(counts, n=N) -> float:
    joint = exact_joint(3)
    observed = [counts[t] for t in joint]
    expected = [float(p) * n for p in joint.values()]
    assert min(expected) >= 5  # the chi-square approximation holds in every cell
    return chisquare(observed, expected).pvalue


@pytest.fixture(scope="module")
def biased_sample():
    return sample_counts()


def test_first_three_tokens_follow_the_target_joint_distribution(biased_sample):
    counts, _ = biased_sample
    assert sum(counts.values()) == N
    assert chi_square_p(counts) > ALPHA


def test_first_position_acceptance_rate_is_sum_min_p_q(biased_sample):
    """sum_x min(p(x), q(x)) at the empty prefix = 0.5 + 0.15 + 0.05 = 0.70.
    Tolerance 0.015: about 4.6 standard deviations of a rate over 20,000 seeds."""
    beta = sum(min(TOY.start.probability(i), BIASED.start.probability(i)) for i in range(3))
    assert beta == Fraction(7, 10)
    _, rate = biased_sample
    assert abs(rate - 0.70) < 0.015


def test_greedy_acceptance_is_not_probability_correct():
    """Greedy decoding is deterministic: a single output, not the target's distribution."""
    counts, _ = sample_counts(n=200, mode="greedy")
    assert list(counts) == [(0, 1, 0)]


def test_autoregressive_follows_the_target_joint_distribution():
    counts, _ = sample_counts(mode="autoregressive")
    assert chi_square_p(counts) > ALPHA


def test_the_test_catches_resampling_from_p_after_a_rejection():
    """The classic mistake: after a rejection, sample from p instead of the
    residual (the speculative rules with the correction rule swapped). Its
    first token has P(A) = 0.5 + 0.3 * 0.5 = 0.65, not 0.5, so the same test
    must reject it decisively."""
    counts, _ = sample_counts(rules=swapped(SPECULATIVE, correction=TargetRowCorrection()))
    assert chi_square_p(counts) < 1e-12
