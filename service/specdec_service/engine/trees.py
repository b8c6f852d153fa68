"""The decoders of mode ``tree`` under the setting ``tree`` (SPEC section 12): a shape, a tree
verifier, the config's rows.

=============  ===========  ==============================================================
shape          verify       decoder
=============  ===========  ==============================================================
chains         residual     :data:`~.decoders.TREE` (SPEC 11 exactly: the chains' candidates)
chains         target_only  :class:`~.shapes.ChainsShape` walked by :class:`~.verifiers.tree_target_only.TargetOnlyNode`
distinct       residual     :class:`~.shapes.DistinctShape` walked by :class:`~.verifiers.tree_residual.ResidualNode`
distinct       target_only  :class:`~.shapes.DistinctShape` walked by :class:`~.verifiers.tree_target_only.TargetOnlyNode`
beam           target_only  :class:`~.shapes.BeamShape` walked by :class:`~.verifiers.tree_target_only.TargetOnlyNode`
=============  ===========  ==============================================================

(``beam`` with ``residual`` is refused when the config is read: a deterministic tree has no
draft law.) :func:`decoder_of` gives the decoder every block of a config plays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .rows import ConfigRows, RowReader
from .decoders import MODE_RULES, Decoder
from .shapes import BeamShape, ChainsShape, DistinctShape, Shape
from .verifiers.tree_residual import ResidualNode
from .verifiers.tree_target_only import TargetOnlyNode
from .verifiers.walk import TreeWalk


@dataclass(frozen=True)
class TreeDecoder:
    """What :func:`.block_loop.play` applies for a tree of SPEC 12 other than SPEC 11's: ``proposal``
    (a :class:`~.shapes.Shape`) drafts the tree, ``verifier`` (a :class:`~.verifiers.walk.TreeWalk`
    over a node verifier) walks it, ``rows`` reads the rows (SPEC 9 as everywhere)."""

    mode: str
    proposal: Shape
    verifier: TreeWalk
    rows: RowReader = ConfigRows()


AnyDecoder = Union[Decoder, TreeDecoder]
"""A decoder of any mode and tree setting."""

TREE_DECODERS = {
    ("chains", "target_only"): TreeDecoder("tree", ChainsShape(), TreeWalk(rule=TargetOnlyNode())),
    ("distinct", "residual"): TreeDecoder("tree", DistinctShape(), TreeWalk(rule=ResidualNode())),
    ("distinct", "target_only"): TreeDecoder("tree", DistinctShape(), TreeWalk(rule=TargetOnlyNode())),
    ("beam", "target_only"): TreeDecoder("tree", BeamShape(), TreeWalk(rule=TargetOnlyNode())),
}
"""The decoder of each (shape, verify) pair of SPEC 12 but SPEC 11's (chains, residual)."""


def decoder_of(config) -> AnyDecoder:
    """The decoder of a config's blocks: its mode's (:data:`~.decoders.MODE_RULES`), or in mode tree
    with a ``tree`` other than chains + residual, that pair's (:data:`TREE_DECODERS`)."""
    tree = config.tree
    if config.mode != "tree" or tree is None or tree.is_section_11:
        return MODE_RULES[config.mode]
    return TREE_DECODERS[(tree.shape, tree.verify)]
