"""Draw the documentation's figures from the service's own answers (issue 22 section 5).

    python docs/figures/make.py               # every figure and the inspector's story frames
    python docs/figures/make.py --no-frames   # the figures only (no browser needed)

Needs the ``docs`` extra (``pip install -e '.[docs]'``: matplotlib; Playwright for the frames)
and, for the frames, Debian's chromium (``SPECDEC_CHROMIUM`` or ``/usr/bin/chromium``, as
tests/browser). Writes, in ``docs/figures/``:

- ``<name>.json``, the data (``data.py``: the requests sent to the app in process and the
  answers' fields plotted), and ``<name>.svg``, its figure, whose description holds the data's
  SHA-256. SVGs are deterministic: fixed hash salt, no date, the font bundled with matplotlib
  drawn as paths; the same matplotlib writes the same bytes.
- ``story/step-<n>.png``, step n of the inspector's guided story after its action, in projector
  mode at 1280x720, and ``story/frames.json``: per step its URL fragment, the requests the page
  sent (replayed by the test), the SHA-256 of their answers, of the frame, and of story.js's
  ``STEPS``.

``tests/test_figures.py`` checks that all of it is current without matplotlib or a browser.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import data  # noqa: E402  (beside this file: importable once HERE is on sys.path)

COLORS = {"target": "#4d4d4d", "biased": "#d95f02", "aligned": "#1b9e77", "correct": "#1b9e77",
          "resample-from-p": "#d95f02", "0": "#7570b3", "0.05": "#d95f02", "0.2": "#1b9e77"}


# ---------------------------------------------------------------- figures (matplotlib)

def _pyplot():
    import matplotlib

    matplotlib.use("svg")
    matplotlib.rcParams.update({
        "svg.hashsalt": "specdec-figures",  # clip-path ids from a fixed salt, not a random one
        "svg.fonttype": "path",
        "font.family": "DejaVu Sans",       # bundled with matplotlib: the same glyphs everywhere
        "font.size": 11,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })
    import matplotlib.pyplot as plt

    return plt


def save(fig, name: str, figure_data: dict, title: str) -> Path:
    """``<name>.svg`` with the data's digest in its description; no date, a fixed creator."""
    path = HERE / f"{name}.svg"
    fig.savefig(path, format="svg", bbox_inches="tight", metadata={
        "Date": None, "Creator": "docs/figures/make.py", "Title": title,
        "Description": f"{name}: data {name}.json sha256 {data.digest(figure_data)}"})
    return path


def draw_acceptance(plt, d: dict):
    """Grouped bars: alpha per context (x) for each draft, the exact fraction above each bar."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    contexts, drafts = d["contexts"], d["drafts"]
    bar = 0.8 / len(drafts)
    for i, (draft, row) in enumerate(drafts.items()):
        xs = [c + (i - (len(drafts) - 1) / 2) * bar for c in range(len(contexts))]
        ax.bar(xs, row["alpha"], bar * 0.95, label=f"draft {draft}", color=COLORS[draft])
        for x, y, exact in zip(xs, row["alpha"], row["alpha_exact"]):
            ax.annotate(exact, (x, y), xytext=(0, 3), textcoords="offset points", ha="center", fontsize=9)
    ax.set_xticks(range(len(contexts)), [f"after {c}" if c != "\u2205" else "empty prefix" for c in contexts])
    ax.set_ylim(0, 1.3)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1])
    ax.set_ylabel("alpha = sum of min(p, q)")
    ax.set_title("Acceptance per context, toy target", loc="left")
    ax.legend(frameon=False, loc="upper center", ncols=len(drafts))
    return fig


def draw_width(plt, d: dict):
    """Lines over width: the speedup at each draft cost (at 0: tokens per pass), a star at best_width."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    widths = d["widths"]
    for cost, row in d["costs"].items():
        label = "tokens per target pass (draft cost 0)" if cost == "0" else f"speedup at draft cost {cost}"
        ax.plot(widths, row["speedup"], marker="o", color=COLORS[cost], label=label)
        best = row["best_width"]
        y = row["speedup"][widths.index(best)]
        ax.plot([best], [y], marker="*", markersize=16, color=COLORS[cost], zorder=3)
        ax.annotate(f"best {best}", (best, y), xytext=(0, 9), textcoords="offset points", ha="center",
                    fontsize=9, color=COLORS[cost])
    ax.axhline(1, color="#999999", linestyle="--", linewidth=1)
    ax.annotate("1: autoregressive decoding", (widths[-1], 1), xytext=(0, -12), textcoords="offset points",
                ha="right", fontsize=9, color="#777777")
    ax.set_xticks(widths)
    ax.set_xlabel("width (proposals drafted per block)")
    ax.set_ylabel("tokens per pass / speedup")
    ax.set_ylim(0.8, max(max(r["speedup"]) for r in d["costs"].values()) + 0.5)
    ax.set_title("Toy target, biased draft, limit 8: exact, over all sessions", loc="left")
    ax.legend(frameon=False, loc="upper left", fontsize=9)
    return fig


