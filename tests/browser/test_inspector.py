"""The inspector (``GET /``) in a real browser against the live service.

The explainer's experiments click by click with SPEC section 4's numbers, the
reset rule of SPEC section 8, the URL fragment (reload, back/forward), the API's
field errors next to the field, grading a dropped trace, keyboard use, console
errors and axe-core. Expected values come from SPEC.md and from the API itself
(the page must show what the service answered, nothing of its own).
"""

from __future__ import annotations

import copy
import json
from urllib.parse import urlencode

import pytest
import requests
import yaml
from playwright.sync_api import expect

from browser.inspector_page import Inspector, serious_axe_violations
from conftest import SEED1

pytestmark = [pytest.mark.browser, pytest.mark.server]

BUTTONS = ("Draft", "Verify", "Step", "Run", "Reset")
FIELDS = ("Target", "Draft model", "Mode", "Width", "Seed", "Limit", "EOS")
REGIONS = ("Proposal", "Verification", "Correction", "Committed output", "Counters")
COUNTER_NAMES = ("target_passes", "draft_steps", "accepted", "rejected", "discarded", "bonus_tokens", "committed", "draws")


def documented_operations(live_url: str) -> set[tuple[str, str]]:
    """(method, path) of every operation of the served contract."""
    document = yaml.safe_load(requests.get(f"{live_url}/openapi.yaml", timeout=30).text)
    return {(method, path) for path, item in document["paths"].items() for method in item}


def api(live_url: str, path: str, body) -> dict:
    response = requests.post(f"{live_url}{path}", json=body, timeout=30)
    return response.json()


def biased_seed1(ins) -> None:
    """Set the explainer's second experiment with the form: biased draft, seed 1."""
    ins.open()
    ins.choose("Draft model", "biased")
    ins.fill("Seed", "1")


def verification_rows(ins) -> list[dict]:
    rows = ins.region("Verification").locator("li.verify")
    result = []
    for i in range(rows.count()):
        row = rows.nth(i)
        result.append({
            "token": row.locator(".verify-head .token").inner_text(),
            "verdict": row.locator(".verdict").inner_text(),
            "p": row.locator("dd.p").inner_text(),
            "q": row.locator("dd.q").inner_text(),
            "ratio": row.locator("dd.ratio").inner_text(),
            "u": row.locator("dd.u").inner_text(),
        })
    return result


def correction_bars(ins) -> list[tuple[str, str]]:
    items = ins.region("Correction").locator("ul.dist li")
    return [(items.nth(i).locator(".token").inner_text(), items.nth(i).locator(".num").inner_text())
            for i in range(items.count())]


def test_served_page_names_every_control_and_region(inspector):
    ins = inspector.open()
    for name in BUTTONS:
        expect(ins.button(name)).to_have_count(1)
    for label in FIELDS:
        expect(ins.field(label)).to_have_count(1)
    for name in REGIONS:
        region = ins.region(name)
        expect(region).to_have_count(1)
        expect(region.get_by_role("heading", name=name, exact=True)).to_be_visible()
    # a select is named by its label alone, not by its chosen option
    expect(ins.page.get_by_role("combobox", name="Draft model", exact=True)).to_have_value("aligned")
    ins.assert_no_console_errors()


