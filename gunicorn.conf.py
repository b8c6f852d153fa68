"""gunicorn settings of the specdec service (``gunicorn -c gunicorn.conf.py
'specdec_service:create_app()'``, or ``specdec-service serve``).

Environment:

- ``SPECDEC_BIND`` (default ``127.0.0.1:8000``; the Docker image sets
  ``0.0.0.0:8000``): the address to listen on.
- ``SPECDEC_WORKERS`` (default: the number of CPUs, 2 on the reference
  machine): sync worker processes. The work is CPU-bound pure Python, so
  more workers than cores only add context switches (docs/bench-service.md).
- ``SPECDEC_TIMEOUT`` (default 30 s): a worker silent for longer is restarted.

The access log goes to stdout and the error log to stderr, so a container
runtime collects both.
"""

import multiprocessing
import os

wsgi_app = "specdec_service:create_app()"
bind = os.environ.get("SPECDEC_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("SPECDEC_WORKERS", multiprocessing.cpu_count()))
worker_class = "sync"
timeout = int(os.environ.get("SPECDEC_TIMEOUT", "30"))
graceful_timeout = 10
keepalive = 2
preload_app = True
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("SPECDEC_LOG_LEVEL", "info")
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'
# Request line and headers stay within gunicorn's defaults (4094 bytes a line,
# 100 headers); bodies are capped by the app (256 KiB, a 413 problem).
