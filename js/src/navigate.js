// @ts-check
// Getting around a big DAG: zoom (buttons, keys, Ctrl/⌘ + wheel), pan (drag), the overview
// strip with the viewport on it, filters by kind (error, interrupt, fork) combined with the
// "go to" box, and stepping through what they match.

import { drawMarks, findCheckpoints, goTo, relayout, sizeCanvas, visibleArea } from "./dag.js";
import { readDag } from "./dag-wire.js";
import { svgHyperscript } from "./helpers.js";
import { FILTERS } from "./layout.js";
import { SVG_NS, ZOOM } from "./types.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./index.js").H} H */
/** @typedef {import("./types.js").DagLayout} DagLayout */

/**
 * What the view remembers about the user's way around the DAG.
 * @typedef {{
 *   zoom: number, opened: boolean, collapse: boolean, revealed: Set<string>,
 *   expanded: Array<[number, number]>, filters: Set<string>, matches: string[] | null,
 *   matchSet: Set<string> | null, matchRuns: Set<string>, query: string,
 *   drag: { x: number, y: number, left: number, top: number, moved: boolean } | null,
 *   dragged: boolean, overviewDrag: boolean, matchLayout: DagLayout | null, thread: string,
 *   overviewWidth: number, countedDag: any,
 * }} Nav
 */

/** @returns {Nav} */
export function createNav() {
  return {
    zoom: 1,
    opened: false,
    collapse: true,
    revealed: new Set(),
    expanded: [],
    filters: new Set(),
    matches: null,
    matchSet: null,
    matchRuns: new Set(),
    query: "",
    drag: null,
    dragged: false,
    overviewDrag: false,
    matchLayout: null,
    thread: "",
    overviewWidth: 1000,
    countedDag: null,
  };
}

/**
 * The navigation bar and the overview strip, as parts of the skeleton.
 * @param {H} h @param {Document} doc
 */
export function navParts(h, doc) {
  const button = (nav, label, title, extra = {}) =>
    h(
      "button",
      { class: "dd-button dd-small dd-nav-button", type: "button", "data-nav": nav, title, ...extra },
      label,
    );
  const zoomLabel = h("span", { class: "dd-zoom-level dd-muted", "aria-live": "polite" }, "100%");
  const filter = (kind, label) =>
    h(
      "button",
      {
        class: `dd-button dd-small dd-filter dd-filter-${kind}`,
        type: "button",
        "data-nav": "filter",
        "data-filter": kind,
        "aria-pressed": "false",
        title: `Highlight the ${label} and step through them (n / N)`,
      },
      label,
      h("span", { class: "dd-filter-count" }, ""),
    );
  const overview = /** @type {SVGSVGElement} */ (doc.createElementNS(SVG_NS, "svg"));
  overview.setAttribute("class", "dd-overview");
  overview.setAttribute("preserveAspectRatio", "none");
  overview.setAttribute("role", "img");
  overview.setAttribute("aria-label", "Overview of the whole thread; click or drag to move the view");
  const nav = h(
    "div",
    { class: "dd-nav", role: "toolbar", "aria-label": "Zoom, filter and move around the checkpoints" },
    button("zoom-out", "−", "Zoom out (-)"),
    zoomLabel,
    button("zoom-in", "+", "Zoom in (+)"),
    button("fit", "Fit", "Show the whole thread (0)"),
    button("latest", "Latest", "Go to the latest checkpoint (End)"),
    h("span", { class: "dd-nav-sep" }),
    filter("error", "errors"),
    filter("interrupt", "interrupts"),
    filter("fork", "forks"),
    button("prev", "◀", "Previous match (N)", { "aria-label": "previous match" }),
    button("next", "▶", "Next match (n)", { "aria-label": "next match" }),
    h("span", { class: "dd-nav-sep" }),
    button("collapse", "Expand runs", "Show every checkpoint of the linear runs, or fold them again"),
  );
  return { nav, zoomLabel, overview };
}

/**
 * Set the zoom (clamped) without moving anything; the label follows.
 * @param {View} view @param {number} zoom
 */
export function setZoomValue(view, zoom) {
  const clamped = Math.min(ZOOM.max, Math.max(minZoom(view), zoom));
  view.nav.zoom = Number.isFinite(clamped) ? clamped : 1;
  view.parts.zoomLabel.textContent = `${Math.round(view.nav.zoom * 100)}%`;
}