def test_seed1_experiment_click_by_click(inspector, live_url):
    ins = inspector
    biased_seed1(ins)
    expect(ins.region("Committed output").locator("#output-summary")).to_contain_text("0 tokens committed")

    ins.press("Draft")
    expect(ins.region("Proposal").locator("#proposal-tokens .token")).to_have_text(["A", "A", "C"])
    assert ins.page.locator("#proposal-tokens .token.uncommitted").count() == 3
    expect(ins.region("Proposal")).to_contain_text("not committed")
    assert ins.output() == []
    assert ins.counters()["target_passes"] == "0" and ins.counters()["committed"] == "0"
    draws = ins.page.locator("#draws tbody tr.pending td:nth-child(2)").all_inner_texts()
    assert draws == ["0.5666", "0.7458", "0.9710"]  # SPEC section 2's seed-1 test vector, 4 decimals (draws always with 4)
    ins.page.get_by_text("Raw draws (technical)").click()  # the hex is a technical detail, in a closed <details>
    hexes = ins.page.locator("#raw-draws tbody tr.pending td:nth-child(2)").all_inner_texts()
    assert hexes[0] == "910a2dec89025cc1"  # docs/trace-format.md: seed 1, draw 0
    ins.screenshot("01-seed1-draft")

    ins.press("Verify")
    # the verdict is brought into view and focused, and the status line (role=status) says it
    expect(ins.page.locator(":focus")).to_have_id("verification-summary")
    expect(ins.page.locator(":focus")).to_be_in_viewport()
    expect(ins.page.locator("#status")).to_have_text(
        "Verified. Block 1: A accepted (u 0.4444 < p/q 0.625), A rejected (u 0.4443 \u2265 p/q 0.25); correction C. Committed A C.")
    rows = verification_rows(ins)
    assert rows == [
        {"token": "A", "verdict": "\u2713 accepted", "p": "0.5", "q": "0.8", "ratio": "0.625", "u": "0.4444"},
        {"token": "A", "verdict": "\u2717 rejected", "p": "0.2", "q": "0.8", "ratio": "0.25", "u": "0.4443"},
    ]
    assert correction_bars(ins) == [("A", "0"), ("B", "0.75"), ("C", "0.25")]
    expect(ins.region("Correction").locator("ul.dist li.chosen .token")).to_have_text("C")
    expect(ins.region("Correction").locator(".correction-choice")).to_contain_text("u 0.7629 (draw #5)")
    expect(ins.region("Correction").locator(".discarded-list del .token")).to_have_text(["C"])
    expect(ins.region("Correction").locator(".no-bonus")).to_contain_text("a rejection; the correction token ends the block")
    assert ins.output() == ["A", "C"]
    expect(ins.region("Committed output").locator(".from")).to_have_text(["block 1, accepted", "block 1, correction"])
    expect(ins.region("Committed output").locator("#output-summary")).to_contain_text("6 draws used (next: draw #6)")
    assert ins.counters()["draws"] == "6" and ins.counters()["committed_per_pass"] == "2"
    ins.screenshot("02-seed1-verify")

    ins.press("Run")
    trace = api(live_url, "/v1/runs", SEED1)
    assert ins.output() == ["A", "C", "B", "A", "B", "A", "B", "B"] == trace["output"]
    counters = ins.counters()
    assert {name: counters[name] for name in COUNTER_NAMES} == {k: str(v) for k, v in trace["counters"].items()}
    assert counters["committed_per_pass"] == "2"  # 8 committed / 4 passes
    expect(ins.region("Committed output").locator("#output-summary")).to_contain_text("21 draws used")
    expect(ins.region("Committed output").locator("#output-summary")).to_contain_text("session done (limit)")
    expect(ins.page.locator("#history .history-item")).to_have_count(4)
    for name in ("Draft", "Verify", "Step", "Run"):
        expect(ins.button(name)).to_be_disabled()
    ins.screenshot("03-seed1-run")

    # the block history brings block 1 back
    ins.page.locator("#history .history-item").first.click()
    ins.wait_idle()
    assert verification_rows(ins)[1]["verdict"] == "\u2717 rejected"
    expect(ins.page.locator("#block-caption")).to_contain_text("Showing block 1 of 4")
    calls = ins.page.locator("#api-log li code").all_text_contents()
    assert calls[:3] == ["POST /v1/runs", "POST /v1/verify", "POST /v1/draft"]  # newest first
    ins.assert_only_public_api(documented_operations(live_url))
    ins.assert_no_console_errors()


def test_aligned_seed0_bonus_and_limit_one(inspector, live_url):
    ins = inspector.open()  # the defaults: toy target, aligned draft, width 3, seed 0
    ins.press("Step")
    block = api(live_url, "/v1/step", {"config": {"draft": "aligned", "seed": 0}})["block"]
    assert len(block["committed"]) == 4 and block["bonus"] is not None  # SPEC section 4, last paragraph
    assert ins.output() == block["committed"] == ["C", "B", "A", "A"]
    assert [r["verdict"] for r in verification_rows(ins)] == ["\u2713 accepted"] * 3
    assert [r["ratio"] for r in verification_rows(ins)] == ["1"] * 3
    expect(ins.region("Correction").locator(".bonus .token")).to_have_text("A")
    expect(ins.region("Correction")).to_contain_text("No rejection: no correction.")
    assert ins.counters()["bonus_tokens"] == "1" and ins.counters()["committed_per_pass"] == "4"
    ins.screenshot("04-aligned-seed0-bonus")

    ins.fill("Limit", "1")
    expect(ins.page.locator("#status")).to_contain_text("new session")
    ins.press("Step")
    assert ins.output() == ["C"]
    expect(ins.region("Correction").locator(".no-bonus")).to_have_text(
        "No bonus: the output reached the limit, so there is no room for a bonus token.")
    expect(ins.region("Committed output").locator("#output-summary")).to_contain_text("session done (limit)")
    ins.screenshot("05-limit1-no-bonus")
    ins.assert_no_console_errors()


