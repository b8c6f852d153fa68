"""Per-request CPU and wall-clock deadlines: whatever a cost model misses, no request holds a worker for long.

The budgets (:mod:`specdec_service.budget`) refuse a request whose estimated cost is too high
before any work starts. This module is the second line: :class:`cpu_deadline` arms the
process's CPU-time interval timer (``setitimer(ITIMER_PROF)``: user plus system CPU time, the
figure ``/proc/<pid>/stat`` reports) for the duration of one request; when the request has used
``seconds`` of CPU, the timer's signal (``SIGPROF``) raises :class:`ComputeDeadline` in the
request's code, wherever it is. The HTTP layer turns it into a 503 problem document (type
``compute-deadline``, :mod:`specdec_service.api.problems`) and the worker serves the next request.

gunicorn's worker timeout counts the clock, not CPU time, and on a loaded machine a request's CPU
time runs far slower than the clock (6 s of CPU took 30 s at a load of 12 on 2 cores). So the
guard also arms the real-time timer (``setitimer(ITIMER_REAL)``, ``SIGALRM``, which gunicorn's
sync worker and arbiter do not use) at a wall-clock deadline below the timeout
(``SPECDEC_WALL_DEADLINE``, :func:`wall_deadline_setting`); whichever fires first stops the
request, and :class:`ComputeDeadline` says which (``clock``).

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
WALL_DEADLINE_ENV = "SPECDEC_WALL_DEADLINE"
"""The environment variable of the wall-clock deadline, in seconds (a decimal)."""
WALL_TIMEOUT_SHARE = 2 / 3
"""The wall-clock deadline's default, as a share of gunicorn's worker timeout."""
DEFAULT_TIMEOUT = 30
"""gunicorn's worker timeout when ``SPECDEC_TIMEOUT`` is unset (seconds)."""
REPEAT_SECONDS = 0.05
"""After the deadline, the timer fires again every 50 ms of CPU until the guard is left."""


class ComputeDeadline(BaseException):
    """The request used more than its CPU deadline (``clock`` ``"cpu"``) or its wall-clock
    deadline (``clock`` ``"wall"``): its work is stopped (HTTP 503, problem type
    ``compute-deadline``). ``seconds`` is the deadline that was hit. A ``BaseException``, so that
    no ``except Exception`` in the work can swallow it; only the HTTP layer catches it."""

    def __init__(self, seconds: float, clock: str = "cpu"):
        self.seconds, self.clock = seconds, clock
        what = "CPU time" if clock == "cpu" else "wall-clock time"
        super().__init__(f"the request used more than {seconds:g} s of {what}")


def _seconds_below_timeout(environ: Mapping[str, str], name: str, default: float) -> float:
    """The positive decimal ``environ[name]`` (seconds), ``default`` when unset or empty; it must
    be below gunicorn's worker timeout (``SPECDEC_TIMEOUT``, default 30 s). Raises ``ValueError``
    with a one-line message otherwise."""
    timeout = _timeout(environ)
    text = environ.get(name) or ""
    if not text:
        return default
    try:
        seconds = float(text) if text.isascii() else math.nan
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < timeout:
        raise ValueError(f"{name} must be a number of seconds above 0 and below the worker timeout "
                         f"({TIMEOUT_ENV}, {timeout} s), not {text!r}")
    return seconds


def deadline_setting(environ: Mapping[str, str]) -> float:
    """The CPU deadline ``environ`` asks for: ``SPECDEC_CPU_DEADLINE`` (seconds of CPU, a
    positive decimal), :data:`DEFAULT_DEADLINE` when unset or empty (half the worker timeout
    when that is shorter). It must be below gunicorn's worker timeout (``SPECDEC_TIMEOUT``,
    default 30 s), or a worker would be killed first. Raises ``ValueError`` with a one-line
    message otherwise."""
    return _seconds_below_timeout(environ, DEADLINE_ENV, min(DEFAULT_DEADLINE, _timeout(environ) / 2))


def wall_deadline_setting(environ: Mapping[str, str]) -> float:
    """The wall-clock deadline ``environ`` asks for: ``SPECDEC_WALL_DEADLINE`` (seconds, a
    positive decimal), :data:`WALL_TIMEOUT_SHARE` of the worker timeout when unset or empty
    (20 s of gunicorn's default 30 s). Below the worker timeout, as the CPU deadline; on a loaded
    machine a request's CPU time runs slower than the clock (6 s of CPU took 30 s at a load of 12
    on 2 cores), so only a wall-clock deadline keeps gunicorn from killing the worker. Raises
    ``ValueError`` with a one-line message otherwise."""
    return _seconds_below_timeout(environ, WALL_DEADLINE_ENV, _timeout(environ) * WALL_TIMEOUT_SHARE)


def _timeout(environ: Mapping[str, str]) -> int:
    text = environ.get(TIMEOUT_ENV) or ""
    return int(text) if text.isascii() and text.isdigit() and int(text) > 0 else DEFAULT_TIMEOUT


