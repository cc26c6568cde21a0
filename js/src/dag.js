// @ts-check
// Drawing the checkpoint DAG: the edges, the marks near the view, the rings, scrolling to a
// checkpoint, the tooltip (layout.js places it, overview.js draws the strip, dag-input.js
// handles its pointer and keys, navigate.js zooms, pans and filters)

import { displayName, shortName } from "./names.js";
import { readDag } from "./dag-wire.js";
import { plural, shortId, svgHyperscript, truncate } from "./helpers.js";
import { itemsInArea, layoutDag, placeOf } from "./layout.js";
import { refreshMatches } from "./matches.js";
import { drawOverview, placeViewport, setZoomValue, visibleArea } from "./overview.js";
import { drawStatus, markTopology, pausedAt } from "./status.js";
import { MARK_LIMIT, SOURCE_LETTER, SVG_NS, ZOOM } from "./types.js";

/** @typedef {import("./helpers.js").S} S */
/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").Area} Area */
/** @typedef {import("./types.js").Dag} Dag */
/** @typedef {import("./types.js").DagItem} DagItem */
/** @typedef {import("./types.js").DagLayout} DagLayout */
/** @typedef {import("./types.js").DagNode} DagNode */

/**
 * Draw `_dag` as one SVG: the edges as a few paths (one segment per branch), then the marks
 * near the visible area (`drawMarks`), so a thread of any length costs the same to show. The
 * SVG keeps layout pixels in its viewBox and is zoomed by its size. Clicks and hovers are
 * handled by delegation on the scroll container, never per mark.
 *
 * The first time the thread has checkpoints, the view opens on the main run's latest checkpoint
 * (`layout.main`: forks made later do not take its place) at a readable zoom, near the right
 * edge with its highlighted path leading in, and selects it, unless something is selected
 * already. Later draws keep the selection in
 * view (the newest checkpoint while a run goes on); `anchor` (from `relayout`) instead keeps
 * that checkpoint where it was on the screen.
 * @param {View} view
 * @param {string} [anchor]
 * @returns {string} the checkpoint the first view selects (the caller asks for its detail), or ""
 */
export function drawDag(view, anchor) {
  /** @type {Dag} */
  const dag = readDag(view.model);
  const nodes = dag.nodes || [];
  const box = view.parts.dagScroll;
  const thread = `${dag.thread_id || ""}\u0000${dag.checkpoint_ns || ""}`;
  if (view.nav.thread !== thread) {
    // Another thread (or namespace): open it afresh, on its own latest checkpoint.
    view.nav.thread = thread;
    view.nav.opened = false;
    view.nav.revealed.clear();
    view.nav.expanded = [];
  }
  const zoom = view.nav.zoom;
  const before = anchor && view.layout ? placeOf(view.layout, anchor) : undefined;
  const offset = before ? { x: before.x * zoom - box.scrollLeft, y: before.y * zoom - box.scrollTop } : null;
  const kept = { left: box.scrollLeft, top: box.scrollTop };

  const layout = layoutDag(dag, {
    collapse: view.nav.collapse,
    reveal: view.selected ? [...view.nav.revealed, view.selected] : view.nav.revealed,
    expanded: view.nav.expanded,
  });
  const { radius } = layout.geometry;
  const svg = /** @type {SVGSVGElement} */ (view.doc.createElementNS(SVG_NS, "svg"));
  svg.setAttribute("class", "dd-dag");
  svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const s = svgHyperscript(view.doc);
  svg.append(
    s("path", { class: "dd-edges", d: layout.edgePath }),
    s("path", { class: "dd-edges dd-fork-edges", d: layout.forkPath }),
    s("path", { class: "dd-path-edges", d: layout.pathPath }),
    s("g", { class: "dd-marks" }),
    s("circle", { class: "dd-ring dd-ring-diff", r: radius + 9, visibility: "hidden" }),
    s("circle", { class: "dd-ring dd-ring-selected", r: radius + 7, visibility: "hidden" }),
    s(
      "g",
      { class: "dd-paused-marker", visibility: "hidden" },
      s("rect", { class: "dd-paused-tag", x: radius + 4, y: -radius - 22, width: 10, height: 18, rx: 4 }),
      s("path", {
        class: "dd-paused-icon",
        d: `M${radius + 10} ${-radius - 18}v10h3v-10zM${radius + 15} ${-radius - 18}v10h3v-10z`,
      }),
      s("text", { x: radius + 22, y: -radius - 9 }, ""),
    ),
  );
  if (view.svg) view.svg.replaceWith(svg);
  else view.parts.dagCanvas.prepend(svg);
  view.svg = svg;
  view.layout = layout;
  view.drawnArea = null;
  hideTooltip(view);
  sizeCanvas(view);

  box.dataset.empty = nodes.length ? "false" : "true";
  if (!layout.byId.has(view.selected)) view.selected = "";
  if (!layout.byId.has(view.diffTarget)) view.diffTarget = "";
  drawStatus(view);
  markTopology(view);
  refreshMatches(view);
  const opening = !view.nav.opened && nodes.length > 0;
  if (opening) {
    view.nav.opened = true;
    openOnPath(view);
  } else if (anchor !== undefined) {
    const after = anchor ? placeOf(layout, anchor) : undefined;
    box.scrollLeft = after && offset ? Math.max(0, after.x * zoom - offset.x) : kept.left;
    box.scrollTop = after && offset ? Math.max(0, after.y * zoom - offset.y) : kept.top;
  } else {
    const focus = view.model.get("_running") ? layout.latest : view.selected;
    if (focus) scrollToCheckpoint(view, focus);
  }
  drawMarks(view);
  drawOverview(view);
  return opening && !view.selected ? layout.main : "";
}

