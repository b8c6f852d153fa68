"""Tree verifier ``"residual"`` at one node (SPEC 12.3; Jeon et al. 2024, recursive rejection
sampling; with shape chains, SpecInfer's multi-step speculative sampling of SPEC 11.2).

At a node, with p the target row at its context: r = p. For each child y in order: u =
draw(n), n += 1; accept iff ``u * s(y) < r(y)`` (exactly), where s is y's proposal law (the
draft row q for chains, s_j for distinct siblings). On a rejection: r = max(r - s, 0)
normalised, and the next child is tested. If every child is rejected the correction is drawn
from the last r (SPEC 12.2).

**Law.** With distinct siblings, y_j given the earlier rejections is drawn from s_j, and the
residual after testing it is the target's law given that rejection; so the token committed at
each node is exactly p and the output is the target's. Testing a sibling drawn without
replacement against the fixed q instead of s_j biases the output.

Each test's record: ``{"depth", "node", "parent", "context", "token", "p", "law", "r",
"r_exact", "s_token", "r_token", "u_s", "draw", "accepted", "residual", "residual_exact"}``:
the compared quantities ``u_s`` = u * s(y) against ``r_token`` = r(y), and the residual after a
rejection (``null`` on acceptance).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..distributions import Dist, accepts, residual
from ..draws import Draws
from ..shapes.nodes import DraftNode
from .tree import exact_strings
from .walk import NodeOutcome



@dataclass(frozen=True)
class ResidualNode:
    """SPEC 12.3: a node's children tested in order against the recursive residual (a
    :class:`~.walk.NodeVerifier`)."""

    name: str = "residual"

    def choose(self, node: DraftNode, p: Dist, stream: Draws, config, records: list) -> NodeOutcome:
        """Test ``node``'s children (each with its proposal law) against r, starting at ``p``;
        the accepted child, or the last r for the correction."""
        vocab, r = config.vocab, p
        for child in node.children:
            y, s = child.token, self.tested_law(node, child)
            assert y is not None and s is not None  # a tree tested by residuals holds drawn nodes
            d = stream.take()
            ok = accepts(d, r, s, y)
            after = None if ok else self.after_rejection(r, s)
            records.append({
                "depth": child.depth, "node": child.id, "parent": node.id,
                "context": None if child.context is None else vocab[child.context], "token": vocab[y],
                "p": p.to_json(), "law": s.to_json(), "r": r.to_json(), "r_exact": exact_strings(r),
                "s_token": s.floats[y], "r_token": r.floats[y],
                "u_s": d.scaled(s.probability(y)),
                "draw": d.to_json(), "accepted": ok,
                "residual": None if after is None else after.to_json(),
                "residual_exact": None if after is None else exact_strings(after),
            })
            if ok:
                return NodeOutcome(child, None)
            assert after is not None
            r = after
        return NodeOutcome(None, r)

    def tested_law(self, node: DraftNode, child: DraftNode) -> Optional[Dist]:
        """The law ``child`` is tested against and subtracted from r: its proposal law s."""
        return child.law

    def after_rejection(self, r: Dist, s: Dist) -> Dist:
        """r after a rejected child tested against ``s``: max(r - s, 0) normalised."""
        return residual(r, s)
