"""The OpenAPI 3.1 contract, generated from the declared routes.

:func:`build_spec` makes an ``apispec.APISpec``, registers the shared
components (the problem document and the error responses below), then for
each :class:`~.routes.ApiBlueprint` given (in order) declares its tag, its
components and the operation of each of its routes (:class:`~.routes.Route`,
recorded where the view is declared). :func:`openapi_yaml` is the document as
YAML text: ``GET /openapi.yaml`` serves it for the app's registered
blueprints and ``openapi.yaml`` at the repository root holds the same bytes
(``specdec-service openapi --write`` regenerates it from
:data:`specdec_service.api.BLUEPRINTS`, ``--check`` and
``tests/test_openapi.py`` fail when it is out of date).

Shared error responses, referenced by name from a route's ``problems``
(:data:`.routes.ERROR_RESPONSES`): ``MalformedJson`` (400), ``SessionDone``
(409), ``BodyTooLarge`` (413), ``NotJson`` (415), ``InvalidInput`` (422); ``ComputeDeadline``
(503, on every operation with a work budget: :data:`.routes.DEADLINE_RESPONSE`); and
``EdgeError``, the problems the production edge (nginx) answers itself, which
every operation lists (:data:`.routes.EDGE_STATUSES`).

Made for client generators (openapi-python-client, openapi-typescript; docs/service.md,
``tests/test_clients.py``): every operation has its stable ``operationId``
(:class:`.routes.Route`), the document a ``servers`` entry (:data:`SERVERS`), every
schema component a ``title`` equal to its name (generators name a class by its title, so
a title two components share made two classes of one name, and one was dropped), no
component is a bare ``$ref`` (:func:`_for_generators`), and a
body whose fields are "exactly one of" several is stated as a ``oneOf`` of whole forms
(:func:`exactly_one_forms`), never as a ``oneOf`` of bare ``required`` lists (a type a
generator can only call ``Any``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml
from apispec import APISpec
from werkzeug.http import generate_etag
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import fields

from .. import __version__
from .bodies import BODY_RULES
from .problems import (COMPUTE_DEADLINE, DEADLINE_HINT, INVALID_INPUT, MALFORMED_JSON, PROBLEM_MIMETYPE,
                       SESSION_DONE, STRUCTURE_BOUND)
from .routes import DEADLINE_RESPONSE, EDGE_RESPONSE, HEADERS, NO_SNIFF, ApiBlueprint, example, openapi_path
from .schemas import ModelTableOut, ProblemOut
from .structure import MAX_EXPONENT, MAX_NESTING, MAX_NUMBER_CHARS
from .trace_components import request_components, trace_components, trace_ref_attribute

OPENAPI_VERSION = "3.1.0"
TITLE = "specdec API"
"""``info.title``; generators name a client after it (openapi-python-client: ``specdec-api-client``,
package ``specdec_api_client``, not the SDK's ``specdec_client``)."""
SERVERS = [{"url": "http://localhost:8000",
            "description": "The service as the README's quick start runs it (`specdec-service serve`, gunicorn on "
                           "port 8000 of the loopback interface), or the edge of `docker compose up` (port 8000); "
                           "a deployment answers at its own URL (a generated client takes the base URL)."}]
"""The ``servers`` of the document: the base URL a generated client starts with."""
REGENERATE = "specdec-service openapi --write"
"""The command that rewrites ``openapi.yaml`` from the schemas."""

def _by_route(attribute: str) -> str:
    """The routes of :data:`.bodies.BODY_RULES` grouped by the value of ``attribute``:
    ``"10000 on /v1/draft, /v1/step; 4194304 on /v1/grade"``."""
    groups: dict = {}
    for route, rule in BODY_RULES.items():
        groups.setdefault(getattr(rule, attribute), []).append(f"`{route}`")
    return "; ".join(f"{value} on {', '.join(routes)}" for value, routes in groups.items())


DESCRIPTION = f"""\
Speculative decoding made inspectable, reproducible and gradable.

The service is stateless: a caller sends the whole session state and gets the
next one back; the same request always gives byte-identical responses. The
decoding rules are SPEC.md (exact rational probabilities, the SplitMix64 draw
stream, speculative sampling after Leviathan et al. 2023 and Chen et al. 2023,
blockwise greedy decoding after Stern et al. 2018).

Request bodies are JSON (`Content-Type: application/json`) of at most
262144 bytes (256 KiB; the grading routes state their own limit), under one
rule on every route (RFC 8259): UTF-8 without a byte order mark and no
`charset` but utf-8 (else 400 or 415); no object repeats a name and no string
holds a lone surrogate escape such as `"\\ud800"` (a 400 naming it by its
JSON Pointer); no NaN or Infinity. The structure of a body is bounded before
anything reads it (problem type `{STRUCTURE_BOUND}`): at most {MAX_NESTING}
levels of nesting (the deepest valid body, a batch of traces, has 9) and number
literals of at most {MAX_NUMBER_CHARS} characters with an exponent of at most {MAX_EXPONENT} in size
(else 400, naming the pointer); at most so many values (array elements and
object members; an empty array or object counts one): {_by_route("max_values")} (else 413).
JSON numbers are read, by route: {_by_route("numbers")}. Exact decimals
read 0.1 as exactly 1/10, and decimal exponents beyond +-1000 as +-1e+-1000;
float64 refuses a number beyond its range with a 422; shortest decimals read
the same numbers as exact decimals (docs/service.md).
An integer field accepts an integer-valued number (`9.0`) as
that integer and echoes the integer. A request field with a `default` may be left
out: the default applies (generate TypeScript types with openapi-typescript's
`--default-non-nullable false`, which keeps such fields optional; docs/service.md).
Every error is an RFC 9457 problem document
(`application/problem+json`); a 422 lists each bad field in `errors` by its
JSON Pointer into the request body (or the name of the bad query parameter).
Every response carries `X-Content-Type-Options: nosniff` and `X-Request-Id` (the
request's own when it is well formed, else a new one). CORS is open (any
origin) for `/v1/*` and `/openapi.yaml`; preflights may be cached for a day
(`Access-Control-Max-Age: 86400`).
"""


def _problem_response(description: str, examples: dict) -> dict:
    """A shared problem response (``X-Content-Type-Options: nosniff`` on it, as on every
    response, the edge's own included: deploy/nginx/edge.conf)."""
    return {"description": description, "headers": dict(NO_SNIFF),
            "content": {PROBLEM_MIMETYPE: {"schema": "ProblemOut", "examples": examples}}}


EDGE_PROBLEMS = {
    400: "The request is not valid HTTP/1.1 (its request line, a header or its body framing); "
         "the edge refused it before it reached the service.",
    413: "The request body is larger than the limit of 262144 bytes.",
    414: "The request line is longer than 4094 bytes.",
    431: "A request header line is longer than 4096 bytes, or the headers are too large altogether.",
    502: "No replica of the service answered (every one tried refused the connection or failed); retry shortly.",
    503: "Too many requests of this client are in progress (at most 64); retry after a second.",
    501: "The request's Transfer-Encoding is not implemented: send the body with Content-Length, "
         "or with Transfer-Encoding: chunked alone.",
    504: "No replica of the service answered within 60 s; retry, or send a smaller request.",
    505: "The HTTP version is not supported: send HTTP/1.1 (or HTTP/1.0).",
}
"""The ``detail`` of each problem the edge answers itself (deploy/nginx/edge.conf
writes the same documents; tests/test_edge.py compares them)."""
EDGE_TITLES = {400: "Bad Request", 413: "Request Entity Too Large", 414: "Request-URI Too Long",
               431: "Request Header Fields Too Large", 501: "Not Implemented", 502: "Bad Gateway",
               503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported"}

EDGE_DESCRIPTION = """\
Answered by the edge, not the service: nginx in front of the service's replicas
in the production deployment (docs/deploy.md), for any route, in the same problem
format (`type` about:blank, the HTTP status phrase as `title`; CORS on `/v1/*`
wherever the edge could read the path). 400: the request is not valid HTTP/1.1
(framing, header syntax). 408: a proxy may answer a request that arrives too
slowly (nginx closes the connection instead, after 10 s). 413: the body is over
the route's limit (262144 bytes; 8388608 on `/v1/grade*`). 414: the request line
is over 4094 bytes. 431: a header line is over 4096 bytes. 501: a
`Transfer-Encoding` other than `chunked` alone. 502: no replica answered, or a
replica answered an error status with a page that is not a problem document (the
detail names that status; the edge never passes such a page on). 503: this client
already has 64 requests in progress (`Retry-After`). 504: no replica answered
within 60 s. 505: an HTTP version other than 1.0 and 1.1. The edge's 502, 503 and
504 can be retried as they are: every route is a pure function of its request
(the service's own 503, type `compute-deadline`, cannot: see `ComputeDeadline`).
The edge never answers HTML."""


def edge_example(status: int) -> dict:
    """The named example of the edge's problem for ``status``."""
    return example(f"From the edge ({status})", {"type": "about:blank", "title": EDGE_TITLES[status],
                                                 "status": status, "detail": EDGE_PROBLEMS[status]})


def _register_components(spec: APISpec) -> None:
    for name, header in HEADERS.items():
        spec.components.header(name, header)
    spec.components.schema("ProblemOut", schema=ProblemOut)
    for name, component in request_components().items():
        spec.components.schema(name, component=component)
    spec.components.schema("ModelTableOut", schema=ModelTableOut)
    for name, component in trace_components().items():
        spec.components.schema(name, component=component)
    spec.components.response("MalformedJson", _problem_response(
        "The body is not acceptable JSON: not valid JSON, not UTF-8 or with a byte order mark, an object that "
        "repeats a name or a string with a lone surrogate escape (`errors` names it by its JSON Pointer), "
        "NaN/Infinity, ending before its Content-Length, or malformed chunked framing; or past a bound of its "
        f"structure (type `{STRUCTURE_BOUND}`): nested deeper than {MAX_NESTING} levels, or a number literal "
        f"of more than {MAX_NUMBER_CHARS} characters or with an exponent beyond {MAX_EXPONENT} (`errors` names "
        "its pointer). "
        "For `GET /v1/draws`: a query string that is not percent-encoded UTF-8. Or, from the edge of the "
        "production deployment (see `EdgeError`), the request is not valid HTTP/1.1.",
        {"malformed": example("A truncated body", {
            "type": MALFORMED_JSON, "title": "Malformed JSON", "status": 400,
            "detail": "The body is not valid JSON: Expecting value: line 1 column 12 (char 11)."}),
         "deep": example("A body nested 300 levels deep", {
             "type": STRUCTURE_BOUND, "title": "Structure bound exceeded", "status": 400,
             "detail": f"The body nests arrays and objects deeper than {MAX_NESTING} levels, at "
                       "#/x/0/0/0/0/0/0/0/0/0/0/0 (docs/service.md).",
             "errors": [{"pointer": "#/x/0/0/0/0/0/0/0/0/0/0/0",
                         "detail": f"is level {MAX_NESTING + 1}: a body nests at most {MAX_NESTING} levels (the "
                                   "deepest valid body of any route has 9)"}]}),
         "edge": edge_example(400)}))
    spec.components.response("SessionDone", _problem_response(
        "The session has ended (limit reached or EOS committed, SPEC section 6): start a new one.",
        {"done": example("A step on a finished session", {
            "type": SESSION_DONE, "title": "Session done", "status": 409,
            "detail": "the session is done: the committed output reached the limit (SPEC section 6); start a new session"})}))
    spec.components.response("BodyTooLarge", _problem_response(
        "The body is larger than 262144 bytes (256 KiB): the service's answer, or the edge's in the production "
        f"deployment (see `EdgeError`); or it holds more values than the route takes (type `{STRUCTURE_BOUND}`, "
        "the bounds in the description of this document).",
        {"too_large": example("A 300 KB body", {
            "type": "about:blank", "title": "Request Entity Too Large", "status": 413,
            "detail": "The request body is larger than the limit of 262144 bytes."}),
         "edge": edge_example(413)}))
    spec.components.response("NotJson", _problem_response(
        "The body is not declared as JSON (Content-Type must be application/json).",
        {"not_json": example("A form body", {
            "type": "about:blank", "title": "Unsupported Media Type", "status": 415,
            "detail": "The body must be JSON with Content-Type application/json, not application/x-www-form-urlencoded."})}))
    spec.components.response("InvalidInput", _problem_response(
        "The body is well formed but invalid: `errors` names each bad field by its JSON Pointer and says why.",
        {"width": example("A width above 16", {
            "type": INVALID_INPUT, "title": "Invalid input", "status": 422,
            "detail": "1 field is invalid: #/config/width: must be an integer from 1 to 16",
            "errors": [{"pointer": "#/config/width", "detail": "must be an integer from 1 to 16"}]}),
         "row": example("A custom draft row that does not sum to 1", {
             "type": INVALID_INPUT, "title": "Invalid input", "status": 422,
             "detail": "1 field is invalid: #/config/draft/start: must sum to 1 within 1e-9, not 0.9",
             "errors": [{"pointer": "#/config/draft/start", "detail": "must sum to 1 within 1e-9, not 0.9"}]})}))
    spec.components.response(DEADLINE_RESPONSE, _problem_response(
        f"The request used more than the service's per-request CPU deadline (type `{COMPUTE_DEADLINE}`; 10 s of "
        "CPU by default, `cpu_deadline_seconds`) or its wall-clock deadline (20 s by default, `wall_deadline_seconds`;"
        " docs/deploy.md) although its cost estimate was within the route's budget: its work was "
        "stopped and nothing of it kept. `request_id` names it in the service's logs, `hint` says what to make "
        "smaller; the same request would stop again, so there is no `Retry-After`. Or, from the edge of the "
        "production deployment (see `EdgeError`), too many requests of this client are in progress.",
        {"deadline": example("A request stopped at the deadline", {
            "type": COMPUTE_DEADLINE, "title": "Compute deadline exceeded", "status": 503,
            "detail": "The request used more than its 10 s of CPU time (the service's per-request deadline) and was "
                      "stopped; nothing of it was kept.",
            "request_id": "4f1c2a9e8b7d46a0b3e5c6d7e8f90123", "cpu_deadline_seconds": 10.0, "hint": DEADLINE_HINT}),
         "edge": edge_example(503)}))
    spec.components.response(EDGE_RESPONSE, _problem_response(
        EDGE_DESCRIPTION, {f"edge_{status}": edge_example(status) for status in EDGE_PROBLEMS}))


def _schema_name(schema: Any) -> str:
    cls = schema if isinstance(schema, type) else type(schema)
    return cls.__name__


def property_names(converter, field, **kwargs) -> dict:
    """An apispec attribute function: a ``fields.Dict`` whose ``keys`` field is validated
    states it as ``propertyNames`` (apispec states only the values), e.g. the labels of 1-16
    characters that key a custom model's ``next`` rows."""
    if isinstance(field, fields.Dict) and field.key_field is not None:
        return {"propertyNames": converter.field2property(field.key_field)}
    return {}


def build_spec(blueprints: Iterable[Any]) -> APISpec:
    """The whole contract as an ``APISpec``: the shared components, then the
    tag, components and routes of each :class:`~.routes.ApiBlueprint` of
    ``blueprints`` in order (other blueprints are skipped)."""
    marshmallow = MarshmallowPlugin(schema_name_resolver=_schema_name)
    spec = APISpec(
        title=TITLE,
        version=__version__,
        openapi_version=OPENAPI_VERSION,
        plugins=[marshmallow],
        info={"description": DESCRIPTION, "license": {"name": "MIT", "identifier": "MIT"}},
        servers=SERVERS,
    )
    assert marshmallow.converter is not None  # made by APISpec's init_spec above
    marshmallow.converter.add_attribute_function(property_names)
    marshmallow.converter.add_attribute_function(trace_ref_attribute)
    _register_components(spec)
    api = [blueprint for blueprint in blueprints if isinstance(blueprint, ApiBlueprint)]
    tags: set[str] = set()
    for blueprint in api:
        if blueprint.tag not in tags:
            tags.add(blueprint.tag)
            spec.tag({"name": blueprint.tag, "description": blueprint.description})
    for blueprint in api:
        for name, schema, extra in blueprint.components:
            if isinstance(schema, dict):
                spec.components.schema(name, component={**schema, **(extra or {})})
            else:
                spec.components.schema(name, component=extra, schema=schema)
        paths: dict[str, dict] = {}
        for route in blueprint.routes:
            paths.setdefault(openapi_path(route.path), {})[route.method] = route.operation()
        for path, operations in paths.items():
            spec.path(path=path, operations=operations)
    schemas = {}
    for name, schema in spec.components.schemas.items():
        schemas.update(exactly_one_forms(name, schema))
    spec.components.schemas.clear()
    spec.components.schemas.update((name, _for_generators(name, schema)) for name, schema in schemas.items())
    return spec


def _for_generators(name: str, schema: dict) -> dict:
    """The component ``name`` with its name as ``title``, and, when it is another component
    under a name of its own (``{"$ref": ..., "description": ...}``, e.g. ``GradeTraceIn``),
    with the reference as ``allOf: [{"$ref": ...}]``: the same schema, which openapi-python-client
    types as the referenced model (a bare ``$ref`` component made it generate that model twice
    and drop the operations using it)."""
    rest = {k: v for k, v in schema.items() if k not in ("title", "$ref")}
    if "$ref" in schema:
        rest = {"allOf": [{"$ref": schema["$ref"]}], **rest}
    return {"title": name, **rest}


def _is_exactly_one(schema: dict) -> bool:
    """Whether ``schema`` is an object whose ``oneOf`` only requires one of its properties per branch."""
    branches = schema.get("oneOf")
    return (schema.get("type") == "object" and isinstance(branches, list) and len(branches) > 1
            and all(set(b) == {"required"} and len(b["required"]) == 1 and b["required"][0] in schema["properties"]
                    for b in branches))


def exactly_one_forms(name: str, schema: dict) -> dict[str, dict]:
    """The component ``name`` as generators can type it: ``{name: schema}`` unchanged, or, when
    ``schema`` is an object with ``oneOf: [{required: [a]}, {required: [b]}, ...]`` (exactly one
    of the properties ``a``, ``b``, ...), the same set of bodies as a ``oneOf`` of whole forms,
    one per branch: ``<Stem><A>In`` (``DistributionIn`` -> ``DistributionSamplesIn``,
    ``DistributionCountsIn``), each with every property but the other branches' ones and
    ``a`` required, ``additionalProperties`` as ``schema`` says (false: a body giving both is
    in neither form). The parser keeps checking ``schema`` itself (its messages name the field,
    e.g. "give exactly one of samples and counts"); tests/test_distribution_contract.py holds
    the two to the same verdicts."""
    if not _is_exactly_one(schema):
        return {name: schema}
    keys = [branch["required"][0] for branch in schema["oneOf"]]
    stem = name.removesuffix("In")
    base = {k: v for k, v in schema.items() if k != "oneOf"}
    forms = {}
    for key in keys:
        form = dict(base, properties={k: v for k, v in schema["properties"].items() if k == key or k not in keys},
                    required=[*schema.get("required", ()), key])
        form["description"] = f"{schema.get('description', '')} This form gives `{key}`.".strip()
        forms[stem + "".join(part.capitalize() for part in key.split("_")) + (name[len(stem):] or "")] = form
    union = {"description": f"{schema.get('description', '')} Exactly one of "
                            f"{' and '.join(f'`{k}`' for k in keys)}: one of the forms {', '.join(forms)}.".strip(),
             "oneOf": [{"$ref": f"#/components/schemas/{form}"} for form in forms]}
    return {name: union, **forms}


class _Dumper(yaml.SafeDumper):
    """YAML with multi-line strings as literal blocks (readable descriptions), and
    no anchors or aliases: a value shared by two schemas (a subclass's inherited
    field) is written out in each place."""

    def ignore_aliases(self, data):
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)
TOP_LEVEL_ORDER = ("openapi", "info", "servers", "tags", "paths", "components")


@lru_cache(maxsize=4)
def openapi_yaml(blueprints: tuple) -> str:
    """The contract of ``blueprints`` (a tuple, see :func:`build_spec`) as
    YAML text: deterministic, the top-level keys in :data:`TOP_LEVEL_ORDER`,
    every other key in the order written. Cached per tuple."""
    document = build_spec(blueprints).to_dict()
    ordered = {key: document[key] for key in TOP_LEVEL_ORDER if key in document}
    ordered.update((key, value) for key, value in document.items() if key not in ordered)
    return yaml.dump(ordered, Dumper=_Dumper, sort_keys=False, allow_unicode=False, width=100)


@lru_cache(maxsize=4)
def openapi_etag(blueprints: tuple) -> str:
    """The ``ETag`` of :func:`openapi_yaml` of ``blueprints``: the SHA-1 of its UTF-8 bytes."""
    return generate_etag(openapi_yaml(blueprints).encode("utf-8"))


def repository_openapi_path() -> Path:
    """``openapi.yaml`` at the root of the source checkout
    (``service/specdec_service/api/openapi.py`` is four levels below it)."""
    return Path(__file__).resolve().parents[3] / "openapi.yaml"
