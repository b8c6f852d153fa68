// Block verification (SPEC section 10, mode `block`; Sun et al. 2025) drawn in the page's
// visual language: each proposal's rows p and q as labeled rows, its weight w_i and threshold
// h_i (decimal first, the exact fraction as secondary text), its draw against the threshold
// (a marker on a bar, as the ratio bar of token-wise verification), tau, the rejected and the
// discarded proposals, and the correction scaled by w_tau. Pure functions of the API's block
// records (docs/trace-format.md, "Mode block"): they decide nothing, they show what the
// service decided. render.js and main.js call in here through small hooks (isBlock).

import { bar, contextLabel, drawNum, el, fmt, fmtDraw, modelRows, num, token } from "./render.js";

/** Whether a block record is a block-verification block (it has `tau`; SPEC 10). */
export function isBlock(block) {
  return Boolean(block) && block.mode === "block" && Number.isInteger(block.tau);
}

/** A decimal with its exact fraction as secondary text: "0.4444 (4/9)"; a fraction equal to the decimal is not repeated. */
export function exactNumber(value, exact, className = "num") {
  const shown = fmt(value);
  return el("span", { className: `${className} with-exact` }, num(value),
    exact && exact !== shown ? el("span", { className: "exact" }, ` (${exact})`) : null);
}

/** The fate of proposal `v` in a block with `tau`: accepted (i <= tau), rejected (i = tau + 1) or discarded. */
export function fate(v, tau) {
  if (v.index <= tau) return "accepted";
  return v.index === tau + 1 ? "rejected" : "discarded";
}

const FATE_WORDS = { accepted: "\u2713 accepted", rejected: "\u2717 rejected", discarded: "\u2205 discarded" };

/**
 * Why proposal `v` has its fate, as [short, long]: the short words stand beside the bar (and
 * alone on a projected story step), the long sentence follows them.
 */
function reason(v, tau) {
  const draw = `its draw ${fmtDraw(v.draw.u)} (the line) is ${v.below_threshold ? "below" : "not below"} its threshold ${fmt(v.threshold)} (the filled part)`;
  if (v.index === tau) {
    return ["\u2193 below: the last draw that passes (tau)", `${draw}, and no later draw passes, so it and every proposal before it are kept.`];
  }
  if (v.index < tau) {
    return v.below_threshold ? ["\u2193 below", `${draw}; a later draw passes too, and the last one decides.`]
      : ["\u2191 not below, kept anyway: a later draw passes", `${draw}, yet it is kept: the draw of proposal ${tau} passes (tau = ${tau}) and keeps the whole block up to there.`];
  }
  if (v.index === tau + 1) {
    return [`\u2191 ${v.below_threshold ? "below" : "not below"}, and no later draw passes`, `${draw}: it is the first proposal not kept, replaced by the correction.`];
  }
  return [`${v.below_threshold ? "\u2193 below" : "\u2191 not below"}, but after the rejected proposal`, `${draw}; it comes after the rejected proposal, so it is thrown away.`];
}

/**
 * The p/q table of one block proposal: the target's row p and the draft's row q as labeled
 * rows; at the rejected proposal also w_tau * p - q (its positive part highlighted) and the
 * normalised correction distribution.
 */
function rowsTable(vocab, v, correction) {
  const cell = (x) => el("td", {}, el("span", { className: "num" }, fmt(x)));
  const where = v.context === null ? "at the empty prefix" : `after ${v.context}`;
  const rows = modelRows(v.p, v.q, v.context, cell);
  if (correction) {
    const w = correction.weight;
    const scaled = v.p.map((p, i) => w * p - v.q[i]);
    rows.push(el("tr", { className: "row-diff" }, el("th", { scope: "row" }, `${fmt(w)}\u00b7p \u2212 q`),
      scaled.map((x) => el("td", { className: x > 0 ? "pos" : "" },
        el("span", { className: "num" }, x > 0 ? `+${fmt(x)}` : x < 0 ? `\u2212${fmt(-x)}` : "0"),
        x > 0 ? el("span", { className: "visually-hidden" }, " (positive part)") : null))));
    rows.push(el("tr", { className: "row-correction" }, el("th", { scope: "row" }, "correction"), correction.distribution.map(cell)));
  }
  return el("div", { className: "table-scroll", tabindex: "0", role: "group", "aria-label": `p and q ${where} (scrolls sideways)` },
    el("table", { className: "pq" },
      el("caption", {}, `The two models' rows ${where}`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "token"),
        vocab.map((t) => el("th", { scope: "col", className: t === v.token ? "proposed" : "" }, token(t),
          t === v.token ? el("span", { className: "tag" }, " proposed") : null)))),
      el("tbody", {}, rows)),
    correction ? el("p", { className: "hint pq-note" },
      `correction = the positive part of ${fmt(correction.weight)}\u00b7p \u2212 q, rescaled to sum 1 (the residual scaled by the weight w${correction.index - 1})`) : null);
}

