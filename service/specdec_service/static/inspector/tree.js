// Several drafts (SPEC section 11, mode `tree`; SpecInfer, Miao et al. 2024) drawn in the page's
// visual language: the D chains as one tree (chains that agree on their first tokens share a
// branch), the accepted path highlighted, and per depth the candidates' tests in order, each
// against the row r that shrinks after every rejected candidate (labeled rows beside p and q,
// the exact fractions as secondary text), its draw against r/q on a bar, its verdict in words.
// Pure functions of the API's block records (docs/trace-format.md, "Mode tree"): they decide
// nothing, they show what the service decided. render.js and main.js call in here through
// small hooks (isTree, isTreeProposal).

import { bar, contextLabel, drawNum, el, fmt, fmtDraw, markedToken, modelRows, num, token } from "./render.js";
import * as N from "./nodetree.js";

/** Whether a proposal is a tree proposal (it has `chains`, SPEC 11.1, or `nodes`, SPEC 12). */
export function isTreeProposal(proposal) {
  return Boolean(proposal) && (Array.isArray(proposal.chains) || N.hasNodes(proposal));
}

/** Whether only POST /v1/step can verify this proposal (shapes distinct and beam draft their own tree; SPEC 12). */
export function needsStep(proposal) {
  return N.hasNodes(proposal) && !Array.isArray(proposal.chains);
}

/** The proposal in words: each chain, or each depth's nodes. */
export function proposalWords(proposal) {
  return Array.isArray(proposal.chains) ? proposal.chains.map((c, i) => `chain ${i + 1}: ${c.join(" ")}`).join("; ") : N.proposalWords(proposal);
}

/** A test's candidate in words: "chain 2's B" (SPEC 11) or "B" (a SPEC 12 node). */
const candidate = (t) => (t.chain ? `chain ${t.chain}'s ${t.token}` : t.token);

/** Whether a block record is a mode-tree block (SPEC 11). */
export function isTree(block) {
  return Boolean(block) && block.mode === "tree" && isTreeProposal(block.proposal);
}

/** A decimal with its exact fraction as secondary text ("0.625 (5/8)"); a fraction equal to the decimal is not repeated. */
function exactNumber(value, exact, className = "num") {
  const shown = fmt(value);
  return el("span", { className: `${className} with-exact` }, num(value),
    exact && exact !== shown ? el("span", { className: "exact" }, ` (${exact})`) : null);
}

const chainWords = (chains) => `chain${chains.length === 1 ? "" : "s"} ${chains.join(", ")}`;

/**
 * The chains merged on their common prefixes: [{token, depth, chains, children, tests}], children in
 * the order their first chain comes; each node collects the tests of the chains that reach it.
 */
export function buildTree(chains, tests = []) {
  const root = { children: [], chains: chains.map((_, i) => i + 1) };
  const at = new Map(); // "chain:depth" -> node
  chains.forEach((chain, c) => {
    let node = root;
    chain.forEach((label, i) => {
      let child = node.children.find((n) => n.token === label);
      if (!child) {
        child = { token: label, depth: i + 1, chains: [], children: [], tests: [] };
        node.children.push(child);
      }
      child.chains.push(c + 1);
      at.set(`${c + 1}:${i + 1}`, child);
      node = child;
    });
  });
  tests.forEach((t, n) => {
    const node = at.get(`${t.chain}:${t.depth}`);
    if (node) node.tests.push({ ...t, number: n + 1 });
  });
  return root;
}

/** A node's fate: accepted (one of its tests passed), rejected (tested, none passed) or untested. */
function nodeFate(node) {
  if (node.tests.some((t) => t.accepted)) return "accepted";
  return node.tests.length ? "rejected" : "untested";
}

const NODE_WORDS = { accepted: "\u2713 accepted", rejected: "\u2717 rejected", untested: "\u2205 not tested" };

