// @ts-check
// The checkpoint DAG

import { readDag } from "./dag-wire.js";
import { plural, shortId, svgHyperscript, truncate } from "./helpers.js";
import { requestDiff, selectCheckpoint } from "./select.js";
import { drawStatus } from "./status.js";
import { DAG_GEOMETRY, SOURCE_LETTER, SVG_NS } from "./types.js";

/** @typedef {import("./helpers.js").S} S */
/** @typedef {import("./index.js").H} H */
/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").Area} Area */
/** @typedef {import("./types.js").Dag} Dag */
/** @typedef {import("./types.js").DagLayout} DagLayout */
/** @typedef {import("./types.js").DagNode} DagNode */
/**
 * Positions, edges and neighbour maps for a Dag: columns are depths, rows are lanes.
 * @param {Dag} dag
 * @param {typeof DAG_GEOMETRY} [geometry]
 * @returns {DagLayout}
 */
export function layoutDag(dag, geometry = DAG_GEOMETRY) {
  const { col, row, pad } = geometry;
  const nodes = (dag && dag.nodes) || [];
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const pos = new Map();
  const children = new Map();
  const lanes = new Map();
  /** @type {DagNode[][]} */
  const columns = [];
  let maxDepth = 0;
  let maxLane = 0;
  for (const node of nodes) {
    pos.set(node.id, { x: pad + node.depth * col, y: pad + node.lane * row });
    maxDepth = Math.max(maxDepth, node.depth);
    maxLane = Math.max(maxLane, node.lane);
    if (!lanes.has(node.lane)) lanes.set(node.lane, []);
    lanes.get(node.lane).push(node);
    (columns[node.depth] ||= []).push(node);
    if (node.parent != null && byId.has(node.parent)) {
      if (!children.has(node.parent)) children.set(node.parent, []);
      children.get(node.parent).push(node);
    }
  }
  for (const laneNodes of lanes.values()) laneNodes.sort((a, b) => a.depth - b.depth);

  const edges = [];
  const forks = [];
  for (const node of nodes) {
    const from = node.parent != null ? pos.get(node.parent) : undefined;
    if (!from) continue;
    const to = pos.get(node.id);
    if (from.y === to.y) {
      edges.push(`M${from.x} ${from.y}H${to.x}`);
    } else {
      const bend = (to.x - from.x) / 2;
      forks.push(`M${from.x} ${from.y}C${from.x + bend} ${from.y} ${to.x - bend} ${to.y} ${to.x} ${to.y}`);
    }
  }
  const depth = Math.max(dag?.depth || 0, nodes.length ? maxDepth + 1 : 0);
  const laneCount = Math.max(dag?.lanes || 0, nodes.length ? maxLane + 1 : 0);
  return {
    byId,
    pos,
    children,
    lanes,
    columns,
    edgePath: edges.join(""),
    forkPath: forks.join(""),
    width: pad * 2 + Math.max(depth - 1, 0) * col,
    height: pad * 2 + Math.max(laneCount - 1, 0) * row,
  };
}

/**
 * Draw `_dag` as one SVG: the edges as two paths, then the marks of the checkpoints near the
 * visible area (`drawMarks`), so a thread of any length costs the same to show. Clicks and
 * hovers are handled by delegation on the scroll container, never per mark.
 * @param {View} view
 */
