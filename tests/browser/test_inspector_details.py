"""The inspector's smaller defects of issue 21, each with a test: grading a file that is not
JSON, a pasted link with an unknown draft, the custom model editor (size, the bad row marked
and scrolled to, Draft/Step unavailable while the settings are invalid), and a block selected
in the history highlighting its tokens and its draws."""

from __future__ import annotations

import json

import pytest
import requests
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.server]

TOY = {"vocab": ["A", "B", "C"], "start": [0.5, 0.3, 0.2],
       "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}}


def post(live_url: str, path: str, body) -> requests.Response:
    return requests.post(f"{live_url}{path}", json=body, timeout=60)


def drop(ins, name: str, text: str) -> None:
    handle = ins.page.evaluate_handle(
        """([name, text]) => { const dt = new DataTransfer();
                              dt.items.add(new File([text], name, {type: 'text/plain'})); return dt; }""", [name, text])
    ins.page.locator("#grade-drop").dispatch_event("drop", {"dataTransfer": handle})
    ins.wait_idle()


def test_grading_a_file_that_is_not_json_says_so_without_a_stray_null(inspector, live_url):
    ins = inspector.open()
    problem = requests.post(f"{live_url}/v1/grade", data=b"these are my notes", timeout=30,
                            headers={"Content-Type": "application/json"}).json()
    assert problem["status"] == 400 and "errors" not in problem
    drop(ins, "notes.txt", "these are my notes")
    report = ins.page.locator("#grade-report")
    expect(report.locator("p.grade-fail")).to_have_text(f"notes.txt cannot be graded: {problem['detail']}")
    assert "null" not in report.inner_text()
    assert "/v1/" not in report.inner_text()  # the route and status only in the technical details
    expect(report.locator("details.tech")).to_contain_text("POST /v1/grade answered 400")
    ins.assert_no_console_errors(allowed_statuses=(400,))


def test_grading_a_file_that_is_not_a_trace_lists_each_wrong_field_once(inspector, live_url):
    ins = inspector.open()
    problem = post(live_url, "/v1/grade", {"format": "specdec-trace/1"}).json()
    assert problem["status"] == 422 and problem["errors"]
    drop(ins, "empty.json", json.dumps({"format": "specdec-trace/1"}))
    report = ins.page.locator("#grade-report")
    count = len(problem["errors"])
    expect(report.locator("p.grade-fail")).to_have_text(
        f"empty.json cannot be graded: {count} field{' of the trace is' if count == 1 else 's of the trace are'} wrong:")
    expect(report.locator("ul li")).to_have_text([f"{e['pointer']}: {e['detail']}" for e in problem["errors"]])
    text = report.inner_text()
    assert "/v1/" not in text and all(text.count(e["detail"]) == 1 for e in problem["errors"])  # said once
    ins.assert_no_console_errors(allowed_statuses=(422,))


def test_a_pasted_link_with_an_unknown_draft_shows_the_error_at_the_field(inspector, live_url):
    ins = inspector.open("draft=nope&seed=1")
    problem = post(live_url, "/v1/draft", {"config": {"draft": "nope", "seed": 1}}).json()
    assert [e["pointer"] for e in problem["errors"]] == ["#/config/draft"]
    expect(ins.page.locator("#draft-error .error-line")).to_have_text([e["detail"] for e in problem["errors"]])
    expect(ins.page.locator("#draft-error details.tech code")).to_have_text([f"{e['pointer']}: {e['detail']}" for e in problem["errors"]])
    expect(ins.page.locator("#alert")).to_be_visible()
    for name in ("Draft", "Verify", "Step", "Run"):
        expect(ins.button(name)).to_be_disabled()
    ins.choose("Draft model", "biased")  # mended: the error goes, the buttons come back
    expect(ins.page.locator("#draft-error .error-line")).to_have_count(0)
    for name in ("Draft", "Step", "Run"):
        expect(ins.button(name)).to_be_enabled()
    ins.press("Step")
    assert ins.output() == ["A", "C"]
    ins.assert_no_console_errors(allowed_statuses=(422,))


def test_custom_model_editor_is_large_and_marks_the_bad_row(inspector, live_url):
    ins = inspector.open()
    ins.choose("Target", "custom")
    editor = ins.field("Custom target (JSON)")
    assert int(editor.get_attribute("rows")) >= 14
    assert editor.evaluate("el => getComputedStyle(el).resize") == "both"
    bad = json.loads(json.dumps(TOY))
    bad["next"]["C"] = [0.25, 0.25, 0.6]
    text = json.dumps(bad, indent=2)  # one number a line: the bad row is below the editor's first screen
    editor.fill(text)
    editor.dispatch_event("change")
    ins.wait_idle()
    problem = post(live_url, "/v1/draft", {"config": {"target": bad, "draft": "aligned", "seed": 0}}).json()
    assert [e["pointer"] for e in problem["errors"]] == ["#/config/target/next/C"]
    start = text.index('"C": [')
    line = text[:start].count("\n") + 1
    row = text[start:text.index("]", start) + 1]
    expect(ins.page.locator("#target-error .bad-row")).to_have_text(f"line {line}: {row}")
    assert editor.evaluate("el => [el.selectionStart, el.selectionEnd]") == [start, start + len(row)]
    assert editor.evaluate("el => el.scrollTop") > 0  # scrolled to the row
    expect(editor).to_have_attribute("aria-invalid", "true")
    for name in ("Draft", "Verify", "Step", "Run"):
        expect(ins.button(name)).to_be_disabled()
    expect(ins.button("Reset")).to_be_enabled()
    ins.screenshot("09-custom-bad-row")
    ins.assert_no_console_errors(allowed_statuses=(422,))


def test_selecting_a_block_highlights_its_tokens_and_its_draws(inspector, live_url):
    first = post(live_url, "/v1/step", {"config": {"draft": "biased", "seed": 1}}).json()
    ins = inspector.open("draft=biased&seed=1&blocks=2")
    expect(ins.page.locator("#output li.selected")).to_have_count(0)
    ins.page.locator("#history .history-item").first.click()
    ins.wait_idle()
    block = first["block"]
    expect(ins.page.locator("#output li.selected .token")).to_have_text(block["committed"])
    positions = [f"#{p}" for p in range(block["next_position"])]
    expect(ins.page.locator("#draws tbody tr.selected td:first-child")).to_have_text(positions)
    expect(ins.page.locator("#history .history-item").first).to_contain_text("(shown)")
    expect(ins.page.locator("#output li.selected .from").first).to_contain_text("block 1")
    ins.screenshot("10-history-selected-block")
    ins.assert_no_console_errors()


@pytest.mark.parametrize("fragment", ["draft=biased&seed=1&blocks=3", "story=9&draft=biased&seed=1&blocks=4&end=1"])
def test_a_block_selected_by_keyboard_keeps_the_focus(inspector, fragment):
    """The history is redrawn when a block is selected: the focus used to drop to the page, so a
    keyboard user could not go on to the next block; it stays on the selected block's button."""
    ins = inspector.open(fragment)
    items = ins.page.locator("#history .history-item")
    items.nth(1).focus()
    ins.page.keyboard.press("Enter")
    ins.wait_idle()
    expect(items.nth(1)).to_be_focused()
    expect(items.nth(1)).to_have_attribute("aria-pressed", "true")
    ins.page.keyboard.press("Tab")
    ins.page.keyboard.press("Enter")  # on to block 3
    ins.wait_idle()
    expect(items.nth(2)).to_be_focused()
    expect(items.nth(2)).to_contain_text("(shown)")
    ins.assert_no_console_errors()


def test_a_custom_model_that_is_not_json_is_located_by_line_and_column(inspector):
    """The browser's JSON error says "at position 27": on this page "position" is a token's place,
    so the page says where the mistake is as the editor's line and column instead."""
    ins = inspector.open()
    ins.choose("Target", "custom")
    ins.fill("Custom target (JSON)", '{\n  "vocab": ["A", "B"],\n  bad\n}')
    error = ins.page.locator("#target-error")
    expect(error).to_contain_text("not JSON")
    expect(error).to_contain_text("at line 3, column 3")
    assert "position" not in error.inner_text().lower()
    assert "position" not in ins.page.locator("#alert").inner_text().lower()
    ins.assert_no_console_errors()


def test_the_legend_explains_every_glyph_shown_in_the_output(inspector):
    """Tokens the target sampled alone (autoregressive mode, story step 5) carry the glyph \u25cf: the
    legend says what it means where such tokens are shown, and stays as it was elsewhere."""
    ins = inspector.open("draft=biased&seed=1&mode=autoregressive&blocks=2")
    output = ins.page.locator("#output .sampled-token")
    expect(output).to_have_count(2)
    glyph = output.first.evaluate("el => getComputedStyle(el, '::after').content")
    legend = ins.page.get_by_role("list", name="Legend")
    item = legend.locator("li").filter(has=ins.page.locator(".sampled-token"))
    expect(item).to_be_visible()
    expect(item).to_have_text("A sampled by the target alone")
    assert item.locator(".sampled-token").evaluate("el => getComputedStyle(el, '::after').content") == glyph
    ins.page.goto(f"{ins.base}/#draft=biased&seed=1&blocks=2")  # speculative: no such token, no such entry
    ins.page.reload()
    ins.wait_ready()
    ins.wait_idle()
    expect(ins.page.locator("#output .token")).not_to_have_count(0)
    expect(item).to_be_hidden()
    ins.assert_no_console_errors()


def test_settings_too_large_to_send_say_so_without_the_route(inspector, live_url):
    """A custom model past the body limit is refused with 413 and no field: the alert used to
    read '/v1/draft: The request body is larger ...'; it gives the service's reason alone, the
    route and status in technical details."""
    text = json.dumps({**TOY, "pad": "x" * 300_000})
    problem = requests.post(f"{live_url}/v1/draft", data=f'{{"config": {{"target": {text}}}}}', timeout=60,
                            headers={"Content-Type": "application/json"})
    assert problem.status_code == 413
    ins = inspector.open()
    ins.choose("Target", "custom")
    ins.page.locator("#target-json").evaluate(
        "(e, t) => { e.value = t; e.dispatchEvent(new Event('change', {bubbles: true})); }", text)
    ins.wait_idle()
    alert = ins.page.locator("#alert")
    expect(alert).to_be_visible()
    expect(alert.locator("span").first).to_have_text(problem.json()["detail"])
    assert "/v1/" not in alert.inner_text()
    expect(alert.locator("details.tech")).to_contain_text("413 from /v1/draft")
    ins.assert_no_console_errors(allowed_statuses=(413,))
