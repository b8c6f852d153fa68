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

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Optional

from .engine.bounds import MAX_DRAWS_SLICE, MAX_VOCAB, MAX_WIDTH
from .engine.tree_settings import block_drafts

OVER_BUDGET = "tag:specdec,2026:problem/over-budget"
"""The problem type of a request over its route's budget (HTTP 422)."""


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

    def check(self, cost: int, pointer: str = "") -> None:
        """Raise :class:`OverBudget` when ``cost`` (in :attr:`unit`) exceeds :attr:`limit`.
        ``pointer`` (a JSON Pointer fragment such as ``#/traces``) names the part to split."""
        if cost > self.limit:
            raise OverBudget(self, cost, pointer)
        meter = METER.get()
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


_BLOCK_MAX = block_units(MAX_WIDTH, MAX_VOCAB)

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


RUN_MODE_WEIGHT = {"block": 10, "tree": 3}
"""How much one block unit of a mode weighs in ``POST /v1/runs`` (1 for the modes not listed),
measured with the worst runs (two 64-token one-hot models, target and draft apart, width 16,
limit 256: 255 blocks; CPU seconds at load 8-10, 1 December 2026): speculative 0.062 s, block
0.29 s (4.7 times; counted 10, as the grading budget counts it), tree with 8 drafts 0.93 s for
blocks of 128 drafted proposals (the block units of :func:`run_units` count the D chains: 5.7
times the units of one chain, 15 times the time)."""
ROW_BITS_UNIT = 64
"""Exact rows cost more as their integers grow: each block unit of a run weighs ``1 + bits / 64``,
``bits`` the size of the largest denominator of the rows the run reads (20 bits for 6-digit
decimals; about 330 for rows processed at temperature 0.05, whose entries are p^20: mode block
then took 2.8 s for 252 blocks against 0.15 s unprocessed)."""
PROCESS_UNITS = {"power": 1000, "exact": 10}
"""The cost of processing one row entry (SPEC 9), in block units: ``power`` when 1/T is not an
integer (p^(1/T) correctly rounded: about 10-80 us an entry, ``sampling.power``), ``exact``
otherwise (integer powers, top-k, top-p, min-p). Two 64-token models at T = 19.9: 8,320 entries,
0.63 s."""


def run_units(mode: str, width: int, drafts: int, vocab: int, limit: int, row_bits: int,
              processed_entries: int = 0, powers: bool = False) -> int:
    """The cost of ``POST /v1/runs`` in block units: at most ``limit`` blocks of ``width``
    proposals (times ``drafts`` in mode tree) over ``vocab`` tokens, each block unit weighted by
    :data:`RUN_MODE_WEIGHT` and by ``1 + row_bits / 64`` (:data:`ROW_BITS_UNIT`), plus the
    processing of ``processed_entries`` row entries (SPEC 9; :data:`PROCESS_UNITS`, ``powers``:
    whether 1/T is not an integer)."""
    drafted = width * drafts if mode == "tree" else width
    blocks = RUN_MODE_WEIGHT.get(mode, 1) * session_units(drafted, vocab, limit) * (1 + row_bits / ROW_BITS_UNIT)
    return int(blocks) + processed_entries * PROCESS_UNITS["power" if powers else "exact"]


def run_cost(config) -> int:
    """:func:`run_units` of a parsed config (``engine.state.Config``): its rows' largest
    denominator read off the rows the run reads (``Config.rows``: processed with ``sampling``, so
    the processing is done by then, at most about 0.7 s for two 64-token models), and the entries
    processed (the target's rows, and the draft's unless ``draft`` is ``"raw"``)."""
    size = len(config.vocab)
    bits = rows_bits(config)
    sampling = config.sampling
    entries, powers = 0, False
    if sampling is not None and not sampling.empty:
        entries = (size + 1) * size * (2 if sampling.draft == "processed" else 1)
        powers = sampling.temperature not in (None, 0) and (1 / sampling.temperature).denominator != 1
    return run_units(config.mode, config.width, block_drafts(config), size, config.limit, bits, entries, powers)


