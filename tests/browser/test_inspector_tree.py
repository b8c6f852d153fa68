"""Several drafts (SPEC section 11, mode ``tree``) in the inspector, in a real browser: the Mode
field offers it and a Drafts field (1-8) appears with it alone (sent and kept in the URL in mode
tree only), the chains are drawn as one tree (merged on common prefixes, the accepted path ending
in the correction or the bonus), and each depth's tests are drawn in order with the rows p, q and
the shrinking r (exact fractions beside the decimals), each draw against r/q. SPEC 11's worked
example (toy, biased, width 2, drafts 2, seed 16: B A A, where chain 1 alone commits C) is checked
value by value against the live service; keyboard use and axe-core as elsewhere. The story's
step 9 is walked in test_inspector_story.py."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from browser.inspector_page import Inspector, fmt, fmt_draw, post, serious_axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.server]

EXAMPLE = {"draft": "biased", "width": 2, "seed": 16, "mode": "tree", "drafts": 2}
"""SPEC 11's worked example."""
EXAMPLE_LINK = "draft=biased&width=2&seed=16&mode=tree&drafts=2"
CORRECTION = {"draft": "biased", "width": 3, "seed": 0, "mode": "tree", "drafts": 3}
"""A block whose third depth rejects its one candidate: the correction comes from the last r."""


def exact(value: float, fraction: str) -> str:
    """A decimal with its exact fraction beside it, unless they read the same (tree.js ``exactNumber``)."""
    return fmt(value) if fraction == fmt(value) else f"{fmt(value)} ({fraction})"


def cells(row) -> list[str]:
    """A table row's cells as read, the words for screen readers left out."""
    return [" ".join(c.replace("(the candidate tested)", "").split()) for c in row.locator("td").all_inner_texts()]


def row_named(scope, page, name: str):
    return scope.get_by_role("row").filter(has=page.get_by_role("rowheader", name=name, exact=True))


def node(tree, *path: str):
    """The tree item reached from the root by the tokens of ``path`` (first match at each level)."""
    item = tree.locator(":scope > li.tree-root")
    for label in path:
        item = item.locator(":scope > ul > li.tree-item").filter(
            has=item.page.locator(":scope > .tree-node > .token", has_text=re.compile(rf"^{re.escape(label)}$"))).first
    return item


