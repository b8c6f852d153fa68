// Draft trees of SPEC 12 (setting `tree`: shapes chains, distinct, beam; verifiers residual and
// target_only) drawn from a block's `proposal.nodes` and its tests (docs/trace-format.md, "Draft
// trees"): the tree with each node's proposal law (the shrinking s_j of distinct siblings) or beam
// score, the accepted path highlighted, and per node its children's tests in order. A residual
// test shows the shrinking rows r against the proposal laws; a target-only node shows p over its
// children as one cumulative bar with u (times threshold_acc) marked. Pure functions of the API's
// records: they decide nothing. tree.js calls in here when a proposal has `nodes`.

import { bar, contextLabel, drawNum, el, fmt, fmtDraw, markedToken, num, token } from "./render.js";

/** Whether a proposal is a SPEC 12 draft tree (it has `nodes`). */
export function hasNodes(proposal) {
  return Boolean(proposal) && Array.isArray(proposal.nodes);
}

/** Whether a test is a target-only test (SPEC 12.4: it has `acc`). */
const isTargetOnly = (t) => t.acc !== undefined;

/** A row in words, exact where the trace gives it ("[0, 3/4, 1/4]"), else as decimals. */
const rowWords = (row, exact) => `[${(exact || row.map(fmt)).join(", ")}]`;

/** A node's fate from the block's tests: accepted, rejected (tested, failed) or untested. */
function fate(node, tests) {
  const own = tests.filter((t) => t.node === node.node);
  if (own.some((t) => t.accepted)) return "accepted";
  return own.length ? "rejected" : "untested";
}

const FATE_WORDS = { accepted: "\u2713 accepted", rejected: "\u2717 rejected", untested: "\u2205 not tested" };

/** What a node was drafted from, in words: its proposal law s (chains, distinct) or its beam score. */
function nodeLaw(node) {
  if (node.law) return el("span", { className: "tree-law" }, `s = ${rowWords(node.law, node.law_exact)}`);
  if (node.score !== undefined) return el("span", { className: "tree-law" }, `score ${node.score_exact || fmt(node.score)}`);
  return null;
}

/** One node and its subtree. */
function nodeItem(node, byParent, tests, end) {
  const pending = tests === null;
  const state = pending ? "pending" : fate(node, tests);
  const label = pending ? markedToken(node.token, "uncommitted")
    : token(node.token, state === "accepted" ? "accepted-token" : state === "untested" ? "discarded discarded-token" : "rejected-token");
  const children = (byParent.get(node.node) || []).map((child) => nodeItem(child, byParent, tests, end));
  if (!pending && state === "accepted" && end && end.depth === node.depth + 1) children.push(endItem(end));
  return el("li", { className: `tree-item ${state}${state === "accepted" ? " on-path" : ""}`, "data-node": String(node.node) },
    el("div", { className: "tree-node" }, label, " ", nodeLaw(node),
      pending ? null : el("span", { className: `tree-fate ${state}` }, FATE_WORDS[state])),
    children.length ? el("ul", {}, children) : null);
}

/** The correction or bonus that ends the committed path. */
function endItem(end) {
  return el("li", { className: "tree-item on-path tree-end" },
    el("div", { className: "tree-node" }, markedToken(end.token, end.how), " ",
      el("span", { className: `tree-fate ${end.how}` }, end.how, el("span", { className: "tree-end-words" },
        end.how === "bonus" ? ": from the target, not drafted" : ": no child accepted, drawn from r, not drafted"))));
}

/** What ends the committed path ({token, how, depth}), or null. */
function blockEnd(block) {
  if (block.correction) return { token: block.correction.token, how: "correction", depth: block.correction.index };
  if (block.bonus) return { token: block.bonus.token, how: "bonus", depth: block.verification.filter((t) => t.accepted).length + 1 };
  return null;
}

/** The nodes by parent number, each list in creation order (that is the children's order, SPEC 12). */
function childrenOf(nodes) {
  const byParent = new Map();
  for (const node of nodes) {
    if (!byParent.has(node.parent)) byParent.set(node.parent, []);
    byParent.get(node.parent).push(node);
  }
  return byParent;
}

