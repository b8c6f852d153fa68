"""Issue 27's families on every route: each is refused with a 422 over-budget problem naming the
config, before any exact work (the estimate, budget.session_work, is computed from the config as
read), or its estimate is within the budget. No timing is asserted (bench/worst_cases.py measures
them, docs/service.md)."""

from __future__ import annotations

import json
import random

import pytest

from specdec_service import create_app
from specdec_service.budget import OVER_BUDGET, WORK_BUDGET, grading_work, session_work
from specdec_service.engine import parse_config, run
from specdec_service.grading.samples import LAW_BUDGET, law_cost, mistake_laws


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def tiny_rows(seed: int, size: int = 64, exponent: int = -300) -> dict:
    """Family 1: rows ``[1, then size - 1 entries of 17 digits times 10^exponent]``."""
    rnd = random.Random(seed)
    vocab = [f"t{i}" for i in range(size)]

    def row() -> list:
        return [1.0] + [float(f"{rnd.randint(10**16, 10**17 - 1)}e{exponent - 16}") for _ in range(size - 1)]
    return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}


def decimal_rows(seed: int, size: int, digits: int) -> dict:
    """Random rows of ``digits``-digit decimals summing to 1."""
    rnd = random.Random(seed)
    vocab = [f"t{i}" for i in range(size)]

    def row() -> list:
        cuts = sorted(rnd.sample(range(1, 10**digits), size - 1))
        return [(b - a) / 10**digits for a, b in zip([0] + cuts, cuts + [10**digits])]
    return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}


FAMILY_1 = {"target": tiny_rows(1), "draft": tiny_rows(2), "width": 1, "limit": 1, "seed": 0,
            "sampling": {"temperature": 2.5}}


def blockless_trace(config: dict) -> dict:
    """A trace of ``config`` whose blocks were removed (valid by the grading schema; its reference
    is a whole run of ``config``): made from a cheap run of the same models without sampling."""
    cheap = {key: value for key, value in config.items() if key != "sampling"}
    trace = json.loads(json.dumps(run(parse_config({**cheap, "mode": "speculative", "limit": 1, "width": 1}))))
    return {**trace, "config": {**trace["config"], **config}, "blocks": []}


def refused(response, pointer: str) -> dict:
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["type"] == OVER_BUDGET and body["unit"] == "work units" and body["budget"] == WORK_BUDGET
    assert body["cost"] > WORK_BUDGET
    assert body["errors"][0]["pointer"] == pointer
    assert "digits" in body["detail"] and "temperature" in body["detail"] and "width" in body["detail"]
    return body


def answered_or_refused(response, cost: int, pointer: str) -> None:
    """A request of estimate ``cost`` is answered (200) within the budget, refused over it."""
    if cost > WORK_BUDGET:
        assert refused(response, pointer)["cost"] == cost
    else:
        assert response.status_code == 200, response.get_data(as_text=True)[:300]


@pytest.mark.parametrize("temperature,exponent", [(2.5, -300), (0.15, -20), (0.3, -60), (0.6, -100)])
def test_family_1_roots_of_long_entries_are_answered_or_refused_on_the_block_routes(client, temperature, exponent):
    config = {**FAMILY_1, "target": tiny_rows(1, exponent=exponent), "draft": tiny_rows(2, exponent=exponent),
              "sampling": {"temperature": temperature}}
    cost = session_work(parse_config(config), 1)
    if (temperature, exponent) == (2.5, -300):
        assert cost > WORK_BUDGET  # the request: 13-18 s before
    for route in ("/v1/step", "/v1/draft", "/v1/runs"):
        answered_or_refused(client.post(route, json={"config": config}), cost, "#/config")
    body = {"state": {"config": config}, "proposal": {"tokens": ["t1"]}}
    answered_or_refused(client.post("/v1/verify", json=body), cost, "#/state/config")


