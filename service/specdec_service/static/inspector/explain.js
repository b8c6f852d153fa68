// The story's figures that show a claim rather than one block: two traces beside their common
// output distribution, and at the empty prefix p and q laid over each other with the first
// token's law under three rules, exact and as a histogram of samples. Every number comes from
// the service: /v1/runs (the traces), /v1/analysis (exact laws, rows, residual) and /v1/draws
// (the uniforms the samples are drawn with); the page only counts.

import * as api from "./api.js";
import { bar, el, fmt, fmtDraw, num, token } from "./render.js";
import * as S from "./settings.js";

const $ = (id) => document.getElementById(id);

/** How many samples one press of "Draw more" adds (each uses three draws of the stream). */
export const SAMPLES_PER_PRESS = 10000;
const DRAWS_PER_SAMPLE = 3;
const DRAWS_PER_REQUEST = 4096; // GET /v1/draws answers at most 4096 draws at once

/**
 * SPEC 3's sample(d, u): the first token i, in vocabulary order, with u < d[0] + ... + d[i]
 * (a token of probability 0 is never returned). `row` sums to 1; u in [0, 1). Returns an index.
 */
export function sampleIndex(row, u) {
  let total = 0;
  let last = 0;
  for (let i = 0; i < row.length; i += 1) {
    if (row[i] <= 0) continue;
    total += row[i];
    last = i;
    if (u < total) return i;
  }
  return last; // rounding left u above the sum: the last token of positive probability
}

/**
 * The first token under three rules from three draws (SPEC 3, 4): the target alone samples p with
 * u0; speculative sampling drafts x from q with u0, keeps it if u1 < p(x)/q(x), else samples the
 * residual with u2; the naive rule does the same but samples p instead of the residual.
 * Rows are arrays over the vocabulary; returns {target, speculative, naive} as indices.
 */
export function firstTokens({ p, q, residual }, [u0, u1, u2]) {
  const x = sampleIndex(q, u0);
  const kept = u1 < p[x] / q[x];
  return {
    target: sampleIndex(p, u0),
    speculative: kept ? x : sampleIndex(residual, u2),
    naive: kept ? x : sampleIndex(p, u2),
  };
}

/** Samples [from, from + count) of `seed`'s stream, DRAWS_PER_SAMPLE draws each, fetched in slices. */
async function drawTriples(seed, from, count) {
  const us = [];
  const first = from * DRAWS_PER_SAMPLE;
  const total = count * DRAWS_PER_SAMPLE;
  for (let done = 0; done < total; done += DRAWS_PER_REQUEST) {
    const n = Math.min(DRAWS_PER_REQUEST, total - done);
    const { draws } = await api.draws(seed, first + done, n);
    us.push(...draws.map((d) => d.u));
  }
  const triples = [];
  for (let i = 0; i < count; i += 1) triples.push(us.slice(i * DRAWS_PER_SAMPLE, (i + 1) * DRAWS_PER_SAMPLE));
  return triples;
}

// ------------------------------------------------------------------ p and q laid over each other

/**
 * Per token a 0-1 track: min(p, q) (the mass a proposal keeps there) in green, then the positive
 * part of p - q (the mass the correction must give back) in orange up to p, q's end marked.
 */
export function overlapFigure(vocab, p, q) {
  const kept = p.map((x, i) => Math.min(x, q[i]));
  const back = p.map((x, i) => Math.max(x - q[i], 0));
  const sum = (row) => row.reduce((a, b) => a + b, 0);
  const part = (className, from, width) => {
    const node = el("span", { className: `overlap-part ${className}` });
    node.style.left = `${from * 100}%`;
    node.style.width = `${width * 100}%`;
    return node;
  };
  const rows = vocab.map((t, i) => {
    const mark = el("span", { className: "overlap-q" });
    mark.style.left = `${q[i] * 100}%`;
    return el("li", { className: "overlap-row" }, token(t),
      el("span", { className: "overlap-track", role: "img",
        "aria-label": `${t}: p ${fmt(p[i])}, q ${fmt(q[i])}; min(p, q) ${fmt(kept[i])}; positive part of p \u2212 q ${fmt(back[i])}` },
      part("kept", 0, kept[i]), part("back", kept[i], back[i]), mark),
      el("span", { className: "overlap-nums" }, "p ", num(p[i]), " \u00b7 q ", num(q[i])));
  });
  return el("figure", { className: "overlap" },
    el("ul", { className: "overlap-rows" }, rows),
    el("figcaption", {},
      el("span", { className: "key key-kept" }, "min(p, q): kept, sum ", el("span", { className: "kept-sum" }, fmt(sum(kept)))),
      el("span", { className: "key key-back" }, "(p \u2212 q)\u207a: the correction's mass, sum ", el("span", { className: "back-sum" }, fmt(sum(back)))),
      el("span", { className: "key key-q" }, "| where q ends")));
}

