// @ts-check
// The thread list: the store's threads (`threads` request) with a search box and a status
// filter; arrow keys move the highlight without switching, Enter or a click switches; the list
// is asked again after a run started here ends while it is open.

import { hyperscript, listen, plural, watch } from "./helpers.js";
import { displayName, shortName } from "./names.js";

/** @typedef {import("./index.js").View} View */
/**
 * A thread as Python's `threads` request answers it.
 * @typedef {{ thread_id: string, checkpoints: number, step: number | null, status: string,
 *   kind?: string, current?: boolean }} ThreadRow
 */
/** The status filters, as `inspect.listing.status_kind` names them. */
export const STATUS_KINDS = ["running", "paused", "failed", "done"];

/**
 * The rows a search text and a status kind keep ("" keeps all), in their order.
 * @param {ThreadRow[]} rows @param {string} search @param {string} kind @returns {ThreadRow[]}
 */
export function filterThreads(rows, search, kind) {
  const needle = search.trim().toLowerCase();
  return rows.filter(
    (row) => (!kind || row.kind === kind) && (!needle || row.thread_id.toLowerCase().includes(needle)),
  );
}

/** @param {ThreadRow} row */
function rowText(row) {
  const steps = row.step === null || row.step === undefined ? "" : ` · step ${row.step}`;
  return `${shortName(row.thread_id)} · ${plural(row.checkpoints, "checkpoint")}${steps} · ${displayName(row.status)}`;
}

/**
 * Per view: the rows last listed, the highlighted thread, whether a listing is asked.
 * @type {WeakMap<View, { rows: ThreadRow[], active: string, asking: boolean }>}
 */
const states = new WeakMap();

/** @param {View} view */
function stateOf(view) {
  let state = states.get(view);
  if (!state) states.set(view, (state = { rows: [], active: "", asking: false }));
  return state;
}

/**
 * Build the panel in `view.parts.threadList` (search, filter, list) and its listeners.
 * @param {View} view
 */
export function mountThreadList(view) {
  const h = hyperscript(view.doc);
  const panel = view.parts.threadList;
  const search = h("input", {
    class: "dd-thread-search",
    type: "search",
    placeholder: "Search threads",
    spellcheck: "false",
    "aria-label": "search the threads by id",
  });
  const filter = h(
    "select",
    { class: "dd-thread-filter", "aria-label": "show threads of one status" },
    h("option", { value: "" }, "any status"),
    ...STATUS_KINDS.map((kind) => h("option", { value: kind }, kind)),
  );
  const list = h("ul", {
    class: "dd-thread-options",
    role: "listbox",
    tabindex: "0",
    "aria-label": "the store's threads: arrows move, Enter shows",
  });
  const count = h("span", { class: "dd-muted dd-thread-count", "aria-live": "polite" });
  panel.replaceChildren(h("div", { class: "dd-thread-tools" }, search, filter, count), list);

  listen(view, search, "input", () => drawRows(view));
  listen(view, filter, "change", () => drawRows(view));
  const onKey = (/** @type {Event} */ event) => onListKey(view, /** @type {KeyboardEvent} */ (event));
  listen(view, search, "keydown", onKey);
  listen(view, list, "keydown", onKey);
  listen(view, list, "click", (event) => {
    const item = /** @type {Element} */ (event.target).closest("[data-thread]");
    if (item) choose(view, item.getAttribute("data-thread") || "");
  });
  // Fresh counts after a run started here ends, and when the shown thread changes.
  watch(view, "change:_running", () => {
    if (!view.model.get("_running")) refreshIfOpen(view);
  });
  watch(view, "change:_thread_id", () => refreshIfOpen(view));
}

/** @param {View} view */
function refreshIfOpen(view) {
  if (!view.parts.threadList.hidden) listThreads(view);
}

/**
 * Ask Python for the store's threads and show the panel (the toolbar's **Threads**).
 * @param {View} view @param {(error: Error) => void} [onError]
 */
