// @ts-check
// Getting around a big DAG: zoom (buttons, keys, Ctrl/⌘ + wheel), pan (drag), moving the view
// from the overview strip (overview.js draws it), filters by kind (error, interrupt, fork)
// combined with the "go to" box (matches.js), and stepping through what they match.

import { drawMarks, relayout, sizeCanvas } from "./dag.js";
import { countLine, refreshMatches } from "./matches.js";
import { drawOverview, setZoomValue } from "./overview.js";
import { goTo } from "./select.js";
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
  const button = (
    /** @type {string} */ nav,
    /** @type {string} */ label,
    /** @type {string} */ title,
    /** @type {Record<string, string>} */ extra = {},
  ) =>
    h(
      "button",
      { class: "dd-button dd-small dd-nav-button", type: "button", "data-nav": nav, title, ...extra },
      label,
    );
  const zoomLabel = h("span", { class: "dd-zoom-level dd-muted", "aria-live": "polite" }, "100%");
  const filter = (/** @type {string} */ kind, /** @type {string} */ label) =>
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

/**
 * Recompute what the filters and the go-to box match (matches.js); redraw the marks and the
 * overview when the matches changed.
 * @param {View} view
 */
export function updateMatches(view) {
  if (!refreshMatches(view)) return;
  view.drawnArea = null;
  drawMarks(view);
  drawOverview(view);
}
