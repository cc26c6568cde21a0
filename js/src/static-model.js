// @ts-check
// The standalone export's in-page model

import { diffValues } from "./select.js";

/** @typedef {import("./types.js").ExportData} ExportData */
/** @typedef {import("./types.js").Model} Model */
/**
 * A read-only model holding an export's data: answers `select` from `details` and `diff` by
 * comparing two details' values; every other request is refused.
 * @param {ExportData} data
 * @returns {Model}
 */
export function createStaticModel(data) {
  const details = data.details || {};
  /** @type {Record<string, any>} */
  const state = {
    _thread_id: data.thread_id || (data.dag && data.dag.thread_id) || "",
    _dag: data.dag || { thread_id: "", nodes: [], depth: 0, lanes: 0 },
    _selected: "",
    _detail: null,
    _topology: data.topology || null,
    _running: false,
    _status: "",
    _error: "",
    _code: [],
    _readonly: true,
  };
  /** @type {Map<string, Set<Function>>} */
  const handlers = new Map();
  const emit = (/** @type {string} */ name, /** @type {any[]} */ ...args) => {
    for (const fn of [...(handlers.get(name) || [])]) fn(...args);
  };
  const defaults = data.detail_defaults || {};
  const namespace = data.checkpoint_ns || (data.dag && data.dag.checkpoint_ns) || "";
  /**
   * A detail as the kernel sends it: the export leaves out what every detail shares
   * (`detail_defaults`) and its config, rebuilt here.
   * @param {string} id @param {any} detail
   */
  const fullDetail = (id, detail) => ({
    ...defaults,
    config: { configurable: { thread_id: state._thread_id, checkpoint_ns: namespace, checkpoint_id: id } },
    ...detail,
  });
  const missing = (/** @type {string} */ id) =>
    `Checkpoint ${id} is not in this export: export the thread again to include it.`;

  /** @param {any} message @returns {{result?: any, error?: string}} */
  const answer = (message) => {
    if (message.kind === "select") {
      const detail = details[message.checkpoint_id];
      if (!detail) return { error: missing(message.checkpoint_id) };
      model.set("_selected", message.checkpoint_id);
      model.set("_detail", fullDetail(message.checkpoint_id, detail));
      return { result: { checkpoint_id: message.checkpoint_id } };
    }
    if (message.kind === "diff") {
      const a = details[message.a];
      const b = details[message.b];
      if (!a || !b) return { error: missing(a ? message.b : message.a) };
      return { result: diffValues(a.values, b.values) };
    }
    return {
      error:
        `'${message.kind}' is not available in a read-only export: open the thread in ` +
        "Jupyter with durable_debug.TimeTravel(graph, config) to fork, rerun or resume.",
    };
  };

  /** @type {Model} */
  const model = {
    get: (name) => state[name],
    set(name, value) {
      if (state[name] === value) return;
      state[name] = value;
      emit(`change:${name}`, model, value);
    },
    on(name, fn) {
      const set = handlers.get(name);
      if (set) set.add(fn);
      else handlers.set(name, new Set([fn]));
    },
    off(name, fn) {
      if (name == null) handlers.clear();
      else if (fn == null) handlers.delete(name);
      else handlers.get(name)?.delete(fn);
    },
    /** @param {any} message */
    send(message) {
      // Answer asynchronously, like a kernel would.
      setTimeout(() => emit("msg:custom", { uuid: message.uuid, ...answer(message) }, []), 0);
    },
    save_changes() {},
  };
  return model;
}
