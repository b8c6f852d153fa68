"""The inspector's guided story in a real browser: the explainer's sections in order, walked
by clicking as a student would, at 1280x800 and on a 390x844 phone, and in projector mode at
1024x768, 1280x720 and 1920x1080.

At every step: the step's key numbers are on the page (the explainer's target row
[0.50, 0.30, 0.20], biased draft row [0.80, 0.15, 0.05] and correction [0, 0.50, 0.50] among
them, and the tables show what the live service answers for the step's settings), the
verdict of the step's action is focused inside the viewport and announced, p and q of the
verified proposal are labeled rows, the step's words (with Next) are focused in view after its
action, no element overflows a phone's page sideways, and axe-core finds no serious or critical
violation. The figures that show a claim (two traces and their distribution, the first token's
law under three rules with samples grown from the service's draws, p and q laid over each other)
are checked against the service's answers. Screenshots of every step are saved.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from browser.inspector_page import Inspector, fmt, fmt_draw, post, serious_axe_violations

pytestmark = [pytest.mark.browser, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]

# the explainer's example at the empty prefix, as its text writes it (SPEC section 1's toy)
TARGET_ROW, BIASED_ROW, RESIDUAL = "[0.50, 0.30, 0.20]", "[0.80, 0.15, 0.05]", "[0, 0.50, 0.50]"


def signed(x: float) -> str:
    """The page's p - q cell: +0.15, \u22120.3, 0."""
    return f"+{fmt(x)}" if x > 0 else f"\u2212{fmt(-x)}" if x < 0 else "0"


OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (!r.width || (r.right <= width + 0.5 && r.left >= -0.5)) continue;
    let a = e.parentElement, inside = false;
    for (; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') { inside = true; break; }
    if (!inside) out.push(`${e.tagName}#${e.id}.${e.className.baseVal ?? e.className} ${Math.round(r.left)}-${Math.round(r.right)}`);
  }
  return {scrollWidth: document.documentElement.scrollWidth, width, out: out.slice(0, 8)};
}"""
"""Elements reaching past the page's sides, except inside a card that scrolls sideways."""

SMALL_TEXT = """() => {
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const e = node.parentElement;
    if (!node.textContent.trim() || e.closest('.visually-hidden, [hidden], title')) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') continue;
    let size = parseFloat(getComputedStyle(e).fontSize);
    const svg = e.closest('svg');
    if (svg) size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;  // drawn size
    if (size < 18) small.push(`${e.tagName}.${e.className.baseVal ?? e.className} "${node.textContent.trim().slice(0, 24)}" ${size.toFixed(1)}px`);
  }
  return small.slice(0, 20);
}"""
"""Visible text drawn under 18 px (SVG text at its drawn size)."""


