"""``GET /v1/models``: the built-in models with their vocabularies and tables."""

from __future__ import annotations

from functools import lru_cache

from flask import Response
from werkzeug.http import generate_etag

from ..engine import builtin_models
from .problems import conditional, dumps
from .routes import ApiBlueprint, example
from .schemas import ModelsOut

blueprint = ApiBlueprint("models", __name__, tag="models",
                         description="The built-in target and draft models (SPEC section 1).")


@lru_cache(maxsize=1)
def models_body() -> bytes:
    """``{"models": [{"name", "role", "vocab", "start", "next"}, ...]}`` as JSON
    text (the models are constants, SPEC section 1)."""
    return dumps({"models": builtin_models()})


@blueprint.operation(
    "GET", "/v1/models", summary="Built-in models",
    operation_id="listModels",
    description="The built-in target (`toy`) and drafts (`aligned`, `biased`) with their vocabulary and "
                "bigram tables (SPEC section 1); probabilities as the nearest float64.",
    ok=ModelsOut, ok_description="The built-in models.", conditional=True,
    ok_examples=lambda: {"builtin": example("toy, aligned, biased", {"models": builtin_models()})})
def models():
    """The built-in target and drafts (SPEC section 1), with an ``ETag`` (304 on a
    matching ``If-None-Match``)."""
    return conditional(Response(models_body(), mimetype="application/json"), models_etag())


@lru_cache(maxsize=1)
def models_etag() -> str:
    """The ``ETag`` of :func:`models_body`: its SHA-1."""
    return generate_etag(models_body())
