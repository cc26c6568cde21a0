// js/widget.js is the bundle of js/src/: rebuilt here, it must be what is committed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { bundle, OUTPUT } from "../../js/build.mjs";

test("js/widget.js is the current bundle of js/src (run `npm run build`)", async () => {
  assert.equal(readFileSync(OUTPUT, "utf8"), await bundle());
});
