"""The client: every API group of the specdec service over one transport.

>>> from specdec_client import Client
>>> client = Client("http://localhost:8000")
>>> trace = client.run(draft="biased", seed=1)          # doctest: +SKIP
>>> trace.output                                          # doctest: +SKIP
('A', 'C', ...)

The client is thin: HTTP and types only. Every decoding decision is the
service's; the SDK sends states and reads back what the service computed.
The layers: :mod:`specdec_client.transport` (the ``requests`` session,
retries, problem documents), :mod:`specdec_client.api` (one class per group
of routes, each over a transport), and :class:`Client`, which is all the
groups over one transport plus the conveniences :meth:`Client.session` and
:meth:`Client.replay`. See :mod:`specdec_client.transport` for retries.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Union

import requests

from .api.analysis import AnalysisApi
from .api.draws import DrawsApi
from .api.grading import GradingApi
from .api.meta import MetaApi
from .api.runs import RunsApi
from .api.sessions import SessionsApi, StateLike, state_body
from .progress import Progress
from .session import Session
from .traces import ReplayReport, replay
from .transport import DEFAULT_URL, RETRY_STATUSES, Transport, excerpt, make_retry, problem_error
from .types import Config, Trace, as_config

__all__ = ["Client", "DEFAULT_URL", "RETRY_STATUSES", "StateLike", "excerpt", "make_retry", "problem_error",
           "state_body"]


class Client(MetaApi, DrawsApi, SessionsApi, RunsApi, GradingApi, AnalysisApi):
    """A client of one specdec service: the methods of every API group
    (:mod:`specdec_client.api`) over one :class:`~specdec_client.transport.Transport`.

    The arguments are the transport's: ``base_url`` (``http://host:port``, a
    path prefix allowed), ``timeout`` (seconds > 0 for each attempt),
    ``session`` (a ``requests.Session`` to use), ``retries`` (0 to disable)
    and ``backoff_factor`` (seconds, see :func:`make_retry`).

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
        super().__init__(Transport(base_url, timeout=timeout, session=session, retries=retries,
                                   backoff_factor=backoff_factor))

    @property
    def base_url(self) -> str:
        """The service's root, without a final ``/``."""
        return self.transport.base_url

    @property
    def timeout(self) -> float:
        """Seconds to wait for each attempt."""
        return self.transport.timeout

    @property
    def retries(self) -> int:
        """Retries of a failed idempotent request."""
        return self.transport.retries

    @property
    def http(self) -> requests.Session:
        """The ``requests.Session`` the transport sends with."""
        return self.transport.http

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, timeout={self.timeout!r}, retries={self.retries!r})"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the ``requests.Session`` if the client created it."""
        self.transport.close()

    def request(self, method: str, path: str, *, json: Any = None, params: Optional[Mapping[str, Any]] = None) -> Any:
        """One request to any route: the parsed JSON of a 2xx answer (see
        :meth:`specdec_client.transport.Transport.request`)."""
        return self.transport.request(method, path, json=json, params=params)

    # ------------------------------------------------------------ conveniences

    def session(self, config: Union[Config, Mapping[str, Any], None] = None, **settings: Any) -> Session:
        """A client-side :class:`~specdec_client.session.Session` with these
        settings (``draft`` and ``seed`` required), at the empty prefix."""
        return Session(self, as_config(config, **settings))

    def replay(self, trace: Union[Trace, Mapping[str, Any]], progress: Optional[Progress] = None) -> ReplayReport:
        """Re-run every block of a saved trace on the service and compare:
        see :func:`specdec_client.traces.replay` (and for ``progress``)."""
        return replay(self, trace, progress)
