"""specdec_client.client: one method per route, recorded bodies, retries,
timeouts and every error class (with ``responses``; the retry and timeout
tests at the end use real sockets on 127.0.0.1)."""

import http.server
import json
import logging
import socket
import threading

import pytest
import requests
from responses import matchers

from specdec_client import (
    APIError, BadRequest, Client, Config, ConnectionFailed, InvalidInput, InvalidRequestBody, InvalidResponse,
    InvalidSettings,
    MethodNotAllowed, NotFound, PayloadTooLarge, RequestTimedOut, ServerError, SessionDone, SpecdecError, State,
    UnsupportedMediaType, make_retry,
)

from .service_backend import BASE, draft_body, draws_body, run_body, step_body

STATE0 = {"config": {"draft": "biased", "seed": 1}}
PROBLEM = "application/problem+json"


def problem(status, title, detail, errors=None, type="about:blank"):
    body = {"type": type, "title": title, "status": status, "detail": detail}
    if errors is not None:
        body["errors"] = errors
    return body


# ---------------------------------------------------------------- routes


def test_health(rsps, client):
    rsps.get(f"{BASE}/health", json={"status": "ok", "version": "0.1.0"})
    health = client.health()
    assert (health.status, health.version) == ("ok", "0.1.0")
    assert health.to_dict() == {"status": "ok", "version": "0.1.0"}


def test_models_from_the_spec_table(rsps, client):
    from specdec_service.engine import builtin_models
    rsps.get(f"{BASE}/v1/models", json={"models": builtin_models()})
    models = {m.name: m for m in client.models()}
    assert set(models) == {"toy", "aligned", "biased"}
    assert models["toy"].role == "target" and models["biased"].role == "draft"
    assert models["toy"].vocab == ("A", "B", "C")
    assert models["biased"].next["C"] == (0.8, 0.15, 0.05)
    assert models["toy"].next["B"] == (0.55, 0.15, 0.3)


def test_draws_sends_the_query_and_reads_the_spec_vector(rsps, client):
    rsps.get(f"{BASE}/v1/draws", json=draws_body(1, 0, 4),
             match=[matchers.query_param_matcher({"seed": "1", "position": "0", "count": "4"})])
    draws = client.draws(1, count=4)
    # SPEC section 2 test vector, seed 1
    assert [d.u for d in draws] == [0.5665615751722809, 0.7457817572627011, 0.9710027535867962, 0.4443592170557721]
    assert [d.position for d in draws] == [0, 1, 2, 3]
    assert draws[0].hex == "910a2dec89025cc1"


def test_draft_posts_the_state_and_returns_the_proposal(rsps, client):
    rsps.post(f"{BASE}/v1/draft", json=draft_body(STATE0), match=[matchers.json_params_matcher(STATE0)])
    proposal = client.draft(STATE0)
    assert proposal.tokens == ("A", "A", "C")  # SPEC section 4 worked example
    assert [s.draw.position for s in proposal.steps] == [0, 1, 2]
    assert proposal.drafted


def test_step_posts_a_state_object(rsps, client):
    state = State(Config("biased", 1))
    sent = {"config": {"target": "toy", "draft": "biased", "mode": "speculative", "width": 3, "seed": 1,
                       "limit": 8, "eos": None}, "committed": [], "position": 0,
            "counters": {n: 0 for n in ("target_passes", "draft_steps", "accepted", "rejected", "discarded",
                                        "bonus_tokens", "committed", "draws")}}
    rsps.post(f"{BASE}/v1/step", json=step_body(sent), match=[matchers.json_params_matcher(sent)])
    result = client.step(state)
    assert result.block.committed == ("A", "C")
    assert result.state.position == 6
    assert result.done is None
    assert rsps.calls[0].request.headers["Content-Type"] == "application/json"


def test_step_accepts_a_config_as_the_empty_session(rsps, client):
    body = {"config": Config("biased", 1).to_dict()}
    rsps.post(f"{BASE}/v1/step", json=step_body(body), match=[matchers.json_params_matcher(body)])
    assert client.step(Config("biased", 1)).block.verification[0].ratio == 0.625