// ------------------------------------------------------------------ the first token's law, exact and sampled

const RULES = [
  ["target", "the target alone"],
  ["speculative", "speculative: correction from the residual"],
  ["naive", "naive: correction from p"],
];

/** One rule's column: per token the exact probability (a bar) and the share of the samples (a second bar). */
function lawColumn(rule, words, vocab, exact, counts, total) {
  return el("div", { className: `law law-${rule}`, "data-rule": rule },
    el("h3", {}, words),
    el("ul", { className: "law-rows" }, vocab.map((t, i) => {
      const share = total ? counts[i] / total : 0;
      return el("li", { "data-token": t }, token(t),
        el("span", { className: "law-bars" },
          bar(exact[i], { className: "law-bar exact-bar", label: `${t}: exact ${fmt(exact[i])}` }),
          bar(share, { className: "law-bar sample-bar", label: `${t}: ${counts[i]} of ${total} samples` })),
        el("span", { className: "law-nums" }, el("span", { className: "law-exact" }, fmt(exact[i])),
          el("span", { className: "law-share" }, total ? ` \u00b7 ${fmt(share)}` : "")));
    })));
}

/** The exact law of the first token as a row over the vocabulary, from an analysis `distribution` list. */
function lawRow(vocab, list) {
  const row = vocab.map(() => 0);
  for (const entry of list) row[vocab.indexOf(entry.tokens[0])] = entry.p;
  return row;
}

// ------------------------------------------------------------------ two traces, one distribution

function traceRow(words, trace) {
  return el("div", { className: "trace-row", "data-mode": trace.config.mode },
    el("h3", {}, words, el("span", { className: "muted" }, ` \u00b7 ${trace.counters.target_passes} target passes`)),
    el("ol", { className: "tokens output-tokens" }, trace.output.map((t) => el("li", {}, token(t)))));
}

