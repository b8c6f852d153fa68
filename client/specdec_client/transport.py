"""The HTTP transport of the SDK: one ``requests`` session, retries, problems.

A :class:`Transport` sends one request to a specdec service and gives back
the parsed JSON of a 2xx answer, or raises the SDK's exceptions
(:mod:`specdec_client.errors`): an :class:`~specdec_client.errors.APIError`
subclass per status carrying the RFC 9457 problem details
(:func:`problem_error`), :class:`~specdec_client.errors.ConnectionFailed`,
:class:`~specdec_client.errors.RequestTimedOut`, or
:class:`~specdec_client.errors.InvalidResponse` for a body that is not what
the route returns. It knows no route: the API groups
(:mod:`specdec_client.api`) do.

Retries. The service is stateless and deterministic: every route is a pure
function of its request (``POST /v1/step`` with the same state gives the same
block, byte for byte), so repeating a request after a failure cannot change
any result. All routes, ``POST`` included, are therefore idempotent and are
retried on connection errors and on 502/503/504, with exponential backoff,
through urllib3's :class:`~urllib3.util.Retry` mounted on the
``requests.Session`` (no hand-written loop). A read timeout is not retried:
a request that times out once would most likely time out again, and the
caller should hear about it after ``timeout`` seconds, not four times that.
"""

from __future__ import annotations

import html
import re
from http import HTTPStatus
from typing import Any, Callable, Mapping, Optional, TypeVar

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ReadTimeoutError
from urllib3.util.retry import Retry

from .errors import (
    APIError, ConnectionFailed, FieldError, InvalidRequestBody, InvalidResponse, RequestTimedOut, error_class,
)

T = TypeVar("T")

DEFAULT_URL = "http://localhost:8000"
"""Where ``specdec-service`` listens by default."""
RETRY_STATUSES = (502, 503, 504)
"""Statuses retried: a proxy or the server was momentarily unavailable."""


def make_retry(retries: int, backoff_factor: float) -> Retry:
    """The urllib3 :class:`Retry` policy of a :class:`Transport`.

    Up to ``retries`` retries of connection errors and of 502/503/504 answers,
    for ``GET`` and ``POST`` (idempotent here: see the module docstring),
    sleeping ``backoff_factor * 2 ** (n - 1)`` seconds before the n-th retry
    (urllib3's rule; urllib3 < 2 skips the first sleep). ``Retry-After`` is
    not obeyed, so the total wait stays bounded by ``(retries + 1) * timeout``
    plus the backoff. Read errors and timeouts are not retried. After the last
    retry the last 5xx answer is returned (and raised as
    :class:`~specdec_client.errors.ServerError` with its problem details).
    """
    options: dict[str, Any] = dict(total=retries, connect=retries, read=0, status=retries,
                                   backoff_factor=backoff_factor, status_forcelist=RETRY_STATUSES,
                                   raise_on_status=False, respect_retry_after_header=False)
    methods = frozenset({"GET", "POST"})
    try:
        return Retry(allowed_methods=methods, other=0, **options)
    except TypeError:
        # urllib3 < 1.26 spells allowed_methods `method_whitelist` and has no `other` counter
        # (other errors then count against `total` only); the name is passed in the mapping
        # because urllib3 2's Retry no longer has that parameter.
        legacy: dict[str, Any] = {**options, "method_whitelist": methods}
        return Retry(**legacy)


