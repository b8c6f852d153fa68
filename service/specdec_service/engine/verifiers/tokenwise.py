"""Token-wise verification: speculative sampling (SPEC section 4; Leviathan et al. 2023, Chen et
al. 2023), and autoregressive decoding, its block of no proposals (SPEC section 5).

The verifier tests the drafted proposals in order, one draw each: accept ``d_i`` iff
``u * q_i(d_i) < p_i(d_i)``; at the first rejection the correction token is drawn from the
residual ``max(p_i - q_i, 0)`` normalised and the later proposals are discarded; if all are
accepted, a bonus is drawn from the target after them (none at the limit, none after an
accepted EOS).

**Law.** Given its context, a proposal ``x ~ q`` is accepted with probability
``min(1, p(x)/q(x))``; after a rejection (probability ``1 - sum_x min(p(x), q(x))``) the
correction has the law ``max(p - q, 0)`` normalised; so each committed token is exactly
distributed as ``p`` (Leviathan et al. 2023, theorem 1). The bonus has the law ``p``. In mode
autoregressive there is no proposal and the block's one token (recorded as ``sample``) has the
law ``p``. :meth:`TokenWise.acceptance_probability`, :meth:`~TokenWise.correction_law` and
:meth:`~TokenWise.bonus_law` state these exactly (``tests/test_rules.py`` proves the theorem
for random rows).

The verifier is made of four parts, each a small rule object: ``acceptance`` (:class:`RatioTest`),
``correction`` (:class:`ResidualCorrection`), ``bonus`` (:class:`SampledBonus`) and ``discard``
(:class:`Discard`). Greedy decoding (:mod:`.greedy`) is this verifier with its argmax parts; a
catalogued mistake is this verifier with one part (or one method) changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, NamedTuple, Optional, Protocol, Sequence

from ..distributions import Dist, acceptance_ratio, accepts, residual, sample_next
from ..draws import Draws, Uniform
from ..state import Counters, counters_of

# The parts' shared signatures, as their variants implement them: a ratio may be None (greedy
# records none); the memoised residual is called as (p, q).
_ratio: Callable[[Dist, Dist, int], Optional[float]] = acceptance_ratio
_residual: Callable[[Dist, Dist], Dist] = residual

# ---------------------------------------------------------------- the parts


class Correction(Protocol):
    """A correction rule (SPEC 4.3, 5, 10.5): the row the correction token is drawn from after a
    rejection (``row``), the token and the draw it took (``token``), the row as recorded
    (``record``) and the token's exact law (``distribution``)."""

    def row(self, p: Dist, q: Dist) -> Any:
        """The correction row after a rejection in a context with target row ``p``, draft row ``q``."""

    def token(self, r: Any, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """The correction token from ``r`` and the draw it took (``None``: none)."""

    def record(self, r: Any) -> list[float]:
        """``r`` as a trace records it."""

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """The exact law of the correction token."""


@dataclass(frozen=True)
class RatioTest:
    """SPEC section 4.2: draw ``u`` for every proposal, accept ``x`` iff ``u < p(x) / q(x)``,
    exactly ``u * q(x) < p(x)``."""

    name: str = "ratio"

    def test(self, draws: Draws, p: Dist, q: Dist, x: int) -> tuple[bool, Optional[Uniform]]:
        """SPEC 4.2: the next draw ``u`` (taken even when ``p(x) >= q(x)`` makes acceptance
        certain) and whether it accepts ``x`` (:meth:`accepts`): ``(accepted, draw)``."""
        d = draws.take()
        return self.accepts(d, p, q, x), d

    accepts = staticmethod(accepts)
    """``accepts(d, p, q, x)``: :func:`~..distributions.accepts`, ``u * q(x) < p(x)`` exactly."""
    ratio = staticmethod(_ratio)
    """``ratio(p, q, x)``: the recorded ratio ``p(x) / q(x)`` (nearest float64, display only)."""

    def probability(self, p: Dist, q: Dist, x: int) -> Fraction:
        """Exact acceptance probability ``min(1, p(x) / q(x))`` (``q(x) > 0``)."""
        return min(Fraction(1), p.probability(x) / q.probability(x))


@dataclass(frozen=True)
class ResidualCorrection:
    """SPEC section 4.3: after the first rejection, the correction token is
    ``sample(r, draw(n))`` with ``r = max(p - q, 0)`` normalised, a fresh draw."""

    name: str = "residual"

    row = staticmethod(_residual)
    """``row(p, q)``: the recorded correction distribution (an object with integer ``weights``,
    their ``cumulative`` sums and their denominator ``total``): the residual; ``ValueError`` when
    ``p == q``."""

    def token(self, r, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """SPEC 4.3: the correction token ``sample(r, d)`` with the next draw: ``(token, draw)``."""
        return sample_next(r, draws)

    def record(self, r) -> list[float]:
        """``r`` as published: each entry as the nearest float64."""
        return r.to_json()

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """Exact law of the correction token: the residual ``max(p - q, 0)`` normalised."""
        return residual(p, q)


@dataclass(frozen=True)
class TargetRowCorrection(ResidualCorrection):
    """The naive correction of the explainer's warning (not SPEC): the correction token is
    sampled from the target row ``p`` instead of the residual. Biased: the output is no
    longer the target's (:data:`..decoders.NAIVE`; the grading catalogue's ``resample-from-p``)."""

    name: str = "p"

    def row(self, p: Dist, q: Dist):
        """``p``."""
        return p

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """``p``."""
        return p


@dataclass(frozen=True)
class SampledBonus:
    """SPEC section 4.4: when all k proposals are accepted below the limit, one bonus token
    ``sample(p, draw(n))`` from the target after the accepted prefix. In mode autoregressive
    (no proposals) this is the block's one token (SPEC section 5)."""

    name: str = "sampled"

    def limited(self, config, length: int, accepted: int) -> bool:
        """SPEC section 4.4: no bonus when the ``accepted`` proposals after ``length`` committed
        tokens reach the limit (``L + k >= limit``; ``config`` has a ``limit``)."""
        return length + accepted >= config.limit

    def missing(self, config, length: int, accepted: Sequence[int], rejected: bool) -> Optional[str]:
        """Why a block adds no bonus token (SPEC sections 4.4 and 6), or ``None`` when it
        does: ``"rejection"`` after a rejection, ``"eos"`` after an accepted EOS, ``"limit"``
        when the accepted proposals reach the limit (:meth:`limited`)."""
        if rejected:
            return "rejection"
        if accepted and accepted[-1] == config.eos:
            return "eos"
        if self.limited(config, length, len(accepted)):
            return "limit"
        return None

    def row(self, rows, last: Optional[int]) -> Dist:
        """The row the bonus is taken from: the target's, after ``last``."""
        return rows.target(last)

    def token(self, row: Dist, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """SPEC 4.4: the bonus token ``sample(row, d)`` with the next draw: ``(token, draw)``."""
        return sample_next(row, draws)

    def add(self, rows, last: Optional[int], vocab: Sequence[str], stream: Draws) -> Optional[dict]:
        """SPEC section 4.4: the bonus record ``{"context", "p", "draw", "token"}``: the token
        :meth:`token` gives from :meth:`row` after token ``last``."""
        row = self.row(rows, last)
        token, d = self.token(row, stream)
        return {"context": None if last is None else vocab[last], "p": row.to_json(),
                "draw": None if d is None else d.to_json(), "token": vocab[token]}

    def distribution(self, p: Dist, q: Dist) -> Dist:
        """Exact law of the bonus token: the target row ``p``."""
        return p


def no_bonus(bonus, config, length: int, accepted: Sequence[int], rejected: bool) -> Optional[str]:
    """Why a block adds no bonus token under the bonus rule ``bonus`` (:meth:`SampledBonus.missing`)."""
    return bonus.missing(config, length, accepted, rejected)


@dataclass(frozen=True)
class Discard:
    """SPEC section 4.3: the proposals after the first rejection are discarded (listed under
    ``discarded``) and not committed."""

    name: str = "discard"

    def listed(self, rest: list) -> list:
        """The later proposals listed under ``discarded``: all of them."""
        return rest


# ---------------------------------------------------------------- the verifier


class Decisions(NamedTuple):
    """The decisions of a token-wise verification: its ``records`` (one per test), the
    ``accepted`` prefix (token indices) and the index of the first rejected proposal
    (``rejected_at``, ``None``: none)."""

    records: list
    accepted: list
    rejected_at: Optional[int]


class Verdict(NamedTuple):
    """What a verifier returns: the ``verification`` records, the ``correction`` record (or
    ``None``), the ``discarded`` proposals (indices), the ``bonus`` record (in mode
    autoregressive the block's ``sample``), why there is no bonus (``no_bonus``), and the
    ``rejected`` proposal (an index, ``None`` when nothing was rejected); ``extra``: the block
    keys a verifier records beside its verification (block verification's ``tau``), ``None``
    for none (token-wise and greedy record none)."""

    verification: list
    correction: Optional[dict]
    discarded: list
    bonus: Optional[dict]
    no_bonus: Optional[str]
    rejected: Optional[int]
    extra: Optional[dict] = None


def accepted_prefix(verification: Sequence[dict]) -> int:
    """How many records lead the block's verification with ``"accepted": true``: the
    accepted prefix (SPEC sections 4.2 and 7)."""
    lead = 0
    for v in verification:
        if v["accepted"] is not True:
            break
        lead += 1
    return lead


@dataclass(frozen=True)
class TokenWise:
    """SPEC section 4 (and 5): verify the proposals in order, correct the first rejection,
    or add a bonus. ``acceptance``, ``correction``, ``bonus`` and ``discard`` are its parts."""

    acceptance: RatioTest = RatioTest()
    correction: Correction = ResidualCorrection()
    bonus: SampledBonus = SampledBonus()
    discard: Discard = Discard()
    name: str = "token-wise"

    def verify(self, state, rows, drafted, stream: Draws) -> Verdict:
        """The verification of ``drafted`` after ``state`` (SPEC sections 4.2-4.4): its
        decisions (:meth:`decide`), then what follows them (:meth:`conclude`). Raises
        ``ValueError`` when the correction is undefined (a residual of zero mass)."""
        return self.conclude(state, rows, drafted, self.decide(state, rows, drafted, stream), stream)

    def decide(self, state, rows, drafted, stream: Draws) -> Decisions:
        """SPEC section 4.2: test each proposal against the target row of its context, in
        order, with a draw each; stop at the first rejection or after an accepted EOS."""
        cfg = state.config
        vocab, eos, target = cfg.vocab, cfg.eos, rows.target
        test, ratio = self.acceptance.test, self.acceptance.ratio
        records: list[dict] = []
        accepted: list[int] = []
        context = drafted.last
        for i, (token, q) in enumerate(drafted.each()):
            p = target(context)
            ok, d = test(stream, p, q, token)
            records.append({
                "index": i + 1,
                "context": None if context is None else vocab[context],
                "token": vocab[token],
                "p": p.to_json(),
                "q": q.to_json(),
                "p_token": p.floats[token],
                "q_token": q.floats[token],
                "ratio": ratio(p, q, token),
                "draw": None if d is None else d.to_json(),
                "accepted": ok,
            })
            if not ok:
                return Decisions(records, accepted, i)
            accepted.append(token)
            if token == eos:
                break
            context = token
        return Decisions(records, accepted, None)

    def conclude(self, state, rows, drafted, decisions: Decisions, stream: Draws) -> Verdict:
        """What SPEC sections 4.3-4.4 make of ``decisions``: after a rejection the correction
        and the discard, otherwise the bonus unless :meth:`SampledBonus.missing` gives a reason.
        The grader's checks call it with a submission's own decisions."""
        records, accepted, at = decisions
        correction, discarded, rejected = None, [], None
        if at is not None:
            correction = self.correct(state, rows, drafted, at, stream)
            discarded = self.discard.listed(drafted.tokens[at + 1:])
            rejected = drafted.tokens[at]
        bonus = self.bonus
        reason = bonus.missing(state.config, len(state.committed), accepted, at is not None)
        extension = None
        if reason is None:
            extension = bonus.add(rows, accepted[-1] if accepted else drafted.last, state.config.vocab, stream)
        return Verdict(records, correction, discarded, extension, reason, rejected, self.extra(decisions))

    def extra(self, decisions: Decisions) -> Optional[dict]:
        """The block keys this verifier records beside its verification: none (``None``)."""
        return None

    def correct(self, state, rows, drafted, at: int, stream: Draws) -> dict:
        """SPEC section 4.3: the correction record after proposal ``at`` (0-based) was rejected."""
        rule, vocab = self.correction, state.config.vocab
        context = drafted.tokens[at - 1] if at else drafted.last
        r = rule.row(rows.target(context), drafted.rows[at])
        token, d = rule.token(r, stream)
        return {
            "index": at + 1,
            "context": None if context is None else vocab[context],
            "distribution": rule.record(r),
            "draw": None if d is None else d.to_json(),
            "token": vocab[token],
        }

    # -- reading a block record (the engine's own, or a submission's)

    def commits(self, block: dict) -> list:
        """The labels a token-wise block record commits: the accepted prefix of its
        verification, then its correction, bonus or sample token (the first present; SPEC 4.3:
        nothing after a correction)."""
        verification = block["verification"]
        lead = accepted_prefix(verification)
        commit = [v["token"] for v in verification[:lead]]
        correction = block["correction"]
        if correction is not None:
            commit.append(correction["token"])
            return commit
        end = block["bonus"]
        if end is None:
            end = block["sample"]
        if end is not None:
            commit.append(end["token"])
        return commit

    def tally(self, block: dict, draws: int) -> Counters:
        """SPEC section 7, read off a block record: one target pass, the drafted proposals, the
        accepted prefix, the rejection (0 or 1), the discarded and bonus tokens, the committed
        tokens, and ``draws``."""
        return counters_of((1, len(block["proposal"]["tokens"]), accepted_prefix(block["verification"]),
                            0 if block["correction"] is None else 1, len(block["discarded"]),
                            0 if block["bonus"] is None else 1, len(block["committed"]), draws))

    # -- the exact law, for the analysis

    def acceptance_probability(self, p: Dist, q: Dist, x: int) -> Fraction:
        """The probability that proposal ``x`` (drawn from ``q``) is accepted: ``min(1, p(x)/q(x))``."""
        return self.acceptance.probability(p, q, x)

    def correction_law(self, p: Dist, q: Dist) -> Dist:
        """The law of the correction token after a rejection: the residual, normalised."""
        return self.correction.distribution(p, q)

    def bonus_law(self, p: Dist, q: Dist) -> Dist:
        """The law of the bonus token: ``p``."""
        return self.bonus.distribution(p, q)

