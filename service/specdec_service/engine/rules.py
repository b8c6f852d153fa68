"""The rules a decoding mode is made of, as values (SPEC sections 4-6).

A block is draft -> verify -> correction or bonus -> commit, written once in
:func:`.block.play`. What a mode (or a catalogued mistake) may change is a
small named rule object; a :class:`RuleSet` is one of each:

=============  ===========================================  =========================
rule           speculative (SPEC 4)                         greedy (SPEC 5)
=============  ===========================================  =========================
proposal       :class:`SampledProposal`: d = sample(q, u)   :class:`ArgmaxProposal`
acceptance     :class:`RatioTest`: u * q(x) < p(x)          :class:`TargetArgmaxTest`
correction     :class:`ResidualCorrection`: max(p - q, 0)   :class:`TargetArgmaxCorrection`
bonus          :class:`SampledBonus` from p                 :class:`ArgmaxBonus` of p
discard        :class:`Discard`                             :class:`Discard`
schedule       :class:`Schedule`: all k drafts first        :class:`Schedule`
=============  ===========================================  =========================

Mode ``autoregressive`` is :data:`SPECULATIVE` with :class:`NoProposal`: a
block of zero proposals, all (none) accepted, whose "bonus" is the token
``sample(p, draw(n))`` (recorded under ``sample``, SPEC section 5).

**Exact distributions, for analysis.** Every rule can state what it induces,
exactly (:class:`~.distributions.Dist` or :class:`~fractions.Fraction`), from
the rows of one context, without drawing anything:

- ``proposal.distribution(q)``: the law of a proposal drafted from draft row
  ``q`` (``q`` itself, or a point mass at its argmax);
- ``acceptance.probability(p, q, x)``: the probability that proposal ``x`` is
  accepted (``min(1, p(x) / q(x))``, or 0/1 for the greedy test);
- ``correction.distribution(p, q)``: the law of the correction token after a
  rejection (the residual ``max(p - q, 0)`` normalised, or a point mass);
- ``bonus.distribution(p, q)``: the law of the bonus token (``p``, or a point
  mass at its argmax).

For example ``SPECULATIVE.correction.distribution(p, q)`` is the residual of
SPEC section 4.3 and ``SPECULATIVE.acceptance.probability(p, q, x)`` is
``min(1, p(x)/q(x))``. :data:`MODE_RULES` maps each mode to its rule set.

The primitives the rules apply (``sample``, ``argmax``, ``accepts``,
``residual``) live in :mod:`.distributions`; the catalogue of mistakes
(``grading/faulty.py``) defines mistaken rules with the same attributes and
swaps one into a correct rule set (``dataclasses.replace``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Optional

from .distributions import Dist, acceptance_ratio, accepts, argmax, residual, sample
from .draws import Draw, draw


def point_mass(size: int, token: int) -> Dist:
    """The distribution of a deterministic choice: all mass on ``token`` (of ``size`` tokens)."""
    return Dist(tuple(1 if i == token else 0 for i in range(size)), 1)


def room(config, length: int) -> int:
    """How many proposals a block may draft after ``length`` committed tokens:
    ``k = min(width, limit - L)`` (SPEC section 4.1: the limit clips k)."""
    return min(config.width, config.limit - length)


# ---------------------------------------------------------------- proposals (SPEC 4.1, 5)


@dataclass(frozen=True)
class SampledProposal:
    """SPEC section 4.1: proposal ``d_i = sample(q_i, draw(n))`` from the draft row
    ``q_i`` of its context (the committed prefix plus the earlier proposals), one draw each."""

    name: str = "sampled"
    uses_draw: bool = True
    drafts: bool = True

    def room(self, config, length: int) -> int:
        """``min(width, limit - L)`` (:func:`room`)."""
        return room(config, length)

    def start(self, last: Optional[int], carry: Optional[int]) -> Optional[int]:
        """The token the first draft row is conditioned on: the last committed token
        (``None`` at the empty prefix). ``carry`` (the previous block's rejected
        proposal) is ignored: the next block drafts from the committed output (SPEC 4.3)."""
        return last

    choose = staticmethod(sample)
    """``choose(q, d)``: the proposal ``sample(q, d)`` (SPEC section 3; the primitive itself,
    bound without a wrapper: the block calls it for every proposal)."""

    def distribution(self, q: Dist) -> Dist:
        """Exact law of a proposal drafted from ``q``: ``q`` itself."""
        return q


@dataclass(frozen=True)
class ArgmaxProposal(SampledProposal):
    """SPEC section 5 (greedy): the draft proposes its argmax, ties to the earliest
    token in vocabulary order; no draw."""

    name: str = "argmax"
    uses_draw: bool = False

    def choose(self, q: Dist, d: Optional[Draw]) -> int:
        """``argmax(q)`` (ties to the earliest token)."""
        return argmax(q)

    def distribution(self, q: Dist) -> Dist:
        """A point mass at ``argmax(q)``."""
        return point_mass(len(q.weights), self.choose(q, None))


@dataclass(frozen=True)
class NoProposal(SampledProposal):
    """SPEC section 5 (autoregressive): nothing is drafted (k = 0); the draft and the
    width are unused."""

    name: str = "none"
    uses_draw: bool = False
    drafts: bool = False

    def room(self, config, length: int) -> int:
        """0: the block has no proposals."""
        return 0


# ---------------------------------------------------------------- acceptance (SPEC 4.2, 5)


@dataclass(frozen=True)
class RatioTest:
    """SPEC section 4.2 (Leviathan et al. 2023, Chen et al. 2023): draw ``u`` for every
    proposal, accept ``x`` iff ``u < p(x) / q(x)``, exactly ``u * q(x) < p(x)``."""

    name: str = "ratio"

    def uses_draw(self, p: Dist, q: Dist, x: int) -> bool:
        """True: the draw is used even when ``p(x) >= q(x)`` makes acceptance certain."""
        return True

    accepts = staticmethod(accepts)
    """``accepts(d, p, q, x)``: :func:`~.distributions.accepts`, ``u * q(x) < p(x)`` exactly."""
    ratio = staticmethod(acceptance_ratio)
    """``ratio(p, q, x)``: the recorded ratio ``p(x) / q(x)`` (nearest float64, display only)."""

    def probability(self, p: Dist, q: Dist, x: int) -> Fraction:
        """Exact acceptance probability ``min(1, p(x) / q(x))`` (``q(x) > 0``)."""
        return min(Fraction(1), p.probability(x) / q.probability(x))


@dataclass(frozen=True)
class TargetArgmaxTest(RatioTest):
    """SPEC section 5 (greedy): accept ``x`` iff it is the target's argmax; no draw,
    no ratio recorded."""

    name: str = "target-argmax"

    def uses_draw(self, p: Dist, q: Dist, x: int) -> bool:
        """False: greedy decoding uses no draws."""
        return False

    def accepts(self, d: Optional[Draw], p: Dist, q: Dist, x: int) -> bool:
        """``x == argmax(p)``."""
        return x == argmax(p)

    def ratio(self, p: Dist, q: Dist, x: int) -> Optional[float]:
        """``None``: greedy verification has no ratio."""
        return None

    def probability(self, p: Dist, q: Dist, x: int) -> Fraction:
        """1 if ``x`` is the target's argmax, else 0."""
        return Fraction(int(self.accepts(None, p, q, x)))