/** The smallest zoom: the whole thread fits, but never below ZOOM.min. @param {View} view */
function minZoom(view) {
  const layout = view.layout;
  const box = view.parts.dagScroll;
  if (!layout || !box.clientWidth) return ZOOM.min;
  return Math.min(
    1,
    Math.max(ZOOM.min, Math.min(box.clientWidth / layout.width, box.clientHeight / layout.height)),
  );
}

/**
 * Zoom keeping one point of the screen (default: the centre of the DAG's box) on the same
 * checkpoint.
 * @param {View} view @param {number} zoom @param {{ x: number, y: number }} [at] box pixels
 */
export function setZoom(view, zoom, at) {
  const box = view.parts.dagScroll;
  const old = view.nav.zoom;
  const point = at || { x: (box.clientWidth || 0) / 2, y: (box.clientHeight || 0) / 2 };
  const layoutX = (box.scrollLeft + point.x) / old;
  const layoutY = (box.scrollTop + point.y) / old;
  setZoomValue(view, zoom);
  sizeCanvas(view);
  box.scrollLeft = Math.max(0, layoutX * view.nav.zoom - point.x);
  box.scrollTop = Math.max(0, layoutY * view.nav.zoom - point.y);
  view.drawnArea = null;
  drawMarks(view);
}

/**
 * + / = zoom in, - zoom out, 0 fits the whole thread, 1 is full size. True when handled.
 * @param {View} view @param {string} key
 */
export function keyZoom(view, key) {
  if (key === "+" || key === "=") setZoom(view, view.nav.zoom * ZOOM.step);
  else if (key === "-" || key === "_") setZoom(view, view.nav.zoom / ZOOM.step);
  else if (key === "0") fitAll(view);
  else if (key === "1") setZoom(view, 1);
  else return false;
  return true;
}

/** Zoom out until the whole thread fits (within ZOOM.min). @param {View} view */
export function fitAll(view) {
  setZoom(view, 0);
  const box = view.parts.dagScroll;
  box.scrollLeft = 0;
  box.scrollTop = 0;
  view.drawnArea = null;
  drawMarks(view);
}

/**
 * Ctrl/⌘ + wheel (and a trackpad's pinch) zooms around the pointer; a plain wheel scrolls.
 * @param {View} view @param {WheelEvent} event
 */
export function onWheel(view, event) {
  if (!(event.ctrlKey || event.metaKey) || !view.layout) return;
  event.preventDefault();
  const rect = view.parts.dagScroll.getBoundingClientRect();
  const factor = Math.exp(-Math.max(-300, Math.min(300, event.deltaY)) * 0.002);
  setZoom(view, view.nav.zoom * factor, { x: event.clientX - rect.left, y: event.clientY - rect.top });
}

/**
 * Dragging the DAG pans it. The drag starts after a few pixels, so a click still clicks.
 * @param {View} view @param {PointerEvent} event
 */
export function onPanStart(view, event) {
  if (event.button !== 0) return;
  const box = view.parts.dagScroll;
  view.nav.dragged = false;
  view.nav.drag = {
    x: event.clientX,
    y: event.clientY,
    left: box.scrollLeft,
    top: box.scrollTop,
    moved: false,
  };
}

/** @param {View} view @param {PointerEvent} event */
export function onPanMove(view, event) {
  const drag = view.nav.drag;
  if (!drag) return;
  const dx = event.clientX - drag.x;
  const dy = event.clientY - drag.y;
  if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 5) return;
  if (!drag.moved) {
    drag.moved = true;
    view.parts.dagScroll.classList.add("dd-panning");
    const target = /** @type {any} */ (view.parts.dagScroll);
    if (typeof target.setPointerCapture === "function") {
      try {
        target.setPointerCapture(event.pointerId);
      } catch {
        // a synthetic pointer has nothing to capture
      }
    }
  }
  const box = view.parts.dagScroll;
  box.scrollLeft = Math.max(0, drag.left - dx);
  box.scrollTop = Math.max(0, drag.top - dy);
}

