// The session settings (SPEC section 8) in three forms: the form fields, the
// config JSON sent to the API, and the URL fragment that makes a view shareable.
// The page never validates a setting itself: the API's problem documents are
// shown next to the field they name.

/** Settings of a new page: the explainer's first experiment (toy target, aligned draft, seed 0). */
export const DEFAULTS = Object.freeze({
  target: "toy", draft: "aligned", mode: "speculative", width: "3", seed: "0", limit: "8", eos: "", drafts: "1",
  temperature: "", top_k: "", top_p: "", min_p: "", draft_rows: "",
  tree_shape: "chains", tree_verify: "residual", branching: "", threshold_single: "", threshold_acc: "",
});

/** A custom model to start editing from: the toy target's table (SPEC section 1). */
export const CUSTOM_EXAMPLE = `{
  "vocab": ["A", "B", "C"],
  "start": [0.5, 0.3, 0.2],
  "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}
}`;

const SAMPLING = { temperature: "temperature", top_k: "top_k", top_p: "top_p", min_p: "min_p", draft_rows: "draft" };
/** The sampling fields (SPEC 9) and their keys in the config's `sampling` object; empty means not set, so unsent. */
/** The `tree` setting's fields (SPEC 12) and their keys in the config's `tree` object. */
const TREE = { tree_shape: "shape", tree_verify: "verify", branching: "branching", threshold_single: "threshold_single", threshold_acc: "threshold_acc" };
const FIELDS = ["target", "draft", "mode", "width", "seed", "limit", "eos", "drafts", ...Object.keys(SAMPLING), ...Object.keys(TREE)];
const TREE_ONLY = ["drafts", ...Object.keys(TREE)]; // read by mode tree alone (SPEC 11, 12): sent and kept in the URL only there
const MODEL_FIELDS = ["target", "draft"];
const BUILTIN = { target: ["toy"], draft: ["aligned", "biased"] };
const $ = (id) => document.getElementById(id);

/**
 * The settings in the form: {target, draft, mode, width, seed, limit, eos, drafts}, each a string;
 * a custom model is its JSON text (it starts with "{"). Outside mode tree `drafts` is its default
 * (the field is hidden there, and no other mode reads it).
 */
export function readForm() {
  const settings = {};
  for (const name of FIELDS) {
    settings[name] = $(name).value;
  }
  if (settings.mode !== "tree") for (const name of TREE_ONLY) settings[name] = DEFAULTS[name];
  for (const name of Object.keys(TREE)) if (!treeFieldShown(name, settings)) settings[name] = DEFAULTS[name];
  for (const name of MODEL_FIELDS) {
    if (settings[name] === "custom") settings[name] = $(`${name}-json`).value.trim();
  }
  return settings;
}

/** Put settings into the form (built-in names select themselves, JSON goes to the editor). */
export function writeForm(settings) {
  for (const name of FIELDS) {
    const value = settings[name] ?? DEFAULTS[name];
    if (MODEL_FIELDS.includes(name) && !BUILTIN[name].includes(value)) {
      $(name).value = "custom";
      $(`${name}-json`).value = value;
    } else {
      $(name).value = value;
    }
  }
  showCustomEditors();
  describeMode();
  if (samplingText(settings)) $("sampling-details").open = true; // a set sampling parameter is never hidden
}

/** Each mode in plain words (shown under the Mode field; SPEC sections 4, 5, 10 and 11). */
export const MODE_WORDS = {
  speculative: "Speculative sampling: the target checks the proposals one at a time, keeps each with probability "
    + "min(1, p/q), and replaces the first rejected one by a token drawn from the leftover probability.",
  greedy: "Greedy: a proposal is kept while it is the target's most likely token; the first other one is replaced by "
    + "that token. No randomness in the check.",
  autoregressive: "The target alone: nothing is drafted, one target pass samples one token.",
  block: "Block verification: the proposals are judged together. Each gets a threshold and a draw, and the last draw "
    + "below its threshold decides how many are kept, so a proposal can be kept although its own draw fails. Same "
    + "output distribution as speculative sampling, never fewer proposals kept on average.",
  tree: "Several drafts: the draft proposes several chains at once, drawn as a tree. Depth by depth their tokens are "
    + "tested in turn against what is left of the target's probability after each rejection, so a second chain gets a "
    + "second chance where the first fails. Same output distribution as speculative sampling.",
};