def test_verify_sends_state_and_proposal_tokens(rsps, client):
    sent = {"state": STATE0, "proposal": {"tokens": ["B", "A"]}}
    from specdec_service.engine import parse_state, verify
    rsps.post(f"{BASE}/v1/verify", json=verify(parse_state(STATE0), ["B", "A"]).to_json(),
              match=[matchers.json_params_matcher(sent)])
    result = client.verify(STATE0, ["B", "A"])
    assert result.block.proposal.tokens == ("B", "A")
    # draw 0 (0.5666) gives A, not B; draw 1 (0.7458) gives A after B (biased row 0.80 0.15 0.05)
    assert [s.drafted for s in result.block.proposal.steps] == [False, True]


def test_verify_takes_a_proposal_object(rsps, client):
    rsps.post(f"{BASE}/v1/draft", json=draft_body(STATE0))
    rsps.post(f"{BASE}/v1/verify", json=step_body(STATE0),
              match=[matchers.json_params_matcher({"state": STATE0, "proposal": {"tokens": ["A", "A", "C"]}})])
    proposal = client.draft(STATE0)
    assert client.verify(STATE0, proposal).block.correction.token == "C"


def test_verify_refuses_a_bare_string():
    with pytest.raises(TypeError):
        Client(BASE).verify(STATE0, "AB")


def test_run_posts_the_config_with_keyword_settings(rsps, client):
    config = {"target": "toy", "draft": "biased", "mode": "speculative", "width": 2, "seed": 1, "limit": 8,
              "eos": None}
    rsps.post(f"{BASE}/v1/runs", json=run_body(config), match=[matchers.json_params_matcher({"config": config})])
    trace = client.run(draft="biased", seed=1, width=2)
    assert trace.config.width == 2
    assert "".join(trace.output) == "".join(run_body(config)["output"])
    assert trace.to_dict() == run_body(config)


def test_run_needs_draft_and_seed(rsps):
    client = Client(BASE)
    with pytest.raises(InvalidSettings, match=r"^missing required settings: seed \(draft and seed are required"):
        client.run(draft="biased")
    with pytest.raises(InvalidSettings, match="missing required settings: draft, seed"):
        client.session()
    with pytest.raises(InvalidSettings, match="unknown settings \\['temperature'\\]"):
        client.run(draft="biased", seed=1, temperature=0.5)
    with pytest.raises(InvalidSettings, match="unknown settings"):
        client.session(draft="biased", seed=1).configure(wdth=2)
    assert issubclass(InvalidSettings, SpecdecError) and issubclass(InvalidSettings, TypeError)
    assert len(rsps.calls) == 0  # refused before sending anything


def test_every_request_has_a_timeout(rsps):
    rsps.get(f"{BASE}/health", json={"status": "ok", "version": "x"})
    rsps.post(f"{BASE}/v1/runs", json=run_body({"draft": "aligned", "seed": 0}))
    with Client(BASE, timeout=2.5) as c:
        c.health()
        c.run(draft="aligned", seed=0)
    assert [call.request.req_kwargs["timeout"] for call in rsps.calls] == [2.5, 2.5]


def test_a_given_session_is_reused(rsps):
    rsps.get(f"{BASE}/health", json={"status": "ok", "version": "x"})
    http = requests.Session()
    http.headers["X-Test"] = "yes"
    c = Client(BASE + "/", session=http)
    c.health()
    c.health()
    assert c.http is http and c.base_url == BASE
    assert [call.request.headers["X-Test"] for call in rsps.calls] == ["yes", "yes"]
    assert http.get_adapter(BASE + "/health").max_retries.status_forcelist == (502, 503, 504)


