"""Greedy verification: blockwise parallel decoding (SPEC section 5; Stern et al. 2018).

The target accepts the proposals while each equals its own argmax (ties to the earliest token
in vocabulary order); at the first mismatch it commits its argmax instead; if all match, it adds
its argmax as the bonus. No draws are used and the position does not move.

**Law.** Deterministic: given the prefix, every decision is 0 or 1 and every committed token is
the target's argmax after the tokens before it (a point mass), whatever the draft proposes; the
output is the target's greedy continuation, not a sample of the target (SPEC section 5: this is
not the probability-correct rule). :meth:`Greedy.acceptance_probability` is 0 or 1;
:meth:`~Greedy.correction_law` and :meth:`~Greedy.bonus_law` are point masses.

It is the token-wise verifier (:mod:`.tokenwise`) with its argmax parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from ..distributions import Dist, argmax
from ..draws import Draws, Uniform
from ..proposals import point_mass
from .tokenwise import Correction, Discard, RatioTest, ResidualCorrection, SampledBonus, TokenWise


@dataclass(frozen=True)
class TargetArgmaxTest(RatioTest):
    """SPEC section 5 (greedy): accept ``x`` iff it is the target's argmax; no draw, no ratio
    recorded."""

    name: str = "target-argmax"

    def test(self, draws: Draws, p: Dist, q: Dist, x: int) -> tuple[bool, Optional[Uniform]]:
        """``(matches(p, q, x), None)``: greedy decoding uses no draws."""
        return self.matches(p, q, x), None

    def matches(self, p: Dist, q: Dist, x: int) -> bool:
        """``x == argmax(p)``."""
        return x == argmax(p)

    def ratio(self, p: Dist, q: Dist, x: int) -> Optional[float]:
        """``None``: greedy verification has no ratio."""
        return None

    def probability(self, p: Dist, q: Dist, x: int) -> Fraction:
        """1 if ``x`` is the target's argmax, else 0."""
        return Fraction(int(self.matches(p, q, x)))


@dataclass(frozen=True)
class TargetArgmaxCorrection(ResidualCorrection):
    """SPEC section 5 (greedy): at the first mismatch the target commits its argmax; the
    recorded distribution is ``p``; no draw."""

    name: str = "target-argmax"

    def row(self, p: Dist, q: Dist):
        """The target row ``p``."""
        return p

    def token(self, r, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """``(argmax(r), None)``: no draw."""
        return argmax(r), None

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """A point mass at ``argmax(p)``."""
        return point_mass(len(p.weights), argmax(p))


@dataclass(frozen=True)
class ArgmaxBonus(SampledBonus):
    """SPEC section 5 (greedy): if all proposals match, the target adds its argmax; no draw."""

    name: str = "argmax"

    def token(self, row: Dist, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """``(argmax(row), None)``: no draw."""
        return argmax(row), None

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """A point mass at ``argmax(p)``."""
        return point_mass(len(p.weights), argmax(p))


@dataclass(frozen=True)
class Greedy(TokenWise):
    """SPEC section 5: the token-wise verifier with the greedy test, correction and bonus."""

    acceptance: RatioTest = TargetArgmaxTest()
    correction: Correction = TargetArgmaxCorrection()
    bonus: SampledBonus = ArgmaxBonus()
    discard: Discard = Discard()
    name: str = "greedy"
