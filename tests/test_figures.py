"""The documentation's figures are current (issue 22 section 5): ``python docs/figures/make.py``
draws them from the service's own answers, and this file checks, without matplotlib or a browser:

- each figure's data (``docs/figures/<name>.json``) is what the app answers today (the same
  requests through Flask's test client, ``docs/figures/data.py``), a failure listing the field
  paths that changed;
- each figure (``<name>.svg``) embeds the SHA-256 of that JSON, so the drawing was made from
  this data and not from an older one (the pixels are not compared: they depend on matplotlib's
  version);
- the story frames (``docs/figures/story/``) were taken of the current story: story.js's
  ``STEPS`` source has the recorded SHA-256 (its steps' settings, actions and words), each frame
  file has its recorded SHA-256, and every request the page sent for the step, sent again to the
  app, gets the same status and the same answer. What this does not prove: that the page's own
  drawing code (render.js, CSS) is unchanged since the frames were taken;
- the docs show the figures by relative links that resolve, and the values the docs state are
  the figures' (best width 3 at draft cost 0.05, the correct sampler passes, the faulty one fails).
"""

from __future__ import annotations

import hashlib
import importlib.util
from concurrent.futures import ThreadPoolExecutor
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
REGENERATE = "regenerate with `python docs/figures/make.py` (docs/figures/make.py --no-frames without a browser)"