_ACTIVE = threading.local()
"""Whether a guard is armed on this thread (``_ACTIVE.seconds``: its CPU deadline, ``_ACTIVE.wall``
its wall-clock one)."""


def _expire(_signum: int, _frame: Any) -> None:
    """The ``SIGPROF`` handler while a guard is active: raise :class:`ComputeDeadline` in the
    interrupted code (a signal that arrives after the guard is left does nothing)."""
    seconds = getattr(_ACTIVE, "seconds", None)
    if seconds is not None:
        raise ComputeDeadline(seconds, "cpu")


def _expire_wall(_signum: int, _frame: Any) -> None:
    """The ``SIGALRM`` handler while a guard is active: as :func:`_expire`, for the wall clock."""
    seconds = getattr(_ACTIVE, "wall", None)
    if seconds is not None:
        raise ComputeDeadline(seconds, "wall")


def guard_possible() -> bool:
    """Whether :class:`cpu_deadline` can arm here: ``setitimer`` exists and this is the main thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class _Clock:
    """One interval timer of a guard: ``which`` (``ITIMER_PROF`` or ``ITIMER_REAL``), its signal,
    its handler and how its elapsed time is read (``time.process_time`` or ``time.monotonic``)."""

    def __init__(self, which: int, signum: int, handler: Any, now: Any) -> None:
        self.which, self.signum, self.handler, self.now = which, signum, handler, now
        self.previous: Any = None
        self.previous_timer = (0.0, 0.0)
        self.start = 0.0

    def arm(self, seconds: float) -> None:
        """Install the handler (keeping a handler that was there to put back) and start the timer."""
        self.start = self.now()
        previous = signal.getsignal(self.signum)
        if previous is not self.handler:
            signal.signal(self.signum, self.handler)
            if previous not in (signal.SIG_DFL, None):  # someone's handler: put back on the way out
                self.previous = previous
        self.previous_timer = signal.setitimer(self.which, seconds, REPEAT_SECONDS)

    def stop(self) -> None:
        """Stop the timer (first: no signal after this), then put back what was there before."""
        signal.setitimer(self.which, 0)

    def restore(self) -> None:
        """Put back a handler and timer that were there before :meth:`arm`, the timer less the
        time this guard used."""
        if self.previous is not None:
            signal.signal(self.signum, self.previous)
            self.previous = None
        remaining, interval = self.previous_timer
        if remaining or interval:
            used = self.now() - self.start
            signal.setitimer(self.which, max(remaining - used, 1e-6) if remaining else interval, interval)


class cpu_deadline:
    """Context manager: raise :class:`ComputeDeadline` in the code it runs once the process has
    used ``seconds`` more seconds of CPU time (``None``: no CPU deadline), or once ``wall`` more
    seconds have passed on the clock (``None``: no wall-clock deadline; ``ITIMER_REAL`` and
    ``SIGALRM``, which gunicorn's sync worker does not use). See the module docstring for where
    it arms and how it nests."""

    def __init__(self, seconds: Optional[float], wall: Optional[float] = None):
        self.seconds, self.wall = seconds, wall
        self._armed: list[_Clock] = []

    def __enter__(self) -> "cpu_deadline":
        if self.seconds is None and self.wall is None:
            return self
        if _active() or not guard_possible():
            return self
        _ACTIVE.seconds, _ACTIVE.wall = self.seconds, self.wall
        if self.seconds is not None:
            self._armed.append(_Clock(signal.ITIMER_PROF, signal.SIGPROF, _expire, time.process_time))
            self._armed[-1].arm(self.seconds)
        if self.wall is not None:
            self._armed.append(_Clock(signal.ITIMER_REAL, signal.SIGALRM, _expire_wall, time.monotonic))
            self._armed[-1].arm(self.wall)
        return self

    def __exit__(self, *_exc: Any) -> None:
        if not self._armed:
            return
        for clock in self._armed:
            clock.stop()
        _ACTIVE.seconds = _ACTIVE.wall = None
        for clock in self._armed:
            clock.restore()
        self._armed = []


def _active() -> bool:
    """Whether a guard is armed on this thread."""
    return getattr(_ACTIVE, "seconds", None) is not None or getattr(_ACTIVE, "wall", None) is not None


def configured_deadline(config: Mapping[str, Any]) -> Optional[float]:
    """The CPU deadline an app's config holds (``CPU_DEADLINE``: seconds, or ``None`` for none),
    else the environment's (:func:`deadline_setting` of ``os.environ``)."""
    if "CPU_DEADLINE" in config:
        return config["CPU_DEADLINE"]
    return deadline_setting(os.environ)


def configured_wall_deadline(config: Mapping[str, Any]) -> Optional[float]:
    """The wall-clock deadline an app's config holds (``WALL_DEADLINE``: seconds, or ``None`` for
    none), else the environment's (:func:`wall_deadline_setting` of ``os.environ``)."""
    if "WALL_DEADLINE" in config:
        return config["WALL_DEADLINE"]
    return wall_deadline_setting(os.environ)