def test_seed_change_resets_and_the_url_reproduces_the_view(inspector, live_url):
    ins = inspector
    biased_seed1(ins)
    ins.press("Step")
    ins.press("Step")
    assert ins.output() == ["A", "C", "B", "A", "B"]
    two_blocks = ins.page.url

    ins.fill("Seed", "2")
    assert ins.output() == []
    assert set(ins.counters()[name] for name in COUNTER_NAMES) == {"0"}
    expect(ins.page.locator("#status")).to_contain_text("Settings changed: new session")
    expect(ins.page.locator("#history .history-item")).to_have_count(0)

    ins.page.go_back()
    ins.wait_idle()
    expect(ins.field("Seed")).to_have_value("1")
    expect(ins.page.locator("#history .history-item")).to_have_count(2)
    assert ins.output() == ["A", "C", "B", "A", "B"]
    ins.page.go_back()
    ins.wait_idle()
    expect(ins.page.locator("#history .history-item")).to_have_count(1)
    assert ins.output() == ["A", "C"]
    ins.page.go_forward()
    ins.wait_idle()
    expect(ins.page.locator("#history .history-item")).to_have_count(2)

    ins.page.reload()
    ins.wait_ready()
    assert ins.page.url == two_blocks
    assert ins.output() == ["A", "C", "B", "A", "B"]
    second = api(live_url, "/v1/step", api(live_url, "/v1/step", SEED1)["state"])["state"]
    assert ins.counters()["draws"] == str(second["counters"]["draws"]) == "13"
    expect(ins.page.locator("#output-summary")).to_contain_text(f"{second['position']} draws used")

    # a pasted link in a fresh tab: a pending proposal and a selected block come back too
    ins.press("Draft")
    ins.page.locator("#history .history-item").first.click()
    ins.wait_idle()
    link = ins.page.url
    other = ins.page.context.new_page()
    fresh = Inspector(other, ins.base, ins.artefacts)
    other.goto(link)
    fresh.wait_ready()
    assert fresh.output() == ["A", "C", "B", "A", "B"]
    expect(other.locator("#block-caption")).to_contain_text("Showing block 1 of 2")
    expect(other.locator("#draws tbody tr.pending")).to_have_count(3)
    other.close()
    fresh.assert_no_console_errors()
    ins.assert_no_console_errors()


def test_custom_model_error_is_shown_next_to_the_field(inspector, live_url):
    ins = inspector.open()
    ins.choose("Target", "custom")
    editor = ins.field("Custom target (JSON)")
    expect(editor).to_be_visible()
    bad = '{"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.3], "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}'
    editor.fill(bad)
    editor.dispatch_event("change")
    ins.wait_idle()
    problem = api(live_url, "/v1/draft", {"config": {"target": json.loads(bad), "draft": "aligned", "seed": 0}})
    assert problem["status"] == 422
    expected = [f"{e['pointer']}: {e['detail']}" for e in problem["errors"]]
    assert expected == ["#/config/target/start: must sum to 1 within 1e-9, not 1.1"]
    # plain words at the field; the JSON pointer in its technical details
    expect(ins.page.locator("#target-error .error-line")).to_have_text([e["detail"] for e in problem["errors"]])
    expect(ins.page.locator("#target-error details.tech code")).to_have_text(expected)
    expect(editor).to_have_attribute("aria-invalid", "true")
    # the error describes the field (assistive technology reads it with the field)
    assert "target-error" in editor.get_attribute("aria-describedby")
    ins.screenshot("06-custom-target-error")

    editor.fill("{not json")
    editor.dispatch_event("change")
    ins.wait_idle()
    expect(ins.page.locator("#target-error")).to_contain_text("not JSON")
    api_calls = lambda: [url for _, url in ins.requests if "/v1/" in url]  # not the page's own files (the icon comes late)
    sent = api_calls()
    for name in ("Draft", "Step", "Run"):  # nothing can be sent until the model is mended
        expect(ins.button(name)).to_be_disabled()
    ins.button("Step").click(force=True)  # pressed anyway: the same error, no request
    ins.wait_idle()
    expect(ins.page.locator("#target-error")).to_contain_text("not JSON")
    expect(ins.page.locator("#alert")).to_contain_text("not JSON")
    assert api_calls() == sent and ins.output() == []

    good = bad.replace("[0.5, 0.3, 0.3]", "[0.5, 0.3, 0.2]")
    editor.fill(good)
    editor.dispatch_event("change")
    ins.wait_idle()
    expect(ins.page.locator("#target-error .error-line")).to_have_count(0)
    ins.press("Step")
    assert ins.output() == ["C", "B", "A", "A"]  # the toy's table, typed in: the same session
    ins.assert_no_console_errors(allowed_statuses=(422,))


