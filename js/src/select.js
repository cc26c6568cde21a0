// @ts-check
// Selecting a checkpoint (of the DAG or of a subgraph) and bringing it into view; diffing two

import { diffRows } from "./diff-view.js";
import { placeRings, scrollToCheckpoint, showSelected } from "./dag.js";
import { drawDetail } from "./detail.js";
import { hyperscript, shortId, table } from "./helpers.js";
import { clearRequestError, showRequestError } from "./status.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").DiffEntry} DiffEntry */
/**
 * Highlight a checkpoint at once, then ask Python for its detail.
 * @param {View} view
 * @param {string} id
 * @param {string} [namespace] the checkpoint's namespace (a subgraph's), when not the widget's own
 */
export function selectCheckpoint(view, id, namespace) {
  view.diffTarget = "";
  showSelected(view, id, false);
  const ticket = ++view.selectTicket;
  view.selecting = id;
  view.parts.detail.classList.add("dd-loading");
  const where = namespace === undefined ? {} : { checkpoint_ns: namespace };
  view.requests.request("select", { checkpoint_id: id, ...where }).then(
    () => {
      if (ticket !== view.selectTicket) return; // the user has moved on
      view.selecting = "";
      view.parts.detail.classList.remove("dd-loading");
      clearRequestError(view);
      // The detail itself arrives once, as `_detail`; the reply only says it is there.
      drawDetail(view, view.model.get("_detail"));
    },
    (error) => {
      if (ticket !== view.selectTicket) return;
      view.selecting = "";
      view.parts.detail.classList.remove("dd-loading");
      showRequestError(view, error);
    },
  );
}

/**
 * Diff two checkpoints and show the per-channel table.
 * @param {View} view @param {string} a @param {string} b
 * @param {string} [namespace] the namespace of both (a subgraph's), when not the widget's own
 */
export function requestDiff(view, a, b, namespace) {
  view.diffTarget = b;
  placeRings(view);
  const ticket = ++view.diffTicket;
  const where = namespace === undefined ? {} : { checkpoint_ns: namespace };
  view.requests.request("diff", { a, b, ...where }).then(
    (entries) => ticket === view.diffTicket && drawDiff(view, a, b, entries),
    (error) => ticket === view.diffTicket && drawDiff(view, a, b, null, error),
  );
}

/**
 * Per-channel changes from `a` to `b`: the standalone page's answer to a `diff` request.
 * @param {Record<string, any>} a
 * @param {Record<string, any>} b
 * @returns {DiffEntry[]}
 */
export function diffValues(a, b) {
  const before = a || {};
  const after = b || {};
  const channels = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  /** @type {DiffEntry[]} */
  const entries = [];
  for (const channel of channels) {
    const inA = Object.prototype.hasOwnProperty.call(before, channel);
    const inB = Object.prototype.hasOwnProperty.call(after, channel);
    if (inA && !inB) entries.push({ channel, change: "removed", old: before[channel], new: null });
    else if (!inA && inB) entries.push({ channel, change: "added", old: null, new: after[channel] });
    else if (!sameJson(before[channel], after[channel])) {
      entries.push({ channel, change: "changed", old: before[channel], new: after[channel] });
    }
  }
  return entries;
}

/** Deep equality of JSON values (object key order ignored). @param {any} x @param {any} y @returns {boolean} */
function sameJson(x, y) {
  if (x === y) return true;
  if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  if (kx.length !== ky.length) return false;
  return kx.every((k) => Object.prototype.hasOwnProperty.call(y, k) && sameJson(x[k], y[k]));
}

/**
 * @param {View} view @param {string} a @param {string} b
 * @param {DiffEntry[] | null} entries @param {Error} [error]
 */
function drawDiff(view, a, b, entries, error) {
  const h = hyperscript(view.doc);
  const box = view.parts.diff;
  box.hidden = false;
  const title = h(
    "div",
    { class: "dd-panel-head" },
    h(
      "h4",
      {},
      "Diff ",
      h("code", { title: a }, `…${shortId(a)}`),
      " → ",
      h("code", { title: b }, `…${shortId(b)}`),
    ),
    h("button", { class: "dd-button dd-small", type: "button", "data-action": "close-diff" }, "Close"),
  );
  if (error) {
    box.replaceChildren(title, h("p", { class: "dd-inline-error", role: "alert" }, error.message));
    return;
  }
  if (!entries || !entries.length) {
    box.replaceChildren(title, h("p", { class: "dd-empty" }, "No channel changed."));
    return;
  }
  const rows = diffRows(h, entries);
  box.replaceChildren(title, table(h, "dd-diff-table", ["channel / path", "change", "old", "new"], rows));
}

/**
 * Select a checkpoint of a subgraph (a `subgraph-select` button); with Shift, diff it against
 * the selected checkpoint of the same namespace instead.
 * @param {View} view @param {Element} button @param {MouseEvent} event
 */
export function selectInSubgraph(view, button, event) {
  const id = button.getAttribute("data-checkpoint") || "";
  const namespace = button.getAttribute("data-ns") || "";
  const selected = view.model.get("_selected");
  if (event.shiftKey && selected && selected !== id && view.model.get("_selected_ns") === namespace)
    requestDiff(view, selected, id, namespace);
  else selectCheckpoint(view, id, namespace);
}

/**
 * Select the checkpoint of the enclosing namespace that the subgraph's task ran from.
 * @param {View} view @param {string} namespace
 */
export function upFromSubgraph(view, namespace) {
  view.requests.request("subgraphs").then(
    (reply) => {
      /** @type {import("./subgraph.js").Namespace[]} */
      const listed = reply.namespaces || [];
      const found = listed.find((ns) => ns.checkpoint_ns === namespace);
      if (found && found.parent) selectCheckpoint(view, found.parent, found.enclosing);
    },
    (error) => showRequestError(view, error),
  );
}

/**
 * Select a checkpoint and bring it into view (revealing it from its run).
 * @param {View} view @param {string} id
 */
export function goTo(view, id) {
  if (!id || id === view.selected) return;
  selectCheckpoint(view, id);
  scrollToCheckpoint(view, id);
}
