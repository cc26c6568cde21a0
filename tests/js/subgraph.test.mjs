// Subgraph namespaces in the widget: a task's subgraph opens nested under the
// checkpoint it ran from, collapsed until asked; its checkpoints select, fork and rerun with
// the namespace on every request.

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget from "../../js/widget.js";
import { click, createFakeModel, detailOf, mark, settle, setupDom } from "./support.mjs";

const NS = "review:task-7";

/** @type {ReturnType<typeof setupDom>} */
let dom;
/** @type {ReturnType<typeof createFakeModel>} */
let model;
/** @type {() => void} */
let cleanup;

beforeEach(() => {
  dom = setupDom();
});

afterEach(async () => {
  if (cleanup) cleanup();
  cleanup = null;
  await dom.close();
});

const inner = (id, parent, step, next) => ({
  id,
  parent,
  step,
  source: "loop",
  depth: step + 1,
  lane: 0,
  next,
  writers: [],
  interrupts: 0,
  errors: 0,
  is_head: false,
  is_latest: false,
  created_at: "2025-01-01T00:00:00+00:00",
  checkpoint_ns: NS,
});

/** Open the widget, select c2 and answer its "subgraphs" request: review ran from c2. */
async function openAtC2(tasks = []) {
  model = createFakeModel();
  cleanup = widget.render({ model, el: dom.el });
  click(dom.window, mark(dom.el, "c2"));
  model.answerSelect(model.last("select"), { ...detailOf("c2"), tasks });
  await settle();
  const asked = model.last("subgraphs");
  assert.ok(asked, "the detail asks which subgraphs ran here");
  model.reply(asked, {
    namespaces: [
      { checkpoint_ns: NS, enclosing: "", node: "review", parent: "c2" },
      { checkpoint_ns: "other:task-9", enclosing: "", node: "other", parent: "c1" },
    ],
  });
  await settle();
  return dom.el;
}

test("a task's subgraph shows under that task of the checkpoint it ran from, collapsed", async () => {
  const el = await openAtC2([{ id: "task-7", name: "review", error: null, interrupts: [], result: null }]);
  const toggles = [...el.querySelectorAll(".dd-subgraph-toggle")];
  assert.deepEqual(
    toggles.map((t) => t.textContent),
    ["▸ review"],
    "only the subgraph run from c2, not the one run from c1",
  );
  assert.equal(toggles[0].getAttribute("aria-expanded"), "false");
  assert.equal(toggles[0].closest(".dd-task")?.getAttribute("data-task-id"), "task-7", "on the task's row");
  assert.match(el.querySelector(".dd-subgraphs").textContent, /shown under their tasks above/);
  assert.equal(model.last("subgraph"), undefined, "nothing is read until expanded");

  click(dom.window, toggles[0]);
  const asked = model.last("subgraph");
  assert.equal(asked.checkpoint_ns, NS);
  model.reply(asked, {
    checkpoint_ns: NS,
    dag: {
      thread_id: "t1",
      depth: 3,
      lanes: 1,
      nodes: [
        inner("s0", null, -1, ["__start__"]),
        inner("s1", "s0", 0, ["write"]),
        inner("s2", "s1", 1, ["ask"]),
      ],
    },
  });
  await settle();
  assert.equal(toggles[0].textContent, "▾ review");
  const rows = [...el.querySelectorAll(".dd-subgraph-checkpoint")].map((b) => b.textContent);
  assert.deepEqual(rows, ["step -1 · next: __start__", "step 0 · next: write", "step 1 · next: ask"]);
  // Nested: s1 sits inside s0's branch, s2 inside s1's.
  const s2 = el.querySelector('[data-checkpoint="s2"]');
  assert.equal(
    s2.closest("li").parentElement.closest("li").querySelector("button").textContent,
    "step 0 · next: write",
  );

  click(dom.window, toggles[0]);
  assert.equal(el.querySelector(".dd-subgraph-tree").hidden, true, "collapses again");
});

test("selecting a subgraph checkpoint sends its namespace, and so does a rerun from it", async () => {
  const el = await openAtC2(); // the detail lists no task: the toggle sits in the section
  assert.ok(el.querySelector(".dd-subgraphs .dd-subgraph-toggle"));
  click(dom.window, el.querySelector(".dd-subgraph-toggle"));
  model.reply(model.last("subgraph"), {
    checkpoint_ns: NS,
    dag: {
      thread_id: "t1",
      depth: 2,
      lanes: 1,
      nodes: [inner("s0", null, -1, ["__start__"]), inner("s2", "s0", 1, ["ask"])],
    },
  });
  await settle();
  click(dom.window, el.querySelector('[data-checkpoint="s2"]'));
  const select = model.last("select");
  assert.deepEqual([select.checkpoint_id, select.checkpoint_ns], ["s2", NS]);
  model.set("_selected_ns", NS);
  model.answerSelect(select, { ...detailOf("c2"), id: "s2", next: ["ask"] });
  await settle();
  assert.match(el.querySelector(".dd-subgraph-where").textContent, /in subgraph review:task-7/);
  // The namespace's own tree opens with it, so its other checkpoints stay one click away.
  const own = model.last("subgraph");
  assert.equal(own.checkpoint_ns, NS);
  model.reply(own, {
    checkpoint_ns: NS,
    dag: {
      thread_id: "t1",
      depth: 2,
      lanes: 1,
      nodes: [inner("s0", null, -1, ["__start__"]), inner("s2", "s0", 1, ["ask"])],
    },
  });
  await settle();

  click(dom.window, el.querySelector('[data-checkpoint="s0"]'), { shiftKey: true });
  const diff = model.last("diff");
  assert.deepEqual([diff.a, diff.b, diff.checkpoint_ns], ["s2", "s0", NS], "Shift-click diffs inside");

  click(dom.window, el.querySelector('[data-action="rerun"]'));
  const rerun = model.last("rerun");
  assert.deepEqual([rerun.checkpoint_id, rerun.checkpoint_ns], ["s2", NS]);

  // Back up: the task's checkpoint in the enclosing namespace.
  click(dom.window, el.querySelector(".dd-subgraph-up"));
  const listed = model.sent.filter((m) => m.kind === "subgraphs").at(-1);
  model.reply(listed, { namespaces: [{ checkpoint_ns: NS, enclosing: "", node: "review", parent: "c2" }] });
  await settle();
  const up = model.last("select");
  assert.deepEqual([up.checkpoint_id, up.checkpoint_ns], ["c2", ""]);
});

test("the main DAG's requests carry no namespace", async () => {
  const el = await openAtC2();
  assert.equal("checkpoint_ns" in model.last("select"), false);
  click(dom.window, el.querySelector('[data-action="rerun"]'));
  assert.equal("checkpoint_ns" in model.last("rerun"), false);
});
