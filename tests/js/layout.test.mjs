// The DAG's layout (js/src/layout.js): rows per branch, no crossing fork edges, collapsed runs,
// the virtualization window, keyboard moves.

import assert from "node:assert/strict";
import { test } from "node:test";

import { DAG_GEOMETRY, MIN_RUN, itemAt, itemsInArea, layoutDag, neighbour } from "../../js/widget.js";
import { generatedDag, smallDag } from "./support.mjs";

const { col, row, pad } = DAG_GEOMETRY;

/** Every fork edge, with the rows it passes and the columns it spans. */
function crossings(layout) {
  const span = new Map(); // row -> [first slot, last slot]
  for (const items of layout.rows) {
    if (!items.length) continue;
    span.set(items[0].row, [items[0].slot, items[items.length - 1].slot]);
  }
  const found = [];
  for (const items of layout.rows) {
    const start = items[0];
    const parent = start.node.parent && layout.itemOf.get(start.node.parent);
    if (!parent || parent.row === start.row) continue;
    const [low, high] = parent.row < start.row ? [parent.row, start.row] : [start.row, parent.row];
    for (let r = low + 1; r < high; r++) {
      const [first, last] = span.get(r);
      // The curve is strictly between the two columns; a row drawn there is crossed.
      if (first < start.slot && last > parent.slot) found.push(`fork into row ${start.row} crosses row ${r}`);
    }
  }
  return found;
}

test("layoutDag places checkpoints by depth (columns) and branch (rows)", () => {
  const layout = layoutDag(smallDag());
  assert.deepEqual(layout.pos.get("c0"), { x: pad, y: pad });
  assert.deepEqual(layout.pos.get("c3"), { x: pad + 3 * col, y: pad });
  assert.deepEqual(layout.pos.get("f1"), { x: pad + 3 * col, y: pad + row });
  assert.equal(layout.width, pad * 2 + 3 * col);
  assert.equal(layout.height, pad * 2 + row);
  assert.equal(layout.latest, "f1");
  // The main run ends at c3; the fork holds the newest checkpoint but is not the main run.
  assert.equal(layout.main, "c3");
  assert.deepEqual([...layout.path], ["c3", "c2", "c1", "c0"]);
});

test("layoutDag draws each branch as one straight segment and each fork as one curve", () => {
  const layout = layoutDag(smallDag());
  assert.equal(layout.edgePath, `M${pad} ${pad}H${pad + 3 * col}`);
  assert.equal((layout.forkPath.match(/M/g) || []).length, 1);
  assert.match(layout.forkPath, new RegExp(`^M${pad + 2 * col} ${pad}C`));
  assert.deepEqual(
    layout.children.get("c2").map((n) => n.id),
    ["c3", "f1"],
  );
});

test("layoutDag of an empty thread has no marks and no edges", () => {
  const layout = layoutDag({ thread_id: "t", nodes: [], depth: 0, lanes: 0 });
  assert.equal(layout.byId.size, 0);
  assert.equal(layout.items.length, 0);
  assert.equal(layout.edgePath, "");
  assert.equal(layout.latest, "");
});

test("fork edges cross no other branch, on generated fork trees (collapsed and expanded)", () => {
  for (let seed = 1; seed <= 40; seed++) {
    const dag = generatedDag({ length: 60 + seed * 3, forks: 3 + (seed % 13), branch: 5 + seed, seed });
    for (const collapse of [true, false]) {
      const layout = layoutDag(dag, { collapse });
      assert.deepEqual(crossings(layout), [], `seed ${seed}, collapse ${collapse}`);
      // One row per branch: the first run, and every child younger than its oldest sibling.
      const oldest = new Map();
      for (const n of dag.nodes) if (n.parent && !oldest.has(n.parent)) oldest.set(n.parent, n.id);
      const starts = dag.nodes.filter((n) => n.parent && oldest.get(n.parent) !== n.id).length;
      assert.equal(layout.rowCount, starts + 1);
      // A row is one branch: a chain, each checkpoint the parent of the next.
      for (const chain of layout.rowNodes) {
        for (let i = 1; i < chain.length; i++) assert.equal(chain[i].parent, chain[i - 1].id);
      }
    }
  }
});

