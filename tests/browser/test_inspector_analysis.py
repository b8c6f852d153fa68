"""The inspector's Analysis panel (``POST /v1/analysis``, issue 12) in a real browser.

Hand values of the toy with the biased draft (alpha 7/10 at the empty prefix,
the residuals of SPEC section 4), the naive rule's total variation, and every
other figure as the live service computes it: the panel must show the API's
numbers, nothing of its own.
"""

from __future__ import annotations

import json

import pytest
import requests
from playwright.sync_api import expect

from browser.inspector_page import Inspector, fmt, serious_axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.server]
COUNTER_NAMES = ("target_passes", "draft_steps", "accepted", "rejected", "discarded", "bonus_tokens", "committed", "draws")


def analysis(live_url: str, config: dict, draft_cost: str, widths=range(1, 9)) -> dict:
    body = f'{{"config": {json.dumps(config)}, "widths": {list(widths)}, "draft_cost": {draft_cost}}}'
    response = requests.post(f"{live_url}/v1/analysis", data=body, headers={"Content-Type": "application/json"}, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def analyse(ins, cost: str | None = None) -> None:
    if cost is not None:
        ins.page.locator("#draft-cost").fill(cost)
        ins.page.locator("#draft-cost").dispatch_event("change")
        ins.wait_idle()
    ins.press("Analyse")
    expect(ins.region("Analysis").locator("table.analysis-contexts")).to_be_visible()


def table(ins, selector: str) -> list[list[str]]:
    rows = ins.region("Analysis").locator(f"{selector} tbody tr")
    return [rows.nth(i).locator("th, td").all_inner_texts() for i in range(rows.count())]


def test_biased_draft_analysis_with_a_draft_cost(inspector, live_url):
    ins = inspector.open("draft=biased&seed=1")
    analyse(ins)
    contexts = table(ins, "table.analysis-contexts")
    assert contexts == [  # SPEC sections 1 and 4: alpha = sum of min(p, q); the residual max(p - q, 0), normalised
        ["empty prefix", "0.7", "7/10", "0 / 0.5 / 0.5"],
        ["A", "0.4", "2/5", "0 / 0.75 / 0.25"],
        ["B", "0.75", "3/4", "0 / 0 / 1"],
        ["C", "0.45", "9/20", "0 / 0.1818 / 0.8182"],
    ]
    result = analysis(live_url, {"draft": "biased", "seed": 1}, "0")
    expected = table(ins, "table.analysis-expected")
    assert expected == [[name, fmt(result["expected"]["counters"][name]), result["expected"]["counters_exact"][name]]
                        for name in COUNTER_NAMES]
    assert expected[COUNTER_NAMES.index("committed")][1:] == ["8", "8"]  # every session commits the limit
    compare = table(ins, "table.analysis-compare")
    assert compare[0] == ["committed tokens per pass", fmt(result["expected"]["committed_per_pass"]),
                          fmt(result["leviathan"]["tokens_per_pass"])]
    assert compare[1] == ["speedup", fmt(result["expected"]["speedup"]), fmt(result["leviathan"]["speedup"])]
    # speculative sampling restores the target distribution exactly; the naive correction does not
    expect(ins.region("Analysis").locator(".analysis-tv .tv")).to_have_text("0 (0)")
    naive = result["naive"]
    expect(ins.region("Analysis").locator(".analysis-tv .naive-tv")).to_have_text(f"{fmt(naive['tv'])} ({naive['tv_exact']})")
    # no draft cost: a longer draft never loses; widths 7 and 8 tie at limit 8 and the smaller is named
    assert result["best_width"] == 7
    expect(ins.region("Analysis").get_by_role("img", name="Committed tokens per pass and speedup against width; best width 7")).to_be_visible()

    analyse(ins, "0.05")
    costly = analysis(live_url, {"draft": "biased", "seed": 1}, "0.05")
    assert costly["best_width"] == 3  # drafting costs 1/20 of a pass: neither width 1 nor the largest
    sweep = table(ins, "table.analysis-sweep")
    assert sweep == [[str(s["width"]), fmt(s["committed_per_pass"]), fmt(s["speedup"]), "best width" if s["width"] == 3 else ""]
                     for s in costly["sweep"]]
    expect(ins.region("Analysis").locator("table.analysis-sweep tr.best th")).to_have_text("3")
    expect(ins.region("Analysis").get_by_role("img", name="Committed tokens per pass and speedup against width; best width 3")).to_be_visible()
    ins.screenshot("08-analysis-biased-cost-0.05")
    # the analysis and its draft cost are part of the URL: a reload shows them again
    assert "analysis=1" in ins.page.url and "cost=0.05" in ins.page.url
    ins.page.reload()
    ins.wait_ready()
    expect(ins.page.locator("#draft-cost")).to_have_value("0.05")
    expect(ins.region("Analysis").locator("table.analysis-sweep tr.best th")).to_have_text("3")

    ins.choose("Draft model", "aligned")
    expect(ins.region("Analysis")).to_contain_text("The settings changed: press Analyse")
    analyse(ins)
    assert [row[1:] for row in table(ins, "table.analysis-contexts")] == [["1", "1", "none (alpha = 1)"]] * 4
    ins.assert_no_console_errors()


def test_autoregressive_analysis_has_no_closed_form(inspector, live_url):
    ins = inspector.open("draft=biased&seed=1&mode=autoregressive")
    analyse(ins)
    compare = table(ins, "table.analysis-compare")
    assert compare[0][2] == "none" and compare[2][2] == "no closed form: nothing is drafted"
    assert compare[0][1] == "1"  # one token per target pass
    ins.assert_no_console_errors()


def test_axe_core_finds_no_serious_violation_in_the_analysis(browser, live_url, artefacts_dir):
    context = browser.new_context(bypass_csp=True, viewport={"width": 1300, "height": 1000})
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open("draft=biased&seed=1")
        analyse(ins, "0.05")
        assert serious_axe_violations(ins.page) == []
    finally:
        context.close()


def test_draft_cost_moved_by_keyboard_during_a_request(inspector, live_url):
    """The figures always belong to the slider's value: three key presses while the analysis
    requests are held (by the test, not by time) leave the figures of the last value, not of an
    older one, and none is dropped."""
    ins = inspector.open("draft=biased&seed=1")
    analyse(ins)
    held = []
    ins.page.route("**/v1/analysis", lambda route: held.append(route))
    slider = ins.page.locator("#draft-cost")
    slider.focus()
    for count in (1, 2, 3):
        ins.page.keyboard.press("ArrowRight")  # 0.01, 0.02, 0.03: each a change while the last is unanswered
        for _ in range(400):  # until the page's request is held (a bounded wait, never an assertion on time)
            if len(held) >= count:
                break
            ins.page.wait_for_timeout(50)
        assert len(held) == count, f"the change to {count / 100} sent no request while the previous one was unanswered"
    expect(slider).to_have_value("0.03")
    for route in held:  # the older requests were aborted by the page: continuing them may fail
        try:
            route.continue_()
        except Exception:  # noqa: BLE001 - an aborted request has nothing to continue
            pass
    ins.wait_idle()
    expect(ins.region("Analysis").locator(".analysis-view")).to_have_attribute("data-cost", "0.03")
    expected = analysis(live_url, {"draft": "biased", "seed": 1}, "0.03")
    assert table(ins, "table.analysis-sweep") == [
        [str(s["width"]), fmt(s["committed_per_pass"]), fmt(s["speedup"]), "best width" if s["width"] == expected["best_width"] else ""]
        for s in expected["sweep"]]
    expect(ins.region("Analysis").locator(".analysis-verdict")).to_contain_text(
        f"draft cost 0.03: {fmt(expected['expected']['committed_per_pass'])} tokens per target pass, speedup {fmt(expected['expected']['speedup'])}")
    assert "cost=0.03" in ins.page.url
    ins.assert_no_console_errors()


def test_speedup_caveat_exact_fractions_second_and_both_lines_at_cost_0(inspector, live_url):
    ins = inspector.open("draft=biased&seed=1")
    analyse(ins)
    region = ins.region("Analysis")
    expect(region.locator(".caveat")).to_contain_text(
        "The draft's cost, batching and the hardware decide the real speed: four tokens per pass is not four times faster.")
    result = analysis(live_url, {"draft": "biased", "seed": 1}, "0")
    row = region.locator("table.analysis-expected tr[data-counter='draws'] td")
    expect(row).to_have_text([fmt(result["expected"]["counters"]["draws"]), result["expected"]["counters_exact"]["draws"]])
    size = "el => parseFloat(getComputedStyle(el).fontSize)"
    assert row.nth(1).locator("code").evaluate(size) < row.nth(0).evaluate(size)  # the decimal first, the fraction smaller
    assert row.nth(1).evaluate("el => getComputedStyle(el).color") != row.nth(0).evaluate("el => getComputedStyle(el).color")
    # at cost 0 speedup equals committed per pass at every width: the lines coincide, both stay visible
    assert all(s["speedup"] == s["committed_per_pass"] for s in result["sweep"])
    cpp, speedup = region.locator("polyline.series-cpp"), region.locator("polyline.series-speedup")
    assert cpp.get_attribute("points") == speedup.get_attribute("points")
    style = "(el, name) => getComputedStyle(el)[name]"
    assert speedup.evaluate(style, "strokeDasharray") not in ("none", "")
    assert float(cpp.evaluate(style, "strokeWidth").rstrip("px")) > float(speedup.evaluate(style, "strokeWidth").rstrip("px"))
    assert region.locator("rect.series-speedup").count() == region.locator("circle.series-cpp").count() == 8  # other marks
    expect(region.locator("figcaption")).to_contain_text("at draft cost 0 the two lines coincide")
    ins.assert_no_console_errors()


def test_draft_cost_slider_keeps_the_keyboard_focus(inspector, live_url):
    """Keyboard-only use: after each arrow key's analysis is answered, the focus stays on the
    slider (the next arrow key moves it again) and the figures are those of its value. The focus
    used to jump to the figures' summary, so the second key press no longer moved the slider."""
    ins = inspector.open("draft=biased&seed=1")
    analyse(ins)
    slider = ins.page.locator("#draft-cost")
    slider.focus()
    for value in ("0.01", "0.02", "0.03"):
        ins.page.keyboard.press("ArrowRight")
        ins.wait_idle()
        expect(ins.region("Analysis").locator(".analysis-view")).to_have_attribute("data-cost", value)
        expect(slider).to_be_focused()
        expect(slider).to_have_value(value)
    expected = analysis(live_url, {"draft": "biased", "seed": 1}, "0.03")
    expect(ins.region("Analysis").locator(".analysis-verdict")).to_contain_text(f"speedup {fmt(expected['expected']['speedup'])}")
    ins.assert_no_console_errors()


def test_an_analysis_of_refused_settings_says_which_setting_in_plain_words(inspector, live_url):
    """Analyse with a refused setting used to print the route and each JSON pointer twice
    ("/v1/analysis: 1 field is invalid: #/config/width: ... #/config/width: ..."): it names the
    setting by its label, once; the route, status and pointer are in technical details."""
    ins = inspector.open("width=0")
    problem = requests.post(f"{live_url}/v1/analysis", json={"config": {"width": 0}, "widths": [1], "draft_cost": 0},
                            timeout=60).json()
    detail = [e["detail"] for e in problem["errors"] if e["pointer"] == "#/config/width"][0]
    ins.button("Analyse").click()
    ins.wait_idle()
    alert = ins.region("Analysis").locator("#analysis-result p.alert")
    expect(alert).to_have_text(f"The analysis failed: these settings are refused:Width: {detail}")
    text = ins.region("Analysis").locator("#analysis-result").inner_text()
    assert "/v1/" not in text and "#/" not in text and text.count(detail) == 1
    expect(ins.region("Analysis").locator("#analysis-result details.tech")).to_contain_text("POST /v1/analysis answered 422")
    ins.assert_no_console_errors(allowed_statuses=(422,))
