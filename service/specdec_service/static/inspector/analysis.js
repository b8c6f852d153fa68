// The Analysis panel: POST /v1/analysis (exact expectations over all sessions
// of the settings) drawn as tables and a chart against width. A
// service without the route (404) gets a sentence saying so, nothing else.

import * as api from "./api.js";
import { configText, fieldOfPointer } from "./settings.js";
import { COUNTERS, el, fmt, num, token } from "./render.js";
import { analysisComparison } from "./block.js";
import { analysisTreeSweep } from "./tree.js";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const MAX_WIDTH = 16;

/** The widths to sweep: 1-8, or up to the config's width when it is larger (at most 16). */
function widths(width) {
  const top = Math.min(MAX_WIDTH, Math.max(8, Number.parseInt(width, 10) || 0));
  return Array.from({ length: top }, (_, i) => i + 1);
}

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

/** A line chart of committed tokens per pass and speedup against width, the best width marked. */
export function sweepChart(sweep, best) {
  const W = 480, H = 240, left = 44, right = 12, top = 18, bottom = 40;
  const widths = sweep.map((s) => s.width);
  const ymax = Math.max(1, ...sweep.map((s) => Math.max(s.committed_per_pass, s.speedup))) * 1.1;
  const x = (w) => left + (widths.length === 1 ? 0.5 : (w - widths[0]) / (widths.at(-1) - widths[0])) * (W - left - right);
  const y = (v) => H - bottom - (v / ymax) * (H - top - bottom);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img",
    "aria-label": `Committed tokens per pass and speedup against width; best width ${best}` });
  chart.append(svg("line", { x1: left, y1: y(0), x2: W - right, y2: y(0), class: "axis" }));
  chart.append(svg("line", { x1: left, y1: top, x2: left, y2: y(0), class: "axis" }));
  const step = ymax > 6 ? 2 : ymax > 3 ? 1 : 0.5;
  for (let t = 0; t <= ymax; t += step) {
    chart.append(svg("text", { x: left - 6, y: y(t) + 4, class: "tick", "text-anchor": "end" }, String(t)));
    chart.append(svg("line", { x1: left, y1: y(t), x2: W - right, y2: y(t), class: "grid" }));
  }
  for (const w of widths) chart.append(svg("text", { x: x(w), y: H - bottom + 18, class: "tick", "text-anchor": "middle" }, String(w)));
  chart.append(svg("text", { x: (left + W - right) / 2, y: H - 4, class: "tick", "text-anchor": "middle" }, "width"));
  // the 1x line: the target alone (one pass per token); a speedup under it is a slowdown
  chart.append(svg("line", { x1: left, y1: y(1), x2: W - right, y2: y(1), class: "one-x" }));
  chart.append(svg("text", { x: W - right - 4, y: y(1) - 6, class: "tick one-x-label", "text-anchor": "end" }, "1\u00d7: the target alone"));
  const bestX = x(best);
  chart.append(svg("line", { x1: bestX, y1: top, x2: bestX, y2: y(0), class: "best" }));
  const right_ = bestX > W * 0.6; // near the right edge the label goes left of its line
  chart.append(svg("text", { x: right_ ? bestX - 4 : bestX + 4, y: top + 12, class: "tick best-label", "text-anchor": right_ ? "end" : "start" }, `best width ${best}`));
  // committed per pass: a thick solid line with round dots; speedup: a thin dashed line with square
  // marks drawn on top, so where the two are equal (draft cost 0) both stay visible
  const cpp = sweep.map((s) => `${x(s.width)},${y(s.committed_per_pass)}`).join(" ");
  chart.append(svg("polyline", { points: cpp, class: "series series-cpp" }));
  for (const s of sweep) chart.append(svg("circle", { cx: x(s.width), cy: y(s.committed_per_pass), r: 6, class: "dot series-cpp" }));
  const speedup = sweep.map((s) => `${x(s.width)},${y(s.speedup)}`).join(" ");
  chart.append(svg("polyline", { points: speedup, class: "series series-speedup" }));
  for (const s of sweep) chart.append(svg("rect", { x: x(s.width) - 3, y: y(s.speedup) - 3, width: 6, height: 6, class: "dot series-speedup" }));
  return chart;
}