def test_the_worked_example_is_drawn_as_a_tree_with_its_real_values(inspector, live_url, artefacts_dir):
    """Seed 16, drafts 2 (SPEC 11): chains A A and B A share no prefix, so the root has two branches;
    chain 1's A is rejected against r = p (u 0.6439, r/q 5/8), r shrinks to [0, 1/2, 1/2], chain 2's B
    is accepted against it (u 0.2307, r/q 10/3), A after B is accepted (u 0.3737, 11/16), the bonus A
    ends the path: B A A committed, chain 1's second A never tested (discarded), position 8."""
    block = post(live_url, "/v1/step", {"config": EXAMPLE})["block"]
    alone = post(live_url, "/v1/step", {"config": {**EXAMPLE, "mode": "speculative", "drafts": 1}})["block"]
    assert alone["committed"] == ["C"]  # token-wise verification of chain 1 alone, the same seed
    ins = inspector.open(EXAMPLE_LINK + "&blocks=1")
    page = ins.page
    assert ins.output() == block["committed"] == ["B", "A", "A"]

    # no correction token, yet a rejection: the Correction card says why (it used to say "No rejection")
    rejected = [t for t in block["verification"] if not t["accepted"]]
    assert block["correction"] is None and block["counters"]["rejected"] == len(rejected) == 1
    expect(page.locator("#correction")).to_have_text(
        "No correction: chain 1's A was rejected at depth 1, and then chain 2's B was accepted against the recursive "
        "residual r (what the rejection left of the target's row). A candidate accepted at every depth needs no correction token.")

    tree = page.locator("#tree .tree")
    expect(page.locator("#tree-region")).to_be_visible()
    expect(node(tree).locator(":scope > .tree-node")).to_contain_text("start: the empty prefix")
    expect(node(tree).locator(":scope > ul > li.tree-item > .tree-node > .token")).to_have_text(["A", "B"])
    expect(node(tree, "A").locator(":scope > .tree-node")).to_contain_text("chain 1 \u2717 rejected (test 1 failed)")
    expect(node(tree, "A", "A").locator(":scope > .tree-node")).to_contain_text("chain 1 \u2205 not tested")
    expect(node(tree, "A", "A")).to_have_class(re.compile(r"\buntested\b"))
    expect(node(tree, "B").locator(":scope > .tree-node")).to_contain_text("chain 2 \u2713 accepted (test 2 passed)")
    expect(node(tree, "B", "A").locator(":scope > .tree-node")).to_contain_text("chain 2 \u2713 accepted (test 3 passed)")
    end = node(tree, "B", "A").locator(":scope > ul > li.tree-end")
    expect(end.locator(".token")).to_have_text("A")
    expect(end.locator(".token")).to_have_class(re.compile(r"\bbonus-token\b"))
    expect(end).to_contain_text("bonus: from the target, not drafted")
    expect(tree.locator("li.on-path > .tree-node > .token")).to_have_text(["B", "A", "A"])

    depths = page.locator("#verification > li.tree-depth")
    expect(depths).to_have_count(2)
    expect(depths.locator("h3")).to_have_text(["Depth 1 \u00b7 empty prefix \u00b7 \u2713 B accepted",
                                               "Depth 2 \u00b7 after B \u00b7 \u2713 A accepted"])
    first, second, third = block["verification"]
    depth1 = depths.nth(0)
    assert cells(row_named(depth1, page, "target p")) == ["0.5", "0.3", "0.2"] == [fmt(x) for x in first["p"]]
    assert cells(row_named(depth1, page, "draft q")) == ["0.8", "0.15", "0.05"] == [fmt(x) for x in first["q"]]
    assert cells(row_named(depth1, page, "r, test 1 (= p)")) == ["0.5 (1/2)", "0.3 (3/10)", "0.2 (1/5)"]
    assert cells(row_named(depth1, page, "r, test 2")) == [exact(x, e) for x, e in zip(second["r"], second["r_exact"])] \
        == ["0", "0.5 (1/2)", "0.5 (1/2)"]
    expect(row_named(depth1, page, "r, test 1 (= p)").locator("td.tested")).to_have_count(1)
    expect(row_named(depth1, page, "r, test 2").locator("td").nth(1)).to_have_class(re.compile(r"\btested\b"))
    assert cells(row_named(depths.nth(1), page, "r, test 3 (= p)")) == ["0.55 (11/20)", "0.15 (3/20)", "0.3 (3/10)"]

    tests = page.locator("#verification li.tree-test")
    expect(tests.locator(".verify-head")).to_have_text(["test 1: chain 1's A \u2717 rejected", "test 2: chain 2's B \u2713 accepted",
                                                        "test 3: chain 2's A \u2713 accepted"])
    expect(tests.locator(".ratio")).to_have_text(["0.625 (5/8)", "3.3333 (10/3)", "0.6875 (11/16)"])
    expect(tests.locator(".u")).to_have_text(["0.6439", "0.2307", "0.3737"])
    expect(tests.locator(".r-token")).to_have_text([fmt(t["r_token"]) for t in block["verification"]])
    expect(tests.locator(".q-token")).to_have_text([fmt(t["q_token"]) for t in block["verification"]])
    for item, t in zip(tests.all(), block["verification"]):
        verdict = "accepted" if t["accepted"] else "rejected"
        expect(item.get_by_role("img")).to_have_attribute(
            "aria-label", f"ratio r/q {fmt(t['ratio'])} filled on a 0 to 1 bar, u {fmt_draw(t['draw']['u'])} marked: {verdict}")
    expect(tests.nth(0).locator(".explain")).to_contain_text("r becomes max(r \u2212 q, 0) rescaled to sum 1")
    expect(tests.nth(1).locator(".explain")).to_contain_text("B is committed; chain 2 goes on to the next depth")
    # the exact values, for those who want them
    details = tests.nth(1).locator("details.tree-exact")
    expect(details.locator(".exact-numbers")).to_be_hidden()
    details.locator("summary").click()
    expect(details.locator(".exact-numbers")).to_contain_text("[0, 1/2, 1/2]")
    expect(details.locator(".exact-numbers")).to_contain_text(second["draw"]["hex"])
    expect(details).to_contain_text("SPEC section 11.2")

    expect(page.locator("#verification-summary")).to_contain_text("2 chains, 3 tests over 2 depths; bonus A. Committed B A A.")
    expect(page.locator("#discarded .token")).to_have_text(["A"])
    expect(page.locator("#bonus")).to_contain_text("Bonus token: A")
    expect(page.locator("#draws tbody tr td:nth-child(4)")).to_have_text([
        "draft chain 1, proposal 1 (A)", "draft chain 1, proposal 2 (A)", "draft chain 2, proposal 1 (B)", "draft chain 2, proposal 2 (A)",
        "test 1, depth 1: chain 1's A against r (rejected)", "test 2, depth 1: chain 2's B against r (accepted)",
        "test 3, depth 2: chain 2's A against r (accepted)", "bonus (A)"])
    expect(page.locator("#draws tbody tr td:nth-child(1)")).to_have_text([f"#{n}" for n in range(8)])
    counters = ins.counters()
    for name, value in block["counters"].items():
        assert counters[name] == str(value), name
    ins.screenshot("tree-worked-example")
    ins.assert_no_console_errors()