def test_dropped_faulty_trace_shows_first_divergence(inspector, live_url):
    ins = inspector.open()
    trace = api(live_url, "/v1/runs", SEED1)
    faulty = copy.deepcopy(trace)
    faulty["blocks"][2]["committed"][0] = "C"  # planted: block 3 commits C where the rules give A
    report = api(live_url, "/v1/grade", faulty)
    divergence = report["first_divergence"]
    assert (divergence["block"], divergence["path"]) == (2, "#/blocks/2/committed/0")

    data = json.dumps(faulty)
    handle = ins.page.evaluate_handle(
        """(text) => { const dt = new DataTransfer();
                      dt.items.add(new File([text], 'student.json', {type: 'application/json'}));
                      return dt; }""", data)
    ins.page.locator("#grade-drop").dispatch_event("drop", {"dataTransfer": handle})
    ins.wait_idle()
    expect(ins.page.locator("#grade-report .first-divergence")).to_have_text(
        'First divergence in block 3: #/blocks/2/committed/0 expected "A", got "C" (check output, value).')
    expect(ins.page.locator("#grade-report")).to_contain_text(f"score {round(report['score'] * 100, 1):g}%")
    expect(ins.page.locator("#grade-report .checks tr.fail th")).to_have_text(
        [c["name"] for c in report["checks"] if not c["passed"]])
    # the block view opens the reference session of the trace's settings at that block
    expect(ins.field("Draft model")).to_have_value("biased")
    expect(ins.field("Seed")).to_have_value("1")
    expect(ins.page.locator("#history li.divergent .history-item")).to_contain_text("Block 3:")
    expect(ins.page.locator("#history li.divergent .history-item")).to_have_attribute("aria-pressed", "true")
    expect(ins.page.locator("#divergence")).to_be_visible()
    expect(ins.page.locator("#divergence")).to_contain_text("block 3: #/blocks/2/committed/0 expected \"A\", got \"C\"")
    expect(ins.page.locator("#grade-report .submitted li.divergent")).to_contain_text("Block 3:")
    # the report stands below the page's views: it is brought into view, its heading focused
    expect(ins.page.locator("#grade-report-heading")).to_be_focused()
    expect(ins.page.locator("#grade-report-heading")).to_be_in_viewport()
    ins.screenshot("07-grade-first-divergence")

    # the same file through the file chooser, and a correct trace passes
    ins.page.locator("#grade-file").set_input_files(files=[{
        "name": "reference.json", "mimeType": "application/json", "buffer": json.dumps(trace).encode()}])
    ins.wait_idle()
    expect(ins.page.locator("#grade-report .grade-pass")).to_contain_text("Passed")
    expect(ins.page.locator("#divergence")).to_be_hidden()
    ins.assert_only_public_api(documented_operations(live_url))
    ins.assert_no_console_errors()


def test_download_trace_is_the_runs_trace(inspector, live_url):
    ins = inspector
    biased_seed1(ins)
    with ins.page.expect_download() as info:
        ins.button("Download trace").click()
    download = info.value
    assert download.suggested_filename == "specdec-trace-seed1.json"
    saved = json.loads(open(download.path(), encoding="utf-8").read())
    assert saved == api(live_url, "/v1/runs", SEED1)
    ins.assert_no_console_errors()


