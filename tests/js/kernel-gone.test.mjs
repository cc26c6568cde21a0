// After a kernel restart the widget's comm is closed and `model.send` throws ("Cannot send" in
// JupyterLab): a click says what happened and what to do, instead of the bare words.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";

import widget from "../../js/widget.js";
import { createRequester } from "../../js/src/requests.js";
import { click, createFakeModel, mark, settle, setupDom } from "./support.mjs";

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

test("a click after the kernel restarted says to re-run the widget's cell", async () => {
  model.send = () => {
    throw new Error("Cannot send");
  };
  click(dom.window, mark(el, "c2"));
  await settle();
  const error = el.querySelector(".dd-error");
  assert.equal(error.hidden, false);
  assert.match(error.textContent, /Cannot reach the kernel \(Cannot send\): it was restarted or shut down/);
  assert.match(error.textContent, /Re-run the cell that shows this widget/);
});

test("the requester rejects at once and keeps nothing pending", async () => {
  const requester = createRequester({
    on() {},
    off() {},
    send() {
      throw new Error("Cannot send");
    },
  });
  await assert.rejects(requester.request("refresh"), /Re-run the cell/);
  assert.equal(requester.pending, 0);
  requester.dispose();
});
