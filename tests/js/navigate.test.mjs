// Getting around a big thread in the rendered widget: first view, zoom, runs, filters, the
// overview strip, and how many marks are in the DOM.

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget, { MARK_LIMIT, matchCheckpoints, layoutDag } from "../../js/widget.js";
import { click, createFakeModel, generatedDag, mainHead, press, settle, setupDom } from "./support.mjs";

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

function show(traits = {}) {
  model = createFakeModel(traits);
  cleanup = widget.render({ model, el: dom.el });
  return dom.el;
}

const nav = (el, what) => el.querySelector(`[data-nav="${what}"]`);
const filter = (el, kind) => el.querySelector(`[data-filter="${kind}"]`);
const drawn = (el) => el.querySelectorAll(".dd-mark, .dd-run").length;

test("the first view selects the main run's latest checkpoint and marks its path from the root", () => {
  const dag = generatedDag({ length: 300, forks: 6, branch: 30, seed: 3 });
  const el = show({ _dag: dag });
  const main = mainHead(dag);
  // A fork made later holds the newest checkpoint; the main run's end is shown all the same.
  assert.notEqual(main, dag.nodes[dag.nodes.length - 1].id);
  assert.equal(model.last("select").checkpoint_id, main);
  assert.equal(el.querySelector(".dd-ring-selected").getAttribute("visibility"), "visible");
  const onPath = [...el.querySelectorAll(".dd-mark.dd-on-path")].map((m) => m.getAttribute("data-id"));
  // The marks drawn on the path (happy-dom lays nothing out: those near the start) are the
  // main run's; the path leads to its end.
  const path = layoutDag(dag).path;
  assert.ok(path.has(main) && onPath.includes(dag.nodes[0].id), onPath.join(" "));
  assert.ok(onPath.length > 3 && onPath.every((id) => path.has(id)));
  assert.ok(
    [...path].every((id) => Number(id.slice(1)) < 300),
    "no fork's checkpoint is on the path",
  );
  assert.notEqual(el.querySelector(".dd-path-edges").getAttribute("d"), "");
});

test("a thread that already has a selection keeps it: nothing else is selected on open", () => {
  show({ _selected: "c2" });
  assert.equal(model.last("select"), undefined);
});

test("50,000 checkpoints: only the marks near the view are in the DOM", () => {
  const dag = generatedDag({ length: 49500, forks: 50, branch: 20, seed: 11, errorEvery: 97 });
  const el = show({ _dag: dag });
  const count = drawn(el);
  assert.ok(count > 20 && count < 2000, `${count} marks in the DOM`);
  assert.ok(el.querySelectorAll(".dd-run").length > 0, "linear runs are collapsed");
  // Expanding every run still draws only what is near the view.
  click(dom.window, nav(el, "collapse"));
  assert.equal(nav(el, "collapse").textContent, "Collapse runs");
  assert.equal(el.querySelectorAll(".dd-run").length, 0);
  const expanded = drawn(el);
  assert.ok(expanded > 20 && expanded < 2000, `${expanded} marks in the DOM`);
  const svg = el.querySelector("svg.dd-dag");
  assert.ok(Number(svg.getAttribute("width")) > 49500 * 60, "the whole thread is that wide");
});

test("far out, checkpoints are dots of a few paths instead of thousands of marks", () => {
  const dag = generatedDag({ length: 20000, forks: 40, branch: 300, seed: 5 });
  const el = show({ _dag: dag });
  click(dom.window, nav(el, "collapse"));
  for (let i = 0; i < 30; i++) click(dom.window, nav(el, "zoom-out"));
  const svg = el.querySelector("svg.dd-dag");
  assert.ok(svg.classList.contains("dd-dots"), `zoom ${el.querySelector(".dd-zoom-level").textContent}`);
  assert.equal(el.querySelectorAll(".dd-mark").length, 0);
  assert.ok(el.querySelectorAll(".dd-dot").length <= 5);
  assert.ok(MARK_LIMIT >= 500);
});

test("zoom buttons and keys scale the drawing and say by how much", () => {
  const el = show({ _dag: generatedDag({ length: 100, forks: 3, seed: 2 }) });
  const svg = () => el.querySelector("svg.dd-dag");
  const width = () => Number(svg().getAttribute("width"));
  const full = width();
  assert.equal(el.querySelector(".dd-zoom-level").textContent, "100%");
  click(dom.window, nav(el, "zoom-out"));
  assert.equal(el.querySelector(".dd-zoom-level").textContent, "80%");
  assert.equal(width(), Math.round(full * 0.8));
  const graph = el.querySelector(".dd-dag-scroll");
  press(dom.window, graph, "+");
  press(dom.window, graph, "+");
  assert.equal(el.querySelector(".dd-zoom-level").textContent, "125%");
  press(dom.window, graph, "1");
  assert.equal(width(), full);
  for (let i = 0; i < 4; i++) press(dom.window, graph, "-");
  assert.ok(svg().classList.contains("dd-zoom-far"), "labels go when zoomed far out");
  assert.equal(svg().getAttribute("viewBox").split(" ")[2], String(full), "the layout itself is unchanged");
});