export function drawDag(view) {
  /** @type {Dag} */
  const dag = readDag(view.model);
  const layout = layoutDag(dag);
  const { radius } = DAG_GEOMETRY;
  const svg = /** @type {SVGSVGElement} */ (view.doc.createElementNS(SVG_NS, "svg"));
  svg.setAttribute("class", "dd-dag");
  svg.setAttribute("width", String(layout.width));
  svg.setAttribute("height", String(dag.nodes.length ? layout.height : 0));
  svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  // Exposed for tools that scroll to a checkpoint that is not drawn yet (bench/widget_render.py).
  for (const [name, value] of Object.entries(DAG_GEOMETRY)) svg.dataset[name] = String(value);
  const s = svgHyperscript(view.doc);
  svg.append(
    s("path", { class: "dd-edges", d: layout.edgePath }),
    s("path", { class: "dd-edges dd-fork-edges", d: layout.forkPath }),
    s("g", { class: "dd-marks" }),
    s("circle", { class: "dd-ring dd-ring-diff", r: radius + 9, visibility: "hidden" }),
    s("circle", { class: "dd-ring dd-ring-selected", r: radius + 7, visibility: "hidden" }),
  );

  const canvas = view.parts.dagCanvas;
  canvas.style.width = `${layout.width}px`;
  canvas.style.height = `${dag.nodes.length ? layout.height : 0}px`;
  if (view.svg) view.svg.replaceWith(svg);
  else canvas.prepend(svg);
  const firstDraw = view.layout === null;
  view.svg = svg;
  view.layout = layout;
  view.drawnArea = null;
  hideTooltip(view);

  view.parts.dagScroll.dataset.empty = dag.nodes.length ? "false" : "true";
  if (!layout.byId.has(view.selected)) view.selected = "";
  if (!layout.byId.has(view.diffTarget)) view.diffTarget = "";
  drawStatus(view);
  // At first show the selection (else the latest checkpoint); follow new ones while a rerun runs.
  const latest = dag.nodes.find((node) => node.is_latest);
  const latestId = latest ? latest.id : "";
  const focus = view.model.get("_running") ? latestId : firstDraw ? view.selected || latestId : view.selected;
  // The first view without a selection shows the path that leads to the latest checkpoint:
  // the latest near the right edge, as much of its history as fits to its left.
  if (focus) scrollToCheckpoint(view, focus, firstDraw && !view.selected && focus === latestId);
  drawMarks(view);
}

/**
 * (Re)draw the marks around the visible part of the DAG: the visible area plus one screen on
 * every side, so scrolling redraws only once the user leaves that margin.
 * @param {View} view
 */
export function drawMarks(view) {
  if (!view.svg || !view.layout) return;
  const visible = visibleArea(view);
  if (view.drawnArea && contains(view.drawnArea, visible)) return;
  const width = visible.right - visible.left;
  const height = visible.bottom - visible.top;
  const area = {
    left: visible.left - width,
    right: visible.right + width,
    top: visible.top - height,
    bottom: visible.bottom + height,
  };
  const { radius } = DAG_GEOMETRY;
  const s = svgHyperscript(view.doc);
  const marks = nodesInArea(view.layout, area).map((node) =>
    markDrawing(s, node, view.layout.pos.get(node.id), radius),
  );
  view.svg.querySelector(".dd-marks").replaceChildren(...marks);
  view.drawnArea = area;
  placeRings(view);
}

/**
 * The part of the DAG the user can see. Before the browser has laid the widget out (or in a
 * DOM without layout), assume a large screen at the current scroll position.
 * @param {View} view
 * @returns {Area}
 */
function visibleArea(view) {
  const box = view.parts.dagScroll;
  const width = box.clientWidth || 1600;
  const height = box.clientHeight || 800;
  return {
    left: box.scrollLeft,
    top: box.scrollTop,
    right: box.scrollLeft + width,
    bottom: box.scrollTop + height,
  };
}

/**
 * The checkpoints whose marks fall inside an area of the SVG.
 * @param {DagLayout} layout
 * @param {Area} area
 * @returns {DagNode[]}
 */
