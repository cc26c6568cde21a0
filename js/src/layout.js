// @ts-check
// Placing the checkpoint DAG: a row per branch, a column (slot) per shown depth, linear runs
// collapsed into one mark. Pure functions of the node objects: no DOM.
//
// Rows. A branch is a chain of checkpoints: at every checkpoint the oldest child (smallest id:
// ids sort by creation time) continues its parent's branch and each younger child starts a new
// one, as in `inspect.dag_layout`. Branches get rows in depth-first order of the branch tree,
// each branch directly followed by its child branches, the one that leaves it latest first.
// A fork edge from row r (at depth f) into row r' then only passes rows of branches that left
// the same parent at depth f or later, whose checkpoints all lie right of depth f + 1: fork
// edges cross no other branch.
//
// Columns. A depth is shown when a checkpoint there stands out (a root, a fork point or the
// start of a branch, a branch head, the latest checkpoint, an error, an interrupt, an input,
// update or fork, a changed graph, or one the caller reveals), with CONTEXT depths on each
// side. Every other stretch of at least MIN_RUN depths is one column: each branch there is a
// linear run, drawn as one mark with its count. Expanding a run shows its depths in every row,
// so a column is the same depth in every branch.

import { DAG_GEOMETRY } from "./types.js";

/** @typedef {import("./types.js").Dag} Dag */
/** @typedef {import("./types.js").DagNode} DagNode */
/** @typedef {import("./types.js").DagLayout} DagLayout */
/** @typedef {import("./types.js").DagItem} DagItem */
/** @typedef {import("./types.js").Area} Area */

/**
 * The kinds the DAG can be filtered by: pending interrupts, failed tasks, and forks (a fork or
 * an update: a checkpoint a person made rather than the loop).
 * @type {Record<string, (node: DagNode) => boolean>}
 */
export const FILTERS = {
  error: (node) => node.errors > 0,
  interrupt: (node) => node.interrupts > 0,
  fork: (node) => node.source === "fork" || node.source === "update",
};

/** Depths shown on each side of a checkpoint that stands out. */
export const CONTEXT = 1;
/** The shortest stretch of plain depths drawn as one run mark. */
export const MIN_RUN = 3;

/**
 * @typedef {{
 *   collapse?: boolean,
 *   reveal?: Iterable<string>,
 *   expanded?: Array<[number, number]>,
 *   geometry?: typeof DAG_GEOMETRY,
 * }} LayoutOptions
 * `collapse` (default true) draws linear runs as one mark; `reveal` ids are shown even inside a
 * run; `expanded` depth ranges [from, to] are never collapsed.
 */

/**
 * Place a Dag in O(n log n): rows, columns, run marks, edges and the lookups the view needs.
 * @param {Dag | null | undefined} dag
 * @param {LayoutOptions} [options]
 * @returns {DagLayout}
 */