def story_steps(live_url: str) -> list[dict]:
    """The story's steps with what the page must show after each action, from the live service."""
    aligned = post(live_url, "/v1/step", {"config": {"draft": "aligned", "width": 3, "seed": 0}})["block"]
    seed2_step = post(live_url, "/v1/step", {"config": {"draft": "biased", "seed": 2}})
    seed2 = seed2_step["block"]
    seed2_next = post(live_url, "/v1/step", seed2_step["state"])["block"]
    seed1 = post(live_url, "/v1/step", {"config": {"draft": "biased", "seed": 1}})["block"]
    speculative = post(live_url, "/v1/runs", {"config": {"draft": "biased", "seed": 1}})
    target_alone = post(live_url, "/v1/runs", {"config": {"draft": "biased", "seed": 1, "mode": "autoregressive"}})
    costly = post(live_url, "/v1/analysis", {"config": {"draft": "biased", "seed": 1}, "widths": list(range(1, 9)), "draft_cost": 0.35})
    two_tokens = post(live_url, "/v1/analysis", {"config": {"draft": "biased", "seed": 1}, "depth": 2})
    first_token = post(live_url, "/v1/analysis", {"config": {"draft": "biased", "seed": 1}, "depth": 1})
    at_limit = post(live_url, "/v1/runs", {"config": {"draft": "aligned", "width": 3, "seed": 0, "limit": 5}})
    blockwise = post(live_url, "/v1/step", {"config": {"draft": "biased", "width": 2, "seed": 4, "mode": "block"}})["block"]
    tokenwise = post(live_url, "/v1/step", {"config": {"draft": "biased", "width": 2, "seed": 4}})["block"]
    tree = post(live_url, "/v1/step", {"config": TREE_EXAMPLE})["block"]
    chain1_alone = post(live_url, "/v1/step", {"config": {**TREE_EXAMPLE, "mode": "speculative", "drafts": 1}})["block"]
    sampled = post(live_url, "/v1/step", {"config": SAMPLING_STEP})["block"]
    sampled_raw = post(live_url, "/v1/step", {"config": {**SAMPLING_STEP, "sampling": {**SAMPLING, "draft": "raw"}}})["block"]
    alpha = {d: post(live_url, "/v1/analysis", {"config": {**SAMPLING_STEP, "sampling": {**SAMPLING, "draft": d}}})["contexts"][0]
             for d in ("processed", "raw")}
    # the explainer's example: seed 2's first proposal is rejected at the empty prefix
    first = seed2["verification"][0]
    assert (first["context"], first["accepted"], first["p"], first["q"]) == (None, False, [0.5, 0.3, 0.2], [0.8, 0.15, 0.05])
    assert seed2["correction"]["distribution"] == [0.0, 0.5, 0.5]
    # after seed 2's correction B the next block is drafted after B (not after the discarded A A)
    assert seed2["discarded"] == ["A", "A"] and seed2["committed"] == ["B"]
    assert seed2_next["proposal"]["steps"][0]["context"] == "B" and seed2_next["committed"] == ["A", "B"]
    # Where the speedup can disappear: at draft cost 0.35 width 3 is slower than the target alone
    assert costly["expected"]["speedup"] < 1 < costly["expected"]["committed_per_pass"]
    # the two traces' common law, and the first token's under the naive rule (A 13/20)
    assert two_tokens["output"]["tv_exact"] == "0" and first_token["naive"]["distribution"][0] == {"tokens": ["A"], "p": 0.65, "p_exact": "13/20"}
    # at the limit: block 2 drafts one token and gets no bonus; 2 passes, 4 draft steps
    assert [b["proposal"]["tokens"] for b in at_limit["blocks"]] == [["C", "B", "A"], ["B"]] and at_limit["blocks"][1]["no_bonus"] == "limit"
    # seed 1 accepts at the empty prefix and rejects after A: another row of p, another correction
    assert [v["accepted"] for v in seed1["verification"]] == [True, False] and seed1["verification"][1]["context"] == "A"
    assert seed1["correction"]["distribution"] == [0.0, 0.75, 0.25]
    # SPEC 10's worked example: A then B kept as a block although A alone fails; token-wise rejects A
    v1, v2 = blockwise["verification"]
    assert (v1["weight_exact"], v1["threshold_exact"], v2["weight_exact"], v2["threshold_exact"]) == ("5/8", "4/9", "1", "1")
    assert (fmt_draw(v1["draw"]["u"]), fmt_draw(v2["draw"]["u"]), v1["below_threshold"], v2["below_threshold"]) == ("0.8591", "0.4918", False, True)
    assert (blockwise["tau"], blockwise["committed"], blockwise["next_position"]) == (2, ["A", "B", "A"], 5)
    assert [v["accepted"] for v in tokenwise["verification"]] == [False] and tokenwise["committed"] == ["B"]
    assert tokenwise["verification"][0]["draw"] == v1["draw"]
    # SPEC 11's worked example: chains A A and B A; A rejected, B accepted against r = [0, 1/2, 1/2], A, bonus A
    assert tree["proposal"]["chains"] == [["A", "A"], ["B", "A"]]
    assert [(t["depth"], t["chain"], t["token"], t["accepted"]) for t in tree["verification"]] == [
        (1, 1, "A", False), (1, 2, "B", True), (2, 2, "A", True)]
    assert tree["verification"][1]["r_exact"] == ["0", "1/2", "1/2"] and tree["verification"][0]["ratio_exact"] == "5/8"
    assert (tree["committed"], tree["bonus"]["token"], tree["next_position"]) == (["B", "A", "A"], "A", 8)
    assert chain1_alone["proposal"]["tokens"] == ["A", "A"] and chain1_alone["committed"] == ["C"]
    # SPEC 9's worked example: p' = [25/34, 9/34, 0], q' = [1, 0, 0] at the empty prefix; alpha 25/34 processed, 301/340 raw
    assert (alpha["processed"]["context"], alpha["processed"]["alpha_exact"], alpha["raw"]["alpha_exact"]) == (None, "25/34", "301/340")
    assert alpha["processed"]["q"] == [1.0, 0.0, 0.0] and alpha["raw"]["q"] == [0.8, 0.15, 0.05]
    v, raw = sampled["verification"][0], sampled_raw["verification"][0]
    assert [fmt(x) for x in v["p"]] == [fmt(25 / 34), fmt(9 / 34), "0"] == [fmt(x) for x in alpha["processed"]["p"]]
    assert (v["token"], v["accepted"], v["ratio"], sampled["committed"]) == ("A", False, alpha["processed"]["alpha"], ["B"])
    assert sampled["correction"]["distribution"] == [0.0, 1.0, 0.0]
    # the same seed drafting from the raw q: the same A and the same draw u, kept (ratio p'/q = 0.7353/0.8)
    assert (raw["token"], raw["draw"], raw["accepted"], sampled_raw["committed"]) == ("A", v["draw"], True, ["A", "B"])
    costs = ignoring_q(live_url)
    return [
        {"action": "Verify", "verdict": "verification-summary", "block": aligned, "output": aligned["committed"],
         "texts": ["C B A A", "bonus", f"u = {fmt_draw(aligned['bonus']['draw']['u'])} falls in A's part"]},
        {"action": "Verify", "verdict": "verification-summary", "block": seed2, "output": seed2["committed"],
         "texts": [TARGET_ROW, BIASED_ROW, RESIDUAL, "0.625", "0.7654", "their prefix is gone"]},
        {"action": "Verify", "verdict": "verification-summary", "block": seed2_next, "output": seed2["committed"] + seed2_next["committed"],
         "prefix": seed2["committed"],
         "texts": ["0.55/0.80 = 0.6875", fmt_draw(seed2_next["verification"][0]["draw"]["u"]), "A B committed"]},
        {"action": "Verify", "verdict": "verification-summary", "block": seed1, "output": seed1["committed"],
         "texts": ["[0.20, 0.60, 0.20]", "[0, 0.75, 0.25]", RESIDUAL, "0.4444"]},
        {"action": "Compare", "verdict": "explain-result", "traces": (speculative, target_alone, two_tokens),
         "texts": [" ".join(speculative["output"]), f"in {speculative['counters']['target_passes']} target passes",
                   " ".join(target_alone["output"]), "total variation 0"]},
        {"action": "Analyse", "verdict": "analysis-verdict", "analysis": costly,
         "texts": [fmt(costly["expected"]["committed_per_pass"]), f"the speedup is {fmt(costly['expected']['speedup'])}",
                   "under the 1\u00d7 line", "Drag the draft cost", "batching and the hardware decide the real speed"]},
        {"action": "Compare", "verdict": "explain-result", "laws": first_token,
         "texts": [RESIDUAL, "alpha = 0.7", "A 0.65, B 0.24, C 0.11", f"total variation {fmt(first_token['naive']['tv'])}"]},
        {"action": "Verify", "verdict": "verification-summary", "block": at_limit["blocks"][1], "output": at_limit["output"],
         "counters": at_limit["counters"], "texts": ["no EOS", "not a latency", "reached the limit"]},
        {"action": "Change the seed to 2", "verdict": "output-summary", "output": [], "reset": True,
         "texts": ["nothing committed, no draws used, every counter 0", "seed 2"]},
        {"action": "Verify", "verdict": "verification-summary", "block": blockwise, "output": blockwise["committed"],
         "texts": ["5/8", "4/9", "0.8591", "0.4918", "tau = 2", "Committed A B A", "although A alone would not be",
                   "0.8591 \u2265 p/q = 0.625", "commits only the correction B"]},
        {"action": "Verify", "verdict": "verification-summary", "tree": tree, "output": tree["committed"],
         "texts": ["Committed B A A", "u 0.6439 \u2265 r/q = 0.5/0.8 = 0.625", "r becomes [0, 0.50, 0.50]",
                   "0.2307 < 0.5/0.15", "0.3737 < 0.55/0.8", "commits only the correction C",
                   fmt_draw(tree["verification"][0]["draw"]["u"]), fmt_draw(tree["verification"][1]["draw"]["u"])]},
        {"action": "Verify", "verdict": "verification-summary", "block": sampled, "output": sampled["committed"], "sampling": True,
         "before": [f"p\u2032 = [{fmt(v['p'][0])}, {fmt(v['p'][1])}, 0]", "q\u2032 = [1, 0, 0]", "proposed A",
                    f"p\u2032/q\u2032 = {fmt(v['ratio'])}"],
         "texts": [f"u {fmt_draw(v['draw']['u'])} is not below {fmt(v['ratio'])}", f"correction {sampled['correction']['token']}",
                   f"p\u2032/q = {fmt(v['p'][0])}/{fmt(raw['q_token'])} = {fmt(raw['ratio'])} and is kept",
                   f"{alpha['raw']['alpha_exact']} = {fmt(alpha['raw']['alpha'])}, not "
                   f"{alpha['processed']['alpha_exact']} = {fmt(alpha['processed']['alpha'])}"]},
        {"action": "Compare", "verdict": "explain-result", "costs": costs,
         "texts": ["u 0.3116 is not below p(B) = 0.30", "both residual trees commit 3 tokens per pass",
                   f"chains with target only {fmt(costs['per_pass']['chains-target_only'])}",
                   f"beam with target only {fmt(costs['per_pass']['beam-target_only'])}", "total variation 0"]},
    ]


