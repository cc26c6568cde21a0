// @ts-check
/**
 * durable_debug's time-travel widget: the front end of `durable_debug.TimeTravel`.
 *
 * One plain ES module following anywidget's contract — `export default { render }`, where
 * `render({ model, el })` draws into `el` and returns the cleanup that removes every handler it
 * added. State arrives in traitlets (`_dag`, `_detail`, …); actions go to Python as `msg:custom`
 * requests `{uuid, kind, ...}` answered by `{uuid, result}` or `{uuid, error}`. The contract is
 * docs/widget-protocol.md. The same module runs in a standalone HTML export against
 * `createStaticModel(data)`, an in-page model that answers from embedded data.
 *
 *     import widget, { createStaticModel } from "./widget.js";
 *     const cleanup = widget.render({ model: createStaticModel(data), el: document.body });
 *
 * No framework and no network. The sources are one module per part, in js/src/:
 *
 *   index.js         this entry point: the view, its skeleton, drawing everything
 *   types.js         the protocol's types (JSDoc) and the constants
 *   requests.js      the request layer: msg:custom requests and their answers
 *   static-model.js  the standalone page's in-page model
 *   layout.js        placing the DAG: a row per branch, linear runs collapsed, no crossings
 *   overview.js      what the DAG's box shows, the zoom's value, the overview strip
 *   matches.js       what the filters and the "go to" box match
 *   dag.js           drawing the checkpoint DAG, the rings, scrolling to a checkpoint
 *   dag-input.js     the DAG's pointer and keys
 *   navigate.js      zoom, pan, the overview strip's pointer, filters, stepping through matches
 *   select.js        selecting a checkpoint (of the DAG or a subgraph) and diffing two
 *   detail.js        the detail pane of the selected checkpoint
 *   conversation.js  a chat channel as a conversation
 *   actions.js       fork, rerun, resume, stop, copy
 *   health.js        the Health panel: the store's health tables
 *   subgraph.js      a subgraph's checkpoints, nested under the task that ran it
 *   status.js        the status line and request errors, the topology, the code panel
 *   live-text.js     what a chat model writes while a run goes
 *   json-tree.js     the collapsible JSON tree
 *   helpers.js       small pure helpers (exported for the tests)
 *
 * They import each other in layers, never in a loop (js/README.md lists them bottom up).
 *
 * js/build.mjs bundles them (esbuild) into js/widget.js, the one file anywidget loads and
 * the standalone page inlines; `npm run build` after a change, and `npm run lint` checks
 * the types (tsc --checkJs) and the formatting.
 */

// anywidget entry point

import { onAction, scheduleWatch } from "./actions.js";
import {
  drawDag,
  drawMarks,
  hideTooltip,
  openOnPath,
  placePausedMarker,
  scheduleMarks,
  scrollToCheckpoint,
  showSelected,
  showTooltip,
} from "./dag.js";
import { onDagClick, onDagKey, onFindKey } from "./dag-input.js";
import { readDag } from "./dag-wire.js";
import { drawDetail } from "./detail.js";
import { mountHealth } from "./health.js";
import { hyperscript, isReadonly, listen, watch } from "./helpers.js";
import { fillLazyJson } from "./json-tree.js";
import { mountKeys } from "./keys.js";
import { drawLiveText } from "./live-text.js";
import { createRequester, watchKernel } from "./requests.js";
import {
  createNav,
  navParts,
  onNavClick,
  onOverviewPointer,
  onPanEnd,
  onPanMove,
  onPanStart,
  onWheel,
  updateMatches,
} from "./navigate.js";
import { drawOverview } from "./overview.js";
import { selectCheckpoint } from "./select.js";
import { drawCode, drawStatus, drawTopology, markTopology } from "./status.js";
import { mountThreadList } from "./thread-list.js";

