"""Shape ``"distinct"`` (SPEC 12.1.2): siblings drawn without replacement, in level order.

For depth i = 1..k, for every node of depth i - 1 in creation order (the root first; a drafted
EOS gets no children): s_1 = the draft row q at the node's context; for j = 1..b_i while s_j
has mass: ``y_j = sample(s_j, draw(n))``, n += 1, and s_(j+1) = s_j with y_j set to 0,
normalised. Siblings are distinct; y_j's **proposal law** is s_j, the row the residual verifier
tests it against (SPEC 12.3, Jeon et al. 2024: recursive rejection sampling). b_i is the
setting ``tree.branching`` (default [D, 1, 1, ...]). ``draft_steps`` counts the nodes (SPEC
12.5). With every b_i = 1 this is SPEC 4.1's chain, draw for draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..distributions import Dist, sample
from ..draws import MAX_POSITION, Draws
from ..errors import InvalidInput
from ..proposals import PAST_THE_END
from ..tree_settings import TreeSetting, distinct_nodes
from .nodes import DraftedNodes, DraftNode, TreeShape


def without(row: Dist, token: int) -> Optional[Dist]:
    """``row`` with ``token`` set to 0, normalised; ``None`` when no mass is left."""
    weights = tuple(0 if i == token else w for i, w in enumerate(row.weights))
    return Dist.of_weights(weights) if any(weights) else None


@dataclass(frozen=True)
class DistinctShape(TreeShape):
    """SPEC 12.1.2: the distinct-siblings tree (a :class:`~.nodes.Shape`)."""

    name: str = "distinct"

    def draft(self, state, rows, stream: Draws, tokens: Optional[Sequence[Any]] = None) -> DraftedNodes:
        """The tree of ``state``'s next block, level by level. Raises
        :class:`~..errors.InvalidInput`: path ``chains`` for a caller's proposal (this shape
        drafts its own), ``position`` when the draws could pass 2^53-1."""
        if tokens is not None:
            raise InvalidInput.at(("chains",), 'shape "distinct" drafts its own tree: use /v1/step (SPEC section 12)')
        cfg, committed = state.config, state.committed
        setting = cfg.tree if cfg.tree is not None else TreeSetting()
        depth = self.room(cfg, len(committed))
        branching = tuple(setting.branching_at(i, cfg.drafts) for i in range(1, depth + 1))
        if stream.position + distinct_nodes(branching, depth) > MAX_POSITION:
            raise InvalidInput.at(("position",), PAST_THE_END)
        tree = DraftedNodes(committed[-1] if committed else None)
        level = [tree.root]
        for i in range(depth):
            level = [child for node in level if node.token != cfg.eos or node is tree.root
                     for child in self._siblings(tree, node, rows, stream, branching[i], cfg.vocab)]
        return tree

    @staticmethod
    def _siblings(tree: DraftedNodes, node: DraftNode, rows, stream: Draws, count: int, vocab) -> list[DraftNode]:
        """Up to ``count`` children of ``node`` drawn without replacement (SPEC 12.1.2)."""
        context = tree.last if node is tree.root else node.token
        law: Optional[Dist] = rows.draft(context)
        children: list[DraftNode] = []
        while law is not None and len(children) < count:
            d = stream.take()
            y = sample(law, d)
            child = tree.add(node, y, law)
            tree.tokens.append(y)
            tree.rows.append(law)
            tree.steps.append({"node": child.id, "parent": node.id, "depth": child.depth,
                               "context": None if context is None else vocab[context], "law": law.to_json(),
                               "draw": d.to_json(), "token": vocab[y]})
            children.append(child)
            law = without(law, y)
        return children
