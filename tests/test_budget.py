"""Work budgets per request (issue 9 section 3): the cost models, and the refusals over budget.

No timing is asserted here: the times of the worst accepted requests are measured by
bench/worst_cases.py and written in docs/service.md.
"""

import json
import pathlib

import pytest

from specdec_service import create_app
from specdec_service.api.structure import MAX_NUMBER_CHARS, NUMBER_DETAIL
from specdec_service.budget import (BUDGETS, OVER_BUDGET, RUN_SIZE, RUN_TRACE_CHARS, OverBudget, block_units, exact_chars,
                                    run_cost, run_size, run_trace_chars, session_units, WORK_BUDGET,
                                    config_processing_work, config_work)
from specdec_service.engine import MAX_DRAWS_SLICE, MAX_WIDTH, parse_config, run, sampling
from specdec_service.engine.bounds import MAX_VOCAB
from specdec_service.grading import BY_ID, CATALOGUE, faulty_run, grade_distribution, grade_many
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
    assert BUDGETS["POST /v1/runs"].bound is None  # modes, drafts and exact row sizes weigh: see below
    for route in ("POST /v1/draft", "POST /v1/verify", "POST /v1/step"):  # one block, but of rows of any size
        assert BUDGETS[route].bound is None and BUDGETS[route].limit == WORK_BUDGET and BUDGETS[route].unit == "work units"
    for budget in BUDGETS.values():
        assert budget.bound is None or budget.bound <= budget.limit, budget.route


def test_one_trace_is_always_within_the_grading_budget():
    # The costliest single trace: limit 256, width 16, 64 tokens, 256 blocks, failing.
    config = parse_config({"target": one_hot_model(64, 1), "draft": one_hot_model(64, 2), "width": 16,
                           "limit": 256, "seed": 0})
    worst = reference_cost(config) + trace_cost(config, 256)
    speculative = sum(m.mode == "speculative" for m in CATALOGUE)
    assert worst == 5 * 256 * 3072 + (speculative + 2) * 257 * 3072
    assert worst <= GRADE_BUDGET.limit


def test_issue_9_batch_of_distinct_long_configs_is_refused_before_any_run(client):
    # Issue 9: 1000 traces with their blocks removed, each config distinct (seed), took 31 s.
    trace = json.loads(json.dumps(run(parse_config(long_config(0)))))
    trace["blocks"] = []
    traces = [{**trace, "config": {**trace["config"], "seed": seed}} for seed in range(1000)]
    response = client.post("/v1/grade", json={"traces": traces})
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    body = response.get_json()
    reference = 5 * 256 * block_units(16, 8)
    assert reference == 2_211_840
    assert body["type"] == OVER_BUDGET and body["title"] == "Over budget"
    assert body["cost"] == 1000 * reference and body["budget"] == GRADE_BUDGET.limit == 80_000_000
    assert body["unit"] == "block units"
    assert body["errors"] == [{"pointer": "#/traces",
                               "detail": "costs 2,211,840,000 block units, over the budget of 80,000,000"}]
    assert "2,211,840,000 block units" in body["detail"] and "80,000,000" in body["detail"]
    assert "smaller batches" in body["detail"]


def small_budget(monkeypatch, limit):
    import dataclasses

    from specdec_service.grading import grader

    monkeypatch.setattr(grader, "GRADE_BUDGET", dataclasses.replace(grader.GRADE_BUDGET, limit=limit))


def test_one_config_many_times_runs_its_reference_once(monkeypatch):
    config = parse_config({"draft": "biased", "seed": 1})
    trace = json.loads(json.dumps(run(config)))
    small_budget(monkeypatch, reference_cost(config))  # one reference run, nothing more
    assert grade_many([trace] * 100)["summary"] == {"count": 100, "passed": 100, "failed": 0, "mean_score": 1.0}
    with pytest.raises(OverBudget) as refused:
        grade_many([trace, {**trace, "config": {**trace["config"], "seed": 2}}])
    assert refused.value.cost == 2 * reference_cost(config) == 2 * 5 * 8 * 737


def failing_traces(count):
    mistake = BY_ID["no-bonus"]
    traces, seed = [], 0
    while len(traces) < count:
        config = parse_config({"draft": "biased", "seed": seed})
        trace = json.loads(json.dumps(faulty_run(config, mistake.rules)))
        if trace != run(config):
            traces.append(trace)
        seed += 1
    return traces


