// The Health panel: the `health` request it sends and the tables it draws, as text.

import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";

import widget, {
  HEALTH_SLA_S,
  HEALTH_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  createStaticModel,
  healthCell,
} from "../../js/widget.js";
import { click, createFakeModel, press, settle, setupDom, smallDag } from "./support.mjs";

let dom;
let model;
let cleanup;

beforeEach(() => {
  dom = setupDom();
});

afterEach(async () => {
  if (cleanup) cleanup();
  cleanup = null;
  mock.timers.reset();
  await dom.close();
});

function show(traits = {}) {
  model = createFakeModel(traits);
  cleanup = widget.render({ model, el: dom.el });
  return dom.el;
}

const HOSTILE = '<img src=x onerror="globalThis.pwned=1">';

/** A reply as widget.py sends it (inspect.health.health_data). */
function report(slaS) {
  const one = (name, columns, rows) => ({ name, columns, rows });
  return {
    sla_s: slaS,
    tables: [
      one("latency", ["samples", "p50_ms", "p95_ms"], [[12, 1.25, 3.5]]),
      one(
        "waiting",
        ["thread_id", "checkpoint_id", "interrupts", "since", "waiting_s"],
        [[HOSTILE, "1f0-abc", 2, "2026-12-01T00:00:00+00:00", 7200.5]],
      ),
      one("resumes", ["failed_steps", "resumed", "succeeded", "success_rate"], [[4, 4, 3, 0.75]]),
      one(
        "failures",
        ["class", "tasks"],
        [
          ["transient", 1],
          ["poison", 0],
        ],
      ),
      one("size", ["threads", "checkpoints", "bytes", "file_bytes"], [[1, 9, 2048, null]]),
      one("growth", ["day", "checkpoints", "bytes", "total_bytes"], []),
      one("largest", ["thread_id", "checkpoints", "bytes"], [[HOSTILE, 9, 2048]]),
    ],
  };
}

const button = (el) => el.querySelector(".dd-health-button");
const panel = (el) => el.querySelector(".dd-health");
const item = (el, name) => el.querySelector(`[data-health="${name}"]`);
const cells = (el, name) => [...item(el, name).querySelectorAll("td")].map((td) => td.textContent);

test("Health opens a panel that asks for the store's health and draws each table as text", async () => {
  const el = show();
  assert.equal(panel(el).hidden, true);
  click(dom.window, button(el));
  assert.equal(panel(el).hidden, false);
  const request = model.last("health");
  assert.equal(request.sla_s, HEALTH_SLA_S);
  assert.match(panel(el).textContent, /reading the store/);
  model.reply(request, report(HEALTH_SLA_S));
  await settle();

  assert.deepEqual(cells(el, "latency"), ["12", "1.25", "3.5"]);
  assert.deepEqual(cells(el, "resumes"), ["4", "4", "3", "75 %"]);
  assert.deepEqual(cells(el, "size"), ["1", "9", "2.0 KiB", "—"]);
  assert.equal(item(el, "growth").textContent, "growthnone");
  assert.match(item(el, "waiting").querySelector("h5").textContent, /waiting longer than 3600 s/);
  // A thread id is text: shown as typed, never an element.
  assert.equal(cells(el, "waiting")[0], HOSTILE);
  assert.equal(panel(el).querySelector("img"), null);
  assert.equal(globalThis.pwned, undefined);
});

test("Refresh asks again with the typed SLA; a late older answer does not overwrite", async () => {
  const el = show();
  click(dom.window, button(el));
  const first = model.last("health");
  const sla = panel(el).querySelector(".dd-health-sla");
  sla.value = "0";
  press(dom.window, sla, "Enter");
  const second = model.last("health");
  assert.notEqual(second.uuid, first.uuid);
  assert.equal(second.sla_s, 0);
  model.reply(second, report(0));
  await settle();
  model.reply(first, report(HEALTH_SLA_S));
  await settle();
  assert.match(item(el, "waiting").querySelector("h5").textContent, /longer than 0 s/);

  click(dom.window, panel(el).querySelector('[data-health-action="refresh"]'));
  assert.equal(model.sent.filter((m) => m.kind === "health").length, 3);
});

test("a store that cannot report its health shows the sentence, never an empty panel", async () => {
  const el = show();
  click(dom.window, button(el));
  model.fail(model.last("health"), "This store (InMemorySaver) cannot list its threads, so …");
  await settle();
  const alert = panel(el).querySelector('[role="alert"]');
  assert.match(alert.textContent, /cannot list its threads/);
  click(dom.window, panel(el).querySelector('[data-health-action="close"]'));
  assert.equal(panel(el).hidden, true);
});

test("the read-only export has no Health button (it has no kernel to ask)", () => {
  cleanup = widget.render({
    model: createStaticModel({ thread_id: "t1", dag: smallDag(), details: {}, topology: null }),
    el: dom.el,
  });
  assert.equal(button(dom.el).hidden, true);
  assert.equal(panel(dom.el).hidden, true);
});

test("cleanup removes the button and the panel", () => {
  const el = show();
  cleanup();
  cleanup = null;
  assert.equal(el.querySelector(".dd-health-button"), null);
  assert.equal(el.querySelector(".dd-health"), null);
  assert.equal(model.handlerCount(), 0);
});

test("healthCell: bytes readable, rates as percent, missing as a dash", () => {
  assert.equal(healthCell("file_bytes", 3 * 1024 * 1024), "3.0 MiB");
  assert.equal(healthCell("success_rate", 1), "100 %");
  assert.equal(healthCell("p95_ms", null), "—");
  assert.equal(healthCell("class", "poison"), "poison");
});

test("a big store may take minutes: the panel waits HEALTH_TIMEOUT_MS, then says so", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const el = show();
  click(dom.window, button(el));
  mock.timers.tick(REQUEST_TIMEOUT_MS);
  await settle();
  assert.match(panel(el).textContent, /reading the store/);
  mock.timers.tick(HEALTH_TIMEOUT_MS - REQUEST_TIMEOUT_MS);
  await settle();
  assert.match(panel(el).querySelector('[role="alert"]').textContent, /No answer to 'health' after 300 s/);
});
