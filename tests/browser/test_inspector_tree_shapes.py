"""Draft trees of SPEC 12 (the setting ``tree``: shapes chains, distinct, beam; verifiers residual
and target_only with SGLang's thresholds) in the inspector, in a real browser: the Tree fields in
mode tree (branching for distinct, the thresholds for target_only, each refusal of the service at
the field it names), every shape drawn as a tree with the accepted path, distinct siblings with
their shrinking proposal law s_j, a target-only node as one cumulative bar of p over its children
with u * threshold_acc marked, the single threshold when it decides, and a wide beam readable at
1280x720 and on a 390x844 phone. SPEC 12.6's worked examples are checked against the service."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from browser.inspector_page import Inspector, fmt, fmt_draw, post, serious_axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.server]

BASE = "draft=biased&width=2&drafts=2&mode=tree"
BEAM = {"draft": "biased", "width": 2, "drafts": 2, "mode": "tree", "seed": 3, "tree": {"shape": "beam", "verify": "target_only"}}
"""SPEC 12.6: beam + target_only, seed 3: tree A{A, B}, B{}; committed A B B."""
DISTINCT = {"draft": "biased", "width": 2, "drafts": 2, "mode": "tree", "seed": 16, "tree": {"shape": "distinct", "branching": [2, 1]}}
"""SPEC 12.6: distinct + residual, seed 16, branching [2, 1]: tree A{B}, B{A}; committed B A A."""


def first_block(live_url: str, config: dict) -> dict:
    return post(live_url, "/v1/step", {"config": config})["block"]


def test_the_tree_fields_send_the_setting_and_show_each_refusal_at_its_field(inspector):
    """Shape and verifier appear in mode tree; branching with shape distinct alone, the thresholds
    with verify target_only alone; residual with beam, a branching entry above 8 and a threshold of 0
    are refused by the service with 422 shown next to the field its pointer names."""
    ins = inspector.open(f"{BASE}&seed=3")
    page = ins.page
    expect(ins.field("Shape")).to_be_visible()
    expect(ins.field("Branching")).to_be_hidden()
    expect(ins.field("Threshold acc")).to_be_hidden()
    assert "tree_shape" not in page.url  # SPEC 11's tree: nothing sent, the link unchanged
    ins.choose("Shape", "beam")
    expect(page.locator("#tree_verify-error")).to_contain_text('must be "target_only" with shape "beam"')
    expect(ins.field("Verifier")).to_have_attribute("aria-invalid", "true")
    ins.choose("Verifier", "target_only")
    expect(page.locator("#tree_verify-error")).to_be_empty()
    assert "tree_shape=beam" in page.url and "tree_verify=target_only" in page.url
    expect(ins.field("Threshold acc")).to_be_visible()
    ins.fill("Threshold acc", "0")
    expect(page.locator("#threshold_acc-error")).to_contain_text("above 0 and at most 1")
    ins.fill("Threshold acc", "")
    expect(page.locator("#threshold_acc-error")).to_be_empty()
    ins.choose("Verifier", "residual")
    ins.choose("Shape", "distinct")
    expect(ins.field("Threshold acc")).to_be_hidden()
    expect(ins.field("Branching")).to_be_visible()
    ins.fill("Branching", "2, 9")
    expect(page.locator("#branching-error")).to_contain_text("from 1 to 8")
    ins.fill("Branching", "2, 1")
    expect(page.locator("#branching-error")).to_be_empty()
    with page.expect_request("**/v1/step") as request:
        ins.press("Step")
    assert json.loads(request.value.post_data)["config"]["tree"] == {"shape": "distinct", "branching": [2, 1]}
    ins.assert_no_console_errors(allowed_statuses=(422,))


def test_a_beam_tree_verified_target_only_draws_p_over_the_children_as_one_bar(inspector, live_url, artefacts_dir):
    """SPEC 12.6, beam + target_only, seed 3: the nodes with their scores, the path A B and the bonus
    B; at each node the cumulative bar of p over its children with u marked where the service drew it,
    and each test's acc_j against u in words."""
    block = first_block(live_url, BEAM)
    assert block["committed"] == ["A", "B", "B"] and [n["score_exact"] for n in block["proposal"]["nodes"]] == ["4/5", "3/20", "16/25", "3/25"]
    ins = inspector.open(f"{BASE}&seed=3&tree_shape=beam&tree_verify=target_only")
    ins.press("Draft")
    expect(ins.page.locator("#tree .tree.pending .token.uncommitted")).to_have_count(4)
    ins.press("Verify")  # a beam is drafted by the service: verified with /v1/step
    assert ins.output() == block["committed"]
    tree = ins.page.locator("#tree .tree")
    expect(tree.locator("li.on-path > .tree-node > .token")).to_have_text(["A", "B", "B"])
    for n in block["proposal"]["nodes"]:  # each node with its path's score, under its parent
        expect(tree.locator(f"li[data-node='{n['node']}'] > .tree-node .tree-law")).to_have_text(f"score {n['score_exact']}")
    expect(tree.locator("li.rejected > .tree-node > .token")).to_have_text(["A"])
    expect(tree.locator("li.untested > .tree-node > .token")).to_have_text(["B"])
    nodes = ins.page.locator("#verification > li.tree-depth")
    expect(nodes).to_have_count(2)
    for i, group_tests in enumerate(([block["verification"][0]], block["verification"][1:])):
        bar = nodes.nth(i).locator(".target-only-bar .cum-bar")
        expect(bar.locator(".cum-part:not(.rest) .cum-label")).to_have_text(["A", "B"])
        u = group_tests[0]["u_acc"]
        left = bar.locator(".bar-marker").evaluate("e => parseFloat(e.style.left)")
        assert abs(left - 100 * u) < 1e-3, (left, u)  # the style keeps about 5 digits
        for t, item in zip(group_tests, nodes.nth(i).locator("li.tree-test").all()):
            sign = "<" if t["accepted"] else "\u2265"
            expect(item).to_contain_text(f"u \u00b7 threshold_acc = {fmt_draw(u)} {sign} acc = {t['acc_exact']}")
    ins.screenshot("tree-beam-target-only")
    ins.assert_no_console_errors()