test("the check above does see a crossing: rows in creation order cross", () => {
  // Two forks off the first run, the younger one leaving earlier: creation order would put
  // the later-leaving branch between them, and the earlier fork would cross it.
  const dag = generatedDag({ length: 30, forks: 0 });
  const add = (id, parent, source = "loop") =>
    dag.nodes.push({ ...dag.nodes[1], id, parent, source, is_latest: false, errors: 0 });
  add("x1", dag.nodes[20].id, "fork");
  for (let i = 2; i < 8; i++) add(`x${i}`, `x${i - 1}`);
  add("y1", dag.nodes[5].id, "fork");
  for (let i = 2; i < 30; i++) add(`y${i}`, `y${i - 1}`);
  const layout = layoutDag(dag, { collapse: false });
  assert.deepEqual(crossings(layout), []);
  const rowOf = (id) => layout.itemOf.get(id).row;
  assert.deepEqual([rowOf("x1"), rowOf("y1")], [1, 2], "the branch leaving later sits next to its parent");
  // Swap the two rows by hand: the checker reports the crossing.
  for (const item of layout.items) if (item.row === 1 || item.row === 2) item.row = 3 - item.row;
  const swapped = [...layout.rows];
  [swapped[1], swapped[2]] = [swapped[2], swapped[1]];
  assert.deepEqual(crossings({ ...layout, rows: swapped }), ["fork into row 2 crosses row 1"]);
});

test("a linear run is one mark with its count; what stands out keeps its own mark", () => {
  const dag = generatedDag({ length: 1000, forks: 0 });
  dag.nodes[500].errors = 1;
  const layout = layoutDag(dag);
  const runs = layout.items.filter((item) => item.kind === "run");
  const marks = layout.items.filter((item) => item.kind === "node");
  assert.equal(runs.length, 2, "before and after the error");
  assert.deepEqual(
    runs.map((run) => run.count),
    [497, 496],
  );
  // Input, its first loop, the error with one on each side, the latest and the one before it.
  assert.deepEqual(
    marks.map((item) => item.node.step),
    [-1, 0, 498, 499, 500, 997, 998],
  );
  assert.equal(runs[0].count + runs[1].count + marks.length, 1000);
  assert.equal(layout.itemOf.get(dag.nodes[300].id), runs[0], "a hidden checkpoint maps to its run");
  assert.equal(layout.pos.has(dag.nodes[300].id), false);
  assert.equal(layout.slots.length, 9);
  assert.ok(layout.width < 10 * col + 2 * pad, `${layout.width} px wide`);
});

test("expanding a run shows its checkpoints; revealing one splits its run around it", () => {
  const dag = generatedDag({ length: 1000, forks: 0 });
  const collapsed = layoutDag(dag);
  const run = collapsed.items.find((item) => item.kind === "run");
  const gap = collapsed.gaps[run.gap];
  const expanded = layoutDag(dag, { expanded: [[gap.from, gap.to]] });
  assert.equal(expanded.items.filter((item) => item.kind === "run").length, 0);
  assert.equal(expanded.items.length, 1000);

  const revealed = layoutDag(dag, { reveal: [dag.nodes[400].id] });
  const counts = revealed.items.filter((item) => item.kind === "run").map((item) => item.count);
  assert.deepEqual(counts, [397, 596]);
  assert.ok(revealed.pos.has(dag.nodes[400].id));
  assert.equal(layoutDag(dag, { collapse: false }).items.length, 1000);
});

test("runs shorter than MIN_RUN are drawn in full; a column is one depth in every row", () => {
  const dag = generatedDag({ length: 12, forks: 0 });
  dag.nodes[5].errors = 1; // shows 4, 5, 6; leaves 2..3 (two) and 7..9 (three) plain
  const layout = layoutDag(dag);
  const runs = layout.items.filter((item) => item.kind === "run");
  assert.equal(MIN_RUN, 3);
  assert.deepEqual(
    runs.map((item) => [item.node.step, item.last.step, item.count]),
    [[6, 8, 3]],
  );

  // Two long branches side by side: their runs share columns, so depths line up.
  const two = generatedDag({ length: 400, forks: 0 });
  let at = two.nodes[10];
  const fork = { ...at, id: "z0000", parent: at.id, source: "fork", is_latest: false, errors: 0 };
  two.nodes.push(fork);
  at = fork;
  for (let i = 1; i < 300; i++) {
    const next = { ...at, id: `z${String(i).padStart(4, "0")}`, parent: at.id, source: "loop" };
    two.nodes.push(next);
    at = next;
  }
  const both = layoutDag(two);
  for (const item of both.items) {
    const depths = item.kind === "run" ? both.gaps[item.gap] : null;
    if (depths) assert.equal(item.count, depths.to - depths.from + 1);
  }
  const column = (id) => both.itemOf.get(id).slot;
  assert.equal(column(two.nodes[11].id), column("z0000"), "same depth, same column");
});