/** One node of the tree, and its subtree. `pending`: drafted, nothing verified yet. */
function treeItem(node, pending, end) {
  const fate = pending ? "pending" : nodeFate(node);
  const tests = node.tests.map((t) => `test ${t.number} ${t.accepted ? "passed" : "failed"}`);
  const label = pending ? markedToken(node.token, "uncommitted")
    : token(node.token, fate === "accepted" ? "accepted-token" : fate === "untested" ? "discarded discarded-token" : "rejected-token");
  const children = node.children.map((child) => treeItem(child, pending, end));
  if (!pending && fate === "accepted" && end && end.depth === node.depth + 1) children.push(endItem(end));
  return el("li", { className: `tree-item ${fate}${fate === "accepted" ? " on-path" : ""}` },
    el("div", { className: "tree-node" }, label, " ",
      el("span", { className: "tree-chains" }, chainWords(node.chains)), pending ? null : " ",
      pending ? null : el("span", { className: `tree-fate ${fate}` }, NODE_WORDS[fate],
        tests.length ? el("span", { className: "tree-tests-said" }, ` (${tests.join(", ")})`) : null)),
    children.length ? el("ul", {}, children) : null);
}

/** The correction or bonus that ends the committed path, drawn as the path's last node. */
function endItem(end) {
  return el("li", { className: "tree-item on-path tree-end" },
    el("div", { className: "tree-node" }, markedToken(end.token, end.how), " ",
      el("span", { className: `tree-fate ${end.how}` }, end.how === "bonus" ? "bonus" : "correction",
        el("span", { className: "tree-end-words" }, end.how === "bonus" ? ": from the target, not drafted" : ": drawn from the last r, not drafted"))));
}

/** What ends the block's committed path ({token, how, depth}), or null (an accepted EOS, the limit). */
function blockEnd(block) {
  if (block.correction) return { token: block.correction.token, how: "correction", depth: block.correction.index };
  if (block.bonus) {
    const accepted = block.verification.filter((t) => t.accepted).length;
    return { token: block.bonus.token, how: "bonus", depth: accepted + 1 };
  }
  return null;
}

/**
 * The tree drawing: the committed prefix as the root, each chain's tokens below it, chains that
 * agree on their first tokens on one branch. With `block` the accepted path is highlighted and
 * ends in the correction or bonus; without it (a pending proposal) every token is uncommitted.
 */
export function treeView(chains, prefix, block = null) {
  const root = buildTree(chains, block ? block.verification : []);
  const end = block ? blockEnd(block) : null;
  const items = root.children.map((child) => treeItem(child, !block, end));
  if (block && end && end.depth === 1) items.push(endItem(end));
  const where = prefix && prefix.length ? [`after ${prefix.at(-1)}`, el("span", { className: "tree-end-words" }, " (the committed output so far)")]
    : ["the empty prefix", el("span", { className: "tree-end-words" }, " (nothing committed yet)")];
  return el("div", { className: "table-scroll tree-scroll", tabindex: "0", role: "group",
    "aria-label": `Draft tree of ${chains.length} chain${chains.length === 1 ? "" : "s"} (scrolls sideways)` },
  el("ul", { className: `tree${block ? " verified" : " pending"}` },
    el("li", { className: "tree-item tree-root on-path" }, el("div", { className: "tree-node" }, el("span", { className: "tree-root-label" }, "start: ", where)),
      el("ul", {}, items))));
}

/** The Proposal region of a tree proposal: each chain on its line (the tree is the Draft tree region's), and the steps table with each step's chain. */
export function proposal({ list, table, summary }, proposalJson, pending, blockNumber, stepRow) {
  if (needsStep(proposalJson)) return nodesProposal({ list, table, summary }, proposalJson, pending, blockNumber, stepRow);
  const chains = proposalJson.chains;
  const tokens = chains.reduce((n, c) => n + c.length, 0);
  summary.textContent = pending
    ? `Drafted, not committed: ${chains.length} chain${chains.length === 1 ? "" : "s"} (${tokens} tokens, dashed, marked ?), waiting for Verify; the Draft tree shows them merged where they agree.`
    : `Block ${blockNumber}'s proposal: ${chains.length} chain${chains.length === 1 ? "" : "s"}, ${tokens} drafted tokens.`;
  list.append(el("li", { className: "tree-chains-list" }, chains.map((chain, c) => el("span", { className: "chain-line" },
    `chain ${c + 1}: `, chain.flatMap((t, i) => [i ? " " : null, pending ? markedToken(t, "uncommitted") : token(t)])))));
  for (const step of proposalJson.steps) table.tBodies[0].append(stepRow(step, `chain ${step.chain}, proposal ${step.index}`));
  table.hidden = false;
}

