// render() against a fake anywidget model: what the user sees and what the widget sends.

import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";

import widget, { REQUEST_TIMEOUT_MS, WATCH_EVERY_MS, findCheckpoints } from "../../js/widget.js";
import { click, createFakeModel, detailOf, mark, press, settle, setupDom } from "./support.mjs";

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
  mock.timers.reset();
  await dom.close();
});

function show(traits = {}) {
  model = createFakeModel(traits);
  cleanup = widget.render({ model, el: dom.el });
  return dom.el;
}

const text = (el, selector) => el.querySelector(selector)?.textContent ?? "";

/** Click a checkpoint and answer the select request with its detail. */
async function select(el, id) {
  click(dom.window, mark(el, id));
  const request = model.last("select");
  assert.equal(request.checkpoint_id, id);
  model.answerSelect(request, detailOf(id));
  await settle();
}

test("render draws one mark per checkpoint, shaped and labelled by source", () => {
  const el = show();
  const marks = el.querySelectorAll(".dd-mark");
  assert.equal(marks.length, 5);
  assert.match(mark(el, "c0").getAttribute("class"), /dd-src-input/);
  assert.ok(mark(el, "c0").querySelector("rect.dd-shape"), "input is a square");
  assert.ok(mark(el, "c1").querySelector("circle.dd-shape"), "loop is a circle");
  assert.ok(mark(el, "f1").querySelector("polygon.dd-shape"), "update is a diamond");
  assert.equal(text(mark(el, "f1"), ".dd-letter"), "U");
  assert.equal(text(mark(el, "c2"), ".dd-step"), "1");
  assert.equal(text(mark(el, "c2"), ".dd-writers"), "agent");
  assert.match(text(el, ".dd-thread"), /5 checkpoints · 2 branches/);
});

test("interrupts, errors, branch heads and the latest checkpoint stand out", () => {
  const el = show();
  assert.match(mark(el, "c3").getAttribute("class"), /dd-has-interrupt/);
  assert.equal(text(mark(el, "c3"), ".dd-badge-interrupt"), "1");
  assert.match(mark(el, "f1").getAttribute("class"), /dd-has-error/);
  assert.ok(mark(el, "f1").querySelector(".dd-badge-error"));
  assert.ok(mark(el, "c3").querySelector(".dd-head-ring") && mark(el, "f1").querySelector(".dd-head-ring"));
  assert.ok(!mark(el, "c2").querySelector(".dd-head-ring"));
  assert.equal(text(mark(el, "f1"), ".dd-latest-label"), "latest");
  assert.equal(el.querySelectorAll(".dd-latest-label").length, 1);
});

test("a checkpoint saved by another graph version is marked with a delta", () => {
  const el = show();
  assert.equal(el.querySelectorAll(".dd-graph-changed").length, 0);
  const dag = structuredClone(model.get("_dag"));
  dag.nodes[2].graph_changed = true;
  model.set("_dag", dag);
  const marks = el.querySelectorAll(".dd-graph-changed");
  assert.equal(marks.length, 1);
  assert.equal(marks[0].closest(".dd-mark").getAttribute("data-id"), dag.nodes[2].id);
  assert.match(marks[0].textContent, /graph version changed/);
});

test("a checkpoint with findings gets a flag, and its detail lists them", async () => {
  const el = show();
  assert.equal(el.querySelectorAll(".dd-badge-finding").length, 0);
  const dag = structuredClone(model.get("_dag"));
  const c2 = dag.nodes.find((n) => n.id === "c2");
  c2.findings = 2;
  model.set("_dag", dag);
  const badges = el.querySelectorAll(".dd-badge-finding");
  assert.equal(badges.length, 1);
  assert.equal(badges[0].closest(".dd-mark").getAttribute("data-id"), "c2");
  assert.match(mark(el, "c2").getAttribute("class"), /dd-has-finding/);
  assert.match(badges[0].textContent, /2 findings/);
  mark(el, "c2")
    .querySelector(".dd-shape")
    .dispatchEvent(new dom.window.MouseEvent("mouseover", { bubbles: true }));
  assert.match(el.querySelector(".dd-tooltip").textContent, /2 findings/);

  click(dom.window, mark(el, "c2"));
  const request = model.last("select");
  const message = "Node 'agent' wrote key 'nte', which the state schema S does not have: dropped.";
  model.answerSelect(request, {
    ...detailOf("c2"),
    findings: [{ code: "unknown-key", message, node: "agent", key: "nte" }],
  });
  await settle();
  const items = el.querySelectorAll(".dd-findings .dd-finding");
  assert.equal(items.length, 1);
  assert.equal(items[0].getAttribute("data-code"), "unknown-key");
  assert.equal(text(items[0], ".dd-finding-code"), "unknown-key");
  assert.equal(text(items[0], ".dd-finding-message"), message);
  assert.match(items[0].textContent, /node agent key nte/);
});

