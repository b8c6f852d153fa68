"""Shape ``"chains"`` for a tree verifier (SPEC 12.1.1): D chains merged into a trie.

The D chains are drafted exactly as SPEC 11.1 drafts them (:class:`~..chains_proposal.ChainsProposal`,
the same draws in the same order: chain 1's first). For ``"target_only"`` they are merged into a
trie: a node's children are the distinct tokens that follow its path in some chain, in order of
first appearance (chain 1 first); a repeated token is one child (``copies`` counts the chains
that share it). Each node's proposal law is q, the draft row at its context. ``draft_steps``
counts every chain's tokens, repeats included (SPEC 12.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..chains_proposal import ChainsProposal
from ..draws import Draws
from .nodes import DraftedNodes, DraftNode, TreeShape


@dataclass(frozen=True)
class ChainsShape(TreeShape):
    """SPEC 12.1.1: the chains of SPEC 11.1 as a trie (a :class:`~.nodes.Shape`)."""

    name: str = "chains"
    chains: ChainsProposal = ChainsProposal()

    def draft(self, state, rows, stream: Draws, tokens: Optional[Sequence[Any]] = None) -> DraftedNodes:
        """The D chains of SPEC 11.1 (``tokens``: the caller's chains, each recorded beside the
        rule's own choice from the same draws) merged into a trie. Raises
        :class:`~..errors.InvalidInput` (path ``position``) when the draws would pass 2^53-1."""
        drafted = self.chains.draft(state, rows, stream, tokens)
        tree = DraftedNodes(drafted.last)
        tree.tokens, tree.rows, tree.steps = drafted.tokens, drafted.rows, drafted.steps
        tree.chains = [chain.tokens for chain in drafted.chains]
        for chain in drafted.chains:
            node = tree.root
            for token, q in chain.each():
                node = self.child(tree, node, token, q)
        return tree

    @staticmethod
    def child(tree: DraftedNodes, node: DraftNode, token: int, q) -> DraftNode:
        """``node``'s child of ``token`` in the trie (SPEC 12.1.1): :func:`_child`."""
        return _child(tree, node, token, q)


def _child(tree: DraftedNodes, node: DraftNode, token: int, q) -> DraftNode:
    """``node``'s child of ``token``: the existing one (one more copy), else a new last child."""
    for child in node.children:
        if child.token == token:
            child.copies += 1
            return child
    return tree.add(node, token, q)
