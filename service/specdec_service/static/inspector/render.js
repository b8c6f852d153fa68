// Drawing blocks, proposals, draws and counters as DOM. Pure functions of the
// API's JSON (docs/trace-format.md): they decide nothing, they show what the
// service decided. Every token is its own element whose text is the token.

import * as B from "./block.js"; // block verification (SPEC 10) has its own drawing
import * as T from "./tree.js"; // several drafts (SPEC 11) too

/** Create an element: el("span", {className: "token"}, "A", child, ...). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className" || key === "textContent" || key === "hidden" || key === "type" || key === "value") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * A probability or draw for people: at most 4 decimals, trailing zeros dropped (0.4443592 -> "0.4444").
 * A nonzero value those 4 decimals would show as 0 keeps 2 significant digits instead (the bonus draw
 * 0.0000303349 -> "0.00003", never "0"); below 0.000001 it is "< 0.000001" (or "> -0.000001").
 * The exact float64 stays in the number's tooltip (`num`).
 */
export function fmt(x) {
  if (x === null || x === undefined) return "none";
  const value = Number(x);
  const rounded = Number(value.toFixed(4));
  if (rounded !== 0 || value === 0 || !Number.isFinite(value)) return String(rounded === 0 ? 0 : rounded);
  if (Math.abs(value) < 1e-6) return value > 0 ? "< 0.000001" : "> -0.000001";
  return String(Number(value.toPrecision(2)));
}

/**
 * A draw u for people: always 4 decimals (0.9710027 -> "0.9710", as 0.9709 beside it), so the
 * draws of a page line up; a nonzero draw those decimals would show as 0 is written as `fmt` does.
 */
export function fmtDraw(u) {
  const value = Number(u);
  return value !== 0 && Math.abs(value) < 0.00005 ? fmt(value) : value.toFixed(4);
}

/** A draw u with its full float64 value as a tooltip. */
export function drawNum(u) {
  return el("span", { className: "num", title: String(u) }, fmtDraw(u));
}

/** A number with its full float64 value as a tooltip. */
export function num(x, className = "num") {
  return el("span", { className, title: x === null || x === undefined ? undefined : String(x) }, fmt(x));
}

/** One token, as its own element whose text is the token alone. */
export function token(label, className = "") {
  return el("span", { className: `token ${className}`.trim() }, label);
}

/** A context for people: the empty prefix, or the last token. */
export function contextLabel(context) {
  return context === null || context === undefined ? "empty prefix" : `after ${context}`;
}

/** A [0, 1] bar with a filled part of width `fill` (clamped) and optional marker at `marker`. */
export function bar(fill, { marker = null, className = "", label = "" } = {}) {
  const filled = el("span", { className: "bar-fill" });
  filled.style.width = `${Math.max(0, Math.min(1, fill)) * 100}%`;
  const node = label
    ? el("span", { className: `bar ${className}`.trim(), role: "img", "aria-label": label }, filled)
    : el("span", { className: `bar ${className}`.trim(), "aria-hidden": "true" }, filled); // the number beside it says it
  if (marker !== null) {
    const mark = el("span", { className: "bar-marker" });
    mark.style.left = `${Math.max(0, Math.min(1, marker)) * 100}%`;
    node.append(mark);
  }
  return node;
}

/** A distribution row as one small bar per token, the chosen one marked. */
export function distribution(vocab, row, { chosen = null, caption = "" } = {}) {
  const list = el("ul", { className: "dist", "aria-label": caption || undefined });
  row.forEach((p, i) => {
    const isChosen = vocab[i] === chosen;
    list.append(el("li", { className: isChosen ? "chosen" : "" },
      token(vocab[i]),
      bar(p, { label: `${vocab[i]}: ${fmt(p)}` }),
      num(p),
      isChosen ? el("span", { className: "tag" }, "chosen") : null));
  });
  return list;
}

