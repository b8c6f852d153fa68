"""Argument types shared by the ``specdec`` subcommands (argparse ``type=``
callables that turn a bad value into argparse's one-line usage error)."""

from __future__ import annotations

import argparse
import math
from decimal import Decimal
from typing import Callable, Optional


def integer(low: int, high: Optional[int] = None) -> Callable[[str], int]:
    """An integer in ``low..high`` (no upper bound when ``high`` is None)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"{low} or more" if high is None else f"{low} to {high}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value
    return parse


def positive_number(text: str) -> float:
    """A finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def finite_number(text: str) -> float:
    """A finite number (its bounds are the service's to check: it names the field and the bound).
    The service reads a number as the decimal it is written as (SPEC 1, 9), and the command sends
    ``float(text)``, whose shortest repr is the decimal ``0.8`` for ``0.8``: a number that float64
    cannot write back as its own decimal (``1e-400`` would be sent as ``0.0``, greedy decoding) is
    a usage error naming the decimal that would be sent."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    if Decimal(text.strip()) != Decimal(repr(value)):
        raise argparse.ArgumentTypeError(f"{text} is not a float64's decimal: it would be sent as {value!r}; "
                                         "the service reads the decimal written, so write that or another number")
    return value


def integer_list(text: str) -> list[int]:
    """A comma-separated list of integers, ``"2,1"`` -> ``[2, 1]`` (a tree's branching, SPEC
    section 12; its bounds are the service's to check)."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None


def modes_of(args: argparse.Namespace) -> Optional[list[str]]:
    """``--modes A,B`` (of ``specdec grade``, traces or samples) as ``["A", "B"]`` (``None``
    without the option)."""
    text = getattr(args, "modes", None)
    return None if text is None else [m.strip() for m in text.split(",") if m.strip()]
