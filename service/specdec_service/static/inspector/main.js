// The inspector's controller: the view model, the actions (Draft, Verify,
// Step, Run, Reset), the settings and the URL fragment. The service keeps no
// session: the page holds the state the API last returned and sends it back
// unchanged (SPEC section 8); the fragment holds the settings and how far the
// session went, and replaying that many blocks reproduces the view.

import * as api from "./api.js";
import * as R from "./render.js";
import * as B from "./block.js";
import * as T from "./tree.js";
import * as S from "./settings.js";
import { setupGrading } from "./grade.js";
import { setupAnalysis } from "./analysis.js";
import { setupExplain } from "./explain.js";
import * as story from "./story.js";

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
  builtinModels: {}, // name -> {vocab, start, next}: the raw rows shown beside processed ones (SPEC 9)
  invalid: null, // the API's 422 on these settings (Draft, Verify, Step and Run wait until they are mended)
  story: 0, // the guided story's step (0: free exploration)
  projector: false,
};

let renderedFragment = null;
let analysis = { invalidate() {}, state: { shown: false, cost: "0" }, async restore() {} };
let explain = { invalidate() {}, state: { shown: null }, async show() {} };
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
  if (JSON.stringify(settings) !== JSON.stringify(model.settings)) {
    analysis.invalidate();
    explain.invalidate();
  }
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
  model.invalid = null;
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
  const { chains, tokens } = model.pending;
  if (T.needsStep(model.pending)) { // a distinct or beam tree is drafted by the service again, the same from the same state (SPEC 12)
    commit(await api.step(stateText()));
    return;
  }
  commit(await api.verify(stateText(), T.isTreeProposal(model.pending) ? { chains } : { tokens }));
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
  if (model.settingsError || model.invalid) {
    const why = "The settings marked in red must be mended first.";
    return { draft: why, verify: why, step: why, run: why };
  }
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

/** A model's raw row (SPEC 1: the start row, or the row after `context`) for `role` target or draft, or null. */
function rawRow(role, context) {
  const setting = model.settings[role];
  let table = model.builtinModels[setting];
  if (setting.startsWith("{")) {
    try {
      table = JSON.parse(setting);
    } catch (error) {
      return null;
    }
  }
  const row = !table ? null : context === null || context === undefined ? table.start : table.next && table.next[context];
  return Array.isArray(row) ? row.map(Number) : null;
}

function render() {
  R.setRawRows(S.samplingText(model.settings) ? { row: rawRow, draftRaw: model.settings.draft_rows === "raw" } : null);
  // a shorter page must not pull the view up under the pointer (a click between mousedown and
  // mouseup would land elsewhere): the page keeps at least the height that shows what is on screen
  document.body.style.minHeight = `${Math.ceil(window.scrollY + window.innerHeight)}px`;
  const words = vocab();
  const number = shownBlockNumber();
  const block = number ? model.blocks[number - 1] : null;
  const pendingShown = !model.selected && model.pending;
  R.proposal({ list: $("proposal-tokens"), table: $("proposal-table"), summary: $("proposal-summary") },
    pendingShown ? model.pending : block && block.proposal, words, Boolean(pendingShown), number, pendingShown ? null : block);
  R.verification({ list: $("verification"), summary: $("verification-summary") }, pendingShown ? null : block, words);
  T.treeRegion({ region: $("tree-region"), box: $("tree"), summary: $("tree-summary") }, pendingShown ? model.pending : block && block.proposal,
    pendingShown ? null : block, pendingShown ? (model.state ? model.state.committed : []) : block ? block.prefix : []);
  if (pendingShown) $("verification-summary").textContent = "Drafted, not verified yet: press Verify to commit.";
  R.correction({ correction: $("correction"), discarded: $("discarded"), bonus: $("bonus") }, pendingShown ? null : block, words);
  const state = model.state || { committed: [], position: 0, counters: ZERO };
  R.output({ list: $("output"), summary: $("output-summary") }, model.blocks, { committed: state.committed, position: state.position, done: model.done }, model.selected);
  const divergent = model.divergence ? model.divergence.block + 1 : 0;
  R.history($("history"), model.blocks, number, divergent, (n) => enqueue(async () => select(n)));
  R.draws($("draws").tBodies[0], $("raw-draws").tBodies[0], model.blocks, model.pending, model.selected);
  R.counters($("counters"), state.counters);
  $("block-caption").textContent = pendingShown ? "Showing the pending proposal (not committed)."
    : number ? `Showing block ${number} of ${model.blocks.length}${model.selected ? " (selected in the history)" : ""}.`
      : "New session: nothing written yet, no draws used, counters 0.";
  const banner = $("divergence");
  banner.hidden = !(model.divergence && divergent === number);
  if (!banner.hidden) banner.textContent = divergenceText(model.divergence);
  updateButtons();
  renderStory();
}

