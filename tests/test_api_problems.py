"""Every error is an RFC 9457 problem document: 400, 404, 405, 409, 413,
415, 422 (with a JSON pointer for each bad field), never a 500 or a
traceback, whatever the body."""

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from flask import Blueprint
from jsonschema_rs import Draft202012Validator
from hypothesis import HealthCheck, event, given, settings, strategies as st

from specdec_service import create_app
from specdec_service.api.bodies import parse_json
from specdec_service.api.problems import ApiProblem, marshmallow_faults
from specdec_service.engine import InvalidInput, parse_state

SEED1 = {"config": {"draft": "biased", "seed": 1}}
TABLE = {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
         "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}
_APP = create_app({"TESTING": True})
_DOCUMENT = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text(encoding="utf-8"))
_STATE_CONTRACT = Draft202012Validator({"$ref": "#/components/schemas/StateIn", "components": _DOCUMENT["components"]})


def problem_of(response, status):
    assert response.status_code == status, response.data
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    assert "Traceback" not in response.get_data(as_text=True)
    return body


def pointers(body):
    return {e["pointer"]: e["detail"] for e in body["errors"]}


# ---------------------------------------------------------------- 400


@pytest.mark.parametrize("text", ['{"config": ', "", "{'config': 1}", '{"config":{"draft":"biased","seed":NaN}}',
                                  '[1, Infinity]', "[" * 9000, "[" * 5000 + "1"])
def test_malformed_json_is_400(client, text):
    body = problem_of(client.post("/v1/step", data=text, content_type="application/json"), 400)
    assert body["type"] == "tag:specdec,2026:problem/malformed-json" and body["title"] == "Malformed JSON"


@pytest.mark.parametrize("text", ["[" * 50000 + "]" * 50000, '{"seed": ' + "9" * 5000 + "}"])
def test_a_body_past_a_structure_bound_is_400(client, text):
    body = problem_of(client.post("/v1/step", data=text, content_type="application/json"), 400)
    assert body["type"] == "tag:specdec,2026:problem/structure-bound" and body["title"] == "Structure bound exceeded"


def test_invalid_utf8_is_400(client):
    problem_of(client.post("/v1/step", data=b'{"config": "\xff"}', content_type="application/json"), 400)


def test_floats_are_read_as_exact_decimals():
    assert parse_json(b'{"p": [0.1, 1e-2, 3]}') == {"p": [Decimal("0.1"), Decimal("0.01"), 3]}
    assert parse_json(b"[1e-9999, -1e9999, 1E+1001]") == [Decimal("1e-1000"), Decimal("-1e1000"), Decimal("1e1000")]
    for literal in (b"1e-999999999", b"1e1000000000000000000", b"-0.5E+10000", b"0e-10000", b"9" * 331):
        with pytest.raises(ApiProblem) as caught:  # past the number literal bound (api/structure.py)
            parse_json(b"[0, " + literal + b"]")
        assert caught.value.status == 400 and caught.value.errors[0]["pointer"] == "#/1"
    with pytest.raises(ApiProblem):
        parse_json(b"[-Infinity]")


# ---------------------------------------------------------------- 404, 405


def test_unknown_path_is_404(client):
    body = problem_of(client.get("/v1/nothing"), 404)
    assert body["type"] == "about:blank" and body["title"] == "Not Found"


def test_wrong_method_is_405_with_allow(client):
    response = client.get("/v1/step")
    problem_of(response, 405)
    assert set(response.headers["Allow"].replace(" ", "").split(",")) == {"POST", "OPTIONS"}
    assert client.delete("/health").status_code == 405


# ---------------------------------------------------------------- 413, 415


def test_body_over_256_kib_is_413(client):
    padding = " " * (256 * 1024)
    body = problem_of(client.post("/v1/step", data='{"config": 1}' + padding, content_type="application/json"), 413)
    assert "262144" in body["detail"]


def test_body_just_under_the_limit_is_read(client):
    text = json.dumps(SEED1)
    response = client.post("/v1/step", data=text + " " * (256 * 1024 - len(text)), content_type="application/json")
    assert response.status_code == 200