export function listThreads(view, onError) {
  const state = stateOf(view);
  if (state.asking) return;
  state.asking = true;
  view.requests.request("threads").then(
    (reply) => {
      state.asking = false;
      state.rows = reply.threads;
      const current = state.rows.find((row) => row.current);
      if (!state.active || !state.rows.some((row) => row.thread_id === state.active))
        state.active = current ? current.thread_id : "";
      view.parts.threadList.hidden = false;
      drawRows(view);
    },
    (error) => {
      state.asking = false;
      if (onError) onError(error);
    },
  );
}

/** @param {View} view */
function drawRows(view) {
  const state = stateOf(view);
  const panel = view.parts.threadList;
  const search = /** @type {HTMLInputElement} */ (panel.querySelector(".dd-thread-search"));
  const filter = /** @type {HTMLSelectElement} */ (panel.querySelector(".dd-thread-filter"));
  const list = /** @type {HTMLElement} */ (panel.querySelector(".dd-thread-options"));
  const shown = filterThreads(state.rows, search.value, filter.value);
  if (shown.length && !shown.some((row) => row.thread_id === state.active)) state.active = shown[0].thread_id;
  const h = hyperscript(view.doc);
  list.replaceChildren(
    ...shown.map((row, i) =>
      h(
        "li",
        {
          id: `${view.uid}-thread-${i}`,
          role: "option",
          class: `dd-thread-option${row.current ? " dd-current" : ""}`,
          "data-thread": row.thread_id,
          "data-kind": row.kind || "",
          "aria-selected": String(row.thread_id === state.active),
          title: displayName(row.thread_id),
        },
        rowText(row),
      ),
    ),
  );
  const active = list.querySelector('[aria-selected="true"]');
  if (active) list.setAttribute("aria-activedescendant", active.id);
  else list.removeAttribute("aria-activedescendant");
  /** @type {HTMLElement} */ (panel.querySelector(".dd-thread-count")).textContent =
    shown.length === state.rows.length
      ? plural(state.rows.length, "thread")
      : `${shown.length} of ${plural(state.rows.length, "thread")}`;
}

/**
 * Arrows (and Home/End) move the highlight, Enter shows the highlighted thread, Escape closes.
 * @param {View} view @param {KeyboardEvent} event
 */
function onListKey(view, event) {
  const state = stateOf(view);
  const panel = view.parts.threadList;
  const items = [...panel.querySelectorAll("[data-thread]")];
  const at = items.findIndex((item) => item.getAttribute("data-thread") === state.active);
  let next = at;
  if (event.key === "ArrowDown") next = Math.min(items.length - 1, at + 1);
  else if (event.key === "ArrowUp") next = Math.max(0, at - 1);
  else if (event.key === "Home") next = 0;
  else if (event.key === "End") next = items.length - 1;
  else if (event.key === "Enter") {
    event.preventDefault();
    if (state.active) choose(view, state.active);
    return;
  } else if (event.key === "Escape") {
    event.preventDefault();
    panel.hidden = true;
    return;
  } else return;
  event.preventDefault();
  if (next < 0 || !items[next]) return;
  state.active = items[next].getAttribute("data-thread") || "";
  for (const item of items) item.setAttribute("aria-selected", String(item === items[next]));
  const list = /** @type {HTMLElement} */ (panel.querySelector(".dd-thread-options"));
  list.setAttribute("aria-activedescendant", items[next].id);
  if (typeof items[next].scrollIntoView === "function") items[next].scrollIntoView({ block: "nearest" });
}

/**
 * Show thread `id` (nothing when it is already shown).
 * @param {View} view @param {string} id
 */
function choose(view, id) {
  stateOf(view).active = id;
  if (!id || id === view.model.get("_thread_id")) return;
  view.requests.request("thread", { thread_id: id }).then(
    () => refreshIfOpen(view),
    (error) => {
      const count = view.parts.threadList.querySelector(".dd-thread-count");
      if (count) count.textContent = String(error && error.message ? error.message : error);
    },
  );
}
