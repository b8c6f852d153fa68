"""One block of decoding: draft -> verify -> commit (SPEC sections 4-7).

``draft(state)`` is the uncommitted proposal; ``verify(state, tokens)``
checks a proposal against the target and commits; ``step(state)`` is
``verify(state, draft(state)["tokens"])``. Every block is returned as a
JSON-ready dict that records every row, draw and decision (the format is
documented field by field in ``docs/trace-format.md``), together with the
next :class:`~.state.State`.

The block is written once, :func:`play`, over a mode's :class:`~.decoders.Decoder`: its row
reader makes the block's rows (:mod:`.rows`), its proposal rule drafts a
:class:`~.proposals.Drafted` block (:mod:`.proposals`), its verifier verifies the whole
drafted block and returns its decisions, correction or bonus (:mod:`.verifiers`), and
:func:`commit` records the block, reads off the record what it commits and counts
(the verifier's ``commits`` and ``tally``, which the grader's checks apply to a submission's
record), and moves the state on. The draws come from one :class:`~.draws.Stream`, in the
order the proposal rule and the verifier take them. This module orders the steps and records
them; it holds no rule.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

from .draws import MAX_POSITION, Draws, Stream
from .errors import Fault, InvalidInput, SessionDone
from .proposals import PAST_THE_END, Drafted
from .decoders import MODE_RULES
from .state import MAX_COUNTER, COUNTER_NAMES, State, parse_tokens
from .trees import AnyDecoder, decoder_of


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


# ---------------------------------------------------------------- draft


def _check_open(state: State) -> None:
    reason = state.done
    if reason is not None:
        raise SessionDone(reason)


def draft_room(state: State) -> int:
    """How many proposals the next block may draft: ``min(width, limit - L)``
    (SPEC section 4.1), 0 in mode ``autoregressive`` (the mode's proposal rule decides)."""
    return MODE_RULES[state.config.mode].proposal.room(state.config, len(state.committed))


def draft(state: State) -> dict:
    """The uncommitted proposal of the next block (SPEC section 4.1).

    Returns ``{"tokens": [label, ...], "steps": [{"index", "context", "q",
    "draw", "token", "drafted"}, ...]}``: up to ``min(width, limit - L)``
    tokens (fewer after a drafted EOS; none in mode ``autoregressive``).
    The state is not changed. Raises :class:`SessionDone` on an ended session.
    """
    _check_open(state)
    cfg = state.config
    decoder = decoder_of(cfg)
    drafted = decoder.proposal.draft(state, decoder.rows.read(cfg), Stream(cfg.seed, state.position))
    return drafted.record(cfg.vocab)


# ---------------------------------------------------------------- verify


def _check_proposal(state: State, tokens: Sequence[int], path: tuple = ("tokens",)) -> None:
    cfg = state.config
    room = draft_room(state)
    if cfg.mode == "autoregressive":
        if tokens:
            raise InvalidInput.at(path, "must be empty in mode autoregressive: it drafts nothing (SPEC section 5)")
        return
    if not 1 <= len(tokens) <= room:
        raise InvalidInput.at(path, f"must hold 1 to {room} tokens: min(width, limit - committed) (SPEC section 4.1)")
    draft_row = MODE_RULES[cfg.mode].rows.read(cfg).draft
    last = state.committed[-1] if state.committed else None
    for i, token in enumerate(tokens):
        q = draft_row(last)
        if q.weights[token] == 0:
            after = f"after {cfg.vocab[last]!r}" if last is not None else "at the empty prefix"
            raise InvalidInput.at(path + (i,), f"the draft gives {cfg.vocab[token]!r} probability 0 {after}: it cannot be a proposal")
        last = token


def _parse_chains(state: State, chains: Any) -> list:
    """A caller's chains in mode tree (SPEC 11.1): exactly ``drafts`` chains, each a proposal
    :func:`_check_proposal` accepts. Raises :class:`InvalidInput` (paths under ``chains``)."""
    drafts = state.config.drafts
    if not isinstance(chains, list) or len(chains) != drafts:
        raise InvalidInput.at(("chains",), f"must hold exactly {drafts} chains: the config's drafts (SPEC section 11)")
    parsed = []
    for j, labels in enumerate(chains):
        tokens = parse_tokens(labels, state.config, ("chains", j))
        _check_proposal(state, tokens, ("chains", j))
        parsed.append(tokens)
    return parsed


def verify(state: State, labels: Optional[Sequence[str]], chains: Any = None) -> StepResult:
    """Verify a proposal and commit the block (SPEC sections 4.2-4.4, 5, 6).

    ``labels`` are the proposal's tokens: what :func:`draft` proposed, or
    any other 1..min(width, limit - L) vocabulary tokens that the draft gives
    a positive probability in their context (EOS only as the last); empty in
    mode ``autoregressive``. The draft draws at ``state.position`` onward are
    recorded (and used) either way, so ``verify(s, draft(s)["tokens"]) ==
    step(s)``.

    In mode ``tree`` the proposal is ``chains`` instead (``labels`` ``None``): exactly
    ``drafts`` chains of token labels, each such a proposal (SPEC section 11.1); the draws of
    every chain are used as if drafted, chain 1's first.

    Raises :class:`SessionDone` on an ended session and :class:`InvalidInput`
    (paths under ``tokens`` or ``chains``) for a proposal that breaks these rules.
    """
    _check_open(state)
    tree = state.config.mode == "tree"
    shape = state.config.tree.shape if tree and state.config.tree is not None else "chains"
    if tree and labels is not None and shape != "chains":
        raise InvalidInput.at(("tokens",), f'shape "{shape}" drafts its own tree: use /v1/step (SPEC section 12)')
    if tree and labels is not None:
        raise InvalidInput.at(("tokens",), "mode tree verifies chains: give `chains`, one list of tokens per draft (SPEC section 11)")
    if not tree and chains is not None:
        raise InvalidInput.at(("chains",), "only mode tree verifies chains: give `tokens` (SPEC section 4)")
    if tree:
        return play(state, decoder_of(state.config), _parse_chains(state, chains))
    tokens = parse_tokens(labels, state.config, ("tokens",))
    _check_proposal(state, tokens)
    return play(state, MODE_RULES[state.config.mode], tokens)


def step(state: State) -> StepResult:
    """The next block: draft, then verify that proposal (SPEC sections 4-5).

    Raises :class:`SessionDone` on an ended session.
    """
    _check_open(state)
    return play(state, decoder_of(state.config))


# ---------------------------------------------------------------- the block


def play(state: State, rules: AnyDecoder, tokens: Optional[Sequence[int]] = None,
         draws: Optional[Draws] = None) -> StepResult:
    """One block under the decoder ``rules`` (SPEC sections 4-7): draft -> verify -> commit.

    This is the only implementation of a block: the engine's modes are the decoders of
    :data:`~.decoders.MODE_RULES`, and each catalogued mistake of the grader is a decoder with one
    rule changed. ``tokens`` is a caller's proposal (token indices, already checked; ``None``:
    the proposal rule drafts it). ``draws``: where the rules take their draws (default: the
    seed's SplitMix64 :class:`~.draws.Stream` from the state's position; the exact enumerator's
    :class:`~.enumeration.Branch` states the law of the block). The state must be open.

    Returns the :class:`StepResult` (its ``rejected`` is the rejected proposal, or ``None``).
    Raises :class:`InvalidInput` (path ``position`` or ``counters/...``) when the block would
    move the position or a counter past 2^53-1, and ``ValueError`` when a rule is undefined
    for the rows at hand (a residual of zero mass).
    """
    cfg = state.config
    rows = rules.rows.read(cfg)
    stream = Stream(cfg.seed, state.position) if draws is None else draws
    drafted = rules.proposal.draft(state, rows, stream, tokens)
    verdict = rules.verifier.verify(state, rows, drafted, stream)
    return commit(state, rules, drafted, verdict, stream.position)


def _after_verification(block: dict, extra: dict) -> dict:
    """``block`` with a verifier's ``extra`` keys (block verification's ``tau``) right after
    ``verification`` (``docs/trace-format.md``)."""
    out = {}
    for key, value in block.items():
        out[key] = value
        if key == "verification":
            out.update(extra)
    return out


def commit(state: State, rules: AnyDecoder, drafted: Drafted, verdict, n: int) -> StepResult:
    """Record a verified block and move the state on (SPEC sections 4-7): the block record
    (every key of ``docs/trace-format.md``, in order), what it commits and its counters as the
    verifier reads them off the record (``commits``, ``tally``), and the next state (draws up to
    position ``n``). In mode autoregressive (a proposal rule that drafts nothing) the verifier's
    bonus is recorded as the block's ``sample``. A verifier's ``extra`` keys (block verification's
    ``tau``) follow ``verification``. Raises :class:`InvalidInput` past 2^53-1."""
    if n > MAX_POSITION:
        raise InvalidInput.at(("position",), PAST_THE_END)
    cfg = state.config
    vocab, verifier, extension = cfg.vocab, rules.verifier, verdict.bonus
    drafts = rules.proposal.drafts
    block = {
        "mode": cfg.mode,
        "prefix": [vocab[t] for t in state.committed],
        "position": state.position,
        "proposal": drafted.record(vocab),
        "verification": verdict.verification,
        "correction": verdict.correction,
        "discarded": [vocab[t] for t in verdict.discarded],
        "bonus": extension if drafts else None,
        "no_bonus": verdict.no_bonus,
        "sample": None if drafts else extension,
        "committed": None,
        "counters": None,
        "next_position": n,
        "done": None,
    }
    if verdict.extra:
        block = _after_verification(block, verdict.extra)
    labels = block["committed"] = verifier.commits(block)
    counters = verifier.tally(block, n - state.position)
    total = state.counters + counters
    if max(total) > MAX_COUNTER:
        over = [name for name, value in zip(COUNTER_NAMES, total) if value > MAX_COUNTER]
        raise InvalidInput([Fault(("counters", name), "would exceed 2^53-1 after this block") for name in over])
    after = State(cfg, state.committed + tuple(map(cfg.index.__getitem__, labels)), n, total)
    block["counters"] = counters.to_json()
    block["done"] = after.done
    return StepResult(block, after, verdict.rejected)
