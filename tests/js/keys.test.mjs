// Keyboard: j/k move on the DAG like the arrows, Enter opens the detail, "?" shows the help,
// Escape closes the help and else gives the keyboard back to the notebook.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget from "../../js/widget.js";
import { SHORTCUTS } from "../../js/src/keys.js";
import { click, createFakeModel, detailOf, mark, press, settle, setupDom } from "./support.mjs";

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

async function select(id) {
  click(dom.window, mark(el, id));
  model.answerSelect(model.last("select"), detailOf(id));
  await settle();
}

test("j and k move to the next and the previous checkpoint, like → and ←", async () => {
  await select("c1");
  const dag = el.querySelector(".dd-dag-scroll") || mark(el, "c1").closest("[tabindex]");
  const viaArrow = () => model.last("select").checkpoint_id;
  press(dom.window, dag, "ArrowRight");
  const down = viaArrow();
  model.answerSelect(model.last("select"), detailOf(down));
  await settle();
  press(dom.window, dag, "ArrowLeft");
  model.answerSelect(model.last("select"), detailOf(viaArrow()));
  await settle();
  press(dom.window, dag, "j");
  assert.equal(viaArrow(), down, "j goes where → went");
  model.answerSelect(model.last("select"), detailOf(down));
  await settle();
  press(dom.window, dag, "k");
  assert.equal(viaArrow(), "c1", "k comes back");
});

test("Enter moves the focus to the selected checkpoint's detail", async () => {
  await select("c2");
  const dag = el.querySelector(".dd-dag-scroll") || mark(el, "c2").closest("[tabindex]");
  press(dom.window, dag, "Enter");
  assert.ok(dom.document.activeElement.closest(".dd-detail"), "the detail has the focus");
});

test("? shows every shortcut; Escape closes the help first", () => {
  const help = el.querySelector(".dd-help");
  assert.equal(help.hidden, true);
  press(dom.window, el.querySelector(".dd-root"), "?");
  assert.equal(help.hidden, false);
  assert.equal(help.querySelectorAll("tr").length, SHORTCUTS.length);
  assert.match(help.textContent, /j \/ k/);
  press(dom.window, el.querySelector(".dd-root"), "Escape");
  assert.equal(help.hidden, true);
  click(dom.window, el.querySelector(".dd-help-button"));
  assert.equal(help.hidden, false);
});

test("? typed in a text box is text, not the help", () => {
  click(dom.window, el.querySelector('[data-action="new-run"]'));
  const box = el.querySelector(".dd-run-input");
  press(dom.window, box, "?");
  assert.equal(el.querySelector(".dd-help").hidden, true);
});

test("Escape outside the help gives the focus back to the notebook cell", () => {
  // A notebook around the output, as JupyterLab draws it.
  const notebook = dom.document.createElement("div");
  notebook.className = "jp-Notebook";
  notebook.tabIndex = -1;
  const cell = dom.document.createElement("div");
  cell.className = "jp-Cell";
  cell.tabIndex = -1;
  notebook.append(cell);
  dom.document.body.append(notebook);
  cell.append(el);
  const find = el.querySelector(".dd-find");
  find.focus();
  press(dom.window, find, "Escape");
  assert.equal(dom.document.activeElement, cell);
});
