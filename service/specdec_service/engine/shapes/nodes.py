"""The nodes of a draft tree and the interface of a shape (SPEC section 12).

A :class:`DraftNode` is one drafted token of the tree: its ``id`` (1-based, in creation order;
the root is 0), its ``parent``, ``depth`` (1-based), ``token``, ``context`` (the token its rows
are conditioned on: the parent's token, or the last committed token at depth 1) and its
proposal ``law`` (the row it was drawn from: q for chains, s_j for distinct siblings; ``None``
for a beam node, which is not drawn). A node's ``children`` are ordered: that order is the order
of their tests (SPEC 12). :class:`DraftedNodes` is the drafted block holding the tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Optional, Protocol, Sequence

from ..distributions import Dist, exact_string, to_float
from ..draws import Draws
from ..proposals import Drafted, room

if TYPE_CHECKING:
    from ..rows import Rows
    from ..state import Config, State


class DraftNode:
    """One node of a draft tree (the root: ``id`` 0, ``token`` ``None``, depth 0). ``copies``
    is how many drafted tokens it stands for (the chains that share it, SPEC 12.1.1; 1 for the
    other shapes); ``score`` a beam node's path probability (SPEC 12.1.3)."""

    __slots__ = ("id", "parent", "depth", "token", "context", "law", "children", "copies", "score")

    def __init__(self, id: int, parent: Optional["DraftNode"], token: Optional[int], context: Optional[int],
                 law: Optional[Dist] = None, score: Optional[Fraction] = None) -> None:
        self.id = id
        self.parent = parent
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.token = token
        self.context = context
        self.law = law
        self.children: list[DraftNode] = []
        self.copies = 1
        self.score = score

    def record(self, vocab: Sequence[str]) -> dict:
        """``{"node", "parent", "depth", "context", "token", "law", "law_exact"}`` (and a beam
        node's ``score``, ``score_exact``): the node as a trace records it."""
        assert self.parent is not None and self.token is not None  # the root is not recorded
        law = self.law
        out: dict[str, Any] = {
            "node": self.id, "parent": self.parent.id, "depth": self.depth,
            "context": None if self.context is None else vocab[self.context], "token": vocab[self.token],
            "law": None if law is None else law.to_json(),
            "law_exact": None if law is None else [exact_string(Fraction(w, law.total)) for w in law.weights],
        }
        if self.score is not None:
            out["score"], out["score_exact"] = to_float(self.score), exact_string(self.score)
        return out


class DraftedNodes(Drafted):
    """A block drafted as a tree (SPEC 12): ``root`` (its children are depth 1), ``nodes`` in
    creation order, and the inherited ``tokens``, ``rows`` and ``steps`` (the drafted tokens,
    their proposal laws and draft steps); ``chains`` the chains' tokens when the shape drafts
    chains (``None`` otherwise)."""

    __slots__ = ("root", "nodes", "chains")

    def __init__(self, last: Optional[int]) -> None:
        super().__init__(last)
        self.root = DraftNode(0, None, None, None)
        self.nodes: list[DraftNode] = []
        self.chains: Optional[list[list[int]]] = None

    def add(self, parent: DraftNode, token: int, law: Optional[Dist], score: Optional[Fraction] = None) -> DraftNode:
        """A new child of ``parent`` (the last of its children), conditioned on ``parent``'s token
        (the block's last committed token under the root)."""
        context = self.last if parent is self.root else parent.token
        node = DraftNode(len(self.nodes) + 1, parent, token, context, law, score)
        parent.children.append(node)
        self.nodes.append(node)
        return node

    def record(self, vocab: Sequence[str]) -> dict:
        """The block's ``proposal``: ``{"tokens", "steps", ["chains"], "nodes"}``: the drafted
        tokens (every chain's, or every node's in creation order), the draft steps, each chain's
        tokens (shape chains) and every node (:meth:`DraftNode.record`)."""
        out: dict[str, Any] = {"tokens": [vocab[t] for t in self.tokens], "steps": self.steps}
        if self.chains is not None:
            out["chains"] = [[vocab[t] for t in chain] for chain in self.chains]
        out["nodes"] = [node.record(vocab) for node in self.nodes]
        return out


@dataclass(frozen=True)
class TreeShape:
    """What the shapes share: they draft (``drafts``), to the depth k = min(width, limit - L)
    (``room``); each sets its ``name`` and ``draft`` (a :class:`Shape`)."""

    name: str = "tree"
    drafts: bool = True

    room = staticmethod(room)
    """``room(config, length)``: the tree's depth, ``min(width, limit - L)``."""


class Shape(Protocol):
    """How a draft tree is drafted (SPEC 12.1): a proposal rule of mode ``tree`` whose drafted
    block is a :class:`DraftedNodes`."""

    @property
    def name(self) -> str:
        """The shape's name in the setting ``tree.shape``."""

    @property
    def drafts(self) -> bool:
        """Whether the rule drafts (always: a tree has proposals)."""

    def room(self, config: "Config", length: int) -> int:
        """The tree's depth k = min(width, limit - L) after ``length`` committed tokens."""

    def draft(self, state: "State", rows: "Rows", stream: Draws, tokens: Optional[Sequence[Any]] = None) -> DraftedNodes:
        """The tree of ``state``'s next block from ``rows.draft`` and ``stream``; ``tokens``: a
        caller's chains (shape chains only). Raises :class:`~..errors.InvalidInput` when the
        draws would pass 2^53-1 or the shape takes no caller's proposal."""
