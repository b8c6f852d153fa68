"""Per-request work budgets: the cost model of every route and the refusal of a request over it.

Bytes are not work: a 1 MB ``POST /v1/grade`` of 1000 traces whose blocks were removed (each a
limit-256, width-16 session of its own) needs 1000 reference runs and once kept a worker busy
for 31 s. So every route states a **cost model** (a formula over the request's own numbers,
computed *before* any of the work) and a **budget** per request; a request whose cost is over
its route's budget is refused with a 422 problem (type :data:`OVER_BUDGET`) that names the
cost, the budget and how to split the request. The budgets are set so that the worst request a
route accepts takes at most about 2 s of one core (measured by ``bench/worst_cases.py``; the
table is in ``docs/service.md``).

Use (a route, or any pure-Python caller such as the grading package)::

    from specdec_service.budget import BUDGETS
    BUDGETS["POST /v1/grade"].check(cost, pointer="#/traces")   # raises OverBudget

The unit of the block routes is the **block unit**: a block of width ``w`` over a vocabulary of
``V`` tokens costs :func:`block_units` = ``(w + 8) * (V + 64)`` (its fixed part is worth about
8 proposals, a row of 64 probabilities about one; measured on the engine, docs/service.md).
A whole session costs at most ``limit`` blocks (each block commits at least one token, SPEC
section 6): :func:`session_units`. Pure Python, no Flask: :class:`OverBudget` becomes the
problem document in :mod:`specdec_service.api.problems`.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from .engine.bounds import MAX_DRAWS_SLICE
from .engine.tree_settings import block_drafts, block_shape

OVER_BUDGET = "tag:specdec,2026:problem/over-budget"
"""The problem type of a request over its route's budget (HTTP 422)."""
SKIP_BUDGETS_ENV = "SPECDEC_TESTING_SKIP_BUDGETS"
"""For tests only: when this environment variable is set (non-empty), :meth:`Budget.check` refuses
nothing, so a test can send a request past every estimate and prove that the CPU deadline
(:mod:`specdec_service.deadline`) stops it. Never set it in a deployment."""


def block_units(width: int, vocab: int) -> int:
    """The cost of one block of ``width`` proposals (1-16) over ``vocab`` tokens (2-64), in
    block units: ``(width + 8) * (vocab + 64)``. From 702 (width 1, 2 tokens) to 3072 (width
    16, 64 tokens)."""
    return (width + 8) * (vocab + 64)


def session_units(width: int, vocab: int, blocks: int) -> int:
    """The cost of ``blocks`` blocks of one session: ``blocks * block_units(width, vocab)``.
    A whole session has at most ``limit`` blocks (SPEC section 6)."""
    return blocks * block_units(width, vocab)


@dataclass(frozen=True)
class Budget:
    """The budget of one route.

    ``route`` (``"POST /v1/grade"``), ``unit`` (what the cost counts), ``limit`` (the largest
    cost accepted in one request), ``model`` (the cost formula, for people), ``split`` (how to
    split a request that is over), ``bound`` (the largest cost the route's input bounds allow, or
    ``None`` when only the budget bounds it: a route whose ``bound <= limit`` is never refused).
    """

    route: str
    unit: str
    limit: int
    model: str
    split: str
    bound: int | None = None

    def check(self, cost: int, pointer: str = "", record: bool = True) -> None:
        """Raise :class:`OverBudget` when ``cost`` (in :attr:`unit`) exceeds :attr:`limit`.
        ``pointer`` (a JSON Pointer fragment such as ``#/traces``) names the part to split;
        ``record=False``: a passed check is not the request's :class:`Meter` units (a second
        budget of a route that reports its first). Nothing is refused while
        :data:`SKIP_BUDGETS_ENV` is set (tests only)."""
        if cost > self.limit and not os.environ.get(SKIP_BUDGETS_ENV):
            raise OverBudget(self, cost, pointer)
        meter = METER.get() if record else None
        if meter is not None:
            meter.charge(self, cost)