def test_bad_constructor_arguments():
    for kwargs in ({"base_url": "localhost:8000"}, {"timeout": 0}, {"retries": -1}):
        with pytest.raises(ValueError):
            Client(**kwargs)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("status, cls", [
    (400, BadRequest), (404, NotFound), (405, MethodNotAllowed), (409, SessionDone), (413, PayloadTooLarge),
    (415, UnsupportedMediaType), (422, InvalidInput), (500, ServerError), (418, APIError),
])
def test_each_status_raises_its_class_with_the_problem(rsps, client, status, cls):
    body = problem(status, "Some title", "what went wrong")
    rsps.post(f"{BASE}/v1/step", json=body, status=status, content_type=PROBLEM)
    with pytest.raises(cls) as info:
        client.step(STATE0)
    error = info.value
    assert type(error) is cls and isinstance(error, SpecdecError)
    assert (error.status, error.title, error.detail) == (status, "Some title", "what went wrong")
    assert error.problem == body
    assert error.url == f"{BASE}/v1/step" and error.method == "POST"
    assert str(error) == f"HTTP {status} Some title: what went wrong (POST {BASE}/v1/step)"
    assert len(rsps.calls) == 1  # none of these is retried


def test_422_carries_each_field_error_readably(rsps, client):
    errors = [{"pointer": "#/config/width", "detail": "must be an integer from 1 to 16"},
              {"pointer": "#/config/seed", "detail": "is required"}]
    rsps.post(f"{BASE}/v1/runs", status=422, content_type=PROBLEM,
              json=problem(422, "Invalid input", "2 fields are invalid", errors,
                           type="tag:specdec,2026:problem/invalid-input"))
    with pytest.raises(InvalidInput) as info:
        client.run({"draft": "biased", "seed": 1, "width": 99})
    error = info.value
    assert [(e.pointer, e.detail) for e in error.errors] == [(e["pointer"], e["detail"]) for e in errors]
    assert error.type == "tag:specdec,2026:problem/invalid-input"
    assert "#/config/width: must be an integer from 1 to 16; #/config/seed: is required" in str(error)
    assert error.describe().splitlines()[1:3] == ["  #/config/width: must be an integer from 1 to 16",
                                                  "  #/config/seed: is required"]


def test_query_parameter_errors(rsps, client):
    rsps.get(f"{BASE}/v1/draws", status=422, content_type=PROBLEM,
             json=problem(422, "Invalid input", "1 field is invalid", [{"parameter": "count", "detail": "too big"}]))
    with pytest.raises(InvalidInput) as info:
        client.draws(1, count=5000)
    assert info.value.errors[0].pointer is None
    assert str(info.value.errors[0]) == "?count: too big"


def test_a_query_parameter_error_is_said_once(service, client):
    with pytest.raises(InvalidInput) as info:
        client.draws(1, count=0)  # the real service's problem document
    assert str(info.value) == (
        "HTTP 422 Invalid input: 1 field is invalid: count: must be an integer from 1 to 4096 "
        f"(GET {BASE}/v1/draws?seed=1&position=0&count=0)")
    assert str(info.value.errors[0]) == "?count: must be an integer from 1 to 4096"


def test_field_errors_the_detail_does_not_name_are_appended_on_one_line(rsps, client):
    errors = [{"parameter": "count", "detail": "too big"}, {"pointer": "#/x", "detail": "odd\nvalue"}]
    rsps.get(f"{BASE}/v1/draws", status=422, content_type=PROBLEM,
             json=problem(422, "Invalid input", "2 fields are invalid:\ncount: too big", errors))
    with pytest.raises(InvalidInput) as info:
        client.draws(1, count=5000)
    assert str(info.value) == (f"HTTP 422 Invalid input: 2 fields are invalid: count: too big [#/x: odd value] "
                               f"(GET {BASE}/v1/draws?seed=1&position=0&count=5000)")


def test_an_error_without_problem_body(rsps, client):
    rsps.get(f"{BASE}/health", status=404, body="<html>nope</html>", content_type="text/html")
    with pytest.raises(NotFound) as info:
        client.health()
    assert (info.value.title, info.value.detail, info.value.problem) == ("Not Found", "nope", {})
    assert str(info.value) == f"HTTP 404 Not Found: nope (GET {BASE}/health)"