/**
 * Lay the DAG out again (a run expanded, a checkpoint revealed, runs collapsed or not),
 * keeping `anchor` where it is on the screen.
 * @param {View} view @param {string} [anchor] a checkpoint id (default: the selected one)
 */
export function relayout(view, anchor = view.selected) {
  drawDag(view, anchor || "");
}

/** Size the SVG and its canvas for the current zoom. @param {View} view */
export function sizeCanvas(view) {
  if (!view.svg || !view.layout) return;
  const empty = view.layout.items.length === 0;
  const width = Math.round(view.layout.width * view.nav.zoom);
  const height = empty ? 0 : Math.round(view.layout.height * view.nav.zoom);
  view.svg.setAttribute("width", String(width));
  view.svg.setAttribute("height", String(height));
  view.svg.classList.toggle("dd-zoom-far", view.nav.zoom < ZOOM.text);
  // Far out, edges and dots keep their on-screen width (widget.css divides by the zoom).
  view.svg.style.setProperty("--dd-zoom", String(view.nav.zoom));
  view.parts.dagCanvas.style.width = `${width}px`;
  view.parts.dagCanvas.style.height = `${height}px`;
}

/**
 * The first view of a thread: at ZOOM.first (labels of 11 px), the main run's latest
 * checkpoint near the right edge with its history to the left, the path's rows in view when
 * they fit, else its own row in the middle.
 * @param {View} view
 */
export function openOnPath(view) {
  const layout = /** @type {DagLayout} */ (view.layout);
  const box = view.parts.dagScroll;
  const at = placeOf(layout, layout.main);
  if (!at) return;
  if (!box.clientWidth) {
    view.pendingOpen = true; // not laid out yet: the ResizeObserver opens it once it is
    return;
  }
  view.pendingOpen = false;
  let top = at.y;
  let bottom = at.y;
  for (const id of layout.path) {
    const place = /** @type {{x: number, y: number}} */ (placeOf(layout, id));
    top = Math.min(top, place.y);
    bottom = Math.max(bottom, place.y);
  }
  const { col, row } = layout.geometry;
  const tall = bottom - top + row;
  // Readable labels first (ZOOM.first), the path leading in from the left as far as it fits.
  setZoomValue(view, ZOOM.first);
  sizeCanvas(view);
  const zoom = view.nav.zoom;
  box.scrollLeft = Math.max(0, (at.x + 1.5 * col) * zoom - box.clientWidth);
  const fits = tall * zoom <= box.clientHeight;
  const middle = fits ? (top + bottom) / 2 : at.y;
  box.scrollTop = Math.max(0, middle * zoom - box.clientHeight / 2);
}

