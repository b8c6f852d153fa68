"""Bigram models: the built-in toy and custom tables (SPEC section 1).

A model is a ``start`` row (the distribution after the empty prefix) and one
row per token (the distribution after a prefix ending in that token). Custom
models arrive as plain JSON-shaped dicts::

    {"vocab": ["A", "B", "C", "D"],
     "start": [0.25, 0.25, 0.25, 0.25],
     "next": {"A": [...], "B": [...], "C": [...], "D": [...]}}

Numbers are read as the decimal the caller wrote: a ``decimal.Decimal`` (how
the service parses JSON) or an ``int`` exactly, a ``float`` through its
shortest repr (``0.1`` is 1/10, not the nearest double).
"""

from __future__ import annotations

import marshal
import math
from dataclasses import dataclass
from functools import lru_cache
from decimal import Decimal
from fractions import Fraction
from collections.abc import Mapping, Sequence
import importlib
from typing import Any, Callable, Optional, Union

from .distributions import Dist
from .errors import MAX_ERRORS, Fault, InvalidInput
from .inputs import MODEL_TABLE, checker, shallow


def _optional_module(name: str) -> Any:
    """The module ``name``, or ``None`` when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover
        return None


orjson = _optional_module("orjson")
"""A dependency of the service; without it the memo keys on repr (every use checks for None)."""

ROW_TOLERANCE = Fraction(1, 10**9)
"""A row must sum to 1 within this (SPEC section 1); it is then normalised exactly."""


@dataclass(frozen=True)
class Model:
    """A bigram next-token table.

    ``rows[i]`` is the distribution after a prefix ending in token ``i``;
    ``start`` the one after the empty prefix. ``name`` is the built-in name,
    or ``None`` for a custom model; ``spec`` is the JSON form a caller sent
    (or the published form of a built-in), echoed in configs and traces.
    """

    vocab: tuple[str, ...]
    start: Dist
    rows: tuple[Dist, ...]
    name: Optional[str] = None
    spec: Any = None

    def row(self, prefix: Sequence[int]) -> Dist:
        """The next-token distribution after ``prefix`` (token indices); only
        its last token matters (SPEC section 1)."""
        return self.rows[prefix[-1]] if prefix else self.start

    def after(self, token: Optional[int]) -> Dist:
        """The next-token distribution after a prefix whose last token is
        ``token`` (an index), or after the empty prefix when ``None`` (SPEC
        section 1: only the last token of the prefix matters)."""
        return self.start if token is None else self.rows[token]

    def to_json(self) -> Any:
        """The model as a config names it: its built-in name, or the custom table."""
        return self.name if self.name is not None else self.spec

    def table(self) -> dict:
        """``{"vocab", "start", "next"}`` with each probability as the nearest
        float64, e.g. for ``GET /v1/models``."""
        return {
            "vocab": list(self.vocab),
            "start": self.start.to_json(),
            "next": {label: row.to_json() for label, row in zip(self.vocab, self.rows)},
        }


def _builtin(name: str, start: str, rows: Sequence[str]) -> Model:
    def parse(text: str) -> Dist:
        return Dist.from_fractions([Fraction(x) for x in text.split()])

    vocab = ("A", "B", "C")
    return Model(vocab, parse(start), tuple(parse(r) for r in rows), name=name)


TOY = _builtin("toy", "0.50 0.30 0.20", ["0.20 0.60 0.20", "0.55 0.15 0.30", "0.25 0.25 0.50"])
"""The built-in target (SPEC section 1)."""
ALIGNED = _builtin("aligned", "0.50 0.30 0.20", ["0.20 0.60 0.20", "0.55 0.15 0.30", "0.25 0.25 0.50"])
"""The draft equal to the target: every proposal is accepted (ratio 1)."""
BIASED = _builtin("biased", "0.80 0.15 0.05", ["0.80 0.15 0.05"] * 3)
"""The draft that strongly favours A after every prefix."""

BUILTIN_TARGETS: Mapping[str, Model] = {"toy": TOY}
BUILTIN_DRAFTS: Mapping[str, Model] = {"aligned": ALIGNED, "biased": BIASED}
BUILTIN_ROLES = {"toy": "target", "aligned": "draft", "biased": "draft"}


def builtin_models() -> list[dict]:
    """Every built-in model as ``{"name", "role", "vocab", "start", "next"}``."""
    models = {**BUILTIN_TARGETS, **BUILTIN_DRAFTS}
    return [{"name": name, "role": BUILTIN_ROLES[name], **m.table()} for name, m in models.items()]


def resolve_model(value: Any, role: str) -> Model:
    """A model from a config field: a built-in name for ``role`` (``"target"``
    or ``"draft"``) or a custom table (see :func:`parse_model`).

    Raises :class:`InvalidInput` with paths relative to ``value``.
    """
    builtins = BUILTIN_TARGETS if role == "target" else BUILTIN_DRAFTS
    if isinstance(value, str):
        if value in builtins:
            return builtins[value]
        known = ", ".join(sorted(builtins))
        raise InvalidInput.at((), f"unknown {role} model {value!r}: use one of {known}, or a custom table")
    return parse_model(value)


MODEL_MEMO_SIZE = 32
"""How many custom models :func:`parse_model` keeps (least recently used
first out). A 64-label model takes about 0.32 MB with its key and its kept JSON
(``tracemalloc``, ``docs/bench-engine.md``), so the memo stays under about 10 MB a
process."""


def parse_model(spec: Any) -> Model:
    """Validate and read a custom bigram model (SPEC section 1).

    ``spec`` is ``{"vocab": [...], "start": [...], "next": {token: [...]}}``:
    2-64 distinct labels of 1-16 characters; a row for ``start`` and for every
    token, each as long as the vocabulary, every entry a finite non-negative
    number, each row summing to 1 within 1e-9 (then normalised exactly).

    Valid models are memoised by their exact JSON (:class:`_SpecKey`; at most
    :data:`MODEL_MEMO_SIZE`): a stateless session sends the same tables with
    every block, and reading a 64-label table costs about 40 ms.

    Raises :class:`InvalidInput` listing every fault, with paths relative to
    ``spec`` (e.g. ``("next", "A", 2)``).
    """
    if type(spec) is dict:
        return _memoised(_SpecKey(spec))
    return _parse_model(spec)


class _SpecKey:
    """A custom model's JSON as a memo key: a serialisation that keeps the type of every
    value, so that equal keys hold equal values of equal types and read as the same model;
    a spec written differently (``0.10``, keys in another order) is only a miss.

    The text is :mod:`marshal`'s bytes of the spec (about 0.035 ms for a 64-label table of
    floats: each float as its 8 bytes, ``1.0`` apart from ``1``, ``true`` apart from ``1``,
    ``-0.0`` apart from ``0.0``), or, for a spec marshal refuses (a
    :class:`~decimal.Decimal`, a subclass of a built-in type), ``repr`` of the spec
    (``Decimal('0.1')``, ``0.1`` and ``'0.1'`` differ; about 0.2 ms). The two kinds never
    compare equal (``bytes`` against ``str``); both are faithful (the value can be read
    back from either, types included)."""

    __slots__ = ("spec", "text", "_hash")

    def __init__(self, spec: dict) -> None:
        self.spec: Optional[dict] = spec
        self.text = text = _canonical_text(spec)
        # The hash reads the length and both ends only (a 64-label table's 38 KB cost 25 us to
        # hash whole); equal hashes are then told apart by comparing the whole texts.
        self._hash = hash((len(text), text[:2048], text[-2048:]))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SpecKey) and self.text == other.text


def _canonical_text(spec: dict) -> Union[bytes, str]:
    """See :class:`_SpecKey`: marshal's bytes of ``spec``, else its ``repr``."""
    try:
        return marshal.dumps(spec)
    except ValueError:  # "unmarshallable object": a Decimal, a subclass, nesting too deep
        return repr(spec)


