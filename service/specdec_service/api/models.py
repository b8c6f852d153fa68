"""``GET /v1/models``: the built-in models with their vocabularies and tables."""

from __future__ import annotations

from functools import lru_cache

from ..engine import builtin_models
from .problems import dumps
from .routes import ApiBlueprint, example
from .schemas import ModelsOut

blueprint = ApiBlueprint("models", __name__, tag="models",
                         description="The built-in target and draft models (SPEC section 1).")


@lru_cache(maxsize=1)
def models_body() -> str:
    """``{"models": [{"name", "role", "vocab", "start", "next"}, ...]}`` as JSON
    text (the models are constants, SPEC section 1)."""
    return dumps({"models": builtin_models()})


@blueprint.operation(
    "GET", "/v1/models", summary="Built-in models",
    description="The built-in target (`toy`) and drafts (`aligned`, `biased`) with their vocabulary and "
                "bigram tables (SPEC section 1); probabilities as the nearest float64.",
    ok=ModelsOut, ok_description="The built-in models.",
    ok_examples=lambda: {"builtin": example("toy, aligned, biased", {"models": builtin_models()})})
def models():
    """The built-in target and drafts (SPEC section 1)."""
    return models_body(), 200, {"Content-Type": "application/json"}
