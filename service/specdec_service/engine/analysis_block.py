"""Exact analysis of block verification (mode ``block``, SPEC section 10; Sun et al. 2025).

Token-wise verification's block is a chain of independent per-position tests, which
:mod:`.analysis` folds into a dynamic program over contexts. Block verification judges the
drafted block as a whole (tau is the *last* i with ``eta_i < h_i``, and ``h_i`` depends on the
whole block's weights), so its law is computed by **enumerating the draft blocks**: every
sequence of up to k proposals the draft gives positive probability (drafting stops after an
EOS), with its weights and thresholds (:func:`.verifiers.block.weights_and_thresholds`'s rules,
carried along the enumeration), exactly.

For a draft-block prefix ``d_1..d_j`` of probability ``pi_j`` (the product of the ``q_i(d_i)``),
``F_j`` = E[prod_{i > j} (1 - h_i)] over the rest of the block, so that
``P(tau = j, d_1..d_j) = pi_j * h_j * F_j`` (``h_0 = 1``), with
``F_j = sum_x q_(j+1)(x) (1 - h_(j+1)) F_(j+1)`` and ``F = 1`` at a complete block: one pass over
the tree of draft blocks (:func:`block_law`). After ``tau = j < k'`` the block commits
``d_1..d_j`` and a correction from ``max(w_j p - q, 0)`` normalised; after ``tau = k'`` it commits
the whole block and, below the limit and after no EOS, a bonus from p.

The law of one block from a context depends on the context, ``k`` and whether a bonus may follow
(the limit): :func:`block_law` is cached per (context, k, bonus) and shared by every width of a
sweep. Sessions are then dynamic programs over (committed length, last token) for the
expectations (:func:`block_expectations`) and over committed prefixes shorter than ``depth`` for
the output distribution (:func:`block_output`).

**Cost.** The enumeration visits every draft-block prefix of every (context, k) a request needs
(:func:`draft_block_prefixes`, counted arithmetically), doing about ``V`` exact operations per visited prefix; the number
of prefixes grows as ``V^k``, so it is bounded: :data:`MAX_DRAFT_BLOCK_CELLS` prefixes times
``V`` per request (a 422 naming the bound beyond it, :func:`check_block_size`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple, Optional, Sequence

from .errors import InvalidInput
from .decoders import MODE_RULES
from .verifiers.block import scaled_mass, scaled_residual

ZERO, ONE = Fraction(0), Fraction(1)

MAX_DRAFT_BLOCK_CELLS = 500_000
"""The most ``draft-block prefixes x vocabulary`` one analysis of mode block may enumerate
(:func:`draft_block_cells`, an upper bound of the work): about 1 s of one core (measured: the
toy with the biased draft, limit 8, every width 1-8 swept, is 472,320 cells by that count; the
whole analysis took 1.0 s of CPU; docs/analysis.md)."""
BLOCK_DP_FACTOR = 20
"""How many times more an operation between blocks weighs in mode block's cost than in the
token-wise program's (:func:`.analysis.analysis_cost`): the session programs here add and
multiply :class:`~fractions.Fraction` values (a gcd each), measured at about 20 times the
scaled-integer operations (the toy at limit 256, widths 1-8: 3.5 s for 185,000 units)."""
BLOCK_CELL_COST = 2
"""Analysis units (about 1 us of one core) per draft-block cell, in the cost model of
``POST /v1/analysis`` (:func:`.analysis.analysis_cost`): 1.0 s / 472,320 cells is about 2 us."""


class BlockLaw(NamedTuple):
    """The exact law of one block: ``outcomes`` ``{committed tokens (a tuple of indices):
    probability}``, ``counters`` (the expected SPEC 7 counters in their order) and ``moves``
    ``{(tokens committed, last token): probability}`` (what the next block depends on)."""

    outcomes: dict
    counters: tuple
    moves: dict


def _row(dist) -> list:
    return [Fraction(w, dist.total) for w in dist.weights]


class _Enumeration:
    """One pass over the tree of draft blocks from one context (:func:`block_law`)."""

    def __init__(self, rows, eos: Optional[int], k: int, bonus_allowed: bool) -> None:
        self.rows, self.eos, self.k, self.bonus_allowed = rows, eos, k, bonus_allowed
        self.outcomes: dict = {}
        self.drafted = self.accepted = self.rejected = self.bonus = ZERO

    def add(self, tokens: tuple, weight: Fraction, dist) -> None:
        """Add the outcomes ``tokens + (y,)`` with probability ``weight * dist(y)``."""
        outcomes = self.outcomes
        for y, r in enumerate(dist.weights):
            if r:
                key = tokens + (y,)
                outcomes[key] = outcomes.get(key, ZERO) + weight * Fraction(r, dist.total)

    def threshold(self, tokens: tuple, w: Fraction) -> Fraction:
        """h_j of a prefix ``tokens`` whose weight is ``w`` (SPEC 10.3): w at a complete block."""
        if self.complete(tokens):
            return w
        last = tokens[-1]
        s = scaled_mass(self.rows.target(last), self.rows.draft(last), w)
        return ONE if s + 1 - w == 0 else s / (s + 1 - w)

    def complete(self, tokens: tuple) -> bool:
        """Whether drafting stops after ``tokens``: k proposals, or a drafted EOS (SPEC 4.1, 6)."""
        return len(tokens) == self.k or (bool(tokens) and tokens[-1] == self.eos)

    def leaf(self, tokens: tuple, pi: Fraction, h: Fraction) -> None:
        """A complete block: tau = k' with probability ``pi * h``, then the bonus or nothing."""
        j, p_all = len(tokens), pi * h
        self.drafted += pi * j
        self.accepted += j * p_all
        if self.bonus_allowed and tokens[-1] != self.eos:
            self.bonus += p_all
            self.add(tokens, p_all, self.rows.target(tokens[-1]))
        elif p_all:
            self.outcomes[tokens] = self.outcomes.get(tokens, ZERO) + p_all

    def visit(self, tokens: tuple, pi: Fraction, w: Fraction, h: Fraction, last: Optional[int]) -> Fraction:
        """Visit the prefix ``tokens`` (probability ``pi``, weight ``w``, threshold ``h``);
        returns ``F`` = E[prod of (1 - h_i) over the rest of the block]."""
        if self.complete(tokens):
            self.leaf(tokens, pi, h)
            return ONE
        p, q = self.rows.target(last), self.rows.draft(last)
        f = ZERO
        for x, qx in enumerate(q.weights):
            if not qx:
                continue
            child = tokens + (x,)
            w_child = min(ONE, w * Fraction(p.weights[x] * q.total, p.total * qx))
            h_child = self.threshold(child, w_child)
            q_x = Fraction(qx, q.total)
            f += q_x * (1 - h_child) * self.visit(child, pi * q_x, w_child, h_child, x)
        stop = pi * h * f  # P(tau = j, this prefix)
        if stop:
            j = len(tokens)
            self.rejected += stop
            self.accepted += j * stop
            self.add(tokens, stop, scaled_residual(p, q, w))
        return f