/** "u 0.4444 (draw #3)" (or "no draw" in greedy). Draw numbers count the seed's stream from #0. */
export function drawText(draw) {
  if (!draw) return el("span", { className: "muted" }, "no draw (argmax)");
  return el("span", { className: "draw" }, "u ", drawNum(draw.u), el("span", { className: "draw-position" }, ` (draw #${draw.position})`));
}

/**
 * A token with a glyph saying how it was committed (the state is never told by colour alone):
 * the glyph is CSS content (inspector.css, with empty alt text), so the element's text stays the token.
 * `how`: accepted, correction, bonus, sampled, uncommitted or discarded.
 */
export function markedToken(label, how) {
  return token(label, `${how}-token${how === "uncommitted" || how === "discarded" ? ` ${how}` : ""}`);
}

// ------------------------------------------------------------------ regions

/**
 * The fate of proposal `index` (1-based) of a verified chain block: accepted, rejected or
 * discarded (block verification: by tau, SPEC 10; else by its verification row, SPEC 4).
 */
export function proposalFate(block, index) {
  const v = block.verification.find((row) => row.index === index);
  if (B.isBlock(block)) return v ? B.fate(v, block.tau) : "discarded";
  if (!v) return "discarded";
  return v.accepted ? "accepted" : "rejected";
}

/** A verified proposal's token: accepted as committed, rejected or discarded struck through. */
function fatedToken(label, fate) {
  if (fate === "accepted") return markedToken(label, "accepted");
  const words = el("span", { className: "visually-hidden" }, ` (${fate})`);
  return el("del", { className: `proposal-${fate}` }, fate === "rejected" ? token(label, "rejected-token") : markedToken(label, "discarded"), words);
}

/**
 * The proposal's tokens (drawn as not committed when `pending`; once verified, `block` given,
 * each with its fate, the rejected and discarded ones struck through) and its step table.
 */
export function proposal({ list, table, summary }, proposalJson, vocab, pending, blockNumber, block = null) {
  list.replaceChildren();
  table.tBodies[0].replaceChildren();
  if (!proposalJson) {
    summary.textContent = "No proposal yet: press Draft (or Step).";
    table.hidden = true;
    return;
  }
  const steps = proposalJson.steps;
  if (!steps.length && !T.isTreeProposal(proposalJson)) { // a beam tree draws nothing but has nodes (SPEC 12)
    summary.textContent = "Mode autoregressive: nothing is drafted; the target samples one token per pass.";
    table.hidden = true;
    return;
  }
  const stepRow = (step, first = `proposal ${step.index}`) => el("tr", {},
    el("td", {}, first),
    el("td", {}, step.context === null ? "empty prefix" : step.context),
    el("td", {}, distribution(vocab, step.q, { chosen: step.token, caption: `q ${contextLabel(step.context)}` }),
      el("span", { className: "q-compact", "aria-hidden": "true" }, step.q.flatMap((x, i) => [i ? " " : "",
        vocab[i] === step.token ? el("strong", {}, fmt(x)) : fmt(x)]))),
    el("td", {}, drawText(step.draw)),
    el("td", {}, token(step.token, pending ? "uncommitted" : ""), step.drafted ? null : el("span", { className: "tag" }, " (supplied)")));
  if (T.isTreeProposal(proposalJson)) {
    T.proposal({ list, table, summary }, proposalJson, pending, blockNumber, stepRow);
    return;
  }
  summary.textContent = pending
    ? `Drafted, not committed: ${steps.length} proposal${steps.length === 1 ? "" : "s"} waiting for Verify (dashed, marked ?). The committed output has not changed.`
    : `Block ${blockNumber}'s proposal: ${steps.length} drafted token${steps.length === 1 ? "" : "s"}.`;
  for (const step of steps) {
    const shown = pending ? markedToken(step.token, "uncommitted") : block ? fatedToken(step.token, proposalFate(block, step.index)) : token(step.token);
    list.append(el("li", {}, shown));
    table.tBodies[0].append(stepRow(step));
  }
  table.hidden = false;
}

