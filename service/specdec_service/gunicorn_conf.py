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
- ``SPECDEC_LOG_LEVEL`` (default ``info``).

A value that is not a positive integer stops gunicorn with a one-line
message (``SystemExit``), not a traceback. The access log goes to stdout
and the error log to stderr, so a container runtime collects both. Each
access log line ends with ``request_id=`` and the request's ``X-Request-Id``
header (``-`` without one), which the nginx edge sets and logs too
(deploy/nginx/edge.conf, docs/deploy.md).
"""

import multiprocessing
import os


def _positive_int(name: str, default: int) -> int:
    """``$name`` as a positive integer (ASCII digits), else ``default`` when
    unset; raises ``SystemExit`` with a one-line message otherwise."""
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise SystemExit(f"specdec-service: {name} must be a positive integer, not {text!r}")
    return int(text)


wsgi_app = "specdec_service:create_app()"
bind = os.environ.get("SPECDEC_BIND") or "127.0.0.1:8000"
workers = _positive_int("SPECDEC_WORKERS", multiprocessing.cpu_count())
worker_class = "sync"
timeout = _positive_int("SPECDEC_TIMEOUT", 30)
graceful_timeout = 10
keepalive = 2
preload_app = True
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("SPECDEC_LOG_LEVEL", "info")
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms request_id=%({x-request-id}i)s'
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