def test_keyboard_alone_drives_the_session(inspector):
    ins = inspector.open()
    page = ins.page
    ins.field("Draft model").focus()
    page.keyboard.press("ArrowDown")  # aligned -> biased
    ins.wait_idle()
    expect(ins.field("Draft model")).to_have_value("biased")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(ins.field("Width")).to_be_focused()
    page.keyboard.press("Tab")
    expect(ins.field("Seed")).to_be_focused()
    page.keyboard.type("1")  # 0 -> "01"
    page.keyboard.press("Control+a")
    page.keyboard.type("1")
    page.keyboard.press("Tab")  # leaving the field commits the change
    ins.wait_idle()
    expect(ins.field("Seed")).to_have_value("1")
    expect(ins.field("Limit")).to_be_focused()
    page.keyboard.press("Tab")
    expect(ins.field("EOS")).to_be_focused()
    page.keyboard.press("Tab")  # the folded sampling parameters (SPEC 9): their summary, then on
    expect(page.locator("#sampling-details > summary")).to_be_focused()
    page.keyboard.press("Tab")
    expect(ins.button("Draft")).to_be_focused()
    page.keyboard.press("Enter")
    ins.wait_idle()
    expect(page.locator("#proposal-tokens .token")).to_have_text(["A", "A", "C"])
    ins.button("Verify").focus()
    page.keyboard.press("Space")
    ins.wait_idle()
    assert ins.output() == ["A", "C"]
    ins.button("Step").focus()
    page.keyboard.press("Enter")
    ins.wait_idle()
    assert ins.output() == ["A", "C", "B", "A", "B"]
    page.locator("#history .history-item").first.focus()
    page.keyboard.press("Enter")
    ins.wait_idle()
    expect(page.locator("#block-caption")).to_contain_text("Showing block 1 of 2")
    ins.assert_no_console_errors()


def test_accepted_and_rejected_are_said_in_text(inspector):
    ins = inspector
    biased_seed1(ins)
    ins.press("Step")
    verdicts = ins.region("Verification").locator(".verdict").all_inner_texts()
    assert verdicts == ["\u2713 accepted", "\u2717 rejected"]
    bars = ins.region("Verification").get_by_role("img")
    assert bars.nth(0).get_attribute("aria-label") == "ratio 0.625 filled on a 0 to 1 bar, u 0.4444 marked: accepted"
    ins.assert_no_console_errors()


EOS_TARGET = {"vocab": ["A", "B", "E"], "start": [0.5, 0.3, 0.2],
              "next": {"A": [0.2, 0.5, 0.3], "B": [0.5, 0.2, 0.3], "E": [0.4, 0.4, 0.2]}}
EOS_DRAFT = {"vocab": ["A", "B", "E"], "start": [0.4, 0.4, 0.2],
             "next": {"A": [0.3, 0.3, 0.4], "B": [0.3, 0.3, 0.4], "E": [0.4, 0.4, 0.2]}}


def test_custom_models_with_eos_from_a_link(inspector, live_url):
    """Custom target and draft travel in the fragment; an accepted EOS ends the
    session without a bonus (SPEC section 6)."""
    config = {"target": EOS_TARGET, "draft": EOS_DRAFT, "eos": "E", "seed": 3}
    ins = inspector.open(urlencode({"target": json.dumps(EOS_TARGET), "draft": json.dumps(EOS_DRAFT),
                                    "eos": "E", "seed": "3"}))
    expect(ins.field("Target")).to_have_value("custom")
    expect(ins.field("Custom draft (JSON)")).to_be_visible()
    ins.press("Step")
    block = api(live_url, "/v1/step", {"config": config})["block"]
    assert (block["committed"], block["no_bonus"], block["done"]) == (["A", "E"], "eos", "eos")
    assert ins.output() == ["A", "E"]
    expect(ins.region("Correction").locator(".no-bonus")).to_have_text("No bonus: an accepted EOS ends the session.")
    expect(ins.page.locator("#output-summary")).to_contain_text("session done (eos)")
    ins.assert_no_console_errors()


def test_greedy_and_autoregressive_blocks(inspector, live_url):
    ins = inspector.open(urlencode({"draft": "biased", "seed": "1", "mode": "greedy"}))
    ins.press("Step")
    heads = ins.region("Verification").locator(".explain").all_inner_texts()
    assert heads == ["matches the target's argmax", "differs from the target's argmax"]  # A at the start, A after A (SPEC 5)
    assert [r["ratio"] for r in verification_rows(ins)] == ["none (greedy)"] * 2
    expect(ins.region("Correction").locator(".correction-choice")).to_contain_text("no draw (argmax)")
    ins.press("Run")
    trace = api(live_url, "/v1/runs", {"config": {"draft": "biased", "seed": 1, "mode": "greedy"}})
    assert ins.output() == trace["output"] == ["A", "B", "A", "B", "A", "B", "A", "B"]
    assert ins.counters()["draws"] == "0"

    ins.choose("Mode", "autoregressive")
    ins.press("Draft")
    expect(ins.region("Proposal")).to_contain_text("nothing is drafted")
    ins.press("Verify")
    trace = api(live_url, "/v1/runs", {"config": {"draft": "biased", "seed": 1, "mode": "autoregressive"}})
    expect(ins.region("Verification").locator(".verify-head .token")).to_have_text(trace["output"][0])
    ins.press("Run")
    assert ins.output() == trace["output"]
    assert ins.counters()["committed_per_pass"] == "1"
    ins.assert_no_console_errors()


