"""Reading request bodies and query strings: JSON in, validated dicts out.

One JSON rule for every route (RFC 8259), in one place, :func:`parse_json`:

- its structure is bounded before anything reads it (:mod:`.structure`): at most 12 levels
  of nesting, at most the route's number of values (:data:`BODY_RULES`), number literals of at
  most 330 characters with an exponent of at most 9999 in size (400; 413 for the values);
- ``Content-Type`` is ``application/json`` (else 415), with no ``charset`` but
  ``utf-8`` (else 415); the body is UTF-8 without a byte order mark (section 8.1;
  else 400);
- no object repeats a name (section 4 leaves the meaning to each parser: a parser
  that keeps the last one disagrees with one that keeps the first, a known
  request-smuggling vector): 400 naming the name by its JSON Pointer;
- no string (key or value) holds a lone surrogate escape such as ``"\\ud800"``
  (section 8.2: not a Unicode scalar value; nothing downstream can encode it):
  400 naming it; a query string must be UTF-8 too (400);
- ``NaN``/``Infinity`` literals are 400;
- numbers are read as the route's entry of :data:`BODY_RULES` says, one of three readings:
  :data:`EXACT` (a number with a fraction or exponent is a :class:`decimal.Decimal`, exactly
  as written, so a custom model's ``0.1`` is exactly 1/10, SPEC section 1; exponents beyond
  ±1000 are clamped, see :func:`parse_decimal`), :data:`FLOAT64` (the grading routes: the
  nearest float64, and a number beyond its range, ``1e999``, an integer of 309 digits, is a
  422 naming it; read by orjson where :func:`parse_json_float64` vouches for the same value and
  :func:`fast_float64_pays` finds it cheaper, else by the exact float64 reading; the parts a
  route names, its configs, read as :data:`EXACT` when the float64 rounds a literal of theirs) and :data:`SHORTEST` (the session routes that read a whole state: float64
  where :func:`parse_json_shortest` vouches that each float's shortest decimal is the number
  written, so the engine reads the same numbers as :data:`EXACT`, else :data:`EXACT`). A number
  whose value is an integer is read as that ``int`` however it is written (``9.0``, ``9e0``),
  as JSON Schema counts it an integer: an integer field takes it, and echoes the integer.

- :func:`read_json` reads the body: the size is capped by the request's
  ``max_content_length`` (the app's ``MAX_CONTENT_LENGTH``, or the route's own
  cap; a 413 problem, for a declared ``Content-Length`` and a chunked body
  alike, see :func:`read_body`), its structure checked, its numbers read as the route's
  :data:`BODY_RULES` entry says, and the value passed to the view's parser.
- :func:`load` checks a parsed body with a marshmallow schema and raises a
  422 :class:`~.problems.ApiProblem` whose ``errors`` point at each bad field.
- :func:`load_query` does the same for a query string (``errors`` name the
  ``parameter``); a repeated parameter is an error too. A query string is flat (no nesting)
  and bounded by the request line (4094 bytes); its numbers are decimal integers read by
  their schema (a 422 otherwise).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache, partial
from json.decoder import scanstring  # type: ignore[attr-defined]  # public in json.decoder, untyped in typeshed
from typing import Any, Callable, Iterator, Optional, TypeVar, Union
from urllib.parse import unquote_to_bytes

from flask import request
from werkzeug.wsgi import get_content_length
from marshmallow import Schema, ValidationError

from ..engine import InvalidInput, pointer
from .problems import MALFORMED_JSON, STRUCTURE_BOUND, ApiProblem, invalid, marshmallow_faults
from .structure import MAX_NUMBER_CHARS, NUMBER_DETAIL, check_structure, number_fault

try:  # orjson is a dependency of the service; the exact path alone works without it
    import orjson
except ImportError:  # pragma: no cover
    orjson = None  # type: ignore[assignment]  # an optional module: every use checks for None

T = TypeVar("T")

EXACT = "exact decimals"
"""Numbers with a fraction or exponent as :class:`~decimal.Decimal`, exactly as written."""
FLOAT64 = "float64"
"""Numbers with a fraction or exponent as the nearest float64; beyond its range a 422. Read by
:func:`parse_json_float64` where it vouches for the same value and pays, else by :func:`parse_json`."""
SHORTEST = "shortest decimals"
"""float64 where each float's shortest decimal is the number written (:func:`parse_json_shortest`
vouches for it), else :data:`EXACT`: the same numbers for a parser that reads a float by its
shortest decimal (``engine.models.exact_ratio``), read without a Decimal per number."""


@dataclass(frozen=True)
class BodyRule:
    """How a route reads its JSON body: ``numbers`` (:data:`EXACT`, :data:`FLOAT64` or
    :data:`SHORTEST`) and ``max_values``, the most values a body may hold (array elements and
    object members, an empty array or object counting one; :mod:`.structure`)."""

    numbers: str
    max_values: int


SESSION_VALUES = 10_000
"""Values of a body of the session, run and analysis routes: the most a valid one holds is
9,025 (a ``POST /v1/verify`` of two 64-label custom models, a committed prefix of 256 tokens and
a proposal of 8 chains of 16 tokens, mode tree, all five ``sampling`` fields, a ``tree`` setting of 16
branchings), derived from the contract by
``tests/test_body_bounds.py``."""
BODY_RULES = {
    "/v1/draft": BodyRule(SHORTEST, SESSION_VALUES),
    "/v1/step": BodyRule(SHORTEST, SESSION_VALUES),
    "/v1/verify": BodyRule(EXACT, SESSION_VALUES),
    "/v1/runs": BodyRule(EXACT, SESSION_VALUES),
    "/v1/analysis": BodyRule(EXACT, SESSION_VALUES),
    # 8 MiB / 2: a trace's rows of 0s take 2 bytes a value ("0,"), so the byte limit is the bound
    "/v1/grade": BodyRule(FLOAT64, 4_194_304),
    # 10^6 samples of one 1-character label (6 bytes each) and the rest of 8 MiB as more labels
    # (4 bytes each): about 2,597,000 values
    "/v1/grade/distribution": BodyRule(FLOAT64, 2_700_000),
    # the same samples, whole sessions: the same bound on values
    "/v1/grade/samples": BodyRule(FLOAT64, 2_700_000),
}
"""The one place that says how each route reads its body (docs/service.md, "Numbers by
route"): the views only name their parser (:func:`read_json`). A route not listed reads as
:data:`DEFAULT_RULE`."""
DEFAULT_RULE = BodyRule(EXACT, SESSION_VALUES)
MAX_VALUES = max(rule.max_values for rule in BODY_RULES.values())
"""The values bound of :func:`parse_json` called outside a request."""


def body_rule() -> BodyRule:
    """The :data:`BODY_RULES` entry of the current request's route (:data:`DEFAULT_RULE` if none)."""
    rule = request.url_rule
    return BODY_RULES.get(rule.rule if rule is not None else "", DEFAULT_RULE)


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


EXPONENT_BOUND = 1000
"""JSON numbers beyond 10^±1000 are read as ±10^±1000 (see :func:`parse_decimal`)."""
_HUGE, _TINY = Decimal(f"1e{EXPONENT_BOUND}"), Decimal(f"1e-{EXPONENT_BOUND}")


def parse_decimal(text: str) -> Union[Decimal, int]:
    """A JSON number with a fraction or exponent, exactly as written: a
    :class:`~decimal.Decimal`, or the ``int`` when its value is an integer
    (``9.0``, ``9e0``, ``-0.0``: JSON Schema counts them integers, so an integer
    field takes them, and a probability ``1.0`` is exactly 1 either way).

    Only custom model rows hold such numbers, and the engine reads every
    probability above 999 as 1000 and every one finer than 1e-400 as 1e-400.
    An exponent beyond ±1000 (``1e-9999``) is therefore read as ±1e±1000: no verdict
    changes, and no later arithmetic leaves the default decimal context (where such
    exponents overflow or build 10^9999). Raises :class:`_Beyond` for a literal beyond the
    bound of :mod:`.structure` (more than 330 characters, an exponent beyond 9999: its
    value's exponent is then beyond ±1000 too, or ``Decimal`` cannot hold it at all).
    """
    if len(text) > MAX_NUMBER_CHARS:
        raise _Beyond(text)
    try:
        value = Decimal(text)
    except InvalidOperation:  # an exponent of 10^18 or more
        raise _Beyond(text) from None
    exponent = value.adjusted()
    if not -EXPONENT_BOUND <= exponent <= EXPONENT_BOUND:
        if number_fault(text):
            raise _Beyond(text)
        if exponent > 0:
            value = _HUGE.copy_sign(value)
        elif value:
            return _TINY.copy_sign(value)
    if exponent >= 0:  # |value| >= 1: an integer if it has no fraction
        return int(value) if value == value.to_integral_value() else value
    return value if value else 0  # below 1 in size: only zero (0.0, -0.0, 0e5) is an integer


def parse_integer(text: str) -> int:
    """A JSON integer; raises :class:`_Beyond` for one of more than 330 characters."""
    if len(text) > MAX_NUMBER_CHARS:
        raise _Beyond(text)
    return int(text)


def parse_float64(text: str) -> Union[float, int]:
    """A JSON number with a fraction or exponent as the nearest float64, or the ``int`` when
    that is an integer (as :func:`parse_decimal`). Raises :class:`_OutOfRange` for a number
    beyond the float64 range (``1e999``), which :func:`parse_json` refuses (422), and
    :class:`_Beyond` for a literal beyond the bound of :mod:`.structure` (400)."""
    return _float64_literal(None, text)


def _float64_literal(rounded: Optional[list], text: str) -> Union[float, int]:
    """:func:`parse_float64` of ``text``; with ``rounded``, its value appended to it when the
    float64 rounds the literal (:func:`carries`: one hook for both, as a second Python call per
    number cost a tenth more of an 8 MiB body's reading). A literal of at most 16 characters
    without an exponent is carried for its shape alone, unchecked: at most 15 significant digits
    within 1e-14..1e15 (the shortest decimal of its float64: DBL_DIG), or an integer of at most
    14 digits."""
    if len(text) > MAX_NUMBER_CHARS:
        raise _Beyond(text)
    value = float(text)
    if value.is_integer():
        if not value and ("e" in text or "E" in text) and number_fault(text):  # 1e-99999 is 0.0
            raise _Beyond(text)
        whole = int(value)
        if rounded is not None and (len(text) > 16 or "e" in text or "E" in text) and \
                not (text[-2:] == ".0" and text[:-2] == str(whole)) and Decimal(text) != whole:
            rounded.append(whole)
        return whole
    if value in (_INF, _MINUS_INF):
        raise _Beyond(text) if number_fault(text) else _OutOfRange(text)
    if rounded is not None and (len(text) > 16 or "e" in text or "E" in text) and text != repr(value) and \
            Decimal(text) != Decimal(repr(value)):
        rounded.append(value)
    return value


def carries(text: str, value: Union[float, int]) -> bool:
    """Whether ``value``, :func:`parse_float64`'s reading of the literal ``text``, is the number
    :func:`parse_decimal` reads from it, as the engine reads a float (by its shortest decimal,
    ``engine.models.exact_ratio``): an integral ``value`` the very integer written, any other
    the float64 whose shortest decimal is the decimal written. False for a literal the float64
    rounds (``0.05000000000000000001``, ``1e-400``, which is 0.0, ``9007199254740993.0``). Cheap
    when ``text`` is the float's ``repr`` or an integer written with ``.0``."""
    if type(value) is int:
        return text[-2:] == ".0" and text[:-2] == str(value) or Decimal(text) == value
    return text == repr(value) or Decimal(text) == Decimal(repr(value))


def parse_int64(text: str) -> int:
    """A JSON integer; raises :class:`_OutOfRange` when it is beyond the float64 range
    (309 digits or more), for a route that reads numbers as float64, and :class:`_Beyond`
    for one of more than 330 characters."""
    value = parse_integer(text)
    if len(text) > 308:
        try:
            float(value)
        except OverflowError:
            raise _OutOfRange(text) from None
    return value


_INF, _MINUS_INF = float("inf"), float("-inf")


class _OutOfRange(Exception):
    """A number beyond float64 in a float64 parse: raised while parsing, and kept as a
    marker in the document by the second parse that locates it (:func:`_located_problem`)."""


class _Beyond(Exception):
    """A number literal beyond the bound of :mod:`.structure`: raised while parsing, and kept as
    a marker like :class:`_OutOfRange`."""


class _DuplicateKey(Exception):
    """Raised by :func:`_unique_object` while parsing (located by :func:`_located_problem`)."""


def _unique_object(pairs: list) -> dict:
    """The ``object_pairs_hook`` of every parse: an object whose names repeat is refused."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


class _Pairs(list):
    """An object as its list of (name, value) pairs (only to locate a repeated name)."""


_DECIMAL = json.JSONDecoder(parse_float=parse_decimal, parse_int=parse_integer, parse_constant=_reject_constant,
                            object_pairs_hook=_unique_object)
_FLOAT64 = json.JSONDecoder(parse_float=partial(_float64_literal, None), parse_int=parse_int64, parse_constant=_reject_constant,
                            object_pairs_hook=_unique_object)


def _float64_noting(rounded: list) -> json.JSONDecoder:
    """The :data:`FLOAT64` reading that appends to ``rounded`` the value of each number literal
    it rounds (:func:`_float64_literal`)."""
    return json.JSONDecoder(parse_float=partial(_float64_literal, rounded), parse_int=parse_int64,
                            parse_constant=_reject_constant, object_pairs_hook=_unique_object)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
BOM = b"\xef\xbb\xbf"


def parse_json(data: bytes, exact: bool = True, max_values: int = MAX_VALUES) -> Any:
    """Parse ``data`` under the one JSON rule of every route (RFC 8259; the module docstring).

    - first its structure (:func:`.structure.check_structure`): nesting, at most ``max_values``
      values, number literals (400, 413);
    - UTF-8 without a byte order mark (RFC 8259 section 8.1), else 400;
    - no ``NaN``/``Infinity``, no object with a repeated name (section 4 leaves its meaning
      to the parser, a known request-smuggling vector), no lone surrogate escape such as
      ``"\\ud800"`` (section 8.2: not a Unicode scalar value), in names and values alike: 400,
      the repeated name or the string named by its JSON Pointer in ``errors``;
    - a number whose value is an integer is an ``int``, however written (``9.0``, ``9e0``);
    - ``exact`` (every route but the grading routes): other numbers with a fraction or
      exponent as :class:`~decimal.Decimal`, exponents beyond ±1000 clamped
      (:func:`parse_decimal`); otherwise as float64 (:func:`parse_float64`), and a number
      beyond the float64 range (``1e999``, an integer of 309 digits) is a 422 naming it.

    Raises :class:`ApiProblem` (400, 413, 422). The checks cost little on a body that breaks
    none of them: one ``dict`` per object (about 1 us a ``POST /v1/step``), a substring
    search; a faulty body is parsed a second time to name the fault.
    """
    check_structure(data, max_values)
    return _parse(data, exact)


def _parse(data: bytes, exact: bool, rounded: Optional[list] = None) -> Any:
    """:func:`parse_json` of a body whose structure was checked; with ``rounded`` (a float64
    reading), the value of each literal the float64 rounds appended to it (:func:`carries`)."""
    if data[:3] == BOM:
        raise ApiProblem(400, "The body starts with a byte order mark: JSON between systems is UTF-8 "
                              "without one (RFC 8259 section 8.1).", type=MALFORMED_JSON)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiProblem(400, f"The body is not UTF-8 (byte {error.start}: {error.reason}); JSON between "
                              "systems is UTF-8 (RFC 8259 section 8.1).", type=MALFORMED_JSON) from None
    try:
        decoder = _DECIMAL if exact else _FLOAT64 if rounded is None else _float64_noting(rounded)
        value = decoder.decode(text)
    except (_OutOfRange, _Beyond):
        raise _number_problem(data, text, exact) or _located_problem(text, exact) from None
    except _DuplicateKey:
        raise _located_problem(text, exact) from None
    except RecursionError:
        raise ApiProblem(400, "The JSON body is nested too deeply.", type=MALFORMED_JSON) from None
    except ValueError as error:  # JSONDecodeError, int digit limit, NaN
        raise ApiProblem(400, f"The body is not valid JSON: {error}.", type=MALFORMED_JSON) from None
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        found = _locate(value, _lone_surrogate)
        if found is not None:
            where = pointer(found[0])
            what = "The string at" if found[1] == "string" else "A name in the object at"
            raise ApiProblem(400, f"{what} {where} holds a lone surrogate escape (such as \\ud800): it is not "
                                  "a Unicode character (RFC 8259 section 8.2).", type=MALFORMED_JSON,
                             errors=[{"pointer": where, "detail": f"{what[:-3].lower()} holds a lone surrogate "
                                                                  "(\\ud800-\\udfff outside a valid pair)"}])
    return value


_WHITESPACE = b" \t\n\r"
_NUMBER_SHAPE = bytes.maketrans(b"0123456789.E", b"d" * 11 + b"e")
"""Digits and points as ``d``, ``E`` as ``e`` (signs are deleted too): a number of 16 or more
significant digits shows as a run of 16 ``d``, a 3-digit exponent as ``eddd``."""


def parse_json_shortest(data: bytes) -> Optional[Any]:
    """``data`` read fast, with each number that has a fraction or exponent as the float64
    whose shortest decimal (``repr``) is exactly the number written, or ``None`` when this
    reading cannot vouch for that (then :func:`parse_json` is the reading).

    For a body it returns a value for, the value is :func:`parse_json`'s except that each
    such number is that float: where :func:`parse_json` has the equal
    :class:`~decimal.Decimal`, or the equal ``int`` for an integral one (``1.0``). The
    engine reads a float by its shortest decimal (``engine.models.exact_ratio``), writes an
    integral one back as an integer, and refuses a float where it wants an integer (then
    :func:`read_json` asks the exact path); so both read as the same numbers. It returns
    ``None`` for every body within the structure bounds (:mod:`.structure`, which
    :func:`read_json` checks first) that :func:`parse_json` refuses, and for a body it cannot
    vouch for:
    orjson (RFC 8259, UTF-8, no NaN, no lone surrogate) parses ``data`` and writes the
    value back compactly, and the value is vouched for when either

    - the body is what orjson writes back, whitespace aside: every number is written as
      its float64's shortest decimal (JavaScript's ``JSON.stringify`` and orjson write
      them so, and the service echoes states so), and no name repeats (a repeated name
      would be missing from what is written back); or
    - the body has no backslash escape, as many ``:`` as what is written back (so no name
      repeats), and no number of 16 or more significant digits or with a 3-digit exponent
      (checked conservatively, on the bytes, signs left out: a run of 16 digits or points
      anywhere, a string included, or an ``e``/``E`` followed by three digits, sends the
      body to the exact path; every check is linear and runs in C): a
      decimal of at most 15 significant digits within 1e-115..1e115 is the shortest
      decimal of its nearest float64, which orjson's correctly rounded parse gives. This
      admits Python's ``json.dumps``, which writes ``7.7e-05`` where orjson writes
      ``0.000077``.

    Either way no literal beyond the number bound of :mod:`.structure` is vouched for (orjson
    writes at most 17 digits and 3-digit exponents; the second case refuses both more).

    ``tests/test_fast_json.py`` checks these claims against :func:`parse_json` with
    hypothesis. Cost for an 84 KB state of two 64-label models: about 0.4 ms (the exact
    reading: about 5 ms, a Decimal per number).
    """
    if orjson is None or data[:3] == BOM:
        return None
    try:
        value = orjson.loads(data)
        written = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # not JSON; nested past orjson's limits
        return None
    if data == written or data.translate(None, _WHITESPACE) == written.translate(None, _WHITESPACE):
        return value
    if b"\\" in data or data.count(b":") != written.count(b":"):
        return None
    shape = data.translate(_NUMBER_SHAPE, b"+-")  # linear, in C, whatever the body holds
    if b"d" * 16 in shape or b"eddd" in shape:
        return None
    return value


_FLOAT_SHAPE = bytes(ord("d") if b in b"0123456789." else ord("e") if b in b"eE" else ord("q") if b == ord('"')
                     else ord("_") for b in range(256))
"""Digits and points as ``d``, ``e``/``E`` as ``e``, quotes as ``q``, every other byte as ``_``
(signs are deleted too): a number literal beyond the bound of :mod:`.structure` (more than 330
characters, an exponent of five digits or more) shows as a run of 300 ``d`` or as ``eddddd``."""
_BEYOND_SHAPES = (b"d" * 300, b"eddddd")


def parse_json_float64(data: bytes) -> Optional[Any]:
    """``data`` read fast (orjson, in C) exactly as ``parse_json(data, exact=False)`` reads it,
    or ``None`` when this reading cannot vouch for that (then :func:`parse_json` is the reading,
    and names the fault of a refused body). :data:`FLOAT64`, the grading routes' reading.

    It returns a value only for a body within the structure bounds (:mod:`.structure`, which
    :func:`read_json` checks first) that :func:`parse_json` accepts, and then the same value:
    the same types (an integral number an ``int`` however written), the same numbers. orjson
    parses ``data`` (RFC 8259, UTF-8, no NaN or Infinity, no lone surrogate: else ``None``) and
    writes the value back compactly (``written``); the reading is vouched for when

    - no name repeats: ``written`` has as many ``:`` as ``data`` plus its ``\\u003a`` escapes (a
      repeated name is missing from ``written``, its ``:`` with it; :func:`_names_unique`);
    - no number literal is beyond the bound of :mod:`.structure`, checked on the bytes
      (:func:`_literals_within_bound`; conservatively: a run of 300 digits or an exponent of
      five digits, even with leading zeros, sends the body to the exact path);
    - no float is 1e16 or more in size (``written`` holds no ``e+``: orjson reads an integer
      beyond 64 bits as such a float, where the rule reads an ``int``, or names it beyond
      float64; conservatively, a string holding ``e+`` sends the body to the exact path too);
    - every other integral float (written ``9.0`` by orjson) becomes an ``int``:
      :func:`_integral_as_int`.

    orjson's float parse is correctly rounded, as Python's ``float``. ``tests/test_fast_json.py``
    checks these claims against :func:`parse_json` with hypothesis. Cost: C-speed passes over
    the bytes, no Python per value (an 8 MiB body: tenths of the exact reading's time,
    docs/service.md).
    """
    read = _float64_vouched(data)
    if read is None or not _literals_carried(data, read[1]):
        return None
    return read[0]


def _float64_vouched(data: bytes) -> Optional[tuple[Any, bytes]]:
    """``(value, written)``: orjson's reading of ``data`` with every check of
    :func:`parse_json_float64` but :func:`_literals_carried` (each float the nearest float64 of
    its literal, as the :data:`FLOAT64` reading has it), and its compact writing; or ``None``."""
    if orjson is None or data[:3] == BOM:
        return None
    try:
        value = orjson.loads(data)
        written = orjson.dumps(value)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # not JSON (or refused: the exact path says why)
        return None
    if not _names_unique(data, written) or b"e+" in written or not _literals_within_bound(data, written):
        return None
    value = _integral_as_int(value, written)
    return None if value is None else (value, written)


def _literals_carried(data: bytes, written: bytes) -> bool:
    """Whether no number literal of ``data`` is rounded by its float64 (:func:`carries`), given
    ``written``, orjson's writing of its value (each float its shortest decimal): ``data`` is
    ``written``, whitespace aside; or, its strings cut out, no literal of ``data`` has 16 or more
    digits and points in a row or a 3-digit exponent (conservatively: a decimal of at most 15
    significant digits within 1e-99..1e99 is the shortest decimal of its float64, and an
    integer of at most 15 digits is a float64)."""
    if data.translate(None, _WHITESPACE) == written.translate(None, _WHITESPACE):
        return True
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in data else data
    shape = b"".join(unescaped.split(b'"')[::2]).translate(_NUMBER_SHAPE, b"+-")
    return b"d" * 16 not in shape and b"eddd" not in shape


def _literals_within_bound(data: bytes, written: bytes) -> bool:
    """Whether no number literal of ``data`` is beyond the bound of :mod:`.structure`, given
    ``written`` (orjson's writing of its value, whose numbers are short: at most 24 characters,
    3-digit exponents). In :data:`_FLOAT_SHAPE` such a literal shows as one of
    :data:`_BEYOND_SHAPES`; so may a string (a hex draw ``"8e74616..."``). A body without a
    backslash has the very strings of ``written`` (orjson escapes only quotes, backslashes and
    control characters, which such a body cannot hold in a string), each between quotes
    (``q``), so it holds a literal beyond the bound iff its shape holds more of them than
    ``written``'s. A body with escapes is checked with its strings cut out."""
    shape = data.translate(_FLOAT_SHAPE, b"+-")
    if not any(beyond in shape for beyond in _BEYOND_SHAPES):
        return True
    if b"\\" not in data:
        strings = written.translate(_FLOAT_SHAPE, b"+-")
        return all(shape.count(beyond) == strings.count(beyond) for beyond in _BEYOND_SHAPES)
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")  # every '"' left delimits a string
    outside = b" ".join(unescaped.split(b'"')[::2]).translate(_FLOAT_SHAPE, b"+-")
    return not any(beyond in outside for beyond in _BEYOND_SHAPES)