function twoTokenTable(result) {
  const key = (entry) => entry.tokens.join(" ");
  const target = new Map(result.output.target.map((e) => [key(e), e]));
  const mine = new Map(result.output.distribution.map((e) => [key(e), e]));
  const keys = [...new Set([...mine.keys(), ...target.keys()])].sort();
  const cell = (entry) => el("td", {}, entry ? [num(entry.p), " ", bar(entry.p, { className: "law-bar" })] : "0");
  return el("div", { className: "table-scroll", tabindex: "0", role: "group", "aria-label": "The first two tokens' distribution (scrolls sideways)" },
    el("table", { className: "two-token" },
      el("caption", {}, `The first two tokens: exact probability of each outcome (total variation ${fmt(result.output.tv)})`),
      el("thead", {}, el("tr", {}, ["first two", "speculative", "target alone"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, keys.map((k) => el("tr", { "data-outcome": k }, el("th", { scope: "row" }, k),
        cell(mine.get(k)), cell(target.get(k)))))));
}

// ------------------------------------------------------------------ what ignoring q costs (SPEC 12)

/** The trees compared: [key, words, the `tree` setting's JSON text or null for SPEC 11's chains + residual]. */
export const VERIFIERS = [
  ["chains-residual", "chains + residual", null],
  ["distinct-residual", "distinct + residual", '{"shape": "distinct"}'],
  ["chains-target_only", "chains + target only", '{"verify": "target_only"}'],
  ["beam-target_only", "beam + target only", '{"shape": "beam", "verify": "target_only"}'],
];

/** The config text of `current` with a `tree` setting (its JSON text, or null for none). */
function withTree(current, tree) {
  const config = S.configText({ ...current, mode: "tree", tree_shape: "chains", tree_verify: "residual", branching: "", threshold_single: "", threshold_acc: "" });
  return tree ? config.replace(/^\{/, `{"tree": ${tree}, `) : config;
}

/** One verifier's first block: the tree's tests in order and what was committed. */
function blockColumn(words, block) {
  return el("div", { className: "costs-block", "data-verify": words },
    el("h3", {}, words),
    el("ol", { className: "costs-tests" }, block.verification.map((t) => el("li", {}, `depth ${t.depth}: `, token(t.token),
      `: u ${fmtDraw(t.draw.u)} ${t.accepted ? "<" : "\u2265"} ${t.acc === undefined ? `r/q ${fmt(t.ratio)}` : `acc ${fmt(t.acc)}`}`,
      t.accepted ? " ✓" : " ✗"))),
    el("p", { className: "costs-committed" }, "committed ", el("span", { className: "committed-tokens" }, block.committed.join(" ")),
      block.correction ? ` (correction ${block.correction.token})` : block.bonus ? ` (bonus ${block.bonus.token})` : ""));
}

/** Per tree the exact expected committed tokens per target pass (one block from the empty prefix, no limit) as a bar. */
function costsChart(rows, width) {
  const top = Math.max(...rows.map((r) => r.value), width + 1);
  return el("figure", { className: "costs-figure" }, el("figcaption", {}, `Exact tokens per target pass (width ${width}, one block, no limit)`),
  el("ul", { className: "costs-chart", "aria-label": "Expected committed tokens per target pass" }, rows.map((r) => el("li", { "data-tree": r.key },
    el("span", { className: "costs-words" }, r.words),
    bar(r.value / top, { className: `law-bar costs-bar ${r.key.endsWith("target_only") ? "target-only" : "residual"}`, label: `${r.words}: ${fmt(r.value)} tokens per pass` }),
    el("span", { className: "costs-value" }, num(r.value), r.exact && r.exact.length <= 9 && r.exact !== fmt(r.value) ? el("span", { className: "exact" }, ` (${r.exact})`) : null,
      el("span", { className: "costs-tv" }, `total variation ${fmt(r.tv)}`))))));
}

// ------------------------------------------------------------------ the panel

const HEADINGS = { traces: "Two traces, one distribution", laws: "The first token under three rules", costs: "What ignoring q costs" };

/**
 * Wire the story's figure panel (#explain). Returns {state: {shown}, show(kind), invalidate()}:
 * `show("traces" | "laws")` fetches and draws that figure for the current settings (awaited
 * inside the caller's queued task); `invalidate()` empties it (the step or the settings changed).
 * @param {{enqueue: Function, settings: Function, vocab: Function, changed: Function, verdict: Function}} controller
 *   `vocab()` is the target's vocabulary (the rows' order)
 */
export function setupExplain({ enqueue, settings, vocab, changed, verdict }) {
  const box = $("explain");
  const button = el("button", { type: "button", id: "btn-compare" }, "Compare");
  const result = el("div", { id: "explain-result" });
  box.append(el("p", { className: "explain-press" }, button), result);
  const more = el("button", { type: "button", id: "btn-more-samples", className: "secondary" }, `Draw ${SAMPLES_PER_PRESS.toLocaleString("en")} more`);
  let shown = null;
  let kind = () => null;
  let laws = null; // {vocab, rows, exact, counts, total, seed} of the shown "laws" figure

  async function traces(current) {
    const config = S.configText(current);
    const [speculative, alone, analysis] = await Promise.all([
      api.runs(config), api.runs(S.configText({ ...current, mode: "autoregressive" })),
      api.analysis(`{"config": ${config}, "depth": 2}`)]);
    result.replaceChildren(el("div", { className: "explain-traces" },
      el("div", {}, traceRow("Speculative sampling, seed " + current.seed, speculative),
        traceRow("The target alone, seed " + current.seed, alone)),
      twoTokenTable(analysis)));
  }

  function drawLaws() {
    const { vocab, exact, counts, total } = laws;
    result.replaceChildren(el("div", { className: "explain-laws" },
      overlapFigure(vocab, laws.rows.p, laws.rows.q),
      el("div", { className: "laws" }, RULES.map(([rule, words]) => lawColumn(rule, words, vocab, exact[rule], counts[rule], total))),
      el("p", { className: "laws-note" },
        el("span", { className: "laws-total" }, `${total.toLocaleString("en")} samples of each rule`),
        ` (draws of seed ${laws.seed}): upper bar and first number exact, lower bar and second number the samples' share; `
        + `total variation of the naive rule to the target ${fmt(exact.tv)}. `,
        more)));
  }

  async function grow() {
    const triples = await drawTriples(laws.seed, laws.total, SAMPLES_PER_PRESS);
    for (const us of triples) {
      const drawn = firstTokens(laws.rows, us);
      for (const [rule] of RULES) laws.counts[rule][drawn[rule]] += 1;
    }
    laws.total += triples.length;
    drawLaws();
  }

  async function lawsFigure(current) {
    const answer = await api.analysis(`{"config": ${S.configText(current)}, "depth": 1}`);
    const start = answer.contexts.find((c) => c.context === null);
    const fullVocab = vocab();
    laws = {
      vocab: fullVocab, seed: Number(current.seed), total: 0,
      rows: { p: start.p, q: start.q, residual: start.residual || start.p },
      exact: { target: lawRow(fullVocab, answer.output.target), speculative: lawRow(fullVocab, answer.output.distribution),
        naive: answer.naive ? lawRow(fullVocab, answer.naive.distribution) : fullVocab.map(() => 0), tv: answer.naive ? answer.naive.tv : 0 },
      counts: Object.fromEntries(RULES.map(([rule]) => [rule, fullVocab.map(() => 0)])),
    };
    await grow();
  }

  async function costs(current) {
    const width = Number(current.width);
    const [residual, targetOnly, ...analyses] = await Promise.all([
      api.runs(withTree({ ...current, limit: String(width + 1) }, null)),
      api.runs(withTree({ ...current, limit: String(width + 1) }, VERIFIERS[2][2])),
      ...VERIFIERS.map(([, , tree]) => api.analysis(`{"config": ${withTree(current, tree)}, "depth": 1, "widths": [${width}]}`))]);
    const rows = VERIFIERS.map(([key, words], i) => {
      const entry = analyses[i].tree_sweep.find((e) => e.drafts === Number(current.drafts) && e.width === width);
      return { key, words, value: entry.committed_per_pass, exact: entry.committed_per_pass_exact, tv: analyses[i].output.tv };
    });
    result.replaceChildren(el("div", { className: "explain-costs" },
      el("div", { className: "costs-blocks" }, el("p", { className: "costs-tree" }, "The same tree, seed " + current.seed + ": ",
        residual.blocks[0].proposal.chains.map((c, i) => `chain ${i + 1} ${c.join(" ")}`).join(", ")),
      blockColumn("residual", residual.blocks[0]), blockColumn("target only", targetOnly.blocks[0])),
      costsChart(rows, width)));
  }

  async function show(which) {
    const current = settings();
    if (which === "traces") await traces(current);
    else if (which === "costs") await costs(current);
    else await lawsFigure(current);
    $("explain-heading").textContent = HEADINGS[which];
    shown = which;
  }

  button.addEventListener("click", () => enqueue(async () => {
    const which = kind();
    if (!which) return;
    await show(which);
    changed();
    verdict(result.firstChild, { traces: "Two traces and their distribution shown.", costs: "Two verifiers of one tree, and their tokens per pass, shown." }[which]
      || "Three laws of the first token shown.");
  }));
  more.addEventListener("click", () => enqueue(async () => {
    if (!laws) return;
    await grow();
    $("announce").textContent = `${laws.total} samples of each rule.`;
    more.focus({ preventScroll: true });
  }));

  return {
    get state() {
      return { shown };
    },
    /** Which figure the Compare button draws now (main.js: the story step's). */
    set kind(fn) {
      kind = fn;
    },
    show,
    invalidate() {
      shown = null;
      laws = null;
      result.replaceChildren();
    },
  };
}