export function layoutDag(dag, options = {}) {
  const geometry = options.geometry || DAG_GEOMETRY;
  const { col, row: rowPitch, pad } = geometry;
  const nodes = (dag && dag.nodes) || [];
  /** @type {Map<string, DagNode>} */
  const byId = new Map();
  for (const node of nodes) byId.set(node.id, node);
  /** @type {Map<string, DagNode[]>} */
  const children = new Map();
  /** @type {DagNode[]} */
  const roots = [];
  for (const node of nodes) {
    if (node.parent != null && node.parent !== node.id && byId.has(node.parent)) {
      const kids = children.get(node.parent);
      if (kids) kids.push(node);
      else children.set(node.parent, [node]);
    } else roots.push(node);
  }
  const byAge = (/** @type {DagNode} */ a, /** @type {DagNode} */ b) =>
    a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  for (const kids of children.values()) if (kids.length > 1) kids.sort(byAge);
  roots.sort(byAge);

  // Branches: walk each chain from its start; younger children start branches of their own.
  /** @type {Map<string, number>} */
  const depthOf = new Map();
  /** @type {Array<{ nodes: DagNode[], parent: number, fork: DagNode | null, kids: number[] }>} */
  const branches = [];
  /** @type {Map<string, number>} */
  const branchOf = new Map();
  /** @type {Array<[DagNode, number, DagNode | null]>} start, parent branch, fork point */
  const starts = roots.map((root) => /** @type {[DagNode, number, DagNode | null]} */ ([root, -1, null]));
  starts.reverse();
  let maxDepth = -1;
  while (starts.length) {
    const [start, parentBranch, fork] = /** @type {[DagNode, number, DagNode | null]} */ (starts.pop());
    const index = branches.length;
    const branch = { nodes: /** @type {DagNode[]} */ ([]), parent: parentBranch, fork, kids: [] };
    branches.push(branch);
    if (parentBranch >= 0) branches[parentBranch].kids.push(index);
    let depth = fork ? /** @type {number} */ (depthOf.get(fork.id)) + 1 : 0;
    /** @type {DagNode | undefined} */
    let current = start;
    while (current && !depthOf.has(current.id)) {
      depthOf.set(current.id, depth);
      branchOf.set(current.id, index);
      branch.nodes.push(current);
      const kids = children.get(current.id) || [];
      for (let k = kids.length - 1; k >= 1; k--) starts.push([kids[k], index, current]);
      current = kids[0];
      depth++;
    }
    maxDepth = Math.max(maxDepth, depth - 1);
  }
  // A node on a parent cycle is unreachable from a root: give it a branch of its own so that
  // bad input still draws (and says nothing wrong about the rest).
  for (const node of nodes) {
    if (depthOf.has(node.id)) continue;
    depthOf.set(node.id, 0);
    branchOf.set(node.id, branches.length);
    branches.push({ nodes: [node], parent: -1, fork: null, kids: [] });
    maxDepth = Math.max(maxDepth, 0);
  }

  // Rows: depth-first over the branch tree, the child that leaves latest next to its parent.
  const forkDepth = (/** @type {number} */ b) => {
    const fork = branches[b].fork;
    return fork ? /** @type {number} */ (depthOf.get(fork.id)) : -1;
  };
  /** @type {number[]} */
  const rowOfBranch = new Array(branches.length);
  /** @type {number[]} */
  const stack = [];
  for (let b = branches.length - 1; b >= 0; b--) if (branches[b].parent < 0) stack.push(b);
  let rowCount = 0;
  while (stack.length) {
    const b = /** @type {number} */ (stack.pop());
    rowOfBranch[b] = rowCount++;
    const kids = branches[b].kids.slice();
    // Latest fork first (nearest); among forks at one depth, the younger branch first.
    kids.sort((x, y) => forkDepth(y) - forkDepth(x) || byAge(branches[y].nodes[0], branches[x].nodes[0]));
    for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
  }

  // Which depths are shown.
  const shown = new Uint8Array(maxDepth + 1);
  const showAround = (/** @type {number} */ depth) => {
    for (let d = Math.max(0, depth - CONTEXT); d <= Math.min(maxDepth, depth + CONTEXT); d++) shown[d] = 1;
  };
  /** @type {DagNode | null} */
  let latest = null;
  for (const node of nodes) if (node.is_latest) latest = node;
  if (!latest) for (const node of nodes) if (!latest || node.id > latest.id) latest = node;
  if (options.collapse === false) shown.fill(1);
  else {
    for (const node of nodes) {
      const kids = children.get(node.id);
      if (
        !kids ||
        kids.length !== 1 ||
        node.parent == null ||
        !byId.has(node.parent) ||
        node.errors > 0 ||
        node.interrupts > 0 ||
        node.source !== "loop" ||
        node.graph_changed ||
        node === latest
      ) {
        showAround(/** @type {number} */ (depthOf.get(node.id)));
      }
    }
    for (const branch of branches) showAround(/** @type {number} */ (depthOf.get(branch.nodes[0].id)));
    for (const id of options.reveal || []) {
      const depth = depthOf.get(id);
      if (depth !== undefined) showAround(depth);
    }
    for (const [from, to] of options.expanded || []) {
      for (let d = Math.max(0, from); d <= Math.min(maxDepth, to); d++) shown[d] = 1;
    }
  }

  // Columns: a shown depth is a column; a stretch of MIN_RUN or more hidden depths is one.
  const slotOfDepth = new Int32Array(maxDepth + 1);
  /** @type {Array<{ from: number, to: number, slot: number }>} */
  const gaps = [];
  const gapOfDepth = new Int32Array(maxDepth + 1).fill(-1);
  let slotCount = 0;
  for (let d = 0; d <= maxDepth;) {
    let end = d;
    if (!shown[d]) while (end + 1 <= maxDepth && !shown[end + 1]) end++;
    if (!shown[d] && end - d + 1 >= MIN_RUN) {
      gaps.push({ from: d, to: end, slot: slotCount });
      for (let k = d; k <= end; k++) {
        slotOfDepth[k] = slotCount;
        gapOfDepth[k] = gaps.length - 1;
      }
      slotCount++;
      d = end + 1;
    } else {
      slotOfDepth[d] = slotCount++;
      d++;
    }
  }

  // Items: a node mark per shown checkpoint, a run mark per branch and collapsed stretch.
  /** @type {DagItem[]} */
  const items = [];
  /** @type {DagItem[][]} */
  const slots = Array.from({ length: slotCount }, () => []);
  /** @type {Map<string, {x: number, y: number}>} */
  const pos = new Map();
  /** @type {Map<string, DagItem>} */
  const itemOf = new Map();
  /** @type {DagItem[][]} */
  const rows = new Array(rowCount);
  /** @type {DagNode[][]} */
  const rowNodes = new Array(rowCount);
  const edges = [];
  for (let b = 0; b < branches.length; b++) {
    const r = rowOfBranch[b];
    const y = pad + r * rowPitch;
    /** @type {DagItem[]} */
    const rowItems = [];
    /** @type {DagItem | null} */
    let run = null;
    for (const node of branches[b].nodes) {
      const depth = /** @type {number} */ (depthOf.get(node.id));
      const gap = gapOfDepth[depth];
      const slot = slotOfDepth[depth];
      const x = pad + slot * col;
      if (gap >= 0 && run && run.gap === gap) {
        run.count++;
        run.last = node;
        itemOf.set(node.id, run);
        continue;
      }
      /** @type {DagItem} */
      const item =
        gap >= 0
          ? {
              kind: "run",
              id: `run:${r}:${gaps[gap].from}`,
              node,
              last: node,
              count: 1,
              gap,
              slot,
              row: r,
              x,
              y,
            }
          : { kind: "node", id: node.id, node, last: node, count: 1, gap: -1, slot, row: r, x, y };
      run = gap >= 0 ? item : null;
      rowItems.push(item);
      itemOf.set(node.id, item);
    }
    for (const item of rowItems) {
      // A one-checkpoint run is just that checkpoint.
      if (item.kind === "run" && item.count === 1) {
        item.kind = "node";
        item.id = item.node.id;
      }
      if (item.kind === "node") pos.set(item.node.id, { x: item.x, y: item.y });
      items.push(item);
      slots[item.slot].push(item);
    }
    rows[r] = rowItems;
    rowNodes[r] = branches[b].nodes;
    if (rowItems.length > 1) edges.push(`M${rowItems[0].x} ${y}H${rowItems[rowItems.length - 1].x}`);
  }
  const forks = [];
  for (let b = 0; b < branches.length; b++) {
    const fork = branches[b].fork;
    if (!fork) continue;
    const from = /** @type {DagItem} */ (itemOf.get(fork.id));
    const to = /** @type {DagItem} */ (itemOf.get(branches[b].nodes[0].id));
    forks.push(forkCurve(from, to));
  }

  // The path from the root to the latest checkpoint.
  /** @type {Set<string>} */
  const path = new Set();
  const pathEdges = [];
  for (
    let node = latest;
    node && !path.has(node.id);
    node = node.parent != null ? byId.get(node.parent) : undefined
  ) {
    path.add(node.id);
    const parent = node.parent != null ? byId.get(node.parent) : undefined;
    if (!parent) break;
    const from = /** @type {DagItem} */ (itemOf.get(parent.id));
    const to = /** @type {DagItem} */ (itemOf.get(node.id));
    if (from === to) continue;
    pathEdges.push(from.y === to.y ? `M${from.x} ${from.y}H${to.x}` : forkCurve(from, to));
  }

  return {
    byId,
    children,
    depthOf,
    pos,
    itemOf,
    items,
    slots,
    rows,
    rowNodes,
    gaps,
    path,
    latest: latest ? latest.id : "",
    edgePath: edges.join(""),
    forkPath: forks.join(""),
    pathPath: pathEdges.join(""),
    rowCount,
    width: pad * 2 + Math.max(slotCount - 1, 0) * col,
    height: pad * 2 + Math.max(rowCount - 1, 0) * rowPitch,
    geometry,
  };
}

