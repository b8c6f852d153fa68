"""The setting ``sampling`` (SPEC section 9) through the HTTP API: every session route and
every mode takes it, refuses a bad field with a 422 naming it and its bound, echoes it as sent,
reports the processed rows (p', and q' or the raw q) wherever a trace reports a row, and the
analysis computes on the processed rows (the target law is sampling from p').

SPEC 9's worked example (target toy, draft biased, T = 0.5, top_k 2, top_p 0.8) is asserted
here as SPEC states it: p' and q' per context, alpha 25/34 processed and 301/340 raw."""

from __future__ import annotations

import json
from fractions import Fraction as F

import pytest

from specdec_service import create_app

MODES = ("speculative", "greedy", "autoregressive", "block", "tree")
EXAMPLE = {"temperature": 0.5, "top_k": 2, "top_p": 0.8}
"""SPEC 9's worked example."""
P = {None: [F(25, 34), F(9, 34), 0], "A": [0, 1, 0], "B": [F(121, 157), 0, F(36, 157)], "C": [F(1, 5), 0, F(4, 5)]}
"""SPEC 9: p' of the toy after each context (None: the empty prefix)."""
Q_PROCESSED = [1, 0, 0]
"""SPEC 9: q' of the biased draft, the same after every context (its rows are all the same)."""
Q_RAW = [F(4, 5), F(3, 20), F(1, 20)]
"""The biased draft's raw row: q = [0.8, 0.15, 0.05]."""


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def floats(row) -> list:
    return [float(x) for x in row]


def config(mode="speculative", sampling=EXAMPLE, **more):
    return {"draft": "biased", "mode": mode, "width": 2, "seed": 4, "drafts": 2, "sampling": sampling, **more}


def rows_reported(node, found=None) -> list:
    """Every ``(context, name, row)`` a trace block reports: a record with a ``context`` and
    a row ``p``, ``q`` or ``r``; ``r`` only where it starts as p (SPEC 11's first candidate)."""
    found = [] if found is None else found
    if isinstance(node, dict):
        if "context" in node:
            for name in ("p", "q"):
                if isinstance(node.get(name), list):
                    found.append((node["context"], name, node[name]))
        for value in node.values():
            rows_reported(value, found)
    elif isinstance(node, list):
        for value in node:
            rows_reported(value, found)
    return found


# ---------------------------------------------------------------- SPEC 9's worked example


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("draft_rows, q", [("processed", Q_PROCESSED), ("raw", Q_RAW)])
def test_every_row_a_trace_reports_is_processed(client, mode, draft_rows, q):
    # SPEC 9: "A trace reports the processed rows wherever it reports a row": p' always, q' or
    # (draft "raw") the raw q, in every mode, over several seeds.
    seen = set()
    for seed in range(6):
        body = {"config": config(mode, {**EXAMPLE, "draft": draft_rows}, seed=seed)}
        trace = client.post("/v1/runs", json=body).get_json()
        for context, name, row in rows_reported(trace["blocks"]):
            assert row == floats(P[context] if name == "p" else q), (mode, seed, context, name)
            seen.add((context, name))
    assert {name for _, name in seen} == ({"p"} if mode == "autoregressive" else {"p", "q"}), mode


@pytest.mark.parametrize("draft_rows, q, alpha", [("processed", Q_PROCESSED, "25/34"), ("raw", Q_RAW, "301/340")])
def test_the_worked_example_in_the_analysis(client, draft_rows, q, alpha):
    # SPEC 9: p' and q' per context; alpha = 25/34 with the processed draft, 301/340 with "raw"
    body = {"config": {"draft": "biased", "sampling": {**EXAMPLE, "draft": draft_rows}}}
    answer = client.post("/v1/analysis", json=body).get_json()
    contexts = {c["context"]: c for c in answer["contexts"]}
    assert {c: contexts[c]["p"] for c in contexts} == {c: floats(row) for c, row in P.items()}
    assert all(contexts[c]["q"] == floats(q) for c in contexts)
    assert contexts[None]["alpha_exact"] == alpha
    assert answer["config"]["sampling"] == {**EXAMPLE, "draft": draft_rows}


