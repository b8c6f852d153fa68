"""``GET /health`` (liveness) and ``GET /openapi.yaml`` (the contract)."""

from __future__ import annotations

from flask import Response, current_app

from .. import __version__
from .openapi import openapi_etag, openapi_yaml
from .problems import conditional, json_response
from .routes import ApiBlueprint, example
from .schemas import HealthOut

blueprint = ApiBlueprint("meta", __name__, tag="service", description="Liveness and this contract.")

YAML_MIMETYPE = "application/yaml"


@blueprint.operation(
    "GET", "/health", summary="Liveness", description="Answers 200 while the service runs.",
    operation_id="getHealth",
    ok=HealthOut, ok_description="The service is up.",
    ok_examples=lambda: {"ok": example("Up", {"status": "ok", "version": __version__})})
def health():
    """Liveness: ``{"status": "ok", "version": "<package version>"}``."""
    return json_response({"status": "ok", "version": __version__})


@blueprint.operation(
    "GET", "/openapi.yaml", summary="This contract",
    operation_id="getOpenapi",
    description="The OpenAPI 3.1 document, the same bytes as `openapi.yaml` in the repository.",
    ok={"type": "object"}, ok_description="The document (YAML).", ok_mimetype=YAML_MIMETYPE, conditional=True)
def openapi_document():
    """The OpenAPI 3.1 contract of the app's registered blueprints: the same
    bytes as the repository's ``openapi.yaml``, with an ``ETag`` (304 on a
    matching ``If-None-Match``)."""
    blueprints = tuple(current_app.iter_blueprints())
    return conditional(Response(openapi_yaml(blueprints), mimetype=YAML_MIMETYPE), openapi_etag(blueprints))
