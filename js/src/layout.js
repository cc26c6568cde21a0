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
 * Checkpoints are numbered once (one Map from id to number) and everything after that works
 * on typed arrays of those numbers. A repeated id is drawn once (its first occurrence).
 * @param {Dag | null | undefined} dag
 * @param {LayoutOptions} [options]
 * @returns {DagLayout}
 */
export function layoutDag(dag, options = {}) {
  const geometry = options.geometry || DAG_GEOMETRY;
  const { col, row: rowPitch, pad } = geometry;
  const nodes = (dag && dag.nodes) || [];
  const n = nodes.length;
  /** @type {Map<string, number>} */
  const index = new Map();
  const skip = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (index.has(nodes[i].id)) skip[i] = 1;
    else index.set(nodes[i].id, i);
  }
  const parentOf = new Int32Array(n).fill(-1);
  const kidCount = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (skip[i]) continue;
    const parent = nodes[i].parent;
    const p = parent != null ? index.get(parent) : undefined;
    if (p !== undefined && p !== i) {
      parentOf[i] = p;
      kidCount[p]++;
    }
  }
  // Children as one array, each checkpoint's slice oldest first.
  const kidStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) kidStart[i + 1] = kidStart[i] + kidCount[i];
  const kids = new Int32Array(kidStart[n]);
  const fill = kidStart.slice(0, n);
  for (let i = 0; i < n; i++) if (parentOf[i] >= 0) kids[fill[parentOf[i]]++] = i;
  const older = (/** @type {number} */ a, /** @type {number} */ b) =>
    nodes[a].id < nodes[b].id ? -1 : nodes[a].id > nodes[b].id ? 1 : 0;
  for (let i = 0; i < n; i++) {
    if (kidCount[i] > 1) kids.subarray(kidStart[i], kidStart[i + 1]).sort(older);
  }
  /** @type {number[]} */
  const roots = [];
  for (let i = 0; i < n; i++) if (!skip[i] && parentOf[i] < 0) roots.push(i);
  roots.sort(older);

  // Branches: walk each chain from its start; younger children start branches of their own.
  const depth = new Int32Array(n).fill(-1);
  /** @type {Array<{ nodes: DagNode[], members: number[], parent: number, fork: number, kids: number[] }>} */
  const branches = [];
  /** @type {number[]} start, parent branch, fork point (triples) */
  const starts = [];
  for (let r = roots.length - 1; r >= 0; r--) starts.push(roots[r], -1, -1);
  let maxDepth = -1;
  const walk = (
    /** @type {number} */ start,
    /** @type {number} */ parentBranch,
    /** @type {number} */ fork,
  ) => {
    const b = branches.length;
    const branch = {
      nodes: /** @type {DagNode[]} */ ([]),
      members: /** @type {number[]} */ ([]),
      parent: parentBranch,
      fork,
      kids: /** @type {number[]} */ ([]),
    };
    branches.push(branch);
    if (parentBranch >= 0) branches[parentBranch].kids.push(b);
    let d = fork >= 0 ? depth[fork] + 1 : 0;
    for (let current = start; current >= 0 && depth[current] < 0; d++) {
      depth[current] = d;
      branch.nodes.push(nodes[current]);
      branch.members.push(current);
      for (let k = kidStart[current + 1] - 1; k > kidStart[current]; k--) starts.push(kids[k], b, current);
      current = kidCount[current] ? kids[kidStart[current]] : -1;
    }
    maxDepth = Math.max(maxDepth, d - 1);
  };
  while (starts.length) {
    const fork = /** @type {number} */ (starts.pop());
    const parentBranch = /** @type {number} */ (starts.pop());
    walk(/** @type {number} */ (starts.pop()), parentBranch, fork);
  }
  // A checkpoint on a parent cycle is unreachable from a root: it gets a branch of its own, so
  // that bad input still draws (and says nothing wrong about the rest).
  for (let i = 0; i < n; i++) if (!skip[i] && depth[i] < 0) walk(i, -1, -1);

  // Rows: depth-first over the branch tree, the child that leaves latest next to its parent.
  const forkDepth = (/** @type {number} */ b) => (branches[b].fork >= 0 ? depth[branches[b].fork] : -1);
  const rowOfBranch = new Int32Array(branches.length);
  /** @type {number[]} */
  const stack = [];
  for (let b = branches.length - 1; b >= 0; b--) if (branches[b].parent < 0) stack.push(b);
  let rowCount = 0;
  while (stack.length) {
    const b = /** @type {number} */ (stack.pop());
    rowOfBranch[b] = rowCount++;
    const order = branches[b].kids.slice();
    // Latest fork first (nearest); among forks at one depth, the younger branch first.
    order.sort(
      (x, y) => forkDepth(y) - forkDepth(x) || older(branches[y].members[0], branches[x].members[0]),
    );
    for (let k = order.length - 1; k >= 0; k--) stack.push(order[k]);
  }

  // Which depths are shown.
  const shown = new Uint8Array(maxDepth + 1);
  const showAround = (/** @type {number} */ d) => {
    for (let k = Math.max(0, d - CONTEXT); k <= Math.min(maxDepth, d + CONTEXT); k++) shown[k] = 1;
  };
  let latest = -1;
  for (let i = 0; i < n; i++) if (!skip[i] && nodes[i].is_latest) latest = i;
  if (latest < 0)
    for (let i = 0; i < n; i++) if (!skip[i] && (latest < 0 || nodes[i].id > nodes[latest].id)) latest = i;
  if (options.collapse === false) shown.fill(1);
  else {
    for (let i = 0; i < n; i++) {
      if (skip[i]) continue;
      const node = nodes[i];
      if (
        kidCount[i] !== 1 ||
        parentOf[i] < 0 ||
        node.errors > 0 ||
        node.interrupts > 0 ||
        node.source !== "loop" ||
        node.graph_changed ||
        i === latest
      ) {
        showAround(depth[i]);
      }
    }
    for (const branch of branches) showAround(depth[branch.members[0]]);
    for (const id of options.reveal || []) {
      const i = index.get(id);
      if (i !== undefined) showAround(depth[i]);
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
  /** @type {DagItem[]} */
  const itemAtNode = new Array(n);
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
    for (const i of branches[b].members) {
      const node = nodes[i];
      const gap = gapOfDepth[depth[i]];
      if (gap >= 0 && run && run.gap === gap) {
        run.count++;
        run.last = node;
        itemAtNode[i] = run;
        continue;
      }
      const slot = slotOfDepth[depth[i]];
      const x = pad + slot * col;
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
      itemAtNode[i] = item;
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
  for (const branch of branches) {
    if (branch.fork >= 0) forks.push(forkCurve(itemAtNode[branch.fork], itemAtNode[branch.members[0]]));
  }

  // The main run: the first branch (from the oldest root, the oldest child at every fork), so
  // forks made later never take its place. The path from the root to its latest checkpoint.
  const mainMembers = branches.length ? branches[0].members : [];
  const main = mainMembers.length ? mainMembers[mainMembers.length - 1] : -1;
  /** @type {Set<string>} */
  const path = new Set();
  const pathEdges = [];
  for (let i = main; i >= 0 && !path.has(nodes[i].id); i = parentOf[i]) {
    path.add(nodes[i].id);
    const p = parentOf[i];
    if (p < 0) break;
    const from = itemAtNode[p];
    const to = itemAtNode[i];
    if (from === to) continue;
    pathEdges.push(from.y === to.y ? `M${from.x} ${from.y}H${to.x}` : forkCurve(from, to));
  }

  const at = (/** @type {string} */ id) => index.get(id);
  return {
    byId: {
      get: (id) => (index.has(id) ? nodes[/** @type {number} */ (at(id))] : undefined),
      has: (id) => index.has(id),
      size: index.size,
      values: () => nodes.filter((_, i) => !skip[i]).values(),
    },
    children: {
      get: (id) => {
        const i = at(id);
        if (i === undefined || !kidCount[i]) return undefined;
        return Array.from(kids.subarray(kidStart[i], kidStart[i + 1]), (k) => nodes[k]);
      },
    },
    depthOf: { get: (id) => (index.has(id) ? depth[/** @type {number} */ (at(id))] : undefined) },
    itemOf: {
      get: (id) => (index.has(id) ? itemAtNode[/** @type {number} */ (at(id))] : undefined),
      size: index.size,
    },
    pos,
    items,
    slots,
    rows,
    rowNodes,
    gaps,
    path,
    latest: latest >= 0 ? nodes[latest].id : "",
    main: main >= 0 ? nodes[main].id : "",
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
 * The mark nearest a point of the SVG within `reach` layout pixels (default: a mark's own
 * reach; more when zoomed far out, so that a dot a few screen pixels wide can be hit).
 * @param {DagLayout} layout @param {number} x @param {number} y @param {number} [reach]
 * @returns {DagItem | null}
 */
export function itemAt(layout, x, y, reach) {
  const { col, row, pad, radius } = layout.geometry;
  const within = Math.max(reach || 0, radius + 8);
  const first = Math.max(0, Math.floor((x - within - pad) / col));
  const last = Math.min(layout.slots.length - 1, Math.ceil((x + within - pad) / col));
  const top = Math.floor((y - within - pad) / row);
  const bottom = Math.ceil((y + within - pad) / row);
  /** @type {DagItem | null} */
  let best = null;
  let distance = Infinity;
  for (let slot = first; slot <= last; slot++) {
    for (const item of layout.slots[slot]) {
      if (item.row < top || item.row > bottom) continue;
      const d = Math.hypot(item.x - x, item.y - y);
      if (d <= within && d < distance) {
        best = item;
        distance = d;
      }
    }
  }
  return best;
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