def draw_distribution(plt, d: dict):
    """One panel per sampler: expected against observed counts per cell, the grade in the title."""
    samplers = d["samplers"]
    fig, axes = plt.subplots(1, len(samplers), figsize=(10, 3.8), sharey=True)
    cells = [" ".join(c) for c in d["cells"]]
    xs = range(len(cells))
    for ax, (name, row) in zip(axes, samplers.items()):
        ax.bar([x - 0.2 for x in xs], d["expected"], 0.4, color=COLORS["target"], label="expected (target)")
        ax.bar([x + 0.2 for x in xs], row["observed"], 0.4, color=COLORS[name], label=f"observed ({name})")
        ax.set_xticks(list(xs), cells)
        ax.set_xlabel(f"first {d['m']} tokens")
        grade = row["grade"]
        verdict = "pass" if grade["passed"] else "FAIL"
        ax.set_title(f"{name}: {verdict}\nchi-square {grade['statistic']:.1f}, {grade['dof']} dof, "
                     f"p = {grade['p_value']:.2g}; TV {grade['total_variation']:.3f}", loc="left", fontsize=10)
        ax.legend(frameon=False, loc="upper right", fontsize=9)
    axes[0].set_ylabel(f"sessions of {d['n']}")
    return fig


DRAW = {"analysis-acceptance": (draw_acceptance, "Acceptance per context (POST /v1/analysis)"),
        "analysis-width": (draw_width, "Tokens per pass and speedup against width (POST /v1/analysis)"),
        "grading-distribution": (draw_distribution, ("Observed against expected, distribution grade "
                                                     "(POST /v1/grade/distribution)"))}


def figures() -> list[Path]:
    """Every figure of data.FIGURES: its JSON and its SVG."""
    plt = _pyplot()
    written = []
    for name, figure_data in data.collect().items():
        (HERE / f"{name}.json").write_bytes(data.canonical(figure_data))
        draw, title = DRAW[name]
        fig = draw(plt, figure_data)
        written += [HERE / f"{name}.json", save(fig, name, figure_data, title)]
        plt.close(fig)
    return written


# ---------------------------------------------------------------- the story's frames (Playwright)

def serve_app():
    """The app on a free port of 127.0.0.1 in a thread (werkzeug): ``(base URL, server)``."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    from specdec_service.app import create_app

    class Quiet(WSGIRequestHandler):
        def log_request(self, *args, **kwargs) -> None:  # no line per request on stderr
            pass

    server = make_server("127.0.0.1", 0, create_app(), threaded=True, request_handler=Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}", server


def _step_frame(browser, base: str, n: int, path: Path) -> list[dict]:
    """Step n after its action, screenshot to ``path``; the /v1 requests the page sent."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=data.FRAME_VIEWPORT, reduced_motion="reduce")
    try:
        page = context.new_page()
        finished = []
        page.on("requestfinished", lambda request: finished.append(request))
        page.goto(f"{base}/#{data.FRAME_FRAGMENT.format(n=n)}")
        expect(page.locator("body[data-ready='true']")).to_have_count(1, timeout=30_000)
        expect(page.locator("body[aria-busy]")).to_have_count(0, timeout=30_000)
        if page.locator("#btn-story-action").count():  # the closing recap has no action
            page.locator("#btn-story-action").click()
            expect(page.locator("body[aria-busy]")).to_have_count(0, timeout=30_000)
        page.screenshot(path=str(path))
        requests = {}
        for request in finished:
            url = urlsplit(request.url)
            if url.path.startswith("/v1/"):  # with its query (GET /v1/draws?seed=...), replayed as sent
                record = {"method": request.method, "path": url.path + (f"?{url.query}" if url.query else ""), "body": request.post_data}
                response = request.response()
                text = response.text()
                try:
                    answer = json.loads(text)
                except ValueError:
                    answer = text
                record.update(status=response.status, answer_sha256=data.digest(answer))
                requests[json.dumps(record, sort_keys=True)] = record
        return [requests[key] for key in sorted(requests)]
    finally:
        context.close()


