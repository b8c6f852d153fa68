"""Tree verifier ``"target_only"`` at one node (SPEC 12.4; SGLang's
``tree_speculative_sampling_target_only``, which never reads the draft's probabilities).

At a node with children y_1..y_m, p the target row at its context: draw u = draw(n), n += 1
(one draw per node, whatever m is). With acc_j = p(y_1) + ... + p(y_j), accept the first y_j
with p(y_j) > 0 and (``u * threshold_acc < acc_j`` or ``p(y_j) >= threshold_single``); the
children before it are rejected. If none is accepted, r = p with every child's token set to 0,
normalised, and the correction is drawn from it (SPEC 12.2).

**Law.** With both thresholds 1 the token committed at each node is exactly a draw from p,
whatever tree was offered (the children's tokens are distinct: u falls in child j's slice of
p's cumulative mass with probability p(y_j), else in the rest, which r spreads as p), so the
output is exactly the target's; a node accepts with probability p(children). Below 1 the
thresholds are SGLang's lossy ``--speculative-accept-threshold-single/-acc``.

Each child tested is recorded: ``{"depth", "node", "parent", "context", "token", "p",
"p_token", "acc", "acc_exact", "u_acc", "threshold_acc", "threshold_single", "draw", "accepted",
"by"}``: the compared quantities ``u_acc`` = u * threshold_acc against ``acc`` = acc_j, and
``p_token`` = p(y_j) against ``threshold_single``; ``by`` says which test accepted (``"acc"``,
``"single"``, ``null`` on rejection). The records of one node share its one draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

from ..distributions import Dist, exact_string, to_float
from ..draws import Draws, Uniform
from ..shapes.nodes import DraftNode
from ..tree_settings import TreeSetting
from .walk import NodeOutcome



def outside(p: Dist, tokens) -> Dist:
    """SPEC 12.4: ``p`` with every token of ``tokens`` set to 0, normalised (the caller knows
    some mass is left: a node rejects all its children only then)."""
    drop = set(tokens)
    return Dist.of_weights(0 if i in drop else w for i, w in enumerate(p.weights))


class ScaledDraw:
    """``u * scale`` (``scale >= 0``) for the comparisons of SPEC 12.4 with an exact value ``a``:
    ``<`` and ``<=`` ask the draw (``u < a / scale``, ``u <= a / scale``), so no rule reads ``u``."""

    __slots__ = ("draw", "scale")

    def __init__(self, draw: Uniform, scale: Fraction) -> None:
        self.draw, self.scale = draw, scale

    def __lt__(self, value: Fraction) -> bool:
        """``u * scale < value``."""
        return self.draw.below(value.numerator * self.scale.denominator, value.denominator * self.scale.numerator)

    def __le__(self, value: Fraction) -> bool:
        """``u * scale <= value``."""
        return self.draw.at_most(value.numerator * self.scale.denominator, value.denominator * self.scale.numerator)


@dataclass(frozen=True)
class TargetOnlyNode:
    """SPEC 12.4: one draw a node against the target's cumulative probability of the children
    (a :class:`~.walk.NodeVerifier`); the thresholds are the config's ``tree``."""

    name: str = "target_only"

    def choose(self, node: DraftNode, p: Dist, stream: Draws, config, records: list) -> NodeOutcome:
        """Test ``node``'s children in order with one draw; the accepted child, or the
        correction's distribution p without the children."""
        setting = config.tree if config.tree is not None else TreeSetting(verify="target_only")
        single, scale = setting.threshold_single, setting.threshold_acc
        vocab, d = config.vocab, stream.take()
        u_acc = ScaledDraw(d, scale)
        acc = Fraction(0)
        for child in self.tested(node):
            y = child.token
            assert y is not None  # every node below the root holds a token
            py = p.probability(y)
            acc += py
            by = self.accepted_by(u_acc, acc, py, single)
            records.append({
                "depth": child.depth, "node": child.id, "parent": node.id,
                "context": None if child.context is None else vocab[child.context], "token": vocab[y],
                "p": p.to_json(), "p_token": p.floats[y], "acc": to_float(acc), "acc_exact": exact_string(acc),
                "u_acc": d.scaled(scale), "threshold_acc": to_float(scale), "threshold_single": to_float(single),
                "draw": d.to_json(), "accepted": by is not None, "by": by,
            })
            if by is not None:
                return NodeOutcome(child, None)
        return NodeOutcome(None, outside(p, [child.token for child in node.children]))

    def tested(self, node: DraftNode) -> list[DraftNode]:
        """The children tested, in order: each once."""
        return node.children

    def accepted_by(self, u_acc: Any, acc: Fraction, py: Fraction, single: Fraction) -> Optional[str]:
        """Which test accepts a child of probability ``py`` with ``acc`` = acc_j and ``u_acc`` =
        u * threshold_acc (SPEC 12.4): ``"acc"`` iff p(y_j) > 0 and u * threshold_acc < acc_j,
        else ``"single"`` iff p(y_j) > 0 and p(y_j) >= threshold_single, else ``None``."""
        return None if py == 0 else "acc" if u_acc < acc else "single" if py >= single else None
