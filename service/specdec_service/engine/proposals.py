"""Proposal rules: how a block drafts its uncommitted proposal (SPEC sections 4.1, 5 and 6).

A proposal rule turns the committed prefix, the draft rows and the draw stream into a
:class:`Drafted` block: the proposals, the draft row each was drawn from, and the records of
each step. The verifier then receives the whole drafted block (:mod:`.verifiers`).

===================  ==========================================  ======================
rule                 law of one proposal drafted from row q        draws
===================  ==========================================  ======================
:class:`SampledProposal`   ``q`` itself: d = sample(q, u) (SPEC 4.1)   one per proposal
:class:`ArgmaxProposal`    a point mass at argmax(q) (SPEC 5, greedy)  none
:class:`NoProposal`        nothing is drafted, k = 0 (SPEC 5)          none
===================  ==========================================  ======================

Every rule drafts k = min(width, limit - L) proposals (:func:`room`), all before any
verification draw, and stops right after a drafted EOS (SPEC section 6). A rule that drafts
several chains (SPEC section 11, mode ``tree``) is one more rule here, returning a drafted
block that holds its chains (a subclass of :class:`Drafted`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

from .distributions import Dist, argmax, sample_next
from .draws import MAX_POSITION, Draws, Uniform
from .errors import InvalidInput

PAST_THE_END = "the block would move the position past 2^53-1: start a new session"
"""The message of a block whose draws would pass 2^53-1 (path ``position``)."""


def point_mass(size: int, token: int) -> Dist:
    """The distribution of a deterministic choice: all mass on ``token`` (of ``size`` tokens)."""
    return Dist(tuple(1 if i == token else 0 for i in range(size)), 1)


def room(config, length: int) -> int:
    """How many proposals a block may draft after ``length`` committed tokens:
    ``k = min(width, limit - L)`` (SPEC section 4.1: the limit clips k)."""
    return min(config.width, config.limit - length)


class Drafted:
    """A drafted block (SPEC section 4.1): the proposal ``tokens`` (indices), the draft row
    each was drawn from (``rows``, the q_i of the ratio and the residual), the record of each
    step (``steps``: ``{"index", "context", "q", "draw", "token", "drafted"}``) and ``last``,
    the last committed token (``None`` at the empty prefix), which is the context of the first
    proposal's target row. A verifier reads the proposals with :meth:`each`."""

    __slots__ = ("last", "tokens", "rows", "steps")

    def __init__(self, last: Optional[int]) -> None:
        self.last = last
        self.tokens: list[int] = []
        self.rows: list[Dist] = []
        self.steps: list[dict] = []

    def each(self) -> Iterator[tuple[int, Dist]]:
        """``(token, q)`` for each proposal in order."""
        return zip(self.tokens, self.rows)

    def after(self, i: int) -> "Drafted":
        """The proposals after proposal ``i`` (0-based), as a drafted block of their own
        whose first context is proposal ``i``."""
        rest = Drafted(self.tokens[i])
        rest.tokens, rest.rows, rest.steps = self.tokens[i + 1:], self.rows[i + 1:], self.steps[i + 1:]
        return rest

    def record(self, vocab: Sequence[str]) -> dict:
        """The block's ``proposal`` as traces record it: ``{"tokens": [label, ...], "steps"}``."""
        return {"tokens": [vocab[t] for t in self.tokens], "steps": self.steps}


@dataclass(frozen=True)
class SampledProposal:
    """SPEC section 4.1: k proposals, ``d_i = sample(q_i, draw(n))`` from the draft row
    ``q_i`` of its context (the committed prefix plus the earlier proposals), one draw each,
    all drawn before any verification draw; drafting stops right after a drafted EOS
    (SPEC section 6). Law of one proposal given its context: ``q_i`` itself."""

    name: str = "sampled"
    uses_draw: bool = True
    drafts: bool = True

    room = staticmethod(room)
    """``room(config, length)``: ``min(width, limit - L)`` (:func:`room`, bound without a wrapper)."""

    def start(self, last: Optional[int]) -> Optional[int]:
        """The token the first draft row is conditioned on: the last committed token (the next
        block drafts from the committed output, SPEC 4.3)."""
        return last

    def propose(self, q: Dist, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """SPEC 4.1: the proposal ``sample(q, d)`` with the next draw: ``(token, draw)``."""
        return sample_next(q, draws)

    def distribution(self, q: Dist) -> Dist:
        """Exact law of a proposal drafted from ``q``: ``q`` itself."""
        return q

    def draft(self, state, rows, stream: Draws, tokens: Optional[Sequence[int]] = None) -> Drafted:
        """SPEC section 4.1: the drafted block of ``state`` (a :class:`~.state.State`) from
        ``rows.draft`` and the draws of ``stream``, all drafted before any verification draw:
        :meth:`room` proposals (``tokens``: the caller's proposal
        instead, recorded beside the rule's own choice from the same draw). Raises
        :class:`InvalidInput` (path ``position``) when the draws would pass 2^53-1."""
        cfg, committed = state.config, state.committed
        count = self.room(cfg, len(committed)) if tokens is None else len(tokens)
        if self.uses_draw and stream.position + count > MAX_POSITION:
            raise InvalidInput.at(("position",), PAST_THE_END)
        drafted = Drafted(committed[-1] if committed else None)
        self.extend(drafted, cfg, rows, stream, self.start(drafted.last), count, tokens)
        return drafted

    def extend(self, drafted: Drafted, config, rows, stream: Draws, context: Optional[int], count: int,
               tokens: Optional[Sequence[int]]) -> Optional[int]:
        """Draft up to ``count`` more proposals onto ``drafted``, the first after ``context``
        (``tokens``: the caller's proposal, read from the first not yet drafted), stopping right
        after a drafted EOS (SPEC section 6). Returns the last token drafted (``context`` when
        none)."""
        vocab, eos, draft_row, propose = config.vocab, config.eos, rows.draft, self.propose
        proposal, qs, steps = drafted.tokens, drafted.rows, drafted.steps
        for _ in range(count):
            q = draft_row(context)
            own, d = propose(q, stream)
            token = own if tokens is None else tokens[len(proposal)]
            proposal.append(token)
            qs.append(q)
            steps.append({
                "index": len(proposal),
                "context": None if context is None else vocab[context],
                "q": q.to_json(),
                "draw": None if d is None else d.to_json(),
                "token": vocab[token],
                "drafted": token == own,
            })
            context = token
            if token == eos:
                break
        return context


@dataclass(frozen=True)
class ArgmaxProposal(SampledProposal):
    """SPEC section 5 (greedy): the draft proposes its argmax, ties to the earliest token in
    vocabulary order; no draw. Law: a point mass at ``argmax(q)``."""

    name: str = "argmax"
    uses_draw: bool = False

    def propose(self, q: Dist, draws: Draws) -> tuple[int, Optional[Uniform]]:
        """``(argmax(q), None)``: no draw."""
        return self.choose(q), None

    def choose(self, q: Dist) -> int:
        """``argmax(q)`` (ties to the earliest token)."""
        return argmax(q)

    def distribution(self, q: Dist) -> Dist:
        """A point mass at ``argmax(q)``."""
        return point_mass(len(q.weights), self.choose(q))


@dataclass(frozen=True)
class NoProposal(SampledProposal):
    """SPEC section 5 (autoregressive): nothing is drafted (k = 0); the draft and the width are
    unused, and the verifier's bonus is the block's one token."""

    name: str = "none"
    uses_draw: bool = False
    drafts: bool = False

    def room(self, config, length: int) -> int:
        """0: the block has no proposals."""
        return 0
