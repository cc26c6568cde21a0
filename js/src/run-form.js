// @ts-check
// The New run form: a field per key of the graph's input schema (its type, its default, never
// null by default), a JSON mode, and the inputs this widget started runs with before.

import { hyperscript } from "./helpers.js";

/** @typedef {import("./index.js").View} View */
/**
 * One field as Python's `input_form` request answers it.
 * @typedef {{ key: string, type: string, kind: string, default: any, has_default: boolean }} Field
 */

/** Inputs kept per widget (its model), newest first. */
export const HISTORY_MAX = 10;
/** @type {WeakMap<object, string[]>} */
const histories = new WeakMap();

/** @param {View} view @returns {string[]} */
export function runHistory(view) {
  let list = histories.get(view.model);
  if (!list) histories.set(view.model, (list = []));
  return list;
}

/**
 * Remember `text` as the newest input (once; the oldest falls off past HISTORY_MAX).
 * @param {View} view @param {string} text
 */
export function rememberInput(view, text) {
  const list = runHistory(view);
  const at = list.indexOf(text);
  if (at >= 0) list.splice(at, 1);
  list.unshift(text);
  list.length = Math.min(list.length, HISTORY_MAX);
}

/**
 * The text a field starts with: its default as the control shows it.
 * @param {Field} field @returns {string}
 */
export function fieldText(field) {
  const value = field.default;
  if (field.kind === "string") return typeof value === "string" ? value : JSON.stringify(value);
  if (field.kind === "integer" || field.kind === "number" || field.kind === "boolean") return String(value);
  if (field.kind === "json" && value === "") return "";
  return JSON.stringify(value, null, 2);
}

/**
 * The value a field's text stands for, or an Error naming the key.
 * @param {Field} field @param {string} text @returns {any}
 */
export function fieldValue(field, text) {
  if (field.kind === "string") return text;
  if (field.kind === "boolean") return text === "true";
  if (field.kind === "integer" || field.kind === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n) || (field.kind === "integer" && !Number.isInteger(n)))
      return new Error(`'${field.key}' needs ${field.kind === "integer" ? "a whole number" : "a number"}`);
    return n;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    return new Error(`'${field.key}' is not valid JSON (${/** @type {Error} */ (error).message})`);
  }
}

/**
 * The input the form stands for: every included field's value (an Error for the first bad one).
 * @param {Field[]} fields @param {Map<string, {use: boolean, text: string}>} entries
 * @returns {Record<string, any> | Error}
 */
export function formInput(fields, entries) {
  /** @type {Record<string, any>} */
  const input = {};
  for (const field of fields) {
    const entry = entries.get(field.key);
    if (!entry || !entry.use) continue;
    const value = fieldValue(field, entry.text);
    if (value instanceof Error) return value;
    input[field.key] = value;
  }
  return input;
}

/**
 * Which fields start included: those with a default of the schema's own. The others are left
 * out until the user types in them, so an untouched form never sends a made-up value.
 * @param {Field[]} fields @returns {Map<string, {use: boolean, text: string}>}
 */
export function initialEntries(fields) {
  return new Map(fields.map((f) => [f.key, { use: f.has_default, text: fieldText(f) }]));
}

/**
 * Open (or close) the form. Its fields come from Python (`input_form`); until they arrive, and
 * if the request fails, the form is the JSON box alone, starting as `{}`.
 * @param {View} view
 */
export function toggleRunForm(view) {
  const form = view.parts.runForm;
  if (!form.hidden) {
    form.hidden = true;
    return;
  }
  drawForm(view, [], "{}");
  form.hidden = false;
  view.requests.request("input_form").then(
    (answer) => {
      if (!form.hidden && answer && Array.isArray(answer.fields)) drawForm(view, answer.fields, null);
    },
    () => {}, // the JSON box stays: a run can be started without the fields
  );
}

/**
 * @param {View} view @param {Field[]} fields @param {string | null} jsonText the JSON mode's
 * text, or null for the fields
 */