class Meter:
    """The work units one request was allowed to spend: every :meth:`Budget.check` that passes
    while the meter is current (:data:`METER`) records its cost here. A check costs the whole
    request so far (``grade_many`` checks its references, then the references and the checks
    of its failing traces), so the request's units are those of its last passed check:
    :attr:`units` (``None`` when no check ran) in :attr:`unit` (the budget's, e.g. ``"block
    units"``). A refused request (:class:`OverBudget`) spends nothing beyond its earlier checks.
    The HTTP layer reports it in the metrics and the log lines (:mod:`specdec_service.observe`)."""

    __slots__ = ("units", "unit")

    def __init__(self) -> None:
        self.units: Optional[int] = None
        self.unit: Optional[str] = None

    def charge(self, budget: "Budget", cost: int) -> None:
        """Record a passed check of ``cost`` units of ``budget``."""
        self.units, self.unit = cost, budget.unit


METER: ContextVar[Optional[Meter]] = ContextVar("specdec_budget_meter", default=None)
"""The :class:`Meter` of the request being served in this context, or ``None`` (no request:
checks record nothing). Set by the HTTP layer before each request."""


class OverBudget(Exception):
    """A request whose cost exceeds its route's :class:`Budget` (HTTP 422, :data:`OVER_BUDGET`).

    ``detail`` names the cost, the budget, the cost model and how to split the request."""

    def __init__(self, budget: Budget, cost: int, pointer: str = ""):
        self.budget, self.cost, self.pointer = budget, cost, pointer
        self.detail = (f"This request would cost {cost:,} {budget.unit} ({budget.model}), over the budget of "
                       f"{budget.limit:,} per request: {budget.split}")
        super().__init__(self.detail)

    def to_json(self) -> dict:
        """The problem's extension members: ``cost``, ``budget``, ``unit`` and, with a
        pointer, ``errors`` naming the part of the body to split."""
        body = {"cost": self.cost, "budget": self.budget.limit, "unit": self.budget.unit}
        if self.pointer:
            body["errors"] = [{"pointer": self.pointer, "detail": f"costs {self.cost:,} {self.budget.unit}, "
                                                                  f"over the budget of {self.budget.limit:,}"}]
        return body


GRADE_REFERENCE_WEIGHT = 5
"""A grading request's reference runs count 5 times their :func:`block_units`: measured with
bench/worst_cases.py, a reference block costs about that much more than a block of the checks or
the variants of a failing trace (a reference records every row and draw of every block; the
variants mostly stop early), and the budget holds for both kinds of request."""

MODE_WEIGHT = {"block": 10}
"""How many block units one block of a mode weighs beyond the token-wise one (1 for modes not
listed): block verification computes k weights and thresholds over the vocabulary in exact
fractions (SPEC 10), about ten times a token-wise block (measured: a 64-token custom pair, width
16, limit 256, target and draft apart, 256 blocks: 0.31 s of CPU in mode block against 0.032 s
in mode speculative). The grading budget counts a block-mode reference and its variants with it."""


def mode_weight(mode: str) -> int:
    """:data:`MODE_WEIGHT` of ``mode`` (1 when not listed)."""
    return MODE_WEIGHT.get(mode, 1)


RUN_MODE_WEIGHT = {"block": 6, "tree": 3}
"""How much one block unit of a mode weighs in a session's overhead (:func:`overhead_units`; 1 for
the modes not listed), measured with the worst runs (two 64-token one-hot models, target and draft
apart, width 16, limit 256: 255 blocks; CPU seconds at load 8-10, 1 December 2026): speculative
0.062 s, block 0.29 s (4.7 times; 5.7 at load 15, 3 December: counted 6), tree with 8 drafts
0.93 s for blocks of 128 drafted proposals (5.7 times the units of one chain, 15 times the time).
The exact arithmetic, which grows with the rows' bits, is counted apart (:func:`config_work`)."""


def run_cost(config) -> int:
    """The cost of ``POST /v1/runs`` in work units: :func:`session_work` of ``limit`` blocks (SPEC
    6: each block commits at least one token), computed from the config as read, before its rows
    are processed."""
    return session_work(config, config.limit)