// ------------------------------------------------------------------ raw rows beside processed ones (SPEC 9)

let rawRows = null;

/**
 * With sampling parameters (SPEC 9) the trace's rows are processed; main.js sets here where the
 * models' raw rows are read ({row(role, context) -> row or null, draftRaw}), or null without sampling.
 */
export function setRawRows(lookup) {
  rawRows = lookup;
}

/**
 * The model rows of a p/q table: "target p" and "draft q" as the trace gives them; with sampling
 * parameters also the raw rows beside the processed ones: target p (raw), target p′ (processed),
 * and draft q (raw) with draft q′ (processed), or, with draft rows raw, the one raw q drafted from.
 */
export function modelRows(p, q, context, cell) {
  const tr = (className, name, row) => el("tr", { className }, el("th", { scope: "row" }, name), row.map(cell));
  if (!rawRows) return [tr("row-p", "target p", p), tr("row-q", "draft q", q)];
  const rows = [];
  const rawP = rawRows.row("target", context);
  if (rawP) rows.push(tr("row-raw row-p-raw", "target p (raw)", rawP));
  rows.push(tr("row-p row-processed", "target p\u2032 (processed)", p));
  if (rawRows.draftRaw) return [...rows, tr("row-q", "draft q (raw, drafted from)", q)];
  const rawQ = rawRows.row("draft", context);
  if (rawQ) rows.push(tr("row-raw row-q-raw", "draft q (raw)", rawQ));
  return [...rows, tr("row-q row-processed", "draft q\u2032 (processed)", q)];
}

/** A cell of the p/q table: the number and a small bar (a signed bar for p - q, its positive part highlighted). */
function pqCell(value, { signed = false } = {}) {
  if (!signed) return el("td", {}, num(value), bar(value, { className: "mini", label: "" }));
  const positive = value > 0;
  const mark = el("span", { className: `signed ${positive ? "positive" : value < 0 ? "negative" : "zero"}` });
  mark.style.width = `${Math.min(1, Math.abs(value)) * 100}%`;
  return el("td", { className: positive ? "pos" : "" },
    el("span", { className: "num" }, value > 0 ? `+${fmt(value)}` : value < 0 ? `\u2212${fmt(-value)}` : "0"),
    el("span", { className: "signed-bar", "aria-hidden": "true" }, mark),
    positive ? el("span", { className: "visually-hidden" }, " (positive part)") : null);
}

/**
 * The target's row p and the draft's row q of one verified proposal as labeled rows, with
 * p - q (its positive part highlighted) and, at the rejected proposal, the normalised correction.
 */
export function pqTable(vocab, v, correction) {
  const diff = v.p.map((p, i) => p - v.q[i]);
  // with sampling parameters the difference is of the rows used: p′ and q′ (or the raw q drafted from)
  const diffName = !rawRows ? "p \u2212 q" : rawRows.draftRaw ? "p\u2032 \u2212 q" : "p\u2032 \u2212 q\u2032";
  const rows = modelRows(v.p, v.q, v.context, (x) => pqCell(x));
  if (v.ratio !== null) {
    const zero = diff.every((x) => x === 0) ? " all-zero" : "";
    rows.push(el("tr", { className: `row-diff${zero}` }, el("th", { scope: "row" }, diffName), diff.map((x) => pqCell(x, { signed: true }))));
    if (correction) {
      rows.push(el("tr", { className: "row-correction" }, el("th", { scope: "row" }, "correction"),
        correction.distribution.map((x) => pqCell(x))));
    }
  }
  const note = correction ? el("p", { className: "hint pq-note" }, `correction = the positive part of ${diffName}, rescaled to sum 1`) : null;
  return el("div", { className: "table-scroll", tabindex: "0", role: "group", "aria-label": `p and q ${v.context === null ? "at the empty prefix" : `after ${v.context}`} (scrolls sideways)` },
    el("table", { className: "pq" },
      el("caption", {}, `The two models' rows ${v.context === null ? "at the empty prefix" : `after ${v.context}`}`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "token"),
        vocab.map((t) => el("th", { scope: "col", className: t === v.token ? "proposed" : "" }, token(t),
          t === v.token ? el("span", { className: "tag" }, " proposed") : null)))),
      el("tbody", {}, rows)), note);
}

