"""The proposal rule of several drafts: D independent chains (SPEC section 11.1, mode ``tree``).

SPEC 11.1 (Miao et al. 2024, SpecInfer, multi-step speculative sampling): the block drafts D
chains (setting ``drafts``), each exactly as SPEC 4.1 drafts one from the committed prefix:
k = min(width, limit - L) proposals, ``d = sample(q, draw(n))``, one draw each, a chain stops
right after a drafted EOS. Chain 1's draws come first, then chain 2's, and so on; every draft
draw is taken before any verification draw. The chains form a tree: chains that agree on
their first i tokens share a path.

**Law.** Given the committed prefix, the D chains are independent, each with the law of a
SPEC 4.1 chain (its i-th token ~ q after its first i - 1 tokens): the D candidates of one
depth, given the path accepted so far, are independent draws from the same q
(:meth:`ChainsProposal.distribution` states the law of one candidate: ``q`` itself). With
D = 1 the rule is :class:`~.proposals.SampledProposal` draw for draw.

The drafted block (:class:`DraftedTree`) holds the chains; its ``tokens``, ``rows`` and
``steps`` are the chains' one after another (chain 1's first), as the block's ``proposal``
records them, with ``chains`` (the tokens of each chain) beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from .draws import MAX_POSITION, Draws
from .errors import InvalidInput
from .proposals import PAST_THE_END, Drafted, SampledProposal


class DraftedTree(Drafted):
    """A block drafted as D chains (SPEC 11.1): ``chains`` (each a :class:`Drafted` whose
    ``last`` is the block's), and the chains' ``tokens``, ``rows`` and ``steps`` one after
    another (each step record names its ``chain``, 1-based)."""

    __slots__ = ("chains",)

    def __init__(self, last: Optional[int]) -> None:
        super().__init__(last)
        self.chains: list[Drafted] = []

    def add(self, chain: Drafted) -> None:
        """Append the next chain (its step records gain ``"chain": j``, 1-based, first)."""
        self.chains.append(chain)
        j = len(self.chains)
        self.tokens += chain.tokens
        self.rows += chain.rows
        self.steps += [{"chain": j, **step} for step in chain.steps]

    def record(self, vocab: Sequence[str]) -> dict:
        """The block's ``proposal``: ``{"tokens", "steps", "chains"}``: every chain's tokens one
        after another, every draft step (with its ``chain``), and each chain's tokens."""
        return {"tokens": [vocab[t] for t in self.tokens], "steps": self.steps,
                "chains": [[vocab[t] for t in chain.tokens] for chain in self.chains]}


@dataclass(frozen=True)
class ChainsProposal(SampledProposal):
    """SPEC 11.1: D = ``config.drafts`` chains, each drafted as SPEC 4.1 drafts one (from the
    committed prefix, k = min(width, limit - L) proposals, a chain stops after a drafted EOS),
    chain 1's draws first. Law of one candidate given its context: ``q`` itself."""

    name: str = "chains"

    def chain_stream(self, stream: Draws, j: int, start: int) -> Draws:
        """The stream chain ``j`` (1-based) draws from: the block's own, which moves on (SPEC
        11.1: chain j + 1's draws follow chain j's). ``start`` is the block's first position."""
        return stream

    def draft(self, state, rows, stream: Draws, tokens: Optional[Sequence[Any]] = None) -> DraftedTree:
        """SPEC 11.1: the D chains of ``state``'s next block from ``rows.draft`` and ``stream``
        (``tokens``: the caller's chains instead, each recorded beside the rule's own choice
        from the same draws). Raises :class:`InvalidInput` (path ``position``) when the draws
        would pass 2^53-1."""
        cfg, committed = state.config, state.committed
        room = self.room(cfg, len(committed))
        chains: Sequence[Optional[Sequence[int]]] = [None] * cfg.drafts if tokens is None else tokens
        total = sum(room if own is None else len(own) for own in chains)
        if stream.position + total > MAX_POSITION:
            raise InvalidInput.at(("position",), PAST_THE_END)
        last = committed[-1] if committed else None
        tree = DraftedTree(last)
        start = stream.position
        for j, own in enumerate(chains, 1):
            chain = Drafted(last)
            self.extend(chain, cfg, rows, self.chain_stream(stream, j, start), self.start(last),
                        room if own is None else len(own), own)
            tree.add(chain)
        return tree