def _load_data():
    spec = importlib.util.spec_from_file_location("specdec_docs_figures_data", FIGURES / "data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


data = _load_data()


def stored(name: str) -> dict:
    return json.loads((FIGURES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def app_client():
    return data.app_client()


@pytest.mark.parametrize("name", sorted(data.FIGURES))
def test_figure_data_is_what_the_service_answers(app_client, name):
    old, new = stored(name), data.collect(app_client, [name])[name]
    changed = data.differences(old, new)
    assert not changed, f"docs/figures/{name}.json is out of date ({REGENERATE}):\n" + "\n".join(changed[:20])


@pytest.mark.parametrize("name", sorted(data.FIGURES))
def test_figure_embeds_the_digest_of_its_data(name):
    text = (FIGURES / f"{name}.json").read_bytes()
    assert text == data.canonical(json.loads(text)), f"{name}.json is not as make.py writes it ({REGENERATE})"
    svg = (FIGURES / f"{name}.svg").read_text(encoding="utf-8")
    found = re.findall(rf"data {re.escape(name)}\.json sha256 ([0-9a-f]{{64}})", svg)
    assert found == [data.digest(json.loads(text))], f"{name}.svg was not drawn from {name}.json ({REGENERATE})"
    assert "<dc:date>" not in svg  # deterministic output: no date in the metadata


def test_the_figures_show_what_the_docs_say():
    acceptance = stored("analysis-acceptance")
    assert acceptance["contexts"] == ["\u2205", "A", "B", "C"]
    assert acceptance["drafts"]["biased"]["alpha_exact"] == ["7/10", "2/5", "3/4", "9/20"]
    assert acceptance["drafts"]["aligned"]["alpha_exact"] == ["1"] * 4
    width = stored("analysis-width")
    assert {c: row["best_width"] for c, row in width["costs"].items()} == {"0": 7, "0.05": 3, "0.2": 2}
    assert [round(s, 3) for s in width["costs"]["0.05"]["speedup"]] == [1.447, 1.606, 1.65, 1.644, 1.625, 1.602, 1.585, 1.569]
    assert width["committed_per_pass"] == width["costs"]["0"]["speedup"]
    per_pass, costly = width["committed_per_pass"], width["costs"]["0.2"]["speedup"]
    assert (round(per_pass[0], 2), round(per_pass[-1], 2), round(max(costly), 2)) == (1.52, 1.95, 1.28)
    assert costly[-1] < 1 < costly[-2]  # at draft cost 0.2 width 8 is slower than autoregressive decoding
    grade = stored("grading-distribution")
    assert grade["expected_exact"][:3] == ["1/10", "3/10", "1/10"]  # A A = 0.5 x 0.2, A B = 0.5 x 0.6
    assert sum(grade["samplers"]["correct"]["observed"]) == sum(grade["samplers"]["resample-from-p"]["observed"]) == 2000
    correct, faulty = grade["samplers"]["correct"]["grade"], grade["samplers"]["resample-from-p"]["grade"]
    assert correct["passed"] and correct["p_value"] > 0.001 and correct["reason"] is None
    assert not faulty["passed"] and faulty["p_value"] < 1e-10 and faulty["total_variation"] > 0.12
    # the numbers docs/grading.md's figure text states
    assert (round(correct["statistic"], 1), round(correct["p_value"], 2), correct["dof"]) == (7.2, 0.52, 8)
    assert (round(faulty["statistic"], 1), f"{faulty['p_value']:.2g}", round(faulty["total_variation"], 2)) == (432.3, "2.3e-88", 0.15)
    assert grade["samplers"]["resample-from-p"]["observed"][0] == 416 and grade["expected"][0] == 200


def frames_manifest() -> dict:
    return json.loads((FIGURES / "story" / "frames.json").read_text(encoding="utf-8"))


def test_story_frames_depict_the_current_story():
    manifest = frames_manifest()
    source, steps = data.story_steps((ROOT / data.STORY_JS).read_text(encoding="utf-8"))
    assert [(s["n"], s["id"], s["title"]) for s in manifest["steps"]] == [(s["n"], s["id"], s["title"]) for s in steps], \
        f"story.js's steps changed ({REGENERATE})"
    assert manifest["story_steps_sha256"] == hashlib.sha256(source.encode()).hexdigest(), \
        f"story.js's STEPS (settings, actions or words) changed since the frames were taken ({REGENERATE})"
    for step in manifest["steps"]:
        assert step["fragment"] == data.FRAME_FRAGMENT.format(n=step["n"])
        frame = FIGURES / "story" / step["frame"]
        assert hashlib.sha256(frame.read_bytes()).hexdigest() == step["frame_sha256"], f"{frame} is not the frame taken"
        assert frame.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert any(r["path"] != "/v1/models" for r in step["requests"]), step["n"]  # the step's action was recorded


def test_story_frames_show_what_the_service_answers_today(app_client):
    changed = []
    for step in frames_manifest()["steps"]:
        for request in step["requests"]:
            again = data.replay(app_client, request)
            if again != {k: request[k] for k in again}:
                changed.append(f"step {step['n']} ({step['id']}): {request['method']} {request['path']} {request['body']}: "
                               f"was {request['status']} {request['answer_sha256'][:12]}, now {again['status']} {again['answer_sha256'][:12]}")
    assert not changed, f"the service answers the story's requests differently ({REGENERATE}):\n" + "\n".join(changed)


IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc, figures", [
    ("analysis.md", ["figures/analysis-acceptance.svg", "figures/analysis-width.svg"]),
    ("grading.md", ["figures/grading-distribution.svg"]),
    ("inspector.md", [f"figures/story/step-{n}.png" for n in range(1, len(frames_manifest()["steps"]) + 1)]),
])
def test_the_docs_show_the_figures_by_relative_links(doc, figures):
    links = IMAGE.findall((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    assert set(figures) <= set(links), set(figures) - set(links)
    for link in links:
        if not link.startswith(("http://", "https://")):
            assert (ROOT / "docs" / link).is_file(), f"docs/{doc}: {link} does not exist"


def test_the_inspector_doc_lists_every_frame():
    text = (ROOT / "docs" / "inspector.md").read_text(encoding="utf-8")
    block = data.frames_markdown(frames_manifest())
    assert block in text, f"docs/inspector.md's list of story frames is not the manifest's ({REGENERATE})"


def _load_make():
    spec = importlib.util.spec_from_file_location("specdec_docs_figures_make", FIGURES / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _frames_fail(make, chromium):
    with pytest.raises(make.FramesFailed, match=f"chromium at {chromium} did not start"):
        make.frames(chromium)


def _exit_code(make, chromium):
    with pytest.raises(SystemExit) as ended:
        make.main(["--chromium", chromium])
    return ended.value.code


@pytest.mark.parametrize("chromium", ["/bin/false", "/bin/true", "/dev/null"])
def test_a_browser_that_does_not_start_keeps_the_frames_and_says_so(tmp_path, monkeypatch, capsys, chromium):
    """make.py with a chromium that exits, succeeds without a browser, or is no program: the
    frames in story/ (the ones the docs link) are left as they were, nothing half-taken is
    left beside them, and the command ends with one error line and status 1, not a
    traceback. It used to delete story/ first and then fail inside Playwright."""
    pytest.importorskip("playwright")
    make = _load_make()
    here = tmp_path / "figures"
    (here / "story").mkdir(parents=True)
    (here / "story" / "step-1.png").write_bytes(b"the committed frame")
    monkeypatch.setattr(make, "HERE", here)
    # in a thread of its own: Playwright's sync API refuses a thread with a running asyncio loop,
    # which pytest-playwright's fixtures leave in the main thread after a browser test
    with ThreadPoolExecutor(1) as thread:
        thread.submit(_frames_fail, make, chromium).result()
    assert [path.name for path in here.iterdir()] == ["story"]
    assert [path.name for path in (here / "story").iterdir()] == ["step-1.png"]
    assert (here / "story" / "step-1.png").read_bytes() == b"the committed frame"
    # the command: figures drawn (here none), then the frames' failure as one line
    monkeypatch.setattr(make, "figures", lambda: [])
    find_spec = importlib.util.find_spec  # matplotlib (the docs extra) may be absent here
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: find_spec("json") if name == "matplotlib" else find_spec(name, *args))
    with ThreadPoolExecutor(1) as thread:
        assert thread.submit(_exit_code, make, chromium).result() == 1
    err = capsys.readouterr().err
    assert re.match(rf"\S+: error: chromium at {chromium} did not start", err) and err.count("\n") == 1, err
    assert "Traceback" not in err and (here / "story" / "step-1.png").read_bytes() == b"the committed frame"