def block_law(rows, eos: Optional[int], start: Optional[int], k: int, bonus_allowed: bool) -> BlockLaw:
    """The exact law of one block of mode block from context ``start`` with ``k`` proposals
    (SPEC 10): its committed tokens and expected counters (SPEC 7). ``rows`` are the mode's
    rows (:class:`~.rows.Rows`), ``bonus_allowed`` whether the limit lets a bonus follow."""
    walk = _Enumeration(rows, eos, k, bonus_allowed)
    walk.visit((), ONE, ONE, ONE, start)
    drafted, accepted, rejected, bonus = walk.drafted, walk.accepted, walk.rejected, walk.bonus
    counters = (ONE, drafted, accepted, rejected, drafted - accepted - rejected, bonus,
                accepted + rejected + bonus, 2 * drafted + rejected + bonus)
    moves: dict = {}
    for tokens, pr in walk.outcomes.items():
        key = (len(tokens), tokens[-1])
        moves[key] = moves.get(key, ZERO) + pr
    return BlockLaw(walk.outcomes, counters, moves)


class BlockLaws:
    """:func:`block_law` of one config, cached per (context, k, bonus): shared by every width."""

    def __init__(self, config) -> None:
        decoder = MODE_RULES["block"]
        self.rows, self.eos, self.config = decoder.rows.read(config), config.eos, config
        self.bonus_rule = decoder.verifier.bonus
        self._laws: dict = {}
        self._cuts: dict = {}

    def law(self, start: Optional[int], k: int, bonus_allowed: bool) -> BlockLaw:
        """The law of a block from ``start`` with ``k`` proposals (cached)."""
        key = (start, k, bonus_allowed)
        if key not in self._laws:
            self._laws[key] = block_law(self.rows, self.eos, start, k, bonus_allowed)
        return self._laws[key]

    def cut(self, start: Optional[int], k: int, bonus_allowed: bool, room: int) -> dict:
        """The law's outcomes cut to their first ``room`` tokens, summed (cached): all the
        output distribution needs of a block that starts ``room`` tokens before ``depth``."""
        key = (start, k, bonus_allowed, room)
        if key not in self._cuts:
            cut: dict = {}
            for tokens, pr in self.law(start, k, bonus_allowed).outcomes.items():
                head = tokens[:room]
                cut[head] = cut.get(head, ZERO) + pr
            self._cuts[key] = cut
        return self._cuts[key]

    def at(self, width: int, length: int) -> tuple[int, bool]:
        """``(k, bonus allowed)`` of a block after ``length`` committed tokens at ``width``
        (SPEC 4.1, 4.4: the limit clips k and forbids the bonus)."""
        k = min(width, self.config.limit - length)
        return k, not self.bonus_rule.limited(self.config, length, k)


