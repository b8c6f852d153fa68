"""Shape ``"beam"`` (SPEC 12.1.3): the deterministic top-D tree of EAGLE-2 and SGLang; no draws.

Depth 1 holds the D most probable tokens of q at the committed prefix (ties in vocabulary
order). Each later depth: every node of the previous depth, in order, offers its own D most
probable tokens; a path's score is the product of its draft probabilities; the D best offers
are kept (ties: the earlier parent, then vocabulary order) and become that depth's nodes,
children of their parents in that order. A token of probability 0 is never offered; an EOS node
keeps its place among the D and offers nothing. q is the row the draft draws from (q' of SPEC
9, or the raw q with ``"draft": "raw"``). A beam node has no proposal law (it is not drawn);
its ``score`` is recorded. ``draft_steps`` counts the nodes (SPEC 12.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence

from ..draws import Draws
from ..errors import InvalidInput
from .nodes import DraftedNodes, DraftNode, TreeShape


def top(row, count: int) -> list[int]:
    """The ``count`` most probable tokens of ``row`` with positive probability, ties in vocabulary
    order."""
    ranked = sorted((i for i, w in enumerate(row.weights) if w), key=lambda i: -row.weights[i])
    return ranked[:count]


@dataclass(frozen=True)
class BeamShape(TreeShape):
    """SPEC 12.1.3: the top-D beam tree (a :class:`~.nodes.Shape`)."""

    name: str = "beam"

    def draft(self, state, rows, stream: Draws, tokens: Optional[Sequence[Any]] = None) -> DraftedNodes:
        """The beam tree of ``state``'s next block (no draws). Raises
        :class:`~..errors.InvalidInput` (path ``chains``) for a caller's proposal: this shape
        drafts its own."""
        if tokens is not None:
            raise InvalidInput.at(("chains",), 'shape "beam" drafts its own tree: use /v1/step (SPEC section 12)')
        cfg, committed = state.config, state.committed
        beam, tree = cfg.drafts, DraftedNodes(committed[-1] if committed else None)
        level: list[DraftNode] = [tree.root]
        for _ in range(self.room(cfg, len(committed))):
            offers = []
            for rank, node in enumerate(level):
                if node.token == cfg.eos and node is not tree.root:
                    continue
                q = rows.draft(tree.last if node is tree.root else node.token)
                score = Fraction(1) if node.score is None else node.score
                offers += [(score * q.probability(y), rank, y, node, q) for y in top(q, beam)]
            offers.sort(key=self.rank)
            kept = offers[:beam]
            level = [tree.add(node, y, None, score) for score, _, y, node, _ in kept]
            tree.tokens += [y for _, _, y, _, _ in kept]
            tree.rows += [q for _, _, _, _, q in kept]
            if not level:
                break
        return tree

    @staticmethod
    def rank(offer: tuple) -> tuple:
        """The order of the offers ``(score, parent's rank, token, parent, q)`` (SPEC 12.1.3): the
        higher score first, ties to the earlier parent, then vocabulary order."""
        return (-offer[0], offer[1], offer[2])