test("a checkpoint without findings has no findings section", async () => {
  const el = show();
  await select(el, "c2");
  assert.equal(el.querySelector(".dd-findings"), null);
});

test("hovering a checkpoint shows its next nodes", () => {
  const el = show();
  mark(el, "c2")
    .querySelector(".dd-shape")
    .dispatchEvent(new dom.window.MouseEvent("mouseover", { bubbles: true }));
  const tip = el.querySelector(".dd-tooltip");
  assert.equal(tip.hidden, false);
  assert.match(tip.textContent, /next: tools/);
  assert.match(tip.textContent, /written by: agent/);
});

test("a new _dag redraws the graph: a fork's checkpoint appears", () => {
  const el = show();
  const dag = structuredClone(model.get("_dag"));
  dag.nodes.push({
    ...dag.nodes[4],
    id: "f2",
    parent: "c1",
    depth: 2,
    lane: 2,
    source: "fork",
    is_latest: true,
  });
  dag.nodes[4].is_latest = false;
  dag.lanes = 3;
  model.set("_dag", dag);
  assert.equal(el.querySelectorAll(".dd-mark").length, 6);
  assert.ok(mark(el, "f2").querySelector("polygon.dd-shape"));
  assert.match(text(el, ".dd-thread"), /6 checkpoints · 3 branches/);
});

test("clicking a checkpoint sends select with a uuid and shows the detail it gets back", async () => {
  const el = show();
  click(dom.window, mark(el, "c3").querySelector(".dd-shape"));
  const request = model.last("select");
  assert.equal(request.kind, "select");
  assert.equal(request.checkpoint_id, "c3");
  assert.equal(typeof request.uuid, "string");
  assert.ok(request.uuid.length > 8);
  assert.equal(
    el.querySelector(".dd-ring-selected").getAttribute("visibility"),
    "visible",
    "highlighted at once",
  );

  model.answerSelect(request, detailOf("c3"));
  await settle();
  const detail = el.querySelector(".dd-detail");
  assert.equal(detail.querySelector(".dd-detail-head").getAttribute("data-id"), "c3");
  const state = detail.querySelector(".dd-state");
  assert.match(state.textContent, /messages/);
  assert.match(state.textContent, /"Paris"/);
  const count = state.querySelector('.dd-channel-row[data-channel="count"]');
  assert.equal(count.querySelector(".dd-json-number").textContent, "2");
  assert.match(text(detail, ".dd-next"), /gate/);
  assert.match(text(detail, ".dd-metadata"), /source: "loop"/);
});

test("the detail shows blob versions: shortened version, new or shared, size", async () => {
  const el = show();
  await select(el, "c3");
  const rows = [...el.querySelectorAll(".dd-blob-table tbody tr")];
  assert.deepEqual(
    rows.map((r) => r.getAttribute("data-channel")),
    ["messages", "count", "approved"],
  );
  const cells = [...rows[1].querySelectorAll("td")].map((td) => td.textContent);
  assert.deepEqual(cells, ["count", "2 · 0.51234…", "new here", "2.0 KiB"]);
  assert.equal(rows[0].querySelectorAll("td")[2].textContent, "shared with parent");
  assert.equal(
    rows[1].querySelector("code").getAttribute("title"),
    "00000000000000000000000000000002.0.5123456",
  );
  assert.match(text(el, ".dd-blob-summary"), /2 of 3 blobs written at this checkpoint/);
});

test("the detail shows interrupts with their ids and values, and failed tasks with their errors", async () => {
  const el = show();
  await select(el, "c3");
  const interrupt = el.querySelector(".dd-interrupts .dd-interrupt");
  assert.equal(interrupt.getAttribute("data-interrupt-id"), "int-7c1e");
  assert.match(interrupt.textContent, /int-7c1e/);
  assert.match(interrupt.textContent, /"Send it\?"/);

  await select(el, "f1");
  assert.equal(el.querySelector(".dd-interrupts"), null);
  const task = el.querySelector(".dd-task.dd-task-error");
  assert.equal(task.getAttribute("data-task-id"), "task-tools");
  assert.match(text(task, ".dd-task-error-text"), /ValueError: count 10 is over the limit/);
  const audit = [...el.querySelectorAll(".dd-task")].find(
    (t) => t.getAttribute("data-task-id") === "task-audit",
  );
  assert.match(audit.textContent, /count/);
  assert.match(audit.textContent, /11/);
});

