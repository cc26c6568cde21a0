// The widget's pure helpers: diff, formatting, the topology drawing (the DAG's layout: layout.test.mjs).

import assert from "node:assert/strict";
import { test } from "node:test";

import { diffValues, formatBytes, formatVersion, shortId, topologyDrawing } from "../../js/widget.js";
import { setupDom } from "./support.mjs";

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