def post_chunked(client, path, data):
    """POST ``data`` as a body without Content-Length (``Transfer-Encoding:
    chunked``) from a server that terminates the input stream, as gunicorn does."""
    return client.post(path, data=data, content_type="application/json", headers={"Transfer-Encoding": "chunked"},
                       environ_overrides={"wsgi.input_terminated": True})


def test_chunked_body_over_256_kib_is_413_not_a_truncated_400(client):
    padding = " " * (256 * 1024)
    response = post_chunked(client, "/v1/step", '{"config": {"draft": "biased", "seed": 1}, "x": "' + padding + '"}')
    assert "262144" in problem_of(response, 413)["detail"]
    over_by_one = json.dumps(SEED1).encode()
    assert problem_of(post_chunked(client, "/v1/step", over_by_one + b" " * (256 * 1024 + 1 - len(over_by_one))), 413)


def test_chunked_body_at_the_limit_is_read(client):
    text = json.dumps(SEED1)
    response = post_chunked(client, "/v1/step", text + " " * (256 * 1024 - len(text)))
    assert response.status_code == 200 and response.get_json()["block"]["committed"] == ["A", "C"]


class Trickle(io.RawIOBase):
    """A ``wsgi.input`` that returns at most ``step`` bytes a read (servers may),
    then raises ``error`` (if any) once the data is used up."""

    def __init__(self, data: bytes, step: int = 1, error: Exception = None):
        self.data, self.step, self.error = data, step, error

    def readable(self):
        return True

    def read(self, size=-1):
        if not self.data and self.error is not None:
            raise self.error
        n = self.step if size is None or size < 0 else min(size, self.step)
        part, self.data = self.data[:n], self.data[n:]
        return part


def post_stream(client, path, stream, length=None):
    """POST whatever ``stream`` (the server's ``wsgi.input``) yields, with a
    ``Content-Length`` of ``length`` or chunked (None), as gunicorn passes it."""
    overrides = {"wsgi.input": stream, "wsgi.input_terminated": True}
    if length is None:
        overrides["HTTP_TRANSFER_ENCODING"] = "chunked"
    else:
        overrides["CONTENT_LENGTH"] = str(length)
    return client.post(path, content_type="application/json", environ_overrides=overrides)


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_read_a_byte_at_a_time_is_read_whole(client, chunked):
    data = json.dumps(SEED1).encode()
    response = post_stream(client, "/v1/step", Trickle(data), None if chunked else len(data))
    assert response.status_code == 200 and response.get_json()["block"]["committed"] == ["A", "C"]


def test_a_body_shorter_than_its_content_length_is_400(client):
    data = json.dumps(SEED1).encode()
    response = post_stream(client, "/v1/step", io.BytesIO(data), len(data) + 10)
    body = problem_of(response, 400)
    assert body["detail"] == f"The body ended after {len(data)} of the {len(data) + 10} bytes its Content-Length declares."


@pytest.mark.parametrize("path", ["/v1/step", "/v1/grade"])
def test_a_body_the_server_cannot_read_is_400(client, path):
    """gunicorn raises its own errors from ``wsgi.input`` for a malformed
    chunked body (InvalidChunkSize, ChunkMissingTerminator, NoMoreData)."""

    class InvalidChunkSize(Exception):
        pass

    response = post_stream(client, path, Trickle(b'{"config"', 4, InvalidChunkSize("Invalid chunk size: 'zz'")))
    body = problem_of(response, 400)
    assert body["detail"] == "The request body could not be read: InvalidChunkSize: Invalid chunk size: 'zz'"


