"""The HTTP layer: thin translation between JSON and the engine.

Extension point (how to add routes)
-----------------------------------
Every module named in :data:`API_MODULES` exposes exactly two things:

- ``blueprint``: a :class:`flask.Blueprint` with its views. A view reads
  its input with :func:`.bodies.read_json` + :func:`.bodies.load` (or
  :func:`.bodies.load_query`), calls the engine, and answers with
  :func:`.problems.json_response`. Errors are raised, never returned:
  the engine's ``InvalidInput``/``SessionDone`` or :class:`.problems.ApiProblem`
  become RFC 9457 problems in one place (:mod:`.problems`).
- ``document(spec)``: adds the module's paths to the ``apispec.APISpec``
  with :func:`.openapi.operation` (request/response marshmallow schemas,
  examples, the shared error responses by status code).

:func:`specdec_service.app.create_app` registers every blueprint and
:func:`.openapi.build_spec` calls every ``document``, in this order, so a
new module (e.g. ``grading`` for ``POST /v1/grade``) is one file plus one
name appended here; then run ``specdec-service openapi --write`` to
regenerate ``openapi.yaml`` (``tests/test_openapi.py`` fails until you do).
Put its schemas in the module itself (or a ``grading`` schemas module) and
reuse :mod:`.schemas` where they overlap (``ConfigIn``, ``ProblemOut``, ...).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

API_MODULES = ("meta", "models", "draws", "sessions", "runs", "grading")
"""The API modules, in the order of the OpenAPI document."""


def api_modules() -> list[ModuleType]:
    """The modules of :data:`API_MODULES`, imported."""
    return [import_module(f"{__name__}.{name}") for name in API_MODULES]