COSTS_EXAMPLE = {"draft": "aligned", "width": 2, "seed": 2, "mode": "tree", "drafts": 2}
"""The "what ignoring q costs" step (SPEC 12.6): the aligned draft, width 2, 2 drafts; seed 2 drafts chains B C and B C."""
COSTS_TREES = {"chains-residual": None, "distinct-residual": {"shape": "distinct"},
               "chains-target_only": {"verify": "target_only"}, "beam-target_only": {"shape": "beam", "verify": "target_only"}}


def ignoring_q(live_url: str) -> dict:
    """The service's answers for the step: seed 2's first block under residual and under target-only
    verification, and each tree's exact tokens per pass (one block from the empty prefix, no limit)."""
    def run(tree: dict | None) -> dict:
        return post(live_url, "/v1/runs", {"config": {**COSTS_EXAMPLE, "limit": 3, **({"tree": tree} if tree else {})}})["blocks"][0]

    residual, target_only = run(None), run({"verify": "target_only"})
    per_pass, tv = {}, {}
    for key, tree in COSTS_TREES.items():
        answer = post(live_url, "/v1/analysis", {"config": {**COSTS_EXAMPLE, **({"tree": tree} if tree else {})}, "depth": 1, "widths": [2]})
        entry = next(e for e in answer["tree_sweep"] if e["drafts"] == 2 and e["width"] == 2)
        per_pass[key], tv[key] = (entry["committed_per_pass"], entry["committed_per_pass_exact"]), answer["output"]["tv_exact"]
    # SPEC 12.6: 3 for both residual shapes, about 1.889 for chains + target_only, 2.265 for beam + target_only; all lossless
    assert {k: v[1] for k, v in per_pass.items()} == {"chains-residual": "3", "distinct-residual": "3",
                                                      "chains-target_only": "7556551/4000000", "beam-target_only": "453/200"}
    assert set(tv.values()) == {"0"}
    # one tree, two verifiers: the residual accepts B and C (q = p), target-only rejects B (u 0.3116 >= p(B) = 0.3) and corrects to A
    assert residual["proposal"]["chains"] == target_only["proposal"]["chains"] == [["B", "C"], ["B", "C"]]
    assert (residual["committed"], target_only["committed"]) == (["B", "C", "C"], ["A"])
    assert (fmt_draw(target_only["verification"][0]["draw"]["u"]), target_only["verification"][0]["acc_exact"]) == ("0.3116", "3/10")
    return {"residual": residual, "target_only": target_only, "per_pass": {k: v[0] for k, v in per_pass.items()}, "tv": tv}


def check_costs(page, costs: dict) -> None:
    """One tree under two verifiers (each test and what it committed) beside every tree's exact tokens per pass."""
    figure = page.locator("#explain-result")
    for words, block in (("residual", costs["residual"]), ("target only", costs["target_only"])):
        column = figure.locator(f".costs-block[data-verify='{words}']")
        expect(column.locator(".committed-tokens")).to_have_text(" ".join(block["committed"]))
        expect(column.locator(".costs-tests li")).to_have_count(len(block["verification"]))
    for key, value in costs["per_pass"].items():
        expect(figure.locator(f".costs-chart li[data-tree='{key}'] .costs-value .num")).to_have_text(fmt(value))
        expect(figure.locator(f".costs-chart li[data-tree='{key}'] .costs-tv")).to_contain_text("total variation 0")


def pq_rows(page) -> dict[str, list[str]]:
    """The labeled rows of the p/q table of the decisive verified proposal (the last one shown)."""
    table = page.locator("#verification li.verify:last-child table.pq")
    expect(table).to_be_visible()
    rows = {}
    for name in ("target p", "draft q", "p \u2212 q", "correction", "target p (raw)", "target p\u2032 (processed)",
                 "draft q (raw)", "draft q\u2032 (processed)", "p\u2032 \u2212 q\u2032"):
        row = table.get_by_role("row").filter(has=page.get_by_role("rowheader", name=name, exact=True))
        if row.count():
            rows[name] = row.locator("td .num").all_inner_texts()
    return rows


STEPS = 14
"""The story's steps (story.js STEPS): thirteen that show a claim, then the recap."""

TREE_EXAMPLE = {"draft": "biased", "width": 2, "seed": 16, "mode": "tree", "drafts": 2}
"""SPEC 11's worked example (story step 11)."""

SAMPLING = {"temperature": 0.5, "top_k": 2, "top_p": 0.8}
SAMPLING_STEP = {"draft": "biased", "width": 1, "seed": 1, "sampling": SAMPLING}
"""SPEC 9's worked example (story step 12): width 1, seed 1, the processed draft's A rejected."""