@lru_cache(maxsize=MODEL_MEMO_SIZE)
def _memoised(key: _SpecKey) -> Model:
    spec, key.spec = key.spec, None  # the memo keeps the text, not the parsed request
    return _parse_model(spec)


check_model_table = checker(shallow(MODEL_TABLE, next={
    k: v for k, v in MODEL_TABLE["properties"]["next"].items() if k not in ("minProperties", "maxProperties")}),
    bounds=shallow(MODEL_TABLE))
"""The structure of a custom table (:data:`.inputs.MODEL_TABLE`): fields, label and row sizes,
distinct labels, entries from 0 to 1; :func:`_parse_model` adds the rules no JSON Schema
states (a row per token, each as long as the vocabulary, summing to 1, exactly read). The number
of rows of ``next`` (2 to 64 in the contract) is left to that rule, which names each missing or
unknown row (a table the contract refuses for it, the rule refuses too), up to 64 rows: more is
one fault of its size, found before any row is read (``bounds``)."""


def _parse_model(spec: Any) -> Model:
    if not isinstance(spec, Mapping):
        raise InvalidInput.at((), "must be a built-in model name or an object with vocab, start and next")
    check_model_table(_for_schema(spec))
    faults = _Faults()
    vocab = spec["vocab"]
    start = _parse_row(spec["start"], len(vocab), ("start",), faults)
    nexts = spec["next"]
    rows: list[Dist] = []
    for label in nexts:
        if label not in vocab:
            faults.add(("next", label), f"{label!r} is not in the vocabulary")
    for label in vocab:
        if label not in nexts:
            faults.add(("next", label), f"missing the row after {label!r}")
        else:
            row = _parse_row(nexts[label], len(vocab), ("next", label), faults)
            if row is not None:  # None comes with a fault
                rows.append(row)
    if faults.total or start is None:  # a None start comes with a fault
        raise InvalidInput(faults, faults.total)
    return Model(tuple(vocab), start, tuple(rows), name=None, spec=Table(_plain(spec)))