/** The exact values of one proposal, for those who want them (the details view). */
function exactDetails(v, k) {
  return el("details", { className: "tech block-exact" },
    el("summary", {}, "Exact values (technical)"),
    el("dl", { className: "exact-numbers" },
      el("dt", {}, `w${v.index}`), el("dd", {}, el("code", {}, v.weight_exact)),
      el("dt", {}, `h${v.index}`), el("dd", {}, el("code", {}, v.threshold_exact)),
      el("dt", {}, `\u03b7${v.index}`), el("dd", {}, el("code", {}, String(v.draw.u))),
      el("dt", {}, "draw"), el("dd", {}, `#${v.draw.position}`, " ", el("code", {}, v.draw.hex))),
    el("p", { className: "hint" }, `SPEC section 10: w${v.index} = min(1, w${v.index - 1} \u00b7 p/q); `,
      v.index < k ? `h${v.index} = s / (s + 1 \u2212 w${v.index}) with s = the sum of max(w${v.index}\u00b7p \u2212 q, 0) over the next row; `
        : `h${v.index} = w${v.index} (the last proposal); `,
      `the draw passes when \u03b7${v.index} < h${v.index}, decided exactly (u \u00b7 denominator < numerator).`));
}

/** One proposal of a block: its fate, p and q, ratio, weight and threshold, its draw against the threshold. */
function proposalItem(v, block, vocab, k) {
  const how = fate(v, block.tau);
  const isTau = v.index === block.tau;
  const correction = how === "rejected" && block.correction ? block.correction : null;
  const [short, long] = reason(v, block.tau);
  return el("li", { className: `verify block-verify ${how}${isTau ? " tau" : ""}${how === "rejected" || (isTau && block.tau === k) ? " decisive" : ""}` },
    el("div", { className: "verify-head" },
      el("span", { className: "index" }, `proposal ${v.index}:`),
      token(v.token, how === "discarded" ? "discarded" : ""),
      el("span", { className: "ctx" }, contextLabel(v.context)),
      el("strong", { className: `verdict ${how}` }, FATE_WORDS[how]),
      isTau ? el("span", { className: "tau-tag", title: "tau: the last proposal whose draw is below its threshold" }, `tau = ${block.tau}`) : null),
    rowsTable(vocab, v, correction),
    el("dl", { className: "block-numbers" },
      el("div", {}, el("dt", {}, "ratio p/q"), el("dd", { className: "ratio" }, num(v.ratio))),
      el("div", {}, el("dt", {}, `weight w${v.index}`), el("dd", { className: "weight" }, exactNumber(v.weight, v.weight_exact))),
      el("div", {}, el("dt", {}, `threshold h${v.index}`), el("dd", { className: "threshold" }, exactNumber(v.threshold, v.threshold_exact))),
      el("div", {}, el("dt", {}, `draw \u03b7${v.index}`), el("dd", { className: "eta" }, drawNum(v.draw.u)))),
    bar(v.threshold, {
      marker: v.draw.u, className: `ratio-bar threshold-bar ${v.below_threshold ? "passes" : "fails"}`,
      label: `threshold ${fmt(v.threshold)} filled on a 0 to 1 bar, draw ${fmtDraw(v.draw.u)} marked: ${v.below_threshold ? "below" : "not below"}`,
    }),
    el("p", { className: "explain" }, el("span", { className: `pass ${v.below_threshold ? "yes" : "no"}` }, short),
      el("span", { className: "reason-long" }, `: ${long}`)),
    exactDetails(v, k));
}

/** The rule in plain words (the summary's second sentence). */
const RULE = "Block verification judges the proposals together: each has a threshold worked out from the "
  + "weights (the ratios p/q so far, multiplied and capped at 1), every proposal gets a draw, and the last "
  + "draw below its threshold decides how many are kept (tau); a proposal may be kept although its own draw fails.";

