"""One block of decoding: draft, verify, step (SPEC sections 4-6).

``draft(state)`` is the uncommitted proposal; ``verify(state, tokens)``
checks a proposal against the target and commits; ``step(state)`` is
``verify(state, draft(state)["tokens"])``. Every block is returned as a
JSON-ready dict that records every row, draw and decision (the format is
documented field by field in ``docs/trace-format.md``), together with the
next :class:`~.state.State`.

The block is written once, :func:`play`, over the rule objects of a mode
(:mod:`.rules`: how proposals are made, the acceptance test, the correction,
the bonus, the discard and the draw order); :func:`finish` is its tail after
the decisions, which the grader's checks reuse. The arithmetic of each rule
lives in :mod:`.distributions` (``sample``, ``accepts``, ``residual``,
``argmax``); this module orders the rules and records them.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

from .distributions import Dist
from .draws import MAX_POSITION, Draw
from .errors import Fault, InvalidInput, SessionDone
from .rules import MODE_RULES, RuleSet, no_bonus
from .state import MAX_COUNTER, COUNTER_NAMES, Counters, State, parse_tokens


class StepResult(NamedTuple):
    """A committed block and the state after it; ``rejected`` is the block's rejected
    proposal (a token index, ``None`` when nothing was rejected). An immutable named tuple."""

    block: dict
    state: State
    rejected: Optional[int] = None

    @property
    def done(self) -> Optional[str]:
        """``None``, ``"limit"`` or ``"eos"``: whether the session ended (SPEC section 6)."""
        return self.state.done

    def to_json(self) -> dict:
        """``{"block", "state", "done"}``: the body of ``POST /v1/step``."""
        return {"block": self.block, "state": self.state.to_json(), "done": self.done}


_PAST_THE_END = "the block would move the position past 2^53-1: start a new session"

# ---------------------------------------------------------------- draft


def _check_open(state: State) -> None:
    reason = state.done
    if reason is not None:
        raise SessionDone(reason)


def draft_room(state: State) -> int:
    """How many proposals the next block may draft: ``min(width, limit - L)``
    (SPEC section 4.1), 0 in mode ``autoregressive`` (the mode's proposal rule decides)."""
    return MODE_RULES[state.config.mode].proposal.room(state.config, len(state.committed))


def _drafts(state: State, rules: RuleSet, tokens: Optional[Sequence[int]], first: int, count: int,
            last: Optional[int], n: int):
    """Proposals ``first .. first + count - 1`` (0-based) by the proposal rule, the first
    after token ``last`` and from draw position ``n`` (``tokens``: the caller's proposal,
    recorded with the rule's own choice): each with its context, draft row q, draw and whether
    the rule gives that token from that draw (SPEC section 4.1); drafting stops right after an
    EOS (SPEC section 6). Returns ``(proposal, qs, steps, next position)``."""
    cfg, rule = state.config, rules.proposal
    vocab, eos, seed, after = cfg.vocab, cfg.eos, cfg.seed, cfg.draft.after
    uses_draw, choose, take = rule.uses_draw, rule.choose, rules.schedule.take
    proposal: list[int] = []
    qs: list[Dist] = []
    steps: list[dict] = []
    for i in range(first, first + count):
        q = after(last)
        d, n = take(seed, n) if uses_draw else (None, n)
        own = choose(q, d)
        token = own if tokens is None else tokens[i]
        proposal.append(token)
        qs.append(q)
        steps.append({
            "index": i + 1,
            "context": None if last is None else vocab[last],
            "q": q.to_json(),
            "draw": None if d is None else d.to_json(),
            "token": vocab[token],
            "drafted": token == own,
        })
        if token == eos:
            break
        last = token
    return proposal, qs, steps, n


def _draft_all(state: State, rules: RuleSet, tokens: Optional[Sequence[int]], carry: Optional[int]):
    """SPEC section 4.1: all k proposals of the block (``tokens``: the caller's instead), see
    :func:`_drafts`. Raises :class:`InvalidInput` when their draws would pass 2^53-1."""
    rule = rules.proposal
    count = rule.room(state.config, len(state.committed)) if tokens is None else len(tokens)
    if rule.uses_draw and state.position + count > MAX_POSITION:
        raise InvalidInput.at(("position",), _PAST_THE_END)
    last = rule.start(state.committed[-1] if state.committed else None, carry)
    return _drafts(state, rules, tokens, 0, count, last, state.position)


def draft(state: State) -> dict:
    """The uncommitted proposal of the next block (SPEC section 4.1).

    Returns ``{"tokens": [label, ...], "steps": [{"index", "context", "q",
    "draw", "token", "drafted"}, ...]}``: up to ``min(width, limit - L)``
    tokens (fewer after a drafted EOS; none in mode ``autoregressive``).
    The state is not changed. Raises :class:`SessionDone` on an ended session.
    """
    _check_open(state)
    proposal, _, steps, _ = _draft_all(state, MODE_RULES[state.config.mode], None, None)
    return {"tokens": state.labels(proposal), "steps": steps}


# ---------------------------------------------------------------- verify


def _check_proposal(state: State, tokens: Sequence[int]) -> None:
    cfg = state.config
    room = draft_room(state)
    if cfg.mode == "autoregressive":
        if tokens:
            raise InvalidInput.at(("tokens",), "must be empty in mode autoregressive: it drafts nothing (SPEC section 5)")
        return
    if not 1 <= len(tokens) <= room:
        raise InvalidInput.at(("tokens",), f"must hold 1 to {room} tokens: min(width, limit - committed) (SPEC section 4.1)")
    context = list(state.committed)
    for i, token in enumerate(tokens):
        q = cfg.draft.row(context)
        if q.weights[token] == 0:
            after = f"after {cfg.vocab[context[-1]]!r}" if context else "at the empty prefix"
            raise InvalidInput.at(("tokens", i), f"the draft gives {cfg.vocab[token]!r} probability 0 {after}: it cannot be a proposal")
        context.append(token)


def verify(state: State, labels: Sequence[str]) -> StepResult:
    """Verify a proposal and commit the block (SPEC sections 4.2-4.4, 5, 6).

    ``labels`` are the proposal's tokens: what :func:`draft` proposed, or
    any other 1..min(width, limit - L) vocabulary tokens that the draft gives
    a positive probability in their context (EOS only as the last); empty in
    mode ``autoregressive``. The draft draws at ``state.position`` onward are
    recorded (and used) either way, so ``verify(s, draft(s)["tokens"]) ==
    step(s)``.

    Raises :class:`SessionDone` on an ended session and :class:`InvalidInput`
    (paths under ``tokens``) for a proposal that breaks these rules.
    """
    _check_open(state)
    tokens = parse_tokens(labels, state.config, ("tokens",))
    _check_proposal(state, tokens)
    return play(state, MODE_RULES[state.config.mode], tokens)


def step(state: State) -> StepResult:
    """The next block: draft, then verify that proposal (SPEC sections 4-5).

    Raises :class:`SessionDone` on an ended session.
    """
    _check_open(state)
    return play(state, MODE_RULES[state.config.mode])


# ---------------------------------------------------------------- the block


def play(state: State, rules: RuleSet, tokens: Optional[Sequence[int]] = None, carry: Optional[int] = None) -> StepResult:
    """One block under ``rules`` (SPEC sections 4-6): draft, verify, correction or bonus, commit.

    This is the only implementation of a block: the engine's modes are the rule sets of
    :data:`~.rules.MODE_RULES`, and each catalogued mistake of the grader is a correct rule
    set with one rule swapped. ``tokens`` is a caller's proposal (token indices, already
    checked; ``None``: the proposal rule drafts it); ``carry`` the previous block's rejected
    proposal (only a mistaken proposal rule reads it). The state must be open.

    Returns the :class:`StepResult` (its ``rejected`` is the rejected proposal, or ``None``).
    Raises :class:`InvalidInput` (path ``position`` or ``counters/...``) when the block would
    move the position or a counter past 2^53-1, and ``ValueError`` when a rule is undefined
    for the rows at hand (a residual of zero mass).
    """
    cfg = state.config
    schedule, acceptance = rules.schedule, rules.acceptance
    draft_first, stop, take = schedule.draft_first, schedule.stop_at_rejection, schedule.take
    uses_draw, accepts, ratio = acceptance.uses_draw, acceptance.accepts, acceptance.ratio
    seed, vocab, eos, after = cfg.seed, cfg.vocab, cfg.eos, cfg.target.after
    last = state.committed[-1] if state.committed else None
    if draft_first:
        proposal, qs, steps, n = _draft_all(state, rules, tokens, carry)
        count = len(proposal)
    else:  # a schedule that drafts each proposal just before verifying it
        proposal, qs, steps, n = [], [], [], state.position
        count = rules.proposal.room(cfg, len(state.committed)) if tokens is None else len(tokens)
        draft_last = rules.proposal.start(last, carry)
    verification: list[dict] = []
    accepted: list[int] = []
    passes = 0
    rejected_at: Optional[int] = None
    last_draw: Optional[Draw] = None
    for i in range(count):
        if not draft_first:
            one, q_one, step_one, n = _drafts(state, rules, tokens, i, 1, proposal[-1] if proposal else draft_last, n)
            proposal += one
            qs += q_one
            steps += step_one
        token, q = proposal[i], qs[i]
        context = proposal[i - 1] if i else last
        p = after(context)
        d, n = take(seed, n) if uses_draw(p, q, token) else (None, n)
        ok = accepts(d, p, q, token)
        verification.append({
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
        last_draw = d
        passes += ok
        if rejected_at is None:
            if ok:
                accepted.append(token)
            else:
                rejected_at = i
        if rejected_at is not None:
            if stop:
                break
        elif token == eos:
            break
    q_rejected = None if rejected_at is None else qs[rejected_at]
    tail = finish(state, rules, proposal, accepted, rejected_at, q_rejected, n, last_draw)
    n = tail.position
    counters = Counters(
        target_passes=1,
        draft_steps=len(proposal),
        accepted=len(accepted) if stop else passes,
        rejected=0 if tail.correction is None else 1,
        discarded=len(tail.discarded),
        bonus_tokens=0 if tail.bonus is None else 1,
        committed=len(tail.committed),
        draws=n - state.position,
    )
    total = state.counters + counters
    if n > MAX_POSITION:
        raise InvalidInput.at(("position",), _PAST_THE_END)
    if max(total) > MAX_COUNTER:
        over = [name for name, value in zip(COUNTER_NAMES, total) if value > MAX_COUNTER]
        raise InvalidInput([Fault(("counters", name), "would exceed 2^53-1 after this block") for name in over])
    next_state = State(cfg, state.committed + tuple(tail.committed), n, total)
    block = block_record(
        state, next_state, proposal=proposal, steps=steps, verification=verification, correction=tail.correction,
        discarded=tail.discarded, bonus=tail.bonus, no_bonus=tail.no_bonus, sample=tail.sample, committed=tail.committed,
        counters=counters,
    )
    return StepResult(block, next_state, None if rejected_at is None else proposal[rejected_at])


class Tail(NamedTuple):
    """What a block commits after its decisions (SPEC sections 4.3-4.4): the correction
    record (or ``None``), the discarded proposals, the bonus record, why there is no bonus,
    the autoregressive ``sample`` record, every committed token, and the next position."""

    correction: Optional[dict]
    discarded: list
    bonus: Optional[dict]
    no_bonus: Optional[str]
    sample: Optional[dict]
    committed: list
    position: int


def finish(state: State, rules: RuleSet, proposal: Sequence[int], accepted: Sequence[int], rejected_at: Optional[int],
           q: Optional[Dist], n: int, last_draw: Optional[Draw] = None) -> Tail:
    """The end of a block under ``rules``, given its proposal and decisions (SPEC 4.3-4.4, 5, 6).

    ``accepted`` is the accepted prefix of ``proposal``; ``rejected_at`` the index of the
    first rejected proposal (``None``: none), whose draft row is ``q``; ``n`` the position of
    the next draw; ``last_draw`` the last verification draw (read only by a mistaken
    correction rule that reuses it). After a rejection: the correction token from the
    correction rule and the discard rule for the later proposals; otherwise the bonus unless
    :func:`~.rules.no_bonus` gives a reason (in mode autoregressive, with no proposals, the
    bonus is the block's ``sample``). Used by :func:`play` and by the grader's checks (which
    judge a submission's tail from its own decisions). Raises ``ValueError`` when the
    correction is undefined (``p == q``: a residual of zero mass).
    """
    cfg = state.config
    vocab, seed, take = cfg.vocab, cfg.seed, rules.schedule.take
    committed = list(accepted)
    last = state.committed[-1] if state.committed else None
    correction = extension = None
    discarded: list = []
    if rejected_at is not None:
        rule = rules.correction
        context = proposal[rejected_at - 1] if rejected_at else last
        p = cfg.target.after(context)
        r = rule.row(p, q)
        if rule.reuses_draw:
            d = last_draw
        else:
            d, n = take(seed, n) if rule.uses_draw else (None, n)
        fix = rule.choose(r, d)
        correction = {
            "index": rejected_at + 1,
            "context": None if context is None else vocab[context],
            "distribution": rule.record(r),
            "draw": None if d is None else d.to_json(),
            "token": vocab[fix],
        }
        committed.append(fix)
        rest = list(proposal[rejected_at + 1:])
        if rules.discard.commits_rest:
            committed.extend(rest)
        if rules.discard.lists_rest:
            discarded = rest
    bonus = rules.bonus
    reason = no_bonus(bonus, cfg, len(state.committed), accepted, rejected_at is not None)
    if reason is None and bonus.adds:
        context = accepted[-1] if accepted else last
        row = bonus.row(cfg, context)
        d, n = take(seed, n) if bonus.uses_draw else (None, n)
        token = bonus.choose(row, d)
        extension = {"context": None if context is None else vocab[context], "p": row.to_json(),
                     "draw": None if d is None else d.to_json(), "token": vocab[token]}
        committed.append(token)
    if rules.proposal.drafts:
        return Tail(correction, discarded, extension, reason, None, committed, n)
    return Tail(correction, discarded, None, reason, extension, committed, n)


def block_record(state: State, next_state: State, *, proposal: Sequence[int], steps: list, verification: list,
                 correction: Optional[dict], discarded: Sequence[int], bonus: Optional[dict], no_bonus: Optional[str],
                 sample: Optional[dict], committed: Sequence[int], counters: Counters) -> dict:
    """A block as recorded in traces (every key of ``docs/trace-format.md``,
    in order), from the block's parts: token indices, the step records and
    the block's own counters; ``state`` and ``next_state`` are the states
    before and after it."""
    vocab = state.config.vocab
    return {
        "mode": state.config.mode,
        "prefix": state.labels(),
        "position": state.position,
        "proposal": {"tokens": [vocab[t] for t in proposal], "steps": steps},
        "verification": verification,
        "correction": correction,
        "discarded": [vocab[t] for t in discarded],
        "bonus": bonus,
        "no_bonus": no_bonus,
        "sample": sample,
        "committed": [vocab[t] for t in committed],
        "counters": counters.to_json(),
        "next_position": next_state.position,
        "done": next_state.done,
    }