test("answers are matched to requests by uuid; a late answer to an old click is ignored", async () => {
  const el = show();
  click(dom.window, mark(el, "c1"));
  const first = model.last("select");
  click(dom.window, mark(el, "c2"));
  const second = model.last("select");
  assert.notEqual(first.uuid, second.uuid);

  model.emit("msg:custom", { uuid: "someone-else", result: { checkpoint_id: "c3" } });
  // Python answers the first click after the second was sent: its detail is not drawn.
  model.set("_detail", detailOf("c1"));
  await settle();
  assert.notEqual(el.querySelector(".dd-detail-head")?.getAttribute("data-id"), "c1");
  model.answerSelect(second, detailOf("c2"));
  await settle();
  assert.equal(el.querySelector(".dd-detail-head").getAttribute("data-id"), "c2");
  model.reply(first, { checkpoint_id: "c1" });
  await settle();
  assert.equal(el.querySelector(".dd-detail-head").getAttribute("data-id"), "c2");
});

test("a detail pushed by Python through _detail and _selected is shown", async () => {
  const el = show();
  model.answerSelect(model.last("select"), detailOf("c3")); // the first view's
  await settle();
  model.set("_selected", "f1");
  model.set("_detail", detailOf("f1"));
  assert.equal(el.querySelector(".dd-detail-head").getAttribute("data-id"), "f1");
  assert.equal(
    el.querySelector(".dd-ring-selected").getAttribute("transform"),
    mark(el, "f1").getAttribute("transform"),
  );
});

test("an error answer is shown to the user", async () => {
  const el = show();
  click(dom.window, mark(el, "c1"));
  model.fail(model.last("select"), "Checkpoint c1 could not be read: unknown type 'Foo' in channel 'x'.");
  await settle();
  const error = el.querySelector(".dd-error");
  assert.equal(error.hidden, false);
  assert.match(error.textContent, /unknown type 'Foo' in channel 'x'/);
});

test("_error and _status from Python are shown", () => {
  const el = show();
  model.set("_status", "interrupted at gate");
  model.set("_error", "ValueError in node tools: boom");
  assert.equal(text(el, ".dd-status"), "interrupted at gate");
  assert.match(text(el, ".dd-error"), /ValueError in node tools: boom/);
  model.set("_error", "");
  assert.equal(el.querySelector(".dd-error").hidden, true);
});

test("a request left unanswered times out after 30 s with a readable error", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const el = show();
  click(dom.window, mark(el, "c1"));
  mock.timers.tick(REQUEST_TIMEOUT_MS - 1);
  await settle();
  assert.equal(el.querySelector(".dd-error").hidden, true);
  mock.timers.tick(1);
  await settle();
  assert.match(text(el, ".dd-error"), /No answer to 'select' after 30 s/);
});

test("Fork sends the edited channels as JSON text, with the chosen node", async () => {
  const el = show();
  await select(el, "c2");
  const editButton = el.querySelector('[data-action="edit"][data-channel="count"]');
  click(dom.window, editButton);
  const editor = el.querySelector('textarea.dd-editor[data-channel="count"]');
  assert.equal(editor.value, "1", "the editor starts with the current value");
  editor.value = "42";
  click(dom.window, el.querySelector('[data-action="edit"][data-channel="messages"]'));
  el.querySelector(".dd-as-node").value = "tools";
  click(dom.window, el.querySelector('[data-action="fork"]'));
  const request = model.last("fork");
  assert.deepEqual(
    { checkpoint_id: request.checkpoint_id, edits: request.edits, as_node: request.as_node },
    { checkpoint_id: "c2", edits: { count: "42" }, as_node: "tools" },
    "only the changed channel is sent, as text",
  );
  assert.ok(el.querySelector('[data-action="fork"]').hasAttribute("disabled"), "disabled while pending");
  model.reply(request, { checkpoint_id: "f9", code: "await graph.aupdate_state(...)" });
  await settle();
  assert.ok(!el.querySelector('[data-action="fork"]').hasAttribute("disabled"));
});