def block_expectations(laws: BlockLaws, width: int) -> dict:
    """The expected total of every SPEC 7 counter over all sessions of mode block at ``width``
    (the config's target, draft, limit and EOS): ``{counter name: Fraction}``. Dynamic program
    over (committed length, last token)."""
    from .state import COUNTER_NAMES

    limit, eos = laws.config.limit, laws.eos
    mass: list[dict] = [dict() for _ in range(limit)]
    mass[0][None] = ONE
    totals = [ZERO] * len(COUNTER_NAMES)
    for length in range(limit):
        k, bonus_allowed = laws.at(width, length)
        for c, m in mass[length].items():
            law = laws.law(c, k, bonus_allowed)
            totals = [t + m * v for t, v in zip(totals, law.counters)]
            for (count, last), pr in law.moves.items():
                after = length + count
                if after < limit and last != eos:
                    row = mass[after]
                    row[last] = row.get(last, ZERO) + m * pr
    return dict(zip(COUNTER_NAMES, totals))


def block_output(laws: BlockLaws, width: int, depth: int) -> dict:
    """The exact distribution of the first ``depth`` committed tokens of mode block (shorter
    where a committed EOS ends the session first): ``{tokens: probability > 0}``."""
    eos = laws.eos
    boundary: list[dict] = [dict() for _ in range(depth)]
    boundary[0][()] = ONE
    final: dict = {}
    for length in range(depth):
        k, bonus_allowed = laws.at(width, length)
        for prefix, m in boundary[length].items():
            for tokens, pr in laws.cut(prefix[-1] if prefix else None, k, bonus_allowed, depth - length).items():
                full = prefix + tokens
                if len(full) >= depth or full[-1] == eos:
                    key = full[:depth]
                    final[key] = final.get(key, ZERO) + m * pr
                else:
                    row = boundary[len(full)]
                    row[full] = row.get(full, ZERO) + m * pr
    return final


def accepted_per_block(laws: BlockLaws, width: int) -> Fraction:
    """E[accepted proposals] of the first block from the empty prefix with k = ``width``
    proposals (no limit): SPEC 10's per-width figure (219/200 at width 2 on toy/biased)."""
    return laws.law(None, width, True).counters[2]


# ---------------------------------------------------------------- cost and bound


def _supports(rows, size: int) -> dict:
    """``{context: the tokens the draft row after it gives positive probability}`` (``None``:
    the empty prefix), read from ``rows`` (:class:`~.rows.Rows`)."""
    return {c: [y for y, w in enumerate(rows.draft(c).weights) if w] for c in [None, *range(size)]}


