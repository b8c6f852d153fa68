"""``POST /v1/runs``: a whole session from the empty prefix to its end."""

from __future__ import annotations

from ..budget import BUDGETS, RUN_SIZE, OverBudget, run_cost, run_size
from ..engine import parse_config, run
from ..engine.state import parse_run
from .bodies import read_json
from .problems import json_response
from .routes import ApiBlueprint, example, link
from .trace_components import ref

blueprint = ApiBlueprint("runs", __name__, tag="runs",
                         description="A whole session from the empty prefix to its end, as a trace.")
_EXAMPLE = {"draft": "biased", "seed": 1, "limit": 4}
_BUDGET = BUDGETS["POST /v1/runs"]


@blueprint.operation(
    "POST", "/v1/runs", summary="Run a whole session",
    operation_id="createRun",
    description="Decodes blocks from the empty prefix until the session ends (limit or EOS, SPEC section 6) "
                "and returns the trace (`specdec-trace/1`, docs/trace-format.md): every block, the output, "
                "the total counters, the final position.",
    body="RunIn", examples=lambda: {"seed1": example("The worked example with limit 4", {"config": _EXAMPLE})},
    ok=ref(), ok_description="The trace.", problems=(400, 413, 415, 422),  # 422: invalid, or over the budget
    ok_examples=lambda: {"seed1": example("Two blocks: A C, then three more tokens capped at the limit",
                                          run(parse_config(_EXAMPLE)))},
    links={"grade": link("POST", "/v1/grade", "Grade the trace: the service's own trace passes.", "$response.body")})
def runs():
    """``{"config": {...}}`` in, the ``specdec-trace/1`` trace out (at most
    ``limit`` <= 256 blocks). Refused (422) over the work budget (``budget.run_cost``) or, within
    it, over the size bound of the trace's exact strings (``budget.run_size``)."""
    config = read_json(parse_run)
    cost = run_cost(config)
    if cost <= _BUDGET.limit and (size := run_size(config)) > RUN_SIZE.limit:  # the trace's exact strings
        raise OverBudget(RUN_SIZE, size, pointer="#/config")
    _BUDGET.check(cost, pointer="#/config")
    return json_response(run(config))
