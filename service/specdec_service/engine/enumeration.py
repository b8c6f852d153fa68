"""The exact law of a decoder: every draw stream at once (SPEC section 2's draws as uniform
variables; the other side of the seam :mod:`.draws` states).

A rule never reads a draw's value: it asks ``below(num, den)`` (an acceptance test),
``at_most`` or ``pick(row)`` (sampling a token, SPEC 3) (:class:`~.draws.Uniform`). Here a draw
is a uniform variable on an interval ``[lo, hi)`` of [0, 1): a question splits the interval,
each part a branch with the exact probability of its share of the length
(:class:`~fractions.Fraction`). So a draw asked twice (a catalogued mistake's correction from
the draw that rejected) is conditioned on the first answer, and draws taken again at the same
position (a catalogued mistake's chains drafted from the same draws) are the same variable.

- :func:`block_law`: the law of one block of ``state`` under a decoder, by running the SAME
  :func:`~.block_loop.play` once per branch (:class:`Branch`, depth first: each run replays the
  answers its prefix names and takes the first answer past it). Outcomes: the committed
  tokens and the block's counters (SPEC 7).
- :func:`session_law`: the law of whole sessions from the empty prefix: a forward pass over
  block boundaries in order of committed length, where sessions that reach the same state
  are merged. The models are bigram (SPEC 1: a row depends on the last token only), so a
  block's law depends on the committed length and the last token only: one
  :func:`block_law` per ``(length, last token)``. Returns the exact distribution of the
  first ``depth`` committed tokens and the expected total of every counter.

Exact for any decoder whose rules ask their draws these questions (every mode, every tree
setting and the catalogued mistakes but those that multiply draws: :class:`NotEnumerable`).
The closed forms of :mod:`.chain_law`, :mod:`.analysis_block`, :mod:`.tree_analysis` and
:mod:`.tree_law` scale to the analysis's sizes; ``tests/test_enumeration.py`` proves them equal
to this enumeration on small configs.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Hashable, NamedTuple, Optional, Sequence

from .block_loop import StepResult, play
from .state import COUNTER_NAMES, Counters, State
from .trees import AnyDecoder, decoder_of

ZERO, ONE, TWO = Fraction(0), Fraction(1), Fraction(2)

MAX_BRANCHES = 200_000
"""Branches (runs of :func:`~.block_loop.play`) one :func:`session_law` may take in all."""


class NotEnumerable(Exception):
    """A decoder this enumeration cannot follow: too many branches, or a rule that reads a
    draw's value (no rule of SPEC does)."""


def _threshold(num: int, den: int) -> Fraction:
    """``num / den``; ``den = 0`` (a ratio over a probability 0): 2 when ``num > 0`` (every
    ``u`` is below it), else 0."""
    if den:
        return Fraction(num, den)
    return TWO if num > 0 else ZERO


@lru_cache(maxsize=4096)
def _fresh_parts(cumulative: tuple, total: int) -> tuple:
    """The parts of [0, 1) a row's cuts make (``(token, lo, hi)``, the empty ones left out; a
    cut past ``total`` read as 1)."""
    parts, floor = [], ZERO
    for i, cut in enumerate(cumulative):
        top = Fraction(min(cut, total), total)
        if floor < top:
            parts.append((i, floor, top))
            floor = top
    return tuple(parts)