def test_distinct_siblings_show_their_shrinking_proposal_law_and_the_residual_rows(inspector, live_url):
    """SPEC 12.6, distinct + residual, seed 16, branching [2, 1]: B was drawn from s_2 = [0, 3/4, 1/4];
    A is rejected (u * s(A) = 0.5151 >= r(A) = 0.5), r becomes [0, 1/2, 1/2], B accepted against it."""
    block = first_block(live_url, DISTINCT)
    first, second = block["verification"][:2]
    assert (first["accepted"], second["accepted"], second["r_exact"], block["committed"]) == (False, True, ["0", "1/2", "1/2"], ["B", "A", "A"])
    ins = inspector.open(f"{BASE}&seed=16&tree_shape=distinct&branching=2%2C1")
    ins.press("Step")
    assert ins.output() == block["committed"]
    tree = ins.page.locator("#tree .tree")
    laws = [f"s = [{', '.join(n['law_exact'])}]" for n in block["proposal"]["nodes"]]
    for n, law in zip(block["proposal"]["nodes"], laws):
        expect(tree.locator(f"li[data-node='{n['node']}'] > .tree-node .tree-law")).to_have_text(law)
    assert laws[1] == "s = [0, 3/4, 1/4]"
    depth1 = ins.page.locator("#verification > li.tree-depth").first
    rows = {name: depth1.get_by_role("row").filter(has=ins.page.get_by_role("rowheader", name=name, exact=True)).locator("td").all_inner_texts()
            for name in ("s of A, test 1", "s of B, test 2", "r, test 2")}
    assert rows["s of B, test 2"] == ["0", "0.75", "0.25"]
    assert [" ".join(c.split()) for c in rows["r, test 2"]] == ["0", "0.5 (1/2)", "0.5 (1/2)"]
    expect(depth1.locator("li.tree-test").first).to_contain_text(f"u \u00b7 s(A) = {fmt(first['u_s'])} \u2265 r(A) = 0.5: rejected")
    expect(ins.page.locator("#proposal-table tbody tr")).to_have_count(4)  # one node step per node, each with its s_j
    ins.assert_no_console_errors()