# ---------------------------------------------------------------- correction (SPEC 4.3, 5)


@dataclass(frozen=True)
class ResidualCorrection:
    """SPEC section 4.3: after the first rejection, the correction token is
    ``sample(r, draw(n))`` with ``r = max(p - q, 0)`` normalised, a fresh draw."""

    name: str = "residual"
    uses_draw: bool = True
    reuses_draw: bool = False

    row = staticmethod(residual)
    """``row(p, q)``: the recorded correction distribution (an object with integer ``weights``
    and their denominator ``total``): the residual; ``ValueError`` when ``p == q``."""
    choose = staticmethod(sample)
    """``choose(r, d)``: the correction token ``sample(r, d)`` (SPEC section 3)."""

    def record(self, r) -> list[float]:
        """``r`` as published: each entry as the nearest float64."""
        return r.to_json()

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """Exact law of the correction token: the residual ``max(p - q, 0)`` normalised."""
        return residual(p, q)


@dataclass(frozen=True)
class TargetArgmaxCorrection(ResidualCorrection):
    """SPEC section 5 (greedy): at the first mismatch the target commits its argmax;
    the recorded distribution is ``p``; no draw."""

    name: str = "target-argmax"
    uses_draw: bool = False

    def row(self, p: Dist, q: Dist):
        """The target row ``p``."""
        return p

    def choose(self, r, d: Optional[Draw]) -> int:
        """``argmax(r)``."""
        return argmax(r)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """A point mass at ``argmax(p)``."""
        return point_mass(len(p.weights), argmax(p))


@dataclass(frozen=True)
class TargetRowCorrection(ResidualCorrection):
    """The naive correction of the explainer's warning (not SPEC): the correction token is
    sampled from the target row ``p`` instead of the residual. Biased: the output is no
    longer the target's (:data:`NAIVE`; the grading catalogue's ``resample-from-p``)."""

    name: str = "p"

    def row(self, p: Dist, q: Dist):
        """``p``."""
        return p

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """``p``."""
        return p


# ---------------------------------------------------------------- bonus (SPEC 4.4, 5, 6)