/** One verification row: p and q side by side, the ratio bar with the draw u marked, the verdict in words. */
function verificationRow(v, vocab, correction) {
  const verdict = v.accepted ? "accepted" : "rejected";
  const ratio = v.ratio;
  let explanation;
  if (ratio === null) {
    explanation = v.accepted ? "matches the target's argmax" : "differs from the target's argmax";
  } else {
    explanation = `u ${fmtDraw(v.draw.u)} (the line) ${v.accepted ? "<" : "\u2265"} ratio ${fmt(ratio)} (the filled part)`;
  }
  return el("li", { className: `verify ${verdict}` },
    el("div", { className: "verify-head" },
      el("span", { className: "index" }, `proposal ${v.index}:`),
      token(v.token),
      el("span", { className: "ctx" }, contextLabel(v.context)),
      el("strong", { className: `verdict ${verdict}` }, v.accepted ? "\u2713 " : "\u2717 ", verdict)),
    pqTable(vocab, v, correction),
    el("dl", { className: "verify-numbers" },
      el("dt", {}, "p"), el("dd", { className: "p" }, num(v.p_token)),
      el("dt", {}, "q"), el("dd", { className: "q" }, num(v.q_token)),
      el("dt", {}, "ratio p/q"), el("dd", { className: "ratio" }, ratio === null ? "none (greedy)" : num(ratio)),
      el("dt", {}, "u"), el("dd", { className: "u" }, v.draw ? drawNum(v.draw.u) : "no draw"),
      el("dt", {}, "draw"), el("dd", { className: "position" }, v.draw ? `#${v.draw.position}` : "none")),
    ratio === null ? null : bar(ratio, {
      marker: v.draw.u, className: `ratio-bar ${verdict}`,
      label: `ratio ${fmt(ratio)} filled on a 0 to 1 bar, u ${fmtDraw(v.draw.u)} marked: ${verdict}`,
    }),
    el("p", { className: "explain" }, explanation,
      ratio !== null && ratio >= 1 ? el("span", { className: "remark" }, " (a ratio of 1 or more is always accepted)") : ""));
}

/** The Verification region: one row per verified position (or the autoregressive sample). */
export function verification({ list, summary }, block, vocab) {
  if (B.isBlock(block)) return B.verification({ list, summary }, block, vocab);
  B.clear(list);
  if (T.isTree(block)) return T.verification({ list, summary }, block, vocab);
  T.clear(list);
  list.replaceChildren();
  if (!block) {
    summary.textContent = "Nothing verified yet.";
    return;
  }
  if (block.sample) {
    summary.textContent = "Mode autoregressive: one target pass samples one token.";
    list.append(el("li", { className: "verify accepted" },
      el("div", { className: "verify-head" }, "sampled ", token(block.sample.token), " ",
        el("span", { className: "ctx" }, contextLabel(block.sample.context))),
      distribution(vocab, block.sample.p, { chosen: block.sample.token, caption: "target row p" }),
      el("p", {}, drawText(block.sample.draw))));
    return;
  }
  const rows = block.verification;
  const accepted = rows.filter((v) => v.accepted).length;
  summary.replaceChildren(`${rows.length} verified: ${accepted} accepted, ${rows.length - accepted} rejected. `,
    el("span", { className: "summary-rule" }, block.mode === "greedy" ? "Greedy: a proposal is accepted while it equals the target's argmax."
      : "A proposal is kept when its draw u falls below p/q (the marker inside the filled part of the bar)."));
  const correction = block.correction && block.mode !== "greedy" ? block.correction : null;
  rows.forEach((v) => list.append(verificationRow(v, vocab, correction && correction.index === v.index ? correction : null)));
}

