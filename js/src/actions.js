// @ts-check
// Actions: fork, rerun, resume, stop, copy (one delegated click handler on the root)

import { placeRings } from "./dag.js";
import { hyperscript, inNamespace, isReadonly, later } from "./helpers.js";
import { drawJson } from "./json-tree.js";
import { toggleRunForm } from "./run-form.js";
import { showPages } from "./value-pages.js";
import { listThreads } from "./thread-list.js";
import { selectInSubgraph, upFromSubgraph } from "./select.js";
import { clearRequestError, copyCode, showRequestError } from "./status.js";
import { toggleSubgraph } from "./subgraph.js";
import { WATCH_EVERY_MS } from "./types.js";

/** @typedef {import("./index.js").View} View */
/** @param {View} view @param {MouseEvent} event */
export function onAction(view, event) {
  const target = /** @type {Element} */ (event.target);
  const button = target && target.closest ? target.closest("[data-action]") : null;
  if (!button || !view.root.contains(button)) return;
  const action = button.getAttribute("data-action");
  if (action === "edit") toggleEditor(view, button.getAttribute("data-channel") || "");
  else if (action === "show-all") showAll(view, button.getAttribute("data-channel") || "");
  else if (action === "preview") previewEdit(view, button.getAttribute("data-channel") || "");
  else if (action === "fork") fork(view);
  else if (action === "rerun") rerun(view);
  else if (action === "resume") resume(view);
  else if (action === "stop") stop(view);
  else if (action === "refresh") refresh(view);
  else if (action === "threads") toggleThreads(view);
  else if (action === "new-run") toggleRunForm(view);
  else if (action === "copy") copyCode(view, button);
  else if (action === "close-diff") closeDiff(view);
  else if (action === "subgraph-toggle") toggleSubgraph(view, button);
  else if (action === "subgraph-select") selectInSubgraph(view, button, event);
  else if (action === "subgraph-up") upFromSubgraph(view, button.getAttribute("data-ns") || "");
}

/**
 * Open (or close) a JSON editor for one channel, prefilled with its current value.
 * @param {View} view @param {string} channel
 */
function toggleEditor(view, channel) {
  const row = [...view.parts.detail.querySelectorAll(".dd-channel-row")].find(
    (el) => el.getAttribute("data-channel") === channel,
  );
  if (!row || !view.detail) return;
  const open = view.editors.get(channel);
  if (open) {
    (view.editBoxes.get(channel) || open).remove();
    view.editors.delete(channel);
    view.editBoxes.delete(channel);
    view.editModes.delete(channel);
    return;
  }
  if ((view.detail.clipped || []).includes(channel) && !view.fullValues.has(channel)) {
    // The detail holds this value cut short: edit the whole value, never the cut one.
    fetchFullValue(view, channel).then(
      (found) => found && toggleEditor(view, channel),
      (error) => showRequestError(view, error),
    );
    return;
  }
  const values = view.detail.values || {};
  const text = view.fullValues.has(channel)
    ? JSON.stringify(view.fullValues.get(channel), null, 2)
    : Object.prototype.hasOwnProperty.call(values, channel)
      ? JSON.stringify(values[channel], null, 2)
      : "";
  const editor = /** @type {HTMLTextAreaElement} */ (
    hyperscript(view.doc)("textarea", {
      class: "dd-editor",
      spellcheck: "false",
      "data-channel": channel,
      rows: String(Math.min(12, Math.max(2, text.split("\n").length))),
      "aria-label": `new value of ${channel} as JSON`,
    })
  );
  editor.value = text;
  editor.defaultValue = text;
  const reducer = (view.detail.reducers || {})[channel];
  if (reducer) {
    row.append(drawModeChoice(view, channel, reducer, editor));
  } else {
    row.append(editor);
  }
  view.editors.set(channel, editor);
  editor.focus();
}

/**
 * For a channel with a reducer: replace the value (Overwrite) or append through the reducer,
 * the editor, and a Preview of the value the fork would give.
 * @param {View} view @param {string} channel @param {string} reducer
 * @param {HTMLTextAreaElement} editor
 */
