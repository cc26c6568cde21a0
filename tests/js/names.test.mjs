// Names: bidi and control characters as visible escapes, long names cut with an ellipsis and
// whole in a tooltip, in the header, the thread list, the channels and the topology.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget from "../../js/widget.js";
import { NAME_MAX, displayName, shortName } from "../../js/src/names.js";
import { click, createFakeModel, detailOf, mark, settle, setupDom } from "./support.mjs";

const RLO = "\u202e";
let dom, model, cleanup;
beforeEach(() => {
  dom = setupDom();
});
afterEach(() => {
  cleanup?.();
  dom.close();
});

function show(traits = {}) {
  model = createFakeModel(traits);
  cleanup = widget.render({ model, el: dom.el });
  return dom.el;
}

test("displayName writes invisible and direction-changing characters as \\uXXXX", () => {
  assert.equal(displayName(`report${RLO}txt.exe`), "report\\u202etxt.exe");
  assert.equal(displayName("a\u0000b\u200bc\n"), "a\\u0000b\\u200bc\\u000a");
  assert.equal(displayName("plain é 名前"), "plain é 名前");
  assert.equal(shortName("n".repeat(10_000)).length, NAME_MAX);
  assert.ok(shortName("n".repeat(10_000)).endsWith("…"));
});

test("the header shows a long or hostile thread id short and escaped, whole in its tooltip", () => {
  const id = `job${RLO}exe.txt` + "x".repeat(200);
  const el = show({ _thread_id: id });
  const header = el.querySelector(".dd-thread");
  assert.ok(!header.textContent.includes(RLO));
  assert.match(header.textContent, /^thread job\\u202eexe\.txtx+… · /);
  assert.equal(header.getAttribute("title"), `thread ${displayName(id)}`);
});

test("the thread list shows ids escaped and cut", async () => {
  const el = show();
  click(dom.window, el.querySelector('[data-action="threads"]'));
  const id = `a${RLO}b` + "y".repeat(100);
  model.reply(model.last("threads"), {
    threads: [{ thread_id: id, checkpoints: 1, step: 0, status: "done", kind: "done" }],
  });
  await settle();
  const option = el.querySelector(".dd-thread-option");
  assert.ok(!option.textContent.includes(RLO));
  assert.ok(option.textContent.startsWith("a\\u202eb"));
  assert.equal(option.getAttribute("title"), displayName(id));
  assert.equal(option.getAttribute("data-thread"), id); // the request still names the real id
});

test("a 10,000-character node name is drawn short in the topology, whole in its tooltip", () => {
  const long = "n".repeat(10_000);
  const el = show({
    _topology: {
      nodes: [
        { id: "__start__", x: 50, y: 20, count: 0, reruns: 0 },
        { id: long, x: 50, y: 80, count: 2, reruns: 0 },
      ],
      edges: [{ source: "__start__", target: long, conditional: false }],
      width: 120,
      height: 120,
      svg: null,
    },
  });
  const node = el.querySelector(".dd-topo-node:not(.dd-unrun)");
  assert.ok(node, "the node is drawn");
  assert.ok(node.querySelector("text").textContent.length < 60);
  assert.equal(node.querySelector("title").textContent, long);
  assert.ok(Number(node.querySelector("rect").getAttribute("width")) < 500);
});

test("a channel name with a right-to-left override is shown escaped in the detail", async () => {
  const el = show();
  const channel = `exe${RLO}txt`;
  const detail = { ...detailOf("c3"), values: { [channel]: 1 }, editable: [channel] };
  click(dom.window, mark(el, "c3"));
  model.answerSelect(model.last("select"), detail);
  await settle();
  const name = [...el.querySelectorAll(".dd-channel")].find((n) => n.textContent.includes("exe"));
  assert.ok(name, "the channel is listed");
  assert.equal(name.textContent, "exe\\u202etxt");
  assert.equal(name.getAttribute("title"), "exe\\u202etxt");
});
