// What a chat model writes while a run goes (`_live_text`): shown in the topology panel, per node,
// as text (never markup), growing with each update, gone when the list empties.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import widget from "../../js/widget.js";
import { createFakeModel, setupDom } from "./support.mjs";

let dom;
let cleanup;

beforeEach(() => {
  dom = setupDom();
});

afterEach(async () => {
  if (cleanup) cleanup();
  cleanup = null;
  await dom.close();
});

function show(traits = {}) {
  const model = createFakeModel(traits);
  cleanup = widget.render({ model, el: dom.el });
  return { model, el: dom.el };
}

const entry = (text, extra = {}) => ({
  node: "agent",
  id: "m1",
  text,
  chars: text.length,
  cut: false,
  ...extra,
});

test("the text a node's model writes grows in the live box, then goes with the checkpoint", () => {
  const { model, el } = show();
  const box = el.querySelector(".dd-topology-panel .dd-live");
  assert.ok(box.hidden, "nothing is written before a run");
  model.set("_running", true);
  model.set("_live_text", [entry("The capital")]);
  assert.ok(!box.hidden);
  assert.equal(box.querySelector(".dd-live-node").textContent, "agent");
  assert.equal(box.querySelector(".dd-live-note").textContent, " is writing…");
  assert.equal(box.querySelector(".dd-live-text").textContent, "The capital");
  model.set("_live_text", [entry("The capital of France is Paris.")]);
  assert.equal(box.querySelector(".dd-live-text").textContent, "The capital of France is Paris.");
  assert.equal(box.querySelectorAll(".dd-live-entry").length, 1);
  model.set("_live_text", []);
  assert.ok(box.hidden);
  assert.equal(box.querySelectorAll(".dd-live-entry").length, 0);
});

test("two nodes writing at once each get their own text", () => {
  const { el } = show({
    _running: true,
    _live_text: [entry("one", { node: "left", id: "a" }), entry("two", { node: "right", id: "b" })],
  });
  const rows = [...el.querySelectorAll(".dd-live-entry")];
  assert.deepEqual(
    rows.map((row) => [row.dataset.node, row.querySelector(".dd-live-text").textContent]),
    [
      ["left", "one"],
      ["right", "two"],
    ],
  );
});

test("the text stays text, a hostile node name is escaped, a cut text says so", () => {
  const hostile = '<img src=x onerror="window.pwned=1">';
  const { el } = show({
    _running: true,
    _live_text: [entry(`…${hostile}`, { node: "exe\u202etxt", chars: 5000, cut: true })],
  });
  const box = el.querySelector(".dd-live");
  assert.equal(box.querySelector("img"), null);
  assert.equal(box.querySelector(".dd-live-text").textContent, `…${hostile}`);
  assert.equal(box.querySelector(".dd-live-node").textContent, "exe\\u202etxt");
  assert.equal(box.querySelector(".dd-live-note").textContent, " is writing… (the end of 5000 characters)");
});
