// Test support for js/widget.js: a fake anywidget model, a DOM, and a small thread's data.
// (Not a test file itself: node --test only picks up *.test.mjs here.)

import { Window } from "happy-dom";

/**
 * A DOM to render into. Call `close()` when done.
 */
export function setupDom() {
  const window = new Window({ url: "http://localhost/" });
  const document = window.document;
  const el = document.createElement("div");
  document.body.appendChild(el);
  return { window, document, el, close: () => window.happyDOM.close() };
}

/**
 * A fake anywidget model: traitlets in a plain object, handler bookkeeping, and a log of what
 * the front end sent. `reply`/`fail` answer a sent request the way widget.py does.
 * @param {Record<string, any>} traits
 */
export function createFakeModel(traits = {}) {
  const state = {
    _thread_id: "t1",
    _dag: smallDag(),
    _selected: "",
    _detail: null,
    _topology: null,
    _running: false,
    _status: "",
    _error: "",
    _code: [],
    _readonly: false,
    ...traits,
  };
  /** @type {Map<string, Set<Function>>} */
  const handlers = new Map();
  const sent = [];
  const model = {
    sent,
    get: (name) => state[name],
    set(name, value) {
      state[name] = value;
      model.emit(`change:${name}`, model, value);
    },
    on(name, fn) {
      if (!handlers.has(name)) handlers.set(name, new Set());
      handlers.get(name).add(fn);
    },
    off(name, fn) {
      if (name == null) handlers.clear();
      else if (fn == null) handlers.delete(name);
      else handlers.get(name)?.delete(fn);
    },
    send(content) {
      sent.push(content);
    },
    save_changes() {},
    emit(name, ...args) {
      for (const fn of [...(handlers.get(name) || [])]) fn(...args);
    },
    /** Total number of registered handlers, over all events. */
    handlerCount() {
      let n = 0;
      for (const set of handlers.values()) n += set.size;
      return n;
    },
    /** The last request of a kind. */
    last(kind) {
      return [...sent].reverse().find((message) => message.kind === kind);
    },
    /** Answer a `select` as widget.py does: `_selected` and `_detail` set, then a small reply. */
    answerSelect(message, detail) {
      model.set("_selected", detail.id);
      model.set("_detail", detail);
      model.reply(message, { checkpoint_id: detail.id });
    },
    reply(message, result) {
      model.emit("msg:custom", { uuid: message.uuid, result }, []);
    },
    fail(message, error) {
      model.emit("msg:custom", { uuid: message.uuid, error }, []);
    },
  };
  return model;
}

