"""The inspector in a browser: how long a page load, a restored link and Run take
(run by hand, not in CI; results in docs/inspector.md).

    python bench/inspector.py --url http://127.0.0.1:8000 [--repeat 5] [--chromium /usr/bin/chromium]

A link restores its view by replaying the session through the API: ``blocks=n``
is n ``POST /v1/step`` calls one after another, ``end=1`` one ``POST /v1/runs``.
The worst link is a 256-block session (limit 256, mode autoregressive: one token a
block). Prints the median wall time of ``--repeat`` loads of each link until the page
says it is ready, and of a click on Run, in headless chromium (Playwright).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from playwright.sync_api import sync_playwright

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LONG = "draft=aligned&seed=1&mode=autoregressive&limit=256"
LINKS = {
    "empty page": "",
    "seed-1 experiment, 1 block": "draft=biased&seed=1&blocks=1",
    "256 blocks replayed (256 x POST /v1/step)": f"{LONG}&blocks=256",
    "256 blocks after Run (1 x POST /v1/runs)": f"{LONG}&blocks=256&end=1",
}


def load(page, url: str) -> float:
    """Seconds from navigation to the page's ready mark."""
    page.goto("about:blank")
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("body[data-ready='true']:not([aria-busy])", timeout=120_000)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=FLAGS)
        page = browser.new_page()
        for name, fragment in LINKS.items():
            times = [load(page, f"{args.url}/#{fragment}") for _ in range(args.repeat)]
            print(f"{name:45} {statistics.median(times) * 1000:8.0f} ms")
        runs = []
        for _ in range(args.repeat):
            load(page, f"{args.url}/#{LONG}")
            start = time.perf_counter()
            page.get_by_role("button", name="Run", exact=True).click()
            page.wait_for_selector("#history li:nth-child(256)", timeout=120_000)
            page.wait_for_selector("body:not([aria-busy])")
            runs.append(time.perf_counter() - start)
        print(f"{'Run, 256 blocks (click to drawn)':45} {statistics.median(runs) * 1000:8.0f} ms")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
