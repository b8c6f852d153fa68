"""The HTTP layer: thin translation between JSON and the engine.

How to add a route
------------------
1. In a module of this package (a new one, e.g. ``analysis.py``, or an
   existing one), make an :class:`.routes.ApiBlueprint` with its OpenAPI tag::

       blueprint = ApiBlueprint("analysis", __name__, tag="analysis",
                                description="Exact analysis of a config.")

2. Declare each view once, with its contract, by
   :meth:`.routes.ApiBlueprint.operation`::

       @blueprint.operation("POST", "/v1/analysis", summary="...", description="...",
                            operation_id="analyze",
                            body="AnalysisIn", ok=AnalysisOut, ok_description="...",
                            problems=(400, 413, 415, 422),
                            examples=lambda: {...}, ok_examples=lambda: {...})
       def analysis():
           config, depth, widths, draft_cost = read_json(parse_analysis)  # 415/413/400, then 422
           return json_response(...)

   ``read_json`` reads numbers as the route's entry of ``bodies.BODY_RULES`` says (add one).
   A request body is stated once, as JSON Schema, where its parser lives
   (``engine/inputs.py``, ``grading/submissions.py``): the parser checks it and the
   contract's component is produced from it (``body`` names that component).
   ``body``/``ok`` are component names, marshmallow schemas or raw JSON Schema dicts;
   ``operation_id`` is the stable lowerCamelCase name generated clients call it by;
   ``problems`` names the shared error responses by status
   (:data:`.routes.ERROR_RESPONSES`); examples are functions (they run the
   engine once, when the document is built). Extra named schemas go in
   ``blueprint.component(name, schema)``. Errors are raised, never returned:
   the engine's ``InvalidInput``/``SessionDone`` or :class:`.problems.ApiProblem`
   become RFC 9457 problems in one place (:mod:`.problems`).
3. Import the module by name below and append its ``blueprint`` to
   :data:`BLUEPRINTS` (the order of the tags and paths in the document).
4. Run ``specdec-service openapi --write`` to regenerate ``openapi.yaml``
   (``tests/test_openapi.py`` fails until you do, and also when a served
   route is missing from the document).
"""

from __future__ import annotations

from . import analysis, draws, grading, inspector, meta, metrics, models, runs, sessions
from .openapi import openapi_yaml

BLUEPRINTS = (meta.blueprint, models.blueprint, draws.blueprint, sessions.blueprint, runs.blueprint,
              grading.blueprint, analysis.blueprint, inspector.blueprint, metrics.blueprint)
"""Every blueprint of the service, in the order of the OpenAPI document;
:func:`specdec_service.app.create_app` registers them in this order."""


def contract() -> str:
    """The OpenAPI document of :data:`BLUEPRINTS` as YAML text (the bytes of
    ``openapi.yaml`` and of ``GET /openapi.yaml``)."""
    return openapi_yaml(BLUEPRINTS)
