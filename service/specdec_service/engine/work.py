"""A deterministic counter of the engine's exact arithmetic (the witness of the cost bound).

Exact rows make the engine's work grow with the size of its integers, not with the number of
tokens: a row of 17-digit decimals of order 1e-300 has a denominator of about 1,000 bits, and its
p^(1/T) (SPEC section 9.1) compares powers of such integers. The service bounds a request's cost
*before* any of that work (``specdec_service.budget.config_work``); this module lets the engine
count, while it works, what that bound claims to bound.

The unit is the **bit operation**: each big multiplication, division, root step, normalisation
or decimal conversion the engine performs charges the bit lengths of its operands
(:func:`charge`). The count is a function of the request alone (no clock), so a test can check
``counted <= estimated`` exactly. When nobody is measuring (:func:`counting` not active, every
request the service serves) :func:`charge` is one context-variable lookup and returns.

Use::

    from specdec_service.engine.work import counting
    with counting() as work:
        run(config)
    work.units        # bit operations the run performed
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional


class Work:
    """The bit operations counted so far in one :func:`counting` block: :attr:`units` (an int >= 0)."""

    __slots__ = ("units",)

    def __init__(self) -> None:
        self.units = 0


_CURRENT: ContextVar[Optional[Work]] = ContextVar("specdec_engine_work", default=None)


def charge(units: int) -> None:
    """Count ``units`` bit operations (a non-negative int) in the active :func:`counting` block;
    nothing when none is active."""
    work = _CURRENT.get()
    if work is not None:
        work.units += units


def measuring() -> bool:
    """Whether a :func:`counting` block is active (lets a caller skip computing a charge)."""
    return _CURRENT.get() is not None


@contextmanager
def counting() -> Iterator[Work]:
    """Count the engine's bit operations inside the ``with`` block; yields the :class:`Work`
    whose ``units`` grow as the engine works (nested blocks count separately)."""
    work = Work()
    token = _CURRENT.set(work)
    try:
        yield work
    finally:
        _CURRENT.reset(token)