/** The tree's shapes and verifiers in plain words (shown under their fields; SPEC 12.1, 12.3, 12.4). */
export const TREE_WORDS = {
  chains: "Chains: each chain is drafted on its own, so two chains can propose the same token.",
  distinct: "Distinct siblings: a node's children are drawn without replacement; each is drawn from what is left of "
    + "q once the earlier siblings are taken out (its proposal law s_j).",
  beam: "Beam: the draft's most probable tokens and paths (EAGLE-2, SGLang); nothing is drawn.",
  residual: "Residual: each child is tested against what the earlier rejections left of the target's row, "
    + "using its proposal law. Lossless.",
  target_only: "Target only: one draw per node and the target's row alone (the draft's probabilities are never read), "
    + "as SGLang's trees. Lossless with both thresholds 1, but it accepts less.",
};

/**
 * Whether a `tree` field applies to these settings (mode tree; branching with shape distinct alone,
 * the thresholds with verify target_only alone, SPEC 12): a field that does not apply is hidden and not sent.
 */
function treeFieldShown(name, settings) {
  if (settings.mode !== "tree") return false;
  if (name === "branching") return settings.tree_shape === "distinct";
  if (name.startsWith("threshold_")) return settings.tree_verify === "target_only";
  return true;
}

/** Say the selected mode in plain words under the Mode field; show the tree fields (SPEC 11, 12) where they apply. */
export function describeMode() {
  $("mode-help").textContent = MODE_WORDS[$("mode").value] || "";
  $("drafts-field").hidden = $("mode").value !== "tree";
  const shown = { mode: $("mode").value, tree_shape: $("tree_shape").value, tree_verify: $("tree_verify").value };
  $("tree-fields").hidden = shown.mode !== "tree";
  $("branching-field").hidden = !treeFieldShown("branching", shown);
  $("thresholds-field").hidden = !treeFieldShown("threshold_acc", shown);
  $("tree-help").textContent = `${TREE_WORDS[shown.tree_shape] || ""} ${TREE_WORDS[shown.tree_verify] || ""}`.trim();
}

/** Show the JSON editor of each model set to custom (filled with an example when empty). */
export function showCustomEditors() {
  for (const name of MODEL_FIELDS) {
    const custom = $(name).value === "custom";
    $(`${name}-custom-field`).hidden = !custom;
    if (custom && !$(`${name}-json`).value.trim()) $(`${name}-json`).value = CUSTOM_EXAMPLE;
  }
}

function numberOrText(text) {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  return /^-?\d+$/.test(trimmed) ? trimmed : JSON.stringify(trimmed);
}

/** A decimal as written (the service reads it exactly, SPEC 9), or the text as a string for the API's own error. */
function decimalOrText(text) {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  return /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed) ? trimmed : JSON.stringify(trimmed);
}

/** The `sampling` object's JSON text of these settings (SPEC 9), or null when no sampling field is set. */
export function samplingText(settings) {
  const parts = [];
  for (const [name, key] of Object.entries(SAMPLING)) {
    const text = String(settings[name] ?? "");
    const value = name === "draft_rows" ? (text === "" ? null : JSON.stringify(text)) : decimalOrText(text);
    if (value !== null) parts.push(`${JSON.stringify(key)}: ${value}`);
  }
  return parts.length ? `{${parts.join(", ")}}` : null;
}

/** A branching list as written ("2, 1" -> [2, 1]), or the text as a string for the API's own error. */
function branchingOrText(text) {
  const trimmed = text.trim().replace(/^\[|\]$/g, "");
  if (trimmed === "") return null;
  return /^\d+(\s*,\s*\d+)*$/.test(trimmed) ? `[${trimmed.split(",").map((n) => n.trim()).join(", ")}]` : JSON.stringify(text.trim());
}