test("itemsInArea returns only the marks near a window of a 50,000-checkpoint thread", () => {
  const dag = generatedDag({ length: 45000, forks: 50, branch: 200, seed: 7, errorEvery: 97 });
  const layout = layoutDag(dag, { collapse: false });
  assert.equal(layout.items.length, dag.nodes.length);
  const left = pad + 20000 * col;
  const area = { left, right: left + 20 * col, top: 0, bottom: 3 * row };
  const shown = itemsInArea(layout, area);
  assert.ok(shown.length > 0 && shown.length <= 22 * 4, `${shown.length} marks for a 20 × 3 window`);
  for (const item of shown) {
    assert.ok(item.x >= area.left - col - pad && item.x <= area.right + col + pad);
    assert.ok(item.y >= area.top - pad && item.y <= area.bottom + pad);
  }
  const inside = layout.items.filter(
    (item) => item.x >= area.left && item.x <= area.right && item.y >= area.top && item.y <= area.bottom,
  );
  for (const item of inside) assert.ok(shown.includes(item), `${item.id} is in the window`);

  const collapsed = layoutDag(dag);
  assert.ok(
    collapsed.items.length < dag.nodes.length / 3,
    `${collapsed.items.length} marks for ${dag.nodes.length} checkpoints`,
  );
  assert.deepEqual(crossings(collapsed), []);
  const hit = collapsed.items[collapsed.items.length >> 1];
  assert.equal(itemAt(collapsed, hit.x + 3, hit.y - 3), hit);
  assert.equal(itemAt(collapsed, hit.x + col / 2, hit.y + row / 2), null);
});

test("bad input still lays out: unknown parents are roots, a parent cycle gets rows of its own", () => {
  const dag = generatedDag({ length: 10, forks: 0 });
  dag.nodes.push({ ...dag.nodes[3], id: "orphan", parent: "missing", is_latest: false });
  dag.nodes.push({ ...dag.nodes[3], id: "loop-a", parent: "loop-b", is_latest: false });
  dag.nodes.push({ ...dag.nodes[3], id: "loop-b", parent: "loop-a", is_latest: false });
  dag.nodes.push({ ...dag.nodes[3], id: "self", parent: "self", is_latest: false });
  const layout = layoutDag(dag);
  for (const id of ["orphan", "loop-a", "loop-b", "self"]) assert.ok(layout.itemOf.get(id), id);
  assert.equal(layout.itemOf.size, dag.nodes.length);
});

test("neighbour: left is the parent, right the child in the same row, up/down changes row", () => {
  const layout = layoutDag(smallDag());
  assert.equal(neighbour(layout, "c2", "ArrowLeft"), "c1");
  assert.equal(neighbour(layout, "c2", "ArrowRight"), "c3");
  assert.equal(neighbour(layout, "c3", "ArrowDown"), "f1");
  assert.equal(neighbour(layout, "f1", "ArrowUp"), "c3");
  assert.equal(neighbour(layout, "f1", "ArrowLeft"), "c2");
  assert.equal(neighbour(layout, "c0", "ArrowLeft"), "");
  assert.equal(neighbour(layout, "c3", "ArrowRight"), "");
  assert.equal(neighbour(layout, "c0", "ArrowUp"), "");
});

test("neighbour with nothing selected starts at the latest checkpoint; it walks into runs", () => {
  assert.equal(neighbour(layoutDag(smallDag()), "", "ArrowLeft"), "f1");
  const dag = generatedDag({ length: 100, forks: 0 });
  const layout = layoutDag(dag);
  assert.equal(layout.itemOf.get(dag.nodes[2].id).kind, "run");
  assert.equal(neighbour(layout, dag.nodes[1].id, "ArrowRight"), dag.nodes[2].id);
});
