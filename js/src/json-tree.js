// @ts-check
// JSON tree

import { hyperscript, plural } from "./helpers.js";
import { JSON_ROW_LIMIT, TYPE_KEY } from "./types.js";

/** @typedef {import("./index.js").View} View */
/**
 * A collapsible tree for a JSON value. Levels below `openDepth` start closed and are built
 * only when opened.
 * @param {View} view @param {any} value @param {number} openDepth @param {number} [depth]
 * @returns {Node}
 */
export function drawJson(view, value, openDepth, depth = 0) {
  const h = hyperscript(view.doc);
  if (value === null || value === undefined) return h("span", { class: "dd-json dd-json-null" }, "null");
  if (typeof value === "string") return h("span", { class: "dd-json dd-json-string" }, JSON.stringify(value));
  if (typeof value === "number") return h("span", { class: "dd-json dd-json-number" }, String(value));
  if (typeof value === "boolean") return h("span", { class: "dd-json dd-json-boolean" }, String(value));
  const isArray = Array.isArray(value);
  const size = isArray ? value.length : Object.keys(value).length;
  if (!size) return h("span", { class: "dd-json" }, isArray ? "[]" : "{}");
  const tree = /** @type {HTMLDetailsElement} */ (
    h(
      "details",
      { class: "dd-json dd-json-tree" },
      h("summary", {}, isArray ? `[${plural(size, "item")}]` : objectSummary(value)),
    )
  );
  tree.dataset.depth = String(depth);
  tree.dataset.openDepth = String(openDepth);
  if (depth < openDepth) {
    tree.open = true;
    fillJson(view, tree, value);
  } else {
    view.lazyJson.set(tree, value);
  }
  return tree;
}

/** @param {View} view @param {HTMLElement} tree @param {any} value */
function fillJson(view, tree, value) {
  const h = hyperscript(view.doc);
  const entries = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
  const depth = Number(tree.dataset.depth);
  const openDepth = Number(tree.dataset.openDepth);
  for (const [key, item] of entries.slice(0, JSON_ROW_LIMIT)) {
    tree.append(
      h(
        "div",
        { class: "dd-json-row" },
        h("span", { class: "dd-json-key" }, `${key}: `),
        drawJson(view, item, openDepth, depth + 1),
      ),
    );
  }
  if (entries.length > JSON_ROW_LIMIT) {
    tree.append(h("div", { class: "dd-json-row dd-muted" }, `… ${entries.length - JSON_ROW_LIMIT} more`));
  }
}

/** @param {View} view @param {EventTarget | null} target */
export function fillLazyJson(view, target) {
  const tree = /** @type {HTMLDetailsElement} */ (target);
  if (!tree || !tree.open || !view.lazyJson.has(tree)) return;
  const value = view.lazyJson.get(tree);
  view.lazyJson.delete(tree);
  fillJson(view, tree, value);
}

/**
 * `{a, b}`; an object a checkpoint holds but the kernel could not rebuild (a class it does not
 * trust) comes as its fields tagged with `__type__`, and shows as that class:
 * `shop.Item {sku, size}`.
 * @param {Record<string, any>} value
 */
function objectSummary(value) {
  const name = value[TYPE_KEY];
  if (typeof name !== "string") return `{${previewKeys(value)}}`;
  const fields = Object.fromEntries(Object.entries(value).filter(([key]) => key !== TYPE_KEY));
  return `${name} {${previewKeys(fields)}}`;
}

/** @param {object} value */
function previewKeys(value) {
  const keys = Object.keys(value);
  const shown = keys.slice(0, 3).join(", ");
  return keys.length > 3 ? `${shown}, … ${keys.length - 3} more` : shown;
}