test("a refused fork shows Python's error next to the Fork button", async () => {
  const el = show();
  await select(el, "c2");
  click(dom.window, el.querySelector('[data-action="edit"][data-channel="count"]'));
  el.querySelector('textarea.dd-editor[data-channel="count"]').value = "{not json";
  click(dom.window, el.querySelector('[data-action="fork"]'));
  model.fail(model.last("fork"), "Channel 'count' is not valid JSON: Expecting property name (line 1).");
  await settle();
  const slot = el.querySelector(".dd-fork-error");
  assert.equal(slot.hidden, false);
  assert.match(slot.textContent, /Channel 'count' is not valid JSON/);
});

test("Fork with nothing edited explains what to do and sends nothing", async () => {
  const el = show();
  await select(el, "c2");
  click(dom.window, el.querySelector('[data-action="fork"]'));
  assert.equal(model.last("fork"), undefined);
  assert.match(text(el, ".dd-fork-error"), /press Edit on a channel/);
});

test("Rerun from here sends rerun; while _running a Stop button sends stop", async () => {
  const el = show();
  await select(el, "c2");
  click(dom.window, el.querySelector('[data-action="rerun"]'));
  assert.equal(model.last("rerun").checkpoint_id, "c2");
  const stopButton = el.querySelector(".dd-stop");
  assert.equal(stopButton.hidden, true);
  model.set("_running", true);
  assert.equal(el.querySelector(".dd-running").hidden, false);
  assert.equal(stopButton.hidden, false);
  click(dom.window, stopButton);
  assert.ok(model.last("stop"));
  model.set("_running", false);
  assert.equal(el.querySelector(".dd-running").hidden, true);
});

test("Resume sends one JSON answer per pending interrupt id", async () => {
  const el = show();
  await select(el, "c3");
  const box = el.querySelector('textarea.dd-answer[data-interrupt-id="int-7c1e"]');
  box.value = '{"approved": true}';
  click(dom.window, el.querySelector('[data-action="resume"]'));
  const request = model.last("resume");
  assert.equal(request.checkpoint_id, "c3");
  assert.deepEqual(request.answers, { "int-7c1e": '{"approved": true}' });
  model.fail(request, "Interrupt int-7c1e is not pending any more: refresh the thread.");
  await settle();
  assert.match(text(el, ".dd-resume-error"), /not pending any more/);
});

test("shift-click diffs the selected checkpoint against another one", async () => {
  const el = show();
  await select(el, "c2");
  const selects = model.sent.filter((m) => m.kind === "select").length;
  click(dom.window, mark(el, "f1"), { shiftKey: true });
  const request = model.last("diff");
  assert.deepEqual([request.a, request.b], ["c2", "f1"]);
  assert.equal(model.sent.filter((m) => m.kind === "select").length, selects, "shift-click does not select");
  model.reply(request, [{ channel: "count", change: "changed", old: 1, new: 10 }]);
  await settle();
  const row = el.querySelector(".dd-diff-table tbody tr");
  assert.equal(row.getAttribute("data-channel"), "count");
  assert.deepEqual(
    [...row.querySelectorAll("td")].map((td) => td.textContent),
    ["count", "changed", "1", "10"],
  );
  assert.equal(el.querySelector(".dd-ring-diff").getAttribute("visibility"), "visible");
  click(dom.window, el.querySelector('[data-action="close-diff"]'));
  assert.equal(el.querySelector(".dd-diff").hidden, true);
});

test("arrow keys move between checkpoints and select them", async () => {
  const el = show();
  const graph = el.querySelector(".dd-dag-scroll");
  assert.equal(graph.getAttribute("tabindex"), "0", "the graph is focusable");
  await select(el, "c2");
  const moves = [];
  for (const key of ["ArrowRight", "ArrowDown", "ArrowLeft", "ArrowLeft"]) {
    press(dom.window, graph, key);
    moves.push(model.last("select").checkpoint_id);
  }
  assert.deepEqual(moves, ["c3", "f1", "c2", "c1"]);
});