test("a run says how many checkpoints it holds; clicking it shows them", () => {
  const dag = generatedDag({ length: 400, forks: 0 });
  const el = show({ _dag: dag });
  const run = el.querySelector(".dd-run");
  assert.equal(run.querySelector(".dd-run-count").textContent, "396");
  assert.match(run.querySelector("title").textContent, /396 checkpoints in a row, steps 1–396/);
  const before = el.querySelectorAll(".dd-mark").length;
  click(dom.window, run.querySelector(".dd-run-shape"));
  assert.equal(el.querySelectorAll(".dd-run").length, 0);
  assert.ok(el.querySelectorAll(".dd-mark").length > before);
});

test("selecting a checkpoint hidden in a run (arrow keys) shows it as its own mark", async () => {
  const dag = generatedDag({ length: 400, forks: 0 });
  const el = show({ _dag: dag, _selected: dag.nodes[5].id });
  const graph = el.querySelector(".dd-dag-scroll");
  // The selection and one checkpoint on each side are shown; 7 is inside the run after them.
  assert.ok(el.querySelector(`.dd-mark[data-id="${dag.nodes[6].id}"]`));
  assert.equal(el.querySelector(`.dd-mark[data-id="${dag.nodes[7].id}"]`), null, "hidden at first");
  press(dom.window, graph, "ArrowRight");
  press(dom.window, graph, "ArrowRight");
  assert.equal(model.last("select").checkpoint_id, dag.nodes[7].id);
  assert.ok(el.querySelector(`.dd-mark[data-id="${dag.nodes[7].id}"]`), "revealed");
  const counts = [...el.querySelectorAll(".dd-run-count")].map((c) => c.textContent);
  assert.deepEqual(counts, ["4", "389"], "runs on both sides of it: depths 2-5 and 9-397");
  press(dom.window, graph, "Home");
  assert.equal(model.last("select").checkpoint_id, dag.nodes[0].id);
  press(dom.window, graph, "End");
  assert.equal(model.last("select").checkpoint_id, dag.nodes[399].id);
});

test("filters count each kind, highlight what they match and step through it", async () => {
  const dag = generatedDag({ length: 500, forks: 4, branch: 20, seed: 9, errorEvery: 50 });
  const errors = dag.nodes.filter((n) => n.errors > 0).map((n) => n.id);
  const el = show({ _dag: dag });
  assert.equal(filter(el, "error").querySelector(".dd-filter-count").textContent, ` ${errors.length}`);
  assert.equal(filter(el, "fork").querySelector(".dd-filter-count").textContent, " 4");
  click(dom.window, filter(el, "error"));
  assert.equal(filter(el, "error").getAttribute("aria-pressed"), "true");
  assert.ok(el.querySelector("svg.dd-dag").classList.contains("dd-filtering"));
  for (const m of el.querySelectorAll(".dd-mark.dd-match")) {
    assert.ok(errors.includes(m.getAttribute("data-id")), "only errors match");
  }
  // A tick per match on the overview (matches within one pixel share it).
  const ticks = el.querySelector(".dd-overview-match").getAttribute("d").match(/M/g).length;
  assert.ok(ticks > 1 && ticks <= errors.length, `${ticks} ticks for ${errors.length} errors`);
  const layout = layoutDag(dag);
  const order = matchCheckpoints(layout, new Set(["error"]), "");
  assert.deepEqual([...order].sort(), [...errors].sort());
  const visited = [];
  for (let i = 0; i < 3; i++) {
    click(dom.window, nav(el, "next"));
    visited.push(model.last("select").checkpoint_id);
    assert.equal(el.querySelector(".dd-find-count").textContent, `${i + 1} of ${errors.length}`);
  }
  assert.deepEqual(visited, order.slice(0, 3));
  click(dom.window, nav(el, "prev"));
  assert.equal(model.last("select").checkpoint_id, order[1]);
  // A filter and a query narrow each other: the errors at one step.
  const box = el.querySelector(".dd-find");
  const step = `step ${dag.nodes.find((n) => n.errors > 0).step}`;
  box.value = step;
  box.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  const both = matchCheckpoints(layout, new Set(["error"]), step);
  const steps = matchCheckpoints(layout, new Set(), step);
  assert.ok(both.length > 0 && both.length < errors.length);
  assert.deepEqual(
    both,
    steps.filter((id) => errors.includes(id)),
  );
  assert.equal(el.querySelector(".dd-find-count").textContent, `${both.length} found`);
  click(dom.window, filter(el, "error"));
  box.value = "";
  box.dispatchEvent(new dom.window.Event("input", { bubbles: true }));
  assert.equal(el.querySelector("svg.dd-dag").classList.contains("dd-filtering"), false);
  assert.equal(el.querySelector(".dd-find-count").textContent, "");
  await settle();
});

