// @ts-check
// The DAG's pointer and keys: a click selects (Shift diffs, a run expands), the arrows walk,
// + / - / 0 / 1 zoom, n / N step through the matches, Enter in the "go to" box finds.

import { relayout } from "./dag.js";
import { itemAt, neighbour, runRange } from "./layout.js";
import { keyZoom, stepMatch } from "./navigate.js";
import { goTo, requestDiff, selectCheckpoint } from "./select.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").DagItem} DagItem */

/**
 * What is under a pointer event: a checkpoint's mark, a run, or (dots drawn far out) the
 * nearest mark at that point.
 * @param {View} view @param {Event} event
 * @returns {{ id: string, run: DagItem | null }}
 */
function targetOf(view, event) {
  const el = /** @type {Element | null} */ (
    event.target && /** @type {any} */ (event.target).closest ? event.target : null
  );
  const mark = el ? el.closest(".dd-mark") : null;
  if (mark) return { id: mark.getAttribute("data-id") || "", run: null };
  const runMark = el ? el.closest(".dd-run") : null;
  const layout = view.layout;
  if (runMark && layout) {
    const id = runMark.getAttribute("data-run") || "";
    return { id: "", run: layout.items.find((item) => item.id === id) || null };
  }
  if (el && el.classList && el.classList.contains("dd-dot") && layout && view.svg) {
    const box = view.svg.getBoundingClientRect();
    const mouse = /** @type {MouseEvent} */ (event);
    const zoom = view.nav.zoom;
    const item = itemAt(
      layout,
      (mouse.clientX - box.left) / zoom,
      (mouse.clientY - box.top) / zoom,
      8 / zoom,
    );
    if (item) return item.kind === "run" ? { id: "", run: item } : { id: item.id, run: null };
  }
  return { id: "", run: null };
}

/**
 * Click selects; shift-click diffs against the selected checkpoint; a click on a run
 * expands it. The click that ends a drag (a pan) does nothing.
 * @param {View} view @param {MouseEvent} event
 */
export function onDagClick(view, event) {
  if (view.nav.dragged) {
    view.nav.dragged = false;
    return;
  }
  const { id, run } = targetOf(view, event);
  if (run && view.layout) {
    view.nav.expanded.push(runRange(view.layout, run));
    relayout(view, run.node.id);
    return;
  }
  if (!id) return;
  if (event.shiftKey && view.selected && view.selected !== id) requestDiff(view, view.selected, id);
  else selectCheckpoint(view, id);
}

/**
 * Enter in the "go to" box selects the next checkpoint it finds after the selected one
 * (Shift+Enter the previous), and says which of how many it is.
 * @param {View} view @param {KeyboardEvent} event
 */
export function onFindKey(view, event) {
  if (event.key !== "Enter") return;
  event.preventDefault();
  stepMatch(view, event.shiftKey ? -1 : 1);
}

/**
 * Keys on the DAG: arrows walk it; + and - zoom, 0 fits the whole thread; Home and End go to
 * the root and the latest checkpoint; n / N (or p) step through the matches.
 * @param {View} view @param {KeyboardEvent} event
 */
export function onDagKey(view, event) {
  if (!view.layout || event.ctrlKey || event.metaKey || event.altKey) return;
  if (keyZoom(view, event.key)) {
    event.preventDefault();
    return;
  }
  if (event.key === "n" || event.key === "N" || event.key === "p") {
    event.preventDefault();
    stepMatch(view, event.key === "n" ? 1 : -1);
    return;
  }
  /** @type {string} */
  let next = "";
  if (event.key === "End") next = view.layout.latest;
  else if (event.key === "Home") {
    const first = view.layout.rowNodes[0];
    next = first && first.length ? first[0].id : "";
  } else if (event.key.startsWith("Arrow")) next = neighbour(view.layout, view.selected, event.key);
  else return;
  event.preventDefault();
  goTo(view, next);
}