/**
 * (Re)draw the marks around the visible part of the DAG: the visible area plus half a screen
 * on every side, so scrolling redraws only once the user leaves that margin. Past MARK_LIMIT
 * marks, or below ZOOM.dots (zoomed far out), checkpoints are dots of one path per kind instead.
 * @param {View} view
 */
export function drawMarks(view) {
  if (!view.svg || !view.layout) return;
  // Read the geometry before writing to the DOM: a read after a write forces a layout.
  const visible = visibleArea(view);
  placeViewport(view, visible);
  if (view.drawnArea && contains(view.drawnArea, visible)) return;
  const width = (visible.right - visible.left) / 2;
  const height = (visible.bottom - visible.top) / 2;
  const area = {
    left: visible.left - width,
    right: visible.right + width,
    top: visible.top - height,
    bottom: visible.bottom + height,
  };
  const layout = view.layout;
  const s = svgHyperscript(view.doc);
  let items = itemsInArea(layout, area);
  const dots = items.length > MARK_LIMIT || view.nav.zoom < ZOOM.dots;
  if (dots) {
    items = itemsInArea(layout, visible);
    area.left = visible.left;
    area.right = visible.right;
    area.top = visible.top;
    area.bottom = visible.bottom;
  }
  const group = /** @type {Element} */ (view.svg.querySelector(".dd-marks"));
  const matches = view.nav.matchSet;
  if (dots) group.replaceChildren(...dotsDrawing(s, items, view));
  else {
    // Marks still near the view are moved, not rebuilt. A mark depends on its item (a new
    // layout makes new items) and on the matches (a new set when they change).
    const { radius } = layout.geometry;
    const cache = view.marks.matches === matches ? view.marks.byItem : new Map();
    /** @type {Map<DagItem, SVGElement>} */
    const kept = new Map();
    group.replaceChildren(
      ...items.map((item) => {
        let mark = cache.get(item);
        if (!mark) {
          mark = item.kind === "run" ? runDrawing(s, item, radius) : markDrawing(s, item.node, item, radius);
          if (matches && (item.kind === "run" ? view.nav.matchRuns.has(item.id) : matches.has(item.id)))
            mark.classList.add("dd-match");
          if (item.kind === "node" && layout.path.has(item.id)) mark.classList.add("dd-on-path");
        }
        kept.set(item, mark);
        return mark;
      }),
    );
    view.marks = { byItem: kept, matches };
  }
  view.svg.classList.toggle("dd-dots", dots);
  view.svg.classList.toggle("dd-filtering", Boolean(matches));
  view.drawnArea = area;
  placeRings(view);
}

/**
 * Far out: every checkpoint a dot, one path per kind (plain, error, interrupt, match, run).
 * @param {S} s @param {DagItem[]} items @param {View} view
 */
function dotsDrawing(s, items, view) {
  /** @type {Record<string, string[]>} */
  const kinds = { plain: [], run: [], interrupt: [], error: [], match: [] };
  const matches = view.nav.matchSet;
  for (const item of items) {
    const dot = `M${item.x} ${item.y}h0`;
    if (item.kind === "run") kinds.run.push(dot);
    else if (item.node.errors > 0) kinds.error.push(dot);
    else if (item.node.interrupts > 0) kinds.interrupt.push(dot);
    else kinds.plain.push(dot);
    if (matches && (item.kind === "run" ? view.nav.matchRuns.has(item.id) : matches.has(item.id)))
      kinds.match.push(dot);
  }
  return Object.entries(kinds).map(([kind, parts]) =>
    s("path", { class: `dd-dot dd-dot-${kind}`, d: parts.join("") }),
  );
}

/** @param {Area} outer @param {Area} inner */
function contains(outer, inner) {
  return (
    inner.left >= outer.left &&
    inner.right <= outer.right &&
    inner.top >= outer.top &&
    inner.bottom <= outer.bottom
  );
}

