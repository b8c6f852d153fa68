"""Block verification (SPEC section 10, mode ``block``) in the inspector, in a real browser:
the Mode field offers it with a plain-words description and keeps it in the URL, a free
block-mode session steps to its end with the live service's output and counters, and a block
with a rejection draws every proposal's fate (accepted i <= tau, rejected tau + 1, the rest
discarded), the weights and thresholds (decimal first, exact fraction as secondary text), each
draw against its threshold, the correction scaled by w_tau, and the exact values in the details
view. The story's block step is walked in test_inspector_story.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from browser.inspector_page import fmt, fmt_draw, post

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_mode_block_is_a_setting_and_a_free_session_steps_to_its_end(inspector, live_url):
    """Mode block chosen in the form (with its description, and in the URL), then Step until the
    session is done: the output, each block's tau and the counters are the live service's."""
    config = {"draft": "biased", "width": 2, "seed": 4, "mode": "block"}
    trace = post(live_url, "/v1/runs", {"config": config})
    assert trace["blocks"][0]["tau"] == 2 and trace["blocks"][0]["committed"] == ["A", "B", "A"]
    ins = inspector.open()
    options = ins.field("Mode").locator("option").all_inner_texts()
    assert options == ["speculative", "greedy", "autoregressive", "block", "tree"]
    ins.choose("Draft model", "biased")
    ins.fill("Width", "2")
    ins.fill("Seed", "4")
    ins.choose("Mode", "block")
    assert "mode=block" in ins.page.url
    help_text = ins.page.locator("#mode-help")
    expect(help_text).to_contain_text("Block verification: the proposals are judged together")
    assert ins.field("Mode").get_attribute("aria-describedby").split()[0] == "mode-help"

    for number in range(1, len(trace["blocks"]) + 1):
        ins.press("Step")
        block = trace["blocks"][number - 1]
        expect(ins.page.locator("#verification-summary")).to_contain_text(
            f"judged as a block: tau = {block['tau']}")
        expect(ins.page.locator("#verification-summary")).to_contain_text(f"Committed {' '.join(block['committed'])}.")
        expect(ins.page.locator("#verification > li.block-verify")).to_have_count(len(block["verification"]))
        if number == 1:  # SPEC 10's worked example, in plain numbers with the exact fractions beside them
            first = ins.page.locator("#verification > li").first
            expect(first.locator(".weight")).to_have_text("0.625 (5/8)")
            expect(first.locator(".threshold")).to_have_text("0.4444 (4/9)")
            expect(first.locator(".eta")).to_have_text("0.8591")
            expect(first.locator(".explain")).to_contain_text("not below, kept anyway: a later draw passes")
            expect(ins.page.locator("#verification > li").nth(1).locator(".tau-tag")).to_have_text("tau = 2")
            expect(ins.page.locator("#status")).to_contain_text("tau = 2; bonus A. Committed A B A.")
    expect(ins.button("Step")).to_be_disabled()
    assert ins.output() == trace["output"]
    counters = ins.counters()
    for name, value in trace["counters"].items():
        assert counters[name] == str(value), name
    expect(ins.page.locator("#output-summary")).to_contain_text(f"session done ({trace['done']})")

    ins.page.reload()  # the URL holds the mode: the same session is rebuilt
    ins.wait_ready()
    expect(ins.field("Mode")).to_have_value("block")
    assert ins.output() == trace["output"]
    ins.assert_no_console_errors()


def test_a_block_with_a_rejection_shows_each_fate_and_the_scaled_residual(inspector, live_url, artefacts_dir):
    """Seed 1, width 3: tau = 1, so A is accepted, the second A rejected and C discarded; the
    correction comes from max(w1 p - q, 0) with w1 = 5/8, and the draw stream names each check."""
    block = post(live_url, "/v1/step", {"config": {"draft": "biased", "width": 3, "seed": 1, "mode": "block"}})["block"]
    assert block["tau"] == 1 and block["discarded"] == ["C"] and block["correction"]["weight_exact"] == "5/8"
    ins = inspector.open("draft=biased&width=3&seed=1&mode=block&blocks=1")
    items = ins.page.locator("#verification > li.block-verify")
    expect(items.locator(".verdict")).to_have_text(["\u2713 accepted", "\u2717 rejected", "\u2205 discarded"])
    expect(items.nth(2).locator(".verify-head .token")).to_have_class(re.compile(r"\bdiscarded\b"))
    for item, v in zip(items.all(), block["verification"]):
        expect(item.locator(".eta")).to_have_text(fmt_draw(v["draw"]["u"]))
        expect(item.get_by_role("row", name=re.compile(r"^target p"))).to_have_text(
            re.compile(r"\s*".join(["target p", *map(re.escape, map(fmt, v["p"]))])))
        expect(item.get_by_role("row", name=re.compile(r"^draft q"))).to_have_text(
            re.compile(r"\s*".join(["draft q", *map(re.escape, map(fmt, v["q"]))])))
    rejected = items.nth(1)
    expect(rejected.locator(".weight")).to_have_text("0.1563 (5/32)")
    expect(rejected.locator(".threshold")).to_have_text("0")
    scaled = [0.625 * p - q for p, q in zip(block["verification"][1]["p"], block["verification"][1]["q"])]
    expect(rejected.get_by_role("row", name=re.compile(r"^0\.625\u00b7p \u2212 q"))).to_contain_text(f"+{fmt(scaled[1])}")
    expect(rejected.get_by_role("row", name=re.compile(r"^correction"))).to_have_text(
        re.compile(r"\s*".join(["correction", *map(fmt, block["correction"]["distribution"])])))
    correction = ins.page.locator("#correction")
    expect(correction).to_contain_text("scaled by the weight w1 = 0.625 (5/8)")
    expect(correction.locator(".correction-choice .token")).to_have_text(block["correction"]["token"])
    expect(ins.page.locator("#discarded .discarded-list .token")).to_have_text(["C"])
    draws = ins.page.locator("#draws tbody tr td:nth-child(4)")
    expect(draws).to_have_text(["draft proposal 1 (A)", "draft proposal 2 (A)", "draft proposal 3 (C)",
                                f"block check of proposal 1 (A): below threshold {fmt(block['verification'][0]['threshold'])}",
                                "block check of proposal 2 (A): not below threshold 0",
                                f"block check of proposal 3 (C): not below threshold {fmt(block['verification'][2]['threshold'])}",
                                f"correction ({block['correction']['token']})"])
    # plain words by default; the exact values in the details view
    details = rejected.locator("details.block-exact")
    expect(details.locator(".exact-numbers")).to_be_hidden()
    details.locator("summary").click()
    expect(details.locator(".exact-numbers")).to_contain_text("5/32")
    expect(details.locator(".exact-numbers")).to_contain_text(block["verification"][1]["draw"]["hex"])
    expect(details).to_contain_text("SPEC section 10")
    ins.screenshot("block-rejection")
    ins.assert_no_console_errors()


def test_analysis_compares_block_with_token_wise_verification(inspector, live_url):
    """In mode block the Analysis adds, per width, the exact expected proposals accepted per block
    and tokens per pass of block and token-wise verification (SPEC 10: 219/200 against 207/200 at
    width 2, 1381/1000 against 483/400 at width 3), decimal first and the fraction beside it."""
    ins = inspector.open("draft=biased&width=2&seed=4&mode=block&analysis=1")
    table = ins.page.locator("table.block-compare")
    expect(table).to_be_visible()
    result = post(live_url, "/v1/analysis", {"config": {"draft": "biased", "width": 2, "seed": 4, "mode": "block"},
                                             "widths": list(range(1, 9))})
    widths = [c["width"] for c in result["block"]["comparison"]]
    expect(table.locator("tbody tr")).to_have_count(len(widths))
    expect(table.locator("tbody th")).to_have_text([str(w) for w in sorted(widths)])
    figures = {2: ("1.095 (219/200)", "1.035 (207/200)"), 3: ("1.381 (1381/1000)", "1.2075 (483/400)")}
    for width, (block, token_wise) in figures.items():
        row = table.locator(f"tr[data-width='{width}']")
        expect(row.locator(".block-accepted")).to_have_text(block)
        expect(row.locator(".token-wise-accepted")).to_have_text(token_wise)
    expect(table.locator("tr.current")).to_have_attribute("data-width", "2")
    ins.assert_no_console_errors()