def test_chunked_body_limit_follows_the_requests_max_content_length():
    """A route that raises ``request.max_content_length`` (as the grading routes do) gets its own limit."""
    from flask import request

    from specdec_service.api.bodies import read_json

    app = create_app({"TESTING": True})
    wide = Blueprint("wide", __name__)

    @wide.post("/wide")
    def _wide():
        request.max_content_length = 512 * 1024
        return {"length": len(read_json())}

    app.register_blueprint(wide)
    client = app.test_client()
    fits = '"' + "a" * (300 * 1024) + '"'
    assert post_chunked(client, "/wide", fits).get_json() == {"length": 300 * 1024}
    assert "524288" in problem_of(post_chunked(client, "/wide", '"' + "a" * (512 * 1024) + '"'), 413)["detail"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_body_not_declared_json_is_415(client, content_type):
    response = client.post("/v1/step", data=json.dumps(SEED1), content_type=content_type)
    assert "Content-Type application/json" in problem_of(response, 415)["detail"]


# ---------------------------------------------------------------- 422


def invalid(client, path, body):
    problem = problem_of(client.post(path, json=body), 422)
    assert problem["type"] == "tag:specdec,2026:problem/invalid-input"
    return pointers(problem)


@pytest.mark.parametrize("config, pointer, says", [
    ({"draft": "biased", "seed": 1, "width": 17}, "#/config/width", "must be an integer from 1 to 16"),
    ({"draft": "biased", "seed": 1, "limit": 0}, "#/config/limit", "must be an integer from 1 to 256"),
    ({"draft": "biased", "seed": 2**53}, "#/config/seed", "must be an integer from 0 to 2^53-1"),
    ({"draft": "biased", "seed": "1"}, "#/config/seed", "must be an integer"),
    ({"draft": "biased", "seed": True}, "#/config/seed", "must be an integer"),
    ({"draft": "biased"}, "#/config/seed", "is required"),
    ({"seed": 1}, "#/config/draft", "is required"),
    ({"draft": "gpt", "seed": 1}, "#/config/draft", "unknown draft model 'gpt'"),
    ({"draft": "toy", "seed": 1}, "#/config/draft", "unknown draft model 'toy'"),
    ({"draft": "biased", "seed": 1, "mode": "beam"}, "#/config/mode", "must be one of speculative, greedy, autoregressive, block"),
    ({"draft": "biased", "seed": 1, "eos": "Z"}, "#/config/eos", "token of the vocabulary"),
    ({"draft": "biased", "seed": 1, "temperature": 1}, "#/config/temperature", "unknown field: the fields are draft, drafts, eos, limit"),
    ({"draft": {**TABLE, "start": [0.5, 0.3, 0.1]}, "seed": 1}, "#/config/draft/start", "sum to 1"),
    ({"draft": {**TABLE, "start": [0.5, 0.5, "0"]}, "seed": 1}, "#/config/draft/start/2", "must be a number from 0 to 1"),
    ({"draft": {**TABLE, "start": [1.5, -0.5, 0]}, "seed": 1}, "#/config/draft/start/1", "must be a number from 0 to 1"),
    ({"draft": {**TABLE, "next": {"A": [1, 0, 0], "B": [1, 0, 0]}}, "seed": 1}, "#/config/draft/next/C", "missing"),
    ({"draft": {**TABLE, "vocab": ["A", "B", "D"]}, "seed": 1}, "#/config/draft/next/C", "not in the vocabulary"),
    ({"draft": {**TABLE, "vocab": ["A", "A", "C"]}, "seed": 1}, "#/config/draft/vocab/1", "'A' is listed twice"),
    ({"draft": {**TABLE, "vocab": ["A", "B", "C" * 17]}, "seed": 1}, "#/config/draft/vocab/2", "must be a string of 1 to 16 characters"),
    ({"draft": {**TABLE, "extra": 1}, "seed": 1}, "#/config/draft/extra", "unknown field: the fields are next, start, vocab"),
    ({"draft": 3, "seed": 1}, "#/config/draft", "built-in model name or an object with vocab, start and next"),
])
def test_bad_config_is_422_at_its_pointer(client, config, pointer, says):
    errors = invalid(client, "/v1/step", {"config": config})
    assert pointer in errors, errors
    assert says in errors[pointer]
    assert invalid(client, "/v1/runs", {"config": config}) == errors  # same pointers under /v1/runs


def test_vocabularies_must_match(client):
    other = {"vocab": ["x", "y"], "start": [0.5, 0.5], "next": {"x": [0.5, 0.5], "y": [0.5, 0.5]}}
    errors = invalid(client, "/v1/step", {"config": {"draft": other, "seed": 1}})
    assert "differs from the target" in errors["#/config/draft/vocab"]
    # a built-in draft is a name in the body, with no vocab to point at: the name is named
    errors = invalid(client, "/v1/step", {"config": {"target": other, "draft": "biased", "seed": 1}})
    assert list(errors) == ["#/config/draft"] and "differs from the target" in errors["#/config/draft"]


@pytest.mark.parametrize("state, pointer, says", [
    ({**SEED1, "committed": ["A", "Z"]}, "#/committed/1", "not a token of the vocabulary"),
    ({**SEED1, "committed": ["A"] * 9}, "#/committed", "more than the limit (8)"),
    ({**SEED1, "committed": ["A"] * 257}, "#/committed", "must be a list of 0 to 256 token labels"),
    ({**SEED1, "position": -1}, "#/position", "must be an integer from 0 to 2^53-1"),
    ({**SEED1, "counters": {"accepted": -1}}, "#/counters/accepted", "must be an integer from 0 to 2^53-1"),
    ({**SEED1, "counters": {"speed": 1}}, "#/counters/speed", "unknown field: the fields are accepted, bonus_tokens"),
    ({**SEED1, "session": "x"}, "#/session", "unknown field: the fields are committed, config, counters, position"),
    ({"committed": []}, "#/config", "is required"),
    ([], "#", "must be an object with config"),
    ({"config": {"target": TABLE, "draft": TABLE, "seed": 1, "eos": "B"}, "committed": ["B", "A"]},
     "#/committed", "after the EOS token 'B'"),
])
def test_bad_state_is_422_at_its_pointer(client, state, pointer, says):
    for path in ("/v1/step", "/v1/draft"):
        errors = invalid(client, path, state)
        assert says in errors[pointer], errors
    nested = invalid(client, "/v1/verify", {"state": state, "proposal": {"tokens": ["A"]}})
    assert says in nested["#/state" + pointer[1:]]


def test_a_huge_acceptance_ratio_is_not_a_server_error(client):
    """p/q = 5e319 is beyond float64: published as the largest double (JSON has no infinity)."""
    tiny = {"vocab": ["A", "B", "C"], "start": [Decimal("1e-320"), 0.6, 0.4],
            "next": {"A": [0.5, 0.5, 0], "B": [0.5, 0.5, 0], "C": [0.5, 0.5, 0]}}
    target = {**tiny, "start": [0.5, 0.3, 0.2]}
    body = {"state": {"config": {"target": target, "draft": tiny, "seed": 1}}, "proposal": {"tokens": ["A"]}}
    text = json.dumps(body, default=str).replace('"1E-320"', "1e-320")
    response = client.post("/v1/verify", data=text, content_type="application/json")
    assert response.status_code == 200, response.data
    step = response.get_json()["block"]["verification"][0]
    assert step["ratio"] == 1.7976931348623157e308 and step["accepted"] is True


def test_position_past_the_end_of_the_stream_is_422(client):
    state = {**SEED1, "position": 2**53 - 3}
    for path in ("/v1/step", "/v1/draft"):
        assert "past 2^53-1" in invalid(client, path, state)["#/position"]


@pytest.mark.parametrize("tokens, pointer, says", [
    (["A", "Z"], "#/proposal/tokens/1", "not a token of the vocabulary"),
    (["A", "A", "A", "A"], "#/proposal/tokens", "1 to 3 tokens"),
    ([], "#/proposal/tokens", "1 to 3 tokens"),
    (["A"] * 17, "#/proposal/tokens", "must be a list of 0 to 16 token labels"),
    ([1], "#/proposal/tokens/0", "must be a string of 1 to 16 characters"),
])
def test_bad_proposal_is_422_under_proposal(client, tokens, pointer, says):
    errors = invalid(client, "/v1/verify", {"state": SEED1, "proposal": {"tokens": tokens}})
    assert says in errors[pointer], errors


def test_proposal_token_the_draft_never_proposes_is_422(client):
    sure = {"vocab": ["A", "B"], "start": [1, 0], "next": {"A": [1, 0], "B": [0, 1]}}
    even = {"vocab": ["A", "B"], "start": [0.5, 0.5], "next": {"A": [0.5, 0.5], "B": [0.5, 0.5]}}
    state = {"config": {"target": even, "draft": sure, "seed": 1}}
    errors = invalid(client, "/v1/verify", {"state": state, "proposal": {"tokens": ["B"]}})
    assert "probability 0" in errors["#/proposal/tokens/0"]


def test_verify_body_shape(client):
    errors = invalid(client, "/v1/verify", {"state": SEED1})
    assert errors == {"#/proposal": "is required"}
    assert "#/proposal/extra" in invalid(client, "/v1/verify", {"state": SEED1, "proposal": {"tokens": ["A"], "extra": 1}})


def test_every_fault_is_listed(client):
    errors = invalid(client, "/v1/step", {"config": {"draft": "biased", "seed": -1, "width": 0, "limit": 300}})
    assert set(errors) == {"#/config/seed", "#/config/width", "#/config/limit"}


@pytest.mark.parametrize("query, parameter, says", [
    ("seed=1&count=4097", "count", "must be an integer from 1 to 4096"),
    ("seed=1&count=0", "count", "must be an integer from 1 to 4096"),
    ("count=3", "seed", "is required"),
    ("seed=x", "seed", "must be an integer from 0 to 2^53-1, written with the ASCII digits 0-9 only"),
    ("seed=1_0", "seed", "ASCII digits 0-9 only"),  # int() reads 10
    ("seed=%2B1", "seed", "ASCII digits 0-9 only"),  # +1
    ("seed=%201", "seed", "ASCII digits 0-9 only"),  # " 1"
    ("seed=1%20", "seed", "ASCII digits 0-9 only"),
    ("seed=%EF%BC%91", "seed", "ASCII digits 0-9 only"),  # full-width 1
    ("seed=%D9%A1", "seed", "ASCII digits 0-9 only"),  # Arabic-Indic 1
    ("seed=1&count=%E0%A5%A8", "count", "ASCII digits 0-9 only"),  # Devanagari 2
    ("seed=1.0", "seed", "ASCII digits 0-9 only"),
    ("seed=", "seed", "ASCII digits 0-9 only"),
    ("seed=-", "seed", "ASCII digits 0-9 only"),
    ("seed=--1", "seed", "ASCII digits 0-9 only"),
    pytest.param("seed=" + "9" * 5000, "seed", "ASCII digits 0-9 only", id="seed-of-5000-digits"),
    ("seed=-1", "seed", "must be an integer from 0 to 2^53-1"),
    ("seed=1&position=-3", "position", "must be an integer from 0 to 2^53-1"),
    ("seed=1&position=9007199254740991&count=2", "position", "must not exceed 2^53-1"),
    ("seed=1&seed=2", "seed", "more than once"),
    ("seed=1&size=2", "size", "unknown field: the fields are count, position, seed"),
])
def test_bad_draws_query_is_422_naming_the_parameter(client, query, parameter, says):
    body = problem_of(client.get(f"/v1/draws?{query}"), 422)
    errors = {e["parameter"]: e["detail"] for e in body["errors"]}
    assert says in errors[parameter], errors


# ---------------------------------------------------------------- pointers, 500


def test_marshmallow_messages_become_paths():
    messages = {"config": {"width": ["Too big."], "draft": {"next": {"A": {"value": {0: ["Bad."]}},
                                                                  "": {"key": ["Shorter than minimum length 1."]}}}},
                "_schema": ["Invalid input type."]}
    faults = {(f.path, f.message) for f in marshmallow_faults(messages)}
    assert faults == {(("config", "width"), "Too big."), (("config", "draft", "next", "A", 0), "Bad."),
                      (("config", "draft", "next", ""), "key shorter than minimum length 1."),
                      ((), "Invalid input type.")}


def test_unexpected_error_is_a_bare_500_problem():
    app = create_app({"TESTING": True})
    broken = Blueprint("broken", __name__)

    @broken.get("/v1/broken")
    def explode():
        raise RuntimeError("secret internals")

    app.register_blueprint(broken)
    response = app.test_client().get("/v1/broken")
    body = problem_of(response, 500)
    assert "secret" not in response.get_data(as_text=True)
    assert body["detail"] == "An unexpected error occurred; it has been logged."


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20) | st.sampled_from(["toy", "biased", "aligned", "A", "B", "C", "greedy"]),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(
        st.sampled_from(["config", "draft", "target", "seed", "width", "limit", "mode", "eos", "committed",
                         "position", "counters", "state", "proposal", "tokens", "vocab", "start", "next", "A"])
        | st.text(max_size=8), children, max_size=6),
    max_leaves=30)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(["/v1/step", "/v1/draft", "/v1/verify", "/v1/runs"]), body=JSON)