def test_a_long_error_page_is_one_short_line(rsps, client):
    page = ("<!DOCTYPE html>\n<html>\n  <head><title>Bad gateway</title><style>p {color: red}</style></head>\n"
            "  <body>\n    <h1>Upstream  &amp;\tproxy</h1>\n" + "    <p>It broke.</p>\n" * 30 + "  </body>\n</html>\n")
    rsps.get(f"{BASE}/health", status=418, body=page, content_type="text/html; charset=utf-8")
    with pytest.raises(APIError) as info:
        client.health()
    detail = info.value.detail
    assert detail.startswith("Upstream & proxy It broke. It broke.") and detail.endswith("...")
    assert len(detail) <= 100 and "\n" not in str(info.value)
    assert str(info.value) == f"HTTP 418 I'm a Teapot: {detail} (GET {BASE}/health)"


@pytest.mark.parametrize("body, content_type, detail", [
    ("  plain\n\n text  ", "text/plain", "plain text"),
    ("", "text/plain", None),
    ('{"error": "no such thing"}', "application/json", '{"error": "no such thing"}'),
])
def test_bodies_that_are_not_problem_documents(rsps, client, body, content_type, detail):
    rsps.get(f"{BASE}/health", status=404, body=body, content_type=content_type)
    with pytest.raises(NotFound) as info:
        client.health()
    assert info.value.detail == detail
    assert str(info.value) == f"HTTP 404 Not Found{': ' + detail if detail else ''} (GET {BASE}/health)"


def test_a_2xx_body_that_is_not_json(rsps, client):
    rsps.get(f"{BASE}/health", body="hello", content_type="text/plain")
    with pytest.raises(InvalidResponse, match=r"health: HTTP 200 with a body that is not JSON \(text/plain\)"):
        client.health()


def test_a_2xx_body_of_the_wrong_shape(rsps, client):
    rsps.post(f"{BASE}/v1/step", json={"block": {}})
    with pytest.raises(InvalidResponse, match="not the shape this route returns"):
        client.step(STATE0)


def test_timeouts_raise_request_timed_out(rsps, client):
    rsps.get(f"{BASE}/health", body=requests.exceptions.ReadTimeout("slow"))
    with pytest.raises(RequestTimedOut) as info:
        client.health()
    assert str(info.value) == f"the specdec service at {BASE}/health did not answer within 5 s"


def test_connection_errors_raise_connection_failed(rsps, client):
    rsps.get(f"{BASE}/health", body=requests.exceptions.ConnectionError("refused"))
    with pytest.raises(ConnectionFailed, match=f"cannot reach the specdec service at {BASE}/health"):
        client.health()


# ---------------------------------------------------------------- retries (responses emulates urllib3's Retry)


def test_503_then_success_is_retried(rsps, client):
    url = f"{BASE}/v1/runs"
    rsps.post(url, status=503, json=problem(503, "Service Unavailable", "busy"), content_type=PROBLEM)
    rsps.post(url, status=502, json=problem(502, "Bad Gateway", "proxy"), content_type=PROBLEM)
    rsps.post(url, json=run_body({"draft": "aligned", "seed": 3}))
    trace = client.run(draft="aligned", seed=3)
    assert len(rsps.calls) == 3
    assert trace.counters.rejected == 0  # aligned: every proposal accepted (SPEC section 4)
    assert all(json.loads(c.request.body) == {"config": Config("aligned", 3).to_dict()} for c in rsps.calls)


def test_504_retries_are_bounded_then_raise_with_the_problem(rsps, client):
    rsps.get(f"{BASE}/health", status=504, json=problem(504, "Gateway Timeout", "upstream"), content_type=PROBLEM)
    with pytest.raises(ServerError) as info:
        client.health()
    assert len(rsps.calls) == 4  # the first try and 3 retries
    assert (info.value.status, info.value.detail) == (504, "upstream")


def test_retries_zero_means_one_try(rsps):
    rsps.get(f"{BASE}/health", status=503, json=problem(503, "Service Unavailable", "busy"), content_type=PROBLEM)
    with pytest.raises(ServerError):
        Client(BASE, retries=0).health()
    assert len(rsps.calls) == 1