/**
 * The tree drawing of a SPEC 12 proposal: the committed prefix as the root, each node with its
 * proposal law or score; with `block` the accepted path is highlighted and ends in the correction or bonus.
 */
export function treeView(proposal, prefix, block = null) {
  const byParent = childrenOf(proposal.nodes);
  const tests = block ? block.verification : null;
  const end = block ? blockEnd(block) : null;
  const items = (byParent.get(0) || []).map((node) => nodeItem(node, byParent, tests, end));
  if (block && end && end.depth === 1) items.push(endItem(end));
  const where = prefix && prefix.length ? `after ${prefix.at(-1)}` : "the empty prefix";
  return el("div", { className: "table-scroll tree-scroll", tabindex: "0", role: "group",
    "aria-label": `Draft tree of ${proposal.nodes.length} nodes (scrolls sideways)` },
  el("ul", { className: `tree node-tree${block ? " verified" : " pending"}` },
    el("li", { className: "tree-item tree-root on-path" }, el("div", { className: "tree-node" }, el("span", { className: "tree-root-label" }, `start: ${where}`)),
      el("ul", {}, items))));
}

/** The shape of a proposal in words. */
export function shapeWords(proposal) {
  if (Array.isArray(proposal.chains)) return "chains merged into a trie (a repeated token is one child)";
  if (proposal.steps.length) return "distinct siblings, each drawn from s_j (q without the earlier siblings)";
  return "a beam: the draft's most probable paths, nothing drawn";
}

// ------------------------------------------------------------------ the tests, node by node

/** The block's tests grouped by the node whose children they test: [{parent, depth, context, tests}] in order. */
export function groups(block) {
  const out = [];
  block.verification.forEach((t, n) => {
    const test = { ...t, number: n + 1 };
    if (!out.length || out.at(-1).parent !== t.parent) out.push({ parent: t.parent, depth: t.depth, context: t.context, tests: [] });
    out.at(-1).tests.push(test);
  });
  return out;
}

/** A residual node's rows: p, then per child its proposal law s and the r it was tested against (shrinking). */
function residualTable(vocab, tests) {
  const cell = (x) => el("td", {}, num(x));
  const tr = (className, name, row, exact) => el("tr", { className }, el("th", { scope: "row" }, name),
    row.map((x, j) => el("td", {}, num(x), exact && exact[j] !== fmt(x) ? el("span", { className: "exact" }, ` (${exact[j]})`) : null)));
  const rows = [el("tr", { className: "row-p" }, el("th", { scope: "row" }, "target p"), tests[0].p.map(cell))];
  tests.forEach((t) => {
    rows.push(tr("row-s", `s of ${t.token}, test ${t.number}`, t.law));
    rows.push(tr(`row-r ${t.accepted ? "accepted" : "rejected"}`, `r, test ${t.number}`, t.r, t.r_exact));
  });
  const last = tests.at(-1);
  if (!last.accepted && last.residual) rows.push(tr("row-r residual", "r after the last rejection", last.residual, last.residual_exact));
  return el("div", { className: "table-scroll", tabindex: "0", role: "group", "aria-label": "p, s and r (scrolls sideways)" },
    el("table", { className: "pq tree-pq" },
      el("caption", {}, `The rows ${contextLabel(tests[0].context)}`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "token"), vocab.map((t) => el("th", { scope: "col" }, token(t))))),
      el("tbody", {}, rows)),
    el("p", { className: "hint pq-note" }, "r starts as p; after a rejected child it becomes max(r \u2212 s, 0), rescaled to sum 1"));
}

