"""Shapes: how a draft tree is drafted (SPEC section 12.1, mode ``tree``, setting ``tree``).

A shape turns the committed prefix, the draft rows and the draw stream into a
:class:`~.nodes.DraftedNodes` block: the tree's nodes (each with its parent, depth, token and
proposal law where one exists), which a tree verifier then walks (:mod:`..verifiers.walk`).
Every shape satisfies the :class:`~.nodes.Shape` protocol.

==========================  ====================  ===============================================
shape                       module                SPEC
==========================  ====================  ===============================================
:class:`ChainsShape`        :mod:`.chains`        12.1.1: D chains (11.1) merged into a trie
:class:`DistinctShape`      :mod:`.distinct`      12.1.2: siblings drawn without replacement
:class:`BeamShape`          :mod:`.beam`          12.1.3: the deterministic top-D tree, no draws
==========================  ====================  ===============================================

Shape ``"chains"`` with verifier ``"residual"`` is SPEC section 11 exactly and is drafted by
:class:`~..chains_proposal.ChainsProposal` (its candidates keep their repeats); this package's
:class:`ChainsShape` is the trie the ``"target_only"`` verifier walks.
"""

from .beam import BeamShape
from .chains import ChainsShape
from .distinct import DistinctShape
from .nodes import DraftedNodes, DraftNode, Shape

__all__ = ["BeamShape", "ChainsShape", "DistinctShape", "DraftNode", "DraftedNodes", "Shape"]
