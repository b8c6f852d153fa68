"""A parametrised *faulty* speculative block: the engine's rules with one switch per classic mistake.

Design. The reference engine (:mod:`specdec_service.engine`) stays pristine. To diagnose a
failing submission we need traces, in exactly the engine's format, of implementations that
break one rule each. Rather than one hand-written copy of the engine per mistake, this module
holds **one** block function, :func:`faulty_step`, that orders the engine's own primitives
(``sample``, ``accepts``, ``residual``, ``argmax``, ``acceptance_ratio``, ``draw``, the block
record helpers ``draw_json``, ``context_label``, ``target_sample_record`` and the
``State``/``Counters`` types) the way SPEC section 4 does, with a :class:`Faults` value of
switches. ``Faults()`` (every switch off) reproduces the engine block for block; the test
``tests/test_grading_faulty.py`` proves it over a matrix of settings, so that each catalogue
variant differs from the reference by its one switch and nothing else.

Only mode ``speculative`` has switches: the mistakes of the catalogue are mistakes of
speculative sampling (SPEC section 4). In modes ``greedy`` and ``autoregressive``
:func:`faulty_step` is the engine's ``step``.

The one piece of the engine's control flow this duplicates is the order of a speculative block
(draft k, verify in order, correct or add a bonus, count); it is about 100 lines and kept in one
function so a reader can hold it next to ``engine/block.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..engine import Config, Counters, State, accepts, argmax, draft_room, draw, residual, sample, step
from ..engine.block import block_record, context_label, draw_json, target_sample_record
from ..engine.distributions import Dist, acceptance_ratio
from ..engine.trace import trace_of

_TWO_53 = 2**53

CORRECTIONS = ("residual", "p", "unclipped", "unnormalised")
"""Where the correction token comes from after a rejection: the residual (correct, SPEC 4.3),
the target row ``p``, ``p - q`` without the clip at zero, or ``max(p - q, 0)`` without the
normalisation."""
BONUSES = ("target", "never", "past-limit", "draft")
"""How the bonus is handled: from the target (correct, SPEC 4.4), never drawn, drawn even at
the limit, or sampled from the draft row."""
ACCEPTANCES = ("ratio", "inverted", "greedy", "skip-when-p-ge-q")
"""The acceptance test: ``u < p/q`` with a draw every time (correct, SPEC 4.2), ``u < q/p``,
``token == argmax(p)`` without draws, or no draw (accept) when ``p(x) >= q(x)``."""


@dataclass(frozen=True)
class Faults:
    """The switches of :func:`faulty_step`; the default is the correct algorithm.

    - ``acceptance``: one of :data:`ACCEPTANCES`;
    - ``correction``: one of :data:`CORRECTIONS`;
    - ``bonus``: one of :data:`BONUSES`;
    - ``discard``: ``False`` keeps the proposals after the first rejection (commits them after
      the correction token);
    - ``draft_from_discarded``: the next block's draft is conditioned on the rejected proposal
      instead of the correction token;
    - ``interleave``: draft one token, verify it, draft the next (draws alternate; drafting
      stops at the first rejection);
    - ``verify_all``: a vectorised verification: every proposal gets a verification draw and
      test, ``accepted`` counts every passing test, the accepted prefix is committed;
    - ``reuse_draw``: the correction reuses the rejection's draw instead of a fresh one.
    """

    acceptance: str = "ratio"
    correction: str = "residual"
    bonus: str = "target"
    discard: bool = True
    draft_from_discarded: bool = False
    interleave: bool = False
    verify_all: bool = False
    reuse_draw: bool = False


CORRECT = Faults()


def _sample_weights(weights: tuple[int, ...], total: int, d) -> int:
    """SPEC section 3's ``sample`` on weights that need not be a distribution (a student's
    unclipped or unnormalised residual): the first token with ``u < cumulative``; when none
    qualifies, the last token (what a loop that falls through returns)."""
    threshold = d.mantissa * total
    cumulative = 0
    for token, weight in enumerate(weights):
        cumulative += weight
        if threshold < cumulative * _TWO_53:
            return token
    return len(weights) - 1


def _correction_weights(kind: str, p: Dist, q: Dist) -> tuple[tuple[int, ...], int]:
    """Integer weights and their denominator for the correction distribution ``kind``."""
    if kind == "residual":
        r = residual(p, q)
        return r.weights, r.total
    if kind == "p":
        return p.weights, p.total
    diffs = tuple(wp * q.total - wq * p.total for wp, wq in zip(p.weights, q.weights))
    if kind == "unclipped":  # p - q, divided by its positive mass, negatives kept
        positive = sum(x for x in diffs if x > 0)
        if positive == 0:
            raise ValueError("no positive mass")
        return diffs, positive
    # unnormalised: max(p - q, 0) as it is (its entries sum to less than 1)
    return tuple(max(x, 0) for x in diffs), p.total * q.total


def _floats(weights, total) -> list[float]:
    return [w / total for w in weights]


def faulty_step(state: State, faults: Faults = CORRECT, stale: Optional[int] = None) -> tuple[dict, State, Optional[int]]:
    """One block of speculative sampling with ``faults`` switched on (SPEC section 4 otherwise).

    ``stale`` is the rejected proposal carried over from the previous block (only used by
    ``draft_from_discarded``). Returns ``(block dict, next state, stale for the next block)``;
    the block dict has the engine's format (``docs/trace-format.md``). Raises ``ValueError``
    when a switch makes a rule undefined (e.g. a residual of zero mass).
    """
    cfg = state.config
    if cfg.mode != "speculative":
        result = step(state)
        return result.block, result.state, None
    seed, vocab, eos = cfg.seed, cfg.vocab, cfg.eos
    prefix = list(state.committed)
    n = state.position
    k = draft_room(state)
    draft_base = prefix[:-1] + [stale] if (faults.draft_from_discarded and stale is not None and prefix) else prefix

    proposal: list[int] = []
    qs: list[Dist] = []
    steps: list[dict] = []
    verification: list[dict] = []
    accepted: list[int] = []
    passes = 0
    rejected_at: Optional[int] = None
    last_draw = None

    def draft_one() -> int:
        nonlocal n
        context = draft_base + proposal
        q = cfg.draft.row(context)
        d = draw(seed, n)
        n += 1
        token = sample(q, d)
        proposal.append(token)
        qs.append(q)
        steps.append({"index": len(proposal), "context": context_label(state, context), "q": q.to_json(),
                      "draw": draw_json(d), "token": vocab[token], "drafted": True})
        return token

    def verify_one(i: int) -> bool:
        nonlocal n, last_draw, passes
        token, q = proposal[i], qs[i]
        context = prefix + proposal[:i]
        p = cfg.target.row(context)
        ratio = float(acceptance_ratio(p, q, token))
        d = None
        if faults.acceptance == "greedy":
            ok = token == argmax(p)
        elif faults.acceptance == "skip-when-p-ge-q" and p.weights[token] * q.total >= q.weights[token] * p.total:
            ok = True
        else:
            d = draw(seed, n)
            n += 1
            if faults.acceptance == "inverted":
                ok = accepts(d, q, p, token)  # u * p(x) < q(x): u < q/p
                ratio = float(acceptance_ratio(q, p, token)) if p.weights[token] else None
            else:
                ok = accepts(d, p, q, token)
        last_draw = d
        verification.append({"index": i + 1, "context": context_label(state, context), "token": vocab[token],
                             "p": p.to_json(), "q": q.to_json(), "p_token": p.floats[token], "q_token": q.floats[token],
                             "ratio": ratio, "draw": draw_json(d), "accepted": ok})
        passes += ok
        return ok

    # 1-2. Draft and verify (SPEC 4.1-4.2), or interleaved / vectorised by a switch.
    if faults.interleave:
        for i in range(k):
            token = draft_one()
            if not verify_one(i):
                rejected_at = i
                break
            accepted.append(token)
            if token == eos:
                break
    else:
        for _ in range(k):
            if draft_one() == eos:
                break
        for i, token in enumerate(proposal):
            ok = verify_one(i)
            if rejected_at is None:
                if ok:
                    accepted.append(token)
                else:
                    rejected_at = i
            if (rejected_at is not None and not faults.verify_all) or (rejected_at is None and token == eos):
                break

    # 3. Correction after the first rejection (SPEC 4.3).
    correction = bonus = None
    no_bonus: Optional[str] = None
    discarded: list[int] = []
    next_stale = None
    committed = list(accepted)
    if rejected_at is not None:
        i = rejected_at
        context = prefix + proposal[:i]
        p, q = cfg.target.row(context), qs[i]
        if faults.acceptance == "greedy":
            d, fix, dist = None, argmax(p), p.to_json()
        else:
            weights, total = _correction_weights(faults.correction, p, q)
            if faults.reuse_draw:
                d = last_draw
            else:
                d = draw(seed, n)
                n += 1
            fix = _sample_weights(weights, total, d)
            dist = _floats(weights, total)
        correction = {"index": i + 1, "context": context_label(state, context), "distribution": dist,
                      "draw": draw_json(d), "token": vocab[fix]}
        committed.append(fix)
        rest = proposal[i + 1:]
        if faults.discard:
            discarded = rest
        else:
            committed.extend(rest)
        no_bonus = "rejection"
        next_stale = proposal[i]
    # 4. Bonus when all are accepted (SPEC 4.4).
    elif accepted and accepted[-1] == eos:
        no_bonus = "eos"
    elif len(prefix) + len(accepted) >= cfg.limit and faults.bonus != "past-limit":
        no_bonus = "limit"
    elif faults.bonus != "never":
        context = prefix + accepted
        row = (cfg.draft if faults.bonus == "draft" else cfg.target).row(context)
        d = draw(seed, n)
        n += 1
        token = sample(row, d)
        bonus = target_sample_record(state, context, row, d, token)
        committed.append(token)

    counters = Counters(
        target_passes=1,
        draft_steps=len(proposal),
        accepted=passes if faults.verify_all else len(accepted),
        rejected=0 if correction is None else 1,
        discarded=len(discarded),
        bonus_tokens=0 if bonus is None else 1,
        committed=len(committed),
        draws=n - state.position,
    )
    next_state = State(cfg, state.committed + tuple(committed), n, state.counters + counters)
    block = block_record(
        state, next_state, proposal=proposal, steps=steps, verification=verification, correction=correction,
        discarded=discarded, bonus=bonus, no_bonus=no_bonus, sample=None, committed=committed, counters=counters,
    )
    return block, next_state, next_stale


def faulty_run(config: Config, faults: Faults = CORRECT) -> dict:
    """A whole trace (``specdec-trace/1``) decoded with ``faults``, from the empty prefix until
    the session is done (at most ``limit`` blocks). ``faulty_run(c, CORRECT) == engine.run(c)``.
    Raises ``ValueError`` when a switch makes a rule undefined for this config."""
    state = State(config)
    blocks = []
    stale = None
    while state.done is None:
        block, state, stale = faulty_step(state, faults, stale)
        blocks.append(block)
    return trace_of(state, blocks)
