// The session settings (SPEC section 8) in three forms: the form fields, the
// config JSON sent to the API, and the URL fragment that makes a view shareable.
// The page never validates a setting itself: the API's problem documents are
// shown next to the field they name.

/** Settings of a new page: the explainer's first experiment (toy target, aligned draft, seed 0). */
export const DEFAULTS = Object.freeze({
  target: "toy", draft: "aligned", mode: "speculative", width: "3", seed: "0", limit: "8", eos: "", drafts: "1",
  temperature: "", top_k: "", top_p: "", min_p: "", draft_rows: "",
});

/** A custom model to start editing from: the toy target's table (SPEC section 1). */
export const CUSTOM_EXAMPLE = `{
  "vocab": ["A", "B", "C"],
  "start": [0.5, 0.3, 0.2],
  "next": {"A": [0.2, 0.6, 0.2], "B": [0.55, 0.15, 0.3], "C": [0.25, 0.25, 0.5]}
}`;

const SAMPLING = { temperature: "temperature", top_k: "top_k", top_p: "top_p", min_p: "min_p", draft_rows: "draft" };
/** The sampling fields (SPEC 9) and their keys in the config's `sampling` object; empty means not set, so unsent. */
const FIELDS = ["target", "draft", "mode", "width", "seed", "limit", "eos", "drafts", ...Object.keys(SAMPLING)];
const TREE_ONLY = ["drafts"]; // read by mode tree alone (SPEC 11): sent and kept in the URL only there
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

/** Say the selected mode in plain words under the Mode field; show the Drafts field in mode tree alone. */
export function describeMode() {
  $("mode-help").textContent = MODE_WORDS[$("mode").value] || "";
  $("drafts-field").hidden = $("mode").value !== "tree";
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
