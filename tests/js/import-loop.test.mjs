// The widget's modules import each other in layers: no module reaches, through its imports,
// back to itself. A loop makes every module in it load before it is complete and leaves no
// place to start reading; a helper that several modules need belongs in a module below them.
import test from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const SRC = fileURLToPath(new URL("../../js/src/", import.meta.url));
const IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s+"\.\/([\w-]+\.js)"/gm;

/** Each module of js/src and the modules it imports (`import ... from "./x.js"`, re-exports too). */
export function importGraph(dir = SRC) {
  /** @type {Map<string, string[]>} */
  const graph = new Map();
  for (const name of readdirSync(dir).filter((file) => file.endsWith(".js"))) {
    const text = readFileSync(join(dir, name), "utf8");
    graph.set(
      name,
      [...text.matchAll(IMPORT)].map((match) => match[1]),
    );
  }
  return graph;
}

/** The first loop found, as the chain of modules from one back to itself; null when none. */
export function findLoop(graph) {
  const state = new Map(); // name -> "open" while on the path, "done" after
  const path = [];
  const visit = (name) => {
    if (state.get(name) === "done") return null;
    if (state.get(name) === "open") return [...path.slice(path.indexOf(name)), name];
    state.set(name, "open");
    path.push(name);
    for (const next of graph.get(name) || []) {
      const loop = visit(next);
      if (loop) return loop;
    }
    path.pop();
    state.set(name, "done");
    return null;
  };
  for (const name of graph.keys()) {
    const loop = visit(name);
    if (loop) return loop;
  }
  return null;
}

test("the modules of js/src import each other without a loop", () => {
  const graph = importGraph();
  assert.ok(graph.get("index.js")?.includes("dag.js"), "the imports are read");
  const loop = findLoop(graph);
  assert.equal(loop, null, `an import loop: ${(loop || []).join(" → ")}`);
});

test("a loop is found and named", () => {
  const graph = new Map([
    ["a.js", ["b.js"]],
    ["b.js", ["c.js"]],
    ["c.js", ["a.js"]],
    ["d.js", ["a.js"]],
  ]);
  assert.deepEqual(findLoop(graph), ["a.js", "b.js", "c.js", "a.js"]);
  assert.equal(
    findLoop(
      new Map([
        ["a.js", ["b.js"]],
        ["b.js", []],
      ]),
    ),
    null,
  );
});