def draft_block_prefixes(config, k_max: int, rows=None) -> list[int]:
    """``[N_0, N_1, .., N_k_max]``: ``N_k`` the draft-block prefixes of length 1..k (positive
    draft probability, drafting stopped after an EOS) summed over every start context (the empty
    prefix and each token): what :func:`block_law` visits for that ``k`` from all contexts.

    One dynamic program over (depth, last token) with integer counts, all start contexts at once
    (the count is linear in the start): about ``k_max * V^2`` integer additions (V the
    vocabulary), whatever the rows' digits. ``rows`` default to the mode's rows (processed by
    SPEC 9's sampling parameters when set); the models' own rows give an upper bound (sampling
    only removes tokens from a row's support)."""
    rows = MODE_RULES["block"].rows.read(config) if rows is None else rows
    eos, supports = config.eos, _supports(rows, len(config.vocab))
    counts: dict = {c: 1 for c in supports}
    totals = [0]
    for _ in range(k_max):
        nxt: dict = {}
        level = 0
        for c, n in counts.items():
            support = supports[c]
            level += n * len(support)
            for y in support:
                if y != eos:
                    nxt[y] = nxt.get(y, 0) + n
        totals.append(totals[-1] + level)
        counts = nxt
    return totals


def _block_ks(config, widths: Sequence[int]) -> set[int]:
    """Every k a block law is computed for: 1 to min(width, limit) for the config's width and
    each swept width, and each of those widths alone (the comparison, no limit)."""
    every = {config.width, *widths}
    return {k for w in every for k in range(1, min(w, config.limit) + 1)} | every


def draft_block_cells(config, widths: Sequence[int], depth: int, rows=None) -> int:
    """The enumeration work of an analysis of mode block at the config's width and ``widths``
    (an upper bound): for every k a session needs (1 to min(width, limit)) and the comparison's
    k = width (no limit), the draft-block prefixes visited from every context, twice (a block
    law with and without a bonus), times the vocabulary. ``rows`` as in
    :func:`draft_block_prefixes`."""
    ks = _block_ks(config, widths)
    prefixes = draft_block_prefixes(config, max(ks), rows)
    return 2 * len(config.vocab) * sum(prefixes[k] for k in ks)


def _support_kept(sampling) -> bool:
    """Whether the draft rows the mode reads have the models' supports (SPEC 9): no sampling
    parameters, a raw draft, or a positive temperature alone (``p^(1/T) > 0`` exactly when
    ``p > 0``); top-k, top-p, min-p and temperature 0 may remove tokens."""
    if sampling is None or sampling.empty or sampling.draft == "raw":
        return True
    truncated = sampling.top_k is not None or sampling.top_p is not None or sampling.min_p is not None
    return not truncated and sampling.temperature != 0


def check_block_size(config, widths: Sequence[int], depth: int) -> None:
    """Raise :class:`InvalidInput` (path ``widths``, or ``config/width`` when the config's own
    width is too wide) when an analysis of mode block would enumerate more than
    :data:`MAX_DRAFT_BLOCK_CELLS` draft-block cells (:func:`draft_block_cells`).

    Counted before any enumeration, arithmetically (:func:`draft_block_prefixes`, about
    ``16 * V^2`` integer additions at the widest sweep, whatever the rows' digits). The count is
    taken on the models' own rows (an upper bound: no row is processed when that is within the
    bound), and on the processed rows only beyond it when the processing may remove tokens
    (:func:`_support_kept`)."""
    rows = config.model_rows
    cells = draft_block_cells(config, widths, depth, rows)
    if cells > MAX_DRAFT_BLOCK_CELLS and not _support_kept(config.sampling):
        rows = config.rows
        cells = draft_block_cells(config, widths, depth, rows)
    if cells <= MAX_DRAFT_BLOCK_CELLS:
        return
    alone = draft_block_cells(config, [], depth, rows)
    path = ("config", "width") if alone > MAX_DRAFT_BLOCK_CELLS else ("widths",)
    raise InvalidInput.at(path, f"mode block enumerates every draft block: these widths need {cells:,} draft-block "
                                f"prefixes x vocabulary, over the bound of {MAX_DRAFT_BLOCK_CELLS:,}; sweep fewer or "
                                f"smaller widths, or a smaller vocabulary")
