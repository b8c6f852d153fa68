"""RFC 9457 problem documents: the one shape of every error the API returns.

:func:`problem` builds every error response (``application/problem+json``
with ``type``, ``title``, ``status``, ``detail`` and, for validation errors,
``errors``: ``[{"pointer": "#/config/width", "detail": "why"}]`` or, for a
query parameter, ``[{"parameter": "count", "detail": "why"}]``).
:func:`register_error_handlers` maps every exception to one:

- :class:`ApiProblem` (raised by the HTTP layer: malformed JSON 400, not
  JSON 415, invalid body or query 422);
- the engine's :class:`~specdec_service.engine.InvalidInput` (422, its
  faults as pointers) and :class:`~specdec_service.engine.SessionDone` (409);
- :class:`~specdec_service.budget.OverBudget` (422, type ``over-budget``, with the
  members ``cost``, ``budget`` and ``unit``: a request over its route's work budget);
- every werkzeug ``HTTPException`` (404, 405 with its ``Allow`` header,
  413, ...);
- (not here: a :class:`~specdec_service.deadline.ComputeDeadline`, a ``BaseException``, is caught
  around the view by :class:`specdec_service.app.create_app`'s app and answered by
  :func:`deadline_problem`, a 503 of type :data:`COMPUTE_DEADLINE`);
- anything else: logged with its traceback, answered by a bare 500 problem
  (no traceback leaves the server; the tests make sure none happens).
"""

from __future__ import annotations

import json
from decimal import Decimal
from http import HTTPStatus
from typing import Any, Iterable, Mapping, Optional, Sequence

from flask import Flask, Response, current_app, g, request

try:
    import orjson
except ImportError:  # optional speed-up, see dumps()
    orjson = None  # type: ignore[assignment]  # an optional module: every use checks for None
from werkzeug.exceptions import HTTPException

from ..budget import OVER_BUDGET, OverBudget
from ..deadline import ComputeDeadline
from ..engine import Fault, InvalidInput, SessionDone, pointer
from ..engine.errors import MAX_ERRORS
from ..engine.models import Table

PROBLEM_MIMETYPE = "application/problem+json"

STATUS_TITLES = {
    400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    409: "Conflict", 413: "Request Entity Too Large", 414: "Request-URI Too Long",
    415: "Unsupported Media Type", 416: "Range Not Satisfiable", 422: "Unprocessable Entity",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large", 500: "Internal Server Error", 502: "Bad Gateway",
    503: "Service Unavailable", 504: "Gateway Timeout",
}
"""The title of an ``about:blank`` problem by status: fixed here (the phrases of RFC 7231 /
Python 3.11's ``http.HTTPStatus``), so the service's and the edge's pages (deploy/nginx)
say the same whatever Python serves them (3.13 renamed 413, 414, 416 and 422; 416 is RFC 9110's
phrase here, which only the edge may send)."""

# Problem types of our own (RFC 9457 section 3.1.1: a URI; tag URIs, RFC 4151,
# are not meant to be dereferenced). Every other error is ``about:blank``,
# whose title is the HTTP status phrase.
MALFORMED_JSON = "tag:specdec,2026:problem/malformed-json"
INVALID_INPUT = "tag:specdec,2026:problem/invalid-input"
SESSION_DONE = "tag:specdec,2026:problem/session-done"
STRUCTURE_BOUND = "tag:specdec,2026:problem/structure-bound"
"""A body over a bound of its structure: nesting, values, number literals (``api/structure.py``)."""
COMPUTE_DEADLINE = "tag:specdec,2026:problem/compute-deadline"
"""A request stopped at its CPU deadline (HTTP 503, :mod:`specdec_service.deadline`)."""
PROBLEM_TITLES = {
    MALFORMED_JSON: "Malformed JSON",
    INVALID_INPUT: "Invalid input",
    SESSION_DONE: "Session done",
    STRUCTURE_BOUND: "Structure bound exceeded",
    OVER_BUDGET: "Over budget",
    COMPUTE_DEADLINE: "Compute deadline exceeded",
}


def dumps(obj: Any) -> bytes:
    """The JSON text of a response body as UTF-8 bytes: compact, key order
    kept, one trailing newline; the same object always gives the same bytes.
    Decimals (from a caller's custom model) are written as float64; a custom model's
    table (``engine.models.Table``) by the JSON text it keeps (the same bytes, written
    once per model, not once per response).

    orjson writes it (8x faster than the standard library on a block, which
    matters for ``POST /v1/step``'s throughput, docs/bench-service.md); a
    string orjson refuses (a lone surrogate such as ``"\\ud800"``, which JSON
    allows) falls back to the standard library, which escapes it. Without
    orjson installed the standard library writes every body.
    """
    if orjson is not None:
        try:
            return orjson.dumps(obj, default=_default, option=orjson.OPT_PASSTHROUGH_SUBCLASS) + b"\n"
        except orjson.JSONEncodeError:
            pass
    return (json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_float_of) + "\n").encode()