/** Redraw marks (and the overview's viewport) at most once per frame while the user scrolls. @param {View} view */
export function scheduleMarks(view) {
  if (view.frame) return;
  const win = view.doc.defaultView;
  const raf =
    win && typeof win.requestAnimationFrame === "function"
      ? (/** @type {() => void} */ fn) => win.requestAnimationFrame(fn)
      : (/** @type {() => void} */ fn) => setTimeout(fn, 16);
  const cancel =
    win && typeof win.cancelAnimationFrame === "function"
      ? (/** @type {any} */ id) => win.cancelAnimationFrame(id)
      : (/** @type {any} */ id) => clearTimeout(id);
  const id = raf(() => {
    view.frame = null;
    drawMarks(view);
  });
  view.frame = { cancel: () => cancel(id) };
}

/**
 * One checkpoint's mark: a shape per source with its letter, the step above, the writers below,
 * badges for interrupts and errors, a ring on branch heads. Built as elements: ids and node
 * names are text and attribute values, never markup.
 * @param {S} s
 * @param {DagNode} node
 * @param {{x: number, y: number}} at
 * @param {number} r
 * @returns {SVGElement}
 */
function markDrawing(s, node, at, r) {
  const classes = ["dd-mark", `dd-src-${SOURCE_LETTER[node.source] ? node.source : "loop"}`];
  if (node.interrupts > 0) classes.push("dd-has-interrupt");
  if (node.errors > 0) classes.push("dd-has-error");
  if (node.findings) classes.push("dd-has-finding");
  if (node.is_head) classes.push("dd-head");
  if (node.is_latest) classes.push("dd-latest");
  const mark = s("g", {
    class: classes.join(" "),
    "data-id": node.id,
    transform: `translate(${at.x} ${at.y})`,
  });
  if (node.is_head) mark.append(s("circle", { class: "dd-head-ring", r: r + 4 }));
  mark.append(
    shapeDrawing(s, node.source, r),
    s("text", { class: "dd-letter", dy: "0.35em" }, SOURCE_LETTER[node.source] || "?"),
    s("text", { class: "dd-step", y: -r - 11 }, String(node.step)),
  );
  if (node.writers && node.writers.length) {
    mark.append(
      s("text", { class: "dd-writers", y: r + 19 }, truncate(displayName(node.writers.join(",")), 10)),
    );
  }
  if (node.interrupts > 0) {
    mark.append(
      s(
        "g",
        { class: "dd-badge dd-badge-interrupt", transform: `translate(${r} ${-r})` },
        s("circle", { r: 6 }),
        s("text", { dy: "0.35em" }, String(node.interrupts)),
      ),
    );
  }
  if (node.errors > 0) {
    mark.append(
      s(
        "g",
        { class: "dd-badge dd-badge-error", transform: `translate(${-r} ${-r})` },
        s("circle", { r: 6 }),
        s("text", { dy: "0.35em" }, "!"),
      ),
    );
  }
  if (node.findings) {
    // Something LangGraph let pass silently here (a dropped write, an ignored resume…).
    mark.append(
      s(
        "g",
        { class: "dd-badge dd-badge-finding", transform: `translate(${r} ${r})` },
        s("circle", { r: 6 }),
        s("text", { dy: "0.35em" }, "⚑"),
        s("title", {}, plural(node.findings, "finding")),
      ),
    );
  }
  if (node.graph_changed) {
    // The graph's structure (nodes, edges, channels) differs from the parent checkpoint's.
    mark.append(
      s(
        "text",
        { class: "dd-graph-changed", x: -r - 9, dy: "0.35em" },
        "Δ",
        s("title", {}, "graph version changed"),
      ),
    );
  }
  if (node.is_latest) mark.append(s("text", { class: "dd-latest-label", y: r + 31 }, "latest"));
  return mark;
}

/** @param {S} s @param {string} source @param {number} r */
function shapeDrawing(s, source, r) {
  if (source === "input")
    return s("rect", { class: "dd-shape", x: -r, y: -r, width: 2 * r, height: 2 * r, rx: 2 });
  if (source === "update")
    return s("polygon", { class: "dd-shape", points: `0 ${-r - 2} ${r + 2} 0 0 ${r + 2} ${-r - 2} 0` });
  if (source === "fork")
    return s("polygon", { class: "dd-shape", points: `0 ${-r - 2} ${r + 2} ${r} ${-r - 2} ${r}` });
  return s("circle", { class: "dd-shape", r });
}