/** One residual test: u \u00b7 s(y) against r(y), the ratio r/s as a bar with u marked, the verdict. */
function residualItem(t) {
  const verdict = t.accepted ? "accepted" : "rejected";
  const ratio = t.s_token > 0 ? t.r_token / t.s_token : 1;
  return el("li", { className: `verify tree-test ${verdict}` },
    el("div", { className: "verify-head" }, el("span", { className: "index" }, `test ${t.number}:`), " ", token(t.token), " ",
      el("strong", { className: `verdict ${verdict}` }, t.accepted ? "\u2713 " : "\u2717 ", verdict)),
    el("dl", { className: "block-numbers tree-numbers" },
      el("div", {}, el("dt", {}, `r(${t.token})`), el("dd", {}, num(t.r_token))),
      el("div", {}, el("dt", {}, `s(${t.token})`), el("dd", {}, num(t.s_token))),
      el("div", {}, el("dt", {}, "u"), el("dd", { className: "u" }, drawNum(t.draw.u))),
      el("div", {}, el("dt", {}, `u \u00b7 s(${t.token})`), el("dd", { className: "u-s" }, num(t.u_s)))),
    bar(ratio, { marker: t.draw.u, className: `ratio-bar ${verdict}`, label: `r/s ${fmt(ratio)} filled, u ${fmtDraw(t.draw.u)} marked: ${verdict}` }),
    el("p", { className: "explain tree-short" }, `u \u00b7 s(${t.token}) = ${fmt(t.u_s)} ${t.accepted ? "<" : "\u2265"} r(${t.token}) = ${fmt(t.r_token)}: ${verdict}`,
      t.accepted ? "." : "; r becomes max(r \u2212 s, 0), rescaled, for the next child."));
}

/**
 * A target-only node (SPEC 12.4): p over its children laid end to end as one cumulative bar
 * (acc_j the end of child j's part), the rest of p greyed, and u \u00b7 threshold_acc marked: the first
 * child whose part ends past the mark is accepted; or p(y_j) >= threshold_single decides.
 */
export function targetOnlyBar(vocab, group, children) {
  const first = group.tests[0];
  const p = first.p;
  const mark = first.u_acc;
  let from = 0;
  const parts = children.map((child) => {
    const mass = p[vocab.indexOf(child.token)];
    const tested = group.tests.find((t) => t.node === child.node);
    const state = tested ? (tested.accepted ? "accepted" : "rejected") : "untested";
    const part = el("span", { className: `cum-part ${state}` }, el("span", { className: "cum-label" }, child.token));
    part.style.left = `${from * 100}%`;
    part.style.width = `${mass * 100}%`;
    from += mass;
    return part;
  });
  const rest = el("span", { className: "cum-part rest" });
  rest.style.left = `${from * 100}%`;
  rest.style.width = `${Math.max(0, 1 - from) * 100}%`;
  const marker = el("span", { className: "bar-marker" });
  marker.style.left = `${Math.max(0, Math.min(1, mark)) * 100}%`;
  let acc = 0;
  const cuts = children.map((c) => `${c.token} up to ${fmt((acc += p[vocab.indexOf(c.token)]))}`).join(", ");
  const scaled = first.threshold_acc !== 1 ? ` \u00b7 threshold_acc ${fmt(first.threshold_acc)}` : "";
  return el("div", { className: "cumulative target-only-bar" },
    el("span", { className: "cum-bar", role: "img", "aria-label": `p over the children end to end: ${cuts}; u${scaled} = ${fmt(mark)} marked` }, ...parts, rest, marker),
    el("p", { className: "hint cum-words" }, `p over the children end to end (${cuts}; grey: the other tokens); `
      + `u${scaled} = ${fmtDraw(mark)} is marked: the first child whose part ends past the mark is accepted.`));
}

/** One target-only test in words: acc_j against u \u00b7 threshold_acc, or the threshold_single rule. */
function targetOnlyItem(t) {
  const verdict = t.accepted ? "accepted" : "rejected";
  const why = t.by === "single"
    ? `p(${t.token}) = ${fmt(t.p_token)} \u2265 threshold_single ${fmt(t.threshold_single)}: accepted by the single threshold`
    : `u \u00b7 threshold_acc = ${fmtDraw(t.u_acc)} ${t.accepted ? "<" : "\u2265"} acc = ${t.acc_exact} (${fmt(t.acc)})${t.p_token > 0 ? "" : ", and p = 0 is never accepted"}: ${verdict}`;
  return el("li", { className: `verify tree-test ${verdict}` },
    el("div", { className: "verify-head" }, el("span", { className: "index" }, `test ${t.number}:`), " ", token(t.token), " ",
      el("strong", { className: `verdict ${verdict}` }, t.accepted ? "\u2713 " : "\u2717 ", verdict)),
    el("p", { className: "explain tree-short" }, `p(${t.token}) = ${fmt(t.p_token)}; ${why}.`));
}