class Interval:
    """One draw on one branch (a :class:`~.draws.Uniform`): ``u`` uniform on ``[lo, hi)``, what
    the answers so far leave of [0, 1). Its questions are answered by its :class:`Branch`."""

    __slots__ = ("branch", "position", "lo", "hi")

    def __init__(self, branch: "Branch", position: int) -> None:
        self.branch, self.position, self.lo, self.hi = branch, position, ZERO, ONE

    def below(self, num: int, den: int) -> bool:
        """``u < num / den``: two branches (either may be empty)."""
        t, lo, hi = _threshold(num, den), self.lo, self.hi
        if t >= hi:
            return True
        if t <= lo:
            return False
        return self.branch.answer(self, ((True, lo, t), (False, t, hi)))

    def at_most(self, num: int, den: int) -> bool:
        """``u <= num / den``: the branches of :meth:`below` (the point ``u = num / den`` has
        probability 0)."""
        return self.below(num, den)

    def pick(self, row) -> int:
        """SPEC 3: token ``i`` where ``u`` falls in ``[cumulative[i - 1], cumulative[i]) / total``."""
        parts = _fresh_parts(row.cumulative, row.total)
        lo, hi = self.lo, self.hi
        if lo is not ZERO or hi is not ONE:  # a draw asked before: its parts of [lo, hi)
            parts = tuple((i, max(a, lo), min(b, hi)) for i, a, b in parts if a < hi and lo < b)
        return self.branch.answer(self, parts)

    def to_json(self) -> dict:
        """``{"position": n, "u": None, "hex": None}``: a branch has no single value."""
        return {"position": self.position, "u": None, "hex": None}

    def scaled(self, factor: Fraction) -> float:
        """0.0: a record's figure, which a law does not read."""
        return 0.0


class Branch:
    """Every draw stream at once, along one branch (a :class:`~.draws.Draws`): ``path`` names the
    answer taken at each question with more than one (the first past its end); ``p`` is the
    exact probability of the branch so far, ``arity`` the number of answers of each question."""

    def __init__(self, path: tuple, position: int) -> None:
        self.path, self.position, self.p = path, position, ONE
        self.arity: list[int] = []
        self.draws: dict[int, Interval] = {}

    def take(self) -> Interval:
        """The draw at the next position (the same variable when a position is taken again)."""
        n = self.position
        self.position = n + 1
        d = self.draws.get(n)
        if d is None:
            d = self.draws[n] = Interval(self, n)
        return d

    def last(self) -> Interval:
        """The draw at ``position - 1``, again."""
        self.position -= 1
        return self.take()

    def skip(self, count: int = 1) -> None:
        """Leave ``count`` positions unused."""
        self.position += count

    def answer(self, u: Interval, options: Sequence[tuple[Any, Fraction, Fraction]]) -> Any:
        """Take one of ``options`` (``(answer, lo, hi)``, each a part of ``u`` of positive length)
        and narrow ``u`` to it; the branch's probability is multiplied by its share of ``u``'s
        length."""
        if len(options) > 1:
            at = len(self.arity)
            self.arity.append(len(options))
            value, lo, hi = options[self.path[at] if at < len(self.path) else 0]
            self.p *= (hi - lo) if u.lo is ZERO and u.hi is ONE else (hi - lo) / (u.hi - u.lo)
        else:
            value, lo, hi = options[0]
        u.lo, u.hi = lo, hi
        return value


class Outcome(NamedTuple):
    """One outcome of a block: the ``tokens`` it commits and its ``counters`` (SPEC 7)."""

    tokens: tuple[int, ...]
    counters: Counters


def block_law(state: State, decoder: Optional[AnyDecoder] = None, budget: Optional[list] = None,
              outcome: Optional[Callable[[StepResult, int], Hashable]] = None, cost: int = 1) -> dict[Any, Fraction]:
    """The exact law of the next block of ``state`` (open) under ``decoder`` (default: the
    config's, :func:`~.trees.decoder_of`): ``{Outcome: probability > 0}``, summing to 1, by
    one run of :func:`~.block_loop.play` per branch (``outcome(result, committed length)``: what an
    outcome is instead, e.g. with the rejected proposal a mistake carries). ``budget``:
    ``[branches left]``, decremented by ``cost`` per run. Raises :class:`NotEnumerable` past the budget or for a rule that reads a draw's value,
    ``ValueError`` where a rule is undefined on a branch of positive probability."""
    rules = decoder_of(state.config) if decoder is None else decoder
    length = len(state.committed)

    def run(prefix: tuple) -> tuple[Hashable, Fraction, list[int]]:
        branch = Branch(prefix, state.position)
        try:
            result = play(state, rules, draws=branch)
        except (AttributeError, TypeError) as error:  # a rule that reads a draw's value
            raise NotEnumerable(f"a rule reads a draw's value: {error}") from None
        if outcome is not None:
            return outcome(result, length), branch.p, branch.arity
        counters = Counters(*(after - before for after, before in zip(result.state.counters, state.counters)))
        return Outcome(result.state.committed[length:], counters), branch.p, branch.arity
    return depth_first(run, budget, cost)