function contextsTable(contexts) {
  return el("table", { className: "analysis-contexts" },
    el("caption", {}, "Acceptance per context: alpha = sum of min(p, q), the chance a proposal there is kept"),
    el("thead", {}, el("tr", {}, ["context", "alpha", "exact", "correction (residual)"].map((h) => el("th", { scope: "col", className: h === "exact" ? "exact" : "" }, h)))),
    el("tbody", {}, contexts.map((c) => el("tr", {},
      el("th", { scope: "row" }, c.context === null ? "empty prefix" : token(c.context)),
      el("td", {}, num(c.alpha)), el("td", { className: "exact" }, el("code", {}, c.alpha_exact)),
      el("td", {}, c.residual ? c.residual.map(fmt).join(" / ") : "none (alpha = 1)")))));
}

function expectedTable(expected) {
  return el("table", { className: "analysis-expected" },
    el("caption", {}, "Expected counters per session (exact)"),
    el("tbody", {}, COUNTERS.map((name) => el("tr", { "data-counter": name },
      el("th", { scope: "row" }, name), el("td", {}, num(expected.counters[name])), el("td", { className: "exact" }, el("code", {}, expected.counters_exact[name]))))));
}

function comparison(result, width) {
  const e = result.expected;
  const l = result.leviathan;
  const closed = (value) => (l ? num(value) : "none");
  return el("table", { className: "analysis-compare" },
    el("caption", {}, `At width ${width}: exact against Leviathan et al.'s closed form (one acceptance rate alpha everywhere, no limit)`),
    el("thead", {}, el("tr", {}, ["", "exact", "Leviathan"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {},
      el("tr", {}, el("th", { scope: "row" }, "committed tokens per pass"), el("td", { className: "exact-cpp" }, num(e.committed_per_pass)),
        el("td", { className: "leviathan-cpp" }, closed(l && l.tokens_per_pass))),
      el("tr", {}, el("th", { scope: "row" }, "speedup"), el("td", { className: "exact-speedup" }, num(e.speedup)),
        el("td", { className: "leviathan-speedup" }, closed(l && l.speedup))),
      el("tr", {}, el("th", { scope: "row" }, "acceptance rate alpha"), el("td", {}, e.acceptance_rate === null ? "none (nothing verified)" : num(e.acceptance_rate)),
        el("td", {}, l ? "the same alpha, as input" : result.config.mode === "tree" ? "no closed form for several drafts"
          : "no closed form: nothing is drafted"))));
}

/** The output distribution's distance to the target's (and the naive correction's), exactly. */
function distance(result) {
  const o = result.output;
  const exactly = (x, text) => el("span", {}, num(x), el("span", { className: "exact" }, " (", el("code", {}, text), ")"));
  return el("p", { className: "analysis-tv" },
    `Output over the first ${o.depth} token${o.depth === 1 ? "" : "s"}: total variation to the target's distribution `,
    el("span", { className: "tv" }, exactly(o.tv, o.tv_exact)),
    o.tv_exact === "0" ? ", exactly the target's distribution" : "",
    result.naive ? el("span", {}, "; with the correction sampled from p instead of the residual (the naive rule) ",
      el("span", { className: "naive-tv" }, exactly(result.naive.tv, result.naive.tv_exact))) : null, ".");
}

function sweepTable(sweep, best) {
  return el("table", { className: "analysis-sweep" },
    el("caption", {}, "Sweep over width"),
    el("thead", {}, el("tr", {}, ["width", "committed per pass", "speedup", ""].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, sweep.map((s) => el("tr", { className: s.width === best ? "best" : "" },
      el("th", { scope: "row" }, String(s.width)), el("td", {}, num(s.committed_per_pass)), el("td", {}, num(s.speedup)),
      el("td", {}, s.width === best ? "best width" : "")))));
}

function verdictText(result, cost) {
  const e = result.expected;
  return `Width ${result.config.width}, draft cost ${cost}: ${fmt(e.committed_per_pass)} tokens per target pass, `
    + `speedup ${fmt(e.speedup)}; best width ${result.best_width}.`;
}

/** A wide table scrolls inside its card (a phone's page never scrolls sideways). */
function scrolling(table, label) {
  return el("div", { className: "table-scroll", tabindex: "0", role: "group", "aria-label": `${label} (scrolls sideways)` }, table);
}

/** The whole panel for one response. */
export function analysisView(result, cost) {
  return el("div", { className: "analysis-view", "data-cost": cost },
    el("p", {}, `Exact over all sessions of these settings (the seed does not matter), at draft cost ${cost}.`),
    el("div", { className: "analysis-speed" },
      el("div", {},
        el("p", { className: "analysis-verdict", tabindex: "-1" }, verdictText(result, cost)),
        scrolling(comparison(result, result.config.width), "Exact against Leviathan")),
      el("div", {},
        el("p", { className: "caveat" }, el("strong", {}, "Speedup here counts target passes only. "),
          "The draft's cost, batching and the hardware decide the real speed: four tokens per pass is not four times faster."),
        el("figure", {}, sweepChart(result.sweep, result.best_width),
        el("figcaption", {}, el("span", { className: "key key-cpp" }, "\u25cf\u2501 committed tokens per pass"), " \u00b7 ",
          el("span", { className: "key key-speedup" }, "\u25a0\u2504 speedup"), ` \u00b7 best width ${result.best_width}`,
          result.sweep.every((s) => s.speedup === s.committed_per_pass)
            ? el("span", { className: "coincide" }, " \u00b7 at draft cost 0 the two lines coincide (the dashed one is drawn on top)") : null)))),
    analysisComparison(result.block, result.config.width), // mode block only (block.js)
    analysisTreeSweep(result.tree_sweep, result.config), // mode tree only (tree.js)
    el("div", { className: "analysis-residual" }, scrolling(contextsTable(result.contexts), "Acceptance per context"), distance(result)),
    scrolling(expectedTable(result.expected), "Expected counters"),
    scrolling(sweepTable(result.sweep, result.best_width), "Sweep over width"));
}

/** The label of the setting a problem's pointer names ("#/config/width" -> "Width"), or null. */
function settingLabel(pointer) {
  const field = fieldOfPointer(pointer);
  const label = field === "config" ? null : document.querySelector(`label[for="${field}"]`);
  return label ? label.textContent.trim() : null;
}

/**
 * Why the analysis failed, in plain words: each refused setting by its label, once; the
 * route, the status and the JSON pointers in technical details.
 */
export function failure(error) {
  const errors = error.fieldErrors || [];
  const problem = error.problem || null;
  const lines = errors.map((e) => {
    const label = settingLabel(e.pointer);
    return el("span", { className: "error-line" }, label ? `${label}: ${e.detail}` : e.detail);
  });
  const reason = errors.length ? "these settings are refused:" : (problem && problem.detail) || error.message;
  return [el("p", { className: "alert" }, `The analysis failed: ${reason}`, ...lines),
    ...(problem ? [el("details", { className: "tech" }, el("summary", {}, "Technical details"),
      el("p", {}, el("code", {}, "POST /v1/analysis"), ` answered ${error.status}: ${error.message}`))] : [])];
}

/**
 * Wire the panel: an Analyse button and a draft-cost slider. Returns the panel's handle:
 * `invalidate()` (the settings changed: a shown analysis would be stale), `state` ({shown,
 * cost}, for the URL fragment) and `restore({shown, cost})` (rebuild it from a fragment; the
 * caller awaits it inside its own queued task). The figures shown always belong to the slider's
 * value: a newer value aborts the request of an older one, and a stale answer is never drawn.
 * @param {{enqueue: Function, settings: Function, changed: Function, verdict: Function}} controller
 *   `changed()` is called after the panel's state changed (the controller records it in the URL);
 *   `verdict(element, text)` brings the result into view (element null: announces only) and announces it
 */
export function setupAnalysis({ enqueue, settings, changed, verdict = () => {} }) {
  const box = $("analysis");
  const cost = el("input", { id: "draft-cost", type: "range", min: "0", max: "0.5", step: "0.01", value: "0" });
  const costValue = el("output", { id: "draft-cost-value", for: "draft-cost" }, "0");
  const button = el("button", { type: "button", id: "btn-analyse" }, "Analyse");
  const result = el("div", { id: "analysis-result", "aria-live": "polite" });
  box.append(
    el("p", {}, "Exact averages over all sessions of the current settings, every seed at once."),
    el("div", { className: "row" },
      el("label", { for: "draft-cost" }, "Draft cost (target passes per draft step)"), cost, costValue),
    el("p", {}, button),
    result,
    el("details", { className: "tech" }, el("summary", {}, "Technical details"),
      el("p", {}, "The panel calls ", el("code", {}, "POST /v1/analysis"), " with the settings, widths 1 to 8 and the draft cost; "
        + "the exact figures are fractions (docs/analysis.md).")));
  let shown = false;
  let wanted = false; // the panel should show figures (Analyse was pressed and the settings did not change)
  let requested = 0; // the number of the latest request: only its answer is drawn
  let controller = null;

  async function run(mine) {
    const current = settings();
    const value = cost.value;
    if (controller) controller.abort();
    controller = new AbortController();
    shown = false;
    wanted = true;
    try {
      const body = `{"config": ${configText(current)}, "widths": ${JSON.stringify(widths(current.width))}, "draft_cost": ${value}}`;
      const answer = await api.analysis(body, { signal: controller.signal });
      if (mine !== requested) return false; // a newer value was asked for meanwhile
      result.replaceChildren(analysisView(answer, value));
      shown = true;
      return true;
    } catch (error) {
      if (mine !== requested) return false;
      if (error instanceof api.ApiError && error.status === 404) {
        result.replaceChildren(el("p", { className: "muted" }, "This service has no analysis route (POST /v1/analysis answered 404)."));
      } else {
        result.replaceChildren(...failure(error));
      }
      return true;
    }
  }

  // the Analyse button brings the figures into view and focus; the slider keeps the focus (its
  // next arrow key must move it again) and the figures beside it are announced (aria-live)
  const analyse = ({ moveFocus = true } = {}) => {
    const mine = ++requested;
    if (controller) controller.abort(); // the answer for an older value is not wanted any more
    return enqueue(async () => {
      if (mine !== requested) return; // a later value is queued: only its figures are drawn
      if (await run(mine)) {
        changed();
        // the figures' summary, or (when only the residuals are shown, as in the story) the residual part
        const head = [...result.querySelectorAll(".analysis-verdict, .analysis-residual")].find((e) => e.getClientRects().length)
          || result.firstChild;
        const summary = result.querySelector(".analysis-verdict");
        verdict(moveFocus ? head : null, summary ? summary.textContent : "Analysis done.");
      }
    });
  };
  button.addEventListener("click", () => analyse());
  cost.addEventListener("input", () => {
    costValue.textContent = cost.value;
  });
  cost.addEventListener("change", () => (wanted ? analyse({ moveFocus: false }) : enqueue(async () => changed())));
  return {
    invalidate() {
      wanted = false;
      requested += 1;
      if (controller) controller.abort();
      if (!shown) return;
      shown = false;
      result.replaceChildren(el("p", { className: "muted" }, "The settings changed: press Analyse for the new ones."));
    },
    get state() {
      return { shown, cost: cost.value };
    },
    async restore(state) {
      cost.value = state.cost;
      costValue.textContent = cost.value;
      shown = false;
      wanted = false;
      const mine = ++requested;
      result.replaceChildren();
      if (state.shown) await run(mine);
    },
  };
}
