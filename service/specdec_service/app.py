"""The Flask application factory of the stateless REST service.

``create_app(config)`` builds the app: the defaults below (overridable by
``config``, e.g. in tests), CORS open for ``/v1/*`` and ``/openapi.yaml``,
one problem-document error handler for everything
(:mod:`specdec_service.api.problems`), ``X-Content-Type-Options: nosniff`` on
every response, ``204 No Content`` without a content type for every ``OPTIONS``
request (CORS preflights included), exact paths (``/v1//models`` is a 404 problem,
not werkzeug's redirect with an HTML page), and every blueprint of :data:`specdec_service.api.BLUEPRINTS`.
Nothing runs at import time.

Extension point: to add routes, see "How to add a route" in
:mod:`specdec_service.api` (a route is declared once, with its contract).

Serve it with gunicorn: ``gunicorn -c gunicorn.conf.py
'specdec_service:create_app()'`` or ``specdec-service serve``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from flask import Flask, g, request
from flask.json.provider import DefaultJSONProvider
from flask_cors import CORS
from werkzeug.routing import Map

from .api import BLUEPRINTS
from .api.problems import deadline_problem, register_error_handlers
from .deadline import ComputeDeadline, configured_deadline, configured_wall_deadline, cpu_deadline
from .observe import REQUEST_ID_HEADER, install

MAX_BODY_BYTES = 256 * 1024
"""The largest request body (256 KiB); a larger one is a 413 problem."""

DEFAULTS: Mapping[str, Any] = {
    "MAX_CONTENT_LENGTH": MAX_BODY_BYTES,
    "JSON_SORT_KEYS": False,
}
PREFLIGHT_MAX_AGE = 86400
"""Seconds a browser may cache a CORS preflight (``Access-Control-Max-Age``, a day), so a
frontend does not preflight every POST (browsers cap it: Chromium at 2 hours)."""
CORS_RESOURCES: dict[str | re.Pattern[str], dict[str, Any]] = {
    re.compile(r"/v1/"): {"origins": "*", "send_wildcard": True, "methods": ["GET", "POST"],
                          "max_age": PREFLIGHT_MAX_AGE, "expose_headers": [REQUEST_ID_HEADER]},
    re.compile(r"/openapi\.yaml\Z"): {"origins": "*", "send_wildcard": True, "methods": ["GET"],
                                      "max_age": PREFLIGHT_MAX_AGE, "expose_headers": [REQUEST_ID_HEADER]},
}
"""Any origin may call the API and read the contract (``Access-Control-Allow-Origin: *``, no
credentials); preflights may be cached for :data:`PREFLIGHT_MAX_AGE` seconds; a page may read
the answer's ``X-Request-Id`` (:mod:`specdec_service.observe`).

The paths are compiled patterns (matched from the start of the path; ``\\Z``, not
``$``, which would also match before a final newline, ``/openapi.yaml%0A``): flask-cors
then skips guessing, on every request, whether a string is a regular expression."""


class _ExactPaths(Map):
    """werkzeug's URL map with ``merge_slashes`` off. With it on (werkzeug's default), a path
    with a doubled slash (``/v1//models``, ``//``) is answered by a 308 redirect whose body is
    an HTML "Redirecting..." page, sent without the error handlers (Flask does not pass
    routing redirects to them), and whose absolute ``Location`` names the host without the
    port behind the edge (nginx passes ``Host`` as ``$host``). The service's paths are
    exact: such a path is the 404 problem of any unknown path."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("merge_slashes", False)
        super().__init__(*args, **kwargs)


class _App(Flask):
    """Flask with :class:`_ExactPaths` (its ``url_map_class``: the map is made, and the
    static route added to it, in ``Flask.__init__``) and the CPU deadline around every view
    (:meth:`dispatch_request`)."""

    url_map_class = _ExactPaths
    json: DefaultJSONProvider  # Flask's own (its json_provider_class): create_app sets sort_keys

    def dispatch_request(self) -> Any:
        """The view's answer, its work stopped at the config's ``CPU_DEADLINE`` (seconds of CPU)
        or ``WALL_DEADLINE`` (seconds on the clock, :mod:`specdec_service.deadline`): a view stopped there is answered by the 503 problem
        :func:`~specdec_service.api.problems.deadline_problem`, which then passes through the
        ``after_request`` hooks as any answer does (request id, CORS, metrics, log line)."""
        try:
            with cpu_deadline(self.config["CPU_DEADLINE"], wall=self.config["WALL_DEADLINE"]):
                return super().dispatch_request()
        except ComputeDeadline as stop:
            request_id = g.get("request_id", "-")
            self.logger.warning("stopped at the %s deadline of %g s: %s %s (request_id=%s)",
                                "CPU" if stop.clock == "cpu" else "wall-clock", stop.seconds, request.method, request.path, request_id)
            return deadline_problem(stop, request_id)


def _no_sniff(response):
    """``X-Content-Type-Options: nosniff`` on every response, errors included: a browser
    must not guess a type other than the declared one (e.g. run a JSON body as a script)."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _options_without_content(response):
    """An ``OPTIONS`` answer (Flask's automatic one, which flask-cors completes for a CORS
    preflight) has no body: ``204 No Content`` and no ``Content-Type``, where Flask would
    send 200 with ``text/html; charset=utf-8`` (its default mimetype) and an empty body.
    The ``Allow`` and ``Access-Control-*`` headers stay; any 2xx status satisfies a browser's
    preflight (Fetch standard, "CORS-preflight fetch": an ok status)."""
    if (request.method == "OPTIONS" and response.status_code == 200 and not response.is_streamed
            and not response.get_data()):
        response.status_code = 204
        del response.headers["Content-Type"]
    return response


def create_app(config: Optional[Mapping[str, Any]] = None) -> Flask:
    """Build the WSGI app. ``config`` overrides :data:`DEFAULTS` (Flask
    config keys, e.g. ``{"TESTING": True}`` or ``MAX_CONTENT_LENGTH``). ``CPU_DEADLINE``
    (seconds of CPU a request may use, ``None`` for no deadline) defaults to
    ``$SPECDEC_CPU_DEADLINE`` (10 s when unset; :func:`specdec_service.deadline.deadline_setting`,
    whose ``ValueError`` a bad value raises); ``WALL_DEADLINE`` (seconds on the clock, ``None``
    for none) to ``$SPECDEC_WALL_DEADLINE`` (2/3 of ``$SPECDEC_TIMEOUT``, 20 s, when unset;
    :func:`specdec_service.deadline.wall_deadline_setting`)."""
    app = _App(__name__)
    app.config.update(DEFAULTS)
    if config:
        app.config.update(config)
    app.config["CPU_DEADLINE"] = configured_deadline(app.config)
    app.config["WALL_DEADLINE"] = configured_wall_deadline(app.config)
    app.json.sort_keys = False
    install(app)  # request ids, metrics, log lines: first, so its after_request runs last
    CORS(app, resources=CORS_RESOURCES)
    register_error_handlers(app)
    app.after_request(_no_sniff)
    app.after_request(_options_without_content)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app