def test_no_json_body_makes_a_server_error(path, body):
    response = _APP.test_client().post(path, data=json.dumps(body), content_type="application/json")
    assert response.status_code in (200, 409, 422)
    if response.status_code != 200:
        assert response.mimetype == "application/problem+json"


def _mutations():
    state = {"config": {"target": TABLE, "draft": "biased", "seed": 1, "width": 3, "limit": 8, "eos": None},
             "committed": ["A", "C"], "position": 6, "counters": {"target_passes": 1}}
    keys = [("config", k) for k in state["config"]] + [(k,) for k in state] + [("config", "target", k) for k in TABLE]
    return state, keys


def _mutated_state(where, value):
    """A fresh copy of the good state with the field at path ``where`` set to ``value``."""
    state = json.loads(json.dumps(_mutations()[0]))
    node = state
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return state


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(where=st.sampled_from(_mutations()[1]), value=JSON)
def test_one_bad_field_in_a_good_state_is_never_a_server_error(where, value):
    response = _APP.test_client().post("/v1/step", json=_mutated_state(where, value))
    assert response.status_code in (200, 409, 422), response.data
    if response.status_code == 422:
        assert all(e["pointer"].startswith("#/") for e in response.get_json()["errors"])


def _mutated(where, value):
    return parse_json(json.dumps(_mutated_state(where, value)).encode())  # numbers as the service reads them