/** The Proposal region of a distinct or beam tree: its nodes depth by depth, and the node steps (distinct) with their laws s_j. */
function nodesProposal({ list, table, summary }, proposalJson, pending, blockNumber, stepRow) {
  const n = proposalJson.nodes.length;
  summary.textContent = `${pending ? "Drafted, not committed" : `Block ${blockNumber}'s proposal`}: ${n} node${n === 1 ? "" : "s"}, ${N.shapeWords(proposalJson)}.`;
  list.append(el("li", { className: "tree-chains-list" }, el("span", { className: "chain-line" }, N.proposalWords(proposalJson))));
  for (const step of proposalJson.steps) {
    table.tBodies[0].append(stepRow({ ...step, q: step.law, drafted: true }, `node ${step.node}, depth ${step.depth}`));
  }
  table.hidden = !proposalJson.steps.length;
}

const TREE_LEGEND = () => el("ul", { className: "legend tree-legend", "aria-label": "Tree legend" },
  el("li", {}, el("span", { "aria-hidden": "true", className: "token accepted-token" }, "A"), " accepted: the path"),
  el("li", {}, el("span", { "aria-hidden": "true", className: "token rejected-token" }, "A"), " rejected"),
  el("li", {}, el("span", { "aria-hidden": "true", className: "token discarded discarded-token" }, "A"), " not tested"));

/**
 * The Draft tree region: shown in mode tree alone, with the pending proposal's tree (nothing
 * verified) or the shown block's (the accepted path highlighted).
 */
export function treeRegion({ region, box, summary }, proposalJson, block, prefix) {
  const shown = isTreeProposal(proposalJson);
  region.hidden = !shown;
  box.replaceChildren();
  if (!shown) return;
  if (N.hasNodes(proposalJson)) {
    summary.textContent = `${N.shapeWords(proposalJson)}; ${block ? "the accepted path is the thick line" : "nothing verified yet"}.`;
    box.append(N.treeView(proposalJson, prefix, block));
    if (block) box.append(TREE_LEGEND());
    return;
  }
  const chains = proposalJson.chains;
  summary.textContent = block
    ? `${chains.length} chains merged where they agree; the accepted path is the thick line, ending in the ${block.correction ? "correction" : block.bonus ? "bonus" : "last accepted token"}.`
    : `${chains.length} chains merged where they agree; nothing verified yet.`;
  box.append(treeView(chains, prefix, block));
  if (block) box.append(TREE_LEGEND());
}

// ------------------------------------------------------------------ verification, depth by depth

/** The rows table of one depth: p, q, then r before each test (shrinking), and the correction's r when every test failed. */
function depthTable(vocab, tests, correction) {
  const first = tests[0];
  const where = first.context === null ? "at the empty prefix" : `after ${first.context}`;
  const cell = (x) => el("td", {}, num(x));
  const rCell = (x, exact, tested) => el("td", { className: tested ? "tested" : "" }, exactNumber(x, exact),
    tested ? el("span", { className: "visually-hidden" }, " (the candidate tested)") : null);
  const rows = [
    ...modelRows(first.p, first.q, first.context, cell),
    ...tests.map((t, i) => el("tr", { className: `row-r ${t.accepted ? "accepted" : "rejected"}` },
      el("th", { scope: "row" }, `r, test ${t.number}${i === 0 ? " (= p)" : ""}`),
      t.r.map((x, j) => rCell(x, t.r_exact ? t.r_exact[j] : null, vocab[j] === t.token)))),
  ];
  if (correction) {
    rows.push(el("tr", { className: "row-correction" }, el("th", { scope: "row" }, "correction (last r)"),
      correction.distribution.map(cell)));
  }
  return el("div", { className: "table-scroll", tabindex: "0", role: "group", "aria-label": `p, q and r ${where} (scrolls sideways)` },
    el("table", { className: "pq tree-pq" },
      el("caption", {}, `The rows ${where}`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "token"), vocab.map((t) => el("th", { scope: "col" }, token(t))))),
      el("tbody", {}, rows)),
    el("p", { className: "hint pq-note" }, "r starts as p; after each rejected candidate it becomes max(r \u2212 q, 0), rescaled to sum 1"));
}