/** @param {{x: number, y: number}} from @param {{x: number, y: number}} to */
function forkCurve(from, to) {
  const bend = (to.x - from.x) / 2;
  return `M${from.x} ${from.y}C${from.x + bend} ${from.y} ${to.x - bend} ${to.y} ${to.x} ${to.y}`;
}

/**
 * The marks (checkpoints and runs) inside an area of the SVG, found through the columns: the
 * cost is the number of columns crossed times the rows there, never the thread's length.
 * @param {DagLayout} layout
 * @param {Area} area
 * @returns {DagItem[]}
 */
export function itemsInArea(layout, area) {
  const { col, pad } = layout.geometry;
  const first = Math.max(0, Math.floor((area.left - pad) / col) - 1);
  const last = Math.min(layout.slots.length - 1, Math.ceil((area.right - pad) / col) + 1);
  const out = [];
  for (let slot = first; slot <= last; slot++) {
    for (const item of layout.slots[slot]) {
      if (item.y >= area.top - pad && item.y <= area.bottom + pad) out.push(item);
    }
  }
  return out;
}

/**
 * The mark at a point of the SVG (within a mark's reach), if any.
 * @param {DagLayout} layout @param {number} x @param {number} y
 * @returns {DagItem | null}
 */
export function itemAt(layout, x, y) {
  const { col, row, pad, radius } = layout.geometry;
  const slot = Math.round((x - pad) / col);
  const r = Math.round((y - pad) / row);
  for (const item of layout.slots[slot] || []) {
    if (item.row === r && Math.abs(item.x - x) <= radius + 8 && Math.abs(item.y - y) <= radius + 8)
      return item;
  }
  return null;
}