/** @param {View} view */
export function onPanEnd(view) {
  const drag = view.nav.drag;
  view.nav.drag = null;
  if (!drag) return;
  view.parts.dagScroll.classList.remove("dd-panning");
  view.nav.dragged = drag.moved;
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
 * line; redraw the marks and the overview when the matches changed.
 * @param {View} view
 */
export function updateMatches(view) {
  const layout = view.layout;
  if (!layout) return;
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
  if (changed) {
    view.drawnArea = null;
    drawMarks(view);
    drawOverview(view);
  }
}

/** @param {string[] | null} a @param {string[] | null} b */
function sameList(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** "3 of 12", "12 found", "no checkpoint", or nothing without a filter or query. @param {View} view */
function countLine(view) {
  const matches = view.nav.matches;
  const line = view.parts.findCount;
  if (!matches) line.textContent = "";
  else if (!matches.length) line.textContent = "no checkpoint";
  else {
    const at = matches.indexOf(view.selected);
    line.textContent = at >= 0 ? `${at + 1} of ${matches.length}` : `${matches.length} found`;
  }
}

/**
 * Select the next (or previous) match after the selected checkpoint, in drawing order, and
 * bring it into view.
 * @param {View} view @param {number} direction 1 or -1
 */
export function stepMatch(view, direction) {
  updateMatches(view);
  const matches = view.nav.matches;
  if (!matches || !matches.length || !view.layout) return;
  const at = matches.indexOf(view.selected);
  let next;
  if (at >= 0) next = (at + direction + matches.length) % matches.length;
  else next = direction > 0 ? 0 : matches.length - 1;
  goTo(view, matches[next]);
  countLine(view);
}

/**
 * Clicks on the navigation bar.
 * @param {View} view @param {MouseEvent} event
 */
export function onNavClick(view, event) {
  const el = /** @type {Element | null} */ (event.target);
  const button = el && el.closest ? el.closest("[data-nav]") : null;
  if (!button || !view.layout) return;
  const what = button.getAttribute("data-nav");
  if (what === "zoom-in") setZoom(view, view.nav.zoom * ZOOM.step);
  else if (what === "zoom-out") setZoom(view, view.nav.zoom / ZOOM.step);
  else if (what === "fit") fitAll(view);
  else if (what === "latest") goTo(view, view.layout.latest);
  else if (what === "next" || what === "prev") stepMatch(view, what === "next" ? 1 : -1);
  else if (what === "filter") {
    const kind = button.getAttribute("data-filter") || "";
    if (view.nav.filters.has(kind)) view.nav.filters.delete(kind);
    else view.nav.filters.add(kind);
    updateMatches(view);
  } else if (what === "collapse") {
    view.nav.collapse = !view.nav.collapse;
    view.nav.expanded = [];
    button.textContent = view.nav.collapse ? "Expand runs" : "Collapse runs";
    relayout(view);
  }
}

/** The overview strip's height in pixels (widget.css gives it the same). */
const OVERVIEW_HEIGHT = 44;

/**
 * The overview strip: every branch as a line, errors, interrupts and matches as ticks, the
 * latest checkpoint, and the rectangle the DAG's box shows. Drawn in the strip's own pixels
 * (a stroke scaled by the SVG would cost every repaint), each tick once per pixel.
 * @param {View} view
 */
export function drawOverview(view) {
  const svg = /** @type {SVGSVGElement | undefined} */ (/** @type {unknown} */ (view.parts.overview));
  const layout = view.layout;
  if (!svg || !layout) return;
  const s = svgHyperscript(view.doc);
  const width = svg.clientWidth || 1000;
  const height = OVERVIEW_HEIGHT;
  view.nav.overviewWidth = width;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const { pad } = layout.geometry;
  const sx = (width - 8) / Math.max(1, layout.width - 2 * pad);
  const sy = (height - 8) / Math.max(1, layout.height - 2 * pad);
  const px = (/** @type {number} */ x) => Math.round((4 + (x - pad) * sx) * 10) / 10;
  const py = (/** @type {number} */ y) => Math.round((4 + (y - pad) * sy) * 10) / 10;
  const lines = [];
  for (const row of layout.rows) {
    if (!row.length) continue;
    const first = row[0];
    const parent = first.node.parent != null ? layout.itemOf.get(first.node.parent) : undefined;
    const start = parent && parent.row !== first.row ? parent : first;
    lines.push(`M${px(start.x)} ${py(start.y)}L${px(first.x)} ${py(first.y)}H${px(row[row.length - 1].x)}`);
  }
  /** @type {Record<string, Set<string>>} */
  const ticks = { error: new Set(), interrupt: new Set(), match: new Set() };
  const tick = (/** @type {import("./types.js").DagItem} */ item) =>
    `M${Math.round(px(item.x))} ${Math.round(py(item.y))}h0`;
  for (const item of layout.items) {
    if (item.kind !== "node") continue;
    if (item.node.errors > 0) ticks.error.add(tick(item));
    else if (item.node.interrupts > 0) ticks.interrupt.add(tick(item));
  }
  for (const id of view.nav.matches || []) {
    const item = layout.itemOf.get(id);
    if (item) ticks.match.add(tick(item));
  }
  const path = [];
  let previous = null;
  for (const id of layout.path) {
    const item = layout.itemOf.get(id);
    if (item && previous && item !== previous)
      path.push(`M${px(previous.x)} ${py(previous.y)}L${px(item.x)} ${py(item.y)}`);
    previous = item;
  }
  const latest = layout.itemOf.get(layout.latest);
  // The viewport's rectangle is kept (drawMarks places it); a new one is placed here.
  const kept = svg.querySelector(".dd-overview-view");
  const rect = kept || s("rect", { class: "dd-overview-view" });
  svg.replaceChildren(
    s("path", { class: "dd-overview-lines", d: lines.join("") }),
    s("path", { class: "dd-overview-path", d: path.join("") }),
    s("path", { class: "dd-overview-tick dd-overview-error", d: [...ticks.error].join("") }),
    s("path", { class: "dd-overview-tick dd-overview-interrupt", d: [...ticks.interrupt].join("") }),
    s("path", { class: "dd-overview-tick dd-overview-match", d: [...ticks.match].join("") }),
    s("path", { class: "dd-overview-tick dd-overview-latest", d: latest ? tick(latest) : "" }),
    rect,
  );
  svg.classList.toggle("dd-overview-empty", layout.items.length === 0);
  if (!kept) placeViewport(view);
}

/**
 * Move the overview's rectangle onto what the DAG's box shows (`visible`, in layout pixels,
 * when the caller has read it already).
 * @param {View} view @param {import("./types.js").Area} [visible]
 */
export function placeViewport(view, visible) {
  const svg = view.parts.overview;
  const rect = svg && svg.querySelector(".dd-overview-view");
  const layout = view.layout;
  if (!rect || !layout) return;
  const area = visible || visibleArea(view);
  const { pad } = layout.geometry;
  const sx = (view.nav.overviewWidth - 8) / Math.max(1, layout.width - 2 * pad);
  const sy = (OVERVIEW_HEIGHT - 8) / Math.max(1, layout.height - 2 * pad);
  const left = Math.max(0, 4 + (area.left - pad) * sx);
  const top = Math.max(0, 4 + (area.top - pad) * sy);
  const right = Math.min(view.nav.overviewWidth, 4 + (area.right - pad) * sx);
  const bottom = Math.min(OVERVIEW_HEIGHT, 4 + (area.bottom - pad) * sy);
  rect.setAttribute("x", left.toFixed(1));
  rect.setAttribute("y", top.toFixed(1));
  rect.setAttribute("width", Math.max(2, right - left).toFixed(1));
  rect.setAttribute("height", Math.max(2, bottom - top).toFixed(1));
}

/**
 * Pressing or dragging on the overview centres the DAG's box there.
 * @param {View} view @param {PointerEvent} event
 */
export function onOverviewPointer(view, event) {
  if (event.type === "pointerdown") {
    if (event.button !== 0) return;
    view.nav.overviewDrag = true;
    const target = /** @type {any} */ (view.parts.overview);
    if (typeof target.setPointerCapture === "function") {
      try {
        target.setPointerCapture(event.pointerId);
      } catch {
        // a synthetic pointer has nothing to capture
      }
    }
  } else if (event.type === "pointerup" || event.type === "pointercancel") {
    view.nav.overviewDrag = false;
    return;
  } else if (!view.nav.overviewDrag) return;
  const layout = view.layout;
  if (!layout) return;
  event.preventDefault();
  const rect = view.parts.overview.getBoundingClientRect();
  if (!rect.width || !rect.height) return;
  const { pad } = layout.geometry;
  const x = pad + ((event.clientX - rect.left - 4) / Math.max(1, rect.width - 8)) * (layout.width - 2 * pad);
  const y = pad + ((event.clientY - rect.top - 4) / Math.max(1, rect.height - 8)) * (layout.height - 2 * pad);
  const box = view.parts.dagScroll;
  const zoom = view.nav.zoom;
  box.scrollLeft = Math.max(0, x * zoom - box.clientWidth / 2);
  box.scrollTop = Math.max(0, y * zoom - box.clientHeight / 2);
  view.drawnArea = null;
  drawMarks(view);
}
