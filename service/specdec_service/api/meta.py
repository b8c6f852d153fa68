"""``GET /health`` (liveness) and ``GET /openapi.yaml`` (the contract)."""

from __future__ import annotations

from flask import Blueprint, Response

from .. import __version__
from .problems import json_response
from .schemas import HealthOut

blueprint = Blueprint("meta", __name__)

YAML_MIMETYPE = "application/yaml"


@blueprint.get("/health")
def health():
    """Liveness: ``{"status": "ok", "version": "<package version>"}``."""
    return json_response({"status": "ok", "version": __version__})


@blueprint.get("/openapi.yaml")
def openapi_document():
    """The OpenAPI 3.1 contract: the same bytes as the repository's ``openapi.yaml``."""
    from .openapi import openapi_yaml

    return Response(openapi_yaml(), mimetype=YAML_MIMETYPE)


def document(spec) -> None:
    """Add ``/health`` and ``/openapi.yaml`` to ``spec``."""
    from .openapi import example, operation

    spec.path(path="/health", operations={"get": operation(
        "Liveness", "Answers 200 while the service runs.", tags=("service",),
        ok=HealthOut, ok_description="The service is up.",
        ok_examples={"ok": example("Up", {"status": "ok", "version": __version__})})})
    spec.path(path="/openapi.yaml", operations={"get": {
        "summary": "This contract",
        "description": "The OpenAPI 3.1 document, the same bytes as `openapi.yaml` in the repository.",
        "tags": ["service"],
        "responses": {"200": {"description": "The document (YAML).",
                              "content": {YAML_MIMETYPE: {"schema": {"type": "object"}}}}},
    }})