def test_failing_traces_are_costed_after_the_comparison(monkeypatch):
    traces = failing_traces(40)
    configs = [parse_config(t["config"]) for t in traces]
    costs = [reference_cost(c) + trace_cost(c, len(t["blocks"])) for t, c in zip(traces, configs)]
    assert trace_cost(configs[0], 4) == (sum(m.mode == "speculative" for m in CATALOGUE) + 2) * 5 * 737
    small_budget(monkeypatch, sum(costs[:20]))
    assert grade_many(traces[:20])["summary"]["failed"] == 20
    with pytest.raises(OverBudget) as refused:
        grade_many(traces[:21])
    assert refused.value.cost == sum(costs[:21])
    correct = [json.loads(json.dumps(run(c))) for c in configs]
    assert grade_many(correct)["summary"]["passed"] == 40  # passing traces cost their references only


def test_1000_failing_toy_traces_are_over_the_real_budget():
    trace = failing_traces(1)[0]
    traces = [{**trace, "config": {**trace["config"], "seed": seed}} for seed in range(1000)]  # each fails
    configs = [parse_config(t["config"]) for t in traces]
    with pytest.raises(OverBudget) as refused:
        grade_many(traces)
    assert refused.value.cost == sum(reference_cost(c) + trace_cost(c, len(trace["blocks"])) for c in configs)
    assert refused.value.cost > GRADE_BUDGET.limit > sum(map(reference_cost, configs))


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


@pytest.mark.parametrize("digits", [250_000, 328])
@pytest.mark.parametrize("route", ["/v1/draft", "/v1/step", "/v1/verify", "/v1/runs"])
@pytest.mark.parametrize("where", [("target", "start", 0), ("draft", "next", "B", 1)])
def test_a_decimal_with_too_many_digits_is_refused_before_it_is_converted(client, route, where, digits):
    # Issue 9: a 250,000-digit decimal in a model row took 2 s before its 422 (the exact ratio
    # was computed first). Its digits are counted first now, and the message does not echo it.
    # Issue 18: a literal of more than 330 characters is refused while the body is parsed (400,
    # api/structure.py); one within them by the engine, which counts its digits (422).
    literal = "0." + "1" * digits
    marker = 0.123456789  # a unique float literal, replaced by the long one in the JSON text
    model = {"vocab": ["A", "B"], "start": [0.5, 0.5], "next": {"A": [0.5, 0.5], "B": [0.5, 0.5]}}
    config = {"target": json.loads(json.dumps(model)), "draft": json.loads(json.dumps(model)), "seed": 1}
    node = config[where[0]]
    for key in where[1:-1]:
        node = node[key]
    node[where[-1]] = marker
    state = {"config": config}
    body = {"state": state, "proposal": {"tokens": ["A"]}} if route == "/v1/verify" else state
    text = json.dumps(body).replace(repr(marker), literal)
    response = client.post(route, data=text, headers={"Content-Type": "application/json"})
    problem = response.get_json()
    prefix = "#/state/config/" if route == "/v1/verify" else "#/config/"
    pointer = prefix + "/".join(str(part) for part in where)
    if digits > MAX_NUMBER_CHARS:
        assert response.status_code == 400 and problem["type"] == "tag:specdec,2026:problem/structure-bound"
        assert problem["errors"] == [{"pointer": pointer, "detail": NUMBER_DETAIL}]
    else:
        assert response.status_code == 422
        assert problem["errors"] == [{"pointer": pointer, "detail": too_long(digits)}]
    assert len(problem["detail"]) < 400


def too_long(digits):
    return (f"has {digits:,} significant digits, so it is not exactly a float64's shortest decimal (at most 17 "
            "digits), and every number is echoed as float64: write it with at most 15 significant digits")


def test_every_exact_number_is_length_checked_first(client):
    # The same kind on the other exact field: /v1/analysis' draft_cost (a 500 before: its exact
    # string had more than 4300 digits).
    for digits in (250_000, 328):
        text = '{"config": {"draft": "biased", "seed": 1}, "draft_cost": 0.%s}' % ("1" * digits)
        response = client.post("/v1/analysis", data=text, headers={"Content-Type": "application/json"})
        detail = too_long(digits) if digits < MAX_NUMBER_CHARS else NUMBER_DETAIL
        assert response.status_code == (422 if digits < MAX_NUMBER_CHARS else 400)
        assert response.get_json()["errors"] == [{"pointer": "#/draft_cost", "detail": detail}]


def test_seventeen_significant_digits_are_read_as_written():
    from specdec_service.engine.models import MAX_SIGNIFICANT_DIGITS, significant_digits
    from decimal import Decimal

    assert MAX_SIGNIFICANT_DIGITS == 17
    assert significant_digits(Decimal("0.30000000000000004")) == 17   # repr(0.1 + 0.2): echo-safe
    assert significant_digits(Decimal("0.50000000000000000000")) == 1  # trailing zeros do not count
    assert significant_digits(Decimal("1.5e-300")) == 2
    model = {"vocab": ["A", "B"], "start": [Decimal("0.30000000000000004"), Decimal("0.7")],
             "next": {"A": [0.5, 0.5], "B": [0.5, 0.5]}}
    config = parse_config({"target": model, "draft": model, "seed": 1})
    assert config.target.start.floats[0] == 0.30000000000000004


