"""The Flask application factory of the stateless REST service.

``create_app(config)`` builds the app: the defaults below (overridable by
``config``, e.g. in tests), CORS open for ``/v1/*`` and ``/openapi.yaml``,
one problem-document error handler for everything
(:mod:`specdec_service.api.problems`), and every blueprint of
:data:`specdec_service.api.BLUEPRINTS`. Nothing runs at import time.

Extension point: to add routes, see "How to add a route" in
:mod:`specdec_service.api` (a route is declared once, with its contract).

Serve it with gunicorn: ``gunicorn -c gunicorn.conf.py
'specdec_service:create_app()'`` or ``specdec-service serve``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from flask import Flask
from flask_cors import CORS

from .api import BLUEPRINTS
from .api.problems import register_error_handlers

MAX_BODY_BYTES = 256 * 1024
"""The largest request body (256 KiB); a larger one is a 413 problem."""

DEFAULTS: Mapping[str, Any] = {
    "MAX_CONTENT_LENGTH": MAX_BODY_BYTES,
    "JSON_SORT_KEYS": False,
}
CORS_RESOURCES = {
    re.compile(r"/v1/"): {"origins": "*", "send_wildcard": True, "methods": ["GET", "POST"]},
    re.compile(r"/openapi\.yaml\Z"): {"origins": "*", "send_wildcard": True, "methods": ["GET"]},
}
"""Any origin may call the API and read the contract (``Access-Control-Allow-Origin: *``, no credentials).

The paths are compiled patterns (matched from the start of the path; ``\\Z``, not
``$``, which would also match before a final newline, ``/openapi.yaml%0A``): flask-cors
then skips guessing, on every request, whether a string is a regular expression."""


def create_app(config: Optional[Mapping[str, Any]] = None) -> Flask:
    """Build the WSGI app. ``config`` overrides :data:`DEFAULTS` (Flask
    config keys, e.g. ``{"TESTING": True}`` or ``MAX_CONTENT_LENGTH``)."""
    app = Flask(__name__)
    app.config.update(DEFAULTS)
    if config:
        app.config.update(config)
    app.json.sort_keys = False
    CORS(app, resources=CORS_RESOURCES)
    register_error_handlers(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    return app