test("keys typed in the widget stay in it: the notebook's shortcuts never see them", async () => {
  const el = show();
  const root = el.querySelector(".dd-root");
  // JupyterLab and Notebook 7 (Lumino) skip every shortcut for targets under this attribute.
  assert.equal(root.getAttribute("data-lm-suppress-shortcuts"), "true");
  const reached = [];
  dom.document.addEventListener("keydown", (event) => reached.push(event.key));
  const graph = el.querySelector(".dd-dag-scroll");
  // Lumino checks the key's target first: every element focused in the widget carries it too.
  assert.equal(graph.getAttribute("data-lm-suppress-shortcuts"), "true");
  await select(el, "c2");
  const edit = el.querySelector('[data-action="edit"]');
  edit.focus();
  assert.equal(edit.getAttribute("data-lm-suppress-shortcuts"), "true");
  for (const key of ["d", "d", "a", "ArrowRight", "Enter", "Escape"]) press(dom.window, graph, key);
  assert.deepEqual(reached, [], "no key bubbled out of the widget");
  assert.equal(model.last("select").checkpoint_id, "c3", "the widget itself still got the arrow key");
  press(dom.window, dom.document.body, "x");
  assert.deepEqual(reached, ["x"], "keys typed outside the widget are untouched");
});

test("the read-only export shows no code panel: it can neither fork, rerun nor resume", () => {
  const el = show({ _readonly: true });
  assert.equal(el.querySelector(".dd-code-panel").hidden, true);
  assert.ok(!el.textContent.includes("shows its Python here"));
  model.set("_readonly", false); // a live widget: the panel says what will appear there
  assert.equal(el.querySelector(".dd-code-panel").hidden, false);
  assert.ok(el.textContent.includes("shows its Python here"));
});

test("read-only (the standalone export) hides every editing control", async () => {
  const el = show({ _readonly: true });
  await select(el, "c3");
  for (const selector of [
    '[data-action="edit"]',
    '[data-action="fork"]',
    '[data-action="rerun"]',
    '[data-action="resume"]',
    "textarea",
  ]) {
    assert.equal(el.querySelector(selector), null, selector);
  }
  assert.match(text(el, ".dd-interrupts"), /int-7c1e/, "interrupts are still shown");
  model.set("_running", true);
  assert.equal(el.querySelector(".dd-stop").hidden, true);
});

test("the topology shows execution counts and highlights re-executed nodes", () => {
  const el = show({
    _topology: {
      nodes: [
        { id: "agent", x: 40, y: 20, count: 3, reruns: 2 },
        { id: "tools", x: 40, y: 80, count: 1, reruns: 0 },
      ],
      edges: [{ source: "agent", target: "tools", conditional: false }],
      width: 80,
      height: 100,
      svg: null,
    },
  });
  const nodes = el.querySelectorAll(".dd-topology .dd-topo-node");
  assert.equal(nodes.length, 2);
  assert.match(nodes[0].getAttribute("class"), /dd-rerun/);
  assert.match(nodes[0].textContent, /agent ×3/);
  const rerun = el.querySelector(".dd-count-table tr.dd-rerun");
  assert.match(rerun.textContent, /agent×32 re-executions/);
  model.set("_topology", {
    nodes: [{ id: "a", x: 0, y: 0, count: 1, reruns: 0 }],
    edges: [],
    width: 9,
    height: 9,
    svg: '<svg xmlns="http://www.w3.org/2000/svg" class="from-graphviz"></svg>',
  });
  assert.ok(el.querySelector(".dd-topology svg.from-graphviz"), "graphviz's drawing is used when given");
});

test("the code panel lists each action's Python with a copy button", async () => {
  const el = show();
  const copied = [];
  Object.defineProperty(globalThis, "navigator", {
    value: { clipboard: { writeText: async (t) => copied.push(t) } },
    configurable: true,
  });
  model.set("_code", [
    { action: "fork", code: "await graph.aupdate_state(config, {'count': 42})" },
    { action: "rerun", code: "await graph.ainvoke(None, config)" },
  ]);
  const entries = el.querySelectorAll(".dd-code-entry");
  assert.equal(entries.length, 2);
  assert.match(entries[1].textContent, /await graph\.ainvoke\(None, config\)/);
  click(dom.window, entries[0].querySelector('[data-action="copy"]'));
  await settle();
  assert.deepEqual(copied, ["await graph.aupdate_state(config, {'count': 42})"]);
  assert.equal(entries[0].querySelector('[data-action="copy"]').textContent, "Copied");
});

test("JSON subtrees below the first level are built when opened", async () => {
  const el = show();
  await select(el, "c3");
  const metadataTree = el.querySelector(".dd-metadata .dd-json-tree");
  assert.equal(metadataTree.open, true);
  const configTree = el.querySelectorAll(".dd-metadata .dd-json-tree")[1];
  assert.equal(configTree.open, false);
  assert.equal(configTree.querySelectorAll(".dd-json-row").length, 0);
  configTree.open = true;
  configTree.dispatchEvent(new dom.window.Event("toggle"));
  assert.match(configTree.textContent, /configurable/);
});

