"""Work budgets per request (issue 9 section 3): the cost models, and the refusals over budget.

No timing is asserted here: the times of the worst accepted requests are measured by
bench/worst_cases.py and written in docs/service.md.
"""

import json

import pytest

from specdec_service import create_app
from specdec_service.budget import BUDGETS, OVER_BUDGET, OverBudget, block_units, session_units
from specdec_service.engine import MAX_DRAWS_SLICE, MAX_LIMIT, MAX_WIDTH, parse_config, run
from specdec_service.engine.models import MAX_VOCAB
from specdec_service.grading import CATALOGUE, faulty_run, grade_distribution, grade_many
from specdec_service.grading.grader import GRADE_BUDGET, reference_cost, trace_cost
from specdec_service.grading.distribution import DISTRIBUTION_BUDGET


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def one_hot_model(size: int, shift: int) -> dict:
    """A custom model over ``size`` labels whose every row is one-hot: after token i, token i + shift."""
    vocab = [f"t{i}" for i in range(size)]
    row = lambda i: [1.0 if j == i % size else 0.0 for j in range(size)]  # noqa: E731
    return {"vocab": vocab, "start": row(0), "next": {label: row(i + shift) for i, label in enumerate(vocab)}}


def long_config(seed: int) -> dict:
    """Width 16, limit 256 over 8 tokens where the draft always disagrees with the target: 256
    blocks of 16 proposals, one token each (issue 9's 31-second batch was made of these)."""
    return {"target": one_hot_model(8, 1), "draft": one_hot_model(8, 2), "width": 16, "limit": 256, "seed": seed}


def test_block_units_follow_the_formula():
    assert block_units(1, 2) == 9 * 66 == 594
    assert block_units(3, 3) == 11 * 67 == 737            # the toy models at the default width
    assert block_units(MAX_WIDTH, MAX_VOCAB) == 24 * 128 == 3072
    assert session_units(3, 3, 8) == 8 * 737


def test_bounded_routes_are_never_over_their_budget():
    # The input bounds alone keep these routes within budget: the largest cost they accept.
    assert BUDGETS["GET /v1/draws"].bound == MAX_DRAWS_SLICE == 4096
    assert BUDGETS["POST /v1/runs"].bound == MAX_LIMIT * 24 * 128 == 786_432
    for route in ("POST /v1/draft", "POST /v1/verify", "POST /v1/step"):
        assert BUDGETS[route].bound == 3072
    for budget in BUDGETS.values():
        assert budget.bound is None or budget.bound <= budget.limit, budget.route


def test_one_trace_is_always_within_the_grading_budget():
    # The costliest single trace: limit 256, width 16, 64 tokens, 256 blocks, failing.
    config = parse_config({"target": one_hot_model(64, 1), "draft": one_hot_model(64, 2), "width": 16,
                           "limit": 256, "seed": 0})
    worst = reference_cost(config) + trace_cost(config, 256)
    assert worst == 256 * 3072 + (len(CATALOGUE) + 2) * 257 * 3072
    assert worst <= GRADE_BUDGET.limit


def test_issue_9_batch_of_distinct_long_configs_is_refused_before_any_run(client):
    # Issue 9: 1000 traces with their blocks removed, each config distinct (seed), took 31 s.
    trace = json.loads(json.dumps(run(parse_config(long_config(0)))))
    trace["blocks"] = []
    traces = [{**trace, "config": {**trace["config"], "seed": seed}} for seed in range(1000)]
    response = client.post("/v1/grade", json={"traces": traces})
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    body = response.get_json()
    reference = 256 * block_units(16, 8)
    assert reference == 442_368
    assert body["type"] == OVER_BUDGET and body["title"] == "Over budget"
    assert body["cost"] == 1000 * reference and body["budget"] == GRADE_BUDGET.limit == 40_000_000
    assert body["unit"] == "block units"
    assert body["errors"] == [{"pointer": "#/traces",
                               "detail": "costs 442,368,000 block units, over the budget of 40,000,000"}]
    assert "442,368,000 block units" in body["detail"] and "40,000,000" in body["detail"]
    assert "smaller batches" in body["detail"]


def test_one_config_many_times_runs_its_reference_once():
    trace = json.loads(json.dumps(run(parse_config(long_config(1)))))
    result = grade_many([trace] * 100)  # 100 references would be 44 million block units
    assert result["summary"] == {"count": 100, "passed": 100, "failed": 0, "mean_score": 1.0}


def test_failing_traces_are_costed_after_the_comparison():
    mistake = CATALOGUE[0]
    traces, seed = [], 0
    while len(traces) < 1000:
        config = parse_config({"draft": "biased", "seed": seed})
        trace = json.loads(json.dumps(faulty_run(config, mistake.rules)))
        if trace != run(config):
            traces.append(trace)
        seed += 1
    correct = json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": 1}))))
    assert grade_many([correct] * 1000)["summary"]["passed"] == 1000   # 1000 passing: one reference
    with pytest.raises(OverBudget) as refused:
        grade_many(traces)
    configs = [parse_config(t["config"]) for t in traces]
    expected = sum(reference_cost(c) for c in configs) + sum(trace_cost(c, len(t["blocks"])) for t, c in zip(traces, configs))
    assert refused.value.cost == expected > GRADE_BUDGET.limit
    assert trace_cost(configs[0], 4) == (len(CATALOGUE) + 2) * 5 * 737
    fitting = GRADE_BUDGET.limit // (reference_cost(configs[0]) + trace_cost(configs[0], 8))
    assert grade_many(traces[:fitting])["summary"]["failed"] == fitting


def test_distribution_cost_is_checked_before_the_samples_are_read():
    config = {"target": one_hot_model(64, 1), "draft": one_hot_model(64, 2), "seed": 0, "limit": 8}
    sample = ["t0", "t1", "t2", "t3"]
    # 10^6 samples of m = 4: 4,000,000 to read + 5 * 200,000 cells.
    with pytest.raises(OverBudget) as refused:
        grade_distribution({"config": config, "m": 4, "samples": [sample] * 10**6})
    assert refused.value.cost == 4 * 10**6 + 5 * 200_000 and refused.value.budget is DISTRIBUTION_BUDGET
    assert refused.value.to_json()["errors"][0]["pointer"] == "#/samples"
    # A sample that is not even a list of labels is costed, not read: the budget comes first.
    with pytest.raises(OverBudget):
        grade_distribution({"config": config, "m": 4, "samples": [42] * 10**6})
    # Counts: the cells are bounded by the vocabulary too (64 labels, m = 1: 64 cells).
    report = grade_distribution({"config": config, "m": 1, "counts": [{"prefix": ["t0"], "count": 10**6}]})
    assert report["samples"] == 10**6


def test_over_budget_problem_is_documented_in_the_contract():
    import pathlib

    import yaml

    contract = yaml.safe_load((pathlib.Path(__file__).parents[1] / "openapi.yaml").read_text(encoding="utf-8"))
    problem = contract["components"]["schemas"]["ProblemOut"]["properties"]
    assert {"cost", "budget", "unit"} <= set(problem)