/** One node's tests: where, the verdict, the rows or the cumulative bar, each test in order. */
function groupItem(group, block, vocab, byParent) {
  const accepted = group.tests.find((t) => t.accepted);
  const targetOnly = isTargetOnly(group.tests[0]);
  const children = byParent.get(group.parent) || [];
  return el("li", { className: `tree-depth ${accepted ? "accepted" : "rejected"}`, "data-parent": String(group.parent) },
    el("h3", { className: "tree-depth-head" }, `Depth ${group.depth}`, el("span", { className: "ctx" }, ` \u00b7 ${contextLabel(group.context)}`),
      ` \u00b7 children ${children.map((c) => c.token).join(", ")}`,
      el("span", { className: `verdict ${accepted ? "accepted" : "rejected"}` },
        accepted ? ` \u00b7 \u2713 ${accepted.token} accepted` : " \u00b7 \u2717 every child rejected")),
    targetOnly ? targetOnlyBar(vocab, group, children) : residualTable(vocab, group.tests),
    el("ol", { className: "tree-tests" }, group.tests.map((t) => (targetOnly ? targetOnlyItem(t) : residualItem(t)))));
}

const RULES = {
  residual: "Node by node from the root, its children are tested in order: child y is accepted iff u \u00b7 s(y) < r(y), "
    + "s its proposal law, r the target's row p at first and max(r \u2212 s, 0) rescaled after each rejection (SPEC 12.3).",
  target_only: "Node by node from the root, one draw u per node: the first child y_j with p(y_j) > 0 and "
    + "u \u00b7 threshold_acc < acc_j = p(y_1) + ... + p(y_j) (or p(y_j) \u2265 threshold_single) is accepted; "
    + "the draft's probabilities are never read (SPEC 12.4).",
};

/** The Verification region of a SPEC 12 tree block. */
export function verification({ list, summary }, block, vocab) {
  list.replaceChildren();
  list.classList.add("tree-mode");
  const rule = isTargetOnly(block.verification[0] || {}) ? RULES.target_only : RULES.residual;
  const n = block.verification.length;
  summary.replaceChildren(`${block.proposal.nodes.length} nodes, ${n} test${n === 1 ? "" : "s"}; `
    + `${block.correction ? `correction ${block.correction.token}` : block.bonus ? `bonus ${block.bonus.token}` : "no bonus"}. Committed ${block.committed.join(" ")}.`,
  " ", el("span", { className: "summary-rule" }, rule));
  const byParent = childrenOf(block.proposal.nodes);
  groups(block).forEach((group) => list.append(groupItem(group, block, vocab, byParent)));
}

/** The Correction region's first sentence for a SPEC 12 tree block. */
export function correctionWords(block) {
  const c = block.correction;
  const targetOnly = block.verification.length && isTargetOnly(block.verification.at(-1));
  return el("p", {}, `No child at depth ${c.index} (${contextLabel(c.context)}) was accepted: the correction is drawn from `
    + (targetOnly ? "p with every child's token set to 0, rescaled (SPEC 12.4):" : "the last residual r (SPEC 12.3):"));
}

/** The proposal's nodes in words, depth by depth ("depth 1: A, B; depth 2: A under A"). */
export function proposalWords(proposal) {
  const byNumber = new Map(proposal.nodes.map((n) => [n.node, n]));
  const depths = [...new Set(proposal.nodes.map((n) => n.depth))];
  return depths.map((d) => `depth ${d}: ${proposal.nodes.filter((n) => n.depth === d)
    .map((n) => (n.parent ? `${n.token} under ${byNumber.get(n.parent).token}` : n.token)).join(", ")}`).join("; ");
}