def check_step(ins: Inspector, n: int, expected: dict, phone: bool) -> None:
    page = ins.page
    story = page.locator("#story-region")
    expect(page.locator("#story-count")).to_contain_text(f"Step {n} of {STEPS}")
    assert f"story={n}" in page.url
    for needle in expected.get("before", []):  # the numbers the step's words give before its action
        expect(page.locator("#story-text")).to_contain_text(needle)
    if expected.get("reset"):  # the step begins with two blocks of seed 1 in the history
        expect(page.locator("#history .history-item")).to_have_count(2)
    story.get_by_role("button", name=expected["action"], exact=True).click()
    ins.wait_idle()

    # the step's words after the action are focused and in view with Next (two Tabs away), the
    # verdict is announced, and (beside the story, on a wide screen) in view too
    focused = page.locator(":focus")
    expect(focused).to_have_class("story-after")
    expect(focused).to_be_in_viewport()
    expect(ins.button("Next")).to_be_in_viewport()
    verdict = page.locator(f"#{expected['verdict']}, .{expected['verdict']}").first
    if not phone:
        expect(verdict).to_be_in_viewport()
    expect(page.locator("#announce")).not_to_be_empty()
    assert page.locator("#announce").get_attribute("aria-live") == "polite"

    # the step's key numbers
    text = page.locator("main").inner_text()
    for needle in expected["texts"]:
        assert needle in text, (n, needle)
    if "output" in expected:
        assert ins.output() == expected["output"]
    block = expected.get("block")
    if block:
        v = block["verification"][-1]  # the decisive proposal: the rejected one (a rejection ends the block) or the last
        rows = pq_rows(page)
        if expected.get("sampling"):  # SPEC 9: the processed rows the service used, the models' raw rows above them
            rows = {"target p": rows["target p\u2032 (processed)"], "draft q": rows["draft q\u2032 (processed)"],
                    "p \u2212 q": rows["p\u2032 \u2212 q\u2032"], "correction": rows["correction"],
                    "raw": [rows["target p (raw)"], rows["draft q (raw)"]]}
            assert rows["raw"] == [["0.5", "0.3", "0.2"], ["0.8", "0.15", "0.05"]], n
        assert rows["target p"] == [fmt(x) for x in v["p"]], n
        assert rows["draft q"] == [fmt(x) for x in v["q"]], n
        if block["mode"] == "block":  # block verification (SPEC 10): weights, thresholds, draws, tau
            check_block(page, block)
        else:
            assert rows["p \u2212 q"] == [signed(p - q) for p, q in zip(v["p"], v["q"])], n
            if block["correction"]:
                assert rows["correction"] == [fmt(x) for x in block["correction"]["distribution"]], n
            expect(page.locator("#verification .verdict")).to_have_text(
                ["\u2713 accepted" if row["accepted"] else "\u2717 rejected" for row in block["verification"]])
    if expected.get("tree"):
        check_tree(page, expected["tree"])
    check_claim(ins, expected)
    result = expected.get("analysis")
    if result:
        expect(page.locator("#analysis-result .analysis-verdict")).to_contain_text(
            f"speedup {fmt(result['expected']['speedup'])}; best width {result['best_width']}")
        expect(page.locator("#analysis-result .chart .one-x")).to_have_count(1)  # the 1x line on the chart

    if phone:
        overflow = page.evaluate(OVERFLOW)
        assert overflow["out"] == [] and overflow["scrollWidth"] <= overflow["width"], (n, overflow)
    assert serious_axe_violations(page) == [], n


def check_claim(ins: Inspector, expected: dict) -> None:
    """What a step shows beyond its block: the next draft's context, the counters, a reset
    session, the two traces' figure or the three laws' figure."""
    page = ins.page
    if "prefix" in expected:  # the next block was drafted after the committed output (the correction)
        expect(page.locator("#proposal-table tbody tr").first.locator("td").nth(1)).to_have_text(expected["prefix"][-1])
    if "counters" in expected:
        assert {k: int(v) for k, v in ins.counters().items() if k in expected["counters"]} == expected["counters"]
    if expected.get("reset"):
        expect(page.locator("#history .history-item")).to_have_count(0)
        assert {v for k, v in ins.counters().items() if k != "committed_per_pass"} == {"0"}, ins.counters()
    if expected.get("traces"):
        check_traces(page, *expected["traces"])
    if expected.get("laws"):
        check_laws(ins, expected["laws"])
    if expected.get("costs"):
        check_costs(page, expected["costs"])


def check_block(page, block: dict) -> None:
    """A block-verification block as the page draws it: per proposal its weight and threshold
    (decimal, then the exact fraction), its draw against the threshold (a marker on a bar), its
    fate (i <= tau accepted, tau + 1 rejected, the rest discarded), and tau marked once."""
    items = page.locator("#verification > li.block-verify")
    expect(items).to_have_count(len(block["verification"]))
    for i, v in enumerate(block["verification"]):
        item = items.nth(i)
        exact = lambda value, fraction: fmt(value) + ("" if fraction == fmt(value) else f" ({fraction})")
        expect(item.locator(".weight")).to_have_text(exact(v["weight"], v["weight_exact"]))
        expect(item.locator(".threshold")).to_have_text(exact(v["threshold"], v["threshold_exact"]))
        expect(item.locator(".eta")).to_have_text(fmt_draw(v["draw"]["u"]))
        bar = item.get_by_role("img")
        expect(bar).to_have_attribute("aria-label", re.compile(
            rf"^threshold {re.escape(fmt(v['threshold']))} .* draw {re.escape(fmt_draw(v['draw']['u']))} marked: {'below' if v['below_threshold'] else 'not below'}$"))
        fate = "accepted" if v["index"] <= block["tau"] else "rejected" if v["index"] == block["tau"] + 1 else "discarded"
        expect(item.locator(".verdict")).to_have_class(re.compile(rf"\b{fate}\b"))
    expect(page.locator("#verification .tau-tag")).to_have_text([f"tau = {block['tau']}"] if block["tau"] else [])
    if block["tau"]:
        expect(items.nth(block["tau"] - 1).locator(".tau-tag")).to_have_count(1)


def check_tree(page, block: dict) -> None:
    """A mode-tree block as the story draws it (SPEC 11): the tree with the accepted path, the
    first depth's rows p, q and r (r shrinking after the rejection, exact fractions beside), and
    every test in order with its verdict and its draw against r/q."""
    tree = page.locator("#tree .tree")
    expect(tree).to_be_visible()
    expect(tree.locator(".tree-item.on-path > .tree-node > .token")).to_have_text(["B", "A", "A"])  # accepted B, A, then the bonus
    expect(tree.locator(".tree-item.rejected > .tree-node > .token")).to_have_text(["A"])
    expect(tree.locator(".tree-item.untested > .tree-node > .token")).to_have_text(["A"])
    depth1 = page.locator("#verification > li.tree-depth").first
    rows = {name: depth1.get_by_role("row").filter(has=page.get_by_role("rowheader", name=name, exact=True)).locator("td").all_inner_texts()
            for name in ("target p", "draft q", "r, test 1 (= p)", "r, test 2")}
    first, second = block["verification"][:2]
    assert rows["target p"] == [fmt(x) for x in first["p"]]
    assert rows["draft q"] == [fmt(x) for x in first["q"]]
    squash = lambda cells: [" ".join(c.replace("(the candidate tested)", "").split()) for c in cells]
    exact = lambda x, e: fmt(x) if e == fmt(x) else f"{fmt(x)} ({e})"
    assert squash(rows["r, test 2"]) == [exact(x, e) for x, e in zip(second["r"], second["r_exact"])] == ["0", "0.5 (1/2)", "0.5 (1/2)"]
    assert squash(rows["r, test 1 (= p)"]) == [exact(x, e) for x, e in zip(first["r"], first["r_exact"])]
    tests = page.locator("#verification li.tree-test")
    expect(tests.locator(".verdict")).to_have_text(["\u2717 rejected" if not t["accepted"] else "\u2713 accepted" for t in block["verification"]])
    for item, t in zip(tests.all(), block["verification"]):
        expect(item.locator(".verify-head .token")).to_have_text(t["token"])
        expect(item.locator(".tree-short")).to_contain_text(f"u {fmt_draw(t['draw']['u'])}")
        expect(item.locator(".tree-short")).to_contain_text(f"r/q {fmt(t['ratio'])}")