const NO_BONUS = {
  rejection: "a rejection; the correction token ends the block",
  limit: "the output reached the limit, so there is no room for a bonus token",
  eos: "an accepted EOS ends the session",
};

/** The Correction region: correction bars, discarded proposals struck through, the bonus or why none. */
export function correction({ correction: box, discarded, bonus }, block, vocab) {
  box.replaceChildren();
  discarded.replaceChildren();
  bonus.replaceChildren();
  if (!block) {
    box.append(el("p", { className: "muted" }, "No block verified yet."));
    return;
  }
  if (block.sample) {
    box.append(el("p", { className: "muted" }, "Mode autoregressive: no correction, no bonus."));
    return;
  }
  const c = block.correction;
  if (c && B.isBlock(block)) {
    box.append(B.correctionWords(block), distribution(vocab, c.distribution, { chosen: c.token, caption: "correction distribution" }),
      el("p", { className: "correction-choice" }, "chosen ", markedToken(c.token, "correction"), " with ", drawText(c.draw)));
  } else if (c && T.isTree(block)) {
    box.append(T.correctionWords(block), distribution(vocab, c.distribution, { chosen: c.token, caption: "correction distribution" }),
      el("p", { className: "correction-choice" }, "chosen ", markedToken(c.token, "correction"), " with ", drawText(c.draw)));
  } else if (c) {
    box.append(
      el("p", {}, `Proposal ${c.index} (${contextLabel(c.context)}) was rejected: the correction token is `,
        block.mode === "greedy" ? "the target's argmax" : "drawn from the positive part of p \u2212 q, rescaled to sum 1 (the residual)", ":"),
      distribution(vocab, c.distribution, { chosen: c.token, caption: "correction distribution" }),
      el("p", { className: "correction-choice" }, "chosen ", markedToken(c.token, "correction"), " with ", drawText(c.draw)),
      c.draw ? cumulativeBar(vocab, c.distribution, c.draw.u, c.token) : null);
  } else {
    box.append(T.isTree(block) ? T.noCorrectionWords(block) : el("p", {}, "No rejection: no correction."));
  }
  if (c && !T.isTree(block) && block.discarded.length) discarded.append(whyDiscarded(block));
  discarded.append(el("p", {}, "Discarded: ",
    block.discarded.length
      ? el("span", { className: "discarded-list" }, block.discarded.map((t) => el("del", {}, markedToken(t, "discarded"))),
        el("span", { className: "muted" }, T.isTree(block) ? ` (${T.DISCARDED_WORDS})`
          : ` (${block.discarded.length} proposal${block.discarded.length === 1 ? "" : "s"} after the rejection, never committed)`))
      : el("span", { className: "muted" }, "none")));
  if (block.bonus) {
    bonus.append(el("p", { className: "bonus" }, "Bonus token: ", markedToken(block.bonus.token, "bonus"),
      " sampled from the target ", contextLabel(block.bonus.context), " with ", drawText(block.bonus.draw)),
    block.bonus.draw && block.bonus.p ? cumulativeBar(vocab, block.bonus.p, block.bonus.draw.u, block.bonus.token) : null);
  } else {
    bonus.append(el("p", { className: `no-bonus no-bonus-${block.no_bonus}` }, "No bonus: ", NO_BONUS[block.no_bonus] || "none", "."));
  }
}

/**
 * How a draw picks a token (SPEC 3, sample(d, u)): the row laid end to end as one 0-1 bar, each
 * token's part as long as its probability, with u marked; the token whose part holds u is chosen.
 */
