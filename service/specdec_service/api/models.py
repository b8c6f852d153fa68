"""``GET /v1/models``: the built-in models with their vocabularies and tables."""

from __future__ import annotations

from functools import lru_cache

from flask import Blueprint

from ..engine import builtin_models
from .problems import dumps
from .schemas import ModelsOut

blueprint = Blueprint("models", __name__)


@lru_cache(maxsize=1)
def models_body() -> str:
    """``{"models": [{"name", "role", "vocab", "start", "next"}, ...]}`` as JSON
    text (the models are constants, SPEC section 1)."""
    return dumps({"models": builtin_models()})


@blueprint.get("/v1/models")
def models():
    """The built-in target and drafts (SPEC section 1)."""
    return models_body(), 200, {"Content-Type": "application/json"}


def document(spec) -> None:
    """Add ``/v1/models`` to ``spec``."""
    from .openapi import example, operation

    spec.path(path="/v1/models", operations={"get": operation(
        "Built-in models",
        "The built-in target (`toy`) and drafts (`aligned`, `biased`) with their vocabulary and "
        "bigram tables (SPEC section 1); probabilities as the nearest float64.",
        tags=("models",), ok=ModelsOut, ok_description="The built-in models.",
        ok_examples={"builtin": example("toy, aligned, biased", {"models": builtin_models()})})})