function drawForm(view, fields, jsonText) {
  const h = hyperscript(view.doc);
  const form = view.parts.runForm;
  const entries = initialEntries(fields);
  const rows = fields.map((field) => fieldRow(h, field, entries));
  const grid = h("div", { class: "dd-run-fields", role: "group", "aria-label": "the run's input" }, ...rows);
  const json = /** @type {HTMLTextAreaElement} */ (
    h("textarea", {
      class: "dd-editor dd-run-input",
      spellcheck: "false",
      rows: "6",
      "aria-label": "the run's input as a JSON object",
    })
  );
  const jsonMode = jsonText !== null || fields.length === 0;
  json.value = jsonText !== null ? jsonText : "{}";
  json.hidden = !jsonMode;
  grid.hidden = jsonMode;
  const slot = h("span", { class: "dd-inline-error dd-run-error", role: "alert", hidden: true });
  const say = (/** @type {string} */ message) => {
    slot.textContent = message;
    /** @type {HTMLElement} */ (slot).hidden = !message;
  };
  const modeButton = h(
    "button",
    { class: "dd-button dd-small dd-run-mode", type: "button", hidden: fields.length === 0 },
    jsonMode ? "Fields" : "JSON",
  );
  modeButton.addEventListener("click", () => {
    if (grid.hidden) {
      // JSON → fields: the keys the object names are included, with its values.
      let parsed;
      try {
        parsed = JSON.parse(json.value);
      } catch (error) {
        return say(`The input is not valid JSON (${/** @type {Error} */ (error).message})`);
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
        return say("The input is a JSON object of the state's keys");
      for (const field of fields) {
        const has = Object.prototype.hasOwnProperty.call(parsed, field.key);
        const text = has ? fieldText({ ...field, default: parsed[field.key] }) : fieldText(field);
        entries.set(field.key, { use: has, text });
      }
      rows.forEach((row, i) => syncRow(row, entries.get(fields[i].key)));
    } else {
      const input = formInput(fields, entries);
      if (input instanceof Error) return say(input.message);
      json.value = JSON.stringify(input, null, 2);
    }
    say("");
    grid.hidden = !grid.hidden;
    json.hidden = !json.hidden;
    modeButton.textContent = grid.hidden ? "Fields" : "JSON";
  });

  const history = runHistory(view);
  const picker = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      { class: "dd-run-history", "aria-label": "an input used before", hidden: history.length === 0 },
      h("option", { value: "" }, "Previous inputs…"),
      ...history.map((text, i) => h("option", { value: String(i) }, text.replace(/\s+/g, " "))),
    )
  );
  picker.addEventListener("change", () => {
    const text = history[Number(picker.value)];
    if (text === undefined || picker.value === "") return;
    json.value = text;
    grid.hidden = true;
    json.hidden = false;
    modeButton.textContent = "Fields";
    picker.value = "";
  });

  const start = h("button", { class: "dd-button dd-primary", type: "button" }, "Start");
  start.addEventListener("click", () => {
    let text = json.value;
    if (!grid.hidden) {
      const input = formInput(fields, entries);
      if (input instanceof Error) return say(input.message);
      text = JSON.stringify(input);
    }
    view.requests.request("run", { text }).then(
      () => {
        say("");
        rememberInput(view, text);
        form.hidden = true;
      },
      (error) => say(String(error && error.message ? error.message : error)),
    );
  });

  form.replaceChildren(
    h("div", { class: "dd-muted" }, "Input of a new run of this thread, from its latest checkpoint:"),
    h("div", { class: "dd-run-tools" }, modeButton, picker),
    grid,
    json,
    start,
    slot,
  );
}

/**
 * One labelled control, with the checkbox that includes it in the input (ticked as soon as
 * the user edits the control).
 * @param {ReturnType<typeof hyperscript>} h @param {Field} field
 * @param {Map<string, {use: boolean, text: string}>} entries
 */
function fieldRow(h, field, entries) {
  const entry = entries.get(field.key) || { use: false, text: "" };
  const use = /** @type {HTMLInputElement} */ (
    h("input", { type: "checkbox", class: "dd-run-use", "aria-label": `include ${field.key}` })
  );
  use.checked = entry.use;
  /** @type {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} */
  let control;
  if (field.kind === "boolean") {
    control = /** @type {HTMLSelectElement} */ (
      h("select", {}, h("option", { value: "false" }, "false"), h("option", { value: "true" }, "true"))
    );
  } else if (field.kind === "string" || field.kind === "integer" || field.kind === "number") {
    control = /** @type {HTMLInputElement} */ (
      h("input", { type: field.kind === "string" ? "text" : "number", spellcheck: "false" })
    );
  } else {
    control = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { class: "dd-editor", spellcheck: "false", rows: "2" })
    );
  }
  control.classList.add("dd-run-value");
  control.setAttribute("aria-label", `${field.key} (${field.type})`);
  control.value = entry.text;
  const onEdit = () => {
    const now = entries.get(field.key) || entry;
    entries.set(field.key, { use: true, text: control.value });
    if (!now.use) use.checked = true;
  };
  control.addEventListener("input", onEdit);
  control.addEventListener("change", onEdit);
  use.addEventListener("change", () => {
    const now = entries.get(field.key) || entry;
    entries.set(field.key, { use: use.checked, text: now.text });
  });
  return h(
    "label",
    { class: "dd-run-field", "data-key": field.key, title: `${field.key}: ${field.type}` },
    use,
    h("span", { class: "dd-run-key" }, field.key),
    h("span", { class: "dd-run-type dd-muted" }, field.type + (field.has_default ? " · default" : "")),
    control,
  );
}

/** @param {Element} row @param {{use: boolean, text: string} | undefined} entry */
function syncRow(row, entry) {
  if (!entry) return;
  const use = /** @type {HTMLInputElement | null} */ (row.querySelector(".dd-run-use"));
  const control = /** @type {HTMLInputElement | null} */ (row.querySelector(".dd-run-value"));
  if (use) use.checked = entry.use;
  if (control) control.value = entry.text;
}