function drawModeChoice(view, channel, reducer, editor) {
  const h = hyperscript(view.doc);
  const name = `${view.uid}-mode-${channel}`;
  const current = editor.value;
  view.editModes.set(channel, "replace");
  const radio = (/** @type {string} */ mode, /** @type {string} */ label) => {
    const input = /** @type {HTMLInputElement} */ (
      h("input", { type: "radio", name, value: mode, "data-mode": mode })
    );
    input.checked = mode === "replace";
    input.addEventListener("change", () => {
      view.editModes.set(channel, mode);
      // Replace starts from the whole current value; append from nothing to add.
      editor.value = mode === "replace" ? current : "";
      editor.placeholder = mode === "replace" ? "" : `value to pass through ${reducer}, as JSON`;
      preview.replaceChildren();
    });
    return h("label", { class: "dd-mode" }, input, ` ${label}`);
  };
  const preview = h("div", { class: "dd-preview", "aria-live": "polite" });
  const box = h(
    "div",
    { class: "dd-edit-box", "data-channel": channel },
    h(
      "div",
      { class: "dd-modes", role: "radiogroup", "aria-label": `how the fork writes ${channel}` },
      radio("replace", "replace the value (Overwrite)"),
      radio("append", `append through the reducer (${reducer})`),
    ),
    editor,
    h(
      "button",
      { class: "dd-button dd-small", type: "button", "data-action": "preview", "data-channel": channel },
      "Preview",
    ),
    preview,
  );
  view.editBoxes.set(channel, box);
  return box;
}

/**
 * Ask Python for the value the fork would give a reducer channel, and show it.
 * @param {View} view @param {string} channel
 */
function previewEdit(view, channel) {
  const editor = view.editors.get(channel);
  const box = view.editBoxes.get(channel);
  const detail = view.detail;
  if (!editor || !box || !detail) return;
  const slot = box.querySelector(".dd-preview");
  const mode = view.editModes.get(channel) || "append";
  view.requests
    .request("preview", {
      checkpoint_id: detail.id,
      ...inNamespace(view),
      channel,
      text: editor.value,
      modes: { [channel]: mode },
    })
    .then(
      (reply) => {
        if (view.detail !== detail || !slot) return;
        const h = hyperscript(view.doc);
        slot.replaceChildren(
          h("span", { class: "dd-muted" }, mode === "replace" ? "after the fork: " : "after the reducer: "),
          drawJson(view, reply.value, 1),
        );
      },
      (error) => slot && setInline(slot, String(error && error.message ? error.message : error)),
    );
}

/**
 * Ask Python for one channel's whole value (the detail holds it cut short); false when the
 * user moved to another checkpoint meanwhile.
 * @param {View} view @param {string} channel @returns {Promise<boolean>}
 */
function fetchFullValue(view, channel) {
  const detail = view.detail;
  if (!detail) return Promise.resolve(false);
  return view.requests
    .request("value", { checkpoint_id: detail.id, ...inNamespace(view), channel })
    .then((reply) => {
      if (view.detail !== detail) return false;
      view.fullValues.set(channel, reply.value);
      return true;
    });
}

/**
 * "Show all": replace a channel's cut value with its pages (value-pages.js).
 * @param {View} view @param {string} channel
 */
function showAll(view, channel) {
  showPages(view, channel, (error) => showRequestError(view, error));
}

/**
 * Send the edited channels as JSON text. Only editors whose text changed are sent.
 * @param {View} view
 */
function fork(view) {
  const detail = view.detail;
  const errorSlot = view.parts.detail.querySelector(".dd-fork-error");
  if (!detail) return;
  /** @type {Record<string, string>} */
  const edits = {};
  for (const [channel, editor] of view.editors) {
    if (editor.value !== editor.defaultValue) edits[channel] = editor.value;
  }
  const select = /** @type {HTMLSelectElement | null} */ (view.parts.detail.querySelector(".dd-as-node"));
  const asNode = select && select.value ? select.value : null;
  if (!Object.keys(edits).length && !asNode) {
    return setInline(
      errorSlot,
      "Nothing to fork: press Edit on a channel and change its value, or choose a node.",
    );
  }
  setInline(errorSlot, "");
  /** @type {Record<string, string>} */
  const modes = {};
  for (const channel of Object.keys(edits)) {
    const mode = view.editModes.get(channel);
    if (mode) modes[channel] = mode;
  }
  runAction(
    view,
    "fork",
    { checkpoint_id: detail.id, ...inNamespace(view), edits, as_node: asNode, modes },
    errorSlot,
  );
}

