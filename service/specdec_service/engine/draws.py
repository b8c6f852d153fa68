"""The SplitMix64 draw stream (SPEC section 2).

Draw number ``n`` of a seed is computed directly from ``(seed, n)``, so any
position is reachable in O(1). The stream equals the successive
``nextDouble()`` calls of ``java.util.SplittableRandom(seed)``
(``tests/fixtures/splittable_random.json`` proves it against the JDK).
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from typing import NamedTuple, Protocol

from .bounds import MAX_DRAWS_SLICE, MAX_POSITION, MAX_SEED, int_in
from .errors import Fault, InvalidInput

_DOUBLE_UNIT = 2.0**-53
_TWO_53 = 2**53


class Cuts(Protocol):
    """What a draw samples a token from (SPEC section 3): ``cumulative``, non-decreasing integers
    (the running sums of a row's weights; the last at least ``total``), over ``total`` (> 0)."""

    @property
    def cumulative(self) -> tuple[int, ...]:
        """The running sums, non-decreasing; the last is at least :attr:`total`."""

    @property
    def total(self) -> int:
        """The common denominator (positive)."""


class Uniform(Protocol):
    """One draw ``u``, uniform on [0, 1), as a rule sees it: it asks questions and never reads
    ``u`` itself. This is the seam between a decoder and its law: the SplitMix64 stream answers
    for one seed (:class:`Draw`); an exact enumerator answers on every branch at once, each with
    its probability (:mod:`.enumeration`). A draw may be asked several questions (a decision
    and, by a catalogued mistake, a correction from the same draw); each answer conditions the
    next."""

    def below(self, num: int, den: int) -> bool:
        """``u < num / den`` exactly (``num >= 0``, ``den >= 0``; ``den = 0``: ``num > 0``).
        SPEC 4.2's test ``u * q(x) < p(x)`` is ``below(p(x) * total(q), total(p) * q(x))``."""

    def pick(self, row: Cuts) -> int:
        """SPEC section 3: the first token ``i`` with ``u < cumulative[i] / total``."""

    def to_json(self) -> dict:
        """The draw as a trace records it: ``{"position", "u", "hex"}``."""

    def at_most(self, num: int, den: int) -> bool:
        """``u <= num / den`` exactly (as :meth:`below`)."""

    def scaled(self, factor: Fraction) -> float:
        """``u * factor`` as the nearest float64: a figure of a trace record, never a decision."""


class Draws(Protocol):
    """Where a block takes its draws, in the order SPEC gives (section 2): ``position`` is the
    next unused one. :class:`Stream` is the SplitMix64 stream of one seed;
    :class:`.enumeration.Branch` is every stream at once."""

    position: int

    def take(self) -> Uniform:
        """The draw at the next unused position, which moves on by one."""

    def last(self) -> Uniform:
        """The draw just taken (at ``position - 1``), again: only a catalogued mistake reuses one."""

    def skip(self, count: int = 1) -> None:
        """Leave ``count`` positions unused (no SPEC rule does: a catalogued mistake's)."""


class Draw(NamedTuple):
    """One draw of the stream (an immutable value; a named tuple because
    blocks create many and it is the cheapest immutable record).

    ``mantissa`` is the 53-bit integer ``m`` with ``u = m * 2**-53`` exactly;
    the rules compare with ``mantissa`` so that no rounding enters a decision.
    ``raw`` is the 64-bit value ``z`` before the final shift.
    """

    position: int
    mantissa: int
    raw: int

    @property
    def u(self) -> float:
        """The draw as a double in [0, 1), a multiple of 2**-53 (exact)."""
        return self.mantissa * _DOUBLE_UNIT

    @property
    def hex(self) -> str:
        """``raw`` as 16 lower-case hex digits."""
        return f"{self.raw:016x}"

    def to_json(self) -> dict:
        """``{"position": n, "u": float, "hex": "16 hex digits"}``."""
        return {"position": self[0], "u": self[1] * _DOUBLE_UNIT, "hex": "%016x" % self[2]}

    def below(self, num: int, den: int) -> bool:
        """``u < num / den``, exactly: ``m * den < num * 2^53`` (:class:`Uniform`)."""
        return self[1] * den < num * _TWO_53

    def at_most(self, num: int, den: int) -> bool:
        """``u <= num / den``, exactly: ``m * den <= num * 2^53`` (:class:`Uniform`)."""
        return self[1] * den <= num * _TWO_53

    def pick(self, row: Cuts) -> int:
        """SPEC section 3 (:class:`Uniform`): with ``u = m / 2^53`` the first ``i`` with
        ``m * total < c_i * 2^53``, i.e. ``c_i > floor(m * total / 2^53)``: a binary search."""
        return bisect_right(row.cumulative, (self[1] * row.total) >> 53)

    def scaled(self, factor: Fraction) -> float:
        """``u * factor`` as the nearest float64 (a record's figure)."""
        value = Fraction(self[1], _TWO_53) * factor
        return value.numerator / value.denominator


def raw_value(seed: int, position: int) -> int:
    """SplitMix64 ``z`` for draw ``position`` of ``seed`` (SPEC section 2), before
    the final ``>> 11``; an unsigned 64-bit integer."""
    z = (seed + (position + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def draw(seed: int, position: int) -> Draw:
    """Draw number ``position`` (0-based) of ``seed``, in O(1) (SPEC section 2: ``u`` is
    the top 53 bits of :func:`raw_value`).

    Both arguments must lie in 0..2**53-1; callers validate them.
    """
    z = raw_value(seed, position)
    return Draw(position, z >> 11, z)


def draw_slice(seed: int, position: int, count: int) -> list[Draw]:
    """``count`` consecutive draws starting at ``position``.

    Raises :class:`InvalidInput` (paths ``seed``, ``position``, ``count``)
    unless 0 <= seed <= MAX_SEED, 1 <= count <= MAX_DRAWS_SLICE and
    0 <= position <= position + count - 1 <= MAX_POSITION.
    """
    faults = []
    if not int_in(seed, 0, MAX_SEED):
        faults.append(Fault(("seed",), f"must be an integer from 0 to 2^53-1 ({MAX_SEED})"))
    if not int_in(count, 1, MAX_DRAWS_SLICE):
        faults.append(Fault(("count",), f"must be an integer from 1 to {MAX_DRAWS_SLICE}"))
    if not int_in(position, 0, MAX_POSITION):
        faults.append(Fault(("position",), f"must be an integer from 0 to 2^53-1 ({MAX_POSITION})"))
    elif not faults and position + count - 1 > MAX_POSITION:
        faults.append(Fault(("position",), f"position + count - 1 must not exceed 2^53-1 ({MAX_POSITION})"))
    if faults:
        raise InvalidInput(faults)
    return [draw(seed, n) for n in range(position, position + count)]


_new_draw = tuple.__new__
"""``Draw(position, mantissa, raw)`` without the named tuple's Python-level constructor."""


class Stream:
    """The draw stream of one block (SPEC section 2): the next unused position of a seed's
    stream, which every draw taken advances by one. Proposal rules and verifiers take their
    draws from it in the order the SPEC gives, so a rule never counts positions itself.

    ``seed`` and ``position`` are integers 0..2**53-1 (the block checks the position it ends at).
    """

    __slots__ = ("seed", "position")

    def __init__(self, seed: int, position: int) -> None:
        self.seed = seed
        self.position = position

    def take(self) -> Draw:
        """SPEC section 2: the draw at the next unused position, which moves on by one
        (:func:`draw`, inlined: a block takes one draw per proposal, verification and
        correction or bonus)."""
        n = self.position
        self.position = n + 1
        z = (self.seed + (n + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        z ^= z >> 31
        return _new_draw(Draw, (n, z >> 11, z))

    def last(self) -> Draw:
        """The draw at ``position - 1`` again (:class:`Draws`; only a catalogued mistake reuses one)."""
        return draw(self.seed, self.position - 1)

    def skip(self, count: int = 1) -> None:
        """Leave ``count`` positions unused (no SPEC rule does: a catalogued mistake's)."""
        self.position += count
