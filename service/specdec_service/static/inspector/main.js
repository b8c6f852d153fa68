// The inspector's controller: the view model, the actions (Draft, Verify,
// Step, Run, Reset), the settings and the URL fragment. The service keeps no
// session: the page holds the state the API last returned and sends it back
// unchanged (SPEC section 8); the fragment holds the settings and how far the
// session went, and replaying that many blocks reproduces the view.

import * as api from "./api.js";
import * as R from "./render.js";
import * as S from "./settings.js";
import { setupGrading } from "./grade.js";
import { setupAnalysis } from "./analysis.js";

const $ = (id) => document.getElementById(id);
const MAX_BLOCKS = 256; // SPEC section 6: the limit is at most 256, so is a session's block count
const ZERO = Object.fromEntries(R.COUNTERS.map((name) => [name, 0]));

/** The view model. `state` is null until the first block (then the API's last state). */
const model = {
  settings: { ...S.DEFAULTS },
  configText: null,
  settingsError: null,
  state: null,
  blocks: [],
  pending: null,
  done: null,
  end: false,
  selected: 0,
  divergence: null,
  builtinVocab: {},
};

let renderedFragment = null;
let analysis = { invalidate() {}, state: { shown: false, cost: "0" }, async restore() {} };
let queue = Promise.resolve();

/** Run `task` after every earlier one (clicks and history moves never interleave). */
function enqueue(task) {
  queue = queue.then(async () => {
    setBusy(true);
    try {
      await task();
    } catch (error) {
      report(error);
    } finally {
      setBusy(false);
    }
  });
  return queue;
}

// ------------------------------------------------------------------ session

function stateText() {
  return model.state ? api.json(model.state) : `{"config": ${model.configText}}`;
}

function newSession(settings) {
  if (JSON.stringify(settings) !== JSON.stringify(model.settings)) analysis.invalidate();
  model.settings = settings;
  model.state = null;
  model.blocks = [];
  model.pending = null;
  model.done = null;
  model.end = false;
  model.selected = 0;
  model.divergence = null;
  model.configText = null;
  model.settingsError = null;
  try {
    model.configText = S.configText(settings);
  } catch (error) { // a custom model that is not JSON: nothing can be sent until it is mended
    model.settingsError = error;
    throw error;
  }
}

function vocab() {
  const target = model.state ? model.state.config.target : null;
  if (target && typeof target === "object") return target.vocab;
  if (typeof target === "string") return model.builtinVocab[target] || [];
  const setting = model.settings.target;
  if (setting.startsWith("{")) {
    try {
      return JSON.parse(setting).vocab || [];
    } catch (error) {
      return [];
    }
  }
  return model.builtinVocab[setting] || [];
}

function commit(result) {
  model.blocks.push(result.block);
  model.state = result.state;
  model.done = result.done;
  model.pending = null;
  model.selected = 0;
}

async function doDraft() {
  model.pending = await api.draft(stateText());
  model.selected = 0;
}

async function doVerify() {
  commit(await api.verify(stateText(), model.pending.tokens));
}

async function doStep() {
  commit(await api.step(stateText()));
}

async function doRun() {
  const trace = await api.runs(model.configText);
  model.blocks = trace.blocks;
  model.state = { config: trace.config, committed: trace.output, position: trace.position, counters: trace.counters };
  model.done = trace.done;
  model.pending = null;
  model.end = true;
  model.selected = 0;
  return trace;
}

// ------------------------------------------------------------------ rendering

function setBusy(busy) {
  if (busy) document.body.setAttribute("aria-busy", "true");
  else document.body.removeAttribute("aria-busy");
}

/**
 * Buttons that cannot act now are aria-disabled, not disabled: they keep the keyboard
 * focus (a disabled button would drop it to the page) and say why when pressed.
 */
function updateButtons() {
  for (const [name, reason] of Object.entries(unavailable())) {
    const button = $(`btn-${name}`);
    button.setAttribute("aria-disabled", String(Boolean(reason)));
    button.dataset.reason = reason || "";
  }
}

/** Why each action cannot run now ("" when it can). */
function unavailable() {
  const done = model.done ? `The session is done (${model.done}): press Reset or change a setting.` : "";
  return {
    draft: done || (model.pending ? "A proposal is already drafted: press Verify (or Step)." : ""),
    verify: model.pending ? "" : (done || "Nothing to verify: press Draft first."),
    step: done,
    run: done,
  };
}