@dataclass(frozen=True)
class SampledBonus:
    """SPEC section 4.4: when all k proposals are accepted below the limit, one bonus
    token ``sample(p, draw(n))`` from the target after the accepted prefix. In mode
    autoregressive (no proposals) this is the block's one token (SPEC section 5)."""

    name: str = "sampled"
    uses_draw: bool = True
    adds: bool = True
    at_limit: bool = False

    def row(self, config, last: Optional[int]) -> Dist:
        """The row the bonus is taken from: the target's, after ``last``."""
        return config.target.after(last)

    choose = staticmethod(sample)
    """``choose(row, d)``: ``sample(row, d)`` (SPEC section 3)."""

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """Exact law of the bonus token: the target row ``p``."""
        return p


@dataclass(frozen=True)
class ArgmaxBonus(SampledBonus):
    """SPEC section 5 (greedy): if all proposals match, the target adds its argmax; no draw."""

    name: str = "argmax"
    uses_draw: bool = False

    def choose(self, row: Dist, d: Optional[Draw]) -> int:
        """``argmax(row)``."""
        return argmax(row)

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """A point mass at ``argmax(p)``."""
        return point_mass(len(p.weights), argmax(p))


def at_limit(bonus, config, length: int, accepted: int) -> bool:
    """SPEC section 4.4: no bonus is drawn when the ``accepted`` proposals after ``length``
    committed tokens reach the limit (``L + k >= limit``); ``False`` for a ``bonus`` rule that
    draws ``at_limit`` (a catalogued mistake)."""
    return length + accepted >= config.limit and not bonus.at_limit


def no_bonus(bonus, config, length: int, accepted: list, rejected: bool) -> Optional[str]:
    """Why a block adds no bonus token (SPEC sections 4.4 and 6), or ``None`` when it
    does: ``"rejection"`` after a rejection, ``"eos"`` after an accepted EOS, ``"limit"``
    when the accepted proposals reach the limit (:func:`at_limit`)."""
    if rejected:
        return "rejection"
    if accepted and accepted[-1] == config.eos:
        return "eos"
    if at_limit(bonus, config, length, len(accepted)):
        return "limit"
    return None


# ---------------------------------------------------------------- discard and schedule (SPEC 4.1, 4.3)


@dataclass(frozen=True)
class Discard:
    """SPEC section 4.3: the proposals after the first rejection are discarded (listed
    under ``discarded``) and not committed."""

    name: str = "discard"
    commits_rest: bool = False
    lists_rest: bool = True


@dataclass(frozen=True)
class Schedule:
    """SPEC section 4.1-4.2, the order of draws: all k draft draws first, then one
    verification draw per proposal in order, stopping at the first rejection; then the
    correction or bonus draw. ``skip`` draws are left unused before each draw taken
    (0: draws are used one after another, SPEC section 2)."""

    name: str = "draft-first"
    draft_first: bool = True
    stop_at_rejection: bool = True
    skip: int = 0

    def take(self, seed: int, n: int) -> tuple[Draw, int]:
        """The draw a rule uses when the next unused position is ``n``, and the next unused
        position after it: ``(draw(seed, n), n + 1)`` (SPEC section 2: every draw used
        advances the position by one), ``skip`` positions later for a mistaken schedule."""
        n += self.skip
        return draw(seed, n), n + 1


# ---------------------------------------------------------------- rule sets


@dataclass(frozen=True)
class RuleSet:
    """One rule of each kind: what :func:`.block.play` applies. ``mode`` names the
    decoding mode these rules (or a catalogued variant of them) decode."""

    mode: str
    proposal: SampledProposal
    acceptance: RatioTest
    correction: ResidualCorrection
    bonus: SampledBonus
    discard: Discard = Discard()
    schedule: Schedule = Schedule()


SPECULATIVE = RuleSet("speculative", SampledProposal(), RatioTest(), ResidualCorrection(), SampledBonus())
"""SPEC section 4: speculative sampling."""
GREEDY = RuleSet("greedy", ArgmaxProposal(), TargetArgmaxTest(), TargetArgmaxCorrection(), ArgmaxBonus())
"""SPEC section 5: blockwise parallel (greedy) decoding (Stern et al. 2018)."""
AUTOREGRESSIVE = RuleSet("autoregressive", NoProposal(), RatioTest(), ResidualCorrection(), SampledBonus())
"""SPEC section 5: ordinary sampling, one target token per block."""
MODE_RULES = {"speculative": SPECULATIVE, "greedy": GREEDY, "autoregressive": AUTOREGRESSIVE}
"""The correct rule set of each mode of ``Config.mode``."""


def swapped(rules: RuleSet, **rule) -> RuleSet:
    """``rules`` with the named rule(s) replaced, e.g. ``swapped(SPECULATIVE, bonus=NO_BONUS)``:
    how a mode's variant (a catalogued mistake, the naive rule) is stated."""
    return replace(rules, **rule)


NAIVE = swapped(SPECULATIVE, correction=TargetRowCorrection())
"""The naive rule of the explainer's warning: speculative sampling with the correction drawn
from the target p instead of the residual (the grading catalogue's ``resample-from-p``);
biased: its output is not the target's. Exact analysis reports its bias."""
