// The topology and the DAG follow a run: the running nodes highlighted while `_running` is
// true, a checkpoint paused at a breakpoint tagged on its mark and its node outlined.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import widget from "../../js/widget.js";
import { createFakeModel, setupDom, smallDag } from "./support.mjs";

let dom;
let model;
let cleanup;

beforeEach(() => {
  dom = setupDom();
});

afterEach(async () => {
  if (cleanup) cleanup();
  cleanup = null;
  await dom.close();
});

/** smallDag's main run only: its newest checkpoint c2 was written by agent, tools runs next. */
function agentThenTools() {
  const dag = smallDag();
  dag.nodes = dag.nodes.filter((n) => ["c0", "c1", "c2"].includes(n.id));
  Object.assign(dag.nodes[2], { is_head: true, is_latest: true, interrupts: 0, errors: 0 });
  return dag;
}

const TOPOLOGY = {
  nodes: [
    { id: "__start__", x: 50, y: 20, count: 0, reruns: 0 },
    { id: "agent", x: 50, y: 80, count: 1, reruns: 0 },
    { id: "tools", x: 50, y: 140, count: 0, reruns: 0 },
  ],
  edges: [],
  width: 100,
  height: 160,
  svg: null,
};

function show(traits) {
  model = createFakeModel({ _dag: agentThenTools(), _topology: TOPOLOGY, ...traits });
  cleanup = widget.render({ model, el: dom.el });
  return dom.el;
}

const topoNode = (el, id) => el.querySelector(`.dd-topology-picture [data-node="${id}"]`);

test("while a run goes on, the newest checkpoint's next nodes are highlighted as running", () => {
  const el = show({});
  assert.ok(!topoNode(el, "tools").classList.contains("dd-running"));
  model.set("_running", true);
  assert.ok(topoNode(el, "tools").classList.contains("dd-running"));
  assert.ok(!topoNode(el, "agent").classList.contains("dd-running"));
  assert.equal(el.querySelector(".dd-topology-hint").textContent, "running: tools");
  model.set("_running", false);
  assert.ok(!topoNode(el, "tools").classList.contains("dd-running"));
});

test("a checkpoint paused before a breakpoint's node is tagged; a running or interrupted one is not", () => {
  const el = show({ _breakpoints: { before: ["tools"], after: [] } });
  const marker = el.querySelector(".dd-paused-marker");
  assert.equal(marker.getAttribute("visibility"), "visible");
  assert.equal(marker.textContent, "paused before tools");
  assert.ok(topoNode(el, "tools").classList.contains("dd-paused"));
  model.set("_running", true);
  assert.equal(marker.getAttribute("visibility"), "hidden");
  model.set("_running", false);
  model.set("_breakpoints", { before: [], after: ["agent"] });
  assert.equal(marker.textContent, "paused after agent");
  model.set("_breakpoints", { before: [], after: [] });
  assert.equal(marker.getAttribute("visibility"), "hidden");
  // Waiting on an interrupt is not a breakpoint's pause.
  const dag = agentThenTools();
  dag.nodes[2].interrupts = 1;
  model.set("_breakpoints", { before: ["tools"], after: [] });
  model.set("_dag", dag);
  assert.equal(el.querySelector(".dd-paused-marker").getAttribute("visibility"), "hidden");
});