def _float_of(value: Any) -> float:
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _default(value: Any) -> Any:
    """orjson's ``default`` (subclasses passed through): a :class:`~.engine.models.Table` as
    its kept text, any other subclass of a JSON type as that type, a Decimal as float64."""
    if type(value) is Table and value.json is not None:
        return orjson.Fragment(value.json)
    bases: tuple[type, ...] = (dict, list, str, int, float)
    for base in bases:
        if isinstance(value, base):
            return base(value)
    return _float_of(value)


def json_response(obj: Any, status: int = 200) -> Response:
    """A JSON response of ``obj``."""
    return Response(dumps(obj), status=status, mimetype="application/json")


IMMUTABLE = "public, max-age=31536000, immutable"
"""``Cache-Control`` of a response that is a pure function of its URL (``GET /v1/draws``)."""


def conditional(response: Response, etag: Optional[str] = None, immutable: bool = False) -> Response:
    """``response`` with an ``ETag`` (``etag``, or the SHA-1 of its bytes), answered as
    ``304 Not Modified`` without a body when the request's ``If-None-Match`` names it
    (RFC 9110 sections 8.8.3 and 13.1.2); ``immutable`` adds ``Cache-Control``
    :data:`IMMUTABLE` (RFC 8246: the content at this URL never changes)."""
    if etag is None:
        response.add_etag()
    else:
        response.set_etag(etag)
    if immutable:
        response.headers["Cache-Control"] = IMMUTABLE
    response.make_conditional(request)  # in place (it returns the response, typed as werkzeug's)
    return response


MAX_PROBLEM_BYTES = 64 * 1024
"""A problem document is at most this many bytes: at most :data:`MAX_ERRORS` ``errors``, and a
long ``detail``, pointer or message is cut (:func:`_clipped`), never the JSON structure."""
MAX_TEXT = 1024
"""Characters of one string of a problem document (``detail``: 4 times as many) before it is cut."""


def problem(status: int, detail: str, *, type: str = "about:blank", title: Optional[str] = None,
            errors: Optional[Sequence[Mapping[str, str]]] = None, headers: Optional[Mapping] = None,
            extensions: Optional[Mapping[str, Any]] = None, error_count: Optional[int] = None) -> Response:
    """An RFC 9457 problem response of at most :data:`MAX_PROBLEM_BYTES` bytes.

    ``title`` defaults to the type's title, or the HTTP status phrase for
    ``about:blank``; ``errors`` (if given) lists bad fields, the first :data:`MAX_ERRORS`
    of them, with ``error_count`` (default: how many ``errors`` there are) saying how many
    faults were found in all; ``extensions`` adds members of the problem type (RFC 9457
    section 3.2). A string longer than :data:`MAX_TEXT` characters is cut (ending in ``...``),
    shorter still if the document would exceed :data:`MAX_PROBLEM_BYTES`.
    """
    body: dict[str, Any] = {
        "type": type,
        "title": title or PROBLEM_TITLES.get(type) or STATUS_TITLES.get(status) or HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }
    if extensions:
        body.update(extensions)
    if errors is not None:
        body["errors"] = list(errors[:MAX_ERRORS])
        body["error_count"] = max(len(errors), error_count or 0)
    limit, data = MAX_TEXT, dumps(_clipped(body, MAX_TEXT))
    while len(data) > MAX_PROBLEM_BYTES and limit > 16:  # many escaped characters (6 bytes each): cut shorter
        limit //= 2
        data = dumps(_clipped(body, limit))
    response = Response(data, status=status, mimetype=PROBLEM_MIMETYPE)
    if headers:
        response.headers.extend(headers)
    return response


def _clipped(body: Any, limit: int) -> Any:
    """``body`` (a problem document: strings, numbers, lists and dicts of them) with every string
    longer than ``limit`` characters (``4 * limit`` for the top-level ``detail``) cut to end in
    ``...``."""
    def clip(text: str, most: int) -> str:
        return text if len(text) <= most else text[:most - 3] + "..."

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return clip(node, limit)
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, dict):
            return {key: walk(value) for key, value in node.items()}
        return node

    out = walk({k: v for k, v in body.items() if k != "detail"})
    return {**{k: out.get(k) for k in ("type", "title", "status")},
            "detail": clip(body["detail"], 4 * limit), **out}


DEADLINE_HINT = ("send a smaller request: fewer digits in the rows, a temperature nearer 1, a smaller width, limit "
                 "or number of drafts, or fewer traces or samples; the same request will stop again")
"""What the 503 of a request stopped at its CPU deadline tells the caller to change."""