function shownBlockNumber() {
  if (model.selected) return model.selected;
  return model.pending ? 0 : model.blocks.length;
}

function render() {
  const words = vocab();
  const number = shownBlockNumber();
  const block = number ? model.blocks[number - 1] : null;
  const pendingShown = !model.selected && model.pending;
  R.proposal({ list: $("proposal-tokens"), table: $("proposal-table"), summary: $("proposal-summary") },
    pendingShown ? model.pending : block && block.proposal, words, Boolean(pendingShown), number);
  R.verification({ list: $("verification"), summary: $("verification-summary") }, pendingShown ? null : block, words);
  if (pendingShown) $("verification-summary").textContent = "Drafted, not verified yet: press Verify to commit.";
  R.correction({ correction: $("correction"), discarded: $("discarded"), bonus: $("bonus") }, pendingShown ? null : block, words);
  const state = model.state || { committed: [], position: 0, counters: ZERO };
  R.output({ list: $("output"), summary: $("output-summary") }, model.blocks, { committed: state.committed, position: state.position, done: model.done });
  const divergent = model.divergence ? model.divergence.block + 1 : 0;
  R.history($("history"), model.blocks, number, divergent, (n) => enqueue(async () => select(n)));
  R.draws($("draws").tBodies[0], model.blocks, model.pending);
  R.counters($("counters"), state.counters);
  $("block-caption").textContent = pendingShown ? "Showing the pending proposal (not committed)."
    : number ? `Showing block ${number} of ${model.blocks.length}${model.selected ? " (selected in the history)" : ""}.`
      : "New session: empty prefix, position 0, counters 0.";
  const banner = $("divergence");
  banner.hidden = !(model.divergence && divergent === number);
  if (!banner.hidden) banner.textContent = divergenceText(model.divergence);
  updateButtons();
}

function divergenceText(d) {
  const value = (v) => (v === null || v === undefined ? "nothing" : JSON.stringify(v));
  return `First divergence of the graded trace in block ${d.block + 1}: ${d.path} expected ${value(d.expected)}, got ${value(d.got)} (check ${d.check}). ${d.rule || ""}`;
}

function status(text) {
  $("status").textContent = text;
}

function report(error) {
  const alert = $("alert");
  if (error instanceof S.LocalFieldError) {
    S.showFieldErrors([error]);
    alert.textContent = `The ${error.field} setting is ${error.detail}`;
  } else if (error instanceof api.ApiError && error.fieldErrors.length) {
    S.showFieldErrors(error.fieldErrors);
    alert.textContent = `The API refused the settings (${error.status}): see the field${error.fieldErrors.length === 1 ? "" : "s"} marked.`;
  } else {
    alert.textContent = error.message || String(error);
  }
  alert.hidden = false;
}

function clearAlert() {
  $("alert").hidden = true;
  $("alert").textContent = "";
}

// ------------------------------------------------------------------ the URL fragment

function fragment() {
  return S.toFragment(model.settings, {
    blocks: model.blocks.length, proposal: Boolean(model.pending), end: model.end, block: model.selected,
    analysis: analysis.state.shown, cost: analysis.state.cost,
  });
}

/** Record the view as a new history entry (Back returns to the previous one). */
function pushView() {
  const next = `#${fragment()}`;
  if (next !== location.hash) history.pushState(null, "", next);
  renderedFragment = location.hash;
}

/** Rebuild the view that a fragment describes, replaying its blocks through the API. */
async function restore(hash) {
  const { settings, view } = S.fromFragment(hash);
  S.writeForm(settings);
  S.clearFieldErrors();
  clearAlert();
  renderedFragment = hash;
  try {
    newSession(settings);
    if (view.end) {
      await doRun();
    } else {
      for (let i = 0; i < Math.min(view.blocks, MAX_BLOCKS) && !model.done; i += 1) await doStep();
    }
    if (view.proposal && !model.done) await doDraft();
    model.selected = view.block <= model.blocks.length ? view.block : 0;
    await analysis.restore({ shown: view.analysis, cost: view.cost });
    status(model.blocks.length || model.pending ? `Restored from the link: ${model.blocks.length} block${model.blocks.length === 1 ? "" : "s"}${model.pending ? " and a pending proposal" : ""}.` : "New session.");
  } finally {
    render();
  }
}

// ------------------------------------------------------------------ actions

