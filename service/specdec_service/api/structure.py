"""The structure of a request body, bounded before anything reads it (issue 18 section 3).

One rule on every route, checked on the body's bytes by :func:`check_structure` (called by
:func:`.bodies.parse_json` and :func:`.bodies.read_json` before any parser, validator or
writer sees the body):

- **nesting**: at most :data:`MAX_NESTING` levels of arrays and objects (``{}`` is one level,
  ``{"a": [1]}`` two). The deepest valid body of any route has 9: a batch of traces for
  ``POST /v1/grade``, ``{"traces": [{"blocks": [{"proposal": {"steps": [{"q": [...]}]}}]}]}``
  (``tests/test_body_bounds.py`` derives it from the contract); 3 more are a margin. Deeper is a
  400 naming the pointer of the first container past the bound. (Without this bound a body
  nested 255 levels deep broke ``orjson.dumps`` and ``jsonschema_rs``: a 500.)
- **values**: at most a route's ``max_values`` (:data:`.bodies.BODY_RULES`), counted as the
  body's commas and opening brackets outside strings: every array element and object member
  counts one, and so does an empty array or object. More is a 413 stating the count.
- **number literals**: at most :data:`MAX_NUMBER_CHARS` characters, of which at most
  :data:`MAX_EXPONENT_DIGITS` digits in the exponent. The longest float64 written with its
  shortest digits is 327 characters (``-5e-324`` written out as ``-0.000...05``); exponents
  of valid numbers have 3 digits (``e-324``). Longer is a 400 naming the number's pointer.
  (Without this bound an exponent of 10^18 or more, ``1e1000000000000000000``, anywhere in
  a body, raised ``decimal.InvalidOperation``: a 500.)

Cost: the checks are C-speed passes over the bytes (``bytes.translate``, ``replace``,
``count``, ``split``, substring search) and a few ``replace`` rounds over the brackets alone,
one per level; only a refusal walks the body's tokens in Python to name the pointer, and stops
after :data:`SCAN_LIMIT` tokens (then the problem names no pointer).
"""

from __future__ import annotations

import json
import re
from typing import Optional

from ..engine import pointer
from .problems import STRUCTURE_BOUND, ApiProblem

MAX_NESTING = 12
"""Levels of arrays and objects a body may nest: the deepest valid body (9) plus 3."""
MAX_NUMBER_CHARS = 330
"""Characters of a number literal, sign and exponent included."""
MAX_EXPONENT_DIGITS = 4
"""Digits of a number literal's exponent (``1e9999`` at most; ``1e-0001`` is 5 digits)."""
SCAN_LIMIT = 200_000
"""Tokens a refusal reads to name the pointer of the fault (about 0.1 s of Python)."""

_KEPT = b'"[]{},'
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in _KEPT)
_SQUARE = bytes.maketrans(b"{}", b"[]")
_NUMBER_SHAPE = bytes(ord("d") if chr(b) in "0123456789." else ord("s") if chr(b) in "+-" else
                      ord("e") if chr(b) in "eE" else ord(" ") for b in range(256))
