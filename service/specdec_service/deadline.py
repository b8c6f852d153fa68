"""A per-request CPU deadline: whatever a cost model misses, no request holds a worker for long.

The budgets (:mod:`specdec_service.budget`) refuse a request whose estimated cost is too high
before any work starts. This module is the second line: :class:`cpu_deadline` arms the
process's CPU-time interval timer (``setitimer(ITIMER_PROF)``: user plus system CPU time, the
figure ``/proc/<pid>/stat`` reports) for the duration of one request; when the request has used
``seconds`` of CPU, the timer's signal (``SIGPROF``) raises :class:`ComputeDeadline` in the
request's code, wherever it is. The HTTP layer turns it into a 503 problem document (type
``compute-deadline``, :mod:`specdec_service.api.problems`) and the worker serves the next request.

Why a signal and a ``BaseException``: the work is pure Python on the request's own thread, so a
check in the work itself would have to be everywhere; a signal handler runs between two bytecodes
of whatever runs. :class:`ComputeDeadline` derives from ``BaseException`` so that no ``except
Exception`` of the engine or the grader can swallow it; and after the first expiry the timer
fires again every :data:`REPEAT_SECONDS` of CPU until the guard is left, so a handler that C code
swallows (an exception raised inside a callback that the C code reports its own way, or inside a
``__del__``) is raised again a moment later.

Where it works: signals are delivered to a process's main thread, so the guard is armed only when
it is entered on the main thread of a platform with ``setitimer`` (gunicorn's sync workers; the
Flask test client called from the main thread). Elsewhere (a threaded server, Windows) it does
nothing and only the budgets and gunicorn's worker timeout stand. A guard entered while another
is active does nothing (the outer deadline governs). A ``SIGPROF`` handler and timer that were
there before (a sampling profiler) are put back when the guard is left, the timer with the CPU
time the request used taken off. Where there was none (``SIG_DFL``, which would end the process),
the guard's handler stays installed between requests and does nothing while no guard is active
(a guard costs about 8 us of CPU a request; installing and removing the handler each time made it
16 us).

A long single C operation (one multiplication of two integers of millions of digits) is not
interrupted: the signal is handled when it returns. The budgets keep such operations out.

Pure Python, no Flask.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from typing import Any, Mapping, Optional

DEADLINE_ENV = "SPECDEC_CPU_DEADLINE"
"""The environment variable of the deadline, in seconds of CPU (a decimal such as ``10`` or
``2.5``)."""
TIMEOUT_ENV = "SPECDEC_TIMEOUT"
"""gunicorn's worker timeout (:mod:`specdec_service.gunicorn_conf`), which the deadline must stay below."""
DEFAULT_DEADLINE = 10.0
"""Seconds of CPU one request may use (default): five times the 2 s the budgets aim at, a third
of gunicorn's 30 s worker timeout."""
DEFAULT_TIMEOUT = 30
"""gunicorn's worker timeout when ``SPECDEC_TIMEOUT`` is unset (seconds)."""
REPEAT_SECONDS = 0.05
"""After the deadline, the timer fires again every 50 ms of CPU until the guard is left."""


class ComputeDeadline(BaseException):
    """The request used more than its CPU deadline: its work is stopped (HTTP 503, problem type
    ``compute-deadline``). ``seconds`` is the deadline. A ``BaseException``, so that no ``except
    Exception`` in the work can swallow it; only the HTTP layer catches it."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"the request used more than {seconds:g} s of CPU time")


def deadline_setting(environ: Mapping[str, str]) -> float:
    """The deadline ``environ`` asks for: ``SPECDEC_CPU_DEADLINE`` (seconds of CPU, a positive
    decimal), :data:`DEFAULT_DEADLINE` when unset or empty (half the worker timeout when that is
shorter than 20 s). It must be below gunicorn's worker
    timeout (``SPECDEC_TIMEOUT``, default 30 s), or a worker would be killed first. Raises
    ``ValueError`` with a one-line message otherwise."""
    timeout = _timeout(environ)
    text = environ.get(DEADLINE_ENV) or ""
    if not text:
        return min(DEFAULT_DEADLINE, timeout / 2)
    try:
        seconds = float(text) if text.isascii() else math.nan
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < timeout:
        raise ValueError(f"{DEADLINE_ENV} must be a number of seconds above 0 and below the worker timeout "
                         f"({TIMEOUT_ENV}, {timeout} s), not {text!r}")
    return seconds


def _timeout(environ: Mapping[str, str]) -> int:
    text = environ.get(TIMEOUT_ENV) or ""
    return int(text) if text.isascii() and text.isdigit() and int(text) > 0 else DEFAULT_TIMEOUT


_ACTIVE = threading.local()
"""Whether a guard is armed on this thread (``_ACTIVE.seconds``: its deadline)."""


def _expire(_signum: int, _frame: Any) -> None:
    """The ``SIGPROF`` handler while a guard is active: raise :class:`ComputeDeadline` in the
    interrupted code (a signal that arrives after the guard is left does nothing)."""
    seconds = getattr(_ACTIVE, "seconds", None)
    if seconds is not None:
        raise ComputeDeadline(seconds)


def guard_possible() -> bool:
    """Whether :class:`cpu_deadline` can arm here: ``setitimer`` exists and this is the main thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class cpu_deadline:
    """Context manager: raise :class:`ComputeDeadline` in the code it runs once the process has
    used ``seconds`` more seconds of CPU time (``None``: no deadline). See the module docstring
    for where it arms and how it nests."""

    def __init__(self, seconds: Optional[float]):
        self.seconds = seconds
        self._armed = False
        self._previous: Any = None
        self._previous_timer = (0.0, 0.0)
        self._start = 0.0

    def __enter__(self) -> "cpu_deadline":
        if self.seconds is None or getattr(_ACTIVE, "seconds", None) is not None or not guard_possible():
            return self
        self._start = time.process_time()
        previous = signal.getsignal(signal.SIGPROF)
        if previous is not _expire:
            signal.signal(signal.SIGPROF, _expire)
            if previous not in (signal.SIG_DFL, None):  # someone's handler: put back on the way out
                self._previous = previous
        _ACTIVE.seconds = self.seconds
        self._armed = True
        self._previous_timer = signal.setitimer(signal.ITIMER_PROF, self.seconds, REPEAT_SECONDS)
        return self

    def __exit__(self, *_exc: Any) -> None:
        if not self._armed:
            return
        signal.setitimer(signal.ITIMER_PROF, 0)  # first: no signal after this
        self._armed = False
        _ACTIVE.seconds = None
        if self._previous is not None:
            signal.signal(signal.SIGPROF, self._previous)
            self._previous = None
        remaining, interval = self._previous_timer
        if remaining or interval:  # someone else's timer: put it back, less the CPU this guard used
            used = time.process_time() - self._start
            signal.setitimer(signal.ITIMER_PROF, max(remaining - used, 1e-6) if remaining else interval, interval)


def configured_deadline(config: Mapping[str, Any]) -> Optional[float]:
    """The deadline an app's config holds (``CPU_DEADLINE``: seconds, or ``None`` for none),
    else the environment's (:func:`deadline_setting` of ``os.environ``)."""
    if "CPU_DEADLINE" in config:
        return config["CPU_DEADLINE"]
    return deadline_setting(os.environ)