// ------------------------------------------------------------------ the guided story and projector mode

const REGIONS = {
  proposal: "proposal-region", verification: "verification-region", correction: "correction-region", output: "output-region",
  history: "history-region", draws: "draws-region", counters: "counters-region", analysis: "analysis-region", tree: "tree-region",
  explain: "explain-region",
};

/** Whether the step's action has been taken in the view shown (its "after" words apply). */
function stepDone(current) {
  if (!current.action) return false; // the recap: no action, its words are the list of claims
  if (current.action === "Analyse") return analysis.state.shown;
  if (current.explain) return explain.state.shown === current.explain;
  if (current.change) return Object.entries(current.change).every(([name, value]) => model.settings[name] === value);
  if (current.action === "Run") return model.end || Boolean(model.done);
  return model.blocks.length > (current.view.blocks || 0);
}

function settingsWords(settings) {
  const model_ = (v) => (v.startsWith("{") ? "custom" : v);
  const tree = S.treeText(settings);
  const drafts = settings.mode === "tree" ? ` · ${settings.drafts} drafts${tree ? ` · tree ${tree}` : ""}` : "";
  const sampling = S.samplingWords(settings);
  return `Target ${model_(settings.target)} · draft ${model_(settings.draft)} · ${settings.mode}${drafts} · width ${settings.width} · seed ${settings.seed} · limit ${settings.limit}${sampling ? ` · ${sampling}` : ""}`;
}

/** The story card, the page mode buttons and which regions are shown. */
function renderStory() {
  const current = story.step(model.story);
  const body = document.body.classList;
  body.toggle("story-mode", Boolean(current));
  body.toggle("projector", model.projector);
  $("btn-projector").setAttribute("aria-pressed", String(model.projector));
  $("story-region").hidden = !current;
  $("btn-story-start").hidden = Boolean(current);
  $("btn-explore").hidden = !current;
  const shown = current ? current.show : [];
  for (const [name, id] of Object.entries(REGIONS)) $(id).classList.toggle("story-shown", shown.includes(name));
  $("analysis-region").dataset.focus = (current && current.focus) || "";
  arrangeRegions(current);
  const done = Boolean(current) && stepDone(current);
  body.toggle("step-done", done);
  body.toggle("story-closing", Boolean(current && current.recap));
  if (current) storyCard(model.story, current, done);
}

/** The story card of step `n`: where it is, its settings, its words, its action and the step links. */
function storyCard(n, current, done) {
  $("story-count").replaceChildren(`Step ${n} of ${story.STEPS.length}`, R.el("span", { className: "story-section" }, ` \u00b7 ${current.section}`));
  $("story-heading").textContent = current.title;
  $("story-setup").textContent = settingsWords(model.settings);
  const note = done ? costNote(current) : null; // replaceChildren would write a null as the text "null"
  $("story-text").replaceChildren(R.el("p", { className: done ? "story-after" : "story-before", tabindex: "-1" }, done ? current.after : current.before),
    ...(note ? [note] : []), ...(current.recap ? [recap()] : []));
  $("story-action-slot").replaceChildren(...(current.action ? [storyAction(current, done)] : []));
  $("btn-story-prev").setAttribute("aria-disabled", String(n === 1));
  $("btn-story-next").setAttribute("aria-disabled", String(n === story.STEPS.length));
  $("story-steps").replaceChildren(...story.STEPS.map((s, i) => R.el("li", {},
    R.el("a", { href: `#${stepFragment(i + 1)}`, "data-step": String(i + 1), "aria-current": i + 1 === n ? "step" : undefined,
      title: s.title }, `${i + 1}`, R.el("span", { className: "visually-hidden" }, `: ${s.title}`)))));
}

/** The closing recap: each step's claim with a link back to the step (the links work as the step links do). */
function recap() {
  return R.el("ol", { className: "story-recap" }, story.claims().map(({ n, step: s }) =>
    R.el("li", { value: String(n) }, R.el("a", { href: `#${stepFragment(n)}`, "data-step": String(n), title: s.title }, s.claim))));
}