def fast_float64_pays(data: bytes) -> bool:
    """Whether :func:`parse_json_float64` is likely cheaper than the exact reading for ``data``
    (only a choice of speed: both give the same value). The exact reading costs about 20 ns a
    byte plus a Python hook per object and per number (about 150 ns each); the fast one about
    20 ns a byte whatever the body holds, twice that when integral floats (``1.0``) make it read
    the body again (:func:`_integral_as_int`). Measured on 8 MiB bodies (docs/bench-grading.md):
    10^6 sampled outputs ``[["A"], ...]`` read exactly in 0.12 s, fast in 0.21 s; 2.7 million
    ints exactly in 0.48 s, fast in 0.11 s; 1000 toy traces (with ``1.0`` and ``0.0``) exactly in
    0.15 s, fast in 0.20 s. The hooks are estimated on the bytes: objects (``{``) plus numbers
    (a digit or sign after a structural byte or whitespace, strings' digits after a space or a
    non-hex letter counted too), unless a bound on them (the ``,``, ``:``, ``[`` and ``{``)
    settles it in one cheaper pass."""
    fast_costs = len(data) * (2 if b".0" in data else 1)
    # every object has a "{" and every number but a lone one follows a ",", ":" or "[": a bound
    # in one pass, which settles a body of traces without the estimate
    if 8 * (len(data) - len(data.translate(None, b",:[{")) + 1) <= fast_costs:
        return False
    hooks = data.count(b"{") + data.translate(_FLOAT_SHAPE, b"+-").count(b"_d")
    return 8 * hooks > fast_costs


