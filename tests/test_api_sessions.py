"""POST /v1/draft, /v1/verify, /v1/step and /v1/runs with real values: the
SPEC section 4 worked example, verify(draft) == step, sessions carried to
their end by sending each returned state back, and the 409 after it."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from specdec_service import create_app
from specdec_service.engine import parse_state, run_json, step

SEED1 = {"config": {"draft": "biased", "seed": 1}}
_APP = create_app({"TESTING": True})  # for hypothesis tests (function-scoped fixtures do not mix with @given)


def post(client, path, body):
    response = client.post(path, json=body)
    return response, response.get_json()


def test_step_is_the_spec_worked_example(client):
    response, body = post(client, "/v1/step", SEED1)
    assert response.status_code == 200 and response.mimetype == "application/json"
    block = body["block"]
    assert block["mode"] == "speculative" and block["prefix"] == [] and block["position"] == 0
    steps = block["proposal"]["steps"]
    assert block["proposal"]["tokens"] == ["A", "A", "C"]
    assert [s["draw"]["u"] for s in steps] == [0.5665615751722809, 0.7457817572627011, 0.9710027535867962]
    assert [s["draw"]["position"] for s in steps] == [0, 1, 2]
    assert steps[0]["draw"]["hex"] == "910a2dec89025cc1"
    assert steps[0]["q"] == [0.8, 0.15, 0.05] and steps[0]["context"] is None and steps[1]["context"] == "A"
    first, second = block["verification"]
    assert (first["token"], first["p_token"], first["q_token"], first["ratio"]) == ("A", 0.5, 0.8, 0.625)
    assert first["draw"]["u"] == 0.4443592170557721 and first["accepted"] is True
    assert (second["context"], second["p_token"], second["q_token"], second["ratio"]) == ("A", 0.2, 0.8, 0.25)
    assert second["accepted"] is False and second["draw"]["position"] == 4
    correction = block["correction"]
    assert correction["distribution"] == [0.0, 0.75, 0.25] and correction["token"] == "C"
    assert correction["draw"]["position"] == 5 and round(correction["draw"]["u"], 4) == 0.7629
    assert block["discarded"] == ["C"] and block["bonus"] is None and block["no_bonus"] == "rejection"
    assert block["committed"] == ["A", "C"] and block["next_position"] == 6
    assert block["counters"] == {"target_passes": 1, "draft_steps": 3, "accepted": 1, "rejected": 1,
                                 "discarded": 1, "bonus_tokens": 0, "committed": 2, "draws": 6}
    assert body["state"] == {
        "config": {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "seed": 1,
                   "limit": 8, "eos": None},
        "committed": ["A", "C"], "position": 6, "counters": block["counters"]}
    assert body["done"] is None


def test_aligned_draft_commits_three_accepted_and_a_bonus(client):
    _, body = post(client, "/v1/step", {"config": {"draft": "aligned", "seed": 1}})
    block = body["block"]
    assert all(v["ratio"] == 1.0 and v["accepted"] for v in block["verification"])
    assert len(block["committed"]) == 4 and block["bonus"]["token"] == block["committed"][-1]
    assert block["counters"]["draws"] == 7 and body["state"]["position"] == 7


def test_draft_then_verify_equals_step(client):
    drafted, proposal = post(client, "/v1/draft", SEED1)
    assert drafted.status_code == 200 and proposal["tokens"] == ["A", "A", "C"]
    verified = client.post("/v1/verify", json={"state": SEED1, "proposal": {"tokens": proposal["tokens"]}})
    stepped = client.post("/v1/step", json=SEED1)
    assert verified.status_code == stepped.status_code == 200
    assert verified.data == stepped.data


def test_verify_a_proposal_of_the_callers_choice(client):
    response, body = post(client, "/v1/verify", {"state": SEED1, "proposal": {"tokens": ["B"]}})
    assert response.status_code == 200
    (check,) = body["block"]["verification"]
    assert check["token"] == "B" and check["ratio"] == pytest.approx(0.3 / 0.15)
    assert body["block"]["proposal"]["steps"][0]["drafted"] is False  # the draft's draw gives A


def test_returned_state_sent_back_until_done_then_409(client):
    state, blocks = SEED1, []
    while True:
        response, body = post(client, "/v1/step", state)
        assert response.status_code == 200
        blocks.append(body["block"])
        assert body["block"]["prefix"] == (state.get("committed") or [])
        state = body["state"]
        if body["done"]:
            break
    assert body["done"] == "limit" and len(state["committed"]) == 8
    trace = client.post("/v1/runs", json={"config": SEED1["config"]}).get_json()
    assert trace["format"] == "specdec-trace/1"
    assert trace["blocks"] == blocks and trace["output"] == state["committed"]
    assert trace["counters"] == state["counters"] and trace["position"] == state["position"]
    for path in ("/v1/step", "/v1/draft"):
        done = client.post(path, json=state)
        assert done.status_code == 409 and done.mimetype == "application/problem+json"
        assert done.get_json()["type"] == "tag:specdec,2026:problem/session-done"
    done = client.post("/v1/verify", json={"state": state, "proposal": {"tokens": ["A"]}})
    assert done.status_code == 409


def test_draft_does_not_move_the_state(client):
    _, first = post(client, "/v1/step", SEED1)
    _, proposal = post(client, "/v1/draft", first["state"])
    assert proposal["steps"][0]["draw"]["position"] == 6
    _, again = post(client, "/v1/draft", first["state"])
    assert again == proposal


def test_greedy_uses_no_draws(client):
    _, body = post(client, "/v1/step", {"config": {"draft": "biased", "seed": 1, "mode": "greedy"}})
    block = body["block"]
    assert block["proposal"]["tokens"] == ["A", "A", "A"]
    assert all(s["draw"] is None for s in block["proposal"]["steps"])
    assert [v["accepted"] for v in block["verification"]] == [True, False]
    assert block["correction"]["token"] == "B" and block["correction"]["draw"] is None
    assert body["state"]["position"] == 0 and block["counters"]["draws"] == 0


def test_autoregressive_verifies_an_empty_proposal(client):
    config = {"draft": "biased", "seed": 1, "mode": "autoregressive"}
    response, body = post(client, "/v1/verify", {"state": {"config": config}, "proposal": {"tokens": []}})
    assert response.status_code == 200
    assert body["block"]["sample"]["draw"]["u"] == 0.5665615751722809
    assert body["block"]["committed"] == ["B"]  # 0.5666 falls past A's 0.50 in the toy's start row


def test_custom_model_with_eos_ends_the_session(client):
    model = {"vocab": ["a", "b", "<eos>"], "start": [0.5, 0.25, 0.25],
             "next": {"a": [0.1, 0.2, 0.7], "b": [0.5, 0.5, 0], "<eos>": [1, 0, 0]}}
    trace = client.post("/v1/runs", json={"config": {"target": model, "draft": model, "seed": 3, "eos": "<eos>",
                                                     "limit": 64}}).get_json()
    assert trace["done"] == "eos" and trace["output"][-1] == "<eos>"
    assert trace["config"]["target"]["next"]["a"] == [0.1, 0.2, 0.7]


def test_same_request_same_bytes(client):
    for path, body in [("/v1/step", SEED1), ("/v1/draft", SEED1), ("/v1/runs", SEED1),
                       ("/v1/verify", {"state": SEED1, "proposal": {"tokens": ["A", "B"]}})]:
        first, second = client.post(path, json=body), client.post(path, json=body)
        assert first.status_code == 200 and first.data == second.data


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**53 - 1), width=st.integers(1, 16), limit=st.integers(1, 256),
       mode=st.sampled_from(["speculative", "greedy", "autoregressive"]),
       draft=st.sampled_from(["aligned", "biased"]))
def test_step_is_the_engine_step_translated(seed, width, limit, mode, draft):
    state = {"config": {"draft": draft, "seed": seed, "width": width, "limit": limit, "mode": mode}}
    response = _APP.test_client().post("/v1/step", json=state)
    assert response.status_code == 200
    assert response.get_json() == json.loads(json.dumps(step(parse_state(state)).to_json()))


def test_runs_is_the_engine_run(client):
    config = {"draft": "aligned", "seed": 7, "width": 5, "limit": 20}
    assert client.post("/v1/runs", json={"config": config}).get_json() == run_json(config)
