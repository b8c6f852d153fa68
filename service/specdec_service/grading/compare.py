"""Comparing a submitted trace with a reference trace, field by field, in document order.

Exact fields (tokens, decisions, positions, draws' ``position``/``u``/``hex``, counters, labels)
must be equal; probabilities (the fields named in :data:`TOLERANT_KEYS` and every number under
them) may differ by at most :data:`TOLERANCE` in absolute value. The comparison walks the two
JSON trees directly (no per-field objects) and stops at the first difference.

A difference is located by its path (keys and list indices from the root) and by its
*order key*: for each step of the path, the index of that key in the reference's key order (or
the list index). Order keys compare lexicographically, so a later order key means a longer
agreeing prefix of the trace (used by the diagnosis to rank variants).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional

TOLERANCE = 1e-9
"""Absolute tolerance of the probability fields (the other fields are compared exactly)."""
TOLERANT_KEYS = frozenset({"p", "q", "p_token", "q_token", "ratio", "distribution"})
"""Fields holding probabilities (or the acceptance ratio), compared within :data:`TOLERANCE`."""

_MISSING = object()


@dataclass(frozen=True)
class Difference:
    """The first place where ``got`` differs from ``expected``.

    ``path`` is the tuple of keys / indices; ``order`` its order key (see the module doc);
    ``kind`` is ``"value"`` (both present, unequal), ``"type"`` (e.g. ``1`` for ``true``),
    ``"missing"`` (absent from ``got``) or ``"unexpected"`` (absent from ``expected``).
    """

    path: tuple
    order: tuple
    expected: Any
    got: Any
    kind: str


def _number(x: Any) -> Optional[float]:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return x
    if isinstance(x, Decimal):
        return float(x) if x.is_finite() else None
    return None


def _leaf_equal(expected: Any, got: Any, tolerant: bool) -> Optional[str]:
    """``None`` when equal, else ``"value"`` or ``"type"``."""
    if isinstance(expected, bool) or isinstance(got, bool):
        if type(expected) is not type(got):
            return "type"
        return None if expected == got else "value"
    a, b = _number(expected), _number(got)
    if a is not None or b is not None:
        if a is None or b is None:
            return "type"
        if tolerant:
            return None if abs(a - b) <= TOLERANCE else "value"
        return None if a == b else "value"
    if type(expected) is not type(got) and not (expected is None or got is None):
        return "type"
    return None if expected == got else "value"


def first_difference(expected: Any, got: Any, path: tuple = (), order: tuple = (), tolerant: bool = False,
                     skip: frozenset = frozenset(), typed: bool = False) -> Optional[Difference]:
    """The first :class:`Difference` between ``expected`` (the reference) and ``got``, walking
    ``expected`` in its own key order, or ``None`` when they agree. Keys in ``skip`` are not
    compared (the checks skip a draw's ``u`` and ``hex``, which the draws check owns).

    ``typed=True`` promises that ``got`` matches the trace schema, so no boolean stands where a
    number is due (or the reverse); then a subtree that is ``==`` (a C-level comparison) is
    skipped whole, which makes comparing long traces several times faster."""
    if typed and expected == got:
        return None
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return Difference(path, order, expected, got, "type" if got is not None else "value")
        return _dict_difference(expected, got, path, order, tolerant, skip, typed)
    if isinstance(expected, list):
        if not isinstance(got, list):
            return Difference(path, order, expected, got, "type" if got is not None else "value")
        return _list_difference(expected, got, path, order, tolerant, skip, typed)
    kind = _leaf_equal(expected, got, tolerant)
    return None if kind is None else Difference(path, order, expected, got, kind)


def _dict_difference(expected: dict, got: dict, path: tuple, order: tuple, tolerant: bool, skip: frozenset,
                     typed: bool) -> Optional[Difference]:
    """:func:`first_difference` of two objects: ``expected``'s keys in its order (a key of
    :data:`TOLERANT_KEYS` makes its subtree tolerant), then a key only ``got`` has."""
    for index, (key, value) in enumerate(expected.items()):
        if key in skip:
            continue
        other = got.get(key, _MISSING)
        if other is _MISSING:
            return Difference(path + (key,), order + (index,), value, None, "missing")
        if value is other:
            continue
        found = first_difference(value, other, path + (key,), order + (index,), tolerant or key in TOLERANT_KEYS, skip, typed)
        if found is not None:
            return found
    if len(got) != len(expected):
        for key in got:
            if key not in expected:
                return Difference(path + (key,), order + (len(expected),), None, got[key], "unexpected")
    return None


def _list_difference(expected: list, got: list, path: tuple, order: tuple, tolerant: bool, skip: frozenset,
                     typed: bool) -> Optional[Difference]:
    """:func:`first_difference` of two arrays: item by item, then the first item one of them
    lacks."""
    for index, (value, other) in enumerate(zip(expected, got)):
        found = first_difference(value, other, path + (index,), order + (index,), tolerant, skip, typed)
        if found is not None:
            return found
    if len(got) < len(expected):
        index = len(got)
        return Difference(path + (index,), order + (index,), expected[index], None, "missing")
    if len(got) > len(expected):
        index = len(expected)
        return Difference(path + (index,), order + (index,), None, got[index], "unexpected")
    return None
