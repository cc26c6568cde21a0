// The New run form: fields from Python's `input_form`, never null by default, a JSON mode and
// the inputs used before.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget from "../../js/widget.js";
import { fieldValue, formInput, initialEntries, rememberInput, runHistory } from "../../js/src/run-form.js";
import { click, createFakeModel, settle, setupDom } from "./support.mjs";

const FIELDS = [
  { key: "topic", type: "str", kind: "string", default: "", has_default: false },
  { key: "limit", type: "int", kind: "integer", default: 3, has_default: true },
  { key: "draft", type: "bool", kind: "boolean", default: false, has_default: false },
  { key: "notes", type: "list[str]", kind: "array", default: [], has_default: false },
];

let dom, model, cleanup;
beforeEach(() => {
  dom = setupDom();
  model = createFakeModel();
  cleanup = widget.render({ model, el: dom.el });
});
afterEach(() => {
  cleanup();
  dom.close();
});

async function openForm() {
  click(dom.window, dom.el.querySelector('[data-action="new-run"]'));
  const ask = model.last("input_form");
  assert.ok(ask, "the form asks Python for its fields");
  model.reply(ask, { fields: FIELDS });
  await settle();
  return dom.el.querySelector(".dd-run-form");
}

const startButton = (form) => [...form.querySelectorAll("button")].find((b) => b.textContent === "Start");
const row = (form, key) => form.querySelector(`.dd-run-field[data-key="${key}"]`);

test("the form has a field per input key with its type, and an untouched form sends no null", async () => {
  const form = await openForm();
  assert.deepEqual(
    [...form.querySelectorAll(".dd-run-field")].map((r) => r.getAttribute("data-key")),
    ["topic", "limit", "draft", "notes"],
  );
  assert.match(row(form, "notes").textContent, /list\[str\]/);
  assert.match(row(form, "limit").textContent, /int · default/);
  click(dom.window, startButton(form));
  const run = model.last("run");
  assert.deepEqual(JSON.parse(run.text), { limit: 3 }); // only the schema's own default
  assert.ok(!run.text.includes("null"));
});

test("typing in a field includes it, with a value of its kind", async () => {
  const form = await openForm();
  const topic = row(form, "topic").querySelector(".dd-run-value");
  topic.value = "tides";
  topic.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  const notes = row(form, "notes").querySelector(".dd-run-value");
  notes.value = '["a"]';
  notes.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  assert.equal(row(form, "topic").querySelector(".dd-run-use").checked, true);
  click(dom.window, startButton(form));
  assert.deepEqual(JSON.parse(model.last("run").text), { topic: "tides", limit: 3, notes: ["a"] });
});

test("a bad value is named next to Start and nothing is sent", async () => {
  const form = await openForm();
  const notes = row(form, "notes").querySelector(".dd-run-value");
  notes.value = "[oops";
  notes.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  const before = model.sent.length;
  click(dom.window, startButton(form));
  assert.equal(model.sent.length, before);
  assert.match(form.querySelector(".dd-run-error").textContent, /'notes' is not valid JSON/);
});

test("JSON mode shows the input the fields make, and back", async () => {
  const form = await openForm();
  const mode = form.querySelector(".dd-run-mode");
  click(dom.window, mode);
  const box = form.querySelector(".dd-run-input");
  assert.equal(box.hidden, false);
  assert.deepEqual(JSON.parse(box.value), { limit: 3 });
  box.value = '{"topic": "moon", "draft": true}';
  click(dom.window, mode);
  assert.equal(row(form, "topic").querySelector(".dd-run-value").value, "moon");
  assert.equal(row(form, "limit").querySelector(".dd-run-use").checked, false);
  click(dom.window, startButton(form));
  assert.deepEqual(JSON.parse(model.last("run").text), { topic: "moon", draft: true });
});

test("an input that started a run is offered again, newest first", async () => {
  let form = await openForm();
  click(dom.window, startButton(form));
  model.reply(model.last("run"), { started: true, code: "" });
  await settle();
  assert.equal(form.hidden, true);
  form = await openForm();
  const picker = form.querySelector(".dd-run-history");
  assert.equal(picker.hidden, false);
  assert.deepEqual(
    [...picker.options].map((o) => o.textContent),
    ["Previous inputs…", '{"limit":3}'],
  );
  picker.value = "0";
  picker.dispatchEvent(new dom.window.Event("change", { bubbles: true }));
  assert.equal(form.querySelector(".dd-run-input").value, '{"limit":3}');
});

test("without the fields (an old kernel) the form is a JSON box starting as {}", async () => {
  click(dom.window, dom.el.querySelector('[data-action="new-run"]'));
  model.fail(model.last("input_form"), "Unknown request 'input_form'");
  await settle();
  const box = dom.el.querySelector(".dd-run-form .dd-run-input");
  assert.equal(box.hidden, false);
  assert.equal(box.value, "{}");
});

test("the pure helpers: values by kind, entries, history", () => {
  assert.equal(fieldValue(FIELDS[1], "4"), 4);
  assert.match(fieldValue(FIELDS[1], "4.5").message, /'limit' needs a whole number/);
  assert.equal(fieldValue(FIELDS[2], "true"), true);
  const entries = initialEntries(FIELDS);
  assert.deepEqual(formInput(FIELDS, entries), { limit: 3 });
  const view = { model: {} };
  for (let i = 0; i < 12; i++) rememberInput(view, `{"n":${i}}`);
  rememberInput(view, '{"n":5}');
  assert.equal(runHistory(view).length, 10);
  assert.equal(runHistory(view)[0], '{"n":5}');
});