def test_the_worked_example_first_block(client):
    # the first block of the example's session (width 2, seed 4): q' = [1, 0, 0] proposes A A;
    # the test at the empty prefix is against p'(A) = 25/34 (u = 0.8591 rejects it), and the
    # correction is max(p' - q', 0) normalised = [0, 1, 0]: B
    block = client.post("/v1/step", json={"config": config()}).get_json()["block"]  # a fresh state
    test = block["verification"][0]
    assert (test["p_token"], test["q_token"], test["ratio"]) == (25 / 34, 1.0, 25 / 34)
    assert test["accepted"] is False and block["correction"]["distribution"] == [0.0, 1.0, 0.0]
    assert block["committed"] == ["B"] and block["discarded"] == ["A"]


# ---------------------------------------------------------------- every route, every mode


@pytest.mark.parametrize("mode", MODES)
def test_the_session_routes_take_sampling_and_verify_of_the_draft_is_step(client, mode):
    # /v1/draft, /v1/verify and /v1/step in every mode: verifying the drafted proposal is the
    # step, block after block, and the state echoes the setting as sent.
    state = {"config": config(mode, {"temperature": 0.7, "top_p": 0.9, "draft": "raw"}, limit=6)}
    while True:
        drafted = client.post("/v1/draft", json=state)
        assert drafted.status_code == 200, drafted.get_json()
        proposal = drafted.get_json()
        proposal = {"chains": proposal["chains"]} if mode == "tree" else {"tokens": proposal["tokens"]}
        verified = client.post("/v1/verify", json={"state": state, "proposal": proposal}).get_json()
        stepped = client.post("/v1/step", json=state).get_json()
        assert verified == stepped
        assert stepped["state"]["config"]["sampling"] == {"temperature": 0.7, "top_p": 0.9, "draft": "raw"}
        if stepped["done"]:
            break
        state = stepped["state"]


def test_the_echo_is_the_setting_as_sent(client):
    # SPEC 9 "echoes sampling in its config": the fields sent, in the order temperature, top_k,
    # top_p, min_p, draft, each number as float64 (an integral one as an integer); an empty
    # object is echoed empty; a config without it gains no field
    cases = [({"draft": "raw", "min_p": 0.25, "temperature": 2.0}, {"temperature": 2, "min_p": 0.25, "draft": "raw"}),
             ({"top_p": 1, "top_k": 64}, {"top_k": 64, "top_p": 1}), ({}, {})]
    for sent, echoed in cases:
        trace = client.post("/v1/runs", json={"config": {"draft": "aligned", "seed": 3, "sampling": sent}}).get_json()
        assert trace["config"]["sampling"] == echoed
        assert list(trace["config"]["sampling"]) == list(echoed)
    plain = client.post("/v1/runs", json={"config": {"draft": "aligned", "seed": 3}}).get_json()
    assert "sampling" not in plain["config"] and "sampling" not in json.dumps(plain)
    # an empty object processes nothing: the same trace, config aside
    empty = client.post("/v1/runs", json={"config": {"draft": "aligned", "seed": 3, "sampling": {}}}).get_json()
    assert {**empty, "config": None} == {**plain, "config": None}


def test_a_number_read_as_a_decimal_is_echoed_exactly_or_refused(client):
    # /v1/runs reads numbers as the decimal written; the echo is float64, so a decimal float64
    # does not carry is refused (else the next block would read another setting)
    def run(text):
        return client.post("/v1/runs", data='{"config": {"draft": "biased", "seed": 1, "sampling": {"top_p": %s}}}' % text,
                           content_type="application/json")
    assert run("0.80").get_json()["config"]["sampling"] == {"top_p": 0.8}
    refused = run("0.80000000000000000001")
    assert refused.status_code == 422
    [error] = refused.get_json()["errors"]
    assert error["pointer"] == "#/config/sampling/top_p" and "write 0.8" in error["detail"]


