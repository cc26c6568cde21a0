// The thread list: search, status filter, arrows that move without switching, Enter that
// switches, and a fresh listing after a run started here ends.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget from "../../js/widget.js";
import { filterThreads } from "../../js/src/thread-list.js";
import { click, createFakeModel, press, settle, setupDom } from "./support.mjs";

const ROWS = [
  { thread_id: "user-09999", checkpoints: 3, step: 2, status: "done", kind: "done" },
  {
    thread_id: "user-09",
    checkpoints: 4,
    step: 3,
    status: "paused on 1 interrupt(s) at review",
    kind: "paused",
  },
  { thread_id: "job-1", checkpoints: 9, step: 4, status: "failed at tools", kind: "failed" },
  { thread_id: "t1", checkpoints: 5, step: 2, status: "next agent", kind: "running", current: true },
];

let dom, model, cleanup, el;
beforeEach(() => {
  dom = setupDom();
  model = createFakeModel();
  cleanup = widget.render({ model, el: dom.el });
  el = dom.el;
});
afterEach(() => {
  cleanup();
  dom.close();
});

async function open(rows = ROWS) {
  click(dom.window, el.querySelector('[data-action="threads"]'));
  model.reply(model.last("threads"), { threads: rows });
  await settle();
  return el.querySelector(".dd-threads");
}

const shown = (panel) =>
  [...panel.querySelectorAll(".dd-thread-option")].map((o) => o.getAttribute("data-thread"));
const active = (panel) => panel.querySelector('[aria-selected="true"]')?.getAttribute("data-thread");

function type(panel, text) {
  const box = panel.querySelector(".dd-thread-search");
  box.value = text;
  box.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  return box;
}

test("typing in the search box filters the list and switches nothing", async () => {
  const panel = await open();
  const before = model.sent.length;
  const box = type(panel, "user-0");
  type(panel, "user-09");
  assert.deepEqual(shown(panel), ["user-09999", "user-09"]);
  assert.equal(model.sent.length, before, "no request while typing");
  press(dom.window, box, "ArrowDown"); // the highlight moves to user-09, still no switch
  assert.equal(active(panel), "user-09");
  assert.equal(model.sent.length, before);
  press(dom.window, box, "Enter");
  assert.equal(model.last("thread").thread_id, "user-09");
});

test("the status filter keeps one kind; the count says how many of all", async () => {
  const panel = await open();
  const filter = panel.querySelector(".dd-thread-filter");
  assert.deepEqual(
    [...filter.options].map((o) => o.value),
    ["", "running", "paused", "failed", "done"],
  );
  filter.value = "failed";
  filter.dispatchEvent(new dom.window.Event("change", { bubbles: true }));
  assert.deepEqual(shown(panel), ["job-1"]);
  assert.equal(panel.querySelector(".dd-thread-count").textContent, "1 of 4 threads");
});

test("arrow keys on the list move the highlight; Home, End; Escape closes", async () => {
  const panel = await open();
  const list = panel.querySelector(".dd-thread-options");
  assert.equal(active(panel), "t1"); // the shown thread, highlighted first
  press(dom.window, list, "Home");
  assert.equal(active(panel), "user-09999");
  press(dom.window, list, "ArrowDown");
  press(dom.window, list, "ArrowDown");
  assert.equal(active(panel), "job-1");
  assert.equal(list.getAttribute("aria-activedescendant"), panel.querySelector('[data-thread="job-1"]').id);
  press(dom.window, list, "End");
  assert.equal(active(panel), "t1");
  assert.equal(model.last("thread"), undefined);
  press(dom.window, list, "Escape");
  assert.equal(panel.hidden, true);
});

test("a run started here that ends lists the threads again, with the new counts", async () => {
  const panel = await open();
  const asked = model.sent.filter((m) => m.kind === "threads").length;
  model.set("_running", true);
  model.set("_running", false);
  const again = model.last("threads");
  assert.equal(model.sent.filter((m) => m.kind === "threads").length, asked + 1);
  model.reply(again, { threads: ROWS.map((r) => (r.thread_id === "t1" ? { ...r, checkpoints: 13 } : r)) });
  await settle();
  assert.match(panel.querySelector('[data-thread="t1"]').textContent, /13 checkpoints/);
});

test("filterThreads: by id substring, case-insensitive, and by kind", () => {
  assert.deepEqual(
    filterThreads(ROWS, "USER", "").map((r) => r.thread_id),
    ["user-09999", "user-09"],
  );
  assert.deepEqual(
    filterThreads(ROWS, "", "paused").map((r) => r.thread_id),
    ["user-09"],
  );
});