/**
 * A collapsed linear run: a pill with its count. Clicking it expands its depths.
 * @param {S} s @param {DagItem} run @param {number} r
 * @returns {SVGElement}
 */
function runDrawing(s, run, r) {
  const label = String(run.count);
  const half = Math.max(r + 4, 4 + label.length * 3.5);
  const steps =
    run.node.step === run.last.step ? `step ${run.node.step}` : `steps ${run.node.step}–${run.last.step}`;
  return s(
    "g",
    {
      class: "dd-run",
      "data-run": run.id,
      transform: `translate(${run.x} ${run.y})`,
      role: "button",
      "aria-label": `${run.count} checkpoints, ${steps}: expand`,
    },
    s("rect", { class: "dd-run-shape", x: -half, y: -r + 1, width: 2 * half, height: 2 * r - 2, rx: r - 1 }),
    s("text", { class: "dd-run-count", dy: "0.35em" }, label),
    s("text", { class: "dd-step", y: -r - 11 }, steps.replace("steps ", "").replace("step ", "")),
    s("title", {}, `${plural(run.count, "checkpoint")} in a row, ${steps}: click to expand`),
  );
}

/** Move the selection and diff rings onto their checkpoints (or the runs that hold them). @param {View} view */
export function placeRings(view) {
  if (!view.svg || !view.layout) return;
  /** @type {Array<[Element | null, string]>} */
  const rings = [
    [view.svg.querySelector(".dd-ring-selected"), view.selected],
    [view.svg.querySelector(".dd-ring-diff"), view.diffTarget],
  ];
  for (const [ring, id] of rings) {
    if (!ring) continue;
    const at = id ? placeOf(view.layout, id) : undefined;
    ring.setAttribute("visibility", at ? "visible" : "hidden");
    if (at) ring.setAttribute("transform", `translate(${at.x} ${at.y})`);
  }
  placePausedMarker(view);
  for (const old of view.svg.querySelectorAll(".dd-mark[aria-current]")) old.removeAttribute("aria-current");
  const mark = view.selected ? markElement(view, view.selected) : null;
  if (mark) mark.setAttribute("aria-current", "true");
}

/** @param {View} view @param {string} id */
function markElement(view, id) {
  if (!view.svg) return null;
  for (const mark of view.svg.querySelectorAll(".dd-mark")) {
    if (mark.getAttribute("data-id") === id) return mark;
  }
  return null;
}

/**
 * Show a checkpoint inside a collapsed run as its own mark (the run splits around it).
 * @param {View} view @param {string} id
 */
export function reveal(view, id) {
  const item = view.layout && view.layout.itemOf.get(id);
  if (!item || item.kind !== "run") return;
  view.nav.revealed.add(id);
  relayout(view, "");
}

/**
 * Scroll the DAG so that a checkpoint is in view (centred when it was not), first revealing
 * it when it sits inside a collapsed run.
 * @param {View} view @param {string} id
 */
export function scrollToCheckpoint(view, id) {
  if (!view.layout) return;
  reveal(view, id);
  const at = placeOf(view.layout, id);
  const box = view.parts.dagScroll;
  if (!at) return;
  if (!box.clientWidth) {
    view.pendingScroll = id; // not laid out yet: the ResizeObserver scrolls once it is
    return;
  }
  view.pendingScroll = "";
  const zoom = view.nav.zoom;
  const x = at.x * zoom;
  const y = at.y * zoom;
  const margin = view.layout.geometry.col * Math.max(zoom, 0.5);
  if (x < box.scrollLeft + margin || x > box.scrollLeft + box.clientWidth - margin) {
    box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
  }
  if (y < box.scrollTop + margin / 2 || y > box.scrollTop + box.clientHeight - margin / 2) {
    box.scrollTop = Math.max(0, y - box.clientHeight / 2);
  }
  drawMarks(view);
}