NEAR_VALID = st.one_of(
    st.integers(-2, 300), st.sampled_from(["A", "B", "C", "toy", "biased", "aligned", "greedy", None, True, 0.5]),
    st.lists(st.sampled_from(["A", "B", "C"]), max_size=10),
    st.lists(st.sampled_from([0, 0.5, 0.2, 0.3, 1, "0.5"]), min_size=2, max_size=4),
    st.dictionaries(st.sampled_from(["A", "B", "C", "accepted", "draws", "x"]),
                    st.integers(-1, 3) | st.lists(st.sampled_from([0, 0.5, 1]), min_size=3, max_size=3), max_size=4),
    JSON)


ROW = st.tuples(st.integers(0, 100), st.integers(0, 100)).filter(lambda t: t[0] + t[1] <= 100).map(
    lambda t: [t[0] / 100, t[1] / 100, (100 - t[0] - t[1]) / 100])
VALID_FOR = {
    ("config", "target"): st.just("toy") | st.fixed_dictionaries(
        {"vocab": st.just(["A", "B", "C"]), "start": ROW, "next": st.fixed_dictionaries({"A": ROW, "B": ROW, "C": ROW})}),
    ("config", "draft"): st.sampled_from(["biased", "aligned"]),
    ("config", "seed"): st.integers(0, 2**53 - 1),
    ("config", "width"): st.integers(1, 16),
    ("config", "limit"): st.integers(2, 256),
    ("config", "eos"): st.sampled_from([None, "A", "B", "C"]),
    ("config",): st.fixed_dictionaries({"draft": st.sampled_from(["biased", "aligned"]), "seed": st.integers(0, 99)},
                                       optional={"mode": st.sampled_from(["greedy", "autoregressive"])}),
    ("committed",): st.lists(st.sampled_from(["A", "B"]), max_size=8),
    ("position",): st.integers(0, 2**53 - 1),
    ("counters",): st.dictionaries(st.sampled_from(["target_passes", "accepted", "draws"]), st.integers(0, 2**53 - 1)),
    ("config", "target", "vocab"): st.just(["A", "B", "C"]),
    ("config", "target", "start"): ROW,
    ("config", "target", "next"): st.fixed_dictionaries({"A": ROW, "B": ROW, "C": ROW}),
}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), where=st.sampled_from(_mutations()[1]))
def test_what_the_engine_accepts_the_contract_accepts(data, where):
    """What ``parse_state`` accepts, the published ``StateIn`` accepts too (the contract is
    produced from the schema the parser checks; tests/test_request_contract.py holds both
    directions)."""
    state = _mutated(where, data.draw(VALID_FOR[where] if data.draw(st.booleans()) else NEAR_VALID))
    try:
        parse_state(state)
    except InvalidInput:
        event("rejected by the engine")
        return
    event("accepted by the engine")
    assert _STATE_CONTRACT.is_valid(state), state


