"""Errors raised by the decoding engine.

The engine never raises a bare ``ValueError`` for bad input: it raises
:class:`InvalidInput`, which lists every fault with the path of the field at
fault, so that the HTTP layer can turn it into an RFC 9457 problem document
without knowing anything about the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote
from typing import Iterable, Sequence, Union

PathPart = Union[str, int]
Path = tuple[PathPart, ...]


@dataclass(frozen=True)
class Fault:
    """One invalid field: ``path`` into the caller's JSON (keys and list
    indices, outermost first) and ``message``, a sentence that says why."""

    path: Path
    message: str


class SpecdecError(Exception):
    """Base class of every error the engine raises on purpose."""


MAX_ERRORS = 20
"""A refusal names at most this many faults (the problem document's ``errors``); the checks
stop formatting faults past it and only count them (``InvalidInput.count``)."""


class InvalidInput(SpecdecError):
    """Input that is well formed but breaks a rule (HTTP 422).

    ``faults`` lists bad fields (the checks list at most about :data:`MAX_ERRORS` of them);
    ``count`` is how many faults were found in all (at least ``len(faults)``: a check past its
    cap counts a fault without writing it); ``more`` is ``count - len(faults)``.
    ``str(error)`` joins the first :data:`MAX_ERRORS`.
    """

    def __init__(self, faults: Iterable[Fault], count: int = 0):
        self.faults: tuple[Fault, ...] = tuple(faults)
        self.count = max(count, len(self.faults))
        super().__init__("; ".join(f"{pointer(f.path)}: {f.message}" for f in self.faults[:MAX_ERRORS]))

    @property
    def more(self) -> int:
        """Faults counted beyond those listed in :attr:`faults`."""
        return self.count - len(self.faults)

    @classmethod
    def at(cls, path: Sequence[PathPart], message: str) -> "InvalidInput":
        """A single fault at ``path``."""
        return cls([Fault(tuple(path), message)])

    def prefixed(self, *prefix: PathPart) -> "InvalidInput":
        """The same faults with ``prefix`` put before each path (used when a
        value is validated on its own and then reported inside a larger body)."""
        return InvalidInput((Fault(tuple(prefix) + f.path, f.message) for f in self.faults), self.count)

    @classmethod
    def joined(cls, errors: Iterable["InvalidInput"]) -> "InvalidInput":
        """One error with the faults of ``errors`` in order (and the sum of their counts)."""
        errors = list(errors)
        return cls([f for e in errors for f in e.faults], sum(e.count for e in errors))


class SessionDone(SpecdecError):
    """A block was asked of a session that has ended (HTTP 409).

    ``reason`` is ``"limit"`` or ``"eos"`` (SPEC section 6).
    """

    def __init__(self, reason: str):
        self.reason = reason
        why = "the committed output reached the limit" if reason == "limit" else "an EOS token was committed"
        super().__init__(f"the session is done: {why} (SPEC section 6); start a new session")


_FRAGMENT_SAFE = "!$&'()*+,;=:@-._~"
"""What RFC 3986's ``fragment`` allows unencoded besides letters, digits and ``/`` and ``?``
(``unreserved``, ``sub-delims``, ``:`` and ``@``); ``/`` separates the tokens."""


def pointer(path: Sequence[PathPart]) -> str:
    """The RFC 6901 JSON Pointer of ``path`` as a URI fragment (section 6), e.g.
    ``#/config/width``: ``~`` and ``/`` in a token as ``~0`` and ``~1``, then every character
    a fragment does not allow percent-encoded as UTF-8 (a label ``"sp ace"`` is ``sp%20ace``,
    ``"é"`` is ``%C3%A9``, ``"%"`` is ``%25``)."""
    escaped = (quote(str(p).replace("~", "~0").replace("/", "~1"), safe=_FRAGMENT_SAFE + "?") for p in path)
    return "#/" + "/".join(escaped) if path else "#"
