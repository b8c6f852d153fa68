"""The mistaken rules of the catalogue, and faulty runs: the engine's one block with one rule swapped.

Design. A block is written once, :func:`specdec_service.engine.block.play`, over the rule
objects of a mode (:mod:`specdec_service.engine.rules`). A catalogued mistake is a correct rule
set (:data:`~specdec_service.engine.rules.SPECULATIVE`, ``GREEDY``, ``AUTOREGRESSIVE``) with
one rule replaced by a mistaken one defined here (``dataclasses.replace``), so a variant differs
from the reference by that rule and nothing else, and its traces have exactly the engine's
format. Each mistaken rule subclasses the correct rule it replaces and overrides only what it
gets wrong.

:func:`faulty_step` / :func:`faulty_run` decode with a rule set; with a mode's correct rule set
they are the engine's ``step`` / ``run`` (the same function).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple, Optional

from ..engine import Config, State
from ..engine.block import play
from ..engine.distributions import Dist, acceptance_ratio, accepts, argmax
from ..engine.rules import (
    MODE_RULES, SPECULATIVE, ArgmaxBonus, ArgmaxProposal, Discard, RatioTest,
    ResidualCorrection, RuleSet, SampledBonus, SampledProposal, Schedule, TargetArgmaxTest, point_mass,
)
from ..engine.rules import TargetRowCorrection, swapped  # noqa: F401  (the catalogue's names; defined beside the rules)
from ..engine.trace import trace_of

_TWO_53 = 2**53


class Weights(NamedTuple):
    """Integer weights over a denominator that need not be a distribution (a student's
    unclipped or unnormalised residual): entry ``i`` is ``weights[i] / total``."""

    weights: tuple[int, ...]
    total: int


def sample_weights(r, d) -> int:
    """SPEC section 3's ``sample`` as a loop over any weights: the first token with
    ``u < cumulative``; when none qualifies, the last token (what a loop that falls through
    returns). Equals ``sample`` on a distribution."""
    threshold = d.mantissa * r.total
    cumulative = 0
    for token, weight in enumerate(r.weights):
        cumulative += weight
        if threshold < cumulative * _TWO_53:
            return token
    return len(r.weights) - 1


# ---------------------------------------------------------------- proposals


@dataclass(frozen=True)
class DraftAfterRejected(SampledProposal):
    """Mistake: the next block's draft is conditioned on the previous block's rejected
    proposal (the draft's cache not rolled back), not on the committed correction token."""

    name: str = "after-rejected"

    def start(self, last: Optional[int], carry: Optional[int]) -> Optional[int]:
        """``carry`` (the rejected proposal) when there is one after a non-empty prefix."""
        return carry if carry is not None and last is not None else last


@dataclass(frozen=True)
class ArgmaxTiesLast(ArgmaxProposal):
    """Mistake (greedy): the draft's argmax breaks ties toward the last token in vocabulary
    order (a ``>=`` scan) instead of the earliest."""

    name: str = "argmax-ties-last"

    def choose(self, q: Dist, d) -> int:
        """The last token of the largest weight."""
        weights = q.weights
        return len(weights) - 1 - weights[::-1].index(max(weights))


# ---------------------------------------------------------------- acceptance


@dataclass(frozen=True)
class InvertedRatio(RatioTest):
    """Mistake: accept iff ``u < q(x) / p(x)`` (and record ``q/p``)."""

    name: str = "inverted"

    def accepts(self, d, p: Dist, q: Dist, x: int) -> bool:
        """``u * p(x) < q(x)``."""
        return accepts(d, q, p, x)

    def ratio(self, p: Dist, q: Dist, x: int) -> Optional[float]:
        """``q(x) / p(x)``, ``None`` when ``p(x) = 0``."""
        return acceptance_ratio(q, p, x) if p.weights[x] else None

    def probability(self, p: Dist, q: Dist, x: int) -> Fraction:
        """``min(1, q(x) / p(x))`` (1 when ``p(x) = 0``)."""
        return Fraction(1) if not p.weights[x] else min(Fraction(1), q.probability(x) / p.probability(x))


@dataclass(frozen=True)
class SkipDrawWhenCertain(RatioTest):
    """Mistake: no draw when ``p(x) >= q(x)`` (acceptance is certain), so the position does
    not advance for that verification."""

    name: str = "skip-when-p-ge-q"

    def uses_draw(self, p: Dist, q: Dist, x: int) -> bool:
        """Only when ``p(x) < q(x)``."""
        return p.weights[x] * q.total < q.weights[x] * p.total

    def accepts(self, d, p: Dist, q: Dist, x: int) -> bool:
        """Accepted without a draw, else the ratio test."""
        return True if d is None else accepts(d, p, q, x)


@dataclass(frozen=True)
class ArgmaxTestRecordingRatio(TargetArgmaxTest):
    """Mistake (speculative): the greedy test ``x == argmax(p)`` without a draw, while the
    block still records the ratio ``p(x)/q(x)``."""

    name: str = "target-argmax-in-sampling"

    def ratio(self, p: Dist, q: Dist, x: int) -> Optional[float]:
        """``p(x) / q(x)``."""
        return acceptance_ratio(p, q, x)


@dataclass(frozen=True)
class DraftArgmaxTest(TargetArgmaxTest):
    """Mistake (greedy): accept ``x`` iff it is the **draft's** argmax (always true of a greedy
    proposal) instead of the target's."""

    name: str = "draft-argmax"

    def accepts(self, d, p: Dist, q: Dist, x: int) -> bool:
        """``x == argmax(q)``."""
        return x == argmax(q)


# ---------------------------------------------------------------- corrections


@dataclass(frozen=True)
class UnclippedResidual(ResidualCorrection):
    """Mistake: ``p - q`` with its negative entries kept, divided by its positive mass;
    sampled by a loop over the cumulative sums (:func:`sample_weights`)."""

    name: str = "unclipped"

    def row(self, p: Dist, q: Dist):
        """The weights ``p - q`` over their positive mass; ``ValueError`` when it is 0."""
        diffs = tuple(wp * q.total - wq * p.total for wp, wq in zip(p.weights, q.weights))
        positive = sum(x for x in diffs if x > 0)
        if positive == 0:
            raise ValueError("no positive mass")
        return Weights(diffs, positive)

    def choose(self, r, d) -> int:
        """:func:`sample_weights`."""
        return sample_weights(r, d)

    def record(self, r) -> list[float]:
        """Each weight over the denominator, negatives included."""
        return [w / r.total for w in r.weights]

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """Not a distribution: ``ValueError``."""
        raise ValueError("an unclipped residual is not a distribution")


@dataclass(frozen=True)
class UnnormalisedResidual(UnclippedResidual):
    """Mistake: ``max(p - q, 0)`` used as it is (its entries sum to the rejection probability,
    below 1); when ``u`` exceeds their sum the loop falls through to the last token."""

    name: str = "unnormalised"

    def row(self, p: Dist, q: Dist):
        """``max(p - q, 0)`` over ``1``."""
        return Weights(tuple(max(wp * q.total - wq * p.total, 0) for wp, wq in zip(p.weights, q.weights)), p.total * q.total)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """The entries of ``max(p - q, 0)``, the missing mass on the last token (the fall-through)."""
        weights = list(self.row(p, q).weights)
        weights[-1] += p.total * q.total - sum(weights)
        return Dist.of_weights(weights)


@dataclass(frozen=True)
class ReusedDrawCorrection(ResidualCorrection):
    """Mistake: the correction is sampled with the draw that rejected the proposal, not a fresh one."""

    name: str = "reused-draw"
    uses_draw: bool = False
    reuses_draw: bool = True


# ---------------------------------------------------------------- bonus


@dataclass(frozen=True)
class BonusFromDraft(SampledBonus):
    """Mistake: the bonus (in mode autoregressive: the token) is sampled from the **draft**
    row after the accepted prefix, not the target's."""

    name: str = "from-draft"

    def row(self, config, last: Optional[int]) -> Dist:
        """The draft's row."""
        return config.draft.after(last)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """``q``."""
        return q


@dataclass(frozen=True)
class ArgmaxBonusFromDraft(ArgmaxBonus):
    """Mistake (greedy): the bonus is the **draft's** argmax, not the target's."""

    name: str = "draft-argmax"

    def row(self, config, last: Optional[int]) -> Dist:
        """The draft's row."""
        return config.draft.after(last)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """A point mass at ``argmax(q)``."""
        return point_mass(len(q.weights), argmax(q))


NO_BONUS = SampledBonus(name="never", adds=False)
"""Mistake: no bonus token, ever (``bonus`` and ``no_bonus`` both null when one is due)."""
BONUS_PAST_LIMIT = SampledBonus(name="past-limit", at_limit=True)
"""Mistake: a bonus drawn even when the accepted proposals reach the limit."""

# ---------------------------------------------------------------- discard and schedule

KEEP_REST = Discard(name="keep", commits_rest=True, lists_rest=False)
"""Mistake: the proposals after the first rejection are committed after the correction."""
KEEP_AND_LIST_REST = Discard(name="keep-and-list", commits_rest=True, lists_rest=True)
"""Mistake: the proposals after the first rejection are committed **and** listed as discarded."""
INTERLEAVED = Schedule(name="interleaved", draft_first=False)
"""Mistake: draft one, verify it, draft the next (draws alternate; drafting stops at the first rejection)."""
VERIFY_ALL = Schedule(name="verify-all", stop_at_rejection=False)
"""Mistake: every proposal is verified (a vectorised verification); ``accepted`` counts every pass."""
SKIP_ONE = Schedule(name="skip-one", skip=1)
"""Mistake: one draw is left unused before each draw taken (a draw consumed and thrown away)."""


CORRECT = SPECULATIVE
"""The correct rules of mode speculative (the reference for every speculative variant)."""


def faulty_step(state: State, rules: RuleSet = SPECULATIVE, carry: Optional[int] = None) -> tuple[dict, State, Optional[int]]:
    """One block decoded with ``rules`` (:func:`~specdec_service.engine.block.play`).

    ``rules`` applies when its ``mode`` is the config's; otherwise the config's own mode's
    correct rules do (a mistake of one mode is no mistake of another). ``carry`` is the rejected
    proposal of the previous block (read only by :class:`DraftAfterRejected`). Returns ``(block
    dict, next state, rejected proposal or None)``. Raises ``ValueError`` when a rule is
    undefined for this block (e.g. a residual of zero mass) and ``InvalidInput`` past 2^53-1.
    """
    if rules.mode != state.config.mode:
        rules = MODE_RULES[state.config.mode]
    result = play(state, rules, carry=carry)
    return result.block, result.state, result.rejected


def faulty_run(config: Config, rules: RuleSet = SPECULATIVE) -> dict:
    """A whole trace (``specdec-trace/1``) decoded with ``rules``, from the empty prefix until
    the session is done (at most ``limit`` blocks). ``faulty_run(c, MODE_RULES[c.mode]) ==
    engine.run(c)``. Raises ``ValueError`` when a rule is undefined for this config."""
    state = State(config)
    blocks = []
    carry = None
    while state.done is None:
        block, state, carry = faulty_step(state, rules, carry)
        blocks.append(block)
    return trace_of(state, blocks)
