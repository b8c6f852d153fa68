"""The mistaken rules of the catalogue, and faulty runs: the engine's one block with one rule changed.

Design. A block is written once, :func:`specdec_service.engine.block_loop.play` (draft -> verify ->
commit), over a mode's decoder (:mod:`specdec_service.engine.decoders`: a proposal rule, a
verifier and a row reader). A catalogued mistake is a correct decoder
(:data:`~specdec_service.engine.decoders.SPECULATIVE`, ``GREEDY``, ``AUTOREGRESSIVE``) with one rule
changed (:func:`~specdec_service.engine.decoders.swapped`): a proposal rule, a verifier, or one
part of the token-wise verifier (its acceptance test, correction, bonus or discard), each
defined here as a subclass of the correct rule that overrides only what it gets wrong. So a
variant differs from the reference by that rule and nothing else, and its traces have exactly
the engine's format. The engine's loop has no switch for any of them.

:func:`faulty_step` / :func:`faulty_run` decode with a decoder; with a mode's correct decoder
they are the engine's ``step`` / ``run`` (the same function).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Iterator, NamedTuple, Optional

from ..engine import Config, State
from ..engine.block_loop import play
from ..engine.distributions import Dist, acceptance_ratio, accepts, argmax, sample
from ..engine.draws import Draws
from ..engine.proposals import Drafted
from ..engine.decoders import (
    MODE_RULES, SPECULATIVE, ArgmaxBonus, ArgmaxProposal, Discard, RatioTest,
    ResidualCorrection, RuleSet, SampledBonus, SampledProposal, TargetArgmaxTest, TokenWise, point_mass,
)
from ..engine.decoders import TargetRowCorrection, swapped  # noqa: F401  (the catalogue's names; defined beside the rules)
from ..engine.trace import trace_of
from ..engine.verifiers.block import (
    LastPassing, ScaledResidual, Thresholds, Weighting, scaled_mass, scaled_residual, weights,
)
from ..engine.verifiers.tokenwise import Decisions, accepted_prefix

_TWO_53 = 2**53


class Weights(NamedTuple):
    """Integer weights over a denominator that need not be a distribution (a student's
    unclipped or unnormalised residual): entry ``i`` is ``weights[i] / total``. SPEC section 3's
    ``sample`` over them is a loop over the cumulative sums: the first token with
    ``u < cumulative``; when none qualifies, the last token (what a loop that falls through
    returns)."""

    weights: tuple[int, ...]
    total: int

    @property
    def cumulative(self) -> tuple[int, ...]:
        """The cuts a draw picks from (:class:`~specdec_service.engine.draws.Cuts`): the running
        maximum of the cumulative sums (the first sum above ``u`` is the first running maximum
        above it), the last at least ``total`` (the loop's fall-through to the last token)."""
        cuts, running, top = [], 0, None
        for weight in self.weights:
            running += weight
            top = running if top is None else max(top, running)
            cuts.append(top)
        cuts[-1] = max(cuts[-1], self.total)
        return tuple(cuts)


def sample_weights(r, d) -> int:
    """SPEC section 3's ``sample`` as a loop over any weights (:class:`Weights`): ``sample`` on a
    distribution, the last token when the loop falls through."""
    return sample(r, d)


# ---------------------------------------------------------------- proposals


@dataclass(frozen=True)
class DraftAfterRejected(SampledProposal):
    """Mistake: the next block's draft is conditioned on the previous block's rejected
    proposal (the draft's cache not rolled back), not on the committed correction token.
    ``rejected`` is that proposal (``None``: the previous block rejected nothing); the rule
    for the next block is :meth:`after`."""

    name: str = "after-rejected"
    rejected: Optional[int] = None

    def start(self, last: Optional[int]) -> Optional[int]:
        """The rejected proposal when there is one after a non-empty prefix."""
        return self.rejected if self.rejected is not None and last is not None else last

    def after(self, rejected: Optional[int]) -> "DraftAfterRejected":
        """This rule for the block after one that rejected ``rejected``."""
        return self if rejected == self.rejected else replace(self, rejected=rejected)


class _LazyDrafted(Drafted):
    """A drafted block whose proposals are drafted when the verifier reads them."""

    __slots__ = ("more",)
    more: Iterator[tuple[int, Dist]]

    def each(self) -> Iterator[tuple[int, Dist]]:
        return self.more


@dataclass(frozen=True)
class InterleavedProposal(SampledProposal):
    """Mistake: draft one proposal, verify it, draft the next (draws alternate): each proposal
    is drafted when the verifier reads it, so drafting stops at the first rejection."""

    name: str = "interleaved"

    def draft(self, state, rows, stream: Draws, tokens=None) -> Drafted:
        """A drafted block that drafts each proposal from the stream when it is read."""
        committed = state.committed
        drafted = _LazyDrafted(committed[-1] if committed else None)
        count = self.room(state.config, len(committed)) if tokens is None else len(tokens)
        drafted.more = self._drafting(drafted, state.config, rows, stream, count, tokens)
        return drafted

    def _drafting(self, drafted, config, rows, stream, count, tokens):
        context = self.start(drafted.last)
        for _ in range(count):
            context = self.extend(drafted, config, rows, stream, context, 1, tokens)
            yield context, drafted.rows[-1]
            if context == config.eos:
                return


@dataclass(frozen=True)
class ArgmaxTiesLast(ArgmaxProposal):
    """Mistake (greedy): the draft's argmax breaks ties toward the last token in vocabulary
    order (a ``>=`` scan) instead of the earliest."""

    name: str = "argmax-ties-last"

    def choose(self, q: Dist) -> int:
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

    def test(self, draws: Draws, p: Dist, q: Dist, x: int):
        """Accepted without a draw when ``p(x) >= q(x)``, else the ratio test with the next draw."""
        if p.weights[x] * q.total >= q.weights[x] * p.total:
            return True, None
        return super().test(draws, p, q, x)


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

    def matches(self, p: Dist, q: Dist, x: int) -> bool:
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

    def token(self, r, draws: Draws):
        """``sample(r, d)`` with ``d`` the draw just taken (the one that rejected the proposal)."""
        d = draws.last()
        return sample(r, d), d


# ---------------------------------------------------------------- bonus


@dataclass(frozen=True)
class BonusFromDraft(SampledBonus):
    """Mistake: the bonus (in mode autoregressive: the token) is sampled from the **draft**
    row after the accepted prefix, not the target's."""

    name: str = "from-draft"

    def row(self, rows, last: Optional[int]) -> Dist:
        """The draft's row."""
        return rows.draft(last)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """``q``."""
        return q


@dataclass(frozen=True)
class ArgmaxBonusFromDraft(ArgmaxBonus):
    """Mistake (greedy): the bonus is the **draft's** argmax, not the target's."""

    name: str = "draft-argmax"

    def row(self, rows, last: Optional[int]) -> Dist:
        """The draft's row."""
        return rows.draft(last)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """A point mass at ``argmax(q)``."""
        return point_mass(len(q.weights), argmax(q))


@dataclass(frozen=True)
class NeverBonus(SampledBonus):
    """Mistake: no bonus token, ever (``bonus`` and ``no_bonus`` both null when one is due)."""

    name: str = "never"

    def add(self, rows, last, vocab, stream) -> Optional[dict]:
        """``None``: the bonus is forgotten."""
        return None


@dataclass(frozen=True)
class BonusPastLimit(SampledBonus):
    """Mistake: a bonus drawn even when the accepted proposals reach the limit."""

    name: str = "past-limit"

    def limited(self, config, length: int, accepted: int) -> bool:
        """``False``: the limit is not looked at."""
        return False


@dataclass(frozen=True)
class SkippedDrawBonus(SampledBonus):
    """Mistake (autoregressive): one draw is left unused before the token's draw (a draw
    consumed and thrown away), so the token takes draw n + 1."""

    name: str = "skip-one"

    def token(self, row: Dist, draws: Draws):
        """``sample(row, d)`` with the draw after the next one."""
        draws.skip(1)
        return super().token(row, draws)


NO_BONUS = NeverBonus()
"""Mistake: no bonus token, ever (``bonus`` and ``no_bonus`` both null when one is due)."""
BONUS_PAST_LIMIT = BonusPastLimit()
"""Mistake: a bonus drawn even when the accepted proposals reach the limit."""

# ---------------------------------------------------------------- discard


@dataclass(frozen=True)
class ListNone(Discard):
    """The proposals after the first rejection are not listed as discarded."""

    name: str = "list-none"

    def listed(self, rest: list) -> list:
        """None are listed."""
        return []


@dataclass(frozen=True)
class KeepAndListRest(TokenWise):
    """Mistake: the proposals after the first rejection are committed after the correction
    **and** listed as discarded."""

    name: str = "keep-and-list"

    def commits(self, block: dict) -> list:
        """SPEC 4's committed tokens, then after a correction every proposal after the rejected one."""
        commit = super().commits(block)
        if block["correction"] is None:
            return commit
        return commit + block["proposal"]["tokens"][accepted_prefix(block["verification"]) + 1:]


@dataclass(frozen=True)
class KeepRest(KeepAndListRest):
    """Mistake: the proposals after the first rejection are committed after the correction
    (and not listed as discarded)."""

    discard: Discard = ListNone()
    name: str = "keep"


KEEP_REST = KeepRest()
"""Mistake: the proposals after the first rejection are committed after the correction."""
KEEP_AND_LIST_REST = KeepAndListRest()
"""Mistake: the proposals after the first rejection are committed **and** listed as discarded."""

# ---------------------------------------------------------------- verifiers and draw order


@dataclass(frozen=True)
class VerifyAll(TokenWise):
    """Mistake: every proposal is verified (a vectorised verification), past the first
    rejection; ``accepted`` counts every proposal that passed its test."""

    name: str = "verify-all"

    def decide(self, state, rows, drafted, stream: Draws) -> Decisions:
        """Every proposal tested, each with a draw: the correct tests of the proposals up to the
        first rejection, then again of the proposals after it, and so on to the end. The
        accepted prefix and the first rejection are the correct rule's."""
        first = super().decide(state, rows, drafted, stream)
        records, at = first.records, first.rejected_at
        while at is not None and at + 1 < len(drafted.tokens):
            more = super().decide(state, rows, drafted.after(at), stream)
            for record in more.records:
                record["index"] += at + 1
            records += more.records
            at = None if more.rejected_at is None else at + 1 + more.rejected_at
        return Decisions(records, first.accepted, first.rejected_at)

    def tally(self, block: dict, draws: int):
        """The counters, ``accepted`` counting every passed test."""
        return super().tally(block, draws)._replace(accepted=sum(v["accepted"] is True for v in block["verification"]))


# ---------------------------------------------------------------- block verification (SPEC 10)


@dataclass(frozen=True)
class BlockRunsTokenWise(TokenWise):
    """Mistake (vllm-ascend #7807): mode block runs the token-wise rule (SPEC 4): each proposal
    tested by its own ratio, stopping at the first rejection, the correction from the plain
    residual; no weights, thresholds or tau are computed or recorded."""

    name: str = "token-wise-in-block-mode"


@dataclass(frozen=True)
class FirstFailing(LastPassing):
    """Mistake (block): tau is taken as the number of eta draws that pass before the first one
    that fails (``eta_i >= h_i``), instead of the last i with ``eta_i < h_i``."""

    name: str = "first-failing"

    def tau(self, below) -> int:
        """The passing draws before the first failing one."""
        count = 0
        for ok in below:
            if not ok:
                break
            count += 1
        return count


@dataclass(frozen=True)
class UnscaledResidual(ScaledResidual):
    """Mistake (block): after ``tau < k`` the correction is drawn from ``max(p - q, 0)``
    normalised (SPEC 4.3's residual), not scaled by ``w_tau``: ``max(w_tau p - q, 0)``."""

    name: str = "unscaled"

    def row(self, p: Dist, q: Dist, w: Fraction = Fraction(1)):
        """``max(p - q, 0)`` normalised, whatever ``w``."""
        return super().row(p, q, Fraction(1))

    def distribution(self, p: Dist, q: Dist, w: Fraction = Fraction(1)) -> Dist:
        """The unscaled residual."""
        return super().distribution(p, q, Fraction(1))


def clipped_ratios(ps, qs, tokens) -> list:
    """``min(1, p_i(d_i) / q_i(d_i))`` of each proposal, exact; ``ValueError`` for a proposal
    of draft probability 0 (it cannot be drafted)."""
    out = []
    for p, q, x in zip(ps, qs, tokens):
        if not q.weights[x]:
            raise ValueError("a proposal of draft probability 0 has no ratio (it cannot be drafted)")
        out.append(min(Fraction(1), Fraction(p.weights[x] * q.total, p.total * q.weights[x])))
    return out


@dataclass(frozen=True)
class CumprodThresholds(Thresholds):
    """Mistake (block; vllm-ascend's MagicMTP verifier): the prefix ``d_1..d_i`` passes iff
    ``eta_1 * ... * eta_i < a_i`` with ``a_i = prod_(j <= i) min(1, p_j(d_j) / q_j(d_j))`` (the
    cumulative product of the clipped ratios, not SPEC's weights), and tau is the largest such
    i. Recorded as the weight ``a_i`` and the threshold ``a_i / (eta_1 ... eta_(i-1))`` on
    ``eta_i`` (the same test, one draw at a time; it may exceed 1)."""

    name: str = "cumprod"

    def weigh(self, ps, qs, tokens, draws) -> Weighting:
        """``a_0 = 1, a_1..a_k`` and the thresholds on each draw given the ones before it."""
        a = [Fraction(1)]
        for r in clipped_ratios(ps, qs, tokens):
            a.append(a[-1] * r)
        h, before = [], Fraction(1)
        for i, d in enumerate(draws):
            h.append(a[i + 1] / before if before else Fraction(2 if a[i + 1] else 0))
            before *= Fraction(d.mantissa, _TWO_53)
        return Weighting(a, h)


@dataclass(frozen=True)
class RowEarlyThresholds(Thresholds):
    """Mistake (block; vllm-ascend PR #7808's PyTorch path): each threshold ``h_i`` (i < k) is
    computed from the rows one position too early, ``p_i``, ``q_i`` (the context before
    ``d_i``, from which ``d_i`` was drafted) instead of ``p_(i+1)``, ``q_(i+1)``:
    ``s_i = sum_y max(w_i p_i(y) - q_i(y), 0)``, ``h_i = s_i / (s_i + 1 - w_i)``; the weights,
    ``h_k = w_k``, tau and the scaled residual are SPEC's."""

    name: str = "row-early"

    def weigh(self, ps, qs, tokens, draws) -> Weighting:
        """SPEC's weights, the thresholds from the rows before each proposal."""
        w = weights(ps, qs, tokens)
        h = []
        for i in range(1, len(tokens)):
            s = scaled_mass(ps[i - 1], qs[i - 1], w[i])
            h.append(Fraction(1) if s + 1 - w[i] == 0 else s / (s + 1 - w[i]))
        if tokens:
            h.append(w[-1])
        return Weighting(w, h)


@dataclass(frozen=True)
class ResidualOrFirstToken(ScaledResidual):
    """The correction of vllm-ascend's block verifiers (with :class:`CumprodThresholds` or
    :class:`RowEarlyThresholds`): ``max(w_tau p - q, 0)`` normalised (``scaled``, SPEC's weight
    ``w_tau``; the current code and PR #7808) or ``max(p - q, 0)`` normalised (MagicMTP's first
    version); when that row has no mass (a mistaken test can reject a proposal where SPEC's
    never does), the first token of the vocabulary, what their arg max over an all-zero row
    gives."""

    name: str = "residual-or-first-token"
    scaled: bool = True

    def row(self, p: Dist, q: Dist, w: Fraction = Fraction(1)):
        """The residual, or a point mass on token 0 when it has no mass."""
        try:
            return scaled_residual(p, q, w if self.scaled else Fraction(1))
        except ValueError:
            return point_mass(len(p.weights), 0)

    def distribution(self, p: Dist, q: Dist, w: Fraction = Fraction(1)) -> Dist:
        """:meth:`row`."""
        return self.row(p, q, w)


INTERLEAVED = InterleavedProposal()
"""Mistake: draft one, verify it, draft the next (draws alternate; drafting stops at the first rejection)."""
VERIFY_ALL = VerifyAll()
"""Mistake: every proposal is verified (a vectorised verification); ``accepted`` counts every pass."""
SKIP_ONE = SkippedDrawBonus()
"""Mistake (autoregressive): one draw is left unused before the token's draw."""


CORRECT = SPECULATIVE
"""The correct rules of mode speculative (the reference for every speculative variant)."""


def faulty_step(state: State, rules: RuleSet = SPECULATIVE, carry: Optional[int] = None) -> tuple[dict, State, Optional[int]]:
    """One block decoded with ``rules`` (:func:`~specdec_service.engine.block_loop.play`).

    ``rules`` applies when its ``mode`` is the config's; otherwise the config's own mode's
    correct rules do (a mistake of one mode is no mistake of another). ``carry`` is the rejected
    proposal of the previous block (read only by :class:`DraftAfterRejected`, through its
    :meth:`~DraftAfterRejected.after`). Returns ``(block dict, next state, rejected proposal or
    None)``. Raises ``ValueError`` when a rule is undefined for this block (e.g. a residual of
    zero mass) and ``InvalidInput`` past 2^53-1.
    """
    if rules.mode != state.config.mode:
        rules = MODE_RULES[state.config.mode]
    after = getattr(rules.proposal, "after", None)
    if after is not None:
        rules = replace(rules, proposal=after(carry))
    result = play(state, rules)
    return result.block, result.state, result.rejected


def faulty_run(config: Config, rules: RuleSet = SPECULATIVE) -> dict:
    """A whole trace (``specdec-trace/1``) decoded with ``rules``, from the empty prefix until
    the session is done (at most ``limit`` blocks). ``faulty_run(c, MODE_RULES[c.mode]) ==
    engine.run(c)``. Raises ``ValueError`` when a rule is undefined for this config (also a
    mode-tree decoder made for another tree, :func:`.faulty_tree.rules_apply`)."""
    if config.mode == "tree" and rules.mode == "tree":
        from .faulty_tree import rules_apply  # faulty_tree builds on this module's decoders

        if not rules_apply(config, rules):
            raise ValueError("this decoder is made for another tree (SPEC 12's shape and verifier)")
    state = State(config)
    blocks = []
    carry = None
    while state.done is None:
        block, state, carry = faulty_step(state, rules, carry)
        blocks.append(block)
    return trace_of(state, blocks)

