"""The HTTP client: one method per route of the specdec service.

>>> from specdec_client import Client
>>> client = Client("http://localhost:8000")
>>> trace = client.run(draft="biased", seed=1)          # doctest: +SKIP
>>> trace.output                                          # doctest: +SKIP
('A', 'C', ...)

The client is thin: HTTP and types only. Every decoding decision is the
service's; the SDK sends states and reads back what the service computed.

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
from urllib.parse import quote
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ReadTimeoutError
from urllib3.util.retry import Retry

from .errors import (
    APIError, ConnectionFailed, FieldError, InvalidResponse, RequestTimedOut, error_class,
)
from .session import Session
from .traces import ReplayReport, replay
from .types import (
    Config, Draw, Health, ModelInfo, Proposal, State, StepResult, Trace, as_config, tokens_of,
)

DEFAULT_URL = "http://localhost:8000"
"""Where ``specdec-service`` listens by default."""
RETRY_STATUSES = (502, 503, 504)
"""Statuses retried: a proxy or the server was momentarily unavailable."""

StateLike = Union[State, Config, Mapping[str, Any]]
"""A session state: a :class:`State`, its JSON form, or a :class:`Config`
(the empty session of those settings)."""


def make_retry(retries: int, backoff_factor: float) -> Retry:
    """The urllib3 :class:`Retry` policy of a :class:`Client`.

    Up to ``retries`` retries of connection errors and of 502/503/504 answers,
    for ``GET`` and ``POST`` (idempotent here: see the module docstring),
    sleeping ``backoff_factor * 2 ** (n - 1)`` seconds before the n-th retry
    (urllib3's rule; urllib3 < 2 skips the first sleep). ``Retry-After`` is
    not obeyed, so the total wait stays bounded by ``(retries + 1) * timeout``
    plus the backoff. Read errors and timeouts are not retried. After the last
    retry the last 5xx answer is returned (and raised as
    :class:`~specdec_client.errors.ServerError` with its problem details).
    """
    options = dict(total=retries, connect=retries, read=0, status=retries, other=0,
                   backoff_factor=backoff_factor, status_forcelist=RETRY_STATUSES,
                   raise_on_status=False, respect_retry_after_header=False)
    methods = frozenset({"GET", "POST"})
    try:
        return Retry(allowed_methods=methods, **options)
    except TypeError:  # urllib3 < 1.26 spells it method_whitelist
        return Retry(method_whitelist=methods, **options)


class Client:
    """A client of one specdec service.

    ``base_url``: the service's root (``http://host:port``, a path prefix
    allowed). ``timeout``: seconds (> 0) to wait for each attempt to connect
    and to answer; always set. ``session``: a ``requests.Session`` to use
    (one is created otherwise); a retrying adapter is mounted on it for
    ``base_url`` only. ``retries``: how many times a failed idempotent request
    is retried (0 to disable); ``backoff_factor``: seconds, see
    :func:`make_retry`.

    Every method raises :class:`~specdec_client.errors.APIError` (a subclass
    per status, carrying the problem details) for an HTTP error,
    :class:`~specdec_client.errors.ConnectionFailed`,
    :class:`~specdec_client.errors.RequestTimedOut`, or
    :class:`~specdec_client.errors.InvalidResponse` for a body that is not
    what the route returns. A client can be used as a context manager
    (closing the session it created).
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
        self._owns_session = session is None
        self.http = session if session is not None else requests.Session()
        self.http.mount(self.base_url + "/", HTTPAdapter(max_retries=make_retry(retries, backoff_factor)))

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, timeout={self.timeout!r}, retries={self.retries!r})"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the ``requests.Session`` if the client created it."""
        if self._owns_session:
            self.http.close()

    # ------------------------------------------------------------ transport

    def request(self, method: str, path: str, *, json: Any = None, params: Optional[Mapping] = None) -> Any:
        """Send one request and return the parsed JSON body of a 2xx answer.

        ``path`` starts with ``/``. Raises the SDK's exceptions (see the class).
        """
        url = self.base_url + path
        try:
            response = self.http.request(method, url, json=json, params=params, timeout=self.timeout)
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

    def _reason(self, error: requests.exceptions.ConnectionError) -> str:
        """A short reason for a connection failure, e.g. ``Connection refused (after 3 retries)``."""
        cause: Any = error.args[0] if error.args else error
        cause = getattr(cause, "reason", cause)  # MaxRetryError -> the last error
        text = str(cause)
        marker = "Failed to establish a new connection: "
        if marker in text:
            text = re.sub(r"^\[Errno -?\d+\] ", "", text.split(marker, 1)[1]).rstrip(")'\"")
        return f"{text} (after {self.retries} retries)" if self.retries else text

    def _parse(self, path: str, reader, body: Any):
        try:
            return reader(body)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise InvalidResponse(self.base_url + path, f"not the shape this route returns ({type(error).__name__}: {error})") from None

    def _post(self, path: str, body: Any, reader):
        return self._parse(path, reader, self.request("POST", path, json=body))

    # ------------------------------------------------------------ routes

    def health(self) -> Health:
        """``GET /health``: ``Health(status="ok", version=...)``."""
        return self._parse("/health", Health.from_dict, self.request("GET", "/health"))

    def models(self) -> list[ModelInfo]:
        """``GET /v1/models``: the built-in models (SPEC section 1), each with
        its name, role, vocabulary and rows."""
        body = self.request("GET", "/v1/models")
        return self._parse("/v1/models", lambda b: [ModelInfo.from_dict(m) for m in b["models"]], body)

    def draws(self, seed: int, position: int = 0, count: int = 1) -> list[Draw]:
        """``GET /v1/draws``: ``count`` (1-4096) draws of ``seed`` from
        ``position`` (SPEC section 2), each ``Draw(position, u, hex)``."""
        params = {"seed": seed, "position": position, "count": count}
        body = self.request("GET", "/v1/draws", params=params)
        return self._parse("/v1/draws", lambda b: [Draw.from_dict(d) for d in b["draws"]], body)

    def draft(self, state: StateLike) -> Proposal:
        """``POST /v1/draft``: the uncommitted proposal of the next block of
        ``state`` (SPEC section 4.1). Nothing is committed.
        Raises :class:`~specdec_client.errors.SessionDone` for an ended session."""
        return self._post("/v1/draft", state_body(state), Proposal.from_dict)

    def verify(self, state: StateLike, proposal: Union[Proposal, Sequence[str]]) -> StepResult:
        """``POST /v1/verify``: verify ``proposal`` (a :class:`Proposal` or
        token labels: 1..min(width, limit - committed), none when
        autoregressive) in ``state`` and commit the block (SPEC 4.2-4.4).
        Raises :class:`~specdec_client.errors.InvalidInput` for a proposal the
        rules refuse, :class:`~specdec_client.errors.SessionDone` when done."""
        body = {"state": state_body(state), "proposal": {"tokens": tokens_of(proposal)}}
        return self._post("/v1/verify", body, StepResult.from_dict)

    def step(self, state: StateLike) -> StepResult:
        """``POST /v1/step``: draft and verify the next block of ``state``;
        returns the block, the next state and ``done``."""
        return self._post("/v1/step", state_body(state), StepResult.from_dict)

    def run(self, config: Union[Config, Mapping, None] = None, **settings: Any) -> Trace:
        """``POST /v1/runs``: a whole session from the empty prefix to its end
        (the ``specdec-trace/1`` trace). Settings as a :class:`Config`, a
        mapping and/or keywords (``draft`` and ``seed`` required)."""
        body = {"config": as_config(config, **settings).to_dict()}
        return self._post("/v1/runs", body, Trace.from_dict)

    # ------------------------------------------------------------ grading (issue 5)

    def grade(self, trace: Union[Trace, Mapping]) -> dict:
        """``POST /v1/grade`` with one trace: the grading report as a dict
        (``passed``, ``score``, ``checks``, ``first_divergence``,
        ``diagnosis``, ``reference``; see ``/work/notes/grade-contract.md``)."""
        return self.request("POST", "/v1/grade", json=_trace_body(trace))

    def grade_many(self, traces: Iterable[Union[Trace, Mapping]]) -> dict:
        """``POST /v1/grade`` with ``{"traces": [...]}`` (1-1000 traces):
        ``{"reports": [...], "summary": {...}}``, reports in request order."""
        return self.request("POST", "/v1/grade", json={"traces": [_trace_body(t) for t in traces]})

    def grade_distribution(self, **payload: Any) -> dict:
        """``POST /v1/grade/distribution`` with the keyword arguments as the
        body (``config``, ``m``, ``samples`` or ``counts``, ...): the
        goodness-of-fit report as a dict."""
        if isinstance(payload.get("config"), Config):
            payload["config"] = payload["config"].to_dict()
        return self.request("POST", "/v1/grade/distribution", json=payload)

    def suites(self) -> list[dict]:
        """``GET /v1/grade/suites``: the assignment suites, ``[{"name", "description", "count"}]``."""
        return self.request("GET", "/v1/grade/suites")["suites"]

    def suite(self, name: str = "standard") -> dict:
        """``GET /v1/grade/suites/{name}``: ``{"name", "description", "configs": [{"id", "config",
        "exercises"}]}``. Raises :class:`~specdec_client.errors.NotFound` (404) for an unknown name."""
        return self.request("GET", "/v1/grade/suites/" + quote(name, safe=""))

    # ------------------------------------------------------------ conveniences

    def session(self, config: Union[Config, Mapping, None] = None, **settings: Any) -> Session:
        """A client-side :class:`~specdec_client.session.Session` with these
        settings (``draft`` and ``seed`` required), at the empty prefix."""
        return Session(self, as_config(config, **settings))

    def replay(self, trace: Union[Trace, Mapping]) -> ReplayReport:
        """Re-run every block of a saved trace on the service and compare:
        see :func:`specdec_client.traces.replay`."""
        return replay(self, trace)


def state_body(state: StateLike) -> dict:
    """The JSON body of a state: a :class:`State` as sent/received, a
    :class:`Config` as the empty session, a mapping as is."""
    if isinstance(state, State):
        return state.to_dict()
    if isinstance(state, Config):
        return {"config": state.to_dict()}
    if isinstance(state, Mapping):
        return dict(state)
    raise TypeError(f"a state is a State, a Config or a JSON object, not {type(state).__name__}")


def _trace_body(trace: Union[Trace, Mapping]) -> dict:
    return trace.to_dict() if isinstance(trace, Trace) else dict(trace)


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
    problem: dict = {}
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
