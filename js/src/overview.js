// @ts-check
// What the DAG's box shows and the overview strip that maps it: the visible area, the zoom's
// value and label, the strip's lines and ticks, and the viewport's rectangle on it. Drawing only:
// the DAG (dag.js) and the navigation (navigate.js) call these, never the other way round.

import { svgHyperscript } from "./helpers.js";
import { ZOOM } from "./types.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").Area} Area */

/**
 * The part of the DAG the user can see, in layout pixels. Before the browser has laid the
 * widget out (or in a DOM without layout), assume a large screen at the current scroll position.
 * @param {View} view
 * @returns {Area}
 */
export function visibleArea(view) {
  const box = view.parts.dagScroll;
  const zoom = view.nav.zoom;
  const width = (box.clientWidth || 1600) / zoom;
  const height = (box.clientHeight || 800) / zoom;
  const left = box.scrollLeft / zoom;
  const top = box.scrollTop / zoom;
  return { left, top, right: left + width, bottom: top + height };
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