/** Let pending promise callbacks run. */
export async function settle() {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/** Click an element (with modifier keys). */
export function click(window, target, init = {}) {
  target.dispatchEvent(new window.MouseEvent("click", { bubbles: true, cancelable: true, ...init }));
}

/** Press a key on an element. */
export function press(window, target, key) {
  target.dispatchEvent(new window.KeyboardEvent("keydown", { key, bubbles: true, cancelable: true }));
}

/** The mark of a checkpoint in the DAG. */
export function mark(el, id) {
  return [...el.querySelectorAll(".dd-mark")].find((m) => m.getAttribute("data-id") === id);
}

const node = (id, parent, step, source, depth, lane, extra = {}) => ({
  id,
  parent,
  step,
  source,
  depth,
  lane,
  next: [],
  writers: [],
  interrupts: 0,
  errors: 0,
  is_head: false,
  is_latest: false,
  created_at: `2025-01-01T00:00:0${depth}+00:00`,
  ...extra,
});

/**
 * A thread of five checkpoints: input → start → agent → tools (paused on an interrupt), and a
 * fork from agent (an update whose next step failed), which is the latest.
 */
export function smallDag() {
  return {
    thread_id: "t1",
    depth: 4,
    lanes: 2,
    nodes: [
      node("c0", null, -1, "input", 0, 0, { next: ["__start__"] }),
      node("c1", "c0", 0, "loop", 1, 0, { writers: ["__start__"], next: ["agent"] }),
      node("c2", "c1", 1, "loop", 2, 0, { writers: ["agent"], next: ["tools"] }),
      node("c3", "c2", 2, "loop", 3, 0, { writers: ["tools"], next: ["gate"], interrupts: 1, is_head: true }),
      node("f1", "c2", 2, "update", 3, 1, {
        writers: ["agent"],
        next: ["tools"],
        errors: 1,
        is_head: true,
        is_latest: true,
      }),
    ],
  };
}

/** The Detail Python answers for a checkpoint of smallDag(). */
export function detailOf(id) {
  const values = {
    c0: {},
    c1: { messages: ["hi"], count: 0 },
    c2: { messages: ["hi", "thinking"], count: 1 },
    c3: { messages: ["hi", "thinking", "Paris"], count: 2, approved: null },
    f1: { messages: ["hi", "thinking"], count: 10 },
  }[id];
  const n = smallDag().nodes.find((x) => x.id === id);
  const interrupt = { id: "int-7c1e", value: { question: "Send it?" }, node: "gate", task_id: "task-gate" };
  return {
    id,
    parent: n.parent,
    step: n.step,
    source: n.source,
    next: n.next,
    created_at: n.created_at,
    metadata: { source: n.source, step: n.step },
    config: { configurable: { thread_id: "t1", checkpoint_id: id } },
    values,
    blobs: Object.keys(values).map((channel, i) => ({
      channel,
      version: `0000000000000000000000000000000${i + 1}.0.5123456`,
      status: i === 0 ? "shared" : "new",
      size: 2048 * i + 12,
    })),
    tasks:
      id === "c3"
        ? [{ id: "task-gate", name: "gate", error: null, interrupts: [interrupt], result: null }]
        : id === "f1"
          ? [
              {
                id: "task-tools",
                name: "tools",
                error: "ValueError: count 10 is over the limit",
                interrupts: [],
                result: null,
              },
            ]
          : [],
    writes: id === "f1" ? [{ task_id: "task-audit", node: "audit", channel: "count", value: 11 }] : [],
    interrupts: id === "c3" ? [interrupt] : [],
    editable: ["messages", "count", "approved"],
    nodes: ["agent", "tools", "gate"],
  };
}

/**
 * A generated thread: a first run of `length` checkpoints, then `forks` branches, each leaving a
 * random earlier checkpoint (of any branch) and running on for a random length; ids sort by
 * creation. Deterministic for a seed. Every `errorEvery`-th checkpoint has a failed task.
 * @param {{ length?: number, forks?: number, branch?: number, seed?: number, errorEvery?: number }} [options]
 */
export function generatedDag({ length = 200, forks = 12, branch = 40, seed = 1, errorEvery = 0 } = {}) {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const nodes = [];
  const make = (parent, source) => {
    const n = nodes.length;
    const step = parent ? parent.step + 1 : -1;
    const made = node(`n${String(n).padStart(7, "0")}`, parent ? parent.id : null, step, source, 0, 0, {
      writers: parent ? [step % 2 ? "agent" : "tools"] : [],
      next: [step % 2 ? "tools" : "agent"],
      errors: errorEvery && n % errorEvery === errorEvery - 1 ? 1 : 0,
    });
    nodes.push(made);
    return made;
  };
  let last = make(null, "input");
  for (let i = 1; i < length; i++) last = make(last, "loop");
  for (let f = 0; f < forks; f++) {
    let at = make(nodes[Math.floor(random() * nodes.length)], "fork");
    const run = 1 + Math.floor(random() * branch);
    for (let i = 0; i < run; i++) at = make(at, "loop");
  }
  const parents = new Set(nodes.map((n) => n.parent));
  for (const n of nodes) n.is_head = !parents.has(n.id);
  nodes[nodes.length - 1].is_latest = true;
  return { thread_id: "generated", nodes, depth: 0, lanes: forks + 1 };
}

/**
 * The main run's latest checkpoint: from the oldest root, the oldest child at every fork (forks
 * made later never lead there), to the end.
 */
export function mainHead(dag) {
  const kids = new Map();
  for (const n of dag.nodes) {
    if (!kids.has(n.parent)) kids.set(n.parent, []);
    kids.get(n.parent).push(n.id);
  }
  const oldest = (ids) => [...ids].sort()[0];
  let id = oldest(kids.get(null) || []);
  while (kids.has(id)) id = oldest(kids.get(id));
  return id;
}
