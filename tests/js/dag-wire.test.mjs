// The DAG's compact form (`_dag`, `_dag_tail`) decoded into the protocol's Dag.

import assert from "node:assert/strict";
import { test } from "node:test";

import { DAG_WIRE_FORMAT, decodeDag, mergeTail, readDag } from "../../js/src/dag-wire.js";

/** Input, two steps, and a fork from step 0 that is paused at an interrupt. */
function wire() {
  return {
    format: DAG_WIRE_FORMAT,
    thread_id: "t",
    checkpoint_ns: "",
    epoch: 7,
    start: 0,
    count: 4,
    depth: 3,
    lanes: 2,
    strings: ["input", "loop", "a", "b", "update"],
    lists: [[], [2], [3]],
    id: ["c0", "c1", "c2", "f1"],
    parent: [-1, 0, 1, 1],
    step: [-1, 0, 1, 1],
    source: [0, 1, 1, 4],
    next: [1, 2, 0, 2],
    writers: [0, 0, 1, 1],
    node_depth: [0, 1, 2, 2],
    lane: [0, 0, 0, 1],
    created_at: ["t0", "t1", "t2", "t3"],
    interrupts: [3, 1],
    errors: [],
    findings: [3, 2],
    graph_changed: [2],
    broken_parent: [],
    missing_parent: [],
  };
}

test("the compact form decodes to the protocol's nodes, sorted by depth then lane", () => {
  const dag = decodeDag(wire());
  assert.deepEqual(
    dag.nodes.map((n) => [n.id, n.depth, n.lane]),
    [
      ["c0", 0, 0],
      ["c1", 1, 0],
      ["c2", 2, 0],
      ["f1", 2, 1],
    ],
  );
  const fork = dag.nodes[3];
  assert.deepEqual(fork, {
    id: "f1",
    parent: "c1",
    broken_parent: null,
    step: 1,
    source: "update",
    next: ["b"],
    writers: ["a"],
    interrupts: 1,
    errors: 0,
    graph_changed: false,
    findings: 2,
    is_head: true,
    is_latest: true,
    depth: 2,
    lane: 1,
    created_at: "t3",
  });
  assert.equal(dag.nodes[1].is_head, false); // c1 has children
  assert.equal(dag.nodes[2].graph_changed, true);
  assert.equal(dag.nodes[2].findings, 0); // only f1 has findings
  assert.equal(dag.nodes[0].parent, null);
  assert.deepEqual([dag.depth, dag.lanes, dag.thread_id], [3, 2, "t"]);
});

test("each value of _dag is decoded once; a plain Dag passes as it is; junk is an empty DAG", () => {
  const compact = wire();
  assert.equal(decodeDag(compact), decodeDag(compact));
  const plain = { thread_id: "t", nodes: [], depth: 0, lanes: 0 };
  assert.equal(decodeDag(plain), plain);
  assert.deepEqual(decodeDag(null).nodes, []);
  assert.deepEqual(decodeDag({ format: "other" }).nodes, []);
  const model = { get: (name) => (name === "_dag" ? compact : {}) };
  assert.equal(readDag(/** @type {any} */ (model)), decodeDag(compact, {}));
});

test("a parent the thread lacks is still named", () => {
  const lost = { ...wire(), parent: [-1, -1, 1, 1], missing_parent: [1, "gone"] };
  const dag = decodeDag(lost);
  assert.equal(dag.nodes.find((n) => n.id === "c1").parent, "gone");
});

test("a tail replaces the checkpoints from its start on; one of another epoch is ignored", () => {
  const base = wire();
  // c2 answered its interrupt (marked again) and c3 was appended after it.
  const tail = {
    ...wire(),
    start: 2,
    count: 5,
    id: ["c2", "f1", "c3"],
    parent: [1, 1, 2],
    step: [1, 1, 2],
    source: [1, 4, 1],
    next: [0, 2, 0],
    writers: [1, 1, 2],
    node_depth: [2, 2, 3],
    lane: [0, 1, 0],
    created_at: ["t2", "t3", "t4"],
    interrupts: [],
    graph_changed: [],
    depth: 4,
  };
  const merged = mergeTail(base, tail);
  assert.deepEqual(merged.id, ["c0", "c1", "c2", "f1", "c3"]);
  assert.deepEqual(merged.interrupts, []);
  assert.deepEqual(merged.graph_changed, []);
  const dag = decodeDag(base, tail);
  assert.equal(dag.nodes.length, 5);
  const latest = dag.nodes.find((n) => n.is_latest);
  assert.deepEqual([latest.id, latest.parent, latest.depth], ["c3", "c2", 3]);
  assert.equal(dag.nodes.find((n) => n.id === "c2").is_head, false);
  assert.equal(decodeDag(base, tail), dag); // the same pair: decoded once
  assert.equal(decodeDag(base, { ...tail, epoch: 8 }).nodes.length, 4);
  assert.equal(decodeDag(base, { ...tail, start: 9 }).nodes.length, 4);
});

test("a packed value (UTF-8 JSON bytes, as Python sends it) decodes to the same tree", () => {
  const plain = wire();
  const bytes = new TextEncoder().encode(JSON.stringify(plain));
  const packed = { format: DAG_WIRE_FORMAT, epoch: 7, start: 0, packed: new DataView(bytes.buffer) };
  assert.deepEqual(decodeDag(packed), decodeDag(plain));
  const tail = { ...plain, start: 3, id: ["f1"], parent: [1], step: [1], source: [4], next: [2] };
  Object.assign(tail, { writers: [1], node_depth: [2], lane: [1], created_at: ["t3"] });
  Object.assign(tail, { interrupts: [], graph_changed: [] });
  const tailBytes = new TextEncoder().encode(JSON.stringify(tail));
  const packedTail = { format: DAG_WIRE_FORMAT, epoch: 7, start: 3, packed: tailBytes };
  const dag = decodeDag(packed, packedTail);
  assert.equal(dag.nodes.find((n) => n.id === "f1").interrupts, 0); // the tail's marks win
  assert.equal(decodeDag(packed, packedTail), dag);
});