/** @typedef {import("./types.js").Area} Area */
/** @typedef {import("./types.js").DagLayout} DagLayout */
/** @typedef {import("./types.js").Detail} Detail */
/** @typedef {import("./types.js").Model} Model */
/** @typedef {import("./types.js").Topology} Topology */
export default { render };

/**
 * Draw the widget into `el` and keep it in sync with `model`.
 * @param {{ model: Model, el: HTMLElement }} context
 * @returns {() => void} cleanup: removes every model handler, DOM listener and timer it added
 */
function render({ model, el }) {
  const view = createView(model, el);
  drawAll(view);
  return () => disposeView(view);
}

/** @typedef {ReturnType<typeof hyperscript>} H */

/**
 * Everything one rendered view holds. Python owns the state (traitlets); the view only keeps
 * what the user is pointing at and what it drew.
 * @typedef {{
 *   model: Model, doc: Document, root: HTMLElement, parts: Record<string, HTMLElement>,
 *   requests: ReturnType<typeof createRequester>, cleanups: Array<() => void>,
 *   layout: DagLayout | null, svg: SVGSVGElement | null,
 *   selected: string, diffTarget: string, selectTicket: number, diffTicket: number,
 *   selecting: string,
 *   requestError: string, kernelGone: string, pendingScroll: string, pendingOpen: boolean, drawnArea: Area | null,
 *   nav: import("./navigate.js").Nav,
 *   marks: { byItem: Map<import("./types.js").DagItem, SVGElement>, matches: Set<string> | null },
 *   frame: { cancel: () => void } | null,
 *   detail: Detail | null, detailKey: string, editors: Map<string, HTMLTextAreaElement>,
 *   fullValues: Map<string, any>, editBoxes: Map<string, HTMLElement>,
 *   editModes: Map<string, string>,
 *   lazyJson: WeakMap<Element, any>, uid: string, timers: Set<any>, closed: boolean,
 * }} View
 */

let viewCount = 0;

/**
 * Build the skeleton, register handlers, and return the view.
 * @param {Model} model
 * @param {HTMLElement} el
 * @returns {View}
 */
