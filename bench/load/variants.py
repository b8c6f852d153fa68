"""Variants of the service for load experiments (``bench/load/run.py --app``); never served.

``without_cors()`` is the app of ``specdec_service.create_app()`` without flask-cors's
after-request hook: its responses lack ``Access-Control-Allow-Origin``, so a browser could not
read them. It exists to measure what CORS costs a request (docs/bench-service.md), not to be
deployed.
"""

from __future__ import annotations

from flask import Flask

from specdec_service import create_app


def without_cors() -> Flask:
    """The service's app with flask-cors's ``after_request`` function removed (an experiment)."""
    app = create_app()
    hooks = app.after_request_funcs[None]
    hooks[:] = [hook for hook in hooks if hook.__name__ != "cors_after_request"]
    assert len(hooks) == 1, "expected flask-cors's hook and the nosniff hook"
    return app
