"""Exact next-token distributions and the sampling rules that read them.

A :class:`Dist` holds integer weights over a common denominator, so every
rule of SPEC sections 3-5 is an exact integer comparison: no float ever
decides a token. Floats appear only when a distribution is published.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from itertools import accumulate
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from math import gcd, lcm
from typing import Sequence

from .draws import Draws, Uniform
from .work import charge, measuring


@dataclass(frozen=True)
class Dist:
    """A distribution over a vocabulary: token ``i`` has probability
    ``weights[i] / total``.

    ``weights`` are non-negative integers and ``total`` is their sum (> 0);
    a row is thus always normalised exactly (SPEC section 1).
    """

    weights: tuple[int, ...]
    total: int

    @classmethod
    def of_weights(cls, weights) -> "Dist":
        """The distribution proportional to non-negative integer ``weights``
        (positive sum), in lowest terms, so that equal distributions are
        equal values."""
        weights = tuple(weights)
        if measuring():  # the gcd, the divisions and the sum: each weight's bits (engine.work)
            charge(sum(w.bit_length() + 1 for w in weights))
        divisor = gcd(*weights)
        if divisor > 1:
            weights = tuple(w // divisor for w in weights)
        return cls(weights, sum(weights))

    @classmethod
    def from_fractions(cls, probabilities: Sequence[Fraction]) -> "Dist":
        """The exact normalisation of ``probabilities`` (non-negative, positive
        sum): each is divided by their exact sum (SPEC section 1)."""
        denominator = lcm(*(p.denominator for p in probabilities))
        if measuring():  # the lcm and one multiplication of each entry by it
            charge(2 * len(probabilities) * (denominator.bit_length() + 1))
        return cls.of_weights(int(p * denominator) for p in probabilities)

    def __hash__(self) -> int:
        """The hash of ``(weights, total)``, computed once (a row is a key of the residual's
        memo, looked up at every correction)."""
        try:
            return self.__dict__["_hash"]
        except KeyError:
            value = self.__dict__["_hash"] = hash((self.weights, self.total))
            return value

    def probability(self, token: int) -> Fraction:
        """The exact probability of token index ``token``."""
        return Fraction(self.weights[token], self.total)

    @cached_property
    def floats(self) -> list[float]:
        """Each probability as the nearest float64 (Python's int / int is
        correctly rounded, so 1/2 is 0.5 and never 0.4999999999999999)."""
        charge(len(self.weights) * (self.total.bit_length() + 1))
        return [w / self.total for w in self.weights]

    @cached_property
    def cumulative(self) -> tuple[int, ...]:
        """The running sums of :attr:`weights` (the last is :attr:`total`)."""
        return tuple(accumulate(self.weights))

    def to_json(self) -> list[float]:
        """A fresh list of :attr:`floats`, safe to hand to a caller."""
        return list(self.floats)


def sample(dist: Dist, draw: Uniform) -> int:
    """SPEC section 3: the first token ``i`` with ``u < d[0] + ... + d[i]``.

    With ``u = m / 2**53`` and integer cumulative weights ``c_i`` this is the
    first ``i`` with ``m * total < c_i * 2**53``, i.e. ``c_i > floor(m * total
    / 2**53)``: a binary search. A token of probability 0 is never returned
    (its ``c_i`` equals the one before it), and since ``u < 1`` one always is.
    """
    charge(dist.total.bit_length() + 53)
    return draw.pick(dist)


def sample_next(dist: Dist, draws: Draws) -> tuple[int, Uniform]:
    """SPEC section 3 with the next draw of ``draws``: ``(sample(dist, d), d)`` (the draw for the
    record)."""
    d = draws.take()
    return sample(dist, d), d


def argmax(dist: Dist) -> int:
    """The most probable token; ties go to the earliest in vocabulary order
    (SPEC section 5)."""
    weights = dist.weights
    return weights.index(max(weights))


def accepts(draw: Uniform, p: Dist, q: Dist, token: int) -> bool:
    """The acceptance test of speculative sampling (SPEC section 4.2;
    Leviathan et al. 2023, Chen et al. 2023): accept iff
    ``u < p(x) / q(x)``, evaluated exactly as ``u * q(x) < p(x)``.

    ``q(x)`` must be positive (a proposal the draft could have produced).
    """
    charge(2 * (p.total.bit_length() + q.total.bit_length() + 53))
    return draw.below(p.weights[token] * q.total, p.total * q.weights[token])


LARGEST_FLOAT = sys.float_info.max


def acceptance_ratio(p: Dist, q: Dist, token: int) -> float:
    """The acceptance ratio ``p(x) / q(x)`` of SPEC section 4.2 as the nearest float64 (for
    display only: :func:`accepts` decides exactly); ``q(x)`` must be positive.

    A ratio beyond the largest float64 (q(x) below about 1e-308 of p(x)) is
    published as the largest float64, since JSON has no infinity; any ratio
    >= 1 means the proposal is always accepted.
    """
    charge(2 * (p.total.bit_length() + q.total.bit_length()))
    try:  # int / int is correctly rounded, and raises OverflowError beyond the largest float64
        return p.weights[token] * q.total / (p.total * q.weights[token])
    except OverflowError:
        return LARGEST_FLOAT


@lru_cache(maxsize=4096)
def residual(p: Dist, q: Dist) -> Dist:
    """The correction distribution after a rejection (SPEC section 4.3):
    ``r(y) = max(p(y) - q(y), 0) / sum_z max(p(z) - q(z), 0)``.

    The sum is positive whenever a rejection is possible (some ``p(x) < q(x)``
    implies some ``p(y) > q(y)``); ``ValueError`` is raised otherwise.
    Memoised: a model pair has at most (vocabulary + 1) distinct residuals,
    and a :class:`Dist` is immutable.
    """
    charge(2 * len(p.weights) * (p.total.bit_length() + q.total.bit_length() + 1))
    weights = tuple(max(wp * q.total - wq * p.total, 0) for wp, wq in zip(p.weights, q.weights))
    if not any(weights):
        raise ValueError("p equals q: no rejection is possible, so there is no residual")
    return Dist.of_weights(weights)


def exact_string(value: Fraction) -> str:
    """An exact value written as ``"n/d"`` in lowest terms, or ``"n"`` when the denominator is 1
    (``str(value)``), for any size of integers: ``str`` of an int over 4300 digits raises
    ``ValueError`` (Python's limit on decimal conversion), and exact values grow that large
    (a block's weight under temperature 0.05, rows p^20 of 15-digit decimals multiplied over 16
    proposals). ``Decimal(int)`` converts exactly, in about n log n, without that limit."""
    value = Fraction(value)
    n, d = value.numerator, value.denominator
    charge(2 * (n.bit_length() + d.bit_length() + 1))  # two decimal conversions
    digits = str(Decimal(n))
    return digits if d == 1 else f"{digits}/{Decimal(d)}"


def to_float(value: Fraction) -> float:
    """The nearest float64 of an exact value (correctly rounded)."""
    return value.numerator / value.denominator