function createView(model, el) {
  const doc = el.ownerDocument;
  const { root, parts } = buildSkeleton(doc);
  el.appendChild(root);
  /** @type {View} */
  const view = {
    model,
    doc,
    root,
    parts,
    requests: createRequester(model),
    cleanups: [],
    layout: null,
    svg: null,
    selected: model.get("_selected") || "",
    diffTarget: "",
    selectTicket: 0,
    selecting: "",
    diffTicket: 0,
    requestError: "",
    kernelGone: "",
    pendingScroll: "",
    pendingOpen: false,
    nav: createNav(),
    marks: { byItem: new Map(), matches: null },
    drawnArea: null,
    frame: null,
    detail: null,
    detailKey: "",
    editors: new Map(),
    editBoxes: new Map(),
    editModes: new Map(),
    fullValues: new Map(),
    lazyJson: new WeakMap(),
    uid: `dd${++viewCount}`,
    timers: new Set(),
    closed: false,
  };
  view.cleanups.push(
    () => view.requests.dispose(),
    () => root.remove(),
    watchKernel(model, (message) => {
      view.kernelGone = message;
      drawStatus(view);
    }),
  );

  // `_dag` and `_dag_tail` often change in one update: draw the tree they make once.
  /** @type {import("./types.js").Dag | null} */
  let dagDrawn = null;
  const redrawDag = () => {
    const dag = readDag(model);
    if (dag === dagDrawn) return;
    dagDrawn = dag;
    openDag(view);
  };
  watch(view, "change:_dag", redrawDag);
  watch(view, "change:_dag_tail", redrawDag);
  watch(view, "change:_selected", () => showSelected(view, model.get("_selected") || ""));
  watch(view, "change:_detail", () => {
    const detail = model.get("_detail");
    // While a click waits for its answer, a detail of another checkpoint is an older answer.
    if (view.selecting && detail && detail.id !== view.selecting) return;
    drawDetail(view, detail);
  });
  watch(view, "change:_topology", () => drawTopology(view, model.get("_topology")));
  watch(view, "change:_code", () => drawCode(view, model.get("_code") || []));
  for (const name of ["_running", "_status", "_error", "_thread_id"]) {
    watch(view, `change:${name}`, () => drawStatus(view));
  }
  for (const name of ["_running", "_breakpoints"]) {
    watch(view, `change:${name}`, () => {
      placePausedMarker(view);
      markTopology(view);
    });
  }
  watch(view, "change:_readonly", () => drawAll(view));
  watch(view, "change:_live_text", () => drawLiveText(view));

  listen(view, parts.dagScroll, "click", (event) => onDagClick(view, /** @type {MouseEvent} */ (event)));
  listen(view, parts.dagScroll, "keydown", (event) => onDagKey(view, /** @type {KeyboardEvent} */ (event)));
  listen(view, parts.dagScroll, "mouseover", (event) => showTooltip(view, event.target));
  listen(view, parts.dagScroll, "mouseleave", () => hideTooltip(view));
  listen(view, parts.dagScroll, "scroll", () => scheduleMarks(view));
  listen(view, root, "click", (event) => onAction(view, /** @type {MouseEvent} */ (event)));
  listen(view, parts.find, "keydown", (event) => onFindKey(view, /** @type {KeyboardEvent} */ (event)));
  // For tools (bench/widget_live.py): `root.dispatchEvent(new CustomEvent("dd-show", {detail:
  // id}))` brings a checkpoint into view (unfolded from its run) without selecting it.
  listen(view, root, "dd-show", (event) =>
    scrollToCheckpoint(view, String(/** @type {CustomEvent} */ (event).detail || "")),
  );
  listen(view, parts.find, "input", () => updateMatches(view));
  listen(view, parts.nav, "click", (event) => onNavClick(view, /** @type {MouseEvent} */ (event)));
  listen(view, parts.dagScroll, "wheel", (event) => onWheel(view, /** @type {WheelEvent} */ (event)));
  listen(view, parts.dagScroll, "pointerdown", (event) =>
    onPanStart(view, /** @type {PointerEvent} */ (event)),
  );
  listen(view, parts.dagScroll, "pointermove", (event) =>
    onPanMove(view, /** @type {PointerEvent} */ (event)),
  );
  for (const type of ["pointerup", "pointercancel"])
    listen(view, parts.dagScroll, type, () => onPanEnd(view));
  for (const type of ["pointerdown", "pointermove", "pointerup", "pointercancel"]) {
    listen(view, parts.overview, type, (event) =>
      onOverviewPointer(view, /** @type {PointerEvent} */ (event)),
    );
  }
  // Keys typed in the widget are the widget's. JupyterLab and Notebook 7 (Lumino) skip their
  // shortcuts when the key's target carries `data-lm-suppress-shortcuts` — the target itself:
  // a command-mode selector like `.jp-mod-commandMode :focus` matches the focused element
  // before Lumino looks at its ancestors — so whatever takes focus in the widget gets it. No
  // host that listens after the widget (bubbling) sees the keys either.
  listen(view, root, "focusin", (event) => suppressShortcuts(event.target));
  for (const type of ["keydown", "keypress", "keyup"]) listen(view, root, type, keepKey);
  observeSize(view);
  mountHealth(view);
  mountThreadList(view);
  mountKeys(view);
  scheduleWatch(view);
  // <details> "toggle" does not bubble, so JSON subtrees are filled lazily from a capture listener.
  listen(view, root, "toggle", (event) => fillLazyJson(view, event.target), true);
  return view;
}

/**
 * Mark an element of the widget so that the notebook runs no shortcut for keys typed in it.
 * @param {EventTarget | null} target
 */
function suppressShortcuts(target) {
  const el = /** @type {Element | null} */ (target);
  if (el && typeof el.setAttribute === "function") el.setAttribute("data-lm-suppress-shortcuts", "true");
}

