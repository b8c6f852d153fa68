"""Routes declared once: the view, its path and method, and its contract.

An :class:`ApiBlueprint` is a :class:`flask.Blueprint` with an OpenAPI tag.
Its :meth:`ApiBlueprint.operation` decorator registers a view with Flask and
records, in the same call, everything the contract says about it (a
:class:`Route`: summary, description, request body schema, query
parameters, the 200 response schema, the error statuses, examples).
:func:`specdec_service.api.openapi.build_spec` builds the OpenAPI document
from the recorded routes of the registered blueprints, so a route cannot be
served without being documented, nor documented differently from how it is
served (path, method, tag).

Why not flask-smorest: its ``@arguments``/``@response`` decorators load and
dump every request and response through marshmallow, which on
``POST /v1/step`` costs as much as the block itself (the service checks a body
with the engine's parser, see :func:`.bodies.read_json`, and the schema states
the contract; docs/bench-service.md). This module only
records the declaration and leaves the view untouched: no per-request cost.

Examples are given as functions (called once, when the document is built)
because they run the engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from flask import Blueprint

from ..budget import BUDGETS
from .problems import IMMUTABLE

ERROR_RESPONSES = {
    400: "MalformedJson",
    409: "SessionDone",
    413: "BodyTooLarge",
    415: "NotJson",
    422: "InvalidInput",
}
"""The shared error responses (``components/responses`` of the document, see
:mod:`.openapi`) by the status code a route lists in ``problems``."""

EDGE_STATUSES = (400, 408, 413, 414, 431, 501, 502, 503, 504, 505)
"""The statuses the production edge may answer itself, for any route, before or
instead of the service: nginx in front of the replicas (deploy/nginx/edge.conf,
docs/deploy.md), or another proxy in its place (408: nginx closes a stalled
connection without an answer, other proxies send one). Every operation documents
them with the shared response :data:`EDGE_RESPONSE`, except a status it documents
already (400 and 413 of the routes with a body, whose shared responses
``MalformedJson`` and ``BodyTooLarge`` include the edge's example)."""
EDGE_RESPONSE = "EdgeError"
DEADLINE_RESPONSE = "ComputeDeadline"
"""The shared 503 response of every operation with a work budget (:data:`specdec_service.budget.BUDGETS`):
the request was stopped at its CPU deadline (:mod:`specdec_service.deadline`), or the edge's own 503."""
HEADERS = {
    "NoSniff": {"description": "On every response, errors included: the declared type is the only one.",
                "required": True, "schema": {"type": "string", "const": "nosniff"}},
    "ETag": {"description": "The hash of the content; send it as `If-None-Match` to get a 304 while it holds.",
             "required": True, "schema": {"type": "string"}},
    "Immutable": {"description": "The content is a pure function of the URL: cache it for ever.",
                  "required": True, "schema": {"type": "string", "const": IMMUTABLE}},
    "RequestId": {"description": "On every response: the request's `X-Request-Id` when it is well formed, else a new "
                                 "id (32 hex digits). It names the request in the service's (and the edge's) logs.",
                  "required": True, "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"}},
}
"""Response headers of the contract (``components/headers``); every response names ``NoSniff``
(``X-Content-Type-Options``, set on every response by :func:`specdec_service.app.create_app`)
and ``RequestId`` (``X-Request-Id``, :mod:`specdec_service.observe`)."""
NO_SNIFF = {"X-Content-Type-Options": "NoSniff", "X-Request-Id": "RequestId"}
"""The headers of every response (named for the first)."""
IF_NONE_MATCH = {"in": "header", "name": "If-None-Match", "required": False, "schema": {"type": "string"},
                 "description": "An `ETag` of an earlier response: a 304 without a body while it still holds."}

_FLASK_PARAMETER = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


def openapi_path(rule: str) -> str:
    """A Flask URL rule as an OpenAPI path: ``/v1/x/<name>`` (or
    ``<string:name>``) -> ``/v1/x/{name}``."""
    return _FLASK_PARAMETER.sub(r"{\1}", rule)


Examples = Optional[Callable[[], dict]]
"""A function returning named example objects (see :func:`example`), or None."""


def example(summary: str, value: Any) -> dict:
    """A named OpenAPI example object: ``{"summary", "value"}``."""
    return {"summary": summary, "value": value}


def link(method: str, path: str, description: str, body: str) -> dict:
    """An OpenAPI link object to the operation ``method`` ``path`` (a Flask rule) whose request
    body is ``body``, a runtime expression (``$response.body#/state``: a part of the answer)."""
    operation = "#/paths/" + openapi_path(path).replace("~", "~0").replace("/", "~1") + "/" + method.lower()
    return {"operationRef": operation, "requestBody": body, "description": description}