def test_about_blank_titles_do_not_depend_on_the_python_version():
    """The titles are fixed (3.13 renamed 413/414/422): the edge's pages repeat them verbatim."""
    from specdec_service.api.problems import STATUS_TITLES, problem

    assert STATUS_TITLES[413] == "Request Entity Too Large"
    assert STATUS_TITLES[422] == "Unprocessable Entity"
    assert problem(414, "too long").get_json()["title"] == "Request-URI Too Long"


def test_a_pointer_is_a_uri_fragment_with_labels_percent_encoded():
    """RFC 6901 section 6 (the contract says "as a URI fragment"): a label with a space, a
    non-ASCII letter, a '#', a '%', a '~' or a '/' is encoded, so the pointer is one fragment."""
    from specdec_service import create_app
    from specdec_service.engine import pointer

    assert pointer(("config", "target", "next", "sp ace")) == "#/config/target/next/sp%20ace"
    assert pointer(("é#", "b%", "a/b~c", "x?y:z@")) == "#/%C3%A9%23/b%25/a~1b~0c/x?y:z@"
    table = {"vocab": ["sp ace", "é#"], "start": [0.5, 0.5], "next": {"sp ace": [0.5, 0.5]}}
    response = create_app().test_client().post("/v1/step", json={"config": {"target": table, "draft": table, "seed": 1}})
    assert response.status_code == 422
    assert {e["pointer"] for e in response.get_json()["errors"]} == {"#/config/target/next/%C3%A9%23",
                                                                     "#/config/draft/next/%C3%A9%23"}


@pytest.mark.parametrize("route", ["/v1/step", "/v1/draft", "/v1/runs", "/v1/analysis"])
def test_an_eos_outside_the_vocabulary_is_named_with_the_vocabulary(client, route):
    """The refused value, the vocabulary, and that the built-in toy has no EOS (SPEC 6)."""
    errors = invalid(client, route, {"config": {"draft": "biased", "seed": 1, "eos": "D"}})
    assert errors["#/config/eos"] == ("'D' is not a token of the vocabulary [A, B, C]: must be null or one of its "
                                      "labels (the built-in 'toy' has no EOS token, SPEC 6: a custom model may "
                                      "name one)")
    labels = [f"t{i}" for i in range(12)]
    custom = {"vocab": labels, "start": [1] + [0] * 11, "next": {t: [1] + [0] * 11 for t in labels}}
    errors = invalid(client, route, {"config": {"target": custom, "draft": custom, "seed": 1, "eos": "x"}})
    assert errors["#/config/eos"] == ("'x' is not a token of the vocabulary [t0, t1, t2, t3, t4, t5, t6, t7, ... "
                                      "(12 labels)]: must be null or one of its labels")