function action(name, task, message) {
  return () => enqueue(async () => {
    if (model.settingsError && name !== "reset") {
      report(model.settingsError);
      return;
    }
    const reason = unavailable()[name];
    if (reason) {
      status(reason);
      return;
    }
    clearAlert();
    S.clearFieldErrors();
    try {
      await task();
    } finally {
      render();
    }
    pushView();
    status(message());
  });
}

const committedText = (block) => block.committed.join(" ");

function wire() {
  $("btn-draft").addEventListener("click", action("draft", doDraft,
    () => `Drafted ${model.pending.tokens.join(" ") || "nothing"}: not committed.`));
  $("btn-verify").addEventListener("click", action("verify", doVerify,
    () => `Verified block ${model.blocks.length}: committed ${committedText(model.blocks.at(-1))}.`));
  $("btn-step").addEventListener("click", action("step", doStep,
    () => `Step: block ${model.blocks.length} committed ${committedText(model.blocks.at(-1))}.`));
  $("btn-run").addEventListener("click", action("run", doRun,
    () => `Run to the end: ${model.blocks.length} blocks, output ${model.state.committed.join(" ")} (${model.done}).`));
  $("btn-reset").addEventListener("click", action("reset", async () => newSession(S.readForm()),
    () => "Reset: new session (empty prefix, position 0, counters 0)."));
  $("btn-download").addEventListener("click", () => enqueue(downloadTrace));

  const form = $("settings");
  form.addEventListener("submit", (event) => event.preventDefault());
  form.addEventListener("change", (event) => {
    if (event.target.id === "target" || event.target.id === "draft") S.showCustomEditors();
    enqueue(settingsChanged);
  });
  window.addEventListener("hashchange", () => {
    if (location.hash !== renderedFragment) enqueue(() => restore(location.hash));
  });
}

/** Any setting changed: a new session, visibly (SPEC section 8), then let the API check it. */
async function settingsChanged() {
  clearAlert();
  S.clearFieldErrors();
  const hadWork = model.blocks.length > 0 || model.pending !== null;
  try {
    newSession(S.readForm());
  } finally {
    render();
    pushView();
  }
  status(`Settings changed: new session (empty prefix, position 0, counters 0)${hadWork ? "; the previous output and counters were cleared" : ""}.`);
  await api.draft(stateText()); // a 422 here names the bad field; nothing is kept
}

async function downloadTrace() {
  clearAlert();
  const { text, data } = await api.runs(S.configText(S.readForm()), { raw: true });
  const link = R.el("a", { href: URL.createObjectURL(new Blob([text], { type: "application/json" })), download: `specdec-trace-seed${data.config.seed}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  status(`Downloaded the trace: ${data.blocks.length} blocks, output ${data.output.join(" ")}.`);
}

function select(number) {
  model.selected = number === model.blocks.length && !model.pending ? 0 : number;
  render();
  pushView();
  status(`Showing block ${number}.`);
}

/** Show a graded trace's reference session with its first divergence marked (grade.js calls this). */
async function showReference(config, divergence) {
  const settings = {
    target: typeof config.target === "string" ? config.target : JSON.stringify(config.target, null, 1),
    draft: typeof config.draft === "string" ? config.draft : JSON.stringify(config.draft, null, 1),
    mode: config.mode, width: String(config.width), seed: String(config.seed), limit: String(config.limit), eos: config.eos ?? "",
  };
  S.writeForm(settings);
  newSession(settings);
  await doRun();
  model.divergence = divergence;
  if (divergence) model.selected = Math.min(divergence.block + 1, model.blocks.length) || 0;
  render();
  pushView();
}

const API_LOG_LENGTH = 50;

/** List each request in the "API calls" log, newest first (at most API_LOG_LENGTH). */
function logCalls() {
  const list = $("api-log");
  api.onCall(({ method, path, status, body }) => {
    const size = body ? ` (${body.length} bytes)` : "";
    list.prepend(R.el("li", { className: status >= 400 || status === 0 ? "failed" : "" },
      R.el("code", {}, `${method} ${path}`), ` \u2192 ${status || "no answer"}${size}`));
    while (list.children.length > API_LOG_LENGTH) list.lastChild.remove();
  });
}

async function main() {
  logCalls();
  wire();
  setupGrading({ enqueue, showReference, status });
  analysis = setupAnalysis({ enqueue, settings: () => S.readForm(), changed: pushView });
  try {
    const { models } = await api.models();
    for (const m of models) model.builtinVocab[m.name] = m.vocab;
  } catch (error) {
    report(error);
  }
  await enqueue(() => restore(location.hash));
  document.body.dataset.ready = "true";
}

main();
