// @ts-check
// Requests: msg:custom with a uuid, answered by {uuid, result} or {uuid, error}

import { REQUEST_TIMEOUT_MS } from "./types.js";

/** @typedef {import("./types.js").Model} Model */
/**
 * Send requests over `msg:custom` and match answers to them by uuid.
 * @param {Model} model
 * @param {{ timeoutMs?: number, newId?: () => string }} [options]
 */
export function createRequester(model, { timeoutMs = REQUEST_TIMEOUT_MS, newId = newUuid } = {}) {
  /** @type {Map<string, {resolve: (v: any) => void, reject: (e: Error) => void, timer: any}>} */
  const pending = new Map();

  /** @param {any} message */
  const onMessage = (message) => {
    const entry = message && typeof message === "object" ? pending.get(message.uuid) : undefined;
    if (!entry) return; // another view's answer, or one that already timed out
    pending.delete(message.uuid);
    clearTimeout(entry.timer);
    if (message.error != null) entry.reject(new Error(String(message.error)));
    else entry.resolve(message.result);
  };
  model.on("msg:custom", onMessage);

  return {
    /**
     * @param {string} kind
     * @param {object} [fields]
     * @returns {Promise<any>}
     */
    request(kind, fields = {}) {
      const uuid = newId();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(uuid);
          reject(
            new Error(
              `No answer to '${kind}' after ${timeoutMs / 1000} s: the kernel may be busy or gone. ` +
                "Wait for the running cell, or re-run the cell that shows this widget.",
            ),
          );
        }, timeoutMs);
        pending.set(uuid, { resolve, reject, timer });
        try {
          model.send({ uuid, kind, ...fields });
        } catch (error) {
          // The comm is closed: JupyterLab says only "Cannot send".
          pending.delete(uuid);
          clearTimeout(timer);
          reject(new Error(goneMessage(error)));
        }
      });
    },
    /** Number of requests still waiting for an answer. */
    get pending() {
      return pending.size;
    },
    /** Stop listening; pending requests never settle, so no callback touches a removed view. */
    dispose() {
      model.off("msg:custom", onMessage);
      for (const entry of pending.values()) clearTimeout(entry.timer);
      pending.clear();
    },
  };
}

/**
 * What to tell the user when the widget's kernel is gone (restarted or shut down).
 * @param {unknown} error what `model.send` threw
 */
export function goneMessage(error) {
  const said = error instanceof Error ? error.message : String(error);
  return (
    `Cannot reach the kernel (${said}): it was restarted or shut down since this widget was shown, ` +
    "so what it shows may be out of date. Re-run the cell that shows this widget."
  );
}

/** The kernel statuses after which the Python object behind a view is gone. */
const GONE_STATUSES = ["restarting", "autorestarting", "dead"];

/**
 * Call `onGone(message)` as soon as the model's kernel restarts or dies (JupyterLab's and
 * Notebook 7's widget manager hold the kernel; a page without one, like the read-only export,
 * has nothing to watch). Returns the function that stops watching.
 * @param {Model} model @param {(message: string) => void} onGone
 * @returns {() => void}
 */
export function watchKernel(model, onGone) {
  const manager = model.widget_manager;
  const signal = manager && manager.kernel && manager.kernel.statusChanged;
  if (!signal || typeof signal.connect !== "function") return () => {};
  const onStatus = (/** @type {unknown} */ _kernel, /** @type {string} */ status) => {
    if (GONE_STATUSES.includes(status)) onGone(kernelGoneMessage(status));
  };
  signal.connect(onStatus);
  return () => signal.disconnect(onStatus);
}

/**
 * What to tell the user the moment the widget's kernel restarts or dies.
 * @param {string} status the kernel's status: "restarting", "autorestarting" or "dead"
 */
export function kernelGoneMessage(status) {
  const what = status === "dead" ? "was shut down" : status === "autorestarting" ? "died" : "was restarted";
  return (
    `The kernel ${what}: this widget is no longer connected to it, so what it shows may be out ` +
    "of date and its buttons do nothing. Re-run the cells that build the graph and show this widget."
  );
}

function newUuid() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`;
}