def test_chains_verified_target_only_are_merged_into_a_trie(inspector, live_url):
    """SPEC 12.6, chains + target_only, seed 16: chains A A and B A form A{A}, B{A}; the root's one
    draw 0.6439 is not below acc_1 = 1/2 and is below acc_2 = 4/5; committed B A B."""
    config = {"draft": "biased", "width": 2, "drafts": 2, "mode": "tree", "seed": 16, "tree": {"verify": "target_only"}}
    block = first_block(live_url, config)
    assert block["committed"] == ["B", "A", "B"]
    ins = inspector.open(f"{BASE}&seed=16&tree_verify=target_only")
    ins.press("Draft")
    with ins.page.expect_request("**/v1/verify") as request:
        ins.press("Verify")
    assert json.loads(request.value.post_data)["proposal"] == {"chains": [["A", "A"], ["B", "A"]]}
    assert ins.output() == block["committed"]
    expect(ins.page.locator("#tree .tree li.on-path > .tree-node > .token")).to_have_text(["B", "A", "B"])
    root = ins.page.locator("#verification > li.tree-depth").first
    expect(root.locator("li.tree-test")).to_contain_text(["0.6439 \u2265 acc = 1/2", "0.6439 < acc = 4/5"])
    ins.assert_no_console_errors()


def test_the_single_threshold_is_said_when_it_decides(inspector, live_url):
    """Beam + target_only with threshold_single 0.5: A (p 0.5 at the empty prefix) is accepted by
    the single threshold whenever u is not below acc; the page says so (SPEC 12.4)."""
    config = {**BEAM, "tree": {**BEAM["tree"], "threshold_single": 0.5}}
    seed = next(s for s in range(40) if first_block(live_url, {**config, "seed": s})["verification"][0]["by"] == "single")
    ins = inspector.open(f"{BASE}&seed={seed}&tree_shape=beam&tree_verify=target_only&threshold_single=0.5")
    ins.press("Step")
    first = ins.page.locator("#verification li.tree-test").first
    expect(first).to_contain_text("p(A) = 0.5 \u2265 threshold_single 0.5: accepted by the single threshold")
    ins.assert_no_console_errors()


@pytest.mark.parametrize("width, height", [(1280, 720), (390, 844)])
def test_a_wide_beam_stays_readable(browser, live_url, artefacts_dir, width, height):
    """A beam of 8 per depth at width 4 (32 nodes): the page never grows sideways (the tree scrolls in
    its own box), every node is drawn, and axe-core finds no serious violation."""
    context = browser.new_context(bypass_csp=True, viewport={"width": width, "height": height})
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open("draft=biased&width=4&drafts=8&mode=tree&seed=1&tree_shape=beam&tree_verify=target_only")
        ins.press("Step")
        expect(ins.page.locator("#tree .tree .tree-item[data-node]")).to_have_count(
            len(first_block(live_url, {"draft": "biased", "width": 4, "drafts": 8, "mode": "tree", "seed": 1,
                                       "tree": {"shape": "beam", "verify": "target_only"}})["proposal"]["nodes"]))
        size = ins.page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert size[0] <= size[1], size
        assert serious_axe_violations(ins.page) == []
        ins.page.locator("#tree-region").screenshot(path=str(artefacts_dir / f"tree-beam-wide-{width}.png"))
        ins.assert_no_console_errors()
    finally:
        context.close()


def test_the_node_numbers_are_the_services(live_url):
    """The fixtures above are SPEC 12.6's worked examples as the service answers them."""
    beam = first_block(live_url, BEAM)
    assert [(t["token"], t["accepted"], fmt_draw(t["draw"]["u"])) for t in beam["verification"]] == [
        ("A", True, "0.1135"), ("A", False, "0.7003"), ("B", True, "0.7003")]
    assert (beam["committed"], beam["next_position"]) == (["A", "B", "B"], 3)