def _names_unique(data: bytes, written: bytes) -> bool:
    """Whether no object of ``data`` repeats a name, given ``written``, orjson's compact writing
    of its value (which keeps one member per name). Each member of ``data`` has one ``:`` outside
    strings, strings keep theirs, and a ``\\u003a`` escape is a ``:`` in ``written``; counting
    every ``\\u003a`` as one (an escaped backslash before ``u003a`` is none), ``written`` holds
    as many ``:`` only if no member was dropped and each counted escape was one."""
    escaped = data.count(b"\\u003a") + data.count(b"\\u003A") if b"\\u" in data else 0
    return written.count(b":") == data.count(b":") + escaped


def _integral_as_int(value: Any, written: bytes) -> Optional[Any]:
    """``value`` (orjson's reading, ``written`` its compact writing, no ``e+`` in it) with every
    integral float as an ``int``, or ``None``. orjson writes a float below 1e16 in size that is an
    integer as ``9.0``, always followed by ``,``, ``]``, ``}`` or the end: those ``.0`` are cut
    and the result read again. A string holding such bytes would be cut too: the new reading is
    kept only if it equals ``value`` (``1 == 1.0``, a changed string is unequal)."""
    if b".0" not in written:
        return value
    ints = written.replace(b".0,", b",").replace(b".0]", b"]").replace(b".0}", b"}")
    if ints.endswith(b".0"):
        ints = ints[:-2]
    if len(ints) == len(written):
        return value
    retyped = orjson.loads(ints)
    return retyped if retyped == value else None