@dataclass(frozen=True)
class Route:
    """One operation as the contract states it (OpenAPI 3.1 operation object).

    ``body`` and ``ok`` are marshmallow schema classes, component names or raw
    JSON Schema dicts; ``parameters`` a list of OpenAPI parameter objects
    (``{"in": "query", "schema": SomeSchema}`` expands a marshmallow schema);
    ``problems`` the error status codes (keys of :data:`ERROR_RESPONSES`);
    ``responses`` other responses by status (OpenAPI response objects, e.g. a
    404 of a path parameter; a function returning them, as they may hold
    examples); ``examples``/``ok_examples`` functions returning named
    examples of the request body and the 200 response. ``path`` is the Flask
    rule (``<name>`` for a path parameter); the document shows it as
    :func:`openapi_path`. ``conditional``: the 200 has an ``ETag`` and a
    matching ``If-None-Match`` is a 304 (:func:`.problems.conditional`);
    ``immutable``: the 200 is cacheable for ever (``Cache-Control``);
    ``links``: the 200's OpenAPI links by name (:func:`link`), the calls a
    client makes next with a part of this answer (schemathesis's stateful
    phase follows them).
    ``operation_id``: the operation's ``operationId``, a lowerCamelCase verb phrase
    (``stepSession``) that generated clients name their function by
    (``step_session`` in Python): stable, a rename breaks every generated client
    (docs/service.md, "Clients generated from the contract").
    Every response states its headers (:data:`HEADERS`). An operation with a work budget
    (:data:`specdec_service.budget.BUDGETS`) lists the 503 :data:`DEADLINE_RESPONSE`; every one
    lists the edge's statuses (:data:`EDGE_STATUSES`).
    """

    path: str
    method: str
    summary: str
    description: str
    tag: str
    ok: Any
    ok_description: str
    body: Any = None
    parameters: tuple = ()
    problems: tuple = ()
    examples: Examples = None
    ok_examples: Examples = None
    ok_mimetype: str = "application/json"
    responses: Examples = None
    conditional: bool = False
    immutable: bool = False
    links: Optional[dict] = None
    operation_id: Optional[str] = None

    def operation(self) -> dict:
        """The OpenAPI operation object (examples computed now)."""
        op: dict[str, Any] = {"operationId": self.operation_id} if self.operation_id else {}
        op.update(summary=self.summary, description=self.description, tags=[self.tag])
        parameters = list(self.parameters) + ([IF_NONE_MATCH] if self.conditional else [])
        if parameters:
            op["parameters"] = parameters
        if self.body is not None:
            content: dict[str, Any] = {"schema": self.body}
            if self.examples:
                content["examples"] = self.examples()
            op["requestBody"] = {"required": True, "content": {"application/json": content}}
        success: dict[str, Any] = {"schema": self.ok}
        if self.ok_examples:
            success["examples"] = self.ok_examples()
        headers = dict(NO_SNIFF)
        if self.conditional:
            headers["ETag"] = "ETag"
        if self.immutable:
            headers["Cache-Control"] = "Immutable"
        op["responses"] = {"200": {"description": self.ok_description, "headers": headers,
                                   "content": {self.ok_mimetype: success}}}
        if self.links:
            op["responses"]["200"]["links"] = dict(self.links)
        if self.conditional:
            op["responses"]["304"] = {"description": "Not modified: the `If-None-Match` names the current `ETag`.",
                                      "headers": dict(headers)}
        for status in self.problems:
            op["responses"][str(status)] = ERROR_RESPONSES[status]
        if self.responses:
            op["responses"].update((str(status), {**response, "headers": {**NO_SNIFF, **response.get("headers", {})}})
                                   for status, response in self.responses().items())
        if f"{self.method.upper()} {self.path}" in BUDGETS:
            op["responses"].setdefault("503", DEADLINE_RESPONSE)
        for status in EDGE_STATUSES:
            op["responses"].setdefault(str(status), EDGE_RESPONSE)
        return op


class ApiBlueprint(Blueprint):
    """A Flask blueprint whose routes are declared with their contract.

    ``tag`` and ``description`` name the OpenAPI tag of every route of the
    blueprint (declared in the document's ``tags``). :attr:`components` holds
    the ``(name, schema, extra)`` triples the blueprint adds to ``components/schemas``
    (see :meth:`component`), registered before its paths.
    """

    def __init__(self, name: str, import_name: str, *, tag: str, description: str) -> None:
        super().__init__(name, import_name)
        self.tag = tag
        self.description = description
        self.routes: list[Route] = []
        self.components: list[Any] = []

    def operation(self, method: str, path: str, *, summary: str, description: str, ok: Any,
                  ok_description: str, body: Any = None, parameters: Sequence = (), problems: tuple = (),
                  examples: Examples = None, ok_examples: Examples = None,
                  ok_mimetype: str = "application/json", responses: Examples = None,
                  conditional: bool = False, immutable: bool = False, links: Optional[dict] = None,
                  operation_id: Optional[str] = None) -> Callable:
        """Decorator: serve the view at ``method`` ``path`` and record its
        :class:`Route` (the arguments are the fields of :class:`Route`; every route
        names its ``operation_id``, tests/test_openapi.py checks it)."""
        route = Route(path=path, method=method.lower(), summary=summary, description=description, tag=self.tag,
                      ok=ok, ok_description=ok_description, body=body, parameters=tuple(parameters),
                      problems=tuple(problems), examples=examples, ok_examples=ok_examples,
                      ok_mimetype=ok_mimetype, responses=responses, conditional=conditional,
                      immutable=immutable, links=links, operation_id=operation_id)

        def register(view: Callable) -> Callable:
            self.add_url_rule(path, view_func=view, methods=[method.upper()])
            self.routes.append(route)
            return view

        return register

    def component(self, name: str, schema: Any, extra: Optional[dict] = None) -> None:
        """Add ``schema`` (marshmallow class or JSON Schema dict) as
        ``components/schemas/<name>`` of the document; ``extra``: keywords
        a marshmallow schema cannot state, merged into it (e.g. a ``oneOf``
        of required fields)."""
        self.components.append((name, schema, extra))

