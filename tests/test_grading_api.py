"""The HTTP routes of grading: POST /v1/grade (one trace or a batch) and /v1/grade/distribution."""

import copy
import json
from pathlib import Path

import pytest
import yaml
from jsonschema_rs import Draft202012Validator

from specdec_service import create_app
from specdec_service.api.grading import GRADE_MAX_BODY_BYTES
from specdec_service.engine import InvalidInput, parse_config, pointer, run
from specdec_service.engine.bounds import MAX_TRACES
from specdec_service.grading import BY_ID, check_batch, faulty_run

DOCUMENT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text(encoding="utf-8"))


def batch_faults(batch) -> list:
    """The faults :func:`check_batch` finds in ``batch`` (none when it returns)."""
    try:
        check_batch(batch)
    except InvalidInput as error:
        return list(error.faults)
    return []

TRACE = run(parse_config({"draft": "biased", "seed": 1}))


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def test_one_trace(client):
    response = client.post("/v1/grade", json=TRACE)
    assert response.status_code == 200 and response.mimetype == "application/json"
    body = response.get_json()
    assert body["passed"] is True and body["score"] == 1.0


def test_failing_trace_reports_divergence_and_diagnosis(client):
    mistake = BY_ID["resample-from-p"]
    body = client.post("/v1/grade", json=faulty_run(parse_config(mistake.example), mistake.rules)).get_json()
    assert body["passed"] is False
    assert body["first_divergence"]["path"] == mistake.example_divergence
    assert [d["id"] for d in body["diagnosis"]] == ["resample-from-p"]


def test_a_batch_of_1000_eight_token_traces_in_one_request(client):
    traces = [run(parse_config({"draft": "biased", "seed": seed})) for seed in range(1000)]
    data = json.dumps({"traces": traces})
    assert 256 * 1024 < len(data) < GRADE_MAX_BODY_BYTES  # above the service's default body limit
    response = client.post("/v1/grade", data=data, content_type="application/json")
    assert response.status_code == 200
    body = response.get_json()
    assert body["summary"] == {"count": 1000, "passed": 1000, "failed": 0, "mean_score": 1.0}
    assert len(body["reports"]) == 1000


def test_malformed_trace_is_a_422_with_pointers(client):
    broken = copy.deepcopy(TRACE)
    broken["blocks"][1]["next_position"] = "eleven"
    response = client.post("/v1/grade", json={"traces": [TRACE, broken]})
    assert response.status_code == 422 and response.mimetype == "application/problem+json"
    problem = response.get_json()
    [error] = problem["errors"]
    assert error["pointer"] == "#/traces/1/blocks/1/next_position" and "is not of type" in error["detail"]


def test_invalid_config_is_a_422(client):
    broken = copy.deepcopy(TRACE)
    broken["config"]["width"] = 99
    problem = client.post("/v1/grade", json=broken).get_json()
    assert problem["status"] == 422 and problem["errors"][0]["pointer"] == "#/config/width"


def test_unknown_batch_field_is_a_422(client):
    problem = client.post("/v1/grade", json={"traces": [TRACE], "x": 1}).get_json()
    assert problem["status"] == 422 and problem["errors"] == [{"pointer": "#/x", "detail": "unknown field: the fields are traces"}]


BATCH_CONTRACT = Draft202012Validator({"$ref": "#/components/schemas/GradeBatchIn", "components": DOCUMENT["components"]})


@pytest.mark.parametrize("batch, where", [
    ({"traces": [TRACE]}, None),
    ({"traces": [TRACE] * MAX_TRACES}, None),
    ({"traces": [TRACE] * (MAX_TRACES + 1)}, "#/traces"),
    ({"traces": []}, "#/traces"),
    ({"traces": {"0": TRACE}}, "#/traces"),
    ({"traces": [TRACE], "x": 1}, "#/x"),
    ({"traces": [TRACE], "summary": None}, "#/summary"),
], ids=lambda v: repr(v)[:40])
def test_a_batch_is_checked_by_the_schema_its_contract_is_made_from(client, batch, where):
    """One parse path for a batch: ``GRADE_BATCH`` checks its top level in process and over
    HTTP and is the contract's ``GradeBatchIn``; the two agree at each bound."""
    assert BATCH_CONTRACT.is_valid(batch) == (where is None)
    faults = batch_faults(batch)
    assert [pointer(f.path) for f in faults][:1] == ([] if where is None else [where])
    if where is None and len(batch["traces"]) == 1:
        assert client.post("/v1/grade", json=batch).status_code == 200
    elif where is not None:
        problem = client.post("/v1/grade", json=batch).get_json()
        assert problem["status"] == 422 and problem["errors"][0] == {"pointer": where, "detail": faults[0].message}


def test_body_errors(client):
    assert client.post("/v1/grade", data="{", content_type="application/json").status_code == 400
    assert client.post("/v1/grade", data="[NaN]", content_type="application/json").status_code == 400
    assert client.post("/v1/grade", data="x", content_type="text/plain").status_code == 415
    big = b" " * (GRADE_MAX_BODY_BYTES + 1)
    response = client.post("/v1/grade/distribution", data=big, content_type="application/json")
    assert response.status_code == 413 and str(GRADE_MAX_BODY_BYTES) in response.get_json()["detail"]


def test_distribution_route(client):
    counts = [{"prefix": ["A"], "count": 497}, {"prefix": ["B"], "count": 305}, {"prefix": ["C"], "count": 198}]
    body = client.post("/v1/grade/distribution",
                       json={"config": {"draft": "biased", "seed": 0}, "m": 1, "counts": counts}).get_json()
    assert body["passed"] is True and body["dof"] == 2 and body["test"] == "chi-square"
    assert body["total_variation"] == pytest.approx(0.5 * (0.003 + 0.005 + 0.002))