def _lone_surrogate(node: Any) -> Optional[tuple[tuple, str]]:
    if isinstance(node, str):
        return ((), "string") if _SURROGATE.search(node) else None
    if isinstance(node, dict):
        # named by the object's pointer: a pointer holding the surrogate could not be written
        return next((((), "name") for key in node if _SURROGATE.search(key)), None)
    return None


def _locate(document: Any, fault: Callable[[Any], Optional[tuple[tuple, str]]]) -> Optional[tuple[tuple, str]]:
    """``(path, what)`` of the first fault in ``document`` (in document order): ``fault(node)``
    gives ``(path suffix, what)`` for a faulty node (an object, array, name or leaf), else
    ``None``. Iterative, so a document as deep as the parser allows cannot overflow the stack."""
    stack: list = [((), document)]
    while stack:
        path, node = stack.pop()
        found = fault(node)
        if found is not None:
            return path + found[0], found[1]
        if isinstance(node, _Pairs):
            stack.extend(reversed([(path + (key,), child) for key, child in node]))
        elif isinstance(node, dict):
            stack.extend(reversed([(path + (key,), child) for key, child in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(path + (i,), child) for i, child in enumerate(node)]))
    return None


def _repeated_or_beyond(node: Any) -> Optional[tuple[tuple, str]]:
    if isinstance(node, _Pairs):
        seen: set = set()
        for key, _ in node:
            if key in seen:
                return (key,), "duplicate"
            seen.add(key)
    elif isinstance(node, _OutOfRange):
        return (), "beyond"
    elif isinstance(node, _Beyond):
        return (), "long"
    return None


