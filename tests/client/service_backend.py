"""Test helpers: answers of the real service, without a network.

``bodies``: JSON bodies computed by the real engine (``specdec_service``),
so the unit tests' recorded responses have the real shapes and values.
``forward_to_app``: a ``responses`` callback that hands each request to the
real Flask app's test client, so the SDK's unit tests run against the real
routes, validation and problem documents. The SDK itself never imports
``specdec_service``; only these tests do.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import responses

from specdec_client import cli
from specdec_service import create_app
from specdec_service.engine import draft, draw_slice, parse_state, run_json, step

BASE = "http://specdec.test"
ROUTES = (("GET", "/health"), ("GET", "/v1/models"), ("GET", "/v1/draws"), ("POST", "/v1/draft"),
          ("POST", "/v1/verify"), ("POST", "/v1/step"), ("POST", "/v1/runs"), ("POST", "/v1/grade"),
          ("POST", "/v1/grade/distribution"), ("GET", "/v1/grade/suites"), ("GET", "/v1/grade/suites/quick"),
          ("POST", "/v1/analysis"))


def specdec(capsys, *argv) -> tuple[int, str, str]:
    """The ``specdec`` command run in-process with ``argv``: ``(exit status, stdout, stderr)``
    (``capsys``: pytest's fixture, which captured them). With the ``at_mock_url`` fixture it
    talks to the real routes through ``responses``."""
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def step_body(state: dict) -> dict:
    """``POST /v1/step``'s answer for ``state``, from the engine."""
    return step(parse_state(state)).to_json()


def draft_body(state: dict) -> dict:
    """``POST /v1/draft``'s answer for ``state``, from the engine."""
    return draft(parse_state(state))


def run_body(config: dict) -> dict:
    """``POST /v1/runs``'s answer (the trace) for ``config``, from the engine."""
    return run_json(config)


def draws_body(seed: int, position: int, count: int) -> dict:
    """``GET /v1/draws``'s answer, from the engine."""
    return {"draws": [d.to_json() for d in draw_slice(seed, position, count)]}


_APP = None


def app():
    """One Flask app of the real service for the whole test run."""
    global _APP
    if _APP is None:
        _APP = create_app({"TESTING": True})
    return _APP


def forward_to_app(request):
    """A ``responses`` callback: answer with the real Flask app."""
    parts = urlsplit(request.url)
    body = request.body.encode() if isinstance(request.body, str) else request.body
    response = app().test_client().open(
        parts.path, method=request.method, query_string=parts.query, data=body,
        headers={k: v for k, v in request.headers.items() if k.lower() in ("content-type", "accept")})
    headers = {"Content-Type": response.headers.get("Content-Type", "application/json")}
    return response.status_code, headers, response.get_data()


def register_service(rsps: responses.RequestsMock, base: str = BASE) -> None:
    """Route every API call to ``base`` through :func:`forward_to_app`."""
    for method, path in ROUTES:
        rsps.add_callback(method, base + path, callback=forward_to_app)


def calls_to(rsps: responses.RequestsMock, path: str) -> list:
    """The recorded calls whose URL path is ``path``."""
    return [c for c in rsps.calls if urlsplit(c.request.url).path == path]


def body_of(call) -> dict:
    """The JSON body a recorded call sent."""
    return json.loads(call.request.body)