def check_traces(page, speculative: dict, alone: dict, analysis: dict) -> None:
    """Two traces of one seed on one screen (speculative sampling, the target alone) as the service
    ran them, beside each first-two-tokens outcome's exact probability under both (equal)."""
    figure = page.locator("#explain-result")
    expect(figure.locator(".trace-row[data-mode='speculative'] .token")).to_have_text(speculative["output"])
    expect(figure.locator(".trace-row[data-mode='autoregressive'] .token")).to_have_text(alone["output"])
    target = {" ".join(e["tokens"]): e["p"] for e in analysis["output"]["target"]}
    for entry in analysis["output"]["distribution"]:
        outcome = " ".join(entry["tokens"])
        cells = figure.locator(f"tr[data-outcome='{outcome}'] td .num").all_inner_texts()
        assert cells == [fmt(entry["p"]), fmt(target[outcome])] == [fmt(entry["p"])] * 2, outcome


def first_tokens(live_url: str, seed: int, samples: int) -> dict[str, list[int]]:
    """SPEC 3 and 4 at the empty prefix of the toy with the biased draft, from the service's own
    draws (three per sample, in order): the first token's counts when the target samples alone
    (u0), under speculative sampling (draft with u0, keep if u1 < p/q, else the residual with u2)
    and under the naive rule (else p with u2). Rows as the explainer writes them."""
    import requests

    p, q, residual = [0.5, 0.3, 0.2], [0.8, 0.15, 0.05], [0.0, 0.5, 0.5]
    us: list[float] = []
    while len(us) < 3 * samples:
        count = min(4096, 3 * samples - len(us))
        answer = requests.get(f"{live_url}/v1/draws", params={"seed": seed, "position": len(us), "count": count}, timeout=60)
        us += [d["u"] for d in answer.json()["draws"]]

    def sample(row: list[float], u: float) -> int:
        total = 0.0
        for i, x in enumerate(row):
            total += x
            if x > 0 and u < total:
                return i
        return max(i for i, x in enumerate(row) if x > 0)

    counts = {rule: [0, 0, 0] for rule in ("target", "speculative", "naive")}
    for i in range(samples):
        u0, u1, u2 = us[3 * i: 3 * i + 3]
        x = sample(q, u0)
        kept = u1 < p[x] / q[x]
        counts["target"][sample(p, u0)] += 1
        counts["speculative"][x if kept else sample(residual, u2)] += 1
        counts["naive"][x if kept else sample(p, u2)] += 1
    return counts


def check_laws(ins: Inspector, analysis: dict) -> None:
    """p and q at the empty prefix laid over each other (min(p, q) sums to alpha, the positive part
    of p - q to 1 - alpha), the first token's exact law under the three rules as the service
    computes it, and the samples' counts exactly those the service's draws give, growing by 10,000
    a press; the naive rule's share of A sits far from the target's 0.5, within 4.5 standard
    errors of its own 0.65."""
    page = ins.page
    start = analysis["contexts"][0]
    figure = page.locator("#explain-result")
    expect(figure.locator(".kept-sum")).to_have_text(fmt(start["alpha"]))
    expect(figure.locator(".back-sum")).to_have_text(fmt(1 - start["alpha"]))
    laws = {"target": analysis["output"]["target"], "speculative": analysis["output"]["distribution"],
            "naive": analysis["naive"]["distribution"]}
    for rule, law in laws.items():
        expect(figure.locator(f".law[data-rule='{rule}'] .law-exact")).to_have_text([fmt(e["p"]) for e in law])
    live_url = ins.base
    for total in (10_000, 20_000):
        expect(figure.locator(".laws-total")).to_have_text(f"{total:,} samples of each rule")
        counts = first_tokens(live_url, 1, total)
        for rule, law in laws.items():
            labels = figure.locator(f".law[data-rule='{rule}'] .sample-bar").evaluate_all("all => all.map((e) => e.getAttribute('aria-label'))")
            assert labels == [f"{e['tokens'][0]}: {c} of {total} samples" for e, c in zip(law, counts[rule])], (rule, labels)
            for e, c in zip(law, counts[rule]):
                assert abs(c / total - e["p"]) <= 4.5 * (e["p"] * (1 - e["p"]) / total) ** 0.5, (rule, e, c)
        assert counts["naive"][0] / total > 0.6 > 0.55 > counts["speculative"][0] / total
        if total == 10_000:
            page.get_by_role("button", name="Draw 10,000 more").click()
            ins.wait_idle()


VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("screen", sorted(VIEWPORTS))
def test_guided_story_walk(browser, live_url, artefacts_dir, screen):
    """The whole story, clicked through from the page's own "Guided story" button, then free
    exploration one click away; Back returns to the previous step (every step is a URL)."""
    viewport = VIEWPORTS[screen]
    phone = screen == "phone"
    # the desktop walk lets the page scroll smoothly (no reduced motion): the verdict is still brought into view
    context = browser.new_context(bypass_csp=True, viewport=viewport, reduced_motion="reduce" if phone else "no-preference",
                                  is_mobile=phone, has_touch=phone)
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open()
        steps = story_steps(live_url)
        ins.press("Guided story")
        urls = []
        for n, expected in enumerate(steps, start=1):
            check_step(ins, n, expected, phone)
            ins.screenshot(f"story-{screen}-{n}")
            urls.append(ins.page.url)
            ins.press("Next")
        # the recap: every claim shown, each linking back to its step
        expect(ins.page.locator("#story-count")).to_contain_text(f"Step {STEPS} of {STEPS}")
        links = ins.page.locator("#story-text .story-recap a")
        expect(links).to_have_count(len(steps))
        assert [int(re.search(r"story=(\d+)", h).group(1)) for h in links.evaluate_all("all => all.map((a) => a.href)")] == list(range(1, STEPS))
        expect(ins.button("Next")).to_be_disabled()
        ins.screenshot(f"story-{screen}-{STEPS}")

        ins.page.go_back()  # to step 13 after Compare, 13 as it began, 12 after Verify, 12 as it began, ..., 6 after Analyse
        ins.wait_idle()
        expect(ins.page.locator("#story-count")).to_contain_text(f"Step {STEPS - 1} of {STEPS}")
        for _ in range(3):
            ins.page.go_back()
            ins.wait_idle()
        expect(ins.page.locator("#story-count")).to_contain_text(f"Step {STEPS - 2} of {STEPS}")
        expect(ins.page.locator("#verification-summary")).to_have_text("Drafted, not verified yet: press Verify to commit.")
        for _ in range(11):
            ins.page.go_back()
            ins.wait_idle()
        expect(ins.page.locator("#story-count")).to_contain_text(f"Step 6 of {STEPS}")
        assert ins.page.url == urls[5]
        expect(ins.page.locator("#analysis-result .analysis-verdict")).to_contain_text("speedup 0.9695")

        ins.press("Explore freely")
        assert "story=" not in ins.page.url
        expect(ins.region("Settings")).to_be_visible()
        expect(ins.field("Draft model")).to_have_value("biased")
        for name in ("Draft", "Verify", "Step", "Run", "Reset"):
            expect(ins.button(name)).to_be_visible()
        ins.press("Guided story")
        expect(ins.page.locator("#story-count")).to_contain_text(f"Step 1 of {STEPS}")
        ins.assert_no_console_errors()
    finally:
        context.close()


def test_a_pasted_story_link_rebuilds_the_step(inspector, live_url):
    """A step's link (here step 2 after Verify) in a fresh tab shows the same rows."""
    block = post(live_url, "/v1/step", {"config": {"draft": "biased", "seed": 2}})["block"]
    ins = inspector.open("story=2&draft=biased&seed=2&blocks=1")
    expect(ins.page.locator("#story-heading")).to_have_text("A rejection at the empty prefix")
    rows = pq_rows(ins.page)
    assert rows["target p"] == ["0.5", "0.3", "0.2"] == [fmt(x) for x in block["verification"][0]["p"]]
    assert rows["draft q"] == ["0.8", "0.15", "0.05"]
    assert rows["p \u2212 q"] == ["\u22120.3", "+0.15", "+0.15"]
    assert rows["correction"] == ["0", "0.5", "0.5"]
    expect(ins.page.locator("#story-text")).to_contain_text(RESIDUAL)
    expect(ins.region("Settings")).to_be_hidden()  # the story shows what it talks about
    ins.assert_no_console_errors()


PROJECTORS = [(1024, 768, 18), (1280, 720, 18), (1920, 1080, 28)]
"""Projector screens: width, height and the least size of the story's words there (px)."""