def test_mode_tree_and_drafts_are_settings_and_a_drafted_tree_is_verified(inspector, live_url):
    """Mode tree in the form shows the Drafts field (hidden in every other mode, and then neither
    sent nor in the URL); Draft shows the chains as a pending tree (every token dashed), Verify sends
    them back as chains and draws the verified tree; a Drafts value outside 1-8 gets the service's
    422 at the field."""
    ins = inspector.open()
    page = ins.page
    expect(ins.field("Mode").locator("option")).to_have_text(["speculative", "greedy", "autoregressive", "block", "tree"])
    expect(ins.field("Drafts")).to_be_hidden()
    ins.choose("Draft model", "biased")
    ins.fill("Width", "2")
    ins.fill("Seed", "16")
    ins.choose("Mode", "tree")
    expect(ins.field("Drafts")).to_be_visible()
    expect(page.locator("#mode-help")).to_contain_text("Several drafts")
    expect(ins.field("Drafts")).to_have_value("1")
    assert "mode=tree" in page.url and "drafts=1" in page.url
    ins.fill("Drafts", "2")
    assert "drafts=2" in page.url

    ins.press("Draft")
    expect(page.locator("#proposal-tokens .chain-line")).to_have_text(["chain 1: A A", "chain 2: B A"])
    expect(page.locator("#tree .tree.pending .token.uncommitted")).to_have_count(4)
    expect(page.locator("#tree-summary")).to_have_text("2 chains merged where they agree; nothing verified yet.")
    expect(page.locator("#status")).to_have_text("Drafted chain 1: A A; chain 2: B A: not committed.")
    with page.expect_request("**/v1/verify") as request:
        ins.press("Verify")
    assert json.loads(request.value.post_data)["proposal"] == {"chains": [["A", "A"], ["B", "A"]]}
    assert ins.output() == ["B", "A", "A"]
    expect(page.locator("#tree .tree.verified li.on-path > .tree-node > .token")).to_have_text(["B", "A", "A"])
    expect(page.locator("#status")).to_contain_text("Committed B A A.")

    ins.fill("Drafts", "9")  # outside 1-8: the service's 422 names the field
    expect(page.locator("#drafts-error")).not_to_be_empty()
    expect(ins.field("Drafts")).to_have_attribute("aria-invalid", "true")
    ins.fill("Drafts", "2")
    expect(page.locator("#drafts-error")).to_be_empty()

    ins.choose("Mode", "speculative")  # drafts is read by mode tree alone
    expect(ins.field("Drafts")).to_be_hidden()
    assert "drafts=" not in page.url
    expect(page.locator("#tree-region")).to_be_hidden()
    ins.press("Step")
    assert ins.output() == ["C"]  # chain 1 alone, token-wise (SPEC 11's worked example)
    ins.assert_no_console_errors(allowed_statuses=(422,))


def test_a_depth_where_every_candidate_fails_ends_in_the_correction_from_the_last_r(inspector, live_url):
    """Seed 0, width 3, drafts 3: chain 1's B and A are accepted, its third A is rejected and no alive
    chain is left, so the correction is drawn from the last r, drawn as a row under the r rows and
    as the path's last node; the other chains are never tested."""
    block = post(live_url, "/v1/step", {"config": CORRECTION})["block"]
    correction = block["correction"]
    assert (correction["index"], block["committed"]) == (3, ["B", "A", "B"])
    ins = inspector.open("draft=biased&width=3&seed=0&mode=tree&drafts=3&blocks=1")
    page = ins.page
    tree = page.locator("#tree .tree")
    expect(tree.locator(":scope > li.tree-root > ul > li.tree-item > .tree-node > .token")).to_have_text(["B", "C", "A"])
    expect(tree.locator("li.on-path > .tree-node > .token")).to_have_text(["B", "A", correction["token"]])
    end = tree.locator("li.tree-end .token")
    expect(end).to_have_class(re.compile(r"\bcorrection-token\b"))
    expect(tree.locator("li.untested")).to_have_count(6)
    depth3 = page.locator("#verification > li.tree-depth").nth(2)
    expect(depth3.locator("h3")).to_have_text("Depth 3 \u00b7 after A \u00b7 \u2717 every candidate rejected")
    assert cells(row_named(depth3, page, "correction (last r)")) == [fmt(x) for x in correction["distribution"]] == ["0", "0.75", "0.25"]
    expect(depth3.locator(".tree-test .explain")).to_contain_text("no candidate is left at this depth")
    expect(page.locator("#correction")).to_contain_text("Every candidate at depth 3 (after A) was rejected")
    expect(page.locator("#correction .correction-choice .token")).to_have_text(correction["token"])
    expect(page.locator("#discarded .token")).to_have_text(block["discarded"])
    expect(page.locator("#discarded")).to_contain_text("never tested")
    ins.assert_no_console_errors()


