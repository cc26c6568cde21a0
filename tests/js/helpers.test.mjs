// The widget's pure helpers: DAG layout, windowing, keyboard moves, diff, formatting.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  DAG_GEOMETRY,
  diffValues,
  formatBytes,
  formatVersion,
  layoutDag,
  neighbour,
  nodesInArea,
  shortId,
  topologyDrawing,
} from "../../js/widget.js";
import { setupDom, smallDag } from "./support.mjs";

const { col, row, pad } = DAG_GEOMETRY;

test("layoutDag places checkpoints by depth (columns) and lane (rows)", () => {
  const layout = layoutDag(smallDag());
  assert.deepEqual(layout.pos.get("c0"), { x: pad, y: pad });
  assert.deepEqual(layout.pos.get("c3"), { x: pad + 3 * col, y: pad });
  assert.deepEqual(layout.pos.get("f1"), { x: pad + 3 * col, y: pad + row });
  assert.equal(layout.width, pad * 2 + 3 * col);
  assert.equal(layout.height, pad * 2 + row);
});

test("layoutDag draws a fork as a curve into its own lane and the rest as straight edges", () => {
  const layout = layoutDag(smallDag());
  assert.equal((layout.edgePath.match(/M/g) || []).length, 3);
  assert.equal((layout.forkPath.match(/M/g) || []).length, 1);
  assert.match(layout.forkPath, /^M\d+ \d+C/);
  assert.deepEqual(
    layout.children.get("c2").map((n) => n.id),
    ["c3", "f1"],
  );
});

test("layoutDag of an empty thread has no edges", () => {
  const layout = layoutDag({ thread_id: "t", nodes: [], depth: 0, lanes: 0 });
  assert.equal(layout.byId.size, 0);
  assert.equal(layout.edgePath, "");
});

test("nodesInArea keeps the checkpoints near a window of a long thread", () => {
  const nodes = Array.from({ length: 2000 }, (_, i) => ({
    id: `c${i}`,
    parent: i ? `c${i - 1}` : null,
    step: i - 1,
    source: i ? "loop" : "input",
    next: [],
    writers: [],
    interrupts: 0,
    errors: 0,
    is_head: i === 1999,
    is_latest: i === 1999,
    depth: i,
    lane: 0,
    created_at: "",
  }));
  const layout = layoutDag({ thread_id: "t", nodes, depth: 2000, lanes: 1 });
  const left = pad + 1000 * col;
  const shown = nodesInArea(layout, { left, right: left + 10 * col, top: 0, bottom: 200 });
  const depths = shown.map((n) => n.depth);
  assert.ok(depths.includes(1000) && depths.includes(1010), String(depths));
  assert.ok(shown.length < 20, `${shown.length} marks drawn for a 10-column window`);
});

test("neighbour: left is the parent, right the child in the same lane, up/down changes lane", () => {
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

test("neighbour with nothing selected starts at the latest checkpoint", () => {
  assert.equal(neighbour(layoutDag(smallDag()), "", "ArrowLeft"), "f1");
});

test("diffValues reports added, removed and changed channels, ignoring key order", () => {
  const entries = diffValues(
    { count: 1, messages: ["a"], gone: true, same: { a: 1, b: 2 } },
    { count: 2, messages: ["a"], fresh: "x", same: { b: 2, a: 1 } },
  );
  assert.deepEqual(entries, [
    { channel: "count", change: "changed", old: 1, new: 2 },
    { channel: "fresh", change: "added", old: null, new: "x" },
    { channel: "gone", change: "removed", old: true, new: null },
  ]);
  assert.deepEqual(diffValues({ a: [1, 2] }, { a: [1, 2] }), []);
  assert.deepEqual(diffValues({ a: [1, 2] }, { a: { 0: 1, 1: 2 } })[0].change, "changed");
});

test("formatVersion drops the zero padding and shortens the branch suffix", () => {
  assert.equal(formatVersion("00000000000000000000000000000007.0.41234567891"), "7 · 0.41234…");
  assert.equal(formatVersion("00000000000000000000000000000012.0.5"), "12 · 0.5");
  assert.equal(formatVersion("00000000000000000000000000000003"), "3");
  assert.equal(formatVersion(4), "4");
  assert.equal(formatVersion(null), "—");
});

test("formatBytes and shortId", () => {
  assert.equal(formatBytes(12), "12 B");
  assert.equal(formatBytes(2060), "2.0 KiB");
  assert.equal(formatBytes(3 * 1024 * 1024), "3.0 MiB");
  assert.equal(formatBytes(null), "—");
  // version-6 ids: the last timestamp digits, since the final block is the same per process
  assert.equal(shortId("1ef4f797-8335-6428-8001-8a1503f9b875"), "78335428");
  assert.notEqual(
    shortId("1f1ebe1a-3f56-6a10-845b-56b67c9a3365"),
    shortId("1f1ebe1a-3f58-6b20-845b-56b67c9a3365"),
  );
  assert.equal(shortId("5bc2acca-1111-4222-8333-0123456789ab"), "456789ab"); // not v6
  assert.equal(shortId("c1"), "c1");
});

test("topologyDrawing draws every node with its count, re-executions and conditional edges", async () => {
  const dom = setupDom();
  const svg = topologyDrawing(
    dom.document,
    {
      nodes: [
        { id: "agent", x: 50, y: 20, count: 3, reruns: 2 },
        { id: "tools<x>", x: 50, y: 80, count: 1, reruns: 0 },
      ],
      edges: [{ source: "agent", target: "tools<x>", conditional: true }],
      width: 100,
      height: 100,
      svg: null,
    },
    "v1",
  );
  const [agent, tools] = svg.querySelectorAll(".dd-topo-node");
  assert.equal(agent.getAttribute("class"), "dd-topo-node dd-rerun");
  assert.equal(agent.getAttribute("data-node"), "agent");
  assert.equal(agent.textContent, "agent ×3");
  assert.equal(tools.textContent, "tools<x> ×1", "node names are text");
  assert.equal(tools.getAttribute("data-node"), "tools<x>");
  const edge = svg.querySelector(".dd-topo-edge");
  assert.equal(edge.getAttribute("class"), "dd-topo-edge dd-conditional");
  assert.equal(edge.getAttribute("marker-end"), "url(#v1-arrow)");
  assert.ok(svg.querySelector("marker#v1-arrow"));
  await dom.close();
});