class FramesFailed(Exception):
    """The browser could not take the frames (the frames already in ``story/`` are kept)."""


def frames(chromium: str) -> list[Path]:
    """Every step of story.js in chromium: ``story/step-<n>.png`` and ``story/frames.json``.
    They are taken into a new directory that replaces ``story/`` only once every frame and the
    manifest are written, so a run that fails leaves the committed frames as they were. Raises
    :class:`FramesFailed` when chromium does not start."""
    out = HERE / "story"
    new = Path(tempfile.mkdtemp(prefix=".story-", dir=HERE))
    try:
        written = _take_frames(chromium, new)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    new.chmod(0o755)
    if out.exists():
        shutil.rmtree(out)
    new.rename(out)
    return [out / path.name if path.parent == new else path for path in written]


def _take_frames(chromium: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    steps_source, steps = data.story_steps((ROOT / data.STORY_JS).read_text(encoding="utf-8"))
    client = data.app_client()
    base, server = serve_app()
    try:
        with sync_playwright() as playwright:
            try:
                browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=[
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking"])
            except Exception as error:
                first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise FramesFailed(f"chromium at {chromium} did not start ({first}): pass --chromium, "
                                   "or use --no-frames") from error
            try:
                for step in steps:
                    png = out / f"step-{step['n']}.png"
                    requests = _step_frame(browser, base, step["n"], png)
                    for request in requests:  # what the page was answered is what the app answers in process
                        replayed = data.replay(client, request)
                        if replayed != {k: request[k] for k in replayed}:
                            raise RuntimeError(f"step {step['n']}: {request} replayed gives {replayed}")
                    step.update(fragment=data.FRAME_FRAGMENT.format(n=step["n"]), frame=png.name,
                                frame_sha256=hashlib.sha256(png.read_bytes()).hexdigest(), requests=requests)
                version = browser.version
            finally:
                browser.close()
    finally:
        server.shutdown()
    manifest = {"schema": "specdec-story-frames/1", "story": data.STORY_JS,
                "story_steps_sha256": hashlib.sha256(steps_source.encode()).hexdigest(),
                "viewport": data.FRAME_VIEWPORT, "chromium": version, "steps": steps}
    (out / "frames.json").write_bytes(data.canonical(manifest))
    doc = ROOT / "docs" / "inspector.md"
    doc.write_text(data.replace_block(doc.read_text(encoding="utf-8"), data.frames_markdown(manifest)), encoding="utf-8")
    return [out / "frames.json", *(out / s["frame"] for s in steps), doc]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-frames", action="store_true",
                        help="skip the inspector's story frames (they need Playwright and chromium)")
    parser.add_argument("--chromium", default=os.environ.get("SPECDEC_CHROMIUM") or shutil.which("chromium")
                        or "/usr/bin/chromium", help="the chromium executable (default: SPECDEC_CHROMIUM, "
                        "then chromium on PATH)")
    args = parser.parse_args(argv)
    if not args.no_frames and not Path(args.chromium).exists():
        parser.error(f"no chromium at {args.chromium}: install it, pass --chromium, or use --no-frames")
    for module in ("matplotlib",) + (() if args.no_frames else ("playwright",)):
        if importlib.util.find_spec(module) is None:
            parser.error(f"{module} is not installed: pip install -e '.[docs]'"
                         + ("" if module == "matplotlib" else ", or use --no-frames"))
    written = figures()
    if not args.no_frames:
        try:
            written += frames(args.chromium)
        except FramesFailed as error:
            parser.exit(1, f"{parser.prog}: error: {error}\n")
    for path in written:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