test("cleanup removes every model handler, DOM listener and pending request", async () => {
  const el = show();
  assert.ok(model.handlerCount() > 0);
  click(dom.window, mark(el, "c1"));
  const pending = model.last("select");
  cleanup();
  cleanup = null;
  assert.equal(model.handlerCount(), 0);
  assert.equal(dom.el.childElementCount, 0, "the widget's DOM is removed");
  const before = model.sent.length;
  click(dom.window, el);
  model.answerSelect(pending, detailOf("c1"));
  await settle();
  assert.equal(model.sent.length, before);
});

test("cleanup clears the request timers", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const el = show();
  const errors = [];
  click(dom.window, mark(el, "c1"));
  cleanup();
  cleanup = null;
  process.once("unhandledRejection", (e) => errors.push(e));
  mock.timers.tick(REQUEST_TIMEOUT_MS * 2);
  assert.deepEqual(errors, []);
});

test("a value cut for display says so; Show all shows it a page at a time, Show more the next", async () => {
  const el = show();
  click(dom.window, mark(el, "c3"));
  const cut = { ...detailOf("c3"), clipped: ["messages"] };
  cut.values = { ...cut.values, messages: ["hi", "… 9,998 more items"] };
  model.answerSelect(model.last("select"), cut);
  await settle();
  const row = el.querySelector('.dd-channel-row[data-channel="messages"]');
  assert.match(row.textContent, /shown in part/);
  click(dom.window, row.querySelector('[data-action="show-all"]'));
  const request = model.last("value");
  assert.deepEqual([request.checkpoint_id, request.channel, request.page], ["c3", "messages", 0]);
  const whole = Array.from({ length: 300 }, (_, i) => `m${i}`);
  const page = (offset, next) => ({
    checkpoint_id: "c3",
    channel: "messages",
    kind: "items",
    value: whole.slice(offset, next ?? 300),
    offset,
    total: 300,
    next,
  });
  model.reply(request, page(0, 200));
  await settle();
  const shown = el.querySelector('.dd-channel-row[data-channel="messages"]');
  assert.doesNotMatch(shown.textContent, /shown in part|more items/);
  assert.ok(shown.querySelector(".dd-whole-value"), "the value scrolls in its own box");
  assert.match(shown.querySelector(".dd-page-status").textContent, /200 of 300 items/);
  const more = shown.querySelector(".dd-show-more");
  assert.equal(more.hidden, false);
  click(dom.window, more);
  const second = model.last("value");
  assert.equal(second.page, 200);
  model.reply(second, page(200, null));
  await settle();
  assert.equal(shown.querySelectorAll(".dd-page").length, 2);
  assert.match(shown.querySelector(".dd-page-status").textContent, /300 of 300 items/);
  assert.equal(more.hidden, true);
});

test("Show all of a long string shows its characters a page at a time", async () => {
  const el = show();
  click(dom.window, mark(el, "c3"));
  const cut = { ...detailOf("c3"), clipped: ["messages"] };
  cut.values = { ...cut.values, messages: "abc… (2,000,000 characters)" };
  model.answerSelect(model.last("select"), cut);
  await settle();
  const row = el.querySelector('.dd-channel-row[data-channel="messages"]');
  click(dom.window, row.querySelector('[data-action="show-all"]'));
  const request = model.last("value");
  model.reply(request, {
    checkpoint_id: "c3",
    channel: "messages",
    kind: "text",
    value: "x".repeat(100_000),
    offset: 0,
    total: 2_000_000,
    next: 100_000,
  });
  await settle();
  const shown = el.querySelector('.dd-channel-row[data-channel="messages"]');
  assert.equal(shown.querySelector("pre.dd-page").textContent.length, 100_000);
  assert.match(shown.querySelector(".dd-page-status").textContent, /100,000 of 2,000,000 characters/);
});

test("Edit on a cut value asks for the whole value and prefills it, never the cut one", async () => {
  const el = show();
  click(dom.window, mark(el, "c3"));
  const cut = { ...detailOf("c3"), editable: ["messages", "count"], clipped: ["messages"] };
  cut.values = { ...cut.values, messages: ["hi", "… 2 more items"] };
  model.answerSelect(model.last("select"), cut);
  await settle();
  const row = el.querySelector('.dd-channel-row[data-channel="messages"]');
  click(dom.window, row.querySelector('[data-action="edit"]'));
  assert.equal(el.querySelector("textarea.dd-editor"), null, "no editor before the whole value");
  model.reply(model.last("value"), { checkpoint_id: "c3", channel: "messages", value: ["a", "b", "c"] });
  await settle();
  const editor = el.querySelector('textarea.dd-editor[data-channel="messages"]');
  assert.deepEqual(JSON.parse(editor.value), ["a", "b", "c"]);
});