"""Digits and points as ``d``, signs as ``s``, ``e``/``E`` as ``e``, every other byte a space."""
_NUMBER_RUN = bytes.maketrans(b"dse", b"nnn")
_LONG_EXPONENT = (b"e" + b"d" * (MAX_EXPONENT_DIGITS + 1), b"es" + b"d" * (MAX_EXPONENT_DIGITS + 1))
_LONG_NUMBER = b"n" * (MAX_NUMBER_CHARS + 1)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]|[^\s\[\]{},:"]+', re.DOTALL)
_EXPONENT = re.compile(rb"[eE][-+]?([0-9]*)")


def check_structure(data: bytes, max_values: int) -> None:
    """Return when the JSON text ``data`` is within the bounds of the module docstring, with at
    most ``max_values`` values; otherwise raise :class:`~.problems.ApiProblem` of type
    ``tag:specdec,2026:problem/structure-bound``: 413 for too many values, 400 for nesting
    deeper than :data:`MAX_NESTING` or a number literal over :data:`MAX_NUMBER_CHARS`
    characters or :data:`MAX_EXPONENT_DIGITS` exponent digits (``errors`` names its pointer
    when found within :data:`SCAN_LIMIT` tokens).

    A body that is not JSON passes or fails these checks as its bytes say; the parser then
    refuses what is left (400). The checks read only bytes: a body need not be UTF-8 here.
    """
    if b"\\" in data:  # drop escaped backslashes and quotes: every '"' left delimits a string
        unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    else:
        unescaped = data
    skeleton = unescaped.translate(None, _NOT_STRUCTURE)  # quotes, brackets and commas
    structure = skeleton.replace(b'""', b"")
    if b'"' in structure:  # a string holds a bracket or a comma: cut every string out
        structure = b"".join(skeleton.split(b'"')[::2])
    if _deeper_than(structure, MAX_NESTING):
        where = _locate(data, depth=MAX_NESTING)
        raise _problem(f"The body nests arrays and objects deeper than {MAX_NESTING} levels", where,
                       f"is level {MAX_NESTING + 1}: a body nests at most {MAX_NESTING} levels (the deepest "
                       "valid body of any route has 9)")
    values = structure.count(b",") + structure.count(b"[") + structure.count(b"{")
    if values > max_values:
        raise ApiProblem(413, f"The body holds {values} values (array elements and object members; an empty "
                              f"array or object counts one): this route takes at most {max_values} (docs/service.md).",
                         type=STRUCTURE_BOUND)
    if _long_number(data) and _long_number(b" ".join(unescaped.split(b'"')[::2])):
        where = _locate(data, numbers=True)
        raise _problem(f"A number literal is longer than {MAX_NUMBER_CHARS} characters or has an exponent of "
                       f"more than {MAX_EXPONENT_DIGITS} digits", where,
                       f"a number literal has at most {MAX_NUMBER_CHARS} characters and at most "
                       f"{MAX_EXPONENT_DIGITS} exponent digits")


def _problem(what: str, where: Optional[tuple], detail: str) -> ApiProblem:
    if where is None:
        return ApiProblem(400, f"{what} (docs/service.md).", type=STRUCTURE_BOUND)
    at = pointer(where)
    return ApiProblem(400, f"{what}, at {at} (docs/service.md).", type=STRUCTURE_BOUND,
                      errors=[{"pointer": at, "detail": detail}])


def _deeper_than(structure: bytes, levels: int) -> bool:
    """Whether ``structure`` (brackets and commas outside strings) nests deeper than ``levels``:
    each round removes the innermost level (every ``[]``, curly brackets read as square ones), so
    what can still shrink after ``levels`` rounds is deeper. Text that stops shrinking before is
    done, or unbalanced (not JSON: the parser refuses it)."""
    brackets = structure.translate(_SQUARE, b",")
    for _ in range(levels):
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return b"[]" in brackets


def _long_number(text: bytes) -> bool:
    """Whether ``text`` has a run of number characters longer than :data:`MAX_NUMBER_CHARS`, or
    an ``e`` followed by more than :data:`MAX_EXPONENT_DIGITS` digits (strings included: a
    caller confirms on the text outside strings)."""
    shape = text.translate(_NUMBER_SHAPE)
    return (_LONG_EXPONENT[0] in shape or _LONG_EXPONENT[1] in shape
            or _LONG_NUMBER in shape.translate(_NUMBER_RUN))


def _too_long(token: bytes) -> bool:
    if token[:1] == b'"':
        return False
    exponent = _EXPONENT.search(token)
    return len(token) > MAX_NUMBER_CHARS or (exponent is not None and len(exponent.group(1)) > MAX_EXPONENT_DIGITS)


def _locate(data: bytes, depth: Optional[int] = None, numbers: bool = False) -> Optional[tuple]:
    """The path of the first container at level ``depth + 1`` (with ``depth``), or of the first
    number literal over the bounds (with ``numbers``), reading ``data``'s tokens in order; None
    when none is found within :data:`SCAN_LIMIT` tokens."""
    frames: list[list] = []  # per open container: [is an object, its name or index, a name is due]
    for count, match in enumerate(_TOKEN.finditer(data)):
        if count == SCAN_LIMIT:
            return None
        token = match.group()
        first = token[:1]
        if first == b"[" or first == b"{":
            if depth is not None and len(frames) == depth:
                return tuple(frame[1] for frame in frames)
            frames.append([first == b"{", 0, first == b"{"])
        elif first == b"]" or first == b"}":
            if frames:
                frames.pop()
        elif first == b",":
            if frames and frames[-1][0]:
                frames[-1][2] = True
            elif frames:
                frames[-1][1] += 1
        elif frames and frames[-1][0] and frames[-1][2]:
            frames[-1][1], frames[-1][2] = _name(token), False
        elif numbers and first != b":" and _too_long(token):
            return tuple(frame[1] for frame in frames)
    return None


def _name(token: bytes) -> str:
    try:
        name = json.loads(token)
    except ValueError:
        name = None
    return name if isinstance(name, str) else token.decode("utf-8", "replace").strip('"')