/**
 * Where a checkpoint is drawn: its own mark, or the run mark that holds it.
 * @param {DagLayout} layout @param {string} id
 * @returns {{x: number, y: number} | undefined}
 */
export function placeOf(layout, id) {
  const item = layout.itemOf.get(id);
  return item ? { x: item.x, y: item.y } : undefined;
}

/**
 * The checkpoint an arrow key leads to: left = parent, right = child (same row first),
 * up/down = the checkpoint of the neighbouring row nearest in depth. With nothing selected,
 * any arrow picks the latest checkpoint. The answer may sit inside a collapsed run.
 * @param {DagLayout} layout
 * @param {string} id
 * @param {string} key
 * @returns {string} "" when there is nowhere to go
 */
export function neighbour(layout, id, key) {
  const node = layout.byId.get(id);
  if (!node) return layout.latest;
  if (key === "ArrowLeft") return node.parent != null && layout.byId.has(node.parent) ? node.parent : "";
  const item = /** @type {DagItem} */ (layout.itemOf.get(id));
  if (key === "ArrowRight") {
    const kids = layout.children.get(node.id) || [];
    const sameRow = kids.find((kid) => layout.itemOf.get(kid.id)?.row === item.row);
    return (sameRow || kids[0] || { id: "" }).id;
  }
  if (key !== "ArrowUp" && key !== "ArrowDown") return "";
  const chain = layout.rowNodes[item.row + (key === "ArrowUp" ? -1 : 1)];
  if (!chain || !chain.length) return "";
  const depth = /** @type {number} */ (layout.depthOf.get(id));
  const first = /** @type {number} */ (layout.depthOf.get(chain[0].id));
  return chain[Math.max(0, Math.min(chain.length - 1, depth - first))].id;
}

/**
 * The collapsed depth range of a run mark, to expand it: [from, to].
 * @param {DagLayout} layout @param {DagItem} run
 * @returns {[number, number]}
 */
export function runRange(layout, run) {
  const gap = layout.gaps[run.gap];
  return [gap.from, gap.to];
}