/** @param {View} view */
function rerun(view) {
  if (!view.detail) return;
  const slot = view.parts.detail.querySelector(".dd-rerun-error");
  /** @type {HTMLInputElement | null} */
  const replay = view.parts.detail.querySelector("input.dd-replay");
  const fields = { checkpoint_id: view.detail.id, ...inNamespace(view) };
  runAction(view, "rerun", replay && replay.checked ? { ...fields, replay: true } : fields, slot);
}

/** Send one answer per filled interrupt box. @param {View} view */
function resume(view) {
  if (!view.detail) return;
  const slot = view.parts.detail.querySelector(".dd-resume-error");
  /** @type {Record<string, string>} */
  const answers = {};
  for (const box of view.parts.detail.querySelectorAll("textarea.dd-answer")) {
    const text = /** @type {HTMLTextAreaElement} */ (box).value;
    if (text.trim()) answers[box.getAttribute("data-interrupt-id") || ""] = text;
  }
  if (!Object.keys(answers).length) {
    return setInline(slot, "Type an answer (JSON) for at least one interrupt, then press Resume.");
  }
  runAction(view, "resume", { checkpoint_id: view.detail.id, ...inNamespace(view), answers }, slot);
}

/** @param {View} view */
function refresh(view) {
  view.requests.request("refresh").then(
    () => clearRequestError(view),
    (error) => showRequestError(view, error),
  );
}

/**
 * Watch the thread while this view is shown: every WATCH_EVERY_MS, unless the page is hidden or
 * the view is read-only or detached, ask Python to look at the thread's newest checkpoint; it
 * reads the thread again only if that changed. One look at a time.
 * @param {View} view
 */
export function scheduleWatch(view) {
  if (view.closed) return;
  later(
    view,
    () => {
      const shown = view.root.isConnected && view.doc.visibilityState !== "hidden";
      if (!shown || isReadonly(view)) return scheduleWatch(view);
      view.requests.request("watch").then(
        () => scheduleWatch(view),
        () => scheduleWatch(view), // a failed look is not the user's error; the next may work
      );
    },
    WATCH_EVERY_MS,
  );
}

/** @param {View} view */
function stop(view) {
  view.requests.request("stop").catch((error) => showRequestError(view, error));
}

/**
 * Send an action request; disable its button while it is pending; show a refusal next to it.
 * @param {View} view @param {string} kind @param {object} fields @param {Element | null} errorSlot
 */
function runAction(view, kind, fields, errorSlot) {
  const button = view.parts.detail.querySelector(`[data-action="${kind}"]`);
  if (button) button.setAttribute("disabled", "");
  setInline(errorSlot, "");
  view.requests.request(kind, fields).then(
    () => {
      if (button) button.removeAttribute("disabled");
    },
    (error) => {
      if (button) button.removeAttribute("disabled");
      setInline(errorSlot, error.message);
    },
  );
}

/** Open the thread list (asking Python for it), or close it. @param {View} view */
function toggleThreads(view) {
  if (!view.parts.threadList.hidden) {
    view.parts.threadList.hidden = true;
    return;
  }
  clearRequestError(view);
  listThreads(view, (error) => showRequestError(view, error));
}

/** @param {Element | null} slot @param {string} message */
function setInline(slot, message) {
  if (!slot) return;
  slot.textContent = message;
  /** @type {HTMLElement} */ (slot).hidden = !message;
}

/** @param {View} view */
function closeDiff(view) {
  view.parts.diff.hidden = true;
  view.parts.diff.replaceChildren();
  view.diffTarget = "";
  placeRings(view);
}
