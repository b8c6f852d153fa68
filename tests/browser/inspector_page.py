"""The inspector page object for the browser tests: the page of the live
service in one tab, its controls found by their accessible names, every console
error recorded."""

from __future__ import annotations

import re
from pathlib import Path

import requests

from playwright.sync_api import Page, expect

VENDOR = Path(__file__).resolve().parent / "vendor"
"""Vendored test-only libraries (axe-core, with its licence)."""


class Inspector:
    """The page object: the inspector in one tab, found by accessible names."""

    def __init__(self, page: Page, base: str, artefacts: Path):
        self.page = page
        self.base = base
        self.artefacts = artefacts
        self.console_errors: list[str] = []
        self.requests: list[tuple[str, str]] = []
        page.on("request", lambda request: self.requests.append((request.method, request.url)))
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"uncaught: {error}"))

    def _on_console(self, message) -> None:
        if message.type in ("error", "assert"):
            self.console_errors.append(message.text)

    # -- navigation
    def open(self, fragment: str = "") -> "Inspector":
        self.page.goto(f"{self.base}/{('#' + fragment) if fragment else ''}")
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        expect(self.page.locator("body[data-ready='true']")).to_have_count(1)
        self.wait_idle()

    def wait_idle(self) -> None:
        expect(self.page.locator("body[aria-busy]")).to_have_count(0)

    # -- controls
    def button(self, name: str):
        return self.page.get_by_role("button", name=name, exact=True)

    def press(self, name: str) -> None:
        self.button(name).click()
        self.wait_idle()

    def field(self, label: str):
        return self.page.get_by_label(label, exact=True)

    def choose(self, label: str, value: str) -> None:
        self.field(label).select_option(value)
        self.wait_idle()

    def fill(self, label: str, value: str) -> None:
        self.field(label).fill(value)
        self.field(label).dispatch_event("change")
        self.wait_idle()

    def region(self, name: str):
        return self.page.get_by_role("region", name=name, exact=True)

    # -- reading
    def tokens(self, selector: str) -> list[str]:
        return self.page.locator(selector).locator(".token").all_inner_texts()

    def output(self) -> list[str]:
        return self.region("Committed output").locator("ol .token").all_inner_texts()

    def counters(self) -> dict[str, str]:
        """The counters by their trace names (the page says them in words), and committed_per_pass."""
        items = self.region("Counters").locator("[data-counter]")
        return {items.nth(i).get_attribute("data-counter"): items.nth(i).locator("dd").inner_text()
                for i in range(items.count())}

    def screenshot(self, name: str) -> Path:
        path = self.artefacts / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def assert_only_public_api(self, documented: set[tuple[str, str]]) -> None:
        """Every request went to this origin: the page and its files, or an operation
        of the contract (``documented``: {(method, path)} from openapi.yaml)."""
        from urllib.parse import urlsplit

        assert self.requests, "no request recorded"
        for method, url in self.requests:
            parts = urlsplit(url)
            if parts.scheme in ("blob", "data"):
                continue
            assert f"{parts.scheme}://{parts.netloc}" == self.base, url
            assert parts.path.startswith("/static/inspector/") or (method.lower(), parts.path) in documented, url

    def assert_no_console_errors(self, allowed_statuses: tuple[int, ...] = ()) -> None:
        """No console error and no uncaught exception; a failed request of an
        ``allowed_statuses`` status (the browser logs every 4xx) is expected."""
        pattern = re.compile(r"status of (\d+)")
        unexpected = [text for text in self.console_errors
                      if not ((m := pattern.search(text)) and int(m.group(1)) in allowed_statuses)]
        assert unexpected == []


AXE_VERSION = "4.14.1"
"""The vendored axe-core release (docs/inspector.md)."""


def serious_axe_violations(page: Page) -> list[tuple]:
    """Run the vendored axe-core on the page; its serious and critical violations as
    ``(rule id, impact, first targets)``. The page's Content-Security-Policy forbids injected
    scripts, so the page must come from a context made with ``bypass_csp=True``."""
    page.add_script_tag(path=str(VENDOR / "axe.min.js"))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    assert result["testEngine"]["version"] == AXE_VERSION
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def fmt(x: float) -> str:
    """The page's rounding (render.js ``fmt``): at most 4 decimals, trailing zeros dropped; a
    nonzero value that would round to 0 keeps 2 significant digits (below 1e-6: "< 0.000001")."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    if text not in ("-0", "0", ""):
        return text
    if x == 0:
        return "0"
    if abs(x) < 1e-6:
        return "< 0.000001" if x > 0 else "> -0.000001"
    return f"{float(f'{x:.1e}'):.12f}".rstrip("0")


def fmt_draw(u: float) -> str:
    """The page's draw u (render.js ``fmtDraw``): always 4 decimals ("0.9710"), a nonzero draw
    under 0.00005 as ``fmt`` writes it."""
    return fmt(u) if u != 0 and abs(u) < 0.00005 else f"{u:.4f}"


def post(live_url: str, path: str, body: dict) -> dict:
    response = requests.post(f"{live_url}{path}", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()
