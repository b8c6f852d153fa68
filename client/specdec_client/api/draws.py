"""``GET /v1/draws``: the SplitMix64 draw stream (SPEC section 2)."""

from __future__ import annotations

from ..types import Draw
from . import ApiGroup


class DrawsApi(ApiGroup):
    """Slices of a seed's draw stream."""

    def draws(self, seed: int, position: int = 0, count: int = 1) -> list[Draw]:
        """``GET /v1/draws``: ``count`` (1-4096) draws of ``seed`` from
        ``position`` (SPEC section 2), each ``Draw(position, u, hex)``."""
        params = {"seed": seed, "position": position, "count": count}
        return self.transport.call("GET", "/v1/draws", lambda b: [Draw.from_dict(d) for d in b["draws"]],
                                   params=params)
