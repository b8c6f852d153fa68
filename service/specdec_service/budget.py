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

from .engine.bounds import MAX_DRAWS_SLICE, MAX_LIMIT, MAX_VOCAB, MAX_WIDTH

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
    Budget("POST /v1/runs", "block units", session_units(MAX_WIDTH, MAX_VOCAB, MAX_LIMIT),
           "limit * (width + 8) * (vocabulary + 64): at most limit blocks",
           "take the session block by block with POST /v1/step", bound=session_units(MAX_WIDTH, MAX_VOCAB, MAX_LIMIT)),
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
