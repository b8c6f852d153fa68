"""The catalogued mistakes of mode tree (SPEC sections 11 and 12): the tree rules with one thing changed.

Each class subclasses the correct rule (:class:`~specdec_service.engine.chains_proposal.ChainsProposal`
or :class:`~specdec_service.engine.verifiers.tree.TreeVerifier`) and overrides the one method
it gets wrong; the engine's one block (``engine.block_loop.play``) decodes with it. The faults are
the ones multi-draft implementations are known to make (SpecInfer's recursive residual, the
node-by-node verification of vLLM and SGLang, EAGLE #183 on whether tree verification is exact).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Optional, Sequence, cast

from ..engine.chains_proposal import ChainsProposal
from ..engine.distributions import Dist
from ..engine.draws import Draws
from ..engine.decoders import Decoder
from ..engine.shapes.nodes import DraftNode
from ..engine.trees import TREE_DECODERS, TreeDecoder
from ..engine.verifiers.tree import TreeVerifier
from ..engine.verifiers.tree_residual import ResidualNode
from ..engine.verifiers.tree_target_only import TargetOnlyNode
from ..engine.verifiers.walk import TreeWalk


@dataclass(frozen=True)
class ResidualNotUpdated(TreeVerifier):
    """SPEC 11.2 broken: r is not updated after a rejection, so every candidate of a depth is
    tested against p (and the correction is drawn from p): the sibling's rejection is forgotten
    and the committed token is no longer distributed as p."""

    name: str = "residual-not-updated"

    def after_rejection(self, r: Dist, p: Dist, q: Dist) -> Dist:
        """r unchanged (p at every candidate)."""
        return r


@dataclass(frozen=True)
class DraftRowTest(TreeVerifier):
    """SPEC 11.2 broken: the candidate is tested against the draft's row q instead of r
    (accept iff u * q(y) < q(y)): every candidate passes."""

    name: str = "draft-row-test"

    def test_row(self, r: Dist, p: Dist, q: Dist) -> Dist:
        """q."""
        return q


@dataclass(frozen=True)
class DisagreeingChainsContinue(TreeVerifier):
    """SPEC 11.2 broken: after an acceptance every candidate's chain goes on to the next depth,
    also the chains whose token at this depth is not the accepted one (their later tokens were
    drafted after another token)."""

    name: str = "disagreeing-chains-continue"

    def going_on(self, chains: Sequence, tested: Sequence[int], depth: int, token: int) -> list[int]:
        """Every candidate's chain."""
        return list(tested)


@dataclass(frozen=True)
class ShortestChainDepth(TreeVerifier):
    """SPEC 11.4 broken: the tree's depth is taken as its shortest chain's length, so the bonus
    is drawn as soon as any chain has ended (a chain that drafted an EOS early) while an alive
    chain still has a token to test."""

    name: str = "shortest-chain-depth"

    def candidates(self, chains: Sequence, alive: Sequence[int], depth: int) -> list[int]:
        """None once ``depth`` reaches the shortest chain's length."""
        if depth >= min(len(chain.tokens) for chain in chains):
            return []
        return super().candidates(chains, alive, depth)


@dataclass(frozen=True)
class SharedDraws(ChainsProposal):
    """SPEC 11.1 broken: every chain is drafted from the same draws (the block's first ones),
    not chain 1's first and then chain 2's: the chains are copies, not independent drafts."""

    name: str = "shared-draws"

    def chain_stream(self, stream: Draws, j: int, start: int) -> Draws:
        """The block's stream moved back to its first position for every chain."""
        stream.position = start
        return stream


# ---------------------------------------------------------------- SPEC 12's node verifiers


@dataclass(frozen=True)
class SiblingTestedAgainstQ(ResidualNode):
    """SPEC 12.3 broken: a sibling drawn without replacement (law s_j) is tested against, and
    subtracted from r as, the fixed draft row q at its context (the first sibling's law s_1):
    SpecInfer's residual applied to Jeon et al.'s draws."""

    name: str = "residual"

    def tested_law(self, node: DraftNode, child: DraftNode) -> Optional[Dist]:
        """q: the law of the node's first child."""
        return node.children[0].law


@dataclass(frozen=True)
class SiblingResidualKept(ResidualNode):
    """SPEC 12.3 broken: r is not updated after a rejected sibling: every child is tested
    against p and the correction drawn from p."""

    name: str = "residual"

    def after_rejection(self, r: Dist, s: Dist) -> Dist:
        """r unchanged."""
        return r


@dataclass(frozen=True)
class RepeatedChildTested(TargetOnlyNode):
    """SPEC 12.4 broken (fms-extras#12): a trie child drafted by c chains is tested c times in
    a row, so its p is counted c times in acc_j."""

    name: str = "target_only"

    def tested(self, node: DraftNode) -> list[DraftNode]:
        """Each child as many times as chains drafted it."""
        return [child for child in node.children for _ in range(child.copies)]


@dataclass(frozen=True)
class InclusiveCoinTest(TargetOnlyNode):
    """SPEC 12.4 broken (sglang#35771): ``u * threshold_acc <= acc_j`` without p(y_j) > 0, so
    at u = 0 a child of probability 0 is accepted (a token the target never gives)."""

    name: str = "target_only"

    def accepted_by(self, u_acc: Fraction, acc: Fraction, py: Fraction, single: Fraction) -> Optional[str]:
        """``"acc"`` iff u * threshold_acc <= acc_j, else ``"single"`` iff p(y_j) >= threshold_single."""
        return "acc" if u_acc <= acc else "single" if py >= single else None


def tree_decoder(shape: str, verify: str, rule: Any) -> Decoder:
    """The correct decoder of ``(shape, verify)`` (SPEC 12) with its node verifier replaced by
    ``rule`` (a :class:`~..engine.trees.TreeDecoder`, which the engine's block plays as it plays
    a :class:`~..engine.decoders.Decoder`: typed as one for the catalogue)."""
    return cast(Decoder, replace(TREE_DECODERS[(shape, verify)], verifier=TreeWalk(rule=rule)))


def rules_apply(config, rules) -> bool:
    """Whether a mode-tree decoder ``rules`` can decode ``config``'s tree: a decoder of SPEC 11
    (chains walked by the residual) only the default tree, a :class:`~..engine.trees.TreeDecoder`
    only the shape and verifier it was made for (a mistake of one verifier is no mistake of
    another: its rule is undefined there)."""
    tree = config.tree
    if not isinstance(rules, TreeDecoder):
        return tree is None or tree.is_section_11
    rule = rules.verifier.rule
    return tree is not None and (rules.proposal.name, getattr(rule, "name", None)) == (tree.shape, tree.verify)