_SUSPECT_NUMBER = re.compile(rb"-?[0-9][0-9.]*[eE][-+]?[0-9]{3,}|-?[0-9][0-9.]{299,}(?:[eE][-+]?[0-9]+)?")
"""A number literal that may be beyond float64 or beyond the bound of :mod:`.structure`: an
exponent of three digits or more, or 300 digits and points or more (no shorter literal is)."""
_SUSPECT_SHAPE = bytes(ord("d") if b in b"0123456789." else ord("e") if b in b"eE" else ord("s") if b in b"+-"
                       else ord("_") for b in range(256))
"""Digits and points as ``d``, ``e``/``E`` as ``e``, signs as ``s``, every other byte as ``_``: a
suspect literal (:data:`_SUSPECT_NUMBER`) shows as ``eddd``, ``esddd`` or 300 ``d``."""
_SUSPECT_SHAPES = (b"eddd", b"esddd", b"d" * 300)
_SKIP_ANY = json.JSONDecoder(parse_int=str)
"""Plain ``json`` that also passes over an integer of any length (``int`` refuses 4,300 digits)."""


def _number_problem(data: bytes, text: str, exact: bool) -> Optional[ApiProblem]:
    """The problem of the first number literal of ``data`` (``text`` decoded) beyond float64
    (422; only when not ``exact``) or beyond the bound of :mod:`.structure` (400), named by its
    JSON Pointer, found without reading the body's values in Python: the bytes' shape
    (:data:`_SUSPECT_SHAPE`, in C) says where suspect literals may be (:func:`_suspects`), each
    distinct one outside a string is read, the first its reading refuses is the fault, and
    :func:`_path_at` names its place. ``None`` when there is none or it cannot say (then the
    reading, or :func:`_located_problem`, the walk of the whole document, names the fault).
    Costs a translate and about a plain ``json`` reading of the body twice over, at most (an 8
    MiB body of traces whose every row entry is ``1e400`` was refused in 5 s by the walk)."""
    read = parse_decimal if exact else parse_float64
    quotes, scanned, fine = 0, 0, set()
    for start, literal in _suspects(data):
        quotes += _quotes(data, scanned, start)
        scanned = start
        if quotes % 2 or literal in fine:
            continue  # inside a string, or read before
        try:
            read(literal.decode("ascii"))
            fine.add(literal)
            continue
        except _OutOfRange:
            beyond = False
        except _Beyond:
            beyond = True
        try:
            path = _path_at(text, len(data[:start].decode("utf-8")))
        except (ValueError, IndexError):  # not JSON before the fault: the reading says so
            return None
        return None if path is None else _number_fault(pointer(path), beyond)
    return None


