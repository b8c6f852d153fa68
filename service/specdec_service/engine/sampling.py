"""Sampling parameters: exact row processing (SPEC section 9).

A session's ``sampling`` settings (:class:`Sampling`) process every row before any rule reads
it, in this order, each step renormalising exactly:

1. ``temperature`` T (0, or 0.05 to 20, read as the decimal written): T = 0 is a point mass at the
   argmax (ties to the earliest token); T = 1 changes nothing; otherwise each entry becomes
   p^(1/T): exactly p^n when 1/T is an integer n, else the float64 nearest to the real p^(1/T)
   (ties to even) read as the exact rational that float64 is (:func:`power`). Zero stays zero.
2. ``top_k`` (1 to 64): keep every token whose probability is at least the k-th largest (ties at
   the boundary all kept).
3. ``top_p`` (0 < top_p <= 1): tokens ordered by probability, largest first, ties in vocabulary
   order; keep a token iff the total probability of the tokens before it is strictly less than
   top_p (exact arithmetic).
4. ``min_p`` (0 to 1): keep a token iff its probability is at least min_p times the largest.

:func:`process` applies them to one row; :class:`ProcessedRows` is the row reader
(:mod:`.rows`) of a decoder whose rows are processed: the target's always (p'), the draft's when
``draft`` is ``"processed"`` (q', the default) and raw otherwise. No proposal rule and no verifier
knows about processing: they read the rows this reader gives, and the drafted block carries the
row each proposal was drawn from (the q of the ratio and the residual).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from functools import lru_cache
from math import isfinite, nextafter
from typing import Any, Optional

from .distributions import Dist, argmax
from .bounds import MAX_TEMPERATURE, MIN_TEMPERATURE
from .errors import Fault, InvalidInput
from .proposals import point_mass
from .inputs import SAMPLING, expectation
from .rows import Rows
from .work import charge


@dataclass(frozen=True)
class Sampling:
    """The sampling parameters of SPEC section 9, each ``None`` when not set: ``temperature``,
    ``top_p`` and ``min_p`` as exact fractions (the decimal written), ``top_k`` an integer, and
    ``draft``: ``"processed"`` (the draft's rows are processed the same way) or ``"raw"``."""

    temperature: Optional[Fraction] = None
    top_k: Optional[int] = None
    top_p: Optional[Fraction] = None
    min_p: Optional[Fraction] = None
    draft: str = "processed"

    @classmethod
    def of(cls, temperature=None, top_k=None, top_p=None, min_p=None, draft="processed") -> "Sampling":
        """Settings from JSON-like values: numbers are read as the decimal they are written as
        (``Fraction(str(x))``: ``0.8`` is 4/5, not the float64 nearest to it)."""
        return cls(_exact(temperature), top_k, _exact(top_p), _exact(min_p), draft)

    @property
    def empty(self) -> bool:
        """Whether no parameter is set (then nothing is processed)."""
        return self.temperature is None and self.top_k is None and self.top_p is None and self.min_p is None


def _exact(x) -> Optional[Fraction]:
    return None if x is None else Fraction(str(x)) if isinstance(x, float) else Fraction(x)


# ---------------------------------------------------------------- reading the setting

SAMPLING_KEYS = tuple(SAMPLING["properties"])
"""The fields of a ``sampling`` object (SPEC section 9), all optional: temperature, top_k,
top_p, min_p, draft."""
MAX_TOP_K = SAMPLING["properties"]["top_k"]["maximum"]
"""The largest ``top_k`` (SPEC section 9)."""
_LOWEST_TEMPERATURE = Fraction(MIN_TEMPERATURE)
_BOUNDS = {
    "temperature": lambda x: x == 0 or _LOWEST_TEMPERATURE <= x <= MAX_TEMPERATURE,
    "top_p": lambda x: 0 < x <= 1,
    "min_p": lambda x: 0 <= x <= 1,
}
_MESSAGES = {key: expectation(schema) for key, schema in SAMPLING["properties"].items()}


def parse_sampling(obj: Any, path: tuple = ("sampling",)) -> Sampling:
    """Read a ``sampling`` object (SPEC section 9): any of ``temperature`` (0, or 0.05 to 20),
    ``top_k`` (an integer from 1 to 64), ``top_p`` (0 < top_p <= 1), ``min_p`` (0 to 1), each
    read as the decimal written, and ``draft`` (``"processed"``, the default, or ``"raw"``).
    A decimal (:class:`~decimal.Decimal`, as the service reads a number with a fraction) must be
    its float64's shortest decimal, since a config echoes each number as float64.

    Raises :class:`~.errors.InvalidInput` naming each bad field (paths under ``path``) and its
    bound (the words of :data:`.inputs.SAMPLING`, the schema the service checks first)."""
    if not isinstance(obj, dict):
        raise InvalidInput.at(path, expectation(SAMPLING))
    faults = [Fault(path + (key,), "is not a sampling parameter (temperature, top_k, top_p, min_p, draft)")
              for key in obj if key not in SAMPLING_KEYS]
    values = {}
    for key, holds in _BOUNDS.items():
        if key in obj:
            value = _number(obj[key])
            why = _MESSAGES[key] if value is None or not holds(value) else _not_carried(obj[key])
            if why:
                faults.append(Fault(path + (key,), why))
            values[key] = value
    top_k = obj.get("top_k")
    if "top_k" in obj and (type(top_k) is not int or not 1 <= top_k <= MAX_TOP_K):
        faults.append(Fault(path + ("top_k",), _MESSAGES["top_k"]))
    draft = obj.get("draft", "processed")
    if draft not in ("processed", "raw"):
        faults.append(Fault(path + ("draft",), _MESSAGES["draft"]))
    if faults:
        raise InvalidInput(faults)
    return Sampling(values.get("temperature"), top_k, values.get("top_p"), values.get("min_p"), draft)


def sampling_echo(obj: dict) -> tuple:
    """The ``sampling`` a config echoes (SPEC section 9), as ``(name, value)`` pairs: the fields
    sent, in :data:`SAMPLING_KEYS` order, each number as float64 (an integral one as an
    integer), e.g. ``(("temperature", 0.5), ("top_k", 2))``. ``obj`` was read by
    :func:`parse_sampling`, so each number is its float64's shortest decimal: the echo reads
    back as the same settings."""
    return tuple((key, _plain(obj[key])) for key in SAMPLING_KEYS if key in obj)


def _plain(x: Any) -> Any:
    if type(x) is str or type(x) is int:
        return x
    x = float(x)
    return int(x) if x.is_integer() else x


def _not_carried(x: Any) -> Optional[str]:
    """Why a number read as a :class:`~decimal.Decimal` cannot be echoed exactly (it is not its
    float64's shortest decimal), or ``None``."""
    if not isinstance(x, Decimal) or Decimal(repr(float(x))) == x:
        return None
    return (f"{str(x).replace('E', 'e')} is not exactly a float64's shortest decimal, and a config echoes each "
            f"number as float64: write {float(x)!r}")


def _number(x: Any) -> Optional[Fraction]:
    """A JSON number as the exact decimal written (``None`` for anything else: a boolean, a
    string, a NaN or an infinity)."""
    if type(x) is int:
        return Fraction(x)
    if type(x) is float and isfinite(x):
        return Fraction(str(x))
    if isinstance(x, Decimal) and x.is_finite():
        return Fraction(x)
    return None


exact_decimal = _number
"""``exact_decimal(x)``: a JSON number as the exact decimal written, ``None`` for anything else
(the reading of every number a setting holds, SPEC section 1)."""
not_carried = _not_carried
"""``not_carried(x)``: why a decimal cannot be echoed exactly as float64, or ``None``."""


# ---------------------------------------------------------------- the four steps


def with_temperature(row: Dist, temperature: Fraction) -> Dist:
    """SPEC section 9.1: T = 0 is a point mass at the argmax; T = 1 changes nothing; otherwise
    each entry becomes p^(1/T) (:func:`power`), renormalised exactly."""
    if temperature == 0:
        return point_mass(len(row.weights), argmax(row))
    if temperature == 1:
        return row
    exponent = 1 / temperature
    return Dist.from_fractions([power(Fraction(w, row.total), exponent) for w in row.weights])


def with_top_k(row: Dist, k: int) -> Dist:
    """SPEC section 9.2: keep every token whose probability is at least the k-th largest (ties
    at the boundary all kept); k at or above the vocabulary size changes nothing."""
    weights = row.weights
    if k >= len(weights):
        return row
    kth = sorted(weights, reverse=True)[k - 1]
    charge(2 * len(weights) * row.total.bit_length())
    return Dist.of_weights(w if w >= kth else 0 for w in weights)


def with_top_p(row: Dist, top_p: Fraction) -> Dist:
    """SPEC section 9.3: in order of probability (largest first, ties in vocabulary order), keep
    a token iff the probability of the tokens before it is strictly less than ``top_p``."""
    weights = row.weights
    order = sorted(range(len(weights)), key=lambda i: -weights[i])  # stable: ties in vocabulary order
    charge(4 * len(weights) * (row.total.bit_length() + _fraction_bits(top_p)))
    kept = [0] * len(weights)
    before = 0
    for i in order:
        if Fraction(before, row.total) < top_p:
            kept[i] = weights[i]
        before += weights[i]
    return Dist.of_weights(kept)


def with_min_p(row: Dist, min_p: Fraction) -> Dist:
    """SPEC section 9.4: keep a token iff its probability is at least ``min_p`` times the
    largest probability of the row."""
    largest = max(row.weights)
    charge(2 * len(row.weights) * (row.total.bit_length() + _fraction_bits(min_p)))
    return Dist.of_weights(w if w >= min_p * largest else 0 for w in row.weights)


def process(row: Dist, sampling: Sampling) -> Dist:
    """SPEC section 9: ``row`` processed by temperature, top-k, top-p and min-p, in that order
    (each only when set), each step renormalising exactly."""
    if sampling.temperature is not None:
        row = with_temperature(row, sampling.temperature)
    if sampling.top_k is not None:
        row = with_top_k(row, sampling.top_k)
    if sampling.top_p is not None:
        row = with_top_p(row, sampling.top_p)
    if sampling.min_p is not None:
        row = with_min_p(row, sampling.min_p)
    return row


# ---------------------------------------------------------------- p^(1/T), exact or correctly rounded


def power(p: Fraction, exponent: Fraction) -> Fraction:
    """``p ** exponent`` for a probability ``p`` (0 <= p <= 1) and a positive rational exponent
    (SPEC section 9.1): exact when the exponent is an integer (at most 20: T >= 0.05); otherwise
    the float64 nearest to the real value (ties to even), as the exact rational that float64 is.
    Zero stays zero.

    With ``exponent = a / b`` in lowest terms, ``p ** (a / b)`` is rational exactly when ``p`` is
    a perfect b-th power (then its b-th root r is rational, and r ** a is rounded once); never when
    b exceeds the bits of p's numerator and denominator, so no huge power is ever formed (a
    temperature of 0.0500000000000001 has a = 10^16)."""
    if p == 0 or p == 1:
        return p
    a, b = exponent.numerator, exponent.denominator
    if b == 1:
        charge(2 * a * _fraction_bits(p))
        return p ** a
    root = _rational_root(p, b) if b <= max(p.numerator, p.denominator).bit_length() else None
    if root is None:
        return Fraction(_nearest_float(p, exponent))
    if a * max(root.numerator, root.denominator).bit_length() <= _EXACT_BITS:
        charge(2 * a * _fraction_bits(root))
        return Fraction(float(root ** a))  # int / int rounds to nearest, ties to even
    return Fraction(_nearest_float(root, Fraction(a)))  # a huge power of a rational: never a midpoint


def _fraction_bits(x: Fraction) -> int:
    """The bits of an exact value's numerator and denominator (engine.work)."""
    return x.numerator.bit_length() + x.denominator.bit_length()


_EXACT_BITS = 100_000
"""The largest exact power :func:`power` forms, in bits (a few microseconds)."""


def _rational_root(x: Fraction, n: int) -> Optional[Fraction]:
    """The exact ``n``-th root of ``x`` when it is rational, else ``None``."""
    num, den = _integer_root(x.numerator, n), _integer_root(x.denominator, n)
    return None if num is None or den is None else Fraction(num, den)


def _integer_root(x: int, n: int) -> Optional[int]:
    """The integer ``r`` with ``r ** n == x`` (x >= 0), or ``None``: Newton's iteration on
    integers from above reaches floor(x ** (1/n)), which is checked."""
    if x < 2:
        return x
    r = 1 << -(-x.bit_length() // n)  # at least the root
    while True:
        charge(3 * x.bit_length() + 64)  # r ** (n - 1), x // it
        s = ((n - 1) * r + x // r ** (n - 1)) // n
        if s >= r:
            break
        r = s
    return r if r ** n == x else None


@lru_cache(maxsize=16384)
def _nearest_float(p: Fraction, exponent: Fraction) -> float:
    """The float64 nearest to ``p ** exponent`` (0 < p < 1, a value that is not a midpoint
    between two float64s: an irrational one, or a huge power of a rational): found by
    :func:`_walk` from the hardware's guess when the exponent's terms are small, else by
    :func:`_decimal_nearest`."""
    a, b = exponent.numerator, exponent.denominator
    bits = max(p.numerator, p.denominator).bit_length()
    scale = p.denominator.bit_length() - p.numerator.bit_length()  # about log2(1 / p)
    walks = a * bits + b * 64 <= _WALK_BITS and a * scale <= _WALK_LOG * b and scale <= _WALK_SCALE
    found = _walk(p, a, b) if walks else None
    return _decimal_nearest(p, exponent) if found is None else found


_WALK_BITS = 3_000
"""Where :func:`_walk` pays: the bits of p^a plus 64 per unit of b at most (measured on rows of
15-digit decimals: 9 microseconds for T = 0.7, 1/T = 10/7, and 22 for T = 0.95, 20/19, against
about 35 for :func:`_decimal_nearest`, which is faster beyond, e.g. 171 for T = 0.07, 100/7)."""
_WALK_STEPS = 64
_WALK_LOG = 160
_WALK_SCALE = 1000
"""Nor is it near when p is below about 2^-1000: float(p) is then subnormal or nearly so, with few
significant bits (1e-323 is 9.88e-324)."""
"""Where :func:`_walk`'s guess is near enough: ``|log2 p^(a/b)|`` at most 160. The guess
``float(p) ** (a / b)`` errs by about ``|ln p^(a/b)|`` units in the last place (the float64
exponent a / b is not exact), so for p of order 1e-300 and T = 2.5 it is tens of steps away and
the walk's 64 steps of 1,000-bit powers (about 4 ms an entry) ended in :func:`_decimal_nearest`
anyway; both give the same float64 (the nearest)."""
"""The most float64 steps :func:`_walk` takes from its guess (a guess errs by about the exponent
in units in the last place)."""


def _walk(p: Fraction, a: int, b: int) -> Optional[float]:
    """The float64 f nearest to x = p ** (a / b), or ``None`` when not found within
    :data:`_WALK_STEPS` steps: from the guess ``float(p) ** (a / b)``, step down while x lies
    below the midpoint under f, up while it lies above the midpoint over f; each comparison is
    exact in integers (m < x iff m^b < p^a). x is never a midpoint (the caller's promise), so the
    f that stops is the nearest."""
    num_a, den_a = p.numerator ** a, p.denominator ** a
    charge(a * _fraction_bits(p))
    power_bits = num_a.bit_length() + den_a.bit_length()

    def above(f: float, g: float) -> bool:  # whether x lies above the midpoint of f and g
        (n1, d1), (n2, d2) = f.as_integer_ratio(), g.as_integer_ratio()
        n, d = n1 * d2 + n2 * d1, 2 * d1 * d2
        charge(2 * b * d.bit_length() + power_bits)
        return n ** b * den_a < num_a * d ** b

    f = (p.numerator / p.denominator) ** (a / b)
    for _ in range(_WALK_STEPS):
        lower, upper = nextafter(f, 0.0), nextafter(f, 2.0)
        if f > 0 and not above(lower, f):
            f = lower
        elif above(f, upper):
            f = upper
        else:
            return f
    return None


_DECIMAL_UNITS = 64
"""The bit operations one digit squared of :func:`_decimal_nearest`'s ln and exp is counted
as (engine.work; calibrated against the other operations by bench/cost_units.py)."""


def _decimal_nearest(p: Fraction, exponent: Fraction) -> float:
    """The float64 nearest to ``p ** exponent`` (not a midpoint): evaluated as
    exp(exponent * ln p) with a growing number of digits until an interval around it, wider than
    the evaluation's error, rounds to one float64 at both ends (about 35 microseconds from 24
    digits; 60 from 40)."""
    digits = 24
    while True:
        charge(2 * _fraction_bits(p) + _DECIMAL_UNITS * digits * digits)
        with localcontext(Context(prec=digits)):
            argument = Decimal(exponent.numerator) / Decimal(exponent.denominator) * (
                Decimal(p.numerator) / Decimal(p.denominator)).ln()
            value = argument.exp()
            # each operation errs by at most a unit in the last digit, relative; exp turns the
            # argument's absolute error into a relative one
            margin = value * (abs(argument) + 10) * Decimal(10) ** -(digits - 3)
            low, high = float(value - margin), float(value + margin)
        if low == high:
            return low
        digits *= 2


# ---------------------------------------------------------------- the row reader


@dataclass(frozen=True)
class ProcessedRows:
    """SPEC section 9, the row reader of a decoder whose config sets ``sampling``: the target's
    rows processed (p'), the draft's processed (q') when ``sampling.draft`` is ``"processed"``
    and raw otherwise. Each row is processed once per model and settings (:func:`_table`), and a
    config reads its rows once (``Config.rows``)."""

    sampling: Sampling
    name: str = "processed"

    def read(self, config) -> Rows:
        """SPEC section 9: the :class:`~.rows.Rows` of ``config`` under :attr:`sampling`."""
        sampling = self.sampling
        draft = _table(config.draft, sampling).__getitem__ if sampling.draft == "processed" else config.draft.after
        return Rows(_table(config.target, sampling).__getitem__, draft)


def _table(model, sampling: Sampling) -> dict:
    """``{token: processed row after token}`` for ``None`` (the empty prefix) and every token,
    made once per model and settings while they are in :func:`_processed_table`'s memo (a
    session sends its config with every block; built-in and custom models are memoised, so the
    same model is the same object)."""
    return _processed_table(_Same(model), sampling.temperature, sampling.top_k, sampling.top_p, sampling.min_p)


class _Same:
    """A model as a memo key by identity (a model holds rows of exact integers: comparing two
    by value would cost as much as a lookup saves); it keeps the model alive while memoised."""

    __slots__ = ("model",)

    def __init__(self, model) -> None:
        self.model = model

    def __hash__(self) -> int:
        return id(self.model)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.model is self.model


@lru_cache(maxsize=64)
def _processed_table(key: _Same, *settings) -> dict:
    model, sampling = key.model, Sampling(*settings)
    return {None: process(model.start, sampling), **{i: process(row, sampling) for i, row in enumerate(model.rows)}}