export function cumulativeBar(vocab, row, u, chosen) {
  let from = 0;
  const parts = [];
  row.forEach((p, i) => {
    if (p <= 0) return;
    const part = el("span", { className: `cum-part${vocab[i] === chosen ? " chosen" : ""}` }, el("span", { className: "cum-label" }, vocab[i]));
    part.style.left = `${from * 100}%`;
    part.style.width = `${p * 100}%`;
    parts.push(part);
    from += p;
  });
  const mark = el("span", { className: "bar-marker" });
  mark.style.left = `${Math.max(0, Math.min(1, u)) * 100}%`;
  const ends = row.map((p, i) => [vocab[i], p]).filter(([, p]) => p > 0);
  let sum = 0;
  const cuts = ends.map(([t, p]) => `${t} up to ${fmt((sum += p))}`).join(", ");
  return el("div", { className: "cumulative" },
    el("span", { className: "cum-bar", role: "img", "aria-label": `The row end to end: ${cuts}; u ${fmt(u)} marked, in ${chosen}'s part` }, ...parts, mark),
    el("p", { className: "hint cum-words" }, `How u picks the token: the row laid end to end (${cuts}); u ${fmt(u)} falls in ${chosen}'s part.`));
}

/**
 * Why a block's discarded proposals are thrown away: the prefix they were drafted after (ending in
 * the rejected proposal) beside the committed output that replaced it (ending in the correction).
 */
function whyDiscarded(block) {
  const c = block.correction;
  const tail = block.prefix.slice(-3);
  const lead = block.prefix.length > 3 ? ["\u2026 "] : [];
  const drafted = block.proposal.tokens.slice(0, c.index);
  const tokens = (list, last) => el("span", { className: "context-tokens" }, ...lead, ...tail.map((t) => token(t)),
    ...list.slice(0, -1).map((t) => token(t)), last);
  return el("div", { className: "why-discarded" },
    el("div", { className: "context-row" }, "Discarded ", block.discarded.map((t) => el("del", {}, markedToken(t, "discarded"))),
      ", drafted after ", tokens(drafted, el("del", {}, token(drafted.at(-1), "rejected-token")))),
    el("div", { className: "context-row" }, "but the output now reads ", tokens(block.committed, markedToken(c.token, "correction"))),
    el("p", { className: "hint" }, "Their prefix no longer exists, so they are thrown away, however plausible."));
}

/** The Committed output region: every committed token with the block it came from. */
export function output({ list, summary }, blocks, info, selected = 0) {
  list.replaceChildren();
  blocks.forEach((block, i) => {
    const number = i + 1;
    block.committed.forEach((label, j) => {
      let how = "accepted";
      if (block.sample) how = "sampled";
      else if (j === block.committed.length - 1 && block.correction) how = "correction";
      else if (j === block.committed.length - 1 && block.bonus) how = "bonus";
      list.append(el("li", { className: `out block-${number % 2 ? "odd" : "even"} ${how}${number === selected ? " selected" : ""}` },
        markedToken(label, how),
        el("span", { className: "from" }, `block ${number}`, el("span", { className: "visually-hidden" }, `, ${how}`))));
    });
  });
  const parts = [`${info.committed.length} token${info.committed.length === 1 ? "" : "s"} committed`,
    `${info.position} draw${info.position === 1 ? "" : "s"} used (next: draw #${info.position})`];
  parts.push(info.done ? `session done (${info.done})` : "session open");
  summary.textContent = parts.join(" \u00b7 ") + ".";
}