/**
 * The `tree` object's JSON text of these settings (SPEC 12), or null when it is SPEC 11's default
 * (chains, residual, nothing else set): then no `tree` key is sent, and the trace is byte-identical to one without it.
 */
export function treeText(settings) {
  if (settings.mode !== "tree") return null;
  const parts = [];
  const shape = settings.tree_shape || DEFAULTS.tree_shape;
  const verify = settings.tree_verify || DEFAULTS.tree_verify;
  if (shape !== DEFAULTS.tree_shape) parts.push(`"shape": ${JSON.stringify(shape)}`);
  if (verify !== DEFAULTS.tree_verify) parts.push(`"verify": ${JSON.stringify(verify)}`);
  const branching = branchingOrText(String(settings.branching ?? ""));
  if (branching !== null) parts.push(`"branching": ${branching}`);
  for (const name of ["threshold_single", "threshold_acc"]) {
    const value = decimalOrText(String(settings[name] ?? ""));
    if (value !== null) parts.push(`${JSON.stringify(name)}: ${value}`);
  }
  return parts.length ? `{${parts.join(", ")}}` : null;
}

/** The form's tree settings of a config's `tree` object (a graded trace's), unset ones their defaults. */
export function treeSettings(tree) {
  const settings = {};
  for (const [name, key] of Object.entries(TREE)) {
    const value = tree ? tree[key] : undefined;
    settings[name] = value === undefined ? DEFAULTS[name] : Array.isArray(value) ? value.join(", ") : String(value);
  }
  return settings;
}

/** The form's sampling settings of a config's `sampling` object (a graded trace's), unset ones empty. */
export function samplingSettings(sampling) {
  const settings = {};
  for (const [name, key] of Object.entries(SAMPLING)) settings[name] = sampling && sampling[key] !== undefined ? String(sampling[key]) : "";
  return settings;
}

/** The sampling settings in words ("T 0.5 · top-k 2 · draft rows raw"), or "" when none is set. */
export function samplingWords(settings) {
  const words = { temperature: "T", top_k: "top-k", top_p: "top-p", min_p: "min-p", draft_rows: "draft rows" };
  return Object.keys(SAMPLING).filter((name) => String(settings[name] ?? "").trim() !== "")
    .map((name) => `${words[name]} ${String(settings[name]).trim()}`).join(" \u00b7 ");
}

/**
 * The config as JSON text for the API. A custom model is embedded as the text the user wrote
 * (so its decimals reach the service unrounded); a model that is not JSON throws a
 * LocalFieldError. Numbers are sent as written; anything else is sent as a string, so that
 * the API's own error ("Not a valid integer.") is the one shown.
 */
export function configText(settings) {
  const parts = [];
  for (const name of MODEL_FIELDS) {
    const value = settings[name];
    if (value.startsWith("{") || value.startsWith("[")) {
      try {
        JSON.parse(value);
      } catch (error) {
        throw new LocalFieldError(name, `not JSON: ${jsonErrorWords(error.message, value)}`);
      }
      parts.push(`${JSON.stringify(name)}: ${value}`);
    } else {
      parts.push(`${JSON.stringify(name)}: ${JSON.stringify(value)}`);
    }
  }
  parts.push(`"mode": ${JSON.stringify(settings.mode)}`);
  for (const name of ["width", "seed", "limit"]) {
    const value = numberOrText(settings[name]);
    if (value !== null || name === "seed") parts.push(`${JSON.stringify(name)}: ${value}`);
  }
  if (settings.mode === "tree") {
    const value = numberOrText(settings.drafts ?? DEFAULTS.drafts);
    if (value !== null) parts.push(`"drafts": ${value}`);
  }
  const tree = treeText(settings);
  if (tree) parts.push(`"tree": ${tree}`);
  parts.push(`"eos": ${settings.eos === "" ? "null" : JSON.stringify(settings.eos)}`);
  const sampling = samplingText(settings);
  if (sampling) parts.push(`"sampling": ${sampling}`);
  return `{${parts.join(", ")}}`;
}