def depth_first(run: Callable[[tuple], tuple[Hashable, Fraction, Sequence[int]]],
                budget: Optional[list] = None, cost: int = 1) -> dict[Any, Fraction]:
    """``{outcome: exact probability}`` over every branch of a program with answered questions:
    ``run(prefix)`` runs it once, taking the answers ``prefix`` names (the first one past its
    end), and returns ``(outcome, probability of the branch, arity of each question)``; depth
    first, each alternative answer one more run. ``budget``: ``[runs left]``, decremented by
    ``cost`` per run; :class:`NotEnumerable` when it runs out."""
    out: dict[Any, Fraction] = {}
    stack: list[tuple] = [()]
    while stack:
        if budget is not None:
            budget[0] -= cost
            if budget[0] < 0:
                raise NotEnumerable(f"the law would take more than {MAX_BRANCHES} branches")
        prefix = stack.pop()
        key, p, arity = run(prefix)
        out[key] = out.get(key, ZERO) + p
        for j in range(len(prefix), len(arity)):
            stack.extend(prefix + (0,) * (j - len(prefix)) + (alt,) for alt in range(1, arity[j]))
    return out


class SessionLaw(NamedTuple):
    """The law of whole sessions: ``output``, the exact distribution of the first ``depth``
    committed tokens (shorter where a committed EOS ends the session first; ``{tokens:
    probability > 0}``), and ``counters``, the expected total of every counter of SPEC 7
    (``{name: Fraction}``)."""

    output: dict[tuple[int, ...], Fraction]
    counters: dict[str, Fraction]


def session_law(config, decoder: Optional[AnyDecoder] = None, depth: Optional[int] = None,
                branches: int = MAX_BRANCHES) -> SessionLaw:
    """The exact law of ``config``'s sessions (from the empty prefix to the end) under
    ``decoder`` (default: the config's): a forward pass over block boundaries by committed
    length, merging sessions by (first ``depth`` tokens, length, last token); one
    :func:`block_law` per (length, last token). ``depth`` defaults to the limit. Raises
    :class:`NotEnumerable` past ``branches`` runs in all."""
    decoder = decoder_of(config) if decoder is None else decoder
    depth = config.limit if depth is None else depth
    budget = [branches]
    laws: dict[tuple, dict[Any, Fraction]] = {}
    frontier: dict[tuple, list] = {((), 0, None): [ONE, ()]}
    output: dict[tuple[int, ...], Fraction] = {}
    totals = [ZERO] * len(COUNTER_NAMES)
    while frontier:
        key = min(frontier, key=lambda k: k[1])
        chance, committed = frontier.pop(key)
        state = State(config, committed, 0, Counters())
        if state.done is not None:
            output[key[0]] = output.get(key[0], ZERO) + chance
            continue
        law = laws.get(key[1:])
        if law is None:
            law = laws[key[1:]] = block_law(state, decoder, budget)
        for (tokens, counters), p in law.items():
            totals = [t + chance * p * c for t, c in zip(totals, counters)]
            longer = committed + tokens
            nxt = (longer[:depth], len(longer), longer[-1])
            cell = frontier.setdefault(nxt, [ZERO, longer])
            cell[0] += chance * p
    return SessionLaw(output, dict(zip(COUNTER_NAMES, totals)))