/**
 * Stop a key event at the widget's root, once the widget's own handlers have seen it.
 * @param {Event} event
 */
function keepKey(event) {
  event.stopPropagation();
}

/**
 * In a notebook, `el` is often attached after render: once the DAG has a size (and whenever it
 * changes), open the first view or scroll to the checkpoint waiting for it, and draw the marks
 * now in view.
 * @param {View} view
 */
function observeSize(view) {
  const Observer = view.doc.defaultView && view.doc.defaultView.ResizeObserver;
  if (typeof Observer !== "function") return;
  const observer = new Observer(() => {
    if (view.pendingOpen) openOnPath(view);
    else if (view.pendingScroll) scrollToCheckpoint(view, view.pendingScroll);
    if (view.parts.overview.clientWidth && view.parts.overview.clientWidth !== view.nav.overviewWidth) {
      drawOverview(view);
    }
    view.drawnArea = null;
    drawMarks(view);
  });
  observer.observe(view.parts.dagScroll);
  observer.observe(view.parts.overview);
  view.cleanups.push(() => observer.disconnect());
}

/** @param {View} view */
function disposeView(view) {
  view.closed = true;
  if (view.frame) view.frame.cancel();
  view.frame = null;
  for (const timer of view.timers) clearTimeout(timer);
  view.timers.clear();
  for (const cleanup of view.cleanups.splice(0).reverse()) cleanup();
}

/** Draw the DAG; its first view selects a checkpoint. @param {View} view */
function openDag(view) {
  const first = drawDag(view);
  if (first) selectCheckpoint(view, first);
}

/** @param {View} view */
function drawAll(view) {
  view.root.classList.toggle("dd-readonly", isReadonly(view));
  drawStatus(view);
  drawLiveText(view);
  openDag(view);
  drawDetail(view, view.model.get("_detail") || view.detail, true);
  drawTopology(view, view.model.get("_topology"));
  drawCode(view, view.model.get("_code") || []);
}

/**
 * The static frame of the widget; every panel is filled by its own draw function.
 * @param {Document} doc
 */