class _Faults(list):
    """The faults of a table: the first :data:`~.errors.MAX_ERRORS` written, every one counted
    (``total``), so that a table of 8,320 faulty entries costs no 8,320 messages."""

    total = 0

    def add(self, path: tuple, message: Union[str, Callable[[], str]]) -> None:
        """Count a fault at ``path``; write it (``message``, or ``message()``) if it is among
        the first :data:`~.errors.MAX_ERRORS`."""
        self.total += 1
        if len(self) < MAX_ERRORS:
            self.append(Fault(path, message if isinstance(message, str) else message()))


_FINER_THAN_FLOAT64 = -320
"""The adjusted exponent below which a decimal is finer than every float64 but the smallest
subnormals (``1e-321`` and finer): JSON Schema's bounds are costly on such a number (about
100 us each in ``jsonschema_rs`` for ``1e-999``, which compares it exactly), and
:func:`_for_schema` shows the check another with the same verdict."""


def _for_schema(spec: Any) -> Any:
    """``spec`` as :data:`check_model_table` is shown it: every row entry that is a
    :class:`~decimal.Decimal` finer than :data:`_FINER_THAN_FLOAT64` replaced by a number with
    the same verdict under the table's bounds (0 to 1) and no cost: 0 for a positive one, -1 for
    a negative one (its fault, "must be a number from 0 to 1", names the same path). ``spec``
    itself when it holds none (the common case: a scan of its rows, about 0.3 ms for 64
    labels); its rows are read from ``spec`` afterwards, as written (:func:`_parse_row`)."""
    if type(spec) is not dict:
        return spec
    rows: Any = spec.get("next")
    labels = list(rows) if type(rows) is dict else []
    start, shown = spec.get("start"), {}  # type: tuple[Any, dict]
    for label, row in [(None, start)] + [(label, rows[label]) for label in labels]:
        if type(row) is list and any(type(e) is Decimal and e and e.adjusted() < _FINER_THAN_FLOAT64 for e in row):
            shown[label] = [(-1 if e.is_signed() else 0) if type(e) is Decimal and e and
                            e.adjusted() < _FINER_THAN_FLOAT64 else e for e in row]
    if not shown:
        return spec
    copy = {**spec, "start": shown.pop(None, start)}
    if shown:
        copy["next"] = {**rows, **shown}
    return copy


