"""The structure of a request body, bounded before anything reads it.

One rule on every route:

- **nesting**: at most :data:`MAX_NESTING` levels of arrays and objects (``{}`` is one level,
  ``{"a": [1]}`` two). The deepest valid body of any route has 9: a batch of traces for
  ``POST /v1/grade``, ``{"traces": [{"blocks": [{"proposal": {"steps": [{"q": [...]}]}}]}]}``
  (``tests/test_body_bounds.py`` derives it from the contract); 3 more are a margin. Deeper is a
  400 naming the pointer of the first container past the bound. (Without this bound a body
  nested 255 levels deep broke ``orjson.dumps`` and ``jsonschema_rs``: a 500.)
- **values**: at most a route's ``max_values`` (:data:`.bodies.BODY_RULES`), counted as the
  body's commas and opening brackets outside strings: every array element and object member
  counts one, and so does an empty array or object. More is a 413 stating the count.
- **number literals**: at most :data:`MAX_NUMBER_CHARS` characters, and an exponent (the
  integer after ``e``) of at most :data:`MAX_EXPONENT` in size. The longest float64 written
  with its shortest digits is 327 characters (``-5e-324`` written out as ``-0.000...05``);
  valid numbers' exponents have 3 digits (``e-324``). Beyond is a 400 naming the number's
  pointer. (Without this bound an exponent of 10^18 or more, ``1e1000000000000000000``,
  anywhere in a body, raised ``decimal.InvalidOperation``: a 500.)

:func:`check_structure` checks the first two on the body's bytes before any parser, validator or
writer sees it (called by :func:`.bodies.parse_json` and :func:`.bodies.read_json`): one
``bytes.translate`` keeps the quotes, brackets and commas (about 0.5 ns a byte), and the rest
works on that skeleton (a body's strings cut out, a few ``replace`` rounds over its brackets,
one per level). The parser enforces the third on each number literal as it reads it
(:func:`number_fault`, called by the number hooks of :mod:`.bodies`; the fast reading of a state
vouches for no literal beyond it). Only a refusal walks the body's tokens in Python to name the
pointer of a nesting fault, and stops after :data:`SCAN_LIMIT` tokens (then the problem names
no pointer).
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
MAX_EXPONENT = 9999
"""The largest exponent of a number literal in size: ``1e9999``, ``1e-9999`` (``1e-0001`` is fine)."""
SCAN_LIMIT = 200_000
"""Tokens a refusal reads to name the pointer of the fault (about 0.1 s of Python)."""

_KEPT = b'"[]{},'
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in _KEPT)
_SQUARE = bytes.maketrans(b"{}", b"[]")
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]|[^\s\[\]{},:"]+', re.DOTALL)
_EXPONENT = re.compile(r"[eE]([-+]?[0-9]+)$")


def check_structure(data: bytes, max_values: int) -> None:
    """Return when the JSON text ``data`` nests at most :data:`MAX_NESTING` levels and holds at
    most ``max_values`` values (the module docstring); otherwise raise
    :class:`~.problems.ApiProblem` of type ``tag:specdec,2026:problem/structure-bound``: 400 for
    the nesting (``errors`` names the first container past it, when found within
    :data:`SCAN_LIMIT` tokens), 413 for the values.

    A body that is not JSON passes or fails these checks as its bytes say; the parser then
    refuses what is left (400). The checks read only bytes: a body need not be UTF-8 here.
    """
    if b"\\" in data:  # drop escaped backslashes and quotes: every '"' left delimits a string
        unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    else:
        unescaped = data
    skeleton = unescaped.translate(None, _NOT_STRUCTURE)  # quotes, brackets and commas
    quotes = skeleton.count(b'"')
    if quotes != 2 * skeleton.count(b'""'):  # a string holds a bracket or a comma: cut every string out
        skeleton, quotes = b"".join(skeleton.split(b'"')[::2]), 0
    brackets = skeleton.translate(_SQUARE, b',"')
    if _deeper_than(brackets, MAX_NESTING):
        where = _locate(data, MAX_NESTING)
        detail = f"The body nests arrays and objects deeper than {MAX_NESTING} levels"
        if where is None:
            raise ApiProblem(400, f"{detail} (docs/service.md).", type=STRUCTURE_BOUND)
        raise ApiProblem(400, f"{detail}, at {pointer(where)} (docs/service.md).", type=STRUCTURE_BOUND,
                         errors=[{"pointer": pointer(where),
                                  "detail": f"is level {MAX_NESTING + 1}: a body nests at most {MAX_NESTING} "
                                            "levels (the deepest valid body of any route has 9)"}])
    values = len(skeleton) - len(brackets) - quotes + brackets.count(b"[")  # commas and openings
    if values > max_values:
        raise ApiProblem(413, f"The body holds {values} values (array elements and object members; an empty "
                              f"array or object counts one): this route takes at most {max_values} (docs/service.md).",
                         type=STRUCTURE_BOUND)


def number_fault(text: str) -> bool:
    """Whether the number literal ``text`` is beyond the bound: more than
    :data:`MAX_NUMBER_CHARS` characters, or an exponent beyond :data:`MAX_EXPONENT` in size.
    The parser calls it where a literal may be beyond (:mod:`.bodies`)."""
    if len(text) > MAX_NUMBER_CHARS:
        return True
    exponent = _EXPONENT.search(text)
    return exponent is not None and abs(int(exponent.group(1))) > MAX_EXPONENT


NUMBER_DETAIL = (f"a number literal has at most {MAX_NUMBER_CHARS} characters and an exponent of at most "
                 f"{MAX_EXPONENT} in size")
"""The ``detail`` of a number literal beyond the bound, in ``errors``."""


def _deeper_than(brackets: bytes, levels: int) -> bool:
    """Whether ``brackets`` (the brackets outside strings, curly ones as square ones) nest deeper
    than ``levels``: each round removes the innermost level (every ``[]``), so what can still
    shrink after ``levels`` rounds is deeper. Text that stops shrinking before is done, or
    unbalanced (not JSON: the parser refuses it)."""
    for _ in range(levels):
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return b"[]" in brackets


def _locate(data: bytes, depth: int) -> Optional[tuple]:
    """The path of the first container at level ``depth + 1``, reading ``data``'s tokens in
    order; None when none is found within :data:`SCAN_LIMIT` tokens."""
    frames: list[list] = []  # per open container: [is an object, its name or index, a name is due]
    for count, match in enumerate(_TOKEN.finditer(data)):
        if count == SCAN_LIMIT:
            return None
        token = match.group()
        if token[:1] in _OPENING and len(frames) == depth:
            return tuple(frame[1] for frame in frames)
        _follow(frames, token)
    return None


_OPENING = (b"[", b"{")


def _follow(frames: list[list], token: bytes) -> None:
    """Update the open containers ``frames`` (see :func:`_locate`) past ``token``."""
    first = token[:1]
    if first in _OPENING:
        frames.append([first == b"{", 0, first == b"{"])
    elif not frames:
        return
    elif first in (b"]", b"}"):
        frames.pop()
    elif first == b",":
        if frames[-1][0]:
            frames[-1][2] = True
        else:
            frames[-1][1] += 1
    elif frames[-1][0] and frames[-1][2]:
        frames[-1][1], frames[-1][2] = _name(token), False


def _name(token: bytes) -> str:
    try:
        name = json.loads(token)
    except ValueError:
        name = None
    return name if isinstance(name, str) else token.decode("utf-8", "replace").strip('"')
