"""Sampling parameters (SPEC section 9) in the inspector, in a real browser: the folded "Sampling
parameters" fields (Temperature, Top-k, Top-p, Min-p, Draft rows) are settings like the others
(sent as the config's ``sampling`` object as written, kept in the URL only when set, a 422 shown
at the field it names), and wherever the page shows the rows p and q it shows the models' raw rows
beside the processed ones the service used. SPEC 9's worked example (toy, biased, T 0.5, top-k 2,
top-p 0.8): at the empty prefix p' = [25/34, 9/34, 0] and q' = [1, 0, 0]; with draft rows raw the
proposal is drawn from q = [0.8, 0.15, 0.05]."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from browser.inspector_page import Inspector, fmt, post, serious_axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.server]

SAMPLING = {"temperature": 0.5, "top_k": 2, "top_p": 0.8}
"""SPEC 9's worked example."""
LINK = "draft=biased&seed=1&temperature=0.5&top_k=2&top_p=0.8"
RAW_P, RAW_Q = ["0.5", "0.3", "0.2"], ["0.8", "0.15", "0.05"]
"""The toy's and the biased draft's start rows (SPEC 1), as the page writes them."""


def rows(scope, page) -> dict[str, list[str]]:
    """The labeled rows of a p/q table: name -> the numbers of its cells."""
    table = scope.locator("table.pq").first
    expect(table).to_be_visible()
    found = {}
    for row in table.locator("tbody tr").all():
        name = row.locator("th").inner_text().strip()
        found[name] = [" ".join(t.split()) for t in row.locator("td .num").all_inner_texts()]
    return found


def test_the_worked_example_shows_processed_rows_beside_raw_ones(inspector, live_url):
    """The sampling fields filled by hand: the URL keeps them, the config sends them as written, and
    the first verified proposal's table has target p (raw) [0.5, 0.3, 0.2] above p' = [25/34, 9/34, 0]
    and draft q (raw) [0.8, 0.15, 0.05] above q' = [1, 0, 0], the processed rows being the service's."""
    block = post(live_url, "/v1/step", {"config": {"draft": "biased", "seed": 1, "sampling": SAMPLING}})["block"]
    first = block["verification"][0]
    assert (first["context"], [fmt(x) for x in first["q"]]) == (None, ["1", "0", "0"])
    assert [fmt(x) for x in first["p"]] == [fmt(25 / 34), fmt(9 / 34), "0"]
    ins = inspector.open("draft=biased&seed=1")
    page = ins.page
    page.get_by_text("Sampling parameters", exact=True).click()
    ins.fill("Temperature", "0.5")
    ins.fill("Top-k", "2")
    ins.fill("Top-p", "0.8")
    assert re.search(r"temperature=0\.5&top_k=2&top_p=0\.8", page.url)
    with page.expect_request("**/v1/step") as request:
        ins.press("Step")
    sent = json.loads(request.value.post_data)
    assert sent.get("state", sent)["config"]["sampling"] == SAMPLING  # a new session's first step sends the config alone
    item = page.locator("#verification > li").first
    found = rows(item, page)
    assert found["target p (raw)"] == RAW_P
    assert found["target p\u2032 (processed)"] == [fmt(x) for x in first["p"]]
    assert found["draft q (raw)"] == RAW_Q
    assert found["draft q\u2032 (processed)"] == [fmt(x) for x in first["q"]] == ["1", "0", "0"]
    assert found["p\u2032 \u2212 q\u2032"] == ["\u22120.2647", "+0.2647", "0"]  # the difference of the rows used: 25/34 - 1, 9/34 - 0
    assert block["correction"] is not None  # the second proposal is rejected: the note names the rows used
    expect(page.locator("#verification .pq-note")).to_have_text(
        "correction = the positive part of p\u2032 \u2212 q\u2032, rescaled to sum 1")
    expect(page.locator("#verification .verdict").first).to_have_text(
        "\u2713 accepted" if first["accepted"] else "\u2717 rejected")
    assert ins.output() == block["committed"]

    ins.page.reload()  # the URL holds the sampling parameters: the same session is rebuilt, the fields open
    ins.wait_ready()
    expect(ins.field("Top-p")).to_have_value("0.8")
    expect(page.locator("#sampling-details")).to_have_attribute("open", "")
    ins.assert_no_console_errors()