/** The Block history: one button per block; the selected one is pressed. */
export function history(list, blocks, selected, divergentBlock, onSelect) {
  // the list is redrawn: a keyboard user's focus goes back to the same block's new button
  const focused = list.contains(document.activeElement) ? document.activeElement.dataset.block : null;
  list.replaceChildren();
  blocks.forEach((block, i) => {
    const number = i + 1;
    const button = el("button", { type: "button", className: "history-item", "aria-pressed": String(number === selected), "data-block": String(number) },
      `Block ${number}: `, block.committed.map((t) => token(t)), number === selected ? el("span", { className: "tag shown-tag" }, " (shown)") : null,
      number === divergentBlock ? el("span", { className: "tag divergence-tag" }, " first divergence") : null);
    button.addEventListener("click", () => onSelect(number));
    list.append(el("li", { className: number === divergentBlock ? "divergent" : "" }, button));
    if (focused === String(number)) button.focus({ preventScroll: true });
  });
}

/** The draws of a block in SPEC order, each with what it was used for. */
export function blockDraws(block) {
  if (B.isBlock(block)) return B.draws(block);
  if (T.isTree(block)) return T.draws(block);
  const used = [];
  for (const step of block.proposal.steps) if (step.draw) used.push([step.draw, `draft proposal ${step.index} (${step.token})`]);
  for (const v of block.verification) if (v.draw) used.push([v.draw, `verify proposal ${v.index} (${v.accepted ? "accepted" : "rejected"})`]);
  if (block.correction && block.correction.draw) used.push([block.correction.draw, `correction (${block.correction.token})`]);
  if (block.bonus && block.bonus.draw) used.push([block.bonus.draw, `bonus (${block.bonus.token})`]);
  if (block.sample && block.sample.draw) used.push([block.sample.draw, `target sample (${block.sample.token})`]);
  return used;
}

/** The Draw stream tables: every draw used so far, by block (and the pending proposal's); the raw table has the hex. */
export function draws(tbody, rawBody, blocks, pending, selected = 0) {
  tbody.replaceChildren();
  rawBody.replaceChildren();
  const row = (draw, blockText, what, className = "") => {
    tbody.append(el("tr", { className },
      el("td", {}, `#${draw.position}`), el("td", {}, drawNum(draw.u)),
      el("td", {}, blockText), el("td", {}, what)));
    rawBody.append(el("tr", { className }, el("td", {}, `#${draw.position}`), el("td", {}, el("code", {}, draw.hex)),
      el("td", {}, el("code", {}, String(draw.u)))));
  };
  blocks.forEach((block, i) => {
    const used = blockDraws(block);
    const className = i + 1 === selected ? "selected" : "";
    if (!used.length) tbody.append(el("tr", { className }, el("td", { colspan: "4" }, `block ${i + 1}: no draws (greedy)`)));
    used.forEach(([draw, what]) => row(draw, `block ${i + 1}`, what, className));
  });
  if (pending) {
    for (const step of pending.steps) if (step.draw) row(step.draw, "pending", `draft proposal ${step.index} (${step.token}), not committed`, "pending");
  }
}

/** The counter names of SPEC section 7, in trace order. */
export const COUNTERS = ["target_passes", "draft_steps", "accepted", "rejected", "discarded", "bonus_tokens", "committed", "draws"];

/** The counters in words (the trace's field names are in data-counter and in the technical details). */
export const COUNTER_WORDS = {
  target_passes: "target passes", draft_steps: "draft steps", accepted: "accepted", rejected: "rejected",
  discarded: "discarded", bonus_tokens: "bonus tokens", committed: "committed", draws: "draws used",
};

/** The Counters region: every counter by name, and committed tokens per target pass. */
export function counters(dl, values) {
  dl.replaceChildren();
  for (const name of COUNTERS) {
    dl.append(el("div", { className: "counter", "data-counter": name }, el("dt", {}, COUNTER_WORDS[name]), el("dd", {}, String(values[name] ?? 0))));
  }
  const passes = values.target_passes || 0;
  dl.append(el("div", { className: "counter derived", "data-counter": "committed_per_pass" },
    el("dt", {}, "committed per target pass"),
    el("dd", {}, passes ? fmt(values.committed / passes) : "none yet")));
}