def test_analysis_degrades_when_the_route_is_missing(inspector):
    """A service without POST /v1/analysis (404) gets one sentence, no broken panel."""
    ins = inspector
    ins.page.route("**/v1/analysis", lambda route: route.fulfill(
        status=404, content_type="application/problem+json",
        body='{"type": "about:blank", "title": "Not Found", "status": 404, "detail": "No such resource."}'))
    ins.open()
    ins.press("Analyse")
    expect(ins.region("Analysis")).to_contain_text("This service has no analysis route")
    ins.assert_no_console_errors(allowed_statuses=(404,))


AXE_STATES = {
    "initial": lambda ins: None,
    "verified": lambda ins: (biased_seed1(ins), ins.press("Step")),
    "verified-narrow": lambda ins: (biased_seed1(ins), ins.press("Step")),  # a 420 px wide window
    "run": lambda ins: (biased_seed1(ins), ins.press("Run")),
    "custom-error": lambda ins: (ins.choose("Target", "custom"), ins.field("Custom target (JSON)").fill('{"vocab": ["A"]}'),
                                 ins.field("Custom target (JSON)").dispatch_event("change"), ins.wait_idle()),
}


@pytest.mark.parametrize("state", sorted(AXE_STATES))
def test_axe_core_finds_no_serious_violation(browser, live_url, artefacts_dir, state):
    """axe-core (vendored, tests/browser/vendor/axe.min.js) in each main state, in a context
    that bypasses the page's Content-Security-Policy (it forbids injected scripts)."""
    width = 420 if state.endswith("narrow") else 1300
    context = browser.new_context(bypass_csp=True, viewport={"width": width, "height": 1000})
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open()
        AXE_STATES[state](ins)
        assert serious_axe_violations(ins.page) == []
    finally:
        context.close()


def test_axe_check_fails_on_a_planted_violation(browser, live_url, artefacts_dir):
    """The check above can fail: a button without a name planted in the page is a critical violation."""
    context = browser.new_context(bypass_csp=True)
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open()
        ins.page.evaluate("document.querySelector('.toolbar').append(document.createElement('button'))")
        assert [(rule, impact) for rule, impact, _ in serious_axe_violations(ins.page)] == [("button-name", "critical")]
    finally:
        context.close()


def test_hostile_links_are_bounded_and_explained(inspector, live_url):
    """A pasted link is input too: a block count past the session's end replays only
    until the end (SPEC section 6), a bad setting shows the API's error next to its
    field, a custom model that is not JSON says so; no console error but the 422s."""
    ins = inspector.open(urlencode({"draft": "biased", "seed": "1", "limit": "2", "blocks": "100000"}))
    trace = api(live_url, "/v1/runs", {"config": {"draft": "biased", "seed": 1, "limit": 2}})
    assert ins.output() == trace["output"] == ["B", "C"]
    steps = [url for _, url in ins.requests if url.endswith("/v1/step")]
    assert len(steps) == len(trace["blocks"]) == 2  # the session ends after two blocks; no more is asked for
    expect(ins.page.locator("#output-summary")).to_contain_text("session done (limit)")

    ins.open(urlencode({"draft": "biased", "seed": "1", "width": "abc", "blocks": "3"}))
    problem = api(live_url, "/v1/step", {"config": {"draft": "biased", "seed": 1, "width": "abc"}})
    expect(ins.page.locator("#width-error .error-line")).to_have_text([e["detail"] for e in problem["errors"]])
    expect(ins.page.locator("#width-error details.tech code")).to_have_text(
        [f"{e['pointer']}: {e['detail']}" for e in problem["errors"]])
    expect(ins.field("Width")).to_have_attribute("aria-invalid", "true")
    assert ins.output() == []

    ins.open(urlencode({"target": "{oops", "seed": "1"}))
    expect(ins.page.locator("#target-error")).to_contain_text("not JSON")
    expect(ins.field("Custom target (JSON)")).to_have_value("{oops")
    ins.assert_no_console_errors(allowed_statuses=(422,))
