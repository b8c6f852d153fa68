"""``GET /health`` and ``GET /v1/models``."""

from __future__ import annotations

from ..types import Health, ModelInfo
from . import ApiGroup


class MetaApi(ApiGroup):
    """The service's liveness and its built-in models."""

    def health(self) -> Health:
        """``GET /health``: ``Health(status="ok", version=...)``."""
        return self.transport.call("GET", "/health", Health.from_dict)

    def models(self) -> list[ModelInfo]:
        """``GET /v1/models``: the built-in models (SPEC section 1), each with
        its name, role, vocabulary and rows."""
        return self.transport.call("GET", "/v1/models", lambda b: [ModelInfo.from_dict(m) for m in b["models"]])