def _parse_row(row: Any, size: int, path: tuple, faults: _Faults) -> Optional[Dist]:
    if not isinstance(row, list):
        faults.add(path, f"must be a list of {size} probabilities")
        return None
    if len(row) != size:
        faults.add(path, f"must have one probability per vocabulary token ({size}), not {len(row)}")
        return None
    ratios: list[tuple[int, int]] = []
    for i, entry in enumerate(row):
        ratio, fault = _read_entry(entry)
        if fault is None:
            if ratio is not None:  # never None without a fault
                ratios.append(ratio)
        else:
            faults.add(path + (i,), fault)
    if len(ratios) != size:
        return None
    # Exact arithmetic on integers over the common denominator (much faster
    # than Fraction objects, which matters: a stateless service re-reads the
    # tables on every request).
    denominator = math.lcm(*(d for _, d in ratios))
    weights = tuple(n * (denominator // d) for n, d in ratios)
    total = sum(weights)
    if abs(total - denominator) * ROW_TOLERANCE.denominator > denominator * ROW_TOLERANCE.numerator:
        faults.add(path, f"must sum to 1 within 1e-9, not {_approximate(total, denominator)}")
        return None
    if total == 0:
        faults.add(path, "must sum to 1 within 1e-9, not 0.0")
        return None
    return Dist.of_weights(weights)


def _read_entry(entry: Any) -> tuple[Optional[tuple[int, int]], Union[None, str, Callable[[], str]]]:
    """``(ratio, None)``: a row entry as its exact ``(numerator, denominator)``; or ``(None,
    why)``, why it is refused (a message, or a function that writes it): too many digits
    (checked before any exact arithmetic on it: 10^250000 took 2 s), not a finite number,
    negative, above 1 (within the rows' tolerance), or not its float64's shortest decimal."""
    too_long = digits_fault(entry)
    if too_long:
        return None, too_long
    ratio = exact_ratio(entry)
    if ratio is None:
        return None, "must be a finite number"
    if ratio[0] < 0:
        return None, "must not be negative"
    if ratio[0] * ROW_TOLERANCE.denominator > ratio[1] * (ROW_TOLERANCE.denominator + ROW_TOLERANCE.numerator):
        return None, "must not exceed 1: it is a probability"
    if type(entry) is Decimal and not _carried_by_float(entry):
        return None, lambda: _not_carried(entry)
    return ratio, None


_FINEST = Decimal("1e-400")
_LARGEST = Decimal(999)
_POWERS_OF_TEN = [10**k for k in range(40)]  # repr of a float has at most 21 decimals without an exponent


def exact_number(value: Any) -> Optional[Fraction]:
    """The exact rational a JSON number was written as, or ``None`` when
    ``value`` is not a finite number (booleans are not numbers).

    Decimals finer than 1e-400 (below every float64) are rounded to 1e-400 and
    numbers above 999 read as 1000, so that no input can make a huge rational;
    neither changes any verdict on a probability row.
    """
    ratio = exact_ratio(value)
    return None if ratio is None else Fraction(*ratio)


def exact_ratio(value: Any) -> Optional[tuple[int, int]]:
    """:func:`exact_number` as ``(numerator, denominator)`` integers, the
    denominator positive (the fast path used to read rows)."""
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):
            return None
        if abs(value) > 999:  # as for decimals below: surely not a probability
            return (1000 if value > 0 else -1000), 1
        text = repr(value)  # the shortest decimal that reads back as value
        if "e" in text:
            return Decimal(text).as_integer_ratio()
        whole, _, fraction = text.partition(".")
        return int(whole + fraction), _POWERS_OF_TEN[len(fraction)]
    if kind is Decimal:
        if not value.is_finite():
            return None
        # copy_abs and comparisons are exact and context-free: abs() would
        # round to the context and raise Overflow for 1e999999999.
        size = value.copy_abs()
        if size > _LARGEST:
            return (-1000 if value.is_signed() else 1000), 1
        if size and size < _FINEST:
            return (-1 if value.is_signed() else 1), 10**400
        return value.as_integer_ratio()
    if kind is int:
        return value, 1
    if isinstance(value, bool):
        return None
    for base in (float, Decimal, int):  # subclasses, e.g. numpy.float64
        if isinstance(value, base):
            return exact_ratio(base(value))
    return None


MAX_SIGNIFICANT_DIGITS = 17
"""The most significant digits of a row entry: a float64's shortest decimal has at most 17, so a
longer decimal can never be echoed exactly (see :func:`_carried_by_float`). Checked before the
entry is converted to an exact ratio, whose cost grows with the square of its digits."""


def significant_digits(value: Decimal) -> int:
    """The significant digits of a finite decimal as written, trailing zeros not counted
    (``0.50`` has 1, ``1.5e-300`` has 2); 0 for an infinity or NaN. Linear in the digits."""
    if not value.is_finite():
        return 0
    return len(bytes(value.as_tuple().digits).rstrip(b"\x00").lstrip(b"\x00"))


def digits_fault(value: Any) -> Optional[str]:
    """Why a decimal ``value`` is refused for its length (more than
    :data:`MAX_SIGNIFICANT_DIGITS` significant digits), or None (also for any non-Decimal).
    Linear in the digits, so it runs before any exact arithmetic on the value; the message
    does not echo the value. Used for every exact number a request carries (model rows here,
    an analysis' ``draft_cost``, :func:`.analysis.parse_analysis`)."""
    if type(value) is not Decimal:
        return None
    digits = significant_digits(value)
    if digits <= MAX_SIGNIFICANT_DIGITS:
        return None
    return (f"has {digits:,} significant digits, so it is not exactly a float64's shortest decimal (at most "
            f"{MAX_SIGNIFICANT_DIGITS} digits), and every number is echoed as float64: write it with at most 15 "
            "significant digits")


def _not_carried(value: Decimal) -> str:
    """Why a row entry that is not its float64's shortest decimal is refused, with the
    decimal to write instead."""
    written = str(value).replace("E", "e")
    try:
        instead = repr(float(value))
    except OverflowError:  # pragma: no cover - refused as "must not exceed 1" first
        instead = "a smaller number"
    return (f"{written} is not exactly a float64's shortest decimal, and traces echo every probability as "
            f"float64: write {instead} (its float64's shortest decimal, as Python's repr and JavaScript print "
            "it; any decimal of at most 15 significant digits above 1e-300 is one)")


def _carried_by_float(value: Decimal) -> bool:
    """Whether ``value`` is the shortest decimal of its nearest float64, so that
    a config or trace that echoes it as a JSON float64 gives back the same
    exact rational (true of every decimal of at most 15 significant digits in
    float64's range, and of every float's repr)."""
    if value.copy_abs() > _LARGEST:
        return True  # refused as "must not exceed 1" anyway
    try:
        return Decimal(repr(float(value))) == value
    except OverflowError:
        return False


def _approximate(numerator: int, denominator: int) -> str:
    """A short decimal for a message, even for values beyond float64."""
    try:
        return repr(numerator / denominator)
    except OverflowError:
        return "more than 1e308"


class Table(dict):
    """A custom model's table as configs and traces echo it (:attr:`Model.spec`): a ``dict``
    of plain JSON values that also keeps its compact JSON text, :attr:`json` (orjson's
    bytes; ``None`` without orjson, or for a label orjson cannot write, a lone surrogate),
    written once when the model is read; the service
    writes a response that echoes the table (every ``POST /v1/step`` of a custom session)
    with that text instead of writing its numbers again (``api.problems.dumps``). Treat it
    as read-only, as the model that holds it."""

    __slots__ = ("json",)

    def __init__(self, table: dict) -> None:
        super().__init__(table)
        self.json: Optional[bytes] = None
        if orjson is not None:
            try:
                self.json = orjson.dumps(self)
            except TypeError:  # a lone surrogate in a label (in process only: the service refuses one)
                pass


def _plain(value: Any) -> Any:
    """A copy of a JSON-shaped value with every Decimal as the nearest float and every
    integral float as its ``int`` (the service reads ``1.0`` as ``1``, however it was sent),
    so that configs and traces serialise with any JSON library, and alike whether a row was
    read as decimals or as floats."""
    kind = type(value)
    if kind is Decimal:
        value, kind = float(value), float
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is list:
        return [v if type(v) is int or type(v) is float and not v.is_integer() else _plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value