def test_distribution_route_refuses_bad_input(client):
    response = client.post("/v1/grade/distribution", json={"config": {"draft": "biased", "seed": 0}, "m": 0, "samples": [["A"]]})
    assert response.status_code == 422 and response.get_json()["errors"][0]["pointer"] == "#/m"


def test_chunked_body_over_the_grading_limit_is_413(client):
    """A body without Content-Length is bounded too (not cut into a misleading 400)."""
    over = b'{"traces": []' + b" " * (GRADE_MAX_BODY_BYTES) + b"}"
    for path in ("/v1/grade", "/v1/grade/distribution"):
        response = client.post(path, data=over, content_type="application/json", headers={"Transfer-Encoding": "chunked"},
                               environ_overrides={"wsgi.input_terminated": True})
        assert response.status_code == 413 and str(GRADE_MAX_BODY_BYTES) in response.get_json()["detail"]
    small = client.post("/v1/grade", data=b'{"traces": []}', content_type="application/json",
                        headers={"Transfer-Encoding": "chunked"}, environ_overrides={"wsgi.input_terminated": True})
    assert small.status_code == 422


def test_malformed_fields_are_named_precisely(client):
    """A bad field inside a value that may also be null points at the field, and a long
    value is described, not dumped."""
    trace = copy.deepcopy(TRACE)
    trace["blocks"][0]["verification"][0]["draw"]["hex"] = 12345  # a wrong string is graded, not a number
    trace["blocks"][1]["bonus"] = {"context": None}
    trace["output"] = ["A"] * 300
    problem = client.post("/v1/grade", json=trace).get_json()
    errors = {e["pointer"]: e["detail"] for e in problem["errors"]}
    assert problem["status"] == 422
    assert "is not of type" in errors["#/blocks/0/verification/0/draw/hex"]
    assert errors["#/blocks/1/bonus"] == '"p" is a required property'
    assert errors["#/output"] == "a list of 300 items has more than 257 items"


def test_suites_routes(client):
    from specdec_service.grading.suites import suite

    listed = client.get("/v1/grade/suites").get_json()["suites"]
    assert [s["name"] for s in listed] == ["quick", "standard", "full", "sampling", "block", "tree", "all"]
    assert listed[1] == {"name": "standard", "version": 3, "versions": [1, 2, 3], "covers": ["core"],
                         "description": suite("standard").description, "count": len(suite("standard").configs)}
    body = client.get("/v1/grade/suites/standard").get_json()
    assert body == suite("standard").to_json() and body["version"] == 3 and body["covers"] == ["core"]
    assert client.get("/v1/grade/suites/standard@3").get_json() == body  # name@N: that version for ever
    assert client.get("/v1/grade/suites/standard@1").get_json()["configs"] == body["configs"]
    missing = client.get("/v1/grade/suites/standard@4")
    assert missing.status_code == 404 and missing.get_json()["detail"] == (
        "no version '4' of the standard suite: its versions are standard@1, standard@2, standard@3.")
    first = body["configs"][0]
    assert set(first) == {"id", "config", "exercises"} and set(first["config"]) == {
        "target", "draft", "mode", "width", "seed", "limit", "eos"}
    response = client.get("/v1/grade/suites/nope")
    assert response.status_code == 404 and response.mimetype == "application/problem+json"
    assert response.get_json()["detail"] == "no suite named 'nope': the suites are quick, standard, full, sampling, block, tree, all."


def test_grading_requests_pause_the_cycle_collector_and_restore_it(client, monkeypatch):
    """POST /v1/grade reads and grades with the cyclic collector paused (docs/bench-grading.md)
    and turns it back on after, on success and on a refusal alike; one that was off stays off."""
    import gc

    from specdec_service.api import grading as api_grading

    seen = []
    real = api_grading.grade_many
    monkeypatch.setattr(api_grading, "grade_many", lambda traces: seen.append(gc.isenabled()) or real(traces))
    assert gc.isenabled()
    assert client.post("/v1/grade", json={"traces": [TRACE]}).status_code == 200 and seen == [False]
    assert gc.isenabled()
    assert client.post("/v1/grade", json={"traces": [{"config": 5}]}).status_code == 422 and seen == [False, False]
    assert gc.isenabled()
    assert client.post("/v1/grade", data=b"{", content_type="application/json").status_code == 400 and gc.isenabled()
    gc.disable()
    try:
        assert client.post("/v1/grade", json={"traces": [TRACE]}).status_code == 200 and not gc.isenabled()
    finally:
        gc.enable()


def test_grade_distribution_takes_a_config_without_seed(client):
    """The seed does not change the exact distribution: a config without one is graded, with the
    same report as with seed 0 (and as with seed 7); the contract's config says it may be left out."""
    samples = [run(parse_config({"draft": "biased", "seed": s, "limit": 4}))["output"] for s in range(300)]
    body = {"config": {"target": "toy", "draft": "biased", "limit": 4}, "m": 2, "samples": samples}
    response = client.post("/v1/grade/distribution", json=body)
    assert response.status_code == 200, response.get_json()
    for seed in (0, 7):
        seeded = client.post("/v1/grade/distribution", json={**body, "config": {**body["config"], "seed": seed}})
        assert seeded.get_json() == response.get_json()
    assert response.get_json()["samples"] == 300