/** The Verification region of a block-verification block (replaces render.js verification for it). */
export function verification({ list, summary }, block, vocab) {
  list.replaceChildren();
  list.classList.add("block-mode");
  const rows = block.verification;
  const k = rows.length;
  const kept = rows.slice(0, block.tau).map((v) => v.token);
  const end = block.correction ? `correction ${block.correction.token}` : block.bonus ? `bonus ${block.bonus.token}` : "no bonus";
  summary.replaceChildren(
    `${k} proposal${k === 1 ? "" : "s"} judged as a block: tau = ${block.tau}, `,
    kept.length ? `${kept.join(" ")} accepted` : "none accepted",
    block.tau < k ? `, ${rows[block.tau].token} rejected` : "",
    block.discarded.length ? `, ${block.discarded.join(" ")} discarded` : "",
    `; ${end}. Committed ${block.committed.join(" ")}. `,
    el("span", { className: "summary-rule" }, RULE));
  rows.forEach((v) => list.append(proposalItem(v, block, vocab, k)));
}

/** render.js verification clears the block-mode look when it draws another mode. */
export function clear(list) {
  list.classList.remove("block-mode");
}

/** The Correction region's first sentence for a block-verification rejection: the residual scaled by w_tau. */
export function correctionWords(block) {
  const c = block.correction;
  const w = c.weight_exact && c.weight_exact !== fmt(c.weight) ? `${fmt(c.weight)} (${c.weight_exact})` : fmt(c.weight);
  return el("p", {}, `Proposal ${c.index} (${contextLabel(c.context)}) was rejected: the correction token is drawn from `
    + `max(w${c.index - 1}\u00b7p \u2212 q, 0) rescaled to sum 1, the residual with p scaled by the weight w${c.index - 1} = ${w}`
    + `${block.tau === 0 ? " (with nothing kept the weight is 1: the plain residual)" : ""}:`);
}

/** The draws of a block-verification block in SPEC 10 order, each with what it was used for. */
export function draws(block) {
  const used = [];
  for (const step of block.proposal.steps) if (step.draw) used.push([step.draw, `draft proposal ${step.index} (${step.token})`]);
  for (const v of block.verification) {
    used.push([v.draw, `block check of proposal ${v.index} (${v.token}): ${v.below_threshold ? "below" : "not below"} threshold ${fmt(v.threshold)}`]);
  }
  if (block.correction && block.correction.draw) used.push([block.correction.draw, `correction (${block.correction.token})`]);
  if (block.bonus && block.bonus.draw) used.push([block.bonus.draw, `bonus (${block.bonus.token})`]);
  return used;
}

/** The verdict of a block-verification block in words (announced after Verify or Step). */
export function verdict(block, number) {
  const draws_ = block.verification.map((v) => `${v.token} draw ${fmtDraw(v.draw.u)} ${v.below_threshold ? "<" : "\u2265"} threshold ${fmt(v.threshold)}`);
  const end = block.correction ? `correction ${block.correction.token}` : block.bonus ? `bonus ${block.bonus.token}` : "no bonus";
  return `Block ${number}: ${draws_.join(", ")}; tau = ${block.tau}; ${end}. Committed ${block.committed.join(" ")}.`;
}

/**
 * The Analysis' comparison of block verification with token-wise verification (the `block`
 * member of POST /v1/analysis in mode block): per width, the exact expected proposals accepted
 * per block and committed tokens per target pass of both (decimal, exact fraction as secondary
 * text). Never fewer accepted with block verification (Sun et al., Theorem 2; SPEC 10).
 */
export function analysisComparison(block, width) {
  if (!block || !Array.isArray(block.comparison)) return null;
  const rows = [...block.comparison].sort((a, b) => a.width - b.width);
  const cell = (value, exact, className) => el("td", { className }, exactNumber(value, exact));
  const table = el("table", { className: "block-compare" },
    el("caption", {}, "Block verification against token-wise verification (mode speculative), same models and limit: "
      + "the same output distribution, never fewer proposals accepted"),
    el("thead", {}, el("tr", {}, ["width", "accepted per block: block", "token-wise", "tokens per pass: block", "token-wise"]
      .map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((c) => el("tr", { "data-width": String(c.width), className: c.width === width ? "current" : "" },
      el("th", { scope: "row" }, String(c.width)),
      cell(c.accepted_per_block, c.accepted_per_block_exact, "block-accepted"),
      cell(c.token_wise_accepted_per_block, c.token_wise_accepted_per_block_exact, "token-wise-accepted"),
      cell(c.committed_per_pass, c.committed_per_pass_exact, "block-cpp"),
      cell(c.token_wise_committed_per_pass, c.token_wise_committed_per_pass_exact, "token-wise-cpp")))));
  return el("div", { className: "table-scroll analysis-block", tabindex: "0", role: "group",
    "aria-label": "Block against token-wise verification (scrolls sideways)" }, table);
}