test("a shown view asks Python to watch the thread every WATCH_EVERY_MS, one look at a time", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  show();
  assert.equal(model.last("watch"), undefined);
  mock.timers.tick(WATCH_EVERY_MS);
  const first = model.last("watch");
  assert.ok(first, "a look after WATCH_EVERY_MS");
  mock.timers.tick(WATCH_EVERY_MS * 3);
  assert.equal(model.sent.filter((m) => m.kind === "watch").length, 1, "no second look while one waits");
  model.reply(first, { changed: false });
  await settle();
  mock.timers.tick(WATCH_EVERY_MS);
  assert.equal(model.sent.filter((m) => m.kind === "watch").length, 2);
});

test("no look in the read-only export", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  show({ _readonly: true });
  mock.timers.tick(WATCH_EVERY_MS * 2);
  assert.equal(model.last("watch"), undefined);
  assert.equal(dom.el.querySelector(".dd-refresh").hidden, true, "no Refresh in the export");
});

test("Refresh sends refresh", () => {
  const el = show();
  click(dom.window, el.querySelector('[data-action="refresh"]'));
  assert.ok(model.last("refresh"));
});

test("cleanup stops the watch: a look answered after it schedules nothing", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  show();
  mock.timers.tick(WATCH_EVERY_MS);
  const look = model.last("watch");
  cleanup();
  cleanup = null;
  model.reply(look, { changed: false });
  await settle();
  mock.timers.tick(WATCH_EVERY_MS * 3);
  assert.equal(model.sent.filter((m) => m.kind === "watch").length, 1);
});

test("an object loaded without its class shows as that class", async () => {
  const el = show();
  click(dom.window, mark(el, "c1"));
  const request = model.last("select");
  const item = { __type__: "shop.Item", sku: "a1", size: { __type__: "shop.Size", value: "l" } };
  model.answerSelect(request, { ...detailOf("c1"), values: { item } });
  await settle();
  const summaries = [...el.querySelectorAll(".dd-json-tree > summary")].map((s) => s.textContent);
  assert.ok(summaries.includes("shop.Item {sku, size}"), summaries.join(" | "));
});

test("a reducer channel says so; Edit offers replace or append, previews, and forks with the mode", async () => {
  const el = show();
  click(dom.window, mark(el, "c3"));
  model.answerSelect(model.last("select"), { ...detailOf("c3"), reducers: { messages: "operator.add" } });
  await settle();
  const row = el.querySelector('.dd-channel-row[data-channel="messages"]');
  assert.match(text(row, ".dd-reducer"), /reducer: operator\.add/);
  assert.equal(el.querySelector('.dd-channel-row[data-channel="count"] .dd-reducer'), null);

  click(dom.window, row.querySelector('[data-action="edit"]'));
  const editor = row.querySelector("textarea.dd-editor");
  assert.deepEqual(JSON.parse(editor.value), ["hi", "thinking", "Paris"], "replace starts from the value");
  const append = row.querySelector('input[data-mode="append"]');
  append.checked = true;
  append.dispatchEvent(new dom.window.Event("change"));
  assert.equal(editor.value, "", "append starts from nothing to add");
  editor.value = '["planned"]';
  click(dom.window, row.querySelector('[data-action="preview"]'));
  const preview = model.last("preview");
  assert.deepEqual(
    [preview.checkpoint_id, preview.channel, preview.text, preview.modes],
    ["c3", "messages", '["planned"]', { messages: "append" }],
  );
  model.reply(preview, {
    channel: "messages",
    value: ["hi", "thinking", "Paris", "planned"],
    clipped: false,
  });
  await settle();
  assert.match(text(row, ".dd-preview"), /after the reducer/);
  assert.match(text(row, ".dd-preview"), /4 items/);

  click(dom.window, el.querySelector('[data-action="fork"]'));
  const fork = model.last("fork");
  assert.deepEqual(fork.edits, { messages: '["planned"]' });
  assert.deepEqual(fork.modes, { messages: "append" });
});