/** When the reader moved the draft-cost slider, the step's words (written for its cost) say so. */
function costNote(current) {
  const wanted = current.view.cost || "0";
  const shown = analysis.state.cost;
  if (current.focus !== "speedup" || Number(shown) === Number(wanted)) return null;
  return R.el("p", { className: "story-note" }, `These words are for draft cost ${wanted}; the figures now show draft cost ${shown}. `
    + `Move the slider back to ${wanted} to compare.`);
}

/**
 * The step's action button, which presses the page's own. Verify and Run act once a step
 * (Previous/Next or the step's link set the step up again); Analyse may be repeated.
 */
function storyAction(current, done) {
  const spent = done && current.action !== "Analyse";
  const button = R.el("button", { type: "button", id: "btn-story-action", className: done ? "secondary" : "",
    "aria-disabled": String(spent), title: spent ? "Done: press Next, or Previous to see it again" : undefined }, current.action);
  button.addEventListener("click", () => {
    if (spent) return;
    if (current.change) enqueue(() => changeSetting(current.change));
    else $(storyButton(current)).click();
  });
  return button;
}

/** The id of the page's button a step's action presses. */
function storyButton(current) {
  if (current.action === "Analyse") return "btn-analyse";
  return current.explain ? "btn-compare" : `btn-${current.action.toLowerCase()}`;
}

/** A step's setting change, as the Settings form would make it: a new session (SPEC section 8). */
async function changeSetting(change) {
  S.writeForm({ ...model.settings, ...change });
  await settingsChanged();
  showVerdict($("output-summary"), `Settings changed (${Object.entries(change).map(([k, v]) => `${k} ${v}`).join(", ")}): new session, nothing committed, counters 0.`);
}

const FREE_ORDER = [];

/**
 * In the story the regions a step looks at stand in two columns (the verdict and its rows left,
 * the output and correction right); in free exploration they go back to their order.
 */
function arrangeRegions(current) {
  const views = $("views");
  if (!FREE_ORDER.length) FREE_ORDER.push(...[...views.children].filter((node) => node.id !== "story-cols"));
  const columns = $("story-cols");
  columns.hidden = !current;
  if (!current) {
    if (FREE_ORDER[0].parentNode !== views) views.append(...FREE_ORDER);
    return;
  }
  columns.classList.toggle("single", !current.show.some((name) => ["proposal", "output", "correction"].includes(name)));
  const a = $("story-col-a");
  const b = $("story-col-b");
  place(a, ["verification", "history", "counters", "analysis", "explain"]);
  place(b, ["proposal", "output", "tree", "correction"]);
  // side by side, the Correction card goes under the verdict when the right column would be the longer by more than it
  const correction = $(REGIONS.correction);
  const sideBySide = a.getBoundingClientRect().top === b.getBoundingClientRect().top;
  const longer = b.getBoundingClientRect().height - a.getBoundingClientRect().height;
  if (sideBySide && correction.offsetHeight && longer > correction.offsetHeight) a.append(correction);
}

/** Put the regions in a column, in order, unless they are there already (moving a node drops the keyboard focus inside it). */
function place(column, names) {
  const nodes = names.map((name) => $(REGIONS[name]));
  if (nodes.some((node, i) => column.children[i] !== node)) column.append(...nodes);
}

/**
 * Whether a fragment's settings and view are those the story step talks about: its settings
 * exactly, and for a Verify step a drafted proposal or a verified block.
 */
function stepFits(current, settings, view) {
  const same = (wanted) => Object.keys(wanted).every((name) => settings[name] === wanted[name]);
  const wanted = { ...S.DEFAULTS, ...current.settings };
  if (current.change && same({ ...wanted, ...current.change })) return true; // the step's change made
  if (!same(wanted)) return false;
  return current.action !== "Verify" || view.proposal || view.blocks > 0;
}

/** The URL fragment of story step `n`, set up as it begins. */
function stepFragment(n) {
  const current = story.step(n);
  return S.toFragment({ ...S.DEFAULTS, ...current.settings },
    { blocks: 0, ...current.view, story: n, projector: model.projector });
}

function goStory(n) {
  if (!story.step(n)) return;
  history.pushState(null, "", `#${stepFragment(n)}`);
  enqueue(async () => {
    await restore(location.hash);
    $("story-heading").focus({ preventScroll: true });
    window.scrollTo({ top: 0, behavior: "auto" });
  });
}

/**
 * Bring an action's verdict into view (no smooth scroll when reduced motion is asked) and
 * announce it. In free exploration the verdict takes the focus; in the story the step's words
 * do, and the story card (its words, its Next) is kept in view: beside the page on a wide screen
 * (it stays at the top), brought back above the verdict on a narrow one.
 */