test("the overview strip draws every branch and the viewport on it", () => {
  const dag = generatedDag({ length: 3000, forks: 10, branch: 100, seed: 4 });
  const el = show({ _dag: dag });
  const overview = el.querySelector("svg.dd-overview");
  const layout = layoutDag(dag);
  // Drawn in the strip's own pixels (happy-dom has no layout: 1000 wide), a line per branch.
  assert.equal(overview.getAttribute("viewBox"), "0 0 1000 44");
  assert.equal(
    overview.querySelector(".dd-overview-lines").getAttribute("d").match(/M/g).length,
    layout.rowCount,
  );
  const view = overview.querySelector(".dd-overview-view");
  assert.ok(Number(view.getAttribute("width")) > 0);
  const graph = el.querySelector(".dd-dag-scroll");
  const before = Number(view.getAttribute("x"));
  graph.scrollLeft = before + 5000;
  graph.dispatchEvent(new dom.window.Event("scroll"));
  return new Promise((resolve) => {
    const check = () => {
      if (Number(view.getAttribute("x")) > before) resolve(undefined);
      else setTimeout(check, 10);
    };
    check();
  });
});

test("another thread's DAG opens afresh: its main run's latest checkpoint is selected, its runs folded", () => {
  const first = generatedDag({ length: 300, forks: 2, seed: 1 });
  const el = show({ _dag: first });
  click(dom.window, el.querySelector(".dd-run .dd-run-shape"));
  const second = generatedDag({ length: 500, forks: 3, seed: 2 });
  second.thread_id = "other";
  for (const n of second.nodes) n.id = `o${n.id}`;
  for (const n of second.nodes) if (n.parent) n.parent = `o${n.parent}`;
  model.set("_selected", "");
  model.set("_dag", second);
  assert.equal(model.last("select").checkpoint_id, mainHead(second));
  assert.ok(el.querySelectorAll(".dd-run").length > 0);
  // The same thread again (a refresh) keeps the user's place: nothing new is selected.
  const selects = model.sent.filter((m) => m.kind === "select").length;
  model.set("_dag", structuredClone(second));
  assert.equal(model.sent.filter((m) => m.kind === "select").length, selects);
});

test("a dd-show event brings a checkpoint into view, unfolded, without selecting it", () => {
  const dag = generatedDag({ length: 2000, forks: 0 });
  const el = show({ _dag: dag });
  const target = dag.nodes[1000].id;
  assert.equal(el.querySelector(`.dd-mark[data-id="${target}"]`), null);
  const selects = model.sent.filter((m) => m.kind === "select").length;
  el.querySelector(".dd-root").dispatchEvent(new dom.window.CustomEvent("dd-show", { detail: target }));
  assert.ok(el.querySelector(`.dd-mark[data-id="${target}"]`));
  assert.equal(model.sent.filter((m) => m.kind === "select").length, selects);
});

test("the first view opens at a zoom where the marks' 10 px labels are 11 px", () => {
  // A laid-out page: the DAG's box has a size (happy-dom lays nothing out).
  const proto = dom.window.HTMLElement.prototype;
  const sizes = ["clientWidth", "clientHeight"].map((name) => [
    name,
    Object.getOwnPropertyDescriptor(proto, name),
  ]);
  Object.defineProperty(proto, "clientWidth", { configurable: true, get: () => 900 });
  Object.defineProperty(proto, "clientHeight", { configurable: true, get: () => 400 });
  const dag = generatedDag({ length: 49500, forks: 50, branch: 20, seed: 11 });
  let el;
  try {
    el = show({ _dag: dag });
  } finally {
    for (const [name, descriptor] of sizes)
      if (descriptor) Object.defineProperty(proto, name, descriptor);
      else delete proto[name];
  }
  assert.equal(el.querySelector(".dd-zoom-level").textContent, "110%");
  assert.equal(model.last("select").checkpoint_id, mainHead(dag));
});