/** Why a test has its verdict, as [short, long]. */
function testReason(t, last) {
  const compare = [`u ${fmtDraw(t.draw.u)}`, el("span", { className: "bar-words" }, " (the line)"), ` ${t.accepted ? "<" : "\u2265"} r/q ${fmt(t.ratio)}`,
    el("span", { className: "bar-words" }, " (the filled part)")];
  if (t.accepted) {
    return [[...compare, ": accepted"], `: ${t.token} is committed; ${chainWords(t.alive)} go${t.alive.length === 1 ? "es" : ""} on to the next depth.`];
  }
  return [[...compare, ": rejected"], last ? ": no candidate is left at this depth, so the correction is drawn from what is left of r."
    : ": r becomes max(r \u2212 q, 0) rescaled to sum 1, and the next candidate is tested against it."];
}

/** One test: the candidate, r(y) beside q(y), the ratio (exact too), the draw against r/q on a bar, the verdict. */
function testItem(t, last) {
  const verdict = t.accepted ? "accepted" : "rejected";
  const [short, long] = testReason(t, last);
  return el("li", { className: `verify tree-test ${verdict}` },
    el("div", { className: "verify-head" },
      el("span", { className: "index" }, `test ${t.number}: chain ${t.chain}'s`), " ",
      token(t.token), " ",
      el("strong", { className: `verdict ${verdict}` }, t.accepted ? "\u2713 " : "\u2717 ", verdict)),
    el("dl", { className: "block-numbers tree-numbers" },
      el("div", {}, el("dt", {}, `r(${t.token})`), el("dd", { className: "r-token" }, num(t.r_token))),
      el("div", {}, el("dt", {}, `q(${t.token})`), el("dd", { className: "q-token" }, num(t.q_token))),
      el("div", {}, el("dt", {}, "ratio r/q"), el("dd", { className: "ratio" }, exactNumber(t.ratio, t.ratio_exact))),
      el("div", {}, el("dt", {}, "u"), el("dd", { className: "u" }, drawNum(t.draw.u)))),
    bar(t.ratio, {
      marker: t.draw.u, className: `ratio-bar ${verdict}`,
      label: `ratio r/q ${fmt(t.ratio)} filled on a 0 to 1 bar, u ${fmtDraw(t.draw.u)} marked: ${verdict}`,
    }),
    el("p", { className: "explain" }, el("span", { className: "tree-short" }, short), el("span", { className: "reason-long" }, long),
      t.ratio >= 1 ? el("span", { className: "remark" }, " (a ratio of 1 or more is always accepted)") : null),
    el("details", { className: "tech tree-exact" }, el("summary", {}, "Exact values (technical)"),
      el("dl", { className: "exact-numbers" },
        el("dt", {}, "r"), el("dd", {}, el("code", {}, `[${t.r_exact.join(", ")}]`)),
        el("dt", {}, "r/q"), el("dd", {}, el("code", {}, t.ratio_exact)),
        el("dt", {}, "u"), el("dd", {}, el("code", {}, String(t.draw.u))),
        el("dt", {}, "draw"), el("dd", {}, `#${t.draw.position}`, " ", el("code", {}, t.draw.hex)),
        el("dt", {}, "alive after"), el("dd", {}, t.alive.length ? chainWords(t.alive) : "none")),
      el("p", { className: "hint" }, "SPEC section 11.2: accept y iff u \u00b7 q(y) < r(y), decided exactly; on rejection "
        + "r becomes max(r \u2212 q, 0) normalised.")));
}

/** The tests of a block grouped by depth: [{depth, tests}] in order (tests numbered from 1 over the block). */
export function depths(block) {
  const groups = [];
  block.verification.forEach((t, n) => {
    const test = { ...t, number: n + 1 };
    if (!groups.length || groups.at(-1).depth !== t.depth) groups.push({ depth: t.depth, tests: [] });
    groups.at(-1).tests.push(test);
  });
  return groups;
}