BAD = [  # (sampling, pointer, detail): SPEC 9's bounds, each named with its field path
    ({"temperature": 0.04}, "#/config/sampling/temperature", "must be 0 or a number from 0.05 to 20"),
    ({"temperature": 20.5}, "#/config/sampling/temperature", "must be 0 or a number from 0.05 to 20"),
    ({"temperature": -1}, "#/config/sampling/temperature", "must be 0 or a number from 0.05 to 20"),
    ({"top_k": 0}, "#/config/sampling/top_k", "must be an integer from 1 to 64"),
    ({"top_k": 65}, "#/config/sampling/top_k", "must be an integer from 1 to 64"),
    ({"top_k": 2.5}, "#/config/sampling/top_k", "must be an integer from 1 to 64"),
    ({"top_p": 0}, "#/config/sampling/top_p", "must be a number above 0 and at most 1"),
    ({"top_p": 1.01}, "#/config/sampling/top_p", "must be a number above 0 and at most 1"),
    ({"min_p": -0.1}, "#/config/sampling/min_p", "must be a number from 0 to 1"),
    ({"min_p": "0.1"}, "#/config/sampling/min_p", "must be a number from 0 to 1"),
    ({"draft": "both"}, "#/config/sampling/draft", "must be one of processed, raw"),
    ({"top_n": 3}, "#/config/sampling/top_n",
     "unknown field: the fields are draft, min_p, temperature, top_k, top_p"),
    ([], "#/config/sampling", "must be an object with any of temperature, top_k, top_p, min_p and draft"),
    (None, "#/config/sampling", "must be an object with any of temperature, top_k, top_p, min_p and draft"),
]


def _request(route: str, sampling) -> tuple[str, dict, str]:
    cfg = {"draft": "biased", "seed": 1, "sampling": sampling}
    if route in ("/v1/runs", "/v1/analysis"):
        return route, {"config": cfg}, ""
    if route == "/v1/verify":
        return route, {"state": {"config": cfg}, "proposal": {"tokens": ["A"]}}, "/state"
    return route, {"config": cfg}, ""


@pytest.mark.parametrize("route", ["/v1/draft", "/v1/verify", "/v1/step", "/v1/runs", "/v1/analysis"])
@pytest.mark.parametrize("sampling, pointer, detail", BAD, ids=str)
def test_a_bad_field_is_a_422_naming_it_and_its_bound(client, route, sampling, pointer, detail):
    route, body, prefix = _request(route, sampling)
    response = client.post(route, json=body)
    assert response.status_code == 422, response.get_json()
    assert response.headers["Content-Type"] == "application/problem+json"
    errors = response.get_json()["errors"]
    assert {"pointer": "#" + prefix + pointer[1:], "detail": detail} in errors, errors


def test_every_fault_of_one_object_is_named_at_once(client):
    sampling = {"temperature": 0.01, "top_k": 65, "top_p": 0, "min_p": 2, "draft": "x", "foo": 1}
    errors = client.post("/v1/runs", json={"config": config(sampling=sampling)}).get_json()["errors"]
    assert [e["pointer"] for e in errors] == [f"#/config/sampling/{k}" for k in sampling]


# ---------------------------------------------------------------- the analysis: the reference law is p'


@pytest.mark.parametrize("mode", ["speculative", "autoregressive", "block", "tree"])
@pytest.mark.parametrize("sampling", [EXAMPLE, {**EXAMPLE, "draft": "raw"}, {"temperature": 0.7, "top_p": 0.9},
                                      {"temperature": 2, "min_p": 0.2, "draft": "raw"}, {"top_k": 1}], ids=str)
def test_the_output_is_exactly_sampling_from_p_prime(client, mode, sampling):
    # SPEC 9 (Chen et al. 2023): either draft choice keeps the output exactly distributed as
    # sampling from p'; the analysis' target is p' (the first token's law is p' at the empty prefix)
    body = {"config": {"draft": "biased", "mode": mode, "width": 2, "limit": 4, "drafts": 2, "sampling": sampling},
            "depth": 3, "widths": [1, 2]}
    response = client.post("/v1/analysis", json=body)
    assert response.status_code == 200, response.get_json()
    output = response.get_json()["output"]
    assert output["tv_exact"] == "0"
    if sampling is EXAMPLE:
        first = {}
        for entry in output["target"]:
            first[entry["tokens"][0]] = first.get(entry["tokens"][0], F(0)) + F(entry["p_exact"])
        assert first == {"A": F(25, 34), "B": F(9, 34)}


def test_greedy_uses_the_argmax_of_the_processed_rows(client):
    # SPEC 9: "Mode greedy uses the argmax of the processed rows": p''s argmax is A at the empty
    # prefix (25/34), B after A (p' = [0, 1, 0]), A after B (121/157): A B A B ...; no draws
    trace = client.post("/v1/runs", json={"config": config("greedy", width=3, limit=6)}).get_json()
    assert trace["output"] == ["A", "B", "A", "B", "A", "B"]
    assert trace["position"] == 0