@pytest.mark.parametrize("width, height, least", PROJECTORS)
def test_projector_mode_large_text_and_one_screen_per_step(browser, live_url, artefacts_dir, width, height, least):
    """Projector mode (a toggle with URL state): the text grows with the screen (the story's words
    at least 18 px at 1024x768 and 28 px at 1920x1080, every visible text at least 18 px), each
    step after its action fits the screen without scrolling, and the step links stay."""
    context = browser.new_context(viewport={"width": width, "height": height}, reduced_motion="reduce")
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open()
        ins.press("Guided story")
        ins.press("Projector mode")
        expect(ins.button("Projector mode")).to_have_attribute("aria-pressed", "true")
        assert "projector=1" in ins.page.url
        for n in range(1, STEPS + 1):
            action = ins.page.locator("#story-region #btn-story-action")
            if action.count():  # the recap has none
                action.click()
                ins.wait_idle()
            assert ins.page.evaluate(SMALL_TEXT) == [], (n, ins.page.evaluate(SMALL_TEXT))
            words = ins.page.locator("#story-text p").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
            assert words >= least, (n, words)
            size = ins.page.evaluate("[document.documentElement.scrollHeight, document.documentElement.scrollWidth]")
            assert size[0] <= height and size[1] <= width, (n, size)
            expect(ins.page.locator("#story-steps a")).to_have_count(STEPS)
            expect(ins.page.locator("#story-steps")).to_be_in_viewport()
            if n == 12:  # six labeled rows (raw and processed): their names wrap so every number, C's too, is in the card
                scroll = ins.page.locator("#verification li.verify:last-child .table-scroll")
                right = scroll.evaluate("e => e.getBoundingClientRect().right")
                nums = scroll.locator("tbody td:last-child .num")
                expect(nums).to_have_count(6)
                rights = [x.evaluate("e => e.getBoundingClientRect().right") for x in nums.all()]
                assert all(r <= right + 0.5 for r in rights), (n, right, rights)
            path = ins.screenshot(f"story-projector-{width}x{height}-{n}")
            if n == 2 and width == 1280 and os.environ.get("SPECDEC_KEY_FRAME") == "1":  # the README's key frame, on request
                shutil.copyfile(path, ROOT / "docs" / "img" / "inspector-story.png")
            if n < STEPS:
                ins.press("Next")
        if width != 1280:
            return
        ins.page.reload()
        ins.wait_ready()
        expect(ins.button("Projector mode")).to_have_attribute("aria-pressed", "true")
        ins.press("Explore freely")  # the whole page in projector mode, every technical detail open, the analysis shown
        ins.press("Step")
        ins.page.locator("details").evaluate_all("all => all.forEach((d) => { d.open = true; })")
        assert ins.page.evaluate(SMALL_TEXT) == []
        ins.screenshot("projector-free")
        ins.press("Projector mode")
        assert "projector=1" not in ins.page.url
        assert float(ins.page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")) >= 17
        ins.assert_no_console_errors()
    finally:
        context.close()


@pytest.mark.parametrize("fragment", ["story=4", "story=4&seed=5", "story=4&draft=biased&seed=1&blocks=0",
                                      "story=6", "story=2&blocks=5", "story=10", "story=10&seed=1&mode=speculative",
                                      "story=11", "story=11&drafts=3&mode=tree&draft=biased&width=2&seed=16",
                                      "story=11&mode=speculative&draft=biased&width=2&seed=16",
                                      "story=12", "story=12&draft_rows=raw&temperature=0.5&top_k=2&top_p=0.8&draft=biased&width=1&seed=1"])
def test_a_shortened_or_edited_story_link_sets_the_step_up(inspector, fragment):
    """A story link whose settings are not the step's (typed short, or a seed edited) would show
    the step's words over another session, and its Verify would do nothing: the step is set up
    as it begins instead (its settings, its drafted proposal), and its action works."""
    ins = inspector.open(fragment)
    n = int(fragment.split("&")[0].split("=")[1])
    setup = {4: "draft biased \u00b7 speculative \u00b7 width 3 \u00b7 seed 1",
             6: "draft biased \u00b7 speculative \u00b7 width 3 \u00b7 seed 1",
             2: "draft biased \u00b7 speculative \u00b7 width 3 \u00b7 seed 2",
             10: "draft biased \u00b7 block \u00b7 width 2 \u00b7 seed 4",
             11: "draft biased \u00b7 tree \u00b7 2 drafts \u00b7 width 2 \u00b7 seed 16",
             12: "draft biased \u00b7 speculative \u00b7 width 1 \u00b7 seed 1 \u00b7 limit 8 \u00b7 T 0.5 \u00b7 top-k 2 \u00b7 top-p 0.8"}[n]
    expect(ins.page.locator("#story-count")).to_contain_text(f"Step {n} of {STEPS}")
    expect(ins.page.locator("#story-setup")).to_contain_text(setup)
    assert "draft=biased" in ins.page.url and f"story={n}" in ins.page.url
    ins.page.locator("#btn-story-action").click()
    ins.wait_idle()
    if n == 10:  # SPEC 10's worked example: tau = 2, A B then the bonus A
        expect(ins.page.locator("#status")).to_contain_text("tau = 2; bonus A. Committed A B A.")
    elif n == 11:  # SPEC 11's worked example: A rejected, B accepted, A accepted, bonus A
        expect(ins.page.locator("#status")).to_contain_text(
            "depth 1: A (chain 1) rejected, B (chain 2) accepted; depth 2: A (chain 2) accepted; bonus A. Committed B A A.")
    elif n == 12:  # SPEC 9's worked example, the processed draft (a link asking for raw draft rows is set back)
        expect(ins.page.locator("#story-setup")).not_to_contain_text("draft rows")
        assert pq_rows(ins.page)["draft q\u2032 (processed)"] == ["1", "0", "0"]
        assert pq_rows(ins.page)["correction"] == ["0", "1", "0"]
        assert ins.output() == ["B"]
    elif n == 4:
        expect(ins.page.locator("#correction")).to_contain_text("0.75")
        assert pq_rows(ins.page)["correction"] == ["0", "0.75", "0.25"]
    elif n == 2:
        assert pq_rows(ins.page)["correction"] == ["0", "0.5", "0.5"]
    else:
        expect(ins.page.locator("#analysis-result .analysis-verdict")).to_contain_text("draft cost 0.35")
        expect(ins.page.locator("#analysis-result .analysis-verdict")).to_contain_text("speedup 0.9695")
    ins.assert_no_console_errors()


def test_the_speedup_step_says_when_the_slider_left_its_draft_cost(inspector, live_url):
    """Step 6's words give the figures of draft cost 0.35 (speedup 0.9695, under the 1x line); once the
    reader moves the slider the figures are another cost's, and the card says so (and no longer once it is back)."""
    ins = inspector.open("story=6")
    ins.page.locator("#btn-story-action").click()
    ins.wait_idle()
    text = ins.page.locator("#story-text")
    expect(text).to_contain_text("the speedup is 0.9695")
    expect(text.locator(".story-note")).to_have_count(0)
    slider = ins.page.locator("#draft-cost")
    slider.focus()
    ins.page.keyboard.press("ArrowRight")
    ins.wait_idle()
    expect(ins.page.locator("#analysis-result .analysis-view")).to_have_attribute("data-cost", "0.36")
    expect(text.locator(".story-note")).to_have_text(
        "These words are for draft cost 0.35; the figures now show draft cost 0.36. Move the slider back to 0.35 to compare.")
    assert "null" not in text.inner_text()
    ins.page.keyboard.press("ArrowLeft")
    ins.wait_idle()
    expect(ins.page.locator("#analysis-result .analysis-view")).to_have_attribute("data-cost", "0.35")
    expect(text.locator(".story-note")).to_have_count(0)
    ins.assert_no_console_errors()


def test_a_step_link_pressed_by_keyboard_keeps_the_focus_in_the_story(inspector):
    """The step links (1 to 9) are redrawn when a step begins: pressing one by keyboard used to
    drop the focus to the page; it lands on the new step's heading, as Next does."""
    ins = inspector.open("story=1")
    link = ins.page.locator("#story-steps a").nth(2)
    expect(link).to_have_attribute("href", re.compile(r"story=3"))
    link.focus()
    ins.page.keyboard.press("Enter")
    ins.wait_idle()
    expect(ins.page.locator("#story-count")).to_contain_text(f"Step 3 of {STEPS}")
    expect(ins.page.locator("#story-heading")).to_be_focused()
    ins.page.keyboard.press("Tab")
    expect(ins.page.locator(":focus")).to_have_id("btn-story-prev")
    ins.page.go_back()  # the step link made a history entry, as Next does
    ins.wait_idle()
    expect(ins.page.locator("#story-count")).to_contain_text(f"Step 1 of {STEPS}")
    ins.assert_no_console_errors()


def test_explore_freely_by_keyboard_puts_the_focus_on_the_settings(inspector):
    """'Explore freely' hides itself: pressed by keyboard it used to leave the focus nowhere (the
    page); it goes to the Settings heading, and Tab then reaches the first setting."""
    ins = inspector.open("story=2")
    ins.button("Explore freely").focus()
    ins.page.keyboard.press("Enter")
    ins.wait_idle()
    expect(ins.page.locator("#settings-heading")).to_be_focused()
    expect(ins.page.locator("#settings-heading")).to_be_in_viewport()
    ins.page.keyboard.press("Tab")
    expect(ins.field("Target")).to_be_focused()
    ins.assert_no_console_errors()


@pytest.mark.parametrize("n, seed", [(2, 2), (4, 1)])
def test_the_proposal_the_step_talks_about_is_on_the_page(inspector, live_url, n, seed):
    """Steps 2 and 4 say what the draft proposed ("it proposed A", "proposed A A C") before
    Verify: the proposal itself (dashed, not committed) is shown then with its draft table (each
    proposal's q row and draw u), and kept after Verify: accepted tokens marked, the rejected one
    and the discarded ones struck through."""
    drafted = post(live_url, "/v1/draft", {"config": {"draft": "biased", "seed": seed}})["tokens"]
    block = post(live_url, "/v1/step", {"config": {"draft": "biased", "seed": seed}})["block"]
    ins = inspector.open(f"story={n}")
    proposal = ins.page.locator("#proposal-tokens .token")
    expect(proposal.first).to_be_visible()
    expect(proposal).to_have_text(drafted)
    assert ins.page.locator("#proposal-tokens .uncommitted").count() == len(drafted)
    assert " ".join(drafted[:1 if n == 2 else 3]) in ins.page.locator("#story-text").inner_text()
    table = ins.page.locator("#proposal-table")
    expect(table).to_be_visible()
    steps = post(live_url, "/v1/draft", {"config": {"draft": "biased", "seed": seed}})["steps"]
    expect(table.locator(".q-compact")).to_have_text([" ".join(fmt(x) for x in step["q"]) for step in steps])
    expect(table.locator(".draw")).to_have_text([f"u {fmt_draw(step['draw']['u'])}" for step in steps], use_inner_text=True)
    ins.page.locator("#btn-story-action").click()
    ins.wait_idle()
    expect(ins.page.locator("#proposal-region")).to_be_visible()
    accepted = [v["token"] for v in block["verification"] if v["accepted"]]
    expect(ins.page.locator("#proposal-tokens .accepted-token")).to_have_text(accepted)
    struck = ins.page.locator("#proposal-tokens del")
    expect(struck).to_have_text([f"{t} ({'rejected' if i == len(accepted) else 'discarded'})" for i, t in enumerate(drafted) if i >= len(accepted)])
    ins.assert_no_console_errors()


@pytest.mark.parametrize("projector", [False, True])
def test_the_p_q_table_fits_its_card_at_1280(browser, live_url, artefacts_dir, projector):
    """At 1280 px (800 high, or 720 in projector mode) the decisive p/q table of steps 2 and 3 fits
    its card: the C column's p - q bar was cut off and the table scrolled sideways."""
    height = 720 if projector else 800
    context = browser.new_context(viewport={"width": 1280, "height": height}, reduced_motion="reduce")
    try:
        ins = Inspector(context.new_page(), live_url, artefacts_dir).open("story=2" + ("&projector=1" if projector else ""))
        for n in (2, 3):
            ins.page.locator("#btn-story-action").click()
            ins.wait_idle()
            scroll = ins.page.locator("#verification li.verify:last-child .table-scroll")
            widths = scroll.evaluate("e => [e.scrollWidth, e.clientWidth]")
            assert widths[0] <= widths[1], (n, widths)
            bars = ins.page.locator("#verification li.verify:last-child .signed-bar")
            expect(bars).to_have_count(3)
            right = scroll.evaluate("e => e.getBoundingClientRect().right")
            assert all(b.evaluate("e => e.getBoundingClientRect().right") <= right + 0.5 for b in bars.all()), n
            # p - q as bars, not stray marks: a full text line high, at least 5 px for any nonzero value
            sizes = bars.locator(".signed:not(.zero)").evaluate_all(
                "all => all.map((e) => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
            assert len(sizes) == 3 and all(w >= 5 and h >= 14 for w, h in sizes), (n, sizes)
            if n == 2:
                ins.press("Next")
        ins.assert_no_console_errors()
    finally:
        context.close()


def test_a_small_nonzero_draw_is_not_shown_as_zero(inspector, live_url):
    """Step 11's bonus draw is u = 0.0000303 (draw #7): rounded to 4 decimals it read "u 0", as if the
    draw were exactly 0. A nonzero value the 4 decimals would hide keeps 2 significant digits
    ("0.00003") wherever a number is shown (the bonus line, the draw stream), its float64 in the tooltip."""
    bonus = post(live_url, "/v1/step", {"config": TREE_EXAMPLE})["block"]["bonus"]["draw"]
    assert (bonus["position"], f"{bonus['u']:.4f}", fmt_draw(bonus["u"])) == (7, "0.0000", "0.00003")
    ins = inspector.open("story=11")
    ins.page.locator("#btn-story-action").click()
    ins.wait_idle()
    line = ins.page.locator("#bonus .bonus")
    expect(line).to_contain_text("u 0.00003 (draw #7)")
    expect(line.locator(".num")).to_have_attribute("title", str(bonus["u"]).replace("3.0334921236496726e-05", "0.000030334921236496726"))
    cells = ins.page.locator("#draws tr").filter(has_text="bonus (A)").locator("td")  # the draw stream (folded in the story)
    assert [c.text_content() for c in cells.all()][:2] == ["#7", "0.00003"]
    ins.assert_no_console_errors()


def test_clicker_keys_next_within_reach_and_the_recap_links_back(inspector):
    """Presentation clickers send ArrowRight/PageDown (next step) and ArrowLeft/PageUp (previous);
    inside the draft-cost slider the arrows keep moving the slider. After an action the step's
    words have the focus and Next is at most three Tabs away. The recap's claims link back."""
    ins = inspector.open("story=2")
    page = ins.page
    count = page.locator("#story-count")
    for key, n in (("ArrowRight", 3), ("PageDown", 4), ("ArrowLeft", 3), ("PageUp", 2)):
        page.keyboard.press(key)
        ins.wait_idle()
        expect(count).to_contain_text(f"Step {n} of {STEPS}")
    page.locator("#btn-story-action").click()
    ins.wait_idle()
    expect(page.locator(":focus")).to_have_class("story-after")
    for tabs in range(1, 4):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "btn-story-next":
            break
    assert page.evaluate("document.activeElement.id") == "btn-story-next", tabs
    page.keyboard.press("Enter")
    ins.wait_idle()
    expect(count).to_contain_text(f"Step 3 of {STEPS}")

    ins.open("story=6")
    page.locator("#btn-story-action").click()
    ins.wait_idle()
    page.locator("#draft-cost").focus()
    page.keyboard.press("ArrowRight")
    ins.wait_idle()
    expect(count).to_contain_text(f"Step 6 of {STEPS}")
    expect(page.locator("#analysis-result .analysis-view")).to_have_attribute("data-cost", "0.36")

    ins.open(f"story={STEPS}")
    expect(page.locator("#btn-story-action")).to_have_count(0)
    link = page.locator("#story-text .story-recap a").nth(6)
    expect(link).to_contain_text("drawing it from p biases the output")
    link.click()
    ins.wait_idle()
    expect(count).to_contain_text(f"Step 7 of {STEPS}")
    expect(page.locator("#story-heading")).to_have_text("Why the correction is not drawn from p")
    page.keyboard.press("PageUp")
    ins.wait_idle()
    expect(count).to_contain_text(f"Step 6 of {STEPS}")
    ins.assert_no_console_errors()
