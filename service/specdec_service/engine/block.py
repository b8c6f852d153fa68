"""One block of decoding: draft, verify, step (SPEC sections 4-6).

``draft(state)`` is the uncommitted proposal; ``verify(state, tokens)``
checks a proposal against the target and commits; ``step(state)`` is
``verify(state, draft(state)["tokens"])``. Every block is returned as a
JSON-ready dict that records every row, draw and decision (the format is
documented field by field in ``docs/trace-format.md``), together with the
next :class:`~.state.State`.

The rules themselves live in :mod:`.distributions` (``sample``, ``accepts``,
``residual``, ``argmax``); this module orders them and records them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .distributions import Dist, acceptance_ratio, accepts, argmax, residual, sample
from .draws import MAX_POSITION, Draw, draw
from .errors import Fault, InvalidInput, SessionDone
from .state import MAX_COUNTER, COUNTER_NAMES, Counters, State, parse_tokens


@dataclass(frozen=True)
class StepResult:
    """A committed block and the state after it."""

    block: dict
    state: State

    @property
    def done(self) -> Optional[str]:
        """``None``, ``"limit"`` or ``"eos"``: whether the session ended (SPEC section 6)."""
        return self.state.done

    def to_json(self) -> dict:
        """``{"block", "state", "done"}``: the body of ``POST /v1/step``."""
        return {"block": self.block, "state": self.state.to_json(), "done": self.done}


_PAST_THE_END = "the block would move the position past 2^53-1: start a new session"

# ---------------------------------------------------------------- records


def draw_json(d: Optional[Draw]) -> Optional[dict]:
    """A draw as recorded in a block, or ``None`` for a mode that uses none."""
    return None if d is None else d.to_json()


def context_label(state: State, context: Sequence[int]) -> Optional[str]:
    """The token a bigram row is conditioned on: the context's last token,
    ``None`` at the empty prefix (SPEC section 1: only it matters)."""
    return state.config.vocab[context[-1]] if context else None


def target_sample_record(state: State, context: Sequence[int], p: Dist, d: Optional[Draw], token: int) -> dict:
    """A token drawn from (or chosen by) the target: a bonus token or an
    autoregressive token. ``{"context", "p", "draw", "token"}``."""
    return {"context": context_label(state, context), "p": p.to_json(), "draw": draw_json(d), "token": state.config.vocab[token]}


# ---------------------------------------------------------------- draft


def _check_open(state: State) -> None:
    reason = state.done
    if reason is not None:
        raise SessionDone(reason)


def draft_room(state: State) -> int:
    """How many proposals the next block may draft: ``min(width, limit - L)``
    (SPEC section 4.1), 0 in mode ``autoregressive``."""
    if state.config.mode == "autoregressive":
        return 0
    return min(state.config.width, state.config.limit - len(state.committed))


def _proposal(state: State, tokens: Optional[Sequence[int]]) -> tuple[list[int], list[dict]]:
    """Draft (``tokens is None``) or record a given proposal: each proposal's
    context, draft row q, draw (none when greedy) and whether the draft's rule
    gives that token from that draw. Drafting stops right after an EOS (SPEC 6)."""
    cfg = state.config
    vocab, draft_model, eos = cfg.vocab, cfg.draft, cfg.eos
    speculative = cfg.mode == "speculative"
    count = draft_room(state) if tokens is None else len(tokens)
    if speculative and state.position + count > MAX_POSITION:
        raise InvalidInput.at(("position",), _PAST_THE_END)
    last = state.committed[-1] if state.committed else None  # a bigram row needs only this
    proposal: list[int] = []
    steps: list[dict] = []
    for i in range(count):
        q = draft_model.after(last)
        d = draw(cfg.seed, state.position + i) if speculative else None
        own = sample(q, d) if speculative else argmax(q)
        token = own if tokens is None else tokens[i]
        proposal.append(token)
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
    return proposal, steps


def draft(state: State) -> dict:
    """The uncommitted proposal of the next block (SPEC section 4.1).

    Returns ``{"tokens": [label, ...], "steps": [{"index", "context", "q",
    "draw", "token", "drafted"}, ...]}``: up to ``min(width, limit - L)``
    tokens (fewer after a drafted EOS; none in mode ``autoregressive``).
    The state is not changed. Raises :class:`SessionDone` on an ended session.
    """
    _check_open(state)
    tokens, steps = _proposal(state, None)
    return {"tokens": state.labels(tokens), "steps": steps}


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


def _speculative(state: State, proposal: list[int], n: int):
    """SPEC sections 4.2-4.4 (and the greedy rule of section 5): verify the
    proposal from draw position ``n``. Returns the verification records, the
    correction record (or ``None``), the accepted prefix, the correction
    token (as a list of 0 or 1), the discarded proposals and the next position."""
    cfg = state.config
    vocab, target, draft_model, seed = cfg.vocab, cfg.target, cfg.draft, cfg.seed
    greedy = cfg.mode == "greedy"
    last = state.committed[-1] if state.committed else None
    verification: list[dict] = []
    accepted: list[int] = []
    for i, token in enumerate(proposal):
        context = None if last is None else vocab[last]
        p, q = target.after(last), draft_model.after(last)
        if greedy:
            d, ok, ratio = None, token == argmax(p), None
        else:
            d = draw(seed, n)
            n += 1
            ok, ratio = accepts(d, p, q, token), acceptance_ratio(p, q, token)
        verification.append({
            "index": i + 1,
            "context": context,
            "token": vocab[token],
            "p": p.to_json(),
            "q": q.to_json(),
            "p_token": p.floats[token],
            "q_token": q.floats[token],
            "ratio": ratio,
            "draw": None if d is None else d.to_json(),
            "accepted": ok,
        })
        if not ok:
            if greedy:
                r, d, fix = p, None, argmax(p)
            else:
                r, d = residual(p, q), draw(seed, n)
                n += 1
                fix = sample(r, d)
            correction = {
                "index": i + 1,
                "context": context,
                "distribution": r.to_json(),
                "draw": None if d is None else d.to_json(),
                "token": vocab[fix],
            }
            return verification, correction, accepted, [fix], proposal[i + 1:], n
        accepted.append(token)
        if token == cfg.eos:
            break
        last = token
    return verification, None, accepted, [], [], n


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
    proposal, steps = _proposal(state, tokens)
    return _commit(state, proposal, steps)


def step(state: State) -> StepResult:
    """The next block: draft, then verify that proposal (SPEC sections 4-5).

    Raises :class:`SessionDone` on an ended session.
    """
    _check_open(state)
    proposal, steps = _proposal(state, None)
    return _commit(state, proposal, steps)


def _commit(state: State, proposal: list[int], steps: list[dict]) -> StepResult:
    cfg = state.config
    prefix = list(state.committed)
    n = state.position + (len(proposal) if cfg.mode == "speculative" else 0)
    sample_record = bonus = no_bonus = None
    verification: list[dict] = []
    correction = None
    accepted: list[int] = []
    discarded: list[int] = []
    if cfg.mode == "autoregressive":
        p = cfg.target.row(prefix)
        d = draw(cfg.seed, n)
        n += 1
        token = sample(p, d)
        sample_record = target_sample_record(state, prefix, p, d, token)
        committed = [token]
    else:
        verification, correction, accepted, fix, discarded, n = _speculative(state, proposal, n)
        committed = accepted + fix
        if correction is not None:
            no_bonus = "rejection"
        elif accepted and accepted[-1] == cfg.eos:
            no_bonus = "eos"
        elif len(prefix) + len(accepted) >= cfg.limit:
            no_bonus = "limit"
        else:
            context = prefix + accepted
            p = cfg.target.row(context)
            d = None if cfg.mode == "greedy" else draw(cfg.seed, n)
            n += 0 if d is None else 1
            token = argmax(p) if d is None else sample(p, d)
            bonus = target_sample_record(state, context, p, d, token)
            committed.append(token)

    counters = Counters(
        target_passes=1,
        draft_steps=len(proposal),
        accepted=len(accepted),
        rejected=0 if correction is None else 1,
        discarded=len(discarded),
        bonus_tokens=0 if bonus is None else 1,
        committed=len(committed),
        draws=n - state.position,
    )
    total = state.counters + counters
    if n > MAX_POSITION:
        raise InvalidInput.at(("position",), _PAST_THE_END)
    over = [name for name in COUNTER_NAMES if getattr(total, name) > MAX_COUNTER]
    if over:
        raise InvalidInput([Fault(("counters", name), "would exceed 2^53-1 after this block") for name in over])
    next_state = State(cfg, state.committed + tuple(committed), n, total)
    block = block_record(
        state, next_state, proposal=proposal, steps=steps, verification=verification, correction=correction,
        discarded=discarded, bonus=bonus, no_bonus=no_bonus, sample=sample_record, committed=committed,
        counters=counters,
    )
    return StepResult(block, next_state)


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