def test_draft_rows_raw_shows_the_one_row_drafted_from(inspector, live_url):
    """Draft rows raw: the proposal is drawn from the raw q (SPEC 9), so the table has target p (raw),
    p' and the one draft row q the service used, [0.8, 0.15, 0.05]."""
    config = {"draft": "biased", "seed": 1, "sampling": {**SAMPLING, "draft": "raw"}}
    block = post(live_url, "/v1/step", {"config": config})["block"]
    assert [fmt(x) for x in block["verification"][0]["q"]] == RAW_Q
    ins = inspector.open(LINK + "&draft_rows=raw&blocks=1")
    found = rows(ins.page.locator("#verification > li").first, ins.page)
    assert list(found) [:3] == ["target p (raw)", "target p\u2032 (processed)", "draft q (raw, drafted from)"]
    assert found["draft q (raw, drafted from)"] == RAW_Q
    assert "p\u2032 \u2212 q" in found
    assert "draft q\u2032 (processed)" not in found
    assert ins.output() == block["committed"]
    ins.assert_no_console_errors()


def test_a_sampling_value_out_of_bounds_is_shown_at_its_field(inspector):
    """Top-k 65 (the bound is 64): the service's 422 names config/sampling/top_k, and the page marks
    the Top-k field (its fold opened) with the service's words; mended, the session can go on."""
    ins = inspector.open("draft=biased&seed=1")
    page = ins.page
    page.get_by_text("Sampling parameters", exact=True).click()
    ins.fill("Top-k", "65")
    expect(page.locator("#top_k-error")).not_to_be_empty()
    expect(ins.field("Top-k")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#sampling-details")).to_have_attribute("open", "")
    ins.fill("Top-k", "2")
    expect(page.locator("#top_k-error")).to_be_empty()
    ins.press("Step")
    expect(page.locator("#output .token")).not_to_have_count(0)
    ins.assert_no_console_errors(allowed_statuses=(422,))


@pytest.mark.parametrize("mode", ["block", "tree"])
def test_block_and_tree_tables_show_raw_rows_too(inspector, live_url, mode):
    """Block verification's proposal rows and a tree depth's rows have the raw rows beside the processed ones."""
    extra = "&drafts=2" if mode == "tree" else ""
    config = {"draft": "biased", "seed": 1, "mode": mode, "width": 2, "sampling": SAMPLING, **({"drafts": 2} if mode == "tree" else {})}
    block = post(live_url, "/v1/step", {"config": config})["block"]
    ins = inspector.open(f"{LINK}&mode={mode}&width=2{extra}&blocks=1")
    scope = ins.page.locator("#verification > li").first
    found = rows(scope, ins.page)
    assert found["target p (raw)"] == RAW_P and found["draft q (raw)"] == RAW_Q
    assert found["target p\u2032 (processed)"] == [fmt(x) for x in block["verification"][0]["p"]]
    assert ins.output() == block["committed"]
    ins.assert_no_console_errors()


def test_sampling_fields_by_keyboard_and_axe(browser, live_url, artefacts_dir):
    """The fold opens with Enter, each field is reached with Tab in order, and axe-core finds no
    serious or critical violation with the fields open and raw rows shown."""
    context = browser.new_context(bypass_csp=True, viewport={"width": 1300, "height": 1000})
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open(LINK + "&blocks=1")
        page = ins.page
        summary = page.locator("#sampling-details > summary")
        summary.focus()
        for label in ("Temperature", "Top-k", "Top-p", "Min-p", "Draft rows"):
            page.keyboard.press("Tab")
            expect(ins.field(label)).to_be_focused()
        expect(page.locator("#verification .row-raw")).not_to_have_count(0)
        assert serious_axe_violations(page) == []
        ins.assert_no_console_errors()
    finally:
        context.close()
