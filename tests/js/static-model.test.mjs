// createStaticModel: the standalone export's in-page model, alone and under render().

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget, { createRequester, createStaticModel } from "../../js/widget.js";
import { click, detailOf, mark, setupDom, smallDag } from "./support.mjs";

const exportData = () => ({
  thread_id: "t1",
  dag: smallDag(),
  details: Object.fromEntries(["c0", "c1", "c2", "c3", "f1"].map((id) => [id, detailOf(id)])),
  topology: null,
});

/** Wait for the static model's asynchronous answers. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

test("the static model is read-only and starts with nothing selected", () => {
  const model = createStaticModel(exportData());
  assert.equal(model.get("_readonly"), true);
  assert.equal(model.get("_selected"), "");
  assert.equal(model.get("_thread_id"), "t1");
  assert.equal(model.get("_dag").nodes.length, 5);
});

test("the static model answers select from the embedded details", async () => {
  const model = createStaticModel(exportData());
  const requests = createRequester(model);
  const changes = [];
  model.on("change:_selected", () => changes.push(model.get("_selected")));
  const reply = await requests.request("select", { checkpoint_id: "c2" });
  assert.deepEqual(reply, { checkpoint_id: "c2" }, "the detail travels once, as _detail");
  assert.deepEqual(changes, ["c2"]);
  assert.deepEqual(model.get("_detail").values, { messages: ["hi", "thinking"], count: 1 });
  await assert.rejects(requests.request("select", { checkpoint_id: "nope" }), /nope is not in this export/);
  requests.dispose();
});

test("the static model diffs two checkpoints' values", async () => {
  const requests = createRequester(createStaticModel(exportData()));
  const entries = await requests.request("diff", { a: "c2", b: "f1" });
  assert.deepEqual(entries, [{ channel: "count", change: "changed", old: 1, new: 10 }]);
  requests.dispose();
});

test("the static model refuses fork, rerun and resume", async () => {
  const requests = createRequester(createStaticModel(exportData()));
  for (const kind of ["fork", "rerun", "resume", "stop"]) {
    await assert.rejects(
      requests.request(kind, {}),
      new RegExp(`'${kind}' is not available in a read-only export`),
    );
  }
  assert.equal(requests.pending, 0);
  requests.dispose();
});

test("off() removes handlers by name and function", () => {
  const model = createStaticModel(exportData());
  let calls = 0;
  const fn = () => calls++;
  model.on("change:_status", fn);
  model.set("_status", "a");
  model.off("change:_status", fn);
  model.set("_status", "b");
  assert.equal(calls, 1);
});

/** @type {ReturnType<typeof setupDom>} */
let dom;
beforeEach(() => {
  dom = setupDom();
});
afterEach(() => dom.close());

test("rendered against the static model: click shows state, shift-click shows the diff", async () => {
  const model = createStaticModel(exportData());
  const cleanup = widget.render({ model, el: dom.el });
  const el = dom.el;
  assert.equal(el.querySelectorAll(".dd-mark").length, 5);
  assert.equal(el.querySelector('[data-action="fork"]'), null);

  click(dom.window, mark(el, "c3"));
  await tick();
  assert.equal(el.querySelector(".dd-detail-head").getAttribute("data-id"), "c3");
  assert.match(el.querySelector(".dd-state").textContent, /"Paris"/);
  assert.equal(el.querySelector('[data-action="edit"]'), null, "no editing in an export");

  click(dom.window, mark(el, "f1"), { shiftKey: true });
  await tick();
  const channels = [...el.querySelectorAll(".dd-diff-table tbody tr")].map((r) =>
    r.getAttribute("data-channel"),
  );
  assert.deepEqual(channels, ["approved", "count", "messages"]);
  cleanup();
});