test("go to: a step, a node, error, interrupt and fork find their checkpoints", () => {
  const nodes = createFakeModel().get("_dag").nodes;
  assert.deepEqual(findCheckpoints(nodes, "2"), ["c3", "f1"]);
  assert.deepEqual(findCheckpoints(nodes, "step -1"), ["c0"]);
  assert.deepEqual(findCheckpoints(nodes, "agent"), ["c1", "c2", "f1"]); // wrote it or runs it next
  assert.deepEqual(findCheckpoints(nodes, "errors"), ["f1"]);
  assert.deepEqual(findCheckpoints(nodes, "interrupt"), ["c3"]);
  assert.deepEqual(findCheckpoints(nodes, "fork"), ["f1"]);
  assert.deepEqual(findCheckpoints(nodes, "nobody"), []);
});

test("Enter in the go-to box selects each match in turn and says which", async () => {
  const el = show();
  const box = el.querySelector(".dd-find");
  box.value = "2";
  box.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  // The first view selected c3 (the main run's end): the next match after it is f1.
  assert.equal(model.last("select").checkpoint_id, "f1");
  assert.equal(text(el, ".dd-find-count"), "2 of 2");
  model.answerSelect(model.last("select"), detailOf("f1"));
  await settle();
  box.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.equal(model.last("select").checkpoint_id, "c3");
  assert.equal(text(el, ".dd-find-count"), "1 of 2");
  box.value = "nobody";
  box.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.equal(text(el, ".dd-find-count"), "no checkpoint");
});

test("Threads lists the store's threads with their status; choosing one asks Python to show it", async () => {
  const el = show();
  click(dom.window, el.querySelector('[data-action="threads"]'));
  model.reply(model.last("threads"), {
    threads: [
      { thread_id: "t2", checkpoints: 7, step: 5, status: "failed at tools", kind: "failed", current: false },
      { thread_id: "t1", checkpoints: 5, step: 2, status: "done", kind: "done", current: true },
    ],
  });
  await settle();
  const panel = el.querySelector(".dd-threads");
  assert.equal(panel.hidden, false);
  assert.deepEqual(
    [...panel.querySelectorAll(".dd-thread-option")].map((o) => o.textContent),
    ["t2 · 7 checkpoints · step 5 · failed at tools", "t1 · 5 checkpoints · step 2 · done"],
  );
  assert.equal(panel.querySelector('[aria-selected="true"]').getAttribute("data-thread"), "t1");
  click(dom.window, panel.querySelector('[data-thread="t2"]'));
  assert.equal(model.last("thread").thread_id, "t2");
});

test("breakpoints: a checkbox per node before and after; a change sends every checked one", () => {
  const topology = {
    nodes: [
      { id: "__start__", x: 50, y: 20, count: 0, reruns: 0 },
      { id: "agent", x: 50, y: 80, count: 2, reruns: 1 },
      { id: "tools", x: 50, y: 140, count: 1, reruns: 0 },
    ],
    edges: [],
    width: 100,
    height: 160,
    svg: null,
  };
  const el = show({ _topology: topology, _breakpoints: { before: ["tools"], after: [] } });
  const boxes = [...el.querySelectorAll(".dd-breakpoints input[data-when]")];
  assert.deepEqual(
    boxes.map((b) => `${b.getAttribute("data-node")} ${b.getAttribute("data-when")} ${b.checked}`),
    ["agent before false", "agent after false", "tools before true", "tools after false"],
  );
  boxes[1].checked = true;
  boxes[1].dispatchEvent(new dom.window.Event("change"));
  const sent = model.last("breakpoints");
  assert.deepEqual([sent.before, sent.after], [["tools"], ["agent"]]);
});

test("New run opens a form that never starts with nulls; Start sends the typed input", async () => {
  const el = show();
  await select(el, "c3");
  click(dom.window, el.querySelector('[data-action="new-run"]'));
  const input = el.querySelector("textarea.dd-run-input");
  assert.equal(input.value, "{}"); // the JSON box, until the fields arrive (run-form.test.mjs)
  input.value = '{"messages": ["hello"]}';
  click(dom.window, el.querySelector(".dd-run-form .dd-primary"));
  const sent = model.last("run");
  assert.equal(sent.text, '{"messages": ["hello"]}');
  model.fail(sent, "The state schema has no key 'nope'; nothing was run.");
  await settle();
  assert.match(text(el, ".dd-run-error"), /no key 'nope'/);
  click(dom.window, el.querySelector(".dd-run-form .dd-primary"));
  model.reply(model.last("run"), { started: true, code: "..." });
  await settle();
  assert.equal(el.querySelector(".dd-run-form").hidden, true);
});
