// The Analysis panel: POST /v1/analysis (exact expectations over all sessions
// of the settings, issue 12) drawn as tables and a chart against width. A
// service without the route (404) gets a sentence saying so, nothing else.

import * as api from "./api.js";
import { configText } from "./settings.js";
import { COUNTERS, el, fmt, num, token } from "./render.js";

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
  const W = 480, H = 220, left = 44, right = 12, top = 14, bottom = 36;
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
  for (const w of widths) chart.append(svg("text", { x: x(w), y: H - bottom + 16, class: "tick", "text-anchor": "middle" }, String(w)));
  chart.append(svg("text", { x: (left + W - right) / 2, y: H - 4, class: "tick", "text-anchor": "middle" }, "width"));
  const bestX = x(best);
  chart.append(svg("line", { x1: bestX, y1: top, x2: bestX, y2: y(0), class: "best" }));
  chart.append(svg("text", { x: bestX + 4, y: top + 10, class: "tick best-label" }, `best width ${best}`));
  for (const [key, cls] of [["committed_per_pass", "series-cpp"], ["speedup", "series-speedup"]]) {
    const points = sweep.map((s) => `${x(s.width)},${y(s[key])}`).join(" ");
    chart.append(svg("polyline", { points, class: `series ${cls}` }));
    for (const s of sweep) chart.append(svg("circle", { cx: x(s.width), cy: y(s[key]), r: 3, class: `dot ${cls}` }));
  }
  return chart;
}

function contextsTable(contexts) {
  return el("table", { className: "analysis-contexts" },
    el("caption", {}, "Acceptance per context: alpha = sum of min(p, q)"),
    el("thead", {}, el("tr", {}, ["context", "alpha", "exact", "residual"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, contexts.map((c) => el("tr", {},
      el("th", { scope: "row" }, c.context === null ? "empty prefix" : token(c.context)),
      el("td", {}, num(c.alpha)), el("td", {}, el("code", {}, c.alpha_exact)),
      el("td", {}, c.residual ? c.residual.map(fmt).join(" / ") : "none (alpha = 1)")))));
}

function expectedTable(expected) {
  return el("table", { className: "analysis-expected" },
    el("caption", {}, "Expected counters per session (exact)"),
    el("tbody", {}, COUNTERS.map((name) => el("tr", { "data-counter": name },
      el("th", { scope: "row" }, name), el("td", {}, num(expected.counters[name])), el("td", {}, el("code", {}, expected.counters_exact[name]))))));
}

function comparison(result, width) {
  const e = result.expected;
  const l = result.leviathan;
  const closed = (value) => (l ? num(value) : "none");
  return el("table", { className: "analysis-compare" },
    el("caption", {}, `At width ${width}: exact against Leviathan et al.'s closed form (constant acceptance a, no limit)`),
    el("thead", {}, el("tr", {}, ["", "exact", "Leviathan"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {},
      el("tr", {}, el("th", { scope: "row" }, "committed tokens per pass"), el("td", { className: "exact-cpp" }, num(e.committed_per_pass)),
        el("td", { className: "leviathan-cpp" }, closed(l && l.tokens_per_pass))),
      el("tr", {}, el("th", { scope: "row" }, "speedup"), el("td", { className: "exact-speedup" }, num(e.speedup)),
        el("td", { className: "leviathan-speedup" }, closed(l && l.speedup))),
      el("tr", {}, el("th", { scope: "row" }, "acceptance rate a"), el("td", {}, e.acceptance_rate === null ? "none (nothing verified)" : num(e.acceptance_rate)),
        el("td", {}, l ? "the same a, as input" : "no closed form: nothing is drafted"))));
}

/** The output distribution's distance to the target's (and the naive correction's), exactly. */
function distance(result) {
  const o = result.output;
  const exactly = (x, text) => el("span", {}, num(x), " (", el("code", {}, text), ")");
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

/** The whole panel for one response. */
export function analysisView(result) {
  return el("div", {},
    el("p", {}, "Exact over all sessions of these settings (the seed does not matter)."),
    contextsTable(result.contexts),
    expectedTable(result.expected),
    comparison(result, result.config.width),
    distance(result),
    el("figure", {}, sweepChart(result.sweep, result.best_width),
      el("figcaption", {}, el("span", { className: "key key-cpp" }, "\u25cf committed tokens per pass"), "  ",
        el("span", { className: "key key-speedup" }, "\u25cf speedup"), ` \u00b7 best width ${result.best_width}`)),
    sweepTable(result.sweep, result.best_width));
}

/**
 * Wire the panel: an Analyse button and a draft-cost slider. Returns the panel's handle:
 * `invalidate()` (the settings changed: a shown analysis would be stale), `state` ({shown,
 * cost}, for the URL fragment) and `restore({shown, cost})` (rebuild it from a fragment; the
 * caller awaits it inside its own queued task).
 * @param {{enqueue: Function, settings: Function, changed: Function}} controller `changed()`
 *   is called after the panel's state changed (the controller records it in the URL)
 */
export function setupAnalysis({ enqueue, settings, changed }) {
  const box = $("analysis");
  const cost = el("input", { id: "draft-cost", type: "range", min: "0", max: "0.5", step: "0.01", value: "0" });
  const costValue = el("output", { id: "draft-cost-value", for: "draft-cost" }, "0");
  const button = el("button", { type: "button", id: "btn-analyse" }, "Analyse");
  const result = el("div", { id: "analysis-result", "aria-live": "polite" });
  box.append(
    el("p", {}, "Exact expectations over all sessions of the current settings (", el("code", {}, "POST /v1/analysis"), ")."),
    el("div", { className: "row" },
      el("label", { for: "draft-cost" }, "Draft cost (target passes per draft step)"), cost, costValue),
    el("p", {}, button),
    result);
  let shown = false;

  async function run() {
    const current = settings();
    shown = false;
    try {
      const body = `{"config": ${configText(current)}, "widths": ${JSON.stringify(widths(current.width))}, "draft_cost": ${cost.value}}`;
      result.replaceChildren(analysisView(await api.analysis(body)));
      shown = true;
    } catch (error) {
      if (error instanceof api.ApiError && error.status === 404) {
        result.replaceChildren(el("p", { className: "muted" }, "This service has no analysis route (POST /v1/analysis answered 404)."));
      } else {
        result.replaceChildren(el("p", { className: "alert" }, `The analysis failed: ${error.message}`,
          ...(error.fieldErrors || []).map((e) => el("span", { className: "error-line" }, `${e.pointer}: ${e.detail}`))));
      }
    }
  }

  const analyse = () => enqueue(async () => {
    await run();
    changed();
  });
  button.addEventListener("click", analyse);
  cost.addEventListener("input", () => {
    costValue.textContent = cost.value;
  });
  cost.addEventListener("change", () => (shown ? analyse() : enqueue(async () => changed())));
  return {
    invalidate() {
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
      result.replaceChildren();
      if (state.shown) await run();
    },
  };
}