def exact_chars(bits: int) -> int:
    """The characters of one exact ratio of two row entries written as a string (``"n/d"``):
    numerator and denominator each of about ``2 * bits`` bits (``bits`` the size of the rows'
    largest denominator), ``ceil(4 * bits * log10 2) + 2`` (log10 2 taken as 1233 / 4096)."""
    return -(-4 * bits * 1233 // 4096) + 2


def run_trace_chars(mode: str, width: int, drafts: int, vocab: int, limit: int, row_bits: int) -> int:
    """An upper estimate of the characters of the exact strings in a ``POST /v1/runs`` trace
    (``*_exact``: SPEC 9-11 keep them exact, so they grow with the rows' bits times their number),
    for at most ``limit`` blocks, each string :func:`exact_chars` long on average:

    * mode ``speculative``: ``width`` ratios and a correction row of ``vocab`` entries a block;
    * mode ``block``: the weight and the threshold of position k are products of k ratios (SPEC
      10): ``width * (width + 1)`` ratio lengths a block, plus the correction row;
    * mode ``tree``: a run tests at most ``drafts`` children for each token it commits and
      ``drafts`` more at each block's end (at most ``2 * drafts * limit``), each test recording a
      residual row ``r_exact`` of ``vocab`` entries that grows with the rejections before it
      (counted twice a ratio on average): ``width + 4 * drafts * vocab`` ratio lengths a block.

    Measured (two 64-token models of random 15-digit rows processed at temperature 0.05, bits
    940, width 16; docs/service.md): the estimate is 2-3 times the whole response's bytes."""
    if mode == "block":
        per_block = width * (width + 1) + vocab
    elif mode == "tree":
        per_block = width + 4 * drafts * vocab
    else:
        per_block = width + vocab
    return limit * per_block * exact_chars(row_bits)


def run_size(config) -> int:
    """:func:`run_trace_chars` of a parsed config (``engine.state.Config``), its rows' bits
    :func:`config_row_bits` (an upper bound, known before processing them)."""
    return run_trace_chars(config.mode, config.width, block_drafts(config), len(config.vocab), config.limit,
                           config_row_bits(config))


RUN_TRACE_CHARS = 16_000_000
"""The bound of a ``POST /v1/runs`` trace's exact strings in :func:`run_trace_chars` characters
(:data:`RUN_SIZE`), checked after the work budget and before any decoding. Measured with the
Flask test client (1 December 2026, load 8-10; estimate / real response bytes / CPU): the toy in
mode tree with 8 drafts, width 16, limit 256 at temperature 0.05, 2,867,200 / 4.2 MB / 0.14 s
(every built-in run fits; the rest of such a trace, tokens and draws, is not counted); two
64-token models of random 6-digit rows without sampling in mode tree with 8 drafts, limit 256:
14,266,368 (fits); of 15-digit rows processed at temperature 0.05 (940 bits), width 16: mode tree
with 8 drafts, limit 8 / 32: 18,724,608 / 6.2 MB / 0.41 s and 74,898,432 / 25 MB / 1.1 s, mode
block, limit 32 / 64: 12,192,768 / 5.7 MB / 1.4 s and 24,385,536 (refused; such runs once
answered with 147 MB and 54 MB bodies); of 15-digit rows without sampling in mode tree, limit 256:
33,288,192 / 19 MB / 0.29 s (refused; fits up to limit 123). The largest runs both bounds accept
(64-token random 15-digit rows at temperature 0.05, width 16): mode block, limit 42, 1.99 s and
8.3 MB; with a 15-digit entry of order 1e-25 in every row (1533 bits), limit 25, 1.76 s, 4.9 MB;
mode tree with 8 drafts, limit 6 / 4: 0.21 s, 4.4 MB / 0.26 s, 3.8 MB."""

RUN_SIZE = Budget("POST /v1/runs", "trace characters", RUN_TRACE_CHARS,
                  "limit * (width + vocabulary) in mode speculative, limit * (width * (width + 1) + vocabulary) in "
                  "mode block, limit * (width + 4 * drafts * vocabulary) in mode tree, each times the length of "
                  "one exact ratio, 2 + 4 * (bits of the rows' largest denominator) * log10 2",
                  "take the session block by block with POST /v1/step, or shorten the rows' decimals")
"""The size bound of ``POST /v1/runs`` (not in :data:`BUDGETS`: a second check on the same route,
:func:`run_size`, made when the work budget (:func:`run_cost`) passes and before any decoding; a
refusal is the same 422 problem, unit ``"trace characters"``, naming ``#/config``)."""


GRADE_CHECK_RUNS = 2
"""A failing trace is checked block by block (``engine.step`` and ``engine.verify`` from the
submission's own states): counted as two runs of its blocks."""


ANALYSIS_MAX_COST = 1_000_000
"""The budget of ``POST /v1/analysis`` in :func:`~specdec_service.engine.analysis.analysis_cost`
units (about a microsecond of one core each): about 1 s, under 2 s on this loaded 2-core
machine (measured by ``bench/analysis.py``, docs/analysis.md "Cost and budget")."""




# ---------------------------------------------------------------- the exact-arithmetic cost model
#
# Everything below is computed from the config as read (its rows' integers' bit lengths, its
# sampling settings, mode, width, drafts and limit) *before* any exact work, and bounds the bit
# operations the engine counts while it works (engine.work; tests/test_cost_bound.py checks
# counted <= estimated across modes, sampling settings, vocabularies and number sizes).

FLOAT_BITS = 1074 + 53 + 1
"""The bits of a float64 read as an exact rational (numerator and denominator together at most:
a 53-bit mantissa over at most 2^1074): every entry of a row processed by a temperature whose 1/T
is not an integer is one (SPEC 9.1)."""
DECIMAL_ATTEMPTS = 2
"""The evaluations of exp(ln p / T) the estimate allows one entry (24 then 48 digits,
``sampling._decimal_nearest``): a third is needed only when p^(1/T) lies within about 1e-44 of
a midpoint between two float64s."""


def model_bits(model) -> int:
    """The bits of the largest denominator (a row's ``total``) of a model's rows as read (SPEC 1:
    each row is its entries over their exact common denominator; every entry is at most it)."""
    return max(row.total.bit_length() for row in (model.start, *model.rows))


def exponent_of(sampling) -> Optional[Fraction]:
    """1/T of a config's ``sampling`` (SPEC 9.1) when its temperature changes the rows (T not 0, 1
    or unset), else ``None``."""
    if sampling is None or sampling.temperature in (None, 0, 1):
        return None
    return 1 / sampling.temperature


def processed_bits(bits: int, vocab: int, sampling) -> int:
    """The bits of the largest denominator of a row of ``bits`` bits after SPEC 9's processing by
    ``sampling`` (``None``: unprocessed): ``n * bits + log2(vocab) + 1`` when 1/T is an integer n
    (entries p^n over total^n), :data:`FLOAT_BITS` plus as much when it is not (each entry a
    float64), 2 at T = 0 (a point mass); top-k, top-p and min-p only remove entries."""
    if sampling is not None and sampling.temperature == 0:
        return 2
    exponent = exponent_of(sampling)
    spread = vocab.bit_length() + 1
    if exponent is None:
        return bits
    if exponent.denominator == 1:
        return exponent.numerator * bits + spread
    return FLOAT_BITS + spread


def power_work(numerator_bits: int, denominator_bits: int, exponent: Fraction) -> int:
    """An upper bound of the bit operations of one ``sampling.power(p, exponent)`` for an entry
    ``p`` whose numerator and denominator have at most these bits (SPEC 9.1): the exact power
    when the exponent is an integer; otherwise the two integer roots (when they are tried), the
    walk from the hardware's guess (when it is tried: at most 64 steps, each comparing b-th powers
    of float64 midpoints with p^a) and :data:`DECIMAL_ATTEMPTS` decimal evaluations."""
    a, b = exponent.numerator, exponent.denominator
    bits = numerator_bits + denominator_bits
    if b == 1:
        return 2 * a * bits
    from .engine import sampling as exact  # the thresholds of its choices
    large = max(numerator_bits, denominator_bits)
    work = 0
    if b <= large:  # the integer roots: Newton from within a factor 2 of the root (about 0.7 b
        # steps to near it), then quadratic; then the exact power of a rational root
        steps = b + large.bit_length() + 4
        work += 2 * steps * (3 * large + 64) + 2 * (a * bits // b + a)
    scale = denominator_bits - numerator_bits + 1  # above log2(1 / p), whatever the gcd
    decimal = DECIMAL_ATTEMPTS
    if a + b * 64 <= exact._WALK_BITS and a * (scale - 2) <= exact._WALK_LOG * b and scale - 2 <= exact._WALK_SCALE:
        magnitude = -(-a * scale // b)  # above log2(1 / p^(a/b))
        steps = walk_steps(exponent, magnitude)
        if steps < exact._WALK_STEPS:
            decimal = 0  # found within the steps: the decimal evaluation is not reached
        midpoint_bits = 2 * (56 + magnitude)
        work += a * bits + 2 * min(steps, exact._WALK_STEPS) * (2 * b * midpoint_bits + a * bits + 2)
    return work + decimal * 2 * bits + exact._DECIMAL_UNITS * sum((24 << i) ** 2 for i in range(decimal))


def walk_steps(exponent: Fraction, magnitude: int) -> int:
    """The most float64 steps ``sampling._walk`` takes from its guess ``float(p) ** (a / b)`` to
    p^(a/b) when ``log2(1 / p^(a/b))`` is below ``magnitude``: the guess's exponent is the float64
    nearest a / b, off by a relative ``e`` (0 when a / b is a float64), which puts the guess about
    ``|ln p^(a/b)| * e`` off, relative, that is ``magnitude * ln 2 * e * 2^53`` units in the last
    place at most; float(p) adds half a unit times a / b, the power's own rounding one, and a unit in
    the last place is 2^-53 to 2^-52 of the value (so twice as many). tests/test_cost_bound.py
    checks it against the walk."""
    rel = abs(Fraction(exponent.numerator / exponent.denominator) - exponent) / exponent
    return int(2 * (magnitude * rel * 2**53 * 7 // 10 + exponent.numerator // exponent.denominator + 3)) + 6


def processing_work(model, sampling) -> int:
    """An upper bound of the bit operations of processing every row of ``model`` by
    ``sampling`` (SPEC 9, ``sampling.process``; ``0`` without sampling parameters): for each
    entry its temperature step (:func:`power_work`, from the entry's own bit lengths), then the
    exact normalisation, top-k, top-p and min-p over the processed rows."""
    if sampling is None or sampling.empty:
        return 0
    vocab = len(model.vocab)
    bits = model_bits(model)
    after = processed_bits(bits, vocab, sampling)
    exponent = exponent_of(sampling)
    work = 0
    for row in (model.start, *model.rows):
        total = row.total.bit_length()
        if exponent is not None:
            work += sum(power_work(w.bit_length(), total, exponent) for w in row.weights if w and w != row.total)
        work += 8 * vocab * (after + 1)  # the normalisation: lcm, products, gcd, sum
        work += 8 * vocab * (after + 64)  # top-k, top-p, min-p (each at most 4 per entry)
    return work


def config_processing_work(config) -> int:
    """:func:`processing_work` of the target, and of the draft unless ``sampling.draft`` is
    ``"raw"`` (SPEC 9: q is processed as p is by default)."""
    sampling = config.sampling
    work = processing_work(config.target, sampling)
    if sampling is not None and sampling.draft == "processed":
        work += processing_work(config.draft, sampling)
    return work


def config_row_bits(config) -> int:
    """The bits of the largest denominator of the rows a config's blocks read (SPEC 1 and 9):
    :func:`processed_bits` of each model's :func:`model_bits` (the draft's raw when
    ``sampling.draft`` is ``"raw"``), without processing them."""
    sampling, vocab = config.sampling, len(config.vocab)
    draft_sampling = sampling if sampling is not None and sampling.draft == "processed" else None
    return max(processed_bits(model_bits(config.target), vocab, sampling),
               processed_bits(model_bits(config.draft), vocab, draft_sampling))


def tokenwise_block_work(width: int, vocab: int, bits: int) -> int:
    """The bit operations of one token-wise block (SPEC 4-5: modes speculative, greedy,
    autoregressive) of ``width`` proposals over rows of at most ``bits`` bits: each proposal's
    draw, ratio test and published ratio; the residual (``vocab`` entries of ``2 * bits``), its
    normalisation, publication and draw; the bonus. The rows' own float64s are computed once a
    request (:func:`rows_work`)."""
    return (width + 2) * (10 * bits + 200) + (vocab + 2) * (12 * bits + 16)


def rows_work(vocab: int, bits: int) -> int:
    """The bit operations of publishing each of a config's ``2 * (vocab + 1)`` rows (target and
    draft, after every context) as float64s, once a request (``Dist.floats`` is kept with the row)."""
    return 2 * (vocab + 1) * vocab * (bits + 2)


def block_mode_work(width: int, vocab: int, bits: int) -> int:
    """The bit operations of one block of SPEC 10 (mode block) beyond the token-wise ones: the
    weight ``w_i`` is a product of ``i`` ratios (at most ``i * (2 * bits + 2)`` bits), and at each
    position the threshold's scaled residual mass (``vocab`` entries of ``w_i``'s size and a
    row's), the threshold, the draw's test and the exact strings; the correction's scaled
    residual once more."""
    sizes = sum(i * (2 * bits + 2) + 2 * bits + 24 for i in range(1, width + 1))
    return (4 * vocab + 64) * (sizes + (width * (2 * bits + 2) + 2 * bits + 24))


def tree_block_work(width: int, vocab: int, bits: int, nodes: int, candidates: int, rejections: int) -> int:
    """The bit operations of one block of SPEC 11 (mode tree) over rows of at most ``bits`` bits,
    for a tree that drafts ``nodes`` proposals, tests at most ``candidates`` of them at one depth
    and rejects at most ``rejections`` in one block (D chains of ``width``: ``D * width``, ``D``
    and ``D``: a rejected candidate's chains end, so the block's rejections kill distinct chains).
    The block tests at most ``rejections + width + 1`` candidates; each reads the recursive
    residual of its depth, whose denominator grows by a row's bits at each rejection there (at
    most ``(candidates + 1) * (bits + 8)`` bits), and publishes it exactly (its floats, its exact
    strings, the ratio); the drafting draws ``nodes`` proposals; the correction or bonus as a
    token-wise block's over the largest residual."""
    largest = (min(candidates, rejections) + 1) * (bits + 8)
    tests = (rejections + width + 1) * ((vocab + 4) * (12 * largest + 4 * bits + 16) + 400)
    return nodes * (2 * bits + 200) + tests + tokenwise_block_work(1, vocab, largest)


def tree_shape(drafts: int, width: int) -> tuple[int, int, int]:
    """``(nodes, candidates, rejections)`` of SPEC 11's tree of ``drafts`` chains of ``width``
    proposals, for :func:`tree_block_work`; a tree of another shape states its own (its drafted
    nodes, the most children tested at one depth, the most rejections in one block)."""
    return drafts * width, drafts, drafts


def block_work(mode: str, width: int, drafts: int, vocab: int, bits: int,
               shape: Optional[tuple[int, int, int]] = None) -> int:
    """An upper bound of the bit operations of one block (drafting and verification) of ``mode``
    over rows of at most ``bits`` bits (:func:`config_row_bits`). In mode tree ``shape`` is the
    tree's ``(nodes, candidates, rejections)`` (default :func:`tree_shape` of ``drafts`` chains)."""
    if mode == "tree":
        return tree_block_work(width, vocab, bits, *(shape or tree_shape(drafts, width)))
    work = tokenwise_block_work(width, vocab, bits)
    return work + block_mode_work(width, vocab, bits) if mode == "block" else work


def config_work(config, blocks: int) -> int:
    """The exact-arithmetic cost of ``blocks`` blocks of a parsed config (``engine.state.Config``)
    in bit operations, computed before any exact work: the processing of its rows
    (:func:`config_processing_work`), their publication (:func:`rows_work`), plus ``blocks``
    times :func:`block_work`. A whole run has at
    most ``limit`` blocks (SPEC 6: each commits at least one token)."""
    bits, vocab = config_row_bits(config), len(config.vocab)
    return (config_processing_work(config) + rows_work(vocab, bits)
            + blocks * block_work(config.mode, config.width, config.drafts, vocab, bits, block_shape(config)))


BLOCK_UNIT_WORK = 160
"""The work units one block unit (:func:`block_units`, the Python-level work of a block that the
exact arithmetic does not count: records, draws, JSON) is worth (bench/cost_units.py, 3 December
2026, load 15 on 2 cores: 64 one-hot labels, width 16, 255 blocks, 798,720 block units in 0.05-0.08
s of CPU, 65-100 ns each, against 0.05-0.45 ns per estimated bit operation of the exact families)."""

WORK_BUDGET = 2_600_000_000
"""The most work units (:func:`session_work`) one request may cost on any route that runs or checks
a session. Calibrated by bench/cost_units.py (3 December 2026, load 15 on a 2-core machine, CPU time
per estimated unit): the overhead of one-hot runs 0.4-0.63 ns (at 160 work units a block unit),
mode block's 0.54, the walk of p^(1/T) over 6-digit rows at T = 0.7 0.37-0.49, the decimal
evaluations 0.32-0.40, mode block's exact weights 0.14-0.19, mode tree 0.04-0.05 (its bound is the
loosest: every rejection in one depth, each residual growing by a whole row). So a request at the
budget takes at most about 1.65 s of one core on that loaded machine, within the 2 s promise (the
costliest run of 64 one-hot labels, mode tree with 8 drafts, width 16, limit 256: 2,597,486,464
units, 0.93 s, fits)."""


def overhead_units(mode: str, width: int, drafts: int, vocab: int, blocks: int, nodes: Optional[int] = None) -> int:
    """The block units (:func:`block_units`) of ``blocks`` blocks of ``mode``: a tree block counts
    its drafted proposals (``nodes``, default ``drafts * width``), each block weighted by
    :data:`RUN_MODE_WEIGHT`."""
    drafted = (drafts * width if nodes is None else nodes) if mode == "tree" else width
    return RUN_MODE_WEIGHT.get(mode, 1) * session_units(drafted, vocab, blocks)


def session_work(config, blocks: int) -> int:
    """The cost, in work units, of ``blocks`` blocks of a parsed config, computed before any exact
    work: :func:`config_work` (the processing of its rows and the exact arithmetic of the blocks,
    in bit operations) plus :data:`BLOCK_UNIT_WORK` times their :func:`overhead_units`. One block
    for ``POST /v1/draft``, ``/v1/verify`` and ``/v1/step``; ``limit`` for a run (SPEC 6), the
    reference run a grading request recomputes included."""
    overhead = overhead_units(config.mode, config.width, config.drafts, len(config.vocab), blocks,
                              block_shape(config)[0])
    return config_work(config, blocks) + BLOCK_UNIT_WORK * overhead


WORK_MODEL = ("the processing of the rows with sampling (SPEC 9: each entry's p^(1/T) from its bit sizes), plus "
              "per block (limit blocks for a run) the exact arithmetic of the mode (ratios, residuals, block "
              "weights and thresholds, the tree's D chains and growing residuals) over rows of the processed "
              "bit size, in bit operations, plus 160 per block unit (width + 8) * (vocabulary + 64)")
WORK_SPLIT = ("shorten the rows' decimals (fewer significant digits, no tiny entries), use a temperature whose "
              "1/T is an integer or none, or reduce the width, the drafts, the vocabulary or the limit")

SESSION_WORK = Budget("any route that runs or checks a session", "work units", WORK_BUDGET, WORK_MODEL, WORK_SPLIT)
"""The budget of a session's work (:func:`session_work`) on every route that runs one: one block
on ``POST /v1/draft``, ``/v1/verify``, ``/v1/step``; the whole run on ``POST /v1/runs``; the
reference run (and checks) of every config a ``POST /v1/grade``, ``/v1/grade/samples`` or
``/v1/grade/distribution`` recomputes; the row processing of ``POST /v1/analysis``. A request over
it is a 422 (:data:`OVER_BUDGET`) naming the config."""


def grading_work(config) -> int:
    """The least a grading request about ``config`` costs in work units: what running it costs
    (:func:`session_work` of ``limit`` blocks: the reference a grader recomputes, or the laws of
    its output), its rows' processing counted twice (a catalogued mistake of row processing
    processes them its own way)."""
    return session_work(config, config.limit) + config_processing_work(config)


def check_grading_work(config, pointer: str = "#/config") -> None:
    """Raise :class:`OverBudget` (pointer ``pointer``) when :func:`grading_work` of ``config`` is
    over :data:`WORK_BUDGET`: a config ``POST /v1/runs`` refuses is refused by every grading
    route, before any exact work."""
    SESSION_WORK.check(grading_work(config), pointer=pointer, record=False)


def _budgets(*budgets: Budget) -> dict[str, Budget]:
    return {b.route: b for b in budgets}


BUDGETS: dict[str, Budget] = _budgets(
    Budget("GET /v1/draws", "draws", MAX_DRAWS_SLICE, "count", "ask for at most 4096 draws at a time",
           bound=MAX_DRAWS_SLICE),
    Budget("POST /v1/draft", "work units", WORK_BUDGET, "one block: " + WORK_MODEL, WORK_SPLIT),
    Budget("POST /v1/verify", "work units", WORK_BUDGET, "one block: " + WORK_MODEL, WORK_SPLIT),
    Budget("POST /v1/step", "work units", WORK_BUDGET, "one block: " + WORK_MODEL, WORK_SPLIT),
    Budget("POST /v1/runs", "work units", WORK_BUDGET, "limit blocks: " + WORK_MODEL,
           "take the session block by block with POST /v1/step, or " + WORK_SPLIT),
    Budget("POST /v1/grade", "block units", 80_000_000,
           "the reference run of each distinct config, 5 * limit * (width + 8) * (vocabulary + 64), plus for each trace "
           "(mistakes of its mode + 2) * (its blocks + 1) * (width + 8) * (vocabulary + 64) for the checks and the "
           "diagnosis of a failing trace; in mode block each block weighs 10 times",
           "send the traces in several smaller batches (the `specdec grade` command splits its batches itself)"),
    Budget("POST /v1/grade/distribution", "sample units", 2_000_000,
           "entries * min(m, limit) for reading the samples or counts, plus 5 * min(samples / 5, vocabulary^min(m, "
           "limit)) for the cells of the exact distribution",
           "grade fewer samples, a shorter prefix m, or send counts of prefixes instead of samples"),
    Budget("POST /v1/grade/samples", "sample units", 4_000_000,
           "the tokens of every sample (each sample at least 1)",
           "grade fewer samples in one request"),
    Budget("POST /v1/analysis", "analysis units", ANALYSIS_MAX_COST,
           "about 1 us of one core each: for the config's width and each swept width, limit * (V + 1) * V * (width + 1) operations between "
           "blocks, each weighted by the size of its exact integers, plus 3 * depth * V * the target's supported "
           "prefixes for the output distributions; in mode block the operations between blocks weigh 20 times, plus 2 "
           "per draft-block cell enumerated (engine.analysis.analysis_cost, docs/analysis.md); mode tree: "
           "(V + 1) * V^2 * 8^3 * width^2 * (1 + limit / 8) / 4 plus 24 * drafts^3 * V * (V / 1.5)^depth "
           "(engine.tree_analysis.tree_cost); a SPEC 12 tree setting: its walk's nodes x branches x outcomes, the "
           "session's dynamic program and the D sweep, times the rows' bit growth (engine.tree_law.cost)",
           "sweep fewer widths, or analyse a smaller limit, width, depth, vocabulary or number of drafts"),
)
"""Every route that does work in proportion to its input, by ``"METHOD /path"``. The others
(``GET /health``, ``/openapi.yaml``, ``/metrics``, ``/v1/models``, ``/v1/grade/suites[/{name}]``, the inspector
page and its static files) answer fixed documents: no budget (``tests/test_budget.py`` checks that
every route is one or the other)."""

TRACE_GRADING = BUDGETS["POST /v1/grade"]
"""The budget of grading a batch of traces (block units; :func:`~specdec_service.grading.grader.trace_cost`)."""
DISTRIBUTION_GRADING = BUDGETS["POST /v1/grade/distribution"]
"""The budget of grading a sampler's output distribution (sample units)."""
SAMPLE_GRADING = BUDGETS["POST /v1/grade/samples"]
"""The budget of grading whole sampled sessions (sample units)."""
