// @ts-check
// Small helpers: pure ones (exported for the tests), the view's handlers, timers and
// read-only flag, which its cleanup removes, and the few the other modules share (a detail
// section, the selection's namespace)

import { SVG_NS } from "./types.js";

/** @typedef {import("./index.js").H} H */
/** @typedef {import("./index.js").View} View */
/**
 * A channel version, shortened: `"00000000000000000000000000000007.0.4123…"` → `"7 · 0.4123…"`
 * (the counter without its zero padding, then the start of the branch suffix).
 * @param {string | number | null | undefined} version
 */
export function formatVersion(version) {
  if (version === null || version === undefined) return "—";
  const text = String(version);
  const match = /^0*(\d+)\.(.+)$/.exec(text);
  if (match) return `${match[1]} · ${truncate(match[2], 8)}`;
  if (/^0+\d/.test(text)) return text.replace(/^0+(?=\d)/, "");
  return truncate(text, 16);
}

/** @param {number | null | undefined} bytes */
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(bytes)) return "—";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The part of an id that tells neighbours apart. Checkpoint ids are version-6 UUIDs: their
 * first 15 hex digits (skipping the version digit) are a timestamp, and the last block is the
 * same for every checkpoint one process writes, so the last timestamp digits are shown. Other
 * ids (task ids, random UUIDs) show their last 8 characters.
 * @param {string} id
 */
export function shortId(id) {
  const text = String(id || "");
  const hex = text.replace(/-/g, "");
  if (/^[0-9a-f]{32}$/i.test(hex) && hex[12] === "6") return (hex.slice(0, 12) + hex.slice(13, 16)).slice(-8);
  return text.length > 8 ? text.slice(-8) : text;
}

/** `plural(1, "blob")` → "1 blob", `plural(3, "branch")` → "3 branches". @param {number} n @param {string} word */
export function plural(n, word) {
  if (n === 1) return `${n} ${word}`;
  return `${n} ${word}${/(s|sh|ch|x)$/.test(word) ? "es" : "s"}`;
}

/** @param {string} text @param {number} max */
export function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** JSON for a table cell, cut short when huge. @param {any} value */
export function compactJson(value) {
  const text = JSON.stringify(value, null, 1) ?? "null";
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

/** @param {number} n */
export function round1(n) {
  return Math.round(n * 10) / 10;
}

/**
 * A table with an optional header row.
 * @param {H} h @param {string} cls @param {string[] | null} headers @param {HTMLElement[]} rows
 */
export function table(h, cls, headers, rows) {
  const head = headers ? h("thead", {}, h("tr", {}, ...headers.map((title) => h("th", {}, title)))) : "";
  return h("table", { class: `dd-table ${cls}` }, head, h("tbody", {}, ...rows));
}

/** A table cell. @param {H} h @param {Node | string} content @param {string} [cls] */
export function cell(h, content, cls) {
  return h("td", cls ? { class: cls } : {}, content);
}

/**
 * `h(tag, attrs, ...children)` for one document: text children are set as text, never parsed.
 * @param {Document} doc
 */
export function hyperscript(doc) {
  /**
   * @param {string} tag
   * @param {Record<string, string | boolean>} [attrs]
   * @param {...(Node | string)} children
   * @returns {HTMLElement}
   */
  return function h(tag, attrs = {}, ...children) {
    const el = doc.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === true) el.setAttribute(name, "");
      else if (value !== false && value != null) el.setAttribute(name, value);
    }
    for (const child of children) {
      if (child === "" || child == null) continue;
      el.append(typeof child === "string" ? doc.createTextNode(child) : child);
    }
    return el;
  };
}

/** @typedef {ReturnType<typeof svgHyperscript>} S */

/**
 * `s(tag, attrs, ...children)` for SVG elements of one document: values are set as attributes
 * and text children as text, never parsed as markup.
 * @param {Document} doc
 */
export function svgHyperscript(doc) {
  /**
   * @param {string} tag
   * @param {Record<string, string | number>} [attrs]
   * @param {...(Node | string)} children
   * @returns {SVGElement}
   */
  return function s(tag, attrs = {}, ...children) {
    const el = /** @type {SVGElement} */ (doc.createElementNS(SVG_NS, tag));
    for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
    for (const child of children) el.append(typeof child === "string" ? doc.createTextNode(child) : child);
    return el;
  };
}

/** A timer that cleanup clears. @param {View} view @param {() => void} fn @param {number} ms */
export function later(view, fn, ms) {
  const timer = setTimeout(() => {
    view.timers.delete(timer);
    fn();
  }, ms);
  view.timers.add(timer);
}

/** @param {View} view */
export function isReadonly(view) {
  return Boolean(view.model.get("_readonly"));
}

/**
 * Add a DOM listener for the lifetime of the view.
 * @param {View} view @param {EventTarget} target @param {string} type
 * @param {(event: Event) => void} fn @param {boolean} [capture]
 */
export function listen(view, target, type, fn, capture = false) {
  target.addEventListener(type, fn, capture);
  view.cleanups.push(() => target.removeEventListener(type, fn, capture));
}

/**
 * Subscribe to a model event for the lifetime of the view.
 * @param {View} view @param {string} name @param {Function} fn
 */
export function watch(view, name, fn) {
  view.model.on(name, fn);
  view.cleanups.push(() => view.model.off(name, fn));
}

/**
 * @param {ReturnType<typeof hyperscript>} h @param {string} title @param {string} cls
 * @param {...Node} body
 */
export function section(h, title, cls, ...body) {
  return h("section", { class: `dd-section ${cls}` }, h("h4", {}, title), ...body);
}

/**
 * The namespace fields of a request about the selected checkpoint: none for the widget's own
 * namespace, `checkpoint_ns` when the selection is inside a subgraph.
 * @param {View} view
 */
export function inNamespace(view) {
  const namespace = view.model.get("_selected_ns");
  return namespace ? { checkpoint_ns: namespace } : {};
}