/**
 * The browser's JSON error in the page's words: where it is as a line and a column of the
 * editor ("position" on this page means a token's place, never a character offset).
 */
export function jsonErrorWords(message, text) {
  const found = /\s*(?:in JSON )?at position (\d+)(?:\s*\(line \d+ column \d+\))?/.exec(message);
  if (!found) return message;
  const before = text.slice(0, Number(found[1])).split("\n");
  return `${message.slice(0, found.index)}${message.slice(found.index + found[0].length)} at line ${before.length}, column ${before.at(-1).length + 1}`;
}

/** A setting the page could not even send (a custom model that is not JSON). */
export class LocalFieldError extends Error {
  constructor(field, detail) {
    super(detail);
    this.field = field;
    this.detail = detail;
  }
}

// ------------------------------------------------------------------ field errors

/** The form field a JSON Pointer of a 422 names ("#/config/target/start" -> "target"). */
export function fieldOfPointer(pointer) {
  const parts = String(pointer || "").replace(/^#\//, "").split("/");
  while (parts.length && (parts[0] === "state" || parts[0] === "config" || parts[0] === "")) {
    if (parts[0] === "config" && parts[1] === "sampling") {
      const name = Object.keys(SAMPLING).find((field) => SAMPLING[field] === parts[2]);
      return name || "config";
    }
    if (parts[0] === "config" && parts[1] === "tree") {
      return Object.keys(TREE).find((field) => TREE[field] === parts[2]) || "tree_shape";
    }
    if (parts[0] === "config") return FIELDS.includes(parts[1]) ? parts[1] : "config";
    parts.shift();
  }
  return "config";
}

/** Remove every field error from the form. */
export function clearFieldErrors() {
  for (const name of [...FIELDS, "config"]) {
    $(`${name}-error`).replaceChildren();
    const input = $(name);
    if (input) input.removeAttribute("aria-invalid");
    const editor = $(`${name}-json`);
    if (editor) editor.removeAttribute("aria-invalid");
  }
}

/**
 * Show errors next to their fields: [{pointer, detail}] from a problem document, or a
 * LocalFieldError. Returns the number shown.
 */
export function showFieldErrors(errors) {
  clearFieldErrors();
  const marked = new Set();
  for (const error of errors) {
    const field = error.field || fieldOfPointer(error.pointer);
    if (field in SAMPLING) $("sampling-details").open = true; // the field in error is never folded away
    const slot = $(`${field}-error`);
    const line = document.createElement("span");
    line.className = "error-line";
    line.textContent = error.detail; // plain words; where in the request it was, in the technical details
    slot.append(line);
    if (error.pointer) technical(slot).append(Object.assign(document.createElement("code"), { textContent: `${error.pointer}: ${error.detail}` }));
    const editor = $(`${field}-json`);
    const custom = editor && !$(`${field}-custom-field`).hidden;
    const input = custom ? editor : $(field);
    if (input) input.setAttribute("aria-invalid", "true");
    if (custom && error.pointer && !marked.has(field)) {
      marked.add(field);
      markRow(field, editor, error.pointer);
    }
  }
  return errors.length;
}

/** The slot's "Technical details" (the JSON pointers of its errors), made on first use. */
function technical(slot) {
  let box = slot.querySelector("details.tech .pointers");
  if (!box) {
    const details = document.createElement("details");
    details.className = "tech";
    const summary = document.createElement("summary");
    summary.textContent = "Technical details";
    box = document.createElement("span");
    box.className = "pointers";
    details.append(summary, box);
    slot.append(details);
  }
  return box;
}

/**
 * The [start, end) range of the row a pointer names in a model's JSON text
 * ("#/config/target/next/B/1" -> the array after "B": in "next"), or null.
 */
export function rowRange(text, pointer) {
  const parts = String(pointer).replace(/^#\//, "").split("/").map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"));
  const at = parts.indexOf("config");
  const path = parts.slice(at + 2); // after config/<field>
  let from = 0;
  const keys = path[0] === "next" ? ["next", path[1]] : path.slice(0, 1);
  for (const key of keys) {
    if (key === undefined) break;
    const found = text.slice(from).search(new RegExp(`${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*:`));
    if (found < 0) return null;
    from += found;
  }
  if (!keys.length || keys[0] === undefined) return null;
  const open = text.indexOf("[", from);
  const close = open < 0 ? -1 : text.indexOf("]", open);
  if (open < 0 || close < 0) return null;
  return [from, close + 1];
}

/** Select and scroll to the bad row of a model editor, and quote it (with its line) under the field. */
function markRow(field, editor, pointer) {
  const text = editor.value;
  const range = rowRange(text, pointer);
  if (!range) return;
  const number = text.slice(0, range[0]).split("\n").length;
  const quote = document.createElement("span");
  quote.className = "bad-row";
  const code = document.createElement("code");
  code.textContent = text.slice(range[0], range[1]);
  quote.append(`line ${number}: `, code);
  const slot = $(`${field}-error`);
  slot.insertBefore(quote, slot.querySelector("details")); // before the technical details (or at the end)
  editor.setSelectionRange(range[0], range[1]);
  const lineHeight = Number.parseFloat(getComputedStyle(editor).lineHeight) || 18;
  editor.scrollTop = Math.max(0, (number - 2) * lineHeight);
  editor.scrollIntoView({ block: "nearest" });
}

// ------------------------------------------------------------------ the URL fragment

/**
 * The view as a URL fragment (without "#"): the settings plus where the session is:
 * blocks (blocks committed), proposal=1 (a Draft is pending), end=1 (taken by Run),
 * block (the block selected in the history, 1-based), analysis=1 (the Analysis is shown)
 * cost (its draft cost, when not 0), story (the guided story's step, 1-based), projector=1 and
 * explain=1 (the story step's figure, explain.js, is shown).
 */
export function toFragment(settings, view) {
  const params = new URLSearchParams();
  for (const name of FIELDS) {
    if (TREE_ONLY.includes(name) && settings.mode !== "tree") continue;
    if (name in TREE && String(settings[name] ?? DEFAULTS[name]) === DEFAULTS[name]) continue; // SPEC 11's tree: older links unchanged
    if (name in SAMPLING && String(settings[name] ?? "") === "") continue; // unset: no key, so older links stay as they were
    params.set(name, settings[name] ?? DEFAULTS[name]);
  }
  params.set("blocks", String(view.blocks));
  if (view.proposal) params.set("proposal", "1");
  if (view.end) params.set("end", "1");
  if (view.block) params.set("block", String(view.block));
  if (view.analysis) params.set("analysis", "1");
  if (view.cost && view.cost !== "0") params.set("cost", view.cost);
  if (view.story) params.set("story", String(view.story));
  if (view.projector) params.set("projector", "1");
  if (view.explain) params.set("explain", "1");
  return params.toString();
}

/** Parse a fragment (with or without "#"): {settings, view}; missing settings take DEFAULTS. */
export function fromFragment(fragment) {
  const params = new URLSearchParams(fragment.replace(/^#/, ""));
  const settings = {};
  for (const name of FIELDS) settings[name] = params.has(name) ? params.get(name) : DEFAULTS[name];
  if (settings.mode !== "tree") for (const name of TREE_ONLY) settings[name] = DEFAULTS[name];
  const count = (name) => {
    const value = Number.parseInt(params.get(name) || "0", 10);
    return Number.isFinite(value) && value > 0 ? value : 0;
  };
  return {
    settings,
    view: {
      blocks: count("blocks"), proposal: params.get("proposal") === "1", end: params.get("end") === "1", block: count("block"),
      analysis: params.get("analysis") === "1", cost: params.get("cost") || "0",
      story: count("story"), projector: params.get("projector") === "1", explain: params.get("explain") === "1",
    },
  };
}