function showVerdict(element, text) {
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  if (element) {
    if (!element.hasAttribute("tabindex")) element.setAttribute("tabindex", "-1");
    const { top, bottom } = element.getBoundingClientRect();
    const inView = top >= 0 && top < window.innerHeight * 0.6 && bottom <= window.innerHeight;
    if (!inView) element.scrollIntoView({ block: "start", behavior: reduced ? "auto" : "smooth" });
    if (!model.story) element.focus({ preventScroll: true });
  }
  if (model.story && element) { // (no element: the slider keeps the focus, its next arrow key moves it again)
    const card = $("story-region");
    const { top, bottom } = card.getBoundingClientRect();
    if (top < 0 || bottom > window.innerHeight) card.scrollIntoView({ block: "start", behavior: "auto" });
    const words = $("story-text").firstElementChild;
    if (words) words.focus({ preventScroll: true });
  }
  // free exploration announces through its visible status line (role=status); the story hides it
  $("announce").textContent = model.story ? text : "";
}

/**
 * Presentation clickers and keys in the story: ArrowRight and PageDown go to the next step,
 * ArrowLeft and PageUp to the previous one (not while a field, the slider or a sideways-scrolling
 * table has the focus: there the keys keep their own meaning).
 */
function storyKey(event) {
  if (!model.story || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  const move = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 }[event.key];
  const target = event.target instanceof Element ? event.target : null;
  if (!move || (target && target.closest("input, select, textarea, [contenteditable], .table-scroll"))) return;
  event.preventDefault();
  goStory(model.story + move);
}

/** The verdict of a block in words: each proposal's fate, the correction or bonus, what was committed. */
function blockVerdict(block, number) {
  if (B.isBlock(block)) return B.verdict(block, number);
  if (T.isTree(block)) return T.verdict(block, number);
  if (block.sample) return `Block ${number}: the target sampled ${block.sample.token}.`;
  const fates = block.verification.map((v) => `${v.token} ${v.accepted ? "accepted" : "rejected"}${v.ratio === null ? "" : ` (u ${R.fmtDraw(v.draw.u)} ${v.accepted ? "<" : "≥"} p/q ${R.fmt(v.ratio)})`}`);
  const end = block.correction ? `correction ${block.correction.token}` : block.bonus ? `bonus ${block.bonus.token}` : "no bonus";
  return `Block ${number}: ${fates.join(", ")}; ${end}. Committed ${block.committed.join(" ")}.`;
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
    alert.textContent = `The service refused these settings: see the field${error.fieldErrors.length === 1 ? "" : "s"} marked in red.`;
  } else if (error instanceof api.ApiError && error.problem && error.problem.detail) {
    // the service's reason in its words; which route answered what, for those who want it
    alert.replaceChildren(R.el("span", {}, error.problem.detail), " ", R.el("details", { className: "tech" },
      R.el("summary", {}, "Technical details"), R.el("code", {}, `${error.status} from ${error.message.split(":")[0]}`)));
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
    analysis: analysis.state.shown, cost: analysis.state.cost, story: model.story, projector: model.projector,
    explain: Boolean(explain.state.shown),
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
  model.story = story.step(view.story) ? view.story : 0;
  model.projector = view.projector;
  if (model.story && !stepFits(story.step(model.story), settings, view)) {
    // a shortened or edited story link (#story=3, another seed): the step's words would describe
    // another session, so the step is set up as it begins
    history.replaceState(null, "", `#${stepFragment(model.story)}`);
    return restore(location.hash);
  }
  S.writeForm(settings);
  S.clearFieldErrors();
  clearAlert();
  renderedFragment = hash;
  try {
    newSession(settings);
    try {
      if (view.end) {
        await doRun();
      } else {
        for (let i = 0; i < Math.min(view.blocks, MAX_BLOCKS) && !model.done; i += 1) await doStep();
      }
      if (view.proposal && !model.done) await doDraft();
      if (!model.blocks.length && !model.pending) await api.draft(stateText()); // let the API check a pasted link's settings
    } catch (error) {
      if (error instanceof api.ApiError && error.fieldErrors.length) model.invalid = error;
      throw error;
    }
    model.selected = view.block <= model.blocks.length ? view.block : 0;
    await analysis.restore({ shown: view.analysis, cost: view.cost });
    explain.invalidate();
    const figure = model.story ? story.step(model.story).explain : null;
    if (view.explain && figure) await explain.show(figure);
    status(model.blocks.length || model.pending ? `Restored from the link: ${model.blocks.length} block${model.blocks.length === 1 ? "" : "s"}${model.pending ? " and a pending proposal" : ""}.` : "New session.");
  } finally {
    render();
  }
}

