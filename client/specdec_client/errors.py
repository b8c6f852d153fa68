"""The exceptions of the SDK: one base, one subclass per kind of failure.

::

    SpecdecError
    ├── APIError                 the service answered with an HTTP error (RFC 9457 problem details)
    │   ├── BadRequest           400  malformed JSON or body
    │   ├── NotFound             404  no such route
    │   ├── MethodNotAllowed     405
    │   ├── SessionDone          409  a block asked of a finished session (SPEC section 6)
    │   ├── PayloadTooLarge      413
    │   ├── UnsupportedMediaType 415
    │   ├── InvalidInput         422  well-formed input that breaks a rule; ``errors`` names each field
    │   └── ServerError          5xx
    ├── ConnectionFailed         the service could not be reached (after the retries)
    ├── RequestTimedOut          no answer within the timeout
    ├── InvalidResponse          the service answered something that is not the expected JSON
    ├── InvalidRequestBody       a request not sent: its body cannot be JSON (a NaN; also a ValueError)
    ├── InvalidSettings          settings not sent: draft/seed missing or an unknown name (also a TypeError)
    └── TraceFormatError         a trace file that is not ``specdec-trace/1``

``str(error)`` is one readable line, suitable for a command line: each
field error said once, whitespace (newlines included) collapsed, and for an
error body that is not a problem document (another server's HTML page) a
short excerpt of its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


class SpecdecError(Exception):
    """Base class of every exception the SDK raises on purpose."""


@dataclass(frozen=True)
class FieldError:
    """One invalid field of a request: ``pointer`` is an RFC 6901 JSON
    Pointer as a URI fragment (``"#/config/width"``) into the body, or
    ``None`` for a query ``parameter`` (e.g. ``"count"``); ``detail`` says why."""

    pointer: Optional[str]
    detail: str
    parameter: Optional[str] = None

    @property
    def where(self) -> str:
        """The pointer, or ``?name`` for a query parameter."""
        return self.pointer if self.pointer is not None else f"?{self.parameter}"

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


class APIError(SpecdecError):
    """The service answered with an HTTP error status.

    Attributes (RFC 9457 problem details, when the body is
    ``application/problem+json``; otherwise ``title`` is the HTTP reason
    phrase and ``detail`` a one-line excerpt of the body, see
    :func:`specdec_client.transport.excerpt`): ``status`` (int), ``title``,
    ``detail``, ``type`` (URI or ``"about:blank"``), ``errors`` (tuple of
    :class:`FieldError`), ``problem`` (the whole body as a dict, or ``{}``),
    ``method`` and ``url`` of the request.
    """

    def __init__(self, status: int, title: str, detail: Optional[str] = None, *, type: str = "about:blank",
                 errors: tuple[FieldError, ...] = (), problem: Optional[Mapping[str, Any]] = None,
                 method: str = "", url: str = ""):
        self.status = status
        self.title = title
        self.detail = detail
        self.type = type
        self.errors = tuple(errors)
        self.problem = dict(problem or {})
        self.method = method
        self.url = url
        super().__init__(self._message())

    def _message(self) -> str:
        detail = _line(self.detail or "")
        head = f"HTTP {self.status} {_line(self.title)}"
        if detail:
            head += f": {detail}"
        # the service's detail usually names each field already ("#/config/width: why", "count: why")
        unsaid = [_line(str(e)) for e in self.errors if not _said(e, detail)]
        if unsaid:
            head += " [" + "; ".join(unsaid) + "]"
        if self.url:
            head += f" ({self._where()})"
        return head

    def _where(self) -> str:
        return f"{self.method} {self.url}" if self.method else self.url

    def describe(self) -> str:
        """A multi-line description: the status line, then one line per field error."""
        lines = [f"HTTP {self.status} {self.title}" + (f": {self.detail}" if self.detail else "")]
        lines += [f"  {e}" for e in self.errors]
        if self.url:
            lines.append(f"  ({self._where()})")
        return "\n".join(lines)


def _line(text: str) -> str:
    """``text`` on one line: every run of whitespace (newlines included) becomes one space."""
    return " ".join(str(text).split())


def _said(error: FieldError, detail: str) -> bool:
    """Whether ``detail`` already names ``error``: its pointer or parameter, then its detail."""
    names = {error.where, error.pointer or error.parameter or ""}
    return any(_line(f"{name}: {error.detail}") in detail for name in names if name)


class BadRequest(APIError):
    """HTTP 400: the body is not valid JSON or not the expected shape."""


class NotFound(APIError):
    """HTTP 404: no such route (is ``base_url`` the service's root?)."""


class MethodNotAllowed(APIError):
    """HTTP 405."""


class SessionDone(APIError):
    """HTTP 409: a block was asked of a session that is done (SPEC section 6)."""


class PayloadTooLarge(APIError):
    """HTTP 413: the body exceeds the service's documented size bound."""


class UnsupportedMediaType(APIError):
    """HTTP 415: the body was not sent as ``application/json``."""


class InvalidInput(APIError):
    """HTTP 422: well-formed input that breaks a rule; ``errors`` names each field."""


class ServerError(APIError):
    """HTTP 5xx (after the retries, for 502/503/504)."""


STATUS_ERRORS: dict[int, type[APIError]] = {
    400: BadRequest, 404: NotFound, 405: MethodNotAllowed, 409: SessionDone,
    413: PayloadTooLarge, 415: UnsupportedMediaType, 422: InvalidInput,
}
"""The subclass raised for each status; other 5xx give :class:`ServerError`,
other 4xx :class:`APIError`."""


def error_class(status: int) -> type[APIError]:
    """The :class:`APIError` subclass for an HTTP ``status``."""
    if status in STATUS_ERRORS:
        return STATUS_ERRORS[status]
    return ServerError if status >= 500 else APIError


class ConnectionFailed(SpecdecError):
    """The service could not be reached at ``url`` (refused, DNS, reset),
    after the configured retries. ``url`` and the underlying ``reason``."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"cannot reach the specdec service at {url}: {reason}")


class RequestTimedOut(SpecdecError):
    """No complete answer from ``url`` within ``timeout`` seconds."""

    def __init__(self, url: str, timeout: float):
        self.url = url
        self.timeout = timeout
        super().__init__(f"the specdec service at {url} did not answer within {timeout:g} s")


class InvalidResponse(SpecdecError):
    """The service answered 2xx with a body that is not the expected JSON
    (wrong server, or an incompatible version). ``url`` and ``reason``."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"unexpected answer from {url}: {reason}")


class InvalidRequestBody(SpecdecError, ValueError):
    """A request the SDK could not write as JSON, so nothing was sent: a NaN or an infinity
    (RFC 8259 has neither; Python's ``json`` reads and writes them by default, so a trace
    file or a program's output may hold one) or a value JSON cannot hold. ``url`` and
    ``reason``. Also a ``ValueError``."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"not sent to {url}: the request body is not JSON ({reason}); RFC 8259 has no NaN or "
                         "Infinity")


class InvalidSettings(SpecdecError, TypeError):
    """Session settings the SDK refuses before sending anything: ``draft``
    or ``seed`` missing, or a name that is not a setting (SPEC section 8).
    Raised by ``Client.run``, ``Client.session``, ``Session.configure`` and
    the setting properties, ``as_config`` and ``Config.replace``. It is also
    a ``TypeError``, like a call with a missing or unexpected keyword. The
    settings' values are checked by the service (:class:`InvalidInput`)."""


class TraceFormatError(SpecdecError):
    """A trace that is not a readable ``specdec-trace/1`` document."""