/** One depth: where, its verdict, the rows (p, q and the shrinking r), each test in order. */
function depthItem(group, block, vocab) {
  const accepted = group.tests.find((t) => t.accepted);
  const correction = !accepted && block.correction && block.correction.index === group.depth ? block.correction : null;
  const first = group.tests[0];
  return el("li", { className: `tree-depth ${accepted ? "accepted" : "rejected"}${correction ? " decisive" : ""}` },
    el("h3", { className: "tree-depth-head" }, `Depth ${group.depth}`, el("span", { className: "ctx" }, ` \u00b7 ${contextLabel(first.context)}`),
      el("span", { className: `verdict ${accepted ? "accepted" : "rejected"}` },
        accepted ? ` \u00b7 \u2713 ${accepted.token} accepted` : " \u00b7 \u2717 every candidate rejected")),
    depthTable(vocab, group.tests, correction),
    el("ol", { className: "tree-tests" }, group.tests.map((t, i) => testItem(t, i === group.tests.length - 1))));
}

/** The tests per depth in words: "depth 1: A (chain 1) rejected, B (chain 2) accepted; depth 2: ...". */
function testsWords(block) {
  return depths(block).map((g) => `depth ${g.depth}: ${g.tests.map((t) => `${t.token}${t.chain ? ` (chain ${t.chain})` : ""} ${t.accepted ? "accepted" : "rejected"}`).join(", ")}`).join("; ");
}

const endWords = (block) => (block.correction ? `correction ${block.correction.token}` : block.bonus ? `bonus ${block.bonus.token}` : "no bonus");

/** The verification summary of a tree block: how many tests, the end, what was committed (the depths say the rest). */
function summaryWords(block) {
  const n = block.verification.length;
  return `${block.proposal.chains.length} chains, ${n} test${n === 1 ? "" : "s"} over ${depths(block).length} depth${depths(block).length === 1 ? "" : "s"}; ${endWords(block)}. Committed ${block.committed.join(" ")}.`;
}

const RULE = "Depth by depth, the chains' tokens are tested in chain order against r, which starts as the target's row p; "
  + "each rejection takes the draft's q away from r (max(r \u2212 q, 0), rescaled), so the next candidate gets what is left. "
  + "The first accepted token is committed, and only the chains that carry it go on.";

/** The Verification region of a mode-tree block (replaces render.js verification for it). */
export function verification({ list, summary }, block, vocab) {
  if (N.hasNodes(block.proposal)) return N.verification({ list, summary }, block, vocab);
  list.replaceChildren();
  list.classList.add("tree-mode");
  summary.replaceChildren(summaryWords(block), " ", el("span", { className: "summary-rule" }, RULE));
  depths(block).forEach((group) => list.append(depthItem(group, block, vocab)));
}

/** render.js verification clears the tree look when it draws another mode. */
export function clear(list) {
  list.classList.remove("tree-mode");
}

/** The Correction region's first sentence for a tree block: the correction comes from the last r. */
export function correctionWords(block) {
  if (N.hasNodes(block.proposal)) return N.correctionWords(block);
  const c = block.correction;
  return el("p", {}, `Every candidate at depth ${c.index} (${contextLabel(c.context)}) was rejected: the correction token is drawn from `
    + "the last r, what is left of the target's row after each rejected candidate's q was taken away (max(r \u2212 q, 0), rescaled):");
}

/**
 * The Correction region's words for a tree block without a correction (SPEC 11): when a candidate
 * was rejected, a later candidate at its depth was accepted against the recursive residual r
 * (what the rejections left of the target's row), so no correction was drawn; else nothing was rejected.
 */