CONSTANT_ROUTES = {"GET /", "GET /static/<path:filename>", "GET /health", "GET /openapi.yaml", "GET /v1/models",
                   "GET /v1/grade/suites", "GET /v1/grade/suites/<name>", "GET /metrics"}
"""Routes that answer a fixed document (or a static file, or the metrics: a sample per route,
method, status and problem type the service has answered): no work in proportion to the input."""


def test_every_route_has_a_budget_or_a_constant_answer():
    routes = {f"{method} {rule.rule}" for rule in create_app().url_map.iter_rules()
              for method in rule.methods - {"HEAD", "OPTIONS"}}
    assert routes - CONSTANT_ROUTES == set(BUDGETS)
    assert CONSTANT_ROUTES <= routes
    documented = (pathlib.Path(__file__).parents[1] / "docs" / "service.md").read_text(encoding="utf-8")
    for route in BUDGETS:
        method, path = route.split(" ")
        assert f"`{route}`" in documented or f"`{path}`" in documented, route


def test_distribution_over_budget_within_the_body_limit_is_a_422_problem(client):
    # 440,000 samples of 4 one-letter tokens fit in 8 MiB of compact JSON, but cost
    # 440,000 * 4 to read + 5 * min(440,000 / 5, 17^4) cells = 2,177,605 sample units.
    letters = [chr(ord("A") + i) for i in range(17)]
    row = [0.0625] * 16 + [0.0]
    model = {"vocab": letters, "start": row, "next": {v: row for v in letters}}
    body = {"config": {"target": model, "draft": model, "seed": 0}, "m": 4, "samples": [["A", "B", "C", "D"]] * 440_000}
    data = json.dumps(body, separators=(",", ":")).encode()
    assert len(data) < 8 * 1024 * 1024
    response = client.post("/v1/grade/distribution", data=data, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    problem = response.get_json()
    assert problem["type"] == OVER_BUDGET
    assert (problem["cost"], problem["budget"], problem["unit"]) == (440_000 * 4 + 5 * 83_521, 2_000_000, "sample units")
    assert problem["errors"] == [{"pointer": "#/samples", "detail": "costs 2,177,605 sample units, over the budget of 2,000,000"}]
    assert "send counts of prefixes instead of samples" in problem["detail"]


def test_a_run_weighs_its_mode_its_drafts_its_rows_and_their_processing(client, monkeypatch):
    # POST /v1/runs (budget.run_cost = session_work of limit blocks): the exact work of the mode over
    # rows of the processed bit size (budget.config_work) plus 160 work units a block unit, weighted 6
    # in mode block and 3 in mode tree (whose blocks draft D chains); the rows are not processed to cost them
    worst = {"target": one_hot_model(64, 1), "draft": one_hot_model(64, 2), "width": 16, "limit": 256, "seed": 0}
    plain = parse_config(worst)
    assert run_cost(plain) == config_work(plain, 256) + 160 * 256 * 24 * 128
    block = parse_config({**worst, "mode": "block"})
    assert run_cost(block) == config_work(block, 256) + 160 * 6 * 256 * 24 * 128
    tree = parse_config({**worst, "mode": "tree", "drafts": 8})
    assert run_cost(tree) == config_work(tree, 256) + 160 * 3 * 256 * 136 * 128
    for config in ({**worst, "mode": "tree", "drafts": 8}, {**worst, "mode": "block"},
                   {"draft": "biased", "seed": 0, "width": 16, "limit": 256, "mode": "tree", "drafts": 8,
                    "sampling": {"temperature": 0.05}}):
        assert run_cost(parse_config(config)) <= BUDGETS["POST /v1/runs"].limit  # accepted: 0.93 s, 0.45 s, 0.2 s
    processed = parse_config({**worst, "sampling": {"temperature": 19.9}})  # 1/T = 10/199: correctly rounded powers
    # costed, not processed: no row is processed (SPEC 9) to cost the run
    monkeypatch.setattr(sampling, "process", lambda *_: pytest.fail("a row was processed to cost the run"))
    assert run_cost(processed) == config_work(processed, 256) + 160 * 256 * 24 * 128
    assert config_work(processed, 256) - config_work(plain, 256) >= config_processing_work(processed) > 0


def test_a_run_over_its_budget_is_refused_before_decoding(client):
    rng = __import__("random").Random(1)

    def model(size):
        def row():
            cuts = sorted(rng.sample(range(1, 10**6), size - 1))
            return [(b - a) / 10**6 for a, b in zip([0] + cuts, cuts + [10**6])]
        vocab = [f"t{i}" for i in range(size)]
        return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}

    # mode block over 64-token rows processed at T = 0.05 (entries p^20: 300-bit integers) took 2.6 s
    config = {"target": model(64), "draft": model(64), "width": 16, "limit": 256, "seed": 0, "mode": "block",
              "sampling": {"temperature": 0.05}}
    response = client.post("/v1/runs", json={"config": config})
    assert response.status_code == 422
    body = response.get_json()
    assert body["type"] == OVER_BUDGET and body["cost"] == run_cost(parse_config(config)) > body["budget"]
    assert body["errors"][0]["pointer"] == "#/config" and "POST /v1/step" in body["detail"]