export function nodesInArea(layout, area) {
  const { col, pad } = DAG_GEOMETRY;
  const first = Math.max(0, Math.floor((area.left - pad) / col) - 1);
  const last = Math.min(layout.columns.length - 1, Math.ceil((area.right - pad) / col) + 1);
  const out = [];
  for (let depth = first; depth <= last; depth++) {
    for (const node of layout.columns[depth] || []) {
      const at = layout.pos.get(node.id);
      if (at.y >= area.top - pad && at.y <= area.bottom + pad) out.push(node);
    }
  }
  return out;
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

/** Redraw marks at most once per frame while the user scrolls. @param {View} view */
export function scheduleMarks(view) {
  if (view.frame) return;
  const win = view.doc.defaultView;
  const raf =
    win && typeof win.requestAnimationFrame === "function"
      ? (fn) => win.requestAnimationFrame(fn)
      : (fn) => setTimeout(fn, 16);
  const cancel =
    win && typeof win.cancelAnimationFrame === "function"
      ? (id) => win.cancelAnimationFrame(id)
      : (id) => clearTimeout(id);
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
    mark.append(s("text", { class: "dd-writers", y: r + 19 }, truncate(node.writers.join(","), 10)));
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

/** Move the selection and diff rings onto their checkpoints. @param {View} view */
export function placeRings(view) {
  if (!view.svg || !view.layout) return;
  /** @type {Array<[Element | null, string]>} */
  const rings = [
    [view.svg.querySelector(".dd-ring-selected"), view.selected],
    [view.svg.querySelector(".dd-ring-diff"), view.diffTarget],
  ];
  for (const [ring, id] of rings) {
    if (!ring) continue;
    const at = id ? view.layout.pos.get(id) : undefined;
    ring.setAttribute("visibility", at ? "visible" : "hidden");
    if (at) ring.setAttribute("transform", `translate(${at.x} ${at.y})`);
  }
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
 * Scroll the DAG so that a checkpoint is in view (centred, or near the right edge with what
 * leads to it on its left when `atEnd`).
 * @param {View} view @param {string} id @param {boolean} [atEnd]
 */
export function scrollToCheckpoint(view, id, atEnd = false) {
  const at = view.layout && view.layout.pos.get(id);
  const box = view.parts.dagScroll;
  if (!at) return;
  if (!box.clientWidth) {
    view.pendingScroll = id; // not laid out yet: the ResizeObserver scrolls once it is
    return;
  }
  view.pendingScroll = "";
  const margin = DAG_GEOMETRY.col;
  if (atEnd) {
    box.scrollLeft = Math.max(0, at.x - box.clientWidth + 2 * margin);
    box.scrollTop = Math.max(0, at.y - box.clientHeight / 2);
    return;
  }
  if (at.x < box.scrollLeft + margin || at.x > box.scrollLeft + box.clientWidth - margin) {
    box.scrollLeft = Math.max(0, at.x - box.clientWidth / 2);
  }
  if (at.y < box.scrollTop + margin / 2 || at.y > box.scrollTop + box.clientHeight - margin / 2) {
    box.scrollTop = Math.max(0, at.y - box.clientHeight / 2);
  }
}

/** The checkpoint id under an event target, if any. @param {EventTarget | null} target */
function checkpointAt(target) {
  const el = /** @type {Element | null} */ (target && /** @type {any} */ (target).closest ? target : null);
  const mark = el ? el.closest(".dd-mark") : null;
  return mark ? mark.getAttribute("data-id") || "" : "";
}

/**
 * Click selects; shift-click diffs against the selected checkpoint.
 * @param {View} view @param {MouseEvent} event
 */
export function onDagClick(view, event) {
  const id = checkpointAt(event.target);
  if (!id) return;
  if (event.shiftKey && view.selected && view.selected !== id) requestDiff(view, view.selected, id);
  else selectCheckpoint(view, id);
}

/**
 * The checkpoints a "go to" query finds, in drawing order (by depth, then lane): a step number
 * (`12` or `step 12`); `error`, `interrupt` (pending ones); `fork` (forks and updates), `input`,
 * `loop`; else a node name, among the nodes that wrote a checkpoint or run next from it.
 * @param {DagNode[]} nodes @param {string} query @returns {string[]}
 */
export function findCheckpoints(nodes, query) {
  const q = query.trim();
  if (!q) return [];
  const step = /^(?:step\s*)?(-?\d+)$/i.exec(q);
  const word = q.toLowerCase().replace(/s$/, "");
  /** @type {(node: DagNode) => boolean} */
  let test;
  if (step) test = (node) => node.step === Number(step[1]);
  else if (word === "error") test = (node) => node.errors > 0;
  else if (word === "interrupt") test = (node) => node.interrupts > 0;
  else if (word === "fork") test = (node) => node.source === "fork" || node.source === "update";
  else if (word === "input" || word === "loop") test = (node) => node.source === word;
  else test = (node) => (node.writers || []).includes(q) || (node.next || []).includes(q);
  return nodes
    .filter(test)
    .sort((a, b) => a.depth - b.depth || a.lane - b.lane)
    .map((node) => node.id);
}

/**
 * Enter in the "go to" box selects the next checkpoint it finds after the selected one
 * (Shift+Enter the previous), and says which of how many it is.
 * @param {View} view @param {KeyboardEvent} event
 */
export function onFindKey(view, event) {
  if (event.key !== "Enter") return;
  event.preventDefault();
  const dag = readDag(view.model);
  const found = findCheckpoints(dag.nodes, /** @type {HTMLInputElement} */ (view.parts.find).value);
  if (!found.length) {
    view.parts.findCount.textContent = "no checkpoint";
    return;
  }
  const at = found.indexOf(view.selected);
  const step = event.shiftKey ? -1 : 1;
  const next = at < 0 ? (event.shiftKey ? found.length - 1 : 0) : (at + step + found.length) % found.length;
  view.parts.findCount.textContent = `${next + 1} of ${found.length}`;
  selectCheckpoint(view, found[next]);
  scrollToCheckpoint(view, found[next]);
}

/** Arrow keys walk the DAG. @param {View} view @param {KeyboardEvent} event */
export function onDagKey(view, event) {
  if (!view.layout || !event.key.startsWith("Arrow")) return;
  const next = neighbour(view.layout, view.selected, event.key);
  event.preventDefault();
  if (next && next !== view.selected) {
    selectCheckpoint(view, next);
    scrollToCheckpoint(view, next);
  }
}

/**
 * The checkpoint an arrow key leads to: left = parent, right = child (same lane first),
 * up/down = the nearest checkpoint (by depth) in the neighbouring lane. With nothing selected,
 * any arrow picks the latest checkpoint.
 * @param {DagLayout} layout
 * @param {string} id
 * @param {string} key
 * @returns {string} "" when there is nowhere to go
 */
export function neighbour(layout, id, key) {
  const node = layout.byId.get(id);
  if (!node) {
    for (const candidate of layout.byId.values()) if (candidate.is_latest) return candidate.id;
    const first = layout.byId.keys().next();
    return first.done ? "" : first.value;
  }
  if (key === "ArrowLeft") return node.parent != null && layout.byId.has(node.parent) ? node.parent : "";
  if (key === "ArrowRight") {
    const kids = layout.children.get(node.id) || [];
    const sameLane = kids.find((kid) => kid.lane === node.lane);
    return (sameLane || kids[0] || { id: "" }).id;
  }
  if (key !== "ArrowUp" && key !== "ArrowDown") return "";
  const laneNumbers = [...layout.lanes.keys()].sort((a, b) => a - b);
  const at = laneNumbers.indexOf(node.lane) + (key === "ArrowUp" ? -1 : 1);
  const lane = layout.lanes.get(laneNumbers[at]);
  if (!lane) return "";
  let best = lane[0];
  for (const candidate of lane) {
    if (Math.abs(candidate.depth - node.depth) < Math.abs(best.depth - node.depth)) best = candidate;
  }
  return best.id;
}

/**
 * Show `next` and the writers of the checkpoint under the pointer.
 * @param {View} view @param {EventTarget | null} target
 */
export function showTooltip(view, target) {
  const id = checkpointAt(target);
  const node = id && view.layout ? view.layout.byId.get(id) : undefined;
  if (!node) return hideTooltip(view);
  const at = view.layout.pos.get(id);
  const tip = view.parts.tooltip;
  const lines = [
    `step ${node.step} · ${node.source} · …${shortId(node.id)}`,
    `next: ${node.next && node.next.length ? node.next.join(", ") : "(end)"}`,
  ];
  if (node.writers && node.writers.length) lines.push(`written by: ${node.writers.join(", ")}`);
  if (node.interrupts) lines.push(`${plural(node.interrupts, "pending interrupt")}`);
  if (node.errors) lines.push(`${plural(node.errors, "failed task")}`);
  if (node.is_latest) lines.push("latest checkpoint of the thread");
  else if (node.is_head) lines.push("head of its branch");
  tip.textContent = lines.join("\n");
  tip.hidden = false;
  // Below the mark, unless that would leave the visible part of the graph.
  const box = view.parts.dagScroll;
  const below = at.y + DAG_GEOMETRY.radius + 4;
  const fitsBelow = !box.clientHeight || below + tip.offsetHeight <= box.scrollTop + box.clientHeight;
  tip.style.left = `${at.x + DAG_GEOMETRY.radius + 8}px`;
  tip.style.top = `${fitsBelow ? below : Math.max(0, at.y - DAG_GEOMETRY.radius - 4 - tip.offsetHeight)}px`;
}

/** @param {View} view */
export function hideTooltip(view) {
  view.parts.tooltip.hidden = true;
}