class Transport:
    """Requests to one specdec service.

    ``base_url``: the service's root (``http://host:port``, a path prefix
    allowed). ``timeout``: seconds (> 0) to wait for each attempt to connect
    and to answer; always set. ``session``: a ``requests.Session`` to use
    (one is created otherwise); a retrying adapter is mounted on it for
    ``base_url`` only. ``retries``: how many times a failed idempotent request
    is retried (0 to disable); ``backoff_factor``: seconds, see
    :func:`make_retry`. Raises ``ValueError`` for a bad argument.
    """

    def __init__(self, base_url: str = DEFAULT_URL, *, timeout: float = 10, session: Optional[requests.Session] = None,
                 retries: int = 3, backoff_factor: float = 0.25):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
        if not timeout or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.owns_session = session is None
        self.http = session if session is not None else requests.Session()
        self.http.mount(self.base_url + "/", HTTPAdapter(max_retries=make_retry(retries, backoff_factor)))

    def close(self) -> None:
        """Close the ``requests.Session`` if the transport created it."""
        if self.owns_session:
            self.http.close()

    def request(self, method: str, path: str, *, json: Any = None, params: Optional[Mapping[str, Any]] = None) -> Any:
        """Send one request and return the parsed JSON body of a 2xx answer.

        ``path`` starts with ``/``. Raises the SDK's exceptions (see the module docstring).
        """
        url = self.base_url + path
        try:
            response = self.http.request(method, url, json=json, params=params, timeout=self.timeout)
        except requests.exceptions.InvalidJSONError as error:  # a NaN: requests writes JSON with allow_nan=False
            raise InvalidRequestBody(url, str(error)) from None
        except requests.exceptions.Timeout:
            raise RequestTimedOut(url, self.timeout) from None
        except requests.exceptions.ConnectionError as error:
            # a read timeout that exhausted Retry(read=0) arrives wrapped in a ConnectionError
            if isinstance(getattr(error.args[0] if error.args else None, "reason", None), ReadTimeoutError):
                raise RequestTimedOut(url, self.timeout) from None
            raise ConnectionFailed(url, self._reason(error)) from None
        except requests.exceptions.RequestException as error:
            raise ConnectionFailed(url, str(error) or type(error).__name__) from None
        if response.status_code >= 400:
            raise problem_error(response, method)
        try:
            return response.json()
        except ValueError:
            kind = response.headers.get("Content-Type", "no Content-Type")
            raise InvalidResponse(url, f"HTTP {response.status_code} with a body that is not JSON ({kind})") from None

    def call(self, method: str, path: str, reader: Callable[[Any], T], *, json: Any = None,
             params: Optional[Mapping[str, Any]] = None) -> T:
        """:meth:`request`, then ``reader(body)`` (a typed record's
        ``from_dict``); a body ``reader`` cannot read (``KeyError``,
        ``TypeError``, ``ValueError``, ``AttributeError``) is an
        :class:`~specdec_client.errors.InvalidResponse`."""
        body = self.request(method, path, json=json, params=params)
        try:
            return reader(body)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise InvalidResponse(self.base_url + path,
                                  f"not the shape this route returns ({type(error).__name__}: {error})") from None

    def _reason(self, error: requests.exceptions.ConnectionError) -> str:
        """A short reason for a connection failure, e.g. ``Connection refused (after 3 retries)``."""
        cause: Any = error.args[0] if error.args else error
        cause = getattr(cause, "reason", cause)  # MaxRetryError -> the last error
        text = str(cause)
        marker = "Failed to establish a new connection: "
        if marker in text:
            text = re.sub(r"^\[Errno -?\d+\] ", "", text.split(marker, 1)[1]).rstrip(")'\"")
        return f"{text} (after {self.retries} retries)" if self.retries else text


EXCERPT_CHARS = 100
"""How much of an error body that is not a problem document :class:`APIError` keeps."""
_INVISIBLE = re.compile(r"<(head|script|style)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def excerpt(text: str, content_type: str = "", limit: int = EXCERPT_CHARS) -> str:
    """One line from an error body that is not a problem document: HTML
    (by ``content_type`` or a leading ``<``) without its tags, head, scripts
    and styles, entities decoded; whitespace collapsed to single spaces; at
    most ``limit`` characters, ``...`` marking a cut. ``""`` for a blank body."""
    text = text.lstrip()
    if "html" in content_type.lower() or text.startswith("<"):
        text = html.unescape(_TAG.sub(" ", _INVISIBLE.sub(" ", text)))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def problem_error(response: requests.Response, method: str = "") -> APIError:
    """The :class:`APIError` subclass for an HTTP error ``response``, with
    its RFC 9457 problem details when the body is JSON."""
    status = response.status_code
    problem: dict[str, Any] = {}
    try:
        body = response.json()
        if isinstance(body, dict):
            problem = body
    except ValueError:
        pass
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = response.reason or "Error"
    errors = tuple(
        FieldError(e.get("pointer"), str(e.get("detail", "")), parameter=e.get("parameter"))
        for e in problem.get("errors") or () if isinstance(e, Mapping)
    )
    detail = problem.get("detail")
    if detail is None and not any(key in problem for key in ("title", "errors")):
        # not a problem document (another server, a proxy's HTML page): a short, one-line excerpt
        detail = excerpt(response.text or "", response.headers.get("Content-Type", "")) or None
    return error_class(status)(
        status, str(problem.get("title") or phrase), None if detail is None else str(detail),
        type=str(problem.get("type", "about:blank")), errors=errors, problem=problem,
        method=method.upper(), url=response.url or "",
    )