def test_family_1_is_refused_by_every_grading_route_and_the_analysis(client):
    cost = grading_work(parse_config(FAMILY_1))
    assert refused(client.post("/v1/grade/distribution", json={"config": FAMILY_1, "m": 1, "samples": [["t0"]] * 10}),
                   "#/config")["cost"] == cost
    assert refused(client.post("/v1/grade/samples", json={"config": FAMILY_1, "samples": [["t0"]] * 10}),
                   "#/config")["cost"] == cost
    trace = blockless_trace(FAMILY_1)
    assert refused(client.post("/v1/grade", json=trace), "#/config")["cost"] == cost
    assert refused(client.post("/v1/grade", json={"traces": [trace]}), "#/traces/0/config")["cost"] == cost
    refused(client.post("/v1/analysis", json={"config": FAMILY_1}), "#/config")


def test_family_2_grading_costs_at_least_running_the_config(client):
    # one trace with no blocks, mode block, width 16, limit 256, two 64-label 15-digit tables at T = 0.05:
    # /v1/runs refuses the config, and so does /v1/grade (its reference is that run)
    config = {"target": decimal_rows(1, 64, 15), "draft": decimal_rows(2, 64, 15), "mode": "block", "width": 16,
              "limit": 256, "seed": 0, "sampling": {"temperature": 0.05}}
    refused(client.post("/v1/runs", json={"config": config}), "#/config")
    trace = blockless_trace(config)
    assert grading_work(parse_config(config)) > session_work(parse_config(config), 256) > WORK_BUDGET
    refused(client.post("/v1/grade", json=trace), "#/config")
    refused(client.post("/v1/grade", json={"traces": [trace, trace]}), "#/traces/0/config")


def test_family_3_the_tree_analysis_counts_the_sweep_beyond_the_limit(client):
    config = {"target": decimal_rows(3, 4, 15), "draft": decimal_rows(4, 4, 15), "mode": "tree", "drafts": 8,
              "width": 16, "limit": 2, "seed": 0}
    response = client.post("/v1/analysis", json={"config": config, "widths": list(range(1, 17))})
    assert response.status_code == 422 and response.get_json()["type"] == OVER_BUDGET
    assert response.get_json()["unit"] == "analysis units"


def test_family_4_the_mistake_laws_count_the_rows_bits():
    # 4-label 15-digit rows, width 16, limit 66: graded without naming a mistake (the laws are not computed)
    config = parse_config({"target": decimal_rows(5, 4, 15), "draft": decimal_rows(6, 4, 15), "width": 16,
                           "limit": 66, "seed": 0})
    laws, reason = mistake_laws(config)
    assert laws == [] and "too large to compute the mistakes' laws" in reason
    assert law_cost(config, 1) > law_cost(parse_config({"draft": "biased", "seed": 0, "width": 16, "limit": 66}), 1)
    assert law_cost(config, 1) * 8 > LAW_BUDGET


@pytest.mark.parametrize("config", [
    {"target": decimal_rows(7, 64, 6), "draft": decimal_rows(8, 64, 6), "mode": "tree", "drafts": 8, "width": 16,
     "limit": 60, "seed": 0, "sampling": {"temperature": 0.07, "top_k": 40, "top_p": 0.9, "min_p": 0.01}},
    {"target": decimal_rows(9, 64, 15), "draft": decimal_rows(10, 64, 15), "mode": "block", "width": 16,
     "limit": 43, "seed": 0, "sampling": {"temperature": 0.05}},
], ids=["tree-6-digit-T0.07-limit-60", "block-15-digit-T0.05-limit-43"])
def test_family_5_runs_above_the_promise_are_refused(client, config):
    refused(client.post("/v1/runs", json={"config": config}), "#/config")


def test_within_the_budget_is_answered(client):
    # the same family-1 tables without sampling: exact rows, cheap arithmetic
    config = {**FAMILY_1, "sampling": {"top_k": 3}}
    assert session_work(parse_config(config), 1) <= WORK_BUDGET
    assert client.post("/v1/step", json={"config": config}).status_code == 200
    response = client.post("/v1/runs", json={"config": {"draft": "biased", "seed": 1, "sampling": {"temperature": 0.7}}})
    assert response.status_code == 200
    trace = response.get_json()
    assert trace == json.loads(json.dumps(run(parse_config({"draft": "biased", "seed": 1, "sampling": {"temperature": 0.7}}))))