function buildSkeleton(doc) {
  const h = hyperscript(doc);
  const { nav, zoomLabel, overview } = navParts(h, doc);
  const parts = {
    nav,
    zoomLabel,
    overview: /** @type {HTMLElement} */ (/** @type {unknown} */ (overview)),
    thread: h("span", { class: "dd-thread" }),
    running: h("span", { class: "dd-running", role: "status", hidden: true }, "running…"),
    stop: h(
      "button",
      { class: "dd-button dd-stop", type: "button", "data-action": "stop", hidden: true },
      "Stop",
    ),
    find: h("input", {
      class: "dd-find",
      type: "search",
      placeholder: "go to: step 12, a node, error, interrupt, fork",
      "aria-label":
        "Go to a checkpoint: a step number, a node name, error, interrupt or fork; Enter for the next",
      "data-lm-suppress-shortcuts": "true",
    }),
    findCount: h("span", { class: "dd-find-count dd-muted", "aria-live": "polite" }),
    newRun: h(
      "button",
      { class: "dd-button dd-small dd-new-run-button", type: "button", "data-action": "new-run" },
      "New run",
    ),
    runForm: h("div", { class: "dd-run-form", hidden: true }),
    threads: h(
      "button",
      { class: "dd-button dd-small dd-threads-button", type: "button", "data-action": "threads" },
      "Threads",
    ),
    threadList: h("div", {
      class: "dd-threads",
      role: "group",
      "aria-label": "show another thread of this store",
      hidden: true,
    }),
    refresh: h(
      "button",
      {
        class: "dd-button dd-small dd-refresh",
        type: "button",
        "data-action": "refresh",
        title: "Read the thread again (runs from a cell or another process show by themselves)",
      },
      "Refresh",
    ),
    status: h("span", { class: "dd-status" }),
    error: h("div", { class: "dd-error", role: "alert", hidden: true }),
    live: h("div", { class: "dd-live", role: "status", "aria-live": "polite", hidden: true }),
    dagScroll: h("div", {
      class: "dd-dag-scroll",
      tabindex: "0",
      "data-lm-suppress-shortcuts": "true",
      role: "application",
      "aria-label":
        "Checkpoint graph: click a checkpoint to inspect it, shift-click another to diff, arrow keys move; " +
        "+ and - zoom, 0 fits, Home and End go to the first and the latest checkpoint, n and N to the next and previous match; drag to pan",
    }),
    dagCanvas: h("div", { class: "dd-dag-canvas" }),
    tooltip: h("div", { class: "dd-tooltip", hidden: true }),
    topology: h("div", { class: "dd-topology" }),
    detail: h("div", { class: "dd-detail" }),
    diff: h("section", { class: "dd-panel dd-diff", hidden: true }),
    code: h("div", { class: "dd-code" }),
    codePanel: h("section", { class: "dd-panel dd-code-panel" }),
  };
  parts.dagCanvas.append(parts.tooltip);
  parts.codePanel.append(h("h4", {}, "Code"), parts.code);
  parts.dagScroll.append(parts.dagCanvas);
  const root = h(
    "div",
    { class: "dd-root", "data-lm-suppress-shortcuts": "true" },
    h(
      "div",
      { class: "dd-toolbar" },
      parts.thread,
      legend(h),
      parts.running,
      parts.status,
      parts.stop,
      parts.find,
      parts.findCount,
      parts.threads,
      parts.threadList,
      parts.newRun,
      parts.refresh,
    ),
    parts.runForm,
    parts.error,
    h(
      "div",
      { class: "dd-top" },
      h("section", { class: "dd-panel dd-dag-panel" }, parts.nav, parts.dagScroll, parts.overview),
      h(
        "section",
        { class: "dd-panel dd-topology-panel" },
        h("h4", {}, "Topology"),
        parts.topology,
        parts.live,
      ),
    ),
    h(
      "div",
      { class: "dd-bottom" },
      h("section", { class: "dd-panel dd-detail-panel" }, parts.detail),
      h("div", { class: "dd-side" }, parts.diff, parts.codePanel),
    ),
  );
  return { root, parts };
}

/** The key to the DAG's marks. @param {ReturnType<typeof hyperscript>} h */
function legend(h) {
  const item = (/** @type {string} */ cls, /** @type {string} */ glyph, /** @type {string} */ label) =>
    h("span", { class: `dd-legend-item ${cls}` }, h("span", { class: "dd-legend-glyph" }, glyph), label);
  return h(
    "span",
    { class: "dd-legend", "aria-hidden": "true" },
    item("dd-src-input", "■", "input"),
    item("dd-src-loop", "●", "loop"),
    item("dd-src-update", "◆", "update"),
    item("dd-src-fork", "▲", "fork"),
    item("dd-legend-interrupt", "●", "interrupt"),
    item("dd-legend-error", "●", "error"),
    item("dd-legend-head", "◯", "branch head"),
    item("dd-legend-run", "⋯", "folded run"),
  );
}

// The names the tests and the standalone page import.
export { findCheckpoints } from "./matches.js";
export { layoutDag, itemsInArea, itemAt, neighbour, FILTERS, CONTEXT, MIN_RUN } from "./layout.js";
export { matchCheckpoints } from "./matches.js";
export { HEALTH_SLA_S, HEALTH_TIMEOUT_MS, healthCell } from "./health.js";
export { formatVersion, formatBytes, shortId } from "./helpers.js";
export { createRequester } from "./requests.js";
export { diffValues } from "./select.js";
export { createStaticModel } from "./static-model.js";
export { topologyDrawing, importSvg } from "./status.js";
export { REQUEST_TIMEOUT_MS, WATCH_EVERY_MS, DAG_GEOMETRY, MARK_LIMIT, ZOOM } from "./types.js";
