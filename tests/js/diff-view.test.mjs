// A diff's rows: changed paths under their channel, a long string as a line diff, and how many
// paths were left out to keep the diff light.
import assert from "node:assert/strict";
import { test } from "node:test";

import { diffRows } from "../../js/src/diff-view.js";
import { hyperscript } from "../../js/src/helpers.js";
import { setupDom } from "./support.mjs";

test("paths come under their channel; line diffs and left-out counts are shown", () => {
  const dom = setupDom();
  try {
    const h = hyperscript(dom.document);
    const rows = diffRows(h, [
      {
        channel: "doc",
        change: "changed",
        old: "…",
        new: "…",
        more: 0,
        changes: [{ path: "doc", change: "changed", old: "…", new: "…", lines: ["@@ -1 +1 @@", "-a", "+b"] }],
      },
      {
        channel: "rows",
        change: "changed",
        old: null,
        new: null,
        more: 1200,
        changes: [{ path: "rows[0].payload", change: "changed", old: "y", new: "z" }],
      },
      {
        channel: "value",
        change: "changed",
        old: "A",
        new: "B",
        more: 0,
        changes: [{ path: "value", change: "changed", old: "A", new: "B" }],
      },
    ]);
    const table = h("table", {}, ...rows);
    const texts = [...table.querySelectorAll("tr")].map((r) => r.className);
    assert.deepEqual(texts, [
      "dd-change-changed dd-diff-channel",
      "dd-change-changed dd-diff-path",
      "dd-change-changed dd-diff-channel",
      "dd-change-changed dd-diff-path",
      "dd-diff-more",
      "dd-change-changed dd-diff-channel",
    ]);
    assert.deepEqual(
      [...table.querySelectorAll(".dd-line")].map((l) => l.className),
      ["dd-line dd-line-hunk", "dd-line dd-line-del", "dd-line dd-line-add"],
    );
    assert.match(table.querySelector(".dd-diff-more").textContent, /1200 more changed paths, left out/);
    assert.match(table.querySelector('[data-channel="rows"]').textContent, /1201 changed paths/);
    // A plain value change stays one row with its old and new.
    assert.match(table.querySelector('[data-channel="value"]').textContent, /"A".*"B"/s);
  } finally {
    dom.close();
  }
});