/**
 * Show `next` and the writers of the checkpoint under the pointer.
 * @param {View} view @param {EventTarget | null} target
 */
export function showTooltip(view, target) {
  const id = markIdOf(target);
  const layout = view.layout;
  const node = id && layout ? layout.byId.get(id) : undefined;
  if (!node || !layout) return hideTooltip(view);
  const at = /** @type {{x: number, y: number}} */ (layout.pos.get(id));
  const zoom = view.nav.zoom;
  const tip = view.parts.tooltip;
  const lines = [
    `step ${node.step} · ${node.source} · …${shortId(node.id)}`,
    `next: ${node.next && node.next.length ? node.next.join(", ") : "(end)"}`,
  ];
  if (node.writers && node.writers.length) lines.push(`written by: ${node.writers.join(", ")}`);
  if (node.interrupts) lines.push(`${plural(node.interrupts, "pending interrupt")}`);
  if (node.errors) lines.push(`${plural(node.errors, "failed task")}`);
  if (node.findings) lines.push(`${plural(node.findings, "finding")}`);
  if (node.is_latest) lines.push("latest checkpoint of the thread");
  else if (node.is_head) lines.push("head of its branch");
  tip.textContent = lines.join("\n");
  tip.hidden = false;
  // Below the mark, unless that would leave the visible part of the graph.
  const box = view.parts.dagScroll;
  const { radius } = layout.geometry;
  const below = (at.y + radius) * zoom + 4;
  const fitsBelow = !box.clientHeight || below + tip.offsetHeight <= box.scrollTop + box.clientHeight;
  tip.style.left = `${(at.x + radius) * zoom + 8}px`;
  tip.style.top = `${fitsBelow ? below : Math.max(0, (at.y - radius) * zoom - 4 - tip.offsetHeight)}px`;
}

/** @param {View} view */
export function hideTooltip(view) {
  view.parts.tooltip.hidden = true;
}

/** The checkpoint id of the mark under an event target, if any. @param {EventTarget | null} target */
function markIdOf(target) {
  const el = /** @type {Element | null} */ (target && /** @type {any} */ (target).closest ? target : null);
  const mark = el ? el.closest(".dd-mark") : null;
  return mark ? mark.getAttribute("data-id") || "" : "";
}

/**
 * Move the selection ring; scroll to it unless the user just clicked it (the mouse is there).
 * @param {View} view @param {string} id @param {boolean} [scroll]
 */
export function showSelected(view, id, scroll = true) {
  if (view.selected === id) return;
  view.selected = id;
  placeRings(view);
  if (id && scroll) scrollToCheckpoint(view, id);
}

/**
 * The "paused at a breakpoint" marker: a pause tag beside the checkpoint the thread waits at
 * (`pausedAt`), saying before or after which node; hidden when nothing is paused.
 * @param {View} view
 */
export function placePausedMarker(view) {
  const marker = view.svg && view.svg.querySelector(".dd-paused-marker");
  if (!marker || !view.layout) return;
  const paused = pausedAt(view);
  const at = paused ? placeOf(view.layout, paused.id) : undefined;
  marker.setAttribute("visibility", paused && at ? "visible" : "hidden");
  if (!paused || !at) return;
  const text = `paused ${paused.when} ${paused.nodes.map((node) => shortName(node)).join(", ")}`;
  const label = /** @type {SVGTextElement} */ (marker.querySelector("text"));
  label.textContent = text;
  const rect = /** @type {SVGRectElement} */ (marker.querySelector("rect"));
  // The text's own length where the page can measure it (a guess from its characters elsewhere).
  const measured = typeof label.getComputedTextLength === "function" ? label.getComputedTextLength() : 0;
  const width = Math.round((measured || text.length * 6.4) + 26);
  rect.setAttribute("width", String(width));
  // Above the mark, to its right; moved left as far as it would pass the drawing's right edge
  // (the newest checkpoint is the rightmost, and a tag past the edge was cut off).
  const past = Math.max(0, at.x + Number(rect.getAttribute("x")) + width + 4 - view.layout.width);
  marker.setAttribute("transform", `translate(${at.x - past} ${at.y})`);
}
