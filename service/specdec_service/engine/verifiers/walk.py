"""Walking a draft tree (SPEC section 12.2) under a tree verifier (SPEC 12.3, 12.4).

Start at the root with the context of the committed prefix. At a node with children, the
verifier (a :class:`NodeVerifier`) accepts one child or none. On acceptance the child is
committed and becomes the node (an accepted EOS ends the block and the session). If none is
accepted: ``c = sample(r, draw(n))``, n += 1, commit c; the block ends (r as the verifier
defines it). At a node without children: a bonus exactly as in SPEC 4.4 (none at the limit, none
after an EOS). Counters (SPEC 12.5): ``draft_steps`` every drafted token, ``accepted`` the
committed drafted tokens, ``rejected`` the failed tests (children passed over), ``discarded``
the rest. :class:`TreeWalk` is the verifier of a :class:`~..decoders.Decoder`-like tree decoder
(:mod:`..trees`); its ``commits`` and ``tally`` read a block record as SPEC 11's do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Optional, Protocol

from ..distributions import Dist
from ..draws import Draws
from ..proposals import Drafted
from ..shapes.nodes import DraftedNodes, DraftNode
from .tokenwise import SampledBonus, Verdict
from .tree import TreeVerifier, conclude, correction_record

if TYPE_CHECKING:
    from ..state import Config


class NodeOutcome(NamedTuple):
    """What a verifier decides at one node: the accepted ``child`` (``None``: none accepted) and
    ``r``, the distribution the correction is drawn from when none is (``None`` otherwise)."""

    child: Optional[DraftNode]
    r: Optional[Dist]


class NodeVerifier(Protocol):
    """How a node's children are tested (SPEC 12.3, 12.4)."""

    @property
    def name(self) -> str:
        """The verifier's name in the setting ``tree.verify``."""

    def choose(self, node: DraftNode, p: Dist, stream: Draws, config: "Config", records: list) -> NodeOutcome:
        """Test ``node``'s children in order against the target row ``p`` at its context,
        taking the draws the rule orders from ``stream`` and appending one record per child
        tested to ``records``; the accepted child, or the correction's distribution."""


@dataclass(frozen=True)
class TreeWalk(TreeVerifier):
    """SPEC 12.2: walk a :class:`~..shapes.nodes.DraftedNodes` tree from the root, testing each
    node's children with ``rule``; correct when none is accepted, or add the bonus (``bonus``,
    SPEC 4.4). ``commits`` and ``tally`` are SPEC 11's (:class:`~.tree.TreeVerifier`)."""

    bonus: SampledBonus = SampledBonus()
    name: str = "tree-walk"
    rule: Optional[NodeVerifier] = None

    def verify(self, state, rows, drafted: Drafted, stream: Draws) -> Verdict:
        """SPEC 12.2 on ``drafted`` (a :class:`~..shapes.nodes.DraftedNodes`) after ``state``: the
        test records in order, the correction or the bonus, the discarded drafted tokens. Raises
        ``TypeError`` for a drafted block that is not a tree."""
        if not isinstance(drafted, DraftedNodes) or self.rule is None:
            raise TypeError("a tree walk verifies a drafted tree (shapes.DraftedNodes) with a node verifier")
        cfg = state.config
        records: list[dict] = []
        accepted: list[int] = []
        node, context, correction = drafted.root, drafted.last, None
        while node.children:
            outcome = self.rule.choose(node, rows.target(context), stream, cfg, records)
            if outcome.child is None:
                assert outcome.r is not None  # a verifier that accepts nothing names its correction row
                correction = correction_record(cfg.vocab, len(accepted), context, outcome.r, stream)
                break
            node = outcome.child
            token = node.token
            assert token is not None  # every node below the root holds a token
            accepted.append(token)
            context = token
            if token == cfg.eos:
                break
        return conclude(self.bonus, state, rows, stream, (accepted, context, correction, records),
                        discarded(drafted, records))


def discarded(drafted: DraftedNodes, records: list) -> list[int]:
    """SPEC 12.5: the drafted tokens neither accepted nor rejected, in node order: every copy of
    an untested node, and the copies (repeats of a chain token) of a tested one past the one
    tested."""
    tested = {v["node"] for v in records}
    return [node.token for node in drafted.nodes if node.token is not None
            for _ in range(node.copies - (node.id in tested))]
