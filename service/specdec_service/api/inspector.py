"""``GET /``: the inspector, the reference web frontend.

The page is static: HTML, CSS and ES-module JavaScript under
``specdec_service/static/inspector/`` (shipped in the package through
``package-data``; no build step, no CDN, nothing fetched from elsewhere). It
runs in the browser and uses only the public API (``/v1/models``,
``/v1/draft``, ``/v1/verify``, ``/v1/step``, ``/v1/runs``, ``/v1/grade``,
``/v1/analysis``), the same calls any frontend in any language makes; the
service adds nothing for it. Its assets are Flask's static files
(``GET /static/inspector/<file>``, the app's ``static`` endpoint, which is not
an API route and stays out of the contract, as ``tests/test_openapi.py`` states).

The page is served with a Content-Security-Policy that allows only this origin
(``default-src 'self'``), so a page that tried to load a script or style from a
CDN would fail, with a console error, in the browser tests.
"""

from __future__ import annotations

from pathlib import Path

from flask import send_from_directory

from .routes import ApiBlueprint

blueprint = ApiBlueprint("inspector", __name__, tag="inspector",
                         description="The inspector: a web page on this API.")

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
"""The package's static folder (Flask serves it at ``/static/``)."""
INSPECTOR_DIR = STATIC_DIR / "inspector"
"""The inspector's files: ``index.html``, ``inspector.css``, ``*.js``."""

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""Only this origin: no CDN, no inline script (the page is offline-ready by construction)."""

HTML_MIMETYPE = "text/html"


def _page_response() -> dict:
    return {200: {
        "description": "The page (HTML; its scripts and styles are under `/static/inspector/`).",
        "headers": {"Content-Security-Policy": {
            "description": "Only this origin: the page loads nothing from elsewhere.",
            "schema": {"type": "string", "const": CONTENT_SECURITY_POLICY}}},
        "content": {HTML_MIMETYPE: {"schema": {"type": "string"}}}}}


@blueprint.operation(
    "GET", "/", summary="The inspector web page",
    operation_id="getInspector",
    description=(
        "An HTML page that drives the public API from the browser: settings, Draft, Verify, Step, Run, "
        "Reset, the verification and correction bars, committed output with block ids, block history, "
        "draw stream, counters, the state in the URL fragment, Download trace, Grade a trace, and the "
        "analysis of `POST /v1/analysis`. Its scripts and styles are served from `/static/inspector/`; it "
        "loads nothing from other origins (Content-Security-Policy `default-src 'self'`)."),
    ok={"type": "string"}, ok_description="The page.", ok_mimetype=HTML_MIMETYPE, responses=_page_response)
def index():
    """The inspector page (``text/html``) with :data:`CONTENT_SECURITY_POLICY`."""
    response = send_from_directory(INSPECTOR_DIR, "index.html", max_age=0)
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
