"""gunicorn settings of the specdec service.

``specdec-service serve`` loads them with ``gunicorn -c
python:specdec_service.gunicorn_conf`` (so they apply from any directory,
with an editable or a regular install); the repository's
``gunicorn.conf.py`` re-exports them for ``gunicorn -c gunicorn.conf.py
'specdec_service:create_app()'`` and the Docker image.

Environment (read when gunicorn loads this module):

- ``SPECDEC_BIND`` (default ``127.0.0.1:8000``; the Docker image sets
  ``0.0.0.0:8000``): the address to listen on.
- ``SPECDEC_WORKERS`` (default: the number of CPUs, 2 on the reference
  machine; the Docker image and the Kubernetes Deployment set 2, the compose
  file and deploy/local.py 1 per replica): sync worker processes.
  The work is CPU-bound pure Python, so more workers than cores only add
  context switches (docs/bench-service.md).
- ``SPECDEC_TIMEOUT`` (default 30 s): a worker silent for longer is restarted.
- ``SPECDEC_CPU_DEADLINE`` (default 10 s; a decimal number of seconds, above 0 and below
  ``SPECDEC_TIMEOUT``): the CPU time one request may use; a request still working then is
  stopped and answered with a 503 problem (type ``compute-deadline``), and the worker serves the
  next request (:mod:`specdec_service.deadline`). Below the timeout, so that no request gets a
  worker killed (the timeout counts wall time, so a deadline well below it also leaves room for a
  loaded machine: 10 s of CPU at a third of a core is 30 s).
- ``SPECDEC_WALL_DEADLINE`` (default 2/3 of ``SPECDEC_TIMEOUT``, 20 s; a decimal, above 0 and
  below the timeout): the seconds on the clock one request may take, stopped the same way
  (on a loaded machine CPU time runs slower than the clock the timeout counts).
- ``SPECDEC_LOG_LEVEL`` (default ``info``).
- ``SPECDEC_LOG_FORMAT`` (default ``text``): ``json`` writes one JSON object per request on
  stdout (time, request id, method, route, status, duration, work units:
  :func:`specdec_service.observe.log_record`) in place of gunicorn's access line.
- ``PROMETHEUS_MULTIPROC_DIR`` (default: a new private directory under ``$TMPDIR``, removed at
  exit): where the workers keep their metrics (prometheus_client's multiprocess mode), so that
  ``GET /metrics`` sums every worker's. Each gunicorn master needs its own directory; its
  ``*.db`` files are deleted when gunicorn starts (``on_starting``), a dead worker's live gauges
  when it exits (``child_exit``).

A value that is not a positive integer (or not a log format) stops gunicorn with a one-line
message (``SystemExit``), not a traceback. The access log goes to stdout
and the error log to stderr, so a container runtime collects both. Each
access log line starts with the time and then ``request_id=`` and the answer's
``X-Request-Id`` (the caller's or the edge's when well formed, else one the service made:
:mod:`specdec_service.observe`), before the request line, so that a query such as
``?request_id=FORGED`` cannot come first for a ``request_id=(\\S+)`` match; the nginx edge logs
it in the same place (deploy/nginx/edge.conf, docs/deploy.md).
"""

import glob
import multiprocessing
import os
import shutil
import tempfile


def _positive_int(name: str, default: int) -> int:
    """``$name`` as a positive integer (ASCII digits), else ``default`` when
    unset; raises ``SystemExit`` with a one-line message otherwise."""
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise SystemExit(f"specdec-service: {name} must be a positive integer, not {text!r}")
    return int(text)


def _deadline(name: str) -> float:
    """The deadline ``name`` of :mod:`specdec_service.deadline` (``deadline_setting``:
    ``$SPECDEC_CPU_DEADLINE``, ``wall_deadline_setting``: ``$SPECDEC_WALL_DEADLINE``) checked
    against ``$SPECDEC_TIMEOUT``; ``SystemExit`` with one line otherwise."""
    from specdec_service import deadline

    try:
        return getattr(deadline, name)(os.environ)
    except ValueError as error:
        raise SystemExit(f"specdec-service: {error}") from None


def _log_format() -> str:
    """``$SPECDEC_LOG_FORMAT`` (``text`` or ``json``); ``SystemExit`` with one line otherwise."""
    from specdec_service.observe import log_format

    try:
        return log_format(os.environ.get("SPECDEC_LOG_FORMAT"))
    except ValueError as error:
        raise SystemExit(f"specdec-service: {error}") from None


wsgi_app = "specdec_service:create_app()"
bind = os.environ.get("SPECDEC_BIND") or "127.0.0.1:8000"
workers = _positive_int("SPECDEC_WORKERS", multiprocessing.cpu_count())
worker_class = "sync"
timeout = _positive_int("SPECDEC_TIMEOUT", 30)
_CPU_DEADLINE = _deadline("deadline_setting")  # checked here, once, so a bad value stops gunicorn; create_app reads it
_WALL_DEADLINE = _deadline("wall_deadline_setting")  # the same for the wall-clock deadline
graceful_timeout = 10
keepalive = 2
preload_app = True
_LOG_FORMAT = _log_format()
accesslog = None if _LOG_FORMAT == "json" else "-"  # the app writes the JSON line itself
errorlog = "-"
loglevel = os.environ.get("SPECDEC_LOG_LEVEL", "info")
access_log_format = '%(t)s request_id=%({x-request-id}o)s %(h)s "%(r)s" %(s)s %(b)s %(M)sms'
# No runtime control socket (gunicorn >= 25): the service is stateless and
# needs no gunicornc; the default path ($HOME/.gunicorn/gunicorn.ctl) is shared
# by every instance of a user and unwritable in the read-only container.
control_socket_disable = True
# Request line and headers stay within gunicorn's defaults (4094 bytes a line,
# 100 headers); bodies are capped by the app (256 KiB, 8 MiB on the grading
# routes; a 413 problem).


def on_starting(server):
    """Build the OpenAPI document in the master (it is cached) before the
    socket opens and the workers fork, so that no worker's first
    ``GET /openapi.yaml`` waits the seconds it takes to build."""
    from specdec_service.api import contract

    contract()
    _metrics_directory()


_PRIVATE_METRICS: list[str] = []
"""The metrics directory this master made (removed at exit), if it made one."""


def _metrics_directory() -> str:
    """Set ``PROMETHEUS_MULTIPROC_DIR`` for the workers (they inherit the master's environment;
    prometheus_client reads it when the first metric is made, on a worker's first request):
    the operator's directory, emptied of earlier runs' ``*.db`` files, or a new private one."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        for stale in glob.glob(os.path.join(directory, "*.db")):
            os.remove(stale)
    else:
        directory = tempfile.mkdtemp(prefix="specdec-metrics-")
        _PRIVATE_METRICS.append(directory)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    return directory


def child_exit(server, worker):
    """A worker exited: its live gauges (requests in progress) leave the sum; its counters stay."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    """Remove the private metrics directory (an operator's is left as it is)."""
    for directory in _PRIVATE_METRICS:
        shutil.rmtree(directory, ignore_errors=True)