def _suspects(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(offset, literal)`` of each suspect literal of ``data`` (:data:`_SUSPECT_NUMBER`, strings
    included) in order: the regular expression runs only near where the shape shows one (a run
    of 300 digits or an exponent of three digits starts within the bound of its literal's start),
    each shape's next place found once, in C."""
    shape = data.translate(_SUSPECT_SHAPE)
    following = {suspect: shape.find(suspect) for suspect in _SUSPECT_SHAPES}
    position = 0
    while True:
        for suspect, found in following.items():
            if 0 <= found < position:
                following[suspect] = shape.find(suspect, position)
        places = [found for found in following.values() if found >= 0]
        if not places:
            return
        first = min(places)
        start = max(position, first - MAX_NUMBER_CHARS - 10)
        while start > position and data[start - 1:start] == b"\\":
            start -= 1  # a run of backslashes is counted whole
        # within a window (a literal cut by its end is still beyond the bound): a shape in a
        # string (a hex draw's "ae123") has no literal, and the next one may be megabytes on
        match = _SUSPECT_NUMBER.search(data, start, first + 2 * MAX_NUMBER_CHARS + 10)
        if match is None:
            position = first + 1
            continue
        yield match.start(), match.group()
        position = match.end()


def _quotes(data: bytes, start: int, end: int) -> int:
    """How many unescaped ``"`` ``data[start:end]`` holds (``start`` outside an escape)."""
    part = data[start:end]
    if b"\\" not in part:
        return part.count(b'"')
    unescaped = part.replace(b"\\\\", b"")
    return unescaped.count(b'"') - unescaped.count(b'\\"')


def _first_number_fault(data: bytes) -> Optional[ApiProblem]:
    """:func:`_number_problem` of the :data:`FLOAT64` reading of ``data``, a body the fast reading
    did not vouch for, before its exact reading: the problem of its first number literal beyond
    float64 or beyond the bound, or ``None`` (none, or the body is not UTF-8 JSON up to it: then
    the exact reading names the fault). One regular-expression pass on a body without such a
    literal; a body with one is refused for about a plain ``json`` reading instead of the exact
    one, which calls Python for every number (8 MiB of traces whose last entry is ``1e400``)."""
    if data[:3] == BOM:
        return None
    try:
        return _number_problem(data, data.decode("utf-8"), exact=False)
    except UnicodeDecodeError:
        return None


def _path_at(text: str, offset: int) -> Optional[tuple]:
    """The path of the value starting at ``offset`` of the JSON text ``text``: from the top, each
    container's members are passed over by ``json``'s C scanner (:data:`_SKIP_ANY`) until the one
    holding ``offset``. ``None`` if no value starts there."""
    path: tuple = ()
    index = _SPACE.match(text, 0).end()  # type: ignore[union-attr]  # matches the empty string
    while index != offset:
        opening = text[index]
        if opening not in "{[":
            return None
        index, position = _SPACE.match(text, index + 1).end(), 0  # type: ignore[union-attr]  # as above
        while True:
            key: Any = position
            if opening == "{":
                key, index = scanstring(text, index + 1)
                index = _SPACE.match(text, _SPACE.match(text, index).end() + 1).end()  # type: ignore[union-attr]  # past ':'
            end = index if index == offset else _SKIP_ANY.scan_once(text, index)[1]  # type: ignore[attr-defined]  # the scanner json.decoder builds
            if end > offset or index == offset:
                path += (key,)
                break
            index = _SPACE.match(text, end).end()  # type: ignore[union-attr]  # as above
            if text[index] != ",":
                return None
            index, position = _SPACE.match(text, index + 1).end(), position + 1  # type: ignore[union-attr]  # as above
    return path


def _number_fault(where: str, beyond: bool) -> ApiProblem:
    """The problem of the number literal at ``where``: beyond the bound of :mod:`.structure`
    (400) or, ``beyond`` false, beyond float64 on a route that reads float64 (422)."""
    if beyond:
        return ApiProblem(400, f"The number literal at {where} is beyond the bound: {NUMBER_DETAIL} "
                               "(docs/service.md).", type=STRUCTURE_BOUND, errors=[{"pointer": where, "detail": NUMBER_DETAIL}])
    return invalid([{"pointer": where, "detail": "is beyond the float64 range (about 1.8e308): "
                                                 "this route reads numbers as float64"}])


def _located_problem(text: str, exact: bool) -> ApiProblem:
    """The problem of a body whose parse met a repeated name (400), a number literal beyond the
    bound (400) or a number beyond float64 (422): parsed again, keeping each object's pairs and
    marking such numbers, to name the first one by its JSON Pointer (values in the order they
    start: an object's own repeated name before anything inside it)."""
    def mark(parse):
        def marked(literal: str):
            try:
                return parse(literal)
            except (_OutOfRange, _Beyond) as fault:
                return fault
        return marked

    numbers = {"parse_float": mark(parse_decimal), "parse_int": mark(parse_integer)} if exact else \
        {"parse_float": mark(parse_float64), "parse_int": mark(parse_int64)}
    try:
        document = json.JSONDecoder(object_pairs_hook=_Pairs, parse_constant=str, **numbers).decode(text)
    except RecursionError:
        return ApiProblem(400, "The JSON body is nested too deeply.", type=MALFORMED_JSON)
    except ValueError as error:  # a syntax error after the fault
        return ApiProblem(400, f"The body is not valid JSON: {error}.", type=MALFORMED_JSON)
    located = _locate(document, _repeated_or_beyond)
    if located is None:  # not reached: the first parse met such a fault
        return ApiProblem(400, "The body is not valid JSON.", type=MALFORMED_JSON)
    path, what = located
    where = pointer(path)
    if what in ("long", "beyond"):
        return _number_fault(where, what == "long")
    key, parent = path[-1], pointer(path[:-1])
    return ApiProblem(400, f"The name {key!r} appears more than once in the object at {parent}: names must "
                           "be unique (RFC 8259 section 4; parsers disagree on which one wins).",
                      type=MALFORMED_JSON, errors=[{"pointer": where, "detail": f"duplicate name {key!r}"}])


def too_large(limit: int) -> ApiProblem:
    """The 413 problem of a body over ``limit`` bytes (the same detail as
    werkzeug's ``RequestEntityTooLarge`` gets from the error handler)."""
    return ApiProblem(413, f"The request body is larger than the limit of {limit} bytes.")


_READ_CHUNK = 64 * 1024


def read_body(limit: Optional[int], environ: Optional[dict] = None) -> bytes:
    """The raw request body, at most ``limit`` bytes (None: no limit); ``environ`` is the
    request's WSGI environment (default: the current request's).

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
    if environ is None:
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


JSON_MIMETYPE = "application/json"


def read_json(parse: Callable[[Any], T] = lambda value: value, max_bytes: Optional[int] = None,
              exact_at: Optional[Callable[[Any], list[tuple]]] = None) -> T:
    """``parse`` of the request body read as JSON under the one JSON rule (:func:`parse_json`),
    its numbers read as the route's entry of :data:`BODY_RULES` says (:func:`body_rule`).

    ``Content-Type`` must be ``application/json`` (parameters and case aside), with no
    ``charset`` but ``utf-8``; ``max_bytes`` (default: the request's ``max_content_length``,
    the app's ``MAX_CONTENT_LENGTH``) caps the body. With :data:`SHORTEST`, ``parse`` (an
    engine parser that takes float64s by their shortest decimal, such as ``parse_state``) reads
    :func:`parse_json_shortest`'s value when it vouches for the body and ``parse`` accepts it;
    otherwise the exact value, so that every refusal (400, 422) and its message come from the
    one exact path. With :data:`FLOAT64`, ``exact_at(value)`` names the parts (paths) read as
    :data:`EXACT` reads them whenever the float64 rounds a literal of theirs: a grading body's
    configs, so that a config's numbers have one reading on every route (:func:`_read_float64`).

    Raises :class:`ApiProblem` (415; 413 over the cap, see :func:`read_body`, or over the
    route's values; 400; 422) and what ``parse`` raises.
    """
    rule = body_rule()
    data = _checked_body(max_bytes)
    check_structure(data, rule.max_values)
    if rule.numbers == FLOAT64:
        return parse(_read_float64(data, exact_at))
    if rule.numbers == SHORTEST:
        fast = parse_json_shortest(data)
        if fast is not None:
            try:
                return parse(fast)
            except InvalidInput:
                pass  # the exact path names the fault
    return parse(_parse(data, exact=rule.numbers != FLOAT64))


def _read_float64(data: bytes, exact_at: Optional[Callable[[Any], list[tuple]]]) -> Any:
    """``data`` under the :data:`FLOAT64` reading (fast where :func:`fast_float64_pays` and
    :func:`parse_json_float64` vouches, else the exact float64 path), except the parts at the
    paths ``exact_at(value)`` gives (a grading body's configs), which are read as
    :data:`EXACT` reads them whenever a literal of theirs may be one the float64 rounds: so a
    config's numbers are read by one rule on every route (``1e-400`` is not 0 anywhere)."""
    if fast_float64_pays(data):
        read = _float64_vouched(data)
        if read is not None:
            value, written = read
            if exact_at is None or _literals_carried(data, written):
                return value  # no literal is rounded: the exact parts read the same
            return _exact_where_rounded(data, value, exact_at, _rounded_values(data))
    problem = _first_number_fault(data)
    if problem is not None:  # refused before the reading that calls Python for each number
        raise problem
    rounded: list = []
    value = _parse(data, exact=False, rounded=rounded)
    if not rounded or exact_at is None:
        return value
    return _exact_where_rounded(data, value, exact_at, set(rounded))


def _exact_where_rounded(data: bytes, value: Any, exact_at: Callable[[Any], list[tuple]], rounded: set) -> Any:
    """``value`` (the :data:`FLOAT64` reading of ``data``) with each part at a path of
    ``exact_at(value)`` that holds one of the ``rounded`` values (those of the literals the
    float64 rounds) replaced by its :data:`EXACT` reading, read from its own bytes only
    (:func:`_read_parts_exactly`)."""
    paths = [path for path in exact_at(value) if rounded and _holds_any(_at(value, path), rounded)]
    if paths:
        exact = _read_parts_exactly(data.decode("utf-8"), paths)
        for path in paths:
            _at(value, path[:-1])[path[-1]] = exact[path]
    return value


_SUSPECT_LITERAL = re.compile(rb"[-0-9.]*(?:[0-9.]{16}|[eE][-+]?[0-9]{3})[-+0-9.eE]*")
"""A number literal the float64 may round (as :func:`_literals_carried` finds them): 16 or more
digits and points in a row, or an exponent of three digits or more."""
_TOKEN_BREAKS = bytes.maketrans(b"[]{}:, \t\n\r", b"," * 10)
"""The bytes between JSON tokens outside strings, all made ``,`` to split the literals apart."""


def _rounded_values(data: bytes) -> set:
    """The float64 values (an ``int`` when integral) of the number literals of ``data`` that the
    float64 rounds (:func:`carries`): the tokens outside strings are split apart and deduplicated
    (in C), one regular-expression pass over the distinct ones finds the literals that may be
    rounded, and each is read once. ``data`` is a
    body :func:`_float64_vouched` read: valid UTF-8 JSON, every literal within the bound."""
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in data else data
    tokens = set(b" ".join(unescaped.split(b'"')[::2]).translate(_TOKEN_BREAKS).split(b","))  # in C
    rounded: list = []
    for literal in set(_SUSPECT_LITERAL.findall(b",".join(tokens))):
        _float64_literal(rounded, literal.decode("ascii"))
    return set(rounded)


def _read_parts_exactly(text: str, paths: list[tuple]) -> dict:
    """The :data:`EXACT` readings of the values at ``paths`` of the JSON document ``text`` (valid
    JSON, no repeated name, every literal within the bound), keyed by path. Only those values are
    read exactly (a :class:`~decimal.Decimal` once per distinct literal); the others are passed
    over by the C scanner without Python calls, so the cost is a plain ``json`` pass over the
    document plus the exact reading of the parts."""
    cached = lru_cache(maxsize=4096)(parse_decimal)
    exact = json.JSONDecoder(parse_float=cached, parse_int=parse_integer, parse_constant=_reject_constant,
                             object_pairs_hook=_unique_object)
    walk = _PartsWalk(text, set(paths), exact.scan_once)  # type: ignore[attr-defined]  # the scanner json.decoder builds
    walk.value(walk.space(0), ())
    return walk.found


class _PartsWalk:
    """The walk of :func:`_read_parts_exactly`: descends only into the objects and arrays on the
    way to a target path; every other value is skipped by :data:`_SKIP`'s C scanner."""

    def __init__(self, text: str, targets: set, read: Callable[[str, int], tuple[Any, int]]) -> None:
        self.text, self.targets, self.read = text, targets, read
        self.found: dict[tuple, Any] = {}
        self.prefixes = {path[:i] for path in targets for i in range(len(path))}

    def space(self, index: int) -> int:
        """The index of the first byte at or after ``index`` that is not whitespace."""
        return _SPACE.match(self.text, index).end()  # type: ignore[union-attr]  # matches the empty string

    def value(self, index: int, path: tuple) -> int:
        """Reads the value starting at ``index`` (at ``path``); returns the index after it."""
        if path in self.targets:
            self.found[path], end = self.read(self.text, index)
            return end
        opening = self.text[index]
        if path not in self.prefixes or opening not in "{[":
            return _SKIP.scan_once(self.text, index)[1]  # type: ignore[attr-defined]  # as above
        return self.members(index, path) if opening == "{" else self.elements(index, path)

    def members(self, index: int, path: tuple) -> int:
        """Reads the object starting at ``index``; returns the index after it."""
        index = self.space(index + 1)
        while self.text[index] != "}":
            key, index = scanstring(self.text, index + 1)
            index = self.space(self.space(index) + 1)  # past the ':'
            index = self.space(self.value(index, path + (key,)))
            index = self.space(index + 1) if self.text[index] == "," else index
        return index + 1

    def elements(self, index: int, path: tuple) -> int:
        """Reads the array starting at ``index``; returns the index after it."""
        index, position = self.space(index + 1), 0
        while self.text[index] != "]":
            index = self.space(self.value(index, path + (position,)))
            index, position = (self.space(index + 1) if self.text[index] == "," else index), position + 1
        return index + 1


_SPACE = re.compile(r"[ \t\n\r]*")
_SKIP = json.JSONDecoder()
"""Plain ``json`` (its C scanner, no Python hooks): only to find where a skipped value ends."""


def _at(document: Any, path: tuple) -> Any:
    for key in path:
        document = document[key]
    return document


def _holds_any(document: Any, values: set) -> bool:
    """Whether a number of ``document`` is one of ``values`` (iterative: no recursion limit)."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif type(node) in (int, float) and node in values:
            return True
    return False


def _checked_body(max_bytes: Optional[int] = None) -> bytes:
    """The raw body of a JSON request: the ``Content-Type`` checked (415) and the size
    capped (413), see :func:`read_json`."""
    # The exact header is the common case; parsing it (werkzeug) handles
    # parameters and case, e.g. "Application/JSON; charset=utf-8".
    environ = request.environ
    if environ.get("CONTENT_TYPE") != JSON_MIMETYPE:
        if request.mimetype != JSON_MIMETYPE:
            got = request.mimetype or "no Content-Type"
            raise ApiProblem(415, f"The body must be JSON with Content-Type application/json, not {got}.")
        charset = request.mimetype_params.get("charset")
        if charset is not None and charset.lower() != "utf-8":
            raise ApiProblem(415, f"The body must be UTF-8 JSON (RFC 8259 section 8.1): charset {charset!r} "
                                  "is not accepted; send UTF-8 and say charset=utf-8 or nothing.")
    if max_bytes is not None:
        request.max_content_length = max_bytes
    return read_body(request.max_content_length, environ)


def load(schema: Schema, data: Any) -> dict:
    """``schema.load(data)``; a 422 :class:`ApiProblem` naming each bad field
    by its JSON pointer when the structure is wrong."""
    try:
        return schema.load(data)
    except ValidationError as error:
        raise invalid([{"pointer": pointer(f.path), "detail": f.message}
                       for f in marshmallow_faults(error.messages)]) from None


def load_query(schema: Schema) -> dict:
    """The query string checked by ``schema``; a 422 :class:`ApiProblem`
    naming each bad ``parameter``, a 400 when the percent-decoded query string
    is not UTF-8 (werkzeug would silently replace the bad bytes)."""
    try:
        unquote_to_bytes(request.query_string).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ApiProblem(400, f"The query string is not percent-encoded UTF-8 (decoded byte {error.start}: "
                              f"{error.reason}; a surrogate such as %ED%A0%80 is not UTF-8).") from None
    args = request.args
    repeated = [key for key in args if len(args.getlist(key)) > 1]
    if repeated:
        raise invalid([{"parameter": key, "detail": "is given more than once"} for key in repeated])
    try:
        return schema.load(args.to_dict())
    except ValidationError as error:
        raise invalid([{"parameter": str(f.path[0]) if f.path else "", "detail": f.message}
                       for f in marshmallow_faults(error.messages)]) from None
