"""Progress bars on standard error for the ``specdec`` command's long tasks.

``specdec grade --exec`` (one run of the program per config of a suite, then the grading),
``specdec grade FILE...`` (batches of traces) and ``specdec replay`` (one request per block)
report their progress through a callback ``progress(stage, done, total)``; :class:`Bars` is
that callback for the command line. It draws with tqdm, which is the ``cli`` extra
(``pip install './client[cli]'`` from the repository's root): the SDK itself needs only requests, and without tqdm
the command works the same with no bar.

A bar is drawn only where a person watches: when standard error is a terminal (and ``TERM``
is not ``dumb``), or when ``FORCE_COLOR`` is set to a non-empty value (force-color.org: CI
logs that render a terminal's output); never when output is piped or captured otherwise.
``NO_COLOR`` (no-color.org) and ``--color`` decide only whether the bar is coloured. A bar
appears after :data:`DELAY` seconds, so a task that ends sooner prints nothing, and is erased
when its stage ends, so the terminal keeps only the command's own output.
"""

from __future__ import annotations

import importlib
import os
from typing import IO, Any, Callable, Optional

Progress = Callable[[str, int, int], None]
"""A progress callback: ``progress(stage, done, total)``, ``done`` of ``total`` units of the
``stage`` finished (``"run"``: runs of a program; ``"grade"``: traces graded; ``"replay"``:
blocks replayed; ``"sample"``: sessions a Python sampler has returned or a program has
printed so far, all configs together;
``"samples"``: configs graded by their samples). It is called with ``done == 0`` when a stage starts."""

DELAY = 1.0
"""Seconds before a bar is drawn: a task that ends sooner shows none."""
MIN_INTERVAL = 0.1
"""The bar is redrawn at most this often (seconds)."""
STAGES = {"run": ("running", "config"), "grade": ("grading", "trace"), "replay": ("replaying", "block"),
          "sample": ("sampling", "sample"), "samples": ("grading samples of", "config")}
"""Each stage's label and unit."""


def forced() -> bool:
    """Whether ``FORCE_COLOR`` is set to a non-empty value (force-color.org)."""
    return bool(os.environ.get("FORCE_COLOR"))


def wanted(stream: IO[str]) -> bool:
    """Whether to draw progress on ``stream``: a terminal (``TERM`` not ``dumb``), or
    ``FORCE_COLOR`` set (see the module docstring)."""
    if forced():
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def load_tqdm() -> Optional[Any]:
    """The ``tqdm.tqdm`` class, or None when the ``cli`` extra is not installed."""
    try:
        return importlib.import_module("tqdm").tqdm
    except ImportError:
        return None


class Bars:
    """The command line's :data:`Progress` callback: one tqdm bar per stage on ``stream``
    (coloured when ``color``), or nothing at all when :func:`wanted` says no or tqdm is
    missing. Use as a context manager (the last bar is closed on exit)."""

    def __init__(self, stream: IO[str], color: bool = False):
        self.stream = stream
        self.color = color
        self.tqdm = load_tqdm() if wanted(stream) else None
        self.bar: Any = None
        self.stage = ""

    @property
    def active(self) -> bool:
        """Whether bars are drawn."""
        return self.tqdm is not None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.tqdm is None:
            return
        if self.bar is None or stage != self.stage:
            self.close()
            label, unit = STAGES.get(stage, (stage, "item"))
            self.stage = stage
            self.bar = self.tqdm(total=total, desc=label, unit=unit, file=self.stream, leave=False,
                                 delay=DELAY, mininterval=MIN_INTERVAL, dynamic_ncols=True,
                                 colour="green" if self.color else None)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        """Close (and erase) the current bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Bars":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
