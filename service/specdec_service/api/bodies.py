"""Reading request bodies and query strings: JSON in, validated dicts out.

- :func:`read_json` reads the body as JSON: ``Content-Type`` must be
  ``application/json`` (else 415); the size is capped by the request's
  ``max_content_length`` (the app's ``MAX_CONTENT_LENGTH``; a 413 problem,
  for a declared ``Content-Length`` and a chunked body alike, see
  :func:`read_body`); floats are parsed as
  :class:`decimal.Decimal` so a custom model's ``0.1`` is exactly 1/10
  (SPEC section 1; exponents beyond ±1000 are clamped, see
  :func:`parse_decimal`); ``NaN``/``Infinity`` literals, invalid UTF-8, integers
  of more than 4300 digits and nesting too deep for the parser are 400.
- :func:`load` checks a parsed body with a marshmallow schema and raises a
  422 :class:`~.problems.ApiProblem` whose ``errors`` point at each bad field.
- :func:`parse_with` runs the engine's own parser first and consults the
  schema only when the engine rejects the body (the hot path of
  ``POST /v1/step``, see its docstring).
- :func:`load_query` does the same for a query string (``errors`` name the
  ``parameter``); a repeated parameter is an error too.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Callable, Optional, TypeVar

from flask import request
from werkzeug.wsgi import get_content_length
from marshmallow import Schema, ValidationError

from ..engine import InvalidInput, pointer
from .problems import MALFORMED_JSON, ApiProblem, invalid, marshmallow_faults

T = TypeVar("T")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


EXPONENT_BOUND = 1000
"""JSON numbers beyond 10^±1000 are read as ±10^±1000 (see :func:`parse_decimal`)."""
_HUGE, _TINY = Decimal(f"1e{EXPONENT_BOUND}"), Decimal(f"1e-{EXPONENT_BOUND}")


def parse_decimal(text: str) -> Decimal:
    """A JSON number with a fraction or exponent, exactly as written.

    Only custom model rows hold such numbers, and the engine reads every
    probability above 999 as 1000 and every one finer than 1e-400 as 1e-400.
    An exponent beyond ±1000 (``1e-999999999``) is therefore read as
    ±1e±1000: no verdict changes, and no later arithmetic leaves the default
    decimal context (where such exponents overflow or build 10^999999999).
    """
    value = Decimal(text)
    exponent = value.adjusted()
    if exponent > EXPONENT_BOUND:
        return _HUGE.copy_sign(value)
    if exponent < -EXPONENT_BOUND and value:
        return _TINY.copy_sign(value)
    return value


_DECODER = json.JSONDecoder(parse_float=parse_decimal, parse_constant=_reject_constant)


def parse_json(data: bytes) -> Any:
    """Parse ``data`` as JSON with floats as Decimal. Raises :class:`ApiProblem` (400)."""
    try:
        return _DECODER.decode(data.decode("utf-8"))  # RFC 8259 section 8.1: JSON between systems is UTF-8
    except RecursionError:
        raise ApiProblem(400, "The JSON body is nested too deeply.", type=MALFORMED_JSON) from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, int digit limit, NaN
        raise ApiProblem(400, f"The body is not valid JSON: {error}.", type=MALFORMED_JSON) from None


def too_large(limit: int) -> ApiProblem:
    """The 413 problem of a body over ``limit`` bytes (the same detail as
    werkzeug's ``RequestEntityTooLarge`` gets from the error handler)."""
    return ApiProblem(413, f"The request body is larger than the limit of {limit} bytes.")


_READ_CHUNK = 64 * 1024


def read_body(limit: Optional[int]) -> bytes:
    """The raw request body, at most ``limit`` bytes (None: no limit).

    A declared ``Content-Length`` over ``limit`` is refused before reading;
    otherwise exactly that many bytes are read from ``wsgi.input`` (PEP 3333;
    werkzeug's ``get_data`` does the same through two stream wrappers, which
    cost ``POST /v1/step`` about 40 us, docs/bench-service.md), and a body
    that ends before them is a 400.
    A body without one (``Transfer-Encoding: chunked``) is read from the
    server's terminated input stream up to ``limit + 1`` bytes, so a body over
    the limit is a 413 as well (werkzeug would cut it at ``limit`` bytes and
    the truncated JSON would be a misleading 400). A server that does not
    terminate the stream (no ``wsgi.input_terminated``) gives an empty body,
    as werkzeug does. A stream the server cannot read (a malformed chunk, a
    client gone mid-body) is a 400. Raises :class:`ApiProblem` (400, 413).
    """
    environ = request.environ
    length = get_content_length(environ)
    if length is not None:
        if limit is not None and length > limit:
            raise too_large(limit)
        data = _read(environ["wsgi.input"], length, _READ_CHUNK)
        if len(data) < length:
            raise ApiProblem(400, f"The body ended after {len(data)} of the {length} bytes "
                                  "its Content-Length declares.", type=MALFORMED_JSON)
        return data
    if "wsgi.input_terminated" not in environ:
        return b""
    data = _read(environ["wsgi.input"], None if limit is None else limit + 1, _READ_CHUNK)
    if limit is not None and len(data) > limit:
        raise too_large(limit)
    return data


def _read(stream, size: Optional[int], chunk: int) -> bytes:
    """Up to ``size`` bytes of ``stream`` (None: to its end), ``chunk`` bytes a
    call: a stream may return fewer bytes than asked before its end. Any
    error of the server's stream (gunicorn raises its own parse errors for a
    malformed chunked body) is a 400 :class:`ApiProblem`."""
    data = bytearray()
    try:
        while size is None or len(data) < size:
            part = stream.read(chunk if size is None else min(chunk, size - len(data)))
            if not part:
                break
            data += part
    except Exception as error:  # noqa: BLE001 - whatever the server raises, the body is unreadable
        raise ApiProblem(400, f"The request body could not be read: {type(error).__name__}: {error}",
                         type=MALFORMED_JSON) from None
    return bytes(data)


def read_json() -> Any:
    """The request body as JSON (see the module docstring).

    Raises :class:`ApiProblem` (415; 413 over the request's
    ``max_content_length``, see :func:`read_body`; 400).
    """
    # The exact header is the common case; parsing it (werkzeug) handles
    # parameters and case, e.g. "Application/JSON; charset=utf-8".
    if request.environ.get("CONTENT_TYPE") != "application/json" and request.mimetype != "application/json":
        got = request.mimetype or "no Content-Type"
        raise ApiProblem(415, f"The body must be JSON with Content-Type application/json, not {got}.")
    return parse_json(read_body(request.max_content_length))


def load(schema: Schema, data: Any) -> dict:
    """``schema.load(data)``; a 422 :class:`ApiProblem` naming each bad field
    by its JSON pointer when the structure is wrong."""
    try:
        return schema.load(data)
    except ValidationError as error:
        raise invalid([{"pointer": pointer(f.path), "detail": f.message}
                       for f in marshmallow_faults(error.messages)]) from None


def parse_with(schema: Schema, data: Any, parse: Callable[[Any], T]) -> T:
    """``parse(data)`` (an engine parser such as ``parse_state``), with the
    schema's structural errors reported first when the body is invalid.

    The engine's parsers check every rule the schema states (types, bounds,
    required and unknown fields) and more, so for a body the engine accepts
    the schema's ``load`` would only repeat the work (it costs as much as
    the block itself); ``tests/test_api_problems.py`` checks that whatever
    the engine accepts the schema accepts too. When the engine rejects the
    body, :func:`load` runs first, so a structural fault is reported with
    the schema's message; otherwise the engine's faults are.
    """
    try:
        return parse(data)
    except InvalidInput:
        load(schema, data)
        raise


def load_query(schema: Schema) -> dict:
    """The query string checked by ``schema``; a 422 :class:`ApiProblem`
    naming each bad ``parameter``."""
    args = request.args
    repeated = [key for key in args if len(args.getlist(key)) > 1]
    if repeated:
        raise invalid([{"parameter": key, "detail": "is given more than once"} for key in repeated])
    try:
        return schema.load(args.to_dict())
    except ValidationError as error:
        raise invalid([{"parameter": str(f.path[0]) if f.path else "", "detail": f.message}
                       for f in marshmallow_faults(error.messages)]) from None
