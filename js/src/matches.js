// @ts-check
// What the filters and the "go to" box match: the query language (`findCheckpoints`), the
// matches of a layout, the filters' counts and the count line. Redrawing what changed is the
// caller's (navigate.js's `updateMatches`, dag.js's `drawDag`).

import { readDag } from "./dag-wire.js";
import { FILTERS } from "./layout.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").DagLayout} DagLayout */
/** @typedef {import("./types.js").DagNode} DagNode */

/**
 * The checkpoints a "go to" query finds, in drawing order (by depth, then row; by the
 * protocol's depth and lane without a layout): a step number (`12` or `step 12`); `error`,
 * `interrupt` (pending ones); `fork` (forks and updates), `input`, `loop`; `*` every one;
 * else a node name, among the nodes that wrote a checkpoint or run next from it.
 * @param {DagNode[]} nodes @param {string} query @param {DagLayout} [layout]
 * @returns {string[]}
 */
export function findCheckpoints(nodes, query, layout) {
  const q = query.trim();
  if (!q) return [];
  const step = /^(?:step\s*)?(-?\d+)$/i.exec(q);
  const word = q.toLowerCase().replace(/s$/, "");
  /** @type {(node: DagNode) => boolean} */
  let test;
  if (step) test = (node) => node.step === Number(step[1]);
  else if (q === "*") test = () => true;
  else if (FILTERS[word]) test = FILTERS[word];
  else if (word === "input" || word === "loop") test = (node) => node.source === word;
  else test = (node) => (node.writers || []).includes(q) || (node.next || []).includes(q);
  const found = nodes.filter(test);
  if (layout) {
    const depth = (/** @type {DagNode} */ node) => layout.depthOf.get(node.id) || 0;
    const row = (/** @type {DagNode} */ node) => layout.itemOf.get(node.id)?.row || 0;
    found.sort((a, b) => depth(a) - depth(b) || row(a) - row(b));
  } else found.sort((a, b) => a.depth - b.depth || a.lane - b.lane);
  return found.map((node) => node.id);
}

/**
 * The checkpoints the filters and the "go to" box match, in drawing order; null when neither
 * is in use. A checkpoint matches when it is of one of the chosen kinds (any, with no kind
 * chosen) and the query finds it (any, with no query).
 * @param {DagLayout} layout @param {Set<string>} filters @param {string} query
 * @returns {string[] | null}
 */
export function matchCheckpoints(layout, filters, query) {
  const q = query.trim();
  if (!filters.size && !q) return null;
  const tests = [...filters].map((kind) => FILTERS[kind]).filter(Boolean);
  const nodes = [...layout.byId.values()];
  const kept = tests.length ? nodes.filter((node) => tests.some((test) => test(node))) : nodes;
  return findCheckpoints(kept, q || "*", layout);
}

/**
 * Recompute what the filters and the go-to box match, the filters' counts and the count
 * line. True when the matches changed (the marks and the overview then need drawing again).
 * @param {View} view
 * @returns {boolean}
 */
export function refreshMatches(view) {
  const layout = view.layout;
  if (!layout) return false;
  const query = /** @type {HTMLInputElement} */ (view.parts.find).value || "";
  const matches = matchCheckpoints(layout, view.nav.filters, query);
  const changed =
    !sameList(matches, view.nav.matches) || query !== view.nav.query || view.nav.matchLayout !== layout;
  view.nav.query = query;
  if (changed) {
    view.nav.matches = matches;
    view.nav.matchSet = matches ? new Set(matches) : null;
    view.nav.matchRuns = new Set();
    for (const id of matches || []) {
      const item = layout.itemOf.get(id);
      if (item && item.kind === "run") view.nav.matchRuns.add(item.id);
    }
  }
  // The filters' counts depend on the checkpoints only: counted once per `_dag`.
  const dag = readDag(view.model);
  const counted = view.nav.countedDag === dag;
  view.nav.countedDag = dag;
  view.nav.matchLayout = layout;
  for (const button of view.parts.nav.querySelectorAll(".dd-filter")) {
    const kind = button.getAttribute("data-filter") || "";
    button.setAttribute("aria-pressed", view.nav.filters.has(kind) ? "true" : "false");
    const label = button.querySelector(".dd-filter-count");
    if (counted || !label) continue;
    const test = FILTERS[kind];
    let count = 0;
    for (const node of layout.byId.values()) if (test(node)) count++;
    label.textContent = ` ${count}`;
  }
  countLine(view);
  return changed;
}

/** @param {string[] | null} a @param {string[] | null} b */
function sameList(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** "3 of 12", "12 found", "no checkpoint", or nothing without a filter or query. @param {View} view */
export function countLine(view) {
  const matches = view.nav.matches;
  const line = view.parts.findCount;
  if (!matches) line.textContent = "";
  else if (!matches.length) line.textContent = "no checkpoint";
  else {
    const at = matches.indexOf(view.selected);
    line.textContent = at >= 0 ? `${at + 1} of ${matches.length}` : `${matches.length} found`;
  }
}
