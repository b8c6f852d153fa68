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
from math import isfinite
from typing import Any, Optional

from .distributions import Dist, argmax
from .errors import Fault, InvalidInput
from .proposals import point_mass
from .rows import Rows


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

SAMPLING_KEYS = ("temperature", "top_k", "top_p", "min_p", "draft")
"""The fields of a ``sampling`` object (SPEC section 9), all optional."""
MAX_TOP_K = 64
"""The largest ``top_k`` (SPEC section 9)."""
_LOWEST_TEMPERATURE = Fraction(1, 20)
_BOUNDS = {
    "temperature": (lambda x: x == 0 or _LOWEST_TEMPERATURE <= x <= 20, "must be 0 or a number from 0.05 to 20"),
    "top_p": (lambda x: 0 < x <= 1, "must be a number above 0 and at most 1"),
    "min_p": (lambda x: 0 <= x <= 1, "must be a number from 0 to 1"),
}


def parse_sampling(obj: Any, path: tuple = ("sampling",)) -> Sampling:
    """Read a ``sampling`` object (SPEC section 9): any of ``temperature`` (0, or 0.05 to 20),
    ``top_k`` (an integer from 1 to 64), ``top_p`` (0 < top_p <= 1), ``min_p`` (0 to 1), each
    read as the decimal written, and ``draft`` (``"processed"``, the default, or ``"raw"``).

    Raises :class:`~.errors.InvalidInput` naming each bad field (paths under ``path``) and its
    bound."""
    if not isinstance(obj, dict):
        raise InvalidInput.at(path, "must be an object with any of temperature, top_k, top_p, min_p and draft")
    faults = [Fault(path + (key,), "is not a sampling parameter (temperature, top_k, top_p, min_p, draft)")
              for key in obj if key not in SAMPLING_KEYS]
    values = {}
    for key, (holds, message) in _BOUNDS.items():
        if key in obj:
            value = _number(obj[key])
            if value is None or not holds(value):
                faults.append(Fault(path + (key,), message))
            values[key] = value
    top_k = obj.get("top_k")
    if "top_k" in obj and (type(top_k) is not int or not 1 <= top_k <= MAX_TOP_K):
        faults.append(Fault(path + ("top_k",), f"must be an integer from 1 to {MAX_TOP_K}"))
    draft = obj.get("draft", "processed")
    if draft not in ("processed", "raw"):
        faults.append(Fault(path + ("draft",), "must be one of processed, raw"))
    if faults:
        raise InvalidInput(faults)
    return Sampling(values.get("temperature"), top_k, values.get("top_p"), values.get("min_p"), draft)


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
    return Dist.of_weights(w if w >= kth else 0 for w in weights)


def with_top_p(row: Dist, top_p: Fraction) -> Dist:
    """SPEC section 9.3: in order of probability (largest first, ties in vocabulary order), keep
    a token iff the probability of the tokens before it is strictly less than ``top_p``."""
    weights = row.weights
    order = sorted(range(len(weights)), key=lambda i: -weights[i])  # stable: ties in vocabulary order
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
    (SPEC section 9.1): exact when the exponent is an integer or the result is rational;
    otherwise the float64 nearest to the real value (ties to even), as the exact rational that
    float64 is. Zero stays zero."""
    if p == 0 or p == 1:
        return p
    if exponent.denominator == 1:
        return p ** exponent.numerator
    exact = _rational_root(p ** exponent.numerator, exponent.denominator)
    if exact is not None:
        return Fraction(float(exact))  # a rational result: int / int rounds to nearest, ties to even
    return Fraction(_nearest_float(p, exponent))


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
        s = ((n - 1) * r + x // r ** (n - 1)) // n
        if s >= r:
            break
        r = s
    return r if r ** n == x else None


@lru_cache(maxsize=4096)
def _nearest_float(p: Fraction, exponent: Fraction) -> float:
    """The float64 nearest to the irrational ``p ** exponent``: evaluated as exp(exponent * ln p)
    with a growing number of digits until an interval around it, wider than the evaluation's
    error, rounds to one float64 at both ends."""
    digits = 40
    while True:
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
    and raw otherwise. Each row is processed once per config (kept with the config)."""

    sampling: Sampling
    name: str = "processed"

    def read(self, config) -> Rows:
        """SPEC section 9: the :class:`~.rows.Rows` of ``config`` under :attr:`sampling`."""
        memo = config.__dict__.setdefault("_processed_rows", {})
        rows = memo.get(self.sampling)
        if rows is None:
            sampling = self.sampling
            draft = _table(config.draft, sampling).__getitem__ if sampling.draft == "processed" else config.draft.after
            rows = memo[sampling] = Rows(_table(config.target, sampling).__getitem__, draft)
        return rows


def _table(model, sampling: Sampling) -> dict:
    """``{token: processed row after token}`` for ``None`` (the empty prefix) and every token."""
    return {None: process(model.start, sampling), **{i: process(row, sampling) for i, row in enumerate(model.rows)}}