def decimal_model(size: int, digits: int, seed: int) -> dict:
    """A custom model over ``size`` labels whose rows are random decimals of ``digits`` digits."""
    rng = __import__("random").Random(seed)

    def row():
        cuts = sorted(rng.sample(range(1, 10**digits), size - 1))
        return [(b - a) / 10**digits for a, b in zip([0] + cuts, cuts + [10**digits])]
    vocab = [f"t{i}" for i in range(size)]
    return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}


def test_exact_chars_follow_the_formula():
    # a ratio of two row entries: numerator and denominator of about 2 * bits bits each
    assert [exact_chars(b) for b in (1, 20, 50, 940)] == [4, 27, 63, 1134]
    assert run_trace_chars("speculative", 16, 1, 64, 256, 20) == 256 * (16 + 64) * 27
    assert run_trace_chars("block", 16, 1, 64, 256, 20) == 256 * (16 * 17 + 64) * 27
    assert run_trace_chars("tree", 16, 8, 64, 256, 20) == 256 * (16 + 4 * 8 * 64) * 27


@pytest.mark.parametrize("mode,digits,limit", [("block", 15, 48), ("block", 12, 56), ("tree", 15, 16),
                                               ("tree", 12, 12), ("tree", 15, 256)])
def test_a_run_of_long_rows_at_low_temperature_is_refused_for_its_size(client, mode, digits, limit):
    # issue 19 (tester): 64-label rows of 15-digit decimals at temperature 0.05 (entries p^20, SPEC 9):
    # the exact strings (block's weight_exact / threshold_exact, tree's r_exact rows) grow with
    # bits x entries; tree answered 147 MB, block 54 MB. Refused before any decoding, naming #/config
    config = {"target": decimal_model(64, digits, 1), "draft": decimal_model(64, digits, 2), "width": 16,
              "limit": limit, "seed": 0, "mode": mode, "sampling": {"temperature": 0.05}}
    if mode == "tree":
        config["drafts"] = 8
    size = run_size(parse_config(config))
    assert size > RUN_SIZE.limit == RUN_TRACE_CHARS
    cost = run_cost(parse_config(config))  # the work budget is checked first
    response = client.post("/v1/runs", json={"config": config})
    assert response.status_code == 422, response.get_json()
    body = response.get_json()
    assert body["type"] == OVER_BUDGET
    if cost > BUDGETS["POST /v1/runs"].limit:
        assert body["unit"] == "work units" and body["cost"] == cost
    else:
        assert body["unit"] == "trace characters" and body["cost"] == size
    assert body["errors"][0]["pointer"] == "#/config" and "POST /v1/step" in body["detail"]


@pytest.mark.parametrize("config", [
    {"draft": "biased", "seed": 0, "width": 16, "limit": 256, "mode": "tree", "drafts": 8,
     "sampling": {"temperature": 0.05}},
    {"draft": "biased", "seed": 0, "width": 16, "limit": 256, "mode": "block", "sampling": {"temperature": 0.05}},
    {"draft": "aligned", "seed": 0, "width": 16, "limit": 256, "mode": "tree", "drafts": 8},
    {"target": one_hot_model(64, 1), "draft": one_hot_model(64, 2), "width": 16, "limit": 256, "seed": 0,
     "mode": "tree", "drafts": 8},
    {"target": decimal_model(64, 6, 1), "draft": decimal_model(64, 6, 2), "width": 16, "limit": 256, "seed": 0,
     "mode": "tree", "drafts": 8},
    {"target": decimal_model(64, 6, 1), "draft": decimal_model(64, 6, 2), "width": 16, "limit": 256, "seed": 0,
     "mode": "block"},
    {"target": decimal_model(64, 15, 1), "draft": decimal_model(64, 15, 2), "width": 16, "limit": 8, "seed": 0,
     "mode": "block", "sampling": {"temperature": 0.05}},
], ids=["toy-tree-T0.05", "toy-block-T0.05", "aligned-tree", "one-hot-64-tree", "6-digit-64-tree",
        "6-digit-64-block", "15-digit-block-T0.05-limit-8"])
def test_built_in_and_ordinary_custom_runs_fit_the_size_bound(config):
    assert run_size(parse_config(config)) <= RUN_SIZE.limit