def test_500_is_not_retried(rsps, client):
    rsps.post(f"{BASE}/v1/step", status=500, json=problem(500, "Internal Server Error", "bug"), content_type=PROBLEM)
    with pytest.raises(ServerError):
        client.step(STATE0)
    assert len(rsps.calls) == 1


def test_the_retry_policy():
    retry = make_retry(3, 0.5)
    assert (retry.total, retry.connect, retry.read, retry.status) == (3, 3, 0, 3)
    assert retry.status_forcelist == (502, 503, 504)
    assert {"GET", "POST"} <= set(retry.allowed_methods)
    assert retry.backoff_factor == 0.5 and retry.raise_on_status is False
    assert retry.respect_retry_after_header is False  # the wait stays bounded


def test_the_retry_policy_with_a_urllib3_before_1_26(monkeypatch):
    """urllib3 < 1.26 names allowed_methods `method_whitelist` and has no `other` counter."""
    made = []

    def old_retry(total=10, connect=None, read=None, redirect=None, status=None, method_whitelist=None,
                  status_forcelist=None, backoff_factor=0, raise_on_redirect=True, raise_on_status=True,
                  history=None, respect_retry_after_header=True, remove_headers_on_redirect=()):
        made.append(dict(total=total, connect=connect, read=read, status=status, methods=set(method_whitelist),
                         status_forcelist=status_forcelist, backoff_factor=backoff_factor,
                         raise_on_status=raise_on_status, respect_retry_after_header=respect_retry_after_header))
        return "old Retry"

    monkeypatch.setattr("specdec_client.transport.Retry", old_retry)
    assert make_retry(3, 0.5) == "old Retry"
    assert made == [dict(total=3, connect=3, read=0, status=3, methods={"GET", "POST"},
                         status_forcelist=(502, 503, 504), backoff_factor=0.5, raise_on_status=False,
                         respect_retry_after_header=False)]


# ---------------------------------------------------------------- real sockets


@pytest.fixture
def flaky_server():
    """A real HTTP server on 127.0.0.1 answering 503 twice, then the health body."""
    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            status, body = (503, b'{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"warming up"}') \
                if len(hits) <= 2 else (200, b'{"status":"ok","version":"9"}')
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


def test_real_retries_through_urllib3(flaky_server):
    url, hits = flaky_server
    with Client(url, retries=3, backoff_factor=0) as c:
        assert c.health().version == "9"
    assert hits == ["/health"] * 3


def test_real_retries_exhausted(flaky_server):
    url, hits = flaky_server
    with pytest.raises(ServerError, match="HTTP 503 Service Unavailable: warming up"):
        Client(url, retries=1, backoff_factor=0).health()
    assert len(hits) == 2


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused_is_retried_then_named(caplog):
    url = f"http://127.0.0.1:{_closed_port()}"
    with caplog.at_level(logging.WARNING, logger="urllib3.connectionpool"):
        with pytest.raises(ConnectionFailed) as info:
            Client(url, retries=2, backoff_factor=0).health()
    assert str(info.value) == f"cannot reach the specdec service at {url}/health: Connection refused (after 2 retries)"
    assert info.value.url == f"{url}/health"
    assert sum("Retrying" in r.getMessage() for r in caplog.records) == 2


def test_a_silent_server_times_out():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)  # accepts the connection, never answers
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(RequestTimedOut) as info:
            Client(url, timeout=0.2).health()
    assert info.value.url == f"{url}/health" and info.value.timeout == 0.2


def test_a_body_json_cannot_hold_is_not_sent(rsps, client):
    """A NaN in a trace (Python's json reads and writes one by default) is refused before
    anything is sent, as what it is, not as a connection failure."""
    with pytest.raises(InvalidRequestBody, match="not JSON .*NaN") as info:
        client.grade({"format": "specdec-trace/1", "ratio": float("nan")})
    assert isinstance(info.value, ValueError)
    assert len(rsps.calls) == 0