def deadline_problem(stop: ComputeDeadline, request_id: str) -> Response:
    """The 503 problem (type :data:`COMPUTE_DEADLINE`) of a request whose work was stopped at its
    CPU or wall-clock deadline (:class:`~specdec_service.deadline.ComputeDeadline`): ``detail``
    says which, the extension members ``request_id`` (the answer's ``X-Request-Id``, to find the
    request in the logs), ``cpu_deadline_seconds`` or ``wall_deadline_seconds`` (the one hit) and
    ``hint`` (:data:`DEADLINE_HINT`). No ``Retry-After``: the same request would be stopped again
    (a wall-clock stop on a loaded machine might not, but nothing tells it apart)."""
    cpu = stop.clock == "cpu"
    what = "CPU time" if cpu else "wall-clock time"
    detail = (f"The request used more than its {stop.seconds:g} s of {what} (the service's per-request "
              "deadline) and was stopped; nothing of it was kept.")
    limit = "cpu_deadline_seconds" if cpu else "wall_deadline_seconds"
    return problem(503, detail, type=COMPUTE_DEADLINE,
                   extensions={"request_id": request_id, limit: stop.seconds, "hint": DEADLINE_HINT})


class ApiProblem(Exception):
    """An error the HTTP layer raises on purpose; turned into :func:`problem`."""

    def __init__(self, status: int, detail: str, *, type: str = "about:blank",
                 errors: Optional[Sequence[Mapping[str, str]]] = None, error_count: Optional[int] = None):
        super().__init__(detail)
        self.status, self.detail, self.type, self.errors = status, detail, type, errors
        self.error_count = error_count

    def response(self) -> Response:
        return problem(self.status, self.detail, type=self.type, errors=self.errors, error_count=self.error_count)


def invalid(errors: Sequence[Mapping[str, str]], count: Optional[int] = None) -> ApiProblem:
    """A 422 problem for ``errors`` (``[{"pointer"|"parameter", "detail"}]``): the first
    :data:`MAX_ERRORS` listed, ``count`` (default: as many as ``errors``) found in all."""
    count = max(count or 0, len(errors))
    shown = list(errors[:MAX_ERRORS])
    where = "; ".join(f"{e.get('pointer') or e.get('parameter')}: {e['detail']}" for e in shown)
    noun = "field is" if count == 1 else "fields are"
    more = f" (the first {len(shown)} of {count} shown)" if count > len(shown) else ""
    return ApiProblem(422, f"{count} {noun} invalid{more}: {where}", type=INVALID_INPUT, errors=shown,
                      error_count=count)


def fault_errors(faults: Iterable[Fault]) -> list[dict]:
    """Engine faults as ``errors`` items with JSON pointers."""
    return [{"pointer": pointer(f.path), "detail": f.message} for f in faults]


def marshmallow_faults(messages: Any, path: tuple = ()) -> list[Fault]:
    """Flatten marshmallow's nested error messages into faults with paths.

    ``{"config": {"width": ["Must be ..."]}}`` gives ``("config", "width")``;
    list indices are kept as ints; ``_schema`` (an error about the object
    itself) points at the object; the ``key``/``value`` level of a
    ``fields.Dict`` error points at the entry (no field of ours has those names).
    """
    if isinstance(messages, str):
        return [Fault(path, messages)]
    if isinstance(messages, list):
        return [f for m in messages for f in marshmallow_faults(m, path)]
    faults: list[Fault] = []
    for key, value in messages.items():
        if key in ("_schema", "value"):
            faults.extend(marshmallow_faults(value, path))
        elif key == "key":
            faults.extend(Fault(f.path, f"key {f.message[:1].lower()}{f.message[1:]}") for f in marshmallow_faults(value, path))
        else:
            faults.extend(marshmallow_faults(value, path + (key,)))
    return faults


def register_error_handlers(app: Flask) -> None:
    """Answer every error with a problem document (see the module docstring)."""

    @app.errorhandler(ApiProblem)
    def _api_problem(error: ApiProblem):
        return error.response()

    @app.errorhandler(InvalidInput)
    def _invalid_input(error: InvalidInput):
        return invalid(fault_errors(error.faults[:MAX_ERRORS]), error.count).response()

    @app.errorhandler(OverBudget)
    def _over_budget(error: OverBudget):
        extensions = error.to_json()
        errors = extensions.pop("errors", None)
        return problem(422, error.detail, type=OVER_BUDGET, errors=errors, extensions=extensions)

    @app.errorhandler(SessionDone)
    def _session_done(error: SessionDone):
        return problem(409, str(error), type=SESSION_DONE)

    @app.errorhandler(HTTPException)
    def _http_exception(error: HTTPException):
        status = error.code or 500
        headers = {k: v for k, v in error.get_headers() if k.lower() != "content-type"}
        return problem(status, _http_detail(error), headers=headers)

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):
        current_app.logger.exception("unexpected error (request_id=%s)", g.get("request_id", "-"))
        return problem(500, "An unexpected error occurred; it has been logged.")


def _http_detail(error: HTTPException) -> str:
    if error.code == 413:
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        return f"The request body is larger than the limit of {limit} bytes."
    if error.code == 404:
        return "No such resource: see /openapi.yaml for the routes."
    if error.code == 405:
        return "The method is not allowed for this resource; see the Allow header."
    return error.description or HTTPStatus(error.code or 500).description
