// Grade a trace: a student's specdec-trace/1 file (chosen or dropped) goes to
// POST /v1/grade unchanged; the report is shown, and the reference session of
// the trace's settings opens in the block view at the first divergence.

import * as api from "./api.js";
import { el, token } from "./render.js";

const $ = (id) => document.getElementById(id);

function checksTable(checks) {
  return el("table", { className: "checks" },
    el("caption", {}, "Checks"),
    el("thead", {}, el("tr", {}, ["check", "result", "failing blocks", "first failure"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, checks.map((c) => el("tr", { className: c.passed ? "pass" : "fail" },
      el("th", { scope: "row" }, c.name),
      el("td", {}, c.passed ? "\u2713 passed" : "\u2717 failed"),
      el("td", {}, c.blocks.length ? c.blocks.map((b) => `block ${b + 1}`).join(", ") : c.trace ? "trace" : "none"),
      el("td", {}, c.first_failure ? `${c.first_failure.pointer}: ${c.first_failure.detail}` : "")))));
}

function submittedBlocks(trace, divergentBlock) {
  if (!trace || !Array.isArray(trace.blocks)) return null;
  return el("ol", { className: "history submitted", "aria-label": "Blocks of the graded trace" },
    trace.blocks.map((block, i) => el("li", { className: i === divergentBlock ? "divergent" : "" },
      `Block ${i + 1}: `, (Array.isArray(block.committed) ? block.committed : []).map((t) => token(String(t))),
      i === divergentBlock ? el("span", { className: "tag divergence-tag" }, " first divergence") : null)));
}

/** The report of POST /v1/grade as DOM. */
export function reportView(name, report, trace) {
  const d = report.first_divergence;
  const value = (v) => (v === null || v === undefined ? "nothing" : JSON.stringify(v));
  return el("div", {},
    el("p", { className: report.passed ? "grade-pass" : "grade-fail" },
      el("strong", {}, report.passed ? "\u2713 Passed" : "\u2717 Failed"),
      ` \u00b7 ${name} \u00b7 score ${Math.round(report.score * 1000) / 10}%`),
    d ? el("p", { className: "first-divergence" }, `First divergence in block ${d.block + 1}: `,
      el("code", {}, d.path), ` expected ${value(d.expected)}, got ${value(d.got)} (check ${d.check}, ${d.kind}).`)
      : el("p", {}, "No divergence: the trace equals the reference."),
    report.diagnosis && report.diagnosis.length
      ? el("div", { className: "diagnosis" }, el("h3", {}, "Diagnosis"), el("ul", {}, report.diagnosis.map((x) => el("li", {},
        el("strong", {}, x.title), ` (${x.rule}${x.exact ? ", reproduces the trace exactly" : ", the closest catalogued mistake"}): ${x.hint}`))))
      : null,
    submittedBlocks(trace, d ? d.block : -1),
    checksTable(report.checks));
}

/**
 * Why a file cannot be graded, in plain words: the service's reason once (each wrong field of the
 * trace on its own line, named by its place in the file), the route and status in technical details.
 */
export function refusal(name, error) {
  const errors = error instanceof api.ApiError ? error.fieldErrors : [];
  const problem = error instanceof api.ApiError ? error.problem : null;
  const reason = errors.length
    ? `${errors.length} field${errors.length === 1 ? " of the trace is" : "s of the trace are"} wrong:`
    : (problem && problem.detail) || error.message;
  // replaceChildren writes null as the text "null": only real nodes go in
  return [el("p", { className: "grade-fail" }, `${name} cannot be graded: ${reason}`),
    ...(errors.length ? [el("ul", {}, errors.map((e) => el("li", {}, el("code", {}, e.pointer), `: ${e.detail}`)))] : []),
    ...(problem ? [el("details", { className: "tech" }, el("summary", {}, "Technical details"),
      el("p", {}, el("code", {}, "POST /v1/grade"), ` answered ${error.status}: ${error.message}`))] : [])];
}

/**
 * Wire the file input and the drop zone.
 * @param {{enqueue: Function, showReference: Function, status: Function}} controller
 */
export function setupGrading({ enqueue, showReference, status }) {
  const input = $("grade-file");
  const zone = $("grade-drop");
  const grade = (file) => enqueue(async () => {
    const text = await file.text();
    const region = $("grade-region");
    const box = $("grade-report");
    region.hidden = false;
    box.replaceChildren(el("p", {}, `Grading ${file.name}\u2026`));
    let report;
    try {
      report = await api.grade(text);
    } catch (error) {
      box.replaceChildren(...refusal(file.name, error));
      status(`${file.name} cannot be graded.`);
      return;
    }
    let trace = null;
    try {
      trace = JSON.parse(text);
    } catch (error) {
      trace = null;
    }
    box.replaceChildren(reportView(file.name, report, trace));
    status(`Graded ${file.name}: ${report.passed ? "passed" : "failed"}, score ${Math.round(report.score * 1000) / 10}%.`);
    if (trace && trace.config) await showReference(trace.config, report.first_divergence);
    // the report stands below the page's views: bring it into view and focus its heading
    const heading = $("grade-report-heading");
    heading.setAttribute("tabindex", "-1");
    region.scrollIntoView({ block: "start" });
    heading.focus({ preventScroll: true });
  });
  input.addEventListener("change", () => {
    if (input.files.length) grade(input.files[0]);
    input.value = "";
  });
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const file = event.dataTransfer && event.dataTransfer.files[0];
    if (file) grade(file);
  });
}
