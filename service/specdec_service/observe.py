"""Operations of the HTTP service: request ids, Prometheus metrics and per-request log lines.

:func:`install` adds three Flask hooks to an app (``create_app`` installs them first, so that
their ``after_request`` runs last and sees the final status):

- **Request ids.** Every answer carries ``X-Request-Id``: the caller's own when it is well
  formed (:data:`REQUEST_ID_FORM`: 1 to 128 characters of ``A-Z a-z 0-9 . _ -``; the edge's
  ``$request_id``, 32 hex digits, is one), otherwise a new one (:func:`new_request_id`, 32 hex
  digits, the edge's shape). It is exposed to browsers (CORS ``Access-Control-Expose-Headers``,
  :data:`specdec_service.app.CORS_RESOURCES`) and written in the log lines: gunicorn's access
  line (``request_id=``, with the time, :mod:`specdec_service.gunicorn_conf`), the JSON line
  below, and the log of an unexpected error.
- **Metrics** (:func:`metrics`, served by ``GET /metrics``, :mod:`specdec_service.api.metrics`):
  requests by method, route (the URL rule, ``/v1/grade/suites/<name>``, not the path; a path no
  rule matches, or whose method its rule lacks (a 405), is ``unmatched``) and status; their latency; the requests in progress; refusals
  (every ``application/problem+json`` answer) by status and RFC 9457 problem ``type``; and the
  work units a request was allowed to spend (the grading and analysis routes' budgets,
  :class:`specdec_service.budget.Meter`). Under gunicorn they are prometheus_client's
  multiprocess metrics (``PROMETHEUS_MULTIPROC_DIR``, set up by the gunicorn settings before the
  workers fork), so ``/metrics`` answers the sum over the workers whichever worker serves it.
  prometheus_client is imported on the first request (in a worker, after that variable is set),
  never when the app is built.
- **JSON log lines.** With the app's ``LOG_FORMAT`` ``"json"`` (default: the environment variable
  :data:`LOG_FORMAT_ENV` ``SPECDEC_LOG_FORMAT``, ``text`` when unset), one JSON object per request
  on standard output (:func:`log_record`); gunicorn's own access line is then off. With ``text``,
  gunicorn's access line is the request's log line.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Optional

from flask import Flask, Response, current_app, g, request

from .budget import METER, Meter

REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID_FORM = re.compile(r"[A-Za-z0-9._-]{1,128}")
"""A caller's ``X-Request-Id`` is kept when it matches this whole (``fullmatch``); the edge
(deploy/nginx/edge.conf) applies the same rule."""
LOG_FORMAT_ENV = "SPECDEC_LOG_FORMAT"
LOG_FORMATS = ("text", "json")
METHODS = frozenset({"GET", "HEAD", "POST", "OPTIONS", "PUT", "PATCH", "DELETE"})
"""Methods named in the metrics as they are; any other is ``other`` (a label's values stay few)."""
UNMATCHED = "unmatched"
PROBLEM_MIMETYPE = "application/problem+json"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
"""Seconds; the budgets keep a request within about 2 s of one core (budget.py), gunicorn's
worker timeout is 30 s."""
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format, version 0.0.4."""


def new_request_id() -> str:
    """A fresh request id: 32 lowercase hex digits (a random UUID's), the shape of nginx's
    ``$request_id``."""
    return uuid.uuid4().hex


def request_id(sent: Optional[str]) -> str:
    """The id of a request whose ``X-Request-Id`` header is ``sent`` (``None`` without one): ``sent``
    itself when it is well formed (:data:`REQUEST_ID_FORM`), else :func:`new_request_id`."""
    if sent is not None and REQUEST_ID_FORM.fullmatch(sent):
        return sent
    return new_request_id()


def log_format(value: Optional[str]) -> str:
    """``value`` (``SPECDEC_LOG_FORMAT``) checked: ``text`` when unset or empty, else one of
    :data:`LOG_FORMATS`; raises ``ValueError`` naming the choices otherwise."""
    if not value:
        return "text"
    if value not in LOG_FORMATS:
        raise ValueError(f"{LOG_FORMAT_ENV} must be one of {', '.join(LOG_FORMATS)}, not {value!r}")
    return value


class Metrics:
    """The service's Prometheus metrics (prometheus_client objects; names in ``docs/deploy.md``)."""

    def __init__(self) -> None:
        """All or nothing: when one metric cannot be made (in multiprocess mode, a directory that
        cannot be written), those made before it are unregistered again, so that the next attempt
        meets the same error rather than a registry that already holds half of them."""
        from prometheus_client import REGISTRY, Counter, Gauge, Histogram

        try:
            self.requests = Counter("specdec_http_requests", "HTTP requests answered, by method, route and status.",
                                    ["method", "route", "status"])
            self.latency = Histogram("specdec_http_request_duration_seconds",
                                     "Seconds from the request's arrival at the app to its answer, by method and "
                                     "route.", ["method", "route"], buckets=LATENCY_BUCKETS)
            self.in_progress = Gauge("specdec_http_requests_in_progress", "Requests being served.",
                                     multiprocess_mode="livesum")
            self.problems = Counter("specdec_problems", "Refusals and errors (RFC 9457 problem documents), by "
                                    "status and problem type.", ["status", "type"])
            self.work_units = Counter("specdec_work_units", "Work units the requests were allowed to spend (their "
                                      "route's budget: grading and analysis), by method, route and unit.",
                                      ["method", "route", "unit"])
        except Exception:
            for made in list(vars(self).values()):
                REGISTRY.unregister(made)
            raise


@lru_cache(maxsize=None)
def metrics() -> Metrics:
    """The process's :class:`Metrics`, made (and prometheus_client imported) on first use. In
    multiprocess mode the directory is made if it is missing (gunicorn's ``on_starting`` makes it;
    under another server nothing else does). Raises ``OSError`` when it cannot be made or written."""
    directory = multiprocess_dir()
    if directory is not None:
        os.makedirs(directory, exist_ok=True)
    return Metrics()


def multiprocess_dir() -> Optional[str]:
    """``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's multiprocess mode), or ``None``."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def exposition() -> bytes:
    """The metrics in the Prometheus text format (:data:`METRICS_CONTENT_TYPE`): in multiprocess
    mode the sum over every process that wrote to the directory (live workers and dead ones:
    counters never go back), else this process's registry."""
    from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess

    metrics()
    directory = multiprocess_dir()
    if directory is None:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=directory)
    return generate_latest(registry)


def _begin() -> None:
    g.request_id = request_id(request.headers.get(REQUEST_ID_HEADER))
    g.request_start = time.perf_counter()
    g.request_meter = Meter()
    g.request_meter_token = METER.set(g.request_meter)
    try:
        metrics().in_progress.inc()
        g.request_in_progress = True
    except Exception:
        _not_counted()


def _not_counted() -> None:
    """Metrics are bookkeeping: when prometheus_client fails (e.g. a metrics directory that cannot
    be written), the request is still answered as it would be, and the error log says why."""
    current_app.logger.exception("metrics not recorded (request_id=%s)", g.get("request_id", "-"))


def _problem_type(response: Response) -> Optional[str]:
    """The ``type`` of a problem document answer (``None`` for any other answer)."""
    if response.mimetype != PROBLEM_MIMETYPE or response.is_streamed:
        return None
    try:
        return str(json.loads(response.get_data())["type"])
    except (ValueError, KeyError, TypeError):
        return "about:blank"


def log_record(status: int, duration: float, problem: Optional[str]) -> dict[str, Any]:
    """The JSON log line of the current request: ``time`` (UTC, RFC 3339, milliseconds), ``id``
    (the request id), ``method``, ``route`` (the URL rule), ``status``, ``duration_ms`` (the
    app's time, milliseconds), ``work_units`` and ``unit`` (the budget units spent, ``null`` on a
    route without a budget), ``problem`` (the problem type of a refusal, else ``null``) and
    ``pid`` (the worker)."""
    meter = getattr(g, "request_meter", None) or Meter()
    return {
        "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "id": getattr(g, "request_id", None),
        "method": request.method,
        "route": _route(),
        "status": status,
        "duration_ms": round(duration * 1000, 3),
        "work_units": meter.units,
        "unit": meter.unit,
        "problem": problem,
        "pid": os.getpid(),
    }


def _route() -> str:
    rule = request.url_rule
    return rule.rule if rule is not None else UNMATCHED


def _write_line(record: dict[str, Any]) -> None:
    """One JSON object and a newline on standard output, in one write (a sync worker serves one
    request at a time; the container runtime collects stdout)."""
    sys.stdout.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _finish(response: Response) -> Response:
    if "request_id" not in g:  # a hook before ours failed: no id read, no timer started
        _begin()
    response.headers[REQUEST_ID_HEADER] = g.request_id
    duration = time.perf_counter() - g.request_start
    method = request.method if request.method in METHODS else "other"
    route, status = _route(), response.status_code
    problem = _problem_type(response)
    meter: Meter = g.request_meter
    try:
        found = metrics()
        found.requests.labels(method, route, str(status)).inc()
        found.latency.labels(method, route).observe(duration)
        if problem is not None:
            found.problems.labels(str(status), problem).inc()
        if meter.units is not None:
            found.work_units.labels(method, route, meter.unit).inc(meter.units)
    except Exception:
        _not_counted()
    if current_app.config.get("LOG_FORMAT") == "json":
        _write_line(log_record(status, duration, problem))
    return response


def _end(_error: Optional[BaseException]) -> None:
    token = g.pop("request_meter_token", None)
    if token is not None:
        try:
            METER.reset(token)
        except ValueError:  # torn down in another context than the request began in
            METER.set(None)
    if g.pop("request_in_progress", False):
        metrics().in_progress.dec()


def install(app: Flask) -> None:
    """Add the request id, metrics and log hooks to ``app`` (see the module docstring). Its
    ``LOG_FORMAT`` config (``text`` or ``json``) defaults to ``$SPECDEC_LOG_FORMAT``; another
    value raises ``ValueError``."""
    app.config["LOG_FORMAT"] = log_format(app.config.get("LOG_FORMAT") or os.environ.get(LOG_FORMAT_ENV))
    app.before_request(_begin)
    app.after_request(_finish)
    app.teardown_request(_end)
