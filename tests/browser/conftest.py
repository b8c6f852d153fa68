"""Browser fixtures: Playwright (pytest-playwright) driving Debian's chromium.

Playwright's own browser download is not used: ``browser_type_launch_args``
points it at the system chromium (``SPECDEC_CHROMIUM`` or ``/usr/bin/chromium``,
which ``.ci/run`` installs with apt-get when it is missing). A missing browser is
a failure with a clear message, never a skip.

``inspector`` opens the page of the live service (``live_url``, gunicorn) and
records every console error and uncaught exception; each test ends by asserting
there were none (``inspector.assert_no_console_errors()``), except the HTTP
statuses it expects. Screenshots go to ``artefacts_dir``: ``SPECDEC_ARTEFACTS`` or
``<pytest basetemp>/inspector-artefacts`` (printed at the end of the run).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser.inspector_page import Inspector

CHROMIUM = os.environ.get("SPECDEC_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TIMEOUT_MS = 20_000
"""Expectation timeout: the machine is shared and slow; nothing here is timed."""

expect.set_options(timeout=TIMEOUT_MS)
SAVED: list[Path] = []
"""The artefacts directory of this run, once a test asked for it."""


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's chromium with the project's flags (no sandbox, no network of its own)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no chromium at {CHROMIUM}: install it (apt-get install chromium; .ci/run does) "
                    "or set SPECDEC_CHROMIUM to its path")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS, "headless": True}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    """A desktop-sized window, downloads accepted, reduced motion (the page then brings a verdict
    into view without a smooth scroll, so a click never lands on a page still moving)."""
    return {**browser_context_args, "viewport": {"width": 1300, "height": 1000}, "accept_downloads": True,
            "reduced_motion": "reduce"}


@pytest.fixture(scope="session")
def artefacts_dir(tmp_path_factory) -> Path:
    """Where screenshots of the main states are saved."""
    configured = os.environ.get("SPECDEC_ARTEFACTS")
    path = Path(configured) if configured else tmp_path_factory.getbasetemp() / "inspector-artefacts"
    path.mkdir(parents=True, exist_ok=True)
    SAVED.append(path)
    return path


@pytest.fixture
def inspector(page, live_url, artefacts_dir) -> Inspector:
    """The inspector page object on the live service (not yet opened)."""
    return Inspector(page, live_url, artefacts_dir)


def pytest_terminal_summary(terminalreporter):
    for path in SAVED:
        terminalreporter.write_line(f"inspector screenshots: {path}")