export function noCorrectionWords(block) {
  const rejected = block.verification.filter((t) => !t.accepted);
  if (!rejected.length) return el("p", {}, "No rejection: no correction.");
  const saved = rejected.map((t) => {
    const later = block.verification.find((a) => a.accepted && a.depth === t.depth);
    return `${candidate(t)} was rejected at depth ${t.depth}, and then ${candidate(later)} was accepted `
      + (t.acc === undefined ? "against the recursive residual r (what the rejection left of the target's row)" : "by the same draw u against the larger sum acc");
  });
  const text = saved.join("; ");
  return el("p", { className: "tree-no-correction" }, `No correction: ${text}. A candidate accepted at every depth needs no correction token.`);
}

/** Why the tree's discarded tokens were never tested, in plain words. */
export const DISCARDED_WORDS = "drafted but never tested: on a chain that left the accepted path, or after an accepted token at their depth";

/** The draws of a tree block in SPEC 11 order, each with what it was used for. */
export function draws(block) {
  const used = [];
  for (const step of block.proposal.steps) {
    if (step.draw) used.push([step.draw, step.chain ? `draft chain ${step.chain}, proposal ${step.index} (${step.token})` : `draft node ${step.node}, depth ${step.depth} (${step.token})`]);
  }
  const seen = new Set(); // a target-only node's one draw is recorded by each test of its children
  block.verification.forEach((t, n) => {
    if (seen.has(t.draw.position)) return;
    seen.add(t.draw.position);
    used.push([t.draw, t.acc === undefined ? `test ${n + 1}, depth ${t.depth}: ${candidate(t)} against r (${t.accepted ? "accepted" : "rejected"})`
      : `depth ${t.depth}: the node's one draw for its children (target only)`]);
  });
  if (block.correction && block.correction.draw) used.push([block.correction.draw, `correction (${block.correction.token})`]);
  if (block.bonus && block.bonus.draw) used.push([block.bonus.draw, `bonus (${block.bonus.token})`]);
  return used;
}

/** The verdict of a tree block in words (announced after Verify or Step). */
export function verdict(block, number) {
  return `Block ${number}: ${testsWords(block)}; ${endWords(block)}. Committed ${block.committed.join(" ")}.`;
}

/** A decimal with its exact fraction beside it when the fraction is short, else in the tooltip alone. */
function shortExact(value, exact) {
  if (exact && exact.length <= 13) return exactNumber(value, exact);
  return el("span", { className: "num with-exact", title: exact || String(value) }, fmt(value));
}

/**
 * The Analysis' sweep over the number of drafts (the `tree_sweep` member of POST /v1/analysis in
 * mode tree; one block from the empty prefix with no limit, docs/analysis.md): per D (rows) and
 * width (columns) the exact expected committed tokens per target pass,
 * decimal first and the fraction as secondary text; the settings' D and width marked. Null when absent.
 */
export function analysisTreeSweep(sweep, config) {
  if (!Array.isArray(sweep) || !sweep.length) return null;
  const widths = [...new Set(sweep.map((s) => s.width))].sort((a, b) => a - b);
  const drafts = [...new Set(sweep.map((s) => s.drafts))].sort((a, b) => a - b);
  const at = new Map(sweep.map((s) => [`${s.drafts}:${s.width}`, s]));
  const table = el("table", { className: "tree-sweep" },
    el("caption", {}, "One block from the empty prefix, no limit: committed tokens per target pass by number of drafts (rows) "
      + "and width (columns), exact (fractions of up to 13 characters shown, every one in the cell's tooltip); "
      + "more drafts give each depth more candidates"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "drafts"), widths.map((w) => el("th", { scope: "col" }, `width ${w}`)))),
    el("tbody", {}, drafts.map((d) => el("tr", { "data-drafts": String(d), className: d === config.drafts ? "current" : "" },
      el("th", { scope: "row" }, String(d)),
      widths.map((w) => {
        const s = at.get(`${d}:${w}`);
        const here = d === config.drafts && w === config.width;
        return el("td", { "data-width": String(w), className: here ? "here" : "" },
          s ? shortExact(s.committed_per_pass, s.committed_per_pass_exact) : "none",
          here ? el("span", { className: "visually-hidden" }, " (these settings)") : null);
      })))));
  return el("div", { className: "table-scroll analysis-tree", tabindex: "0", role: "group",
    "aria-label": "Committed tokens per pass by drafts and width (scrolls sideways)" }, table);
}