def test_keyboard_alone_sets_mode_tree_and_reads_the_tree(inspector):
    """From the Mode field: the arrow keys choose tree, Tab reaches Drafts (right after Mode), a typed
    2 is committed by leaving the field, Tab goes on through Shape and Verifier to Width; Step is pressed with Enter, and the tree
    and each depth's rows are reachable with Tab (they scroll sideways when narrow)."""
    ins = inspector.open("draft=biased&width=2&seed=16")
    page = ins.page
    ins.field("Mode").focus()
    for _ in range(4):  # speculative -> greedy -> autoregressive -> block -> tree
        page.keyboard.press("ArrowDown")
        ins.wait_idle()
    expect(ins.field("Mode")).to_have_value("tree")
    page.keyboard.press("Tab")
    expect(ins.field("Drafts")).to_be_focused()
    page.keyboard.press("Control+a")
    page.keyboard.type("2")
    page.keyboard.press("Tab")
    ins.wait_idle()
    expect(ins.field("Shape")).to_be_focused()  # the tree's fields (SPEC 12) follow Drafts, then Width
    page.keyboard.press("Tab")
    expect(ins.field("Verifier")).to_be_focused()
    page.keyboard.press("Tab")
    expect(ins.field("Width")).to_be_focused()
    assert "drafts=2" in page.url
    ins.button("Step").focus()
    page.keyboard.press("Enter")
    ins.wait_idle()
    assert ins.output() == ["B", "A", "A"]
    expect(page.locator("#verification-summary")).to_be_focused()
    tree_group = page.get_by_role("group", name="Draft tree of 2 chains (scrolls sideways)")
    tree_group.focus()
    expect(tree_group).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_attribute("aria-label", "p, q and r at the empty prefix (scrolls sideways)")
    ins.assert_no_console_errors()


@pytest.mark.parametrize("width", [1300, 390])
def test_axe_and_no_overflow_in_mode_tree(browser, live_url, artefacts_dir, width):
    """axe-core finds no serious or critical violation with a verified tree block and a pending tree
    on the page; on a 390 px phone nothing reaches past the page's sides."""
    context = browser.new_context(bypass_csp=True, viewport={"width": width, "height": 900})
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open("draft=biased&width=3&seed=0&mode=tree&drafts=3&blocks=1")
        ins.page.locator("details.tree-exact summary").first.click()
        assert serious_axe_violations(ins.page) == []
        ins.press("Draft")
        assert serious_axe_violations(ins.page) == []
        width_now = ins.page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width_now[0] <= width_now[1], width_now
        ins.assert_no_console_errors()
    finally:
        context.close()


def test_analysis_sweeps_the_number_of_drafts(inspector, live_url):
    """In mode tree the Analysis adds the service's sweep over D and width (one block from the empty
    prefix, no limit; SPEC 11: 407/200 for one draft, 349449/160000 for two at width 2), decimal first,
    a short fraction beside it and a long one in the tooltip; these settings' row and cell marked."""
    result = post(live_url, "/v1/analysis", {"config": EXAMPLE, "widths": list(range(1, 9))})
    sweep = {(s["drafts"], s["width"]): s for s in result["tree_sweep"]}
    assert sweep[(1, 2)]["committed_per_pass_exact"] == "407/200" and sweep[(2, 2)]["committed_per_pass_exact"] == "349449/160000"
    ins = inspector.open(EXAMPLE_LINK + "&analysis=1")
    table = ins.page.locator("table.tree-sweep")
    expect(table).to_be_visible()
    expect(table.locator("tbody th")).to_have_text([str(d) for d in range(1, 9)])
    expect(table.locator("tr[data-drafts='1'] td[data-width='2']")).to_have_text("2.035 (407/200)")
    expect(table.locator("tr[data-drafts='2'] td[data-width='2']")).to_have_text("2.1841 (349449/160000) (these settings)")
    three = sweep[(3, 2)]
    cell = table.locator("tr[data-drafts='3'] td[data-width='2'] span.num").first
    expect(cell).to_have_text(fmt(three["committed_per_pass"]))
    expect(cell).to_have_attribute("title", three["committed_per_pass_exact"])
    expect(table.locator("tr.current")).to_have_attribute("data-drafts", "2")
    expect(ins.page.locator(".analysis-compare")).to_contain_text("no closed form for several drafts")
    ins.assert_no_console_errors()