// ------------------------------------------------------------------ actions

function action(name, task, message) {
  return () => enqueue(async () => {
    if ((model.settingsError || model.invalid) && name !== "reset") {
      report(model.settingsError || model.invalid);
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
    const text = message();
    status(text);
    showVerdict(verdictElement(name), text);
  });
}

/** Where the verdict of an action is shown. */
function verdictElement(name) {
  if (name === "draft") return $("proposal-summary");
  if (name === "verify" || name === "step") return $("verification-summary");
  return $("output-summary");
}

const committedText = (block) => block.committed.join(" ");

function wire() {
  $("btn-draft").addEventListener("click", action("draft", doDraft,
    () => `Drafted ${T.isTreeProposal(model.pending) ? T.proposalWords(model.pending)
      : model.pending.tokens.join(" ") || "nothing"}: not committed.`));
  $("btn-verify").addEventListener("click", action("verify", doVerify,
    () => `Verified. ${blockVerdict(model.blocks.at(-1), model.blocks.length)}`));
  $("btn-step").addEventListener("click", action("step", doStep,
    () => `Step. ${blockVerdict(model.blocks.at(-1), model.blocks.length)}`));
  $("btn-run").addEventListener("click", action("run", doRun,
    () => `Run to the end: ${model.blocks.length} blocks, output ${model.state.committed.join(" ")} (${model.done}).`));
  $("btn-reset").addEventListener("click", action("reset", async () => newSession(S.readForm()),
    () => "Reset: new session (nothing written, no draws used, counters 0)."));
  $("btn-download").addEventListener("click", () => enqueue(downloadTrace));

  const form = $("settings");
  form.addEventListener("submit", (event) => event.preventDefault());
  form.addEventListener("change", (event) => {
    if (event.target.id === "target" || event.target.id === "draft") S.showCustomEditors();
    if (["mode", "tree_shape", "tree_verify"].includes(event.target.id)) S.describeMode();
    enqueue(settingsChanged);
  });
  $("btn-story-start").addEventListener("click", () => goStory(1));
  // a step's link goes to the step as Next does (the focus on its heading: the link pressed is redrawn);
  // with a modifier key it opens where the browser opens links
  const stepLink = (event) => {
    const link = event.target.closest("a[data-step]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    goStory(Number(link.dataset.step));
  };
  $("story-steps").addEventListener("click", stepLink);
  $("story-text").addEventListener("click", stepLink); // the recap's links too
  $("btn-story-prev").addEventListener("click", () => goStory(model.story - 1));
  $("btn-story-next").addEventListener("click", () => goStory(model.story + 1));
  document.addEventListener("keydown", storyKey);
  $("btn-explore").addEventListener("click", () => enqueue(async () => {
    model.story = 0;
    render();
    pushView();
    status("Free exploration: every setting and button, starting from the story's view.");
    const heading = $("settings-heading"); // the pressed button is hidden now: the focus goes to what it opened
    heading.setAttribute("tabindex", "-1");
    heading.scrollIntoView({ block: "start" });
    heading.focus({ preventScroll: true });
  }));
  $("btn-projector").addEventListener("click", () => enqueue(async () => {
    model.projector = !model.projector;
    render();
    pushView();
  }));
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
  status(`Settings changed: new session (nothing written, no draws used, counters 0)${hadWork ? "; the previous output and counters were cleared" : ""}.`);
  try {
    await api.draft(stateText()); // a 422 here names the bad field; nothing is kept
  } catch (error) {
    if (error instanceof api.ApiError && error.fieldErrors.length) model.invalid = error;
    throw error;
  } finally {
    updateButtons();
  }
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
    drafts: String(config.drafts ?? S.DEFAULTS.drafts),
    ...S.samplingSettings(config.sampling),
    ...S.treeSettings(config.tree),
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
  analysis = setupAnalysis({ enqueue, settings: () => S.readForm(), changed: () => { pushView(); renderStory(); }, verdict: showVerdict });
  explain = setupExplain({ enqueue, settings: () => model.settings, vocab, changed: () => { pushView(); renderStory(); }, verdict: showVerdict });
  explain.kind = () => (story.step(model.story) ? story.step(model.story).explain || null : null);
  try {
    const { models } = await api.models();
    for (const m of models) {
      model.builtinVocab[m.name] = m.vocab;
      model.builtinModels[m.name] = m;
    }
  } catch (error) {
    report(error);
  }
  await enqueue(() => restore(location.hash));
  document.body.dataset.ready = "true";
}

main();