RUN_BUDGET = 30_000_000
"""The budget of ``POST /v1/runs`` in :func:`run_units`: about 2.4 s of one core at 79 ns a unit
(the speculative worst run: 798,720 units, 0.05-0.06 s at load 8-10). Every run of built-in models
fits (toy, width 16, limit 256, mode tree with 8 drafts at temperature 0.05: 15,855,120 units,
0.22 s), and without sampling every run of rows of decimals down to 1e-15 (the costliest: 64-token
one-hot models, width 16, limit 256, mode tree with 8 drafts, 13,578,240 units, 0.71 s); refused, for example: mode block
over two 64-token models of 6-digit rows at temperature 0.05 (50,709,760 units; it took 2.6 s). A
run over it is refused before any decoding: take it block by block with ``POST /v1/step``."""


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


def rows_bits(config) -> int:
    """The bits of the largest denominator of the rows a parsed config's run reads
    (``Config.rows``: processed with ``sampling``)."""
    rows = config.rows
    return max(max(rows.target(c).total.bit_length(), rows.draft(c).total.bit_length())
               for c in [None, *range(len(config.vocab))])


def run_size(config) -> int:
    """:func:`run_trace_chars` of a parsed config (``engine.state.Config``)."""
    return run_trace_chars(config.mode, config.width, block_drafts(config), len(config.vocab), config.limit,
                           rows_bits(config))


RUN_TRACE_CHARS = 16_000_000
"""The bound of a ``POST /v1/runs`` trace's exact strings in :func:`run_trace_chars` characters
(:data:`RUN_SIZE`), checked after the work budget and before any decoding. Measured with the
Flask test client (1 December 2026, load 8-10; estimate / real response bytes / CPU): the toy in
mode tree with 8 drafts, width 16, limit 256 at temperature 0.05, 2,867,200 / 4.2 MB / 0.14 s
(every built-in run fits; the rest of such a trace, tokens and draws, is not counted); two
64-token models of random 6-digit rows without sampling in mode tree with 8 drafts, limit 256:
14,266,368 (fits); of 15-digit rows processed at temperature 0.05 (940 bits), width 16: mode tree
with 8 drafts, limit 8 / 32: 18,724,608 / 6.2 MB / 0.41 s and 74,898,432 / 25 MB / 1.1 s, mode
block, limit 32 / 64: 12,192,768 / 5.7 MB / 1.4 s and 24,385,536 (refused; issue 19's tester saw
147 MB and 54 MB answers of such runs); of 15-digit rows without sampling in mode tree, limit 256:
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


def _budgets(*budgets: Budget) -> dict[str, Budget]:
    return {b.route: b for b in budgets}


BUDGETS: dict[str, Budget] = _budgets(
    Budget("GET /v1/draws", "draws", MAX_DRAWS_SLICE, "count", "ask for at most 4096 draws at a time",
           bound=MAX_DRAWS_SLICE),
    Budget("POST /v1/draft", "block units", _BLOCK_MAX, "(width + 8) * (vocabulary + 64) for one block",
           "a request is one block", bound=_BLOCK_MAX),
    Budget("POST /v1/verify", "block units", _BLOCK_MAX, "(width + 8) * (vocabulary + 64) for one block",
           "a request is one block", bound=_BLOCK_MAX),
    Budget("POST /v1/step", "block units", _BLOCK_MAX, "(width + 8) * (vocabulary + 64) for one block",
           "a request is one block", bound=_BLOCK_MAX),
    Budget("POST /v1/runs", "block units", RUN_BUDGET,
           "limit * (width * (drafts in mode tree) + 8) * (vocabulary + 64): at most limit blocks, weighing 10 in mode "
           "block and 3 in mode tree, each times 1 + (bits of the rows' largest denominator) / 64; plus, with "
           "sampling, 1000 per row entry processed when 1/temperature is not an integer, else 10",
           "take the session block by block with POST /v1/step"),
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
           "(engine.tree_analysis.tree_cost)",
           "sweep fewer widths, or analyse a smaller limit, width, depth, vocabulary or number of drafts"),
)
"""Every route that does work in proportion to its input, by ``"METHOD /path"``. The others
(``GET /health``, ``/openapi.yaml``, ``/metrics``, ``/v1/models``, ``/v1/grade/suites[/{name}]``, the inspector
page and its static files) answer fixed documents: no budget (``tests/test_budget.py`` checks that
every route is one or the other)."""
