// @ts-check
// Status line, topology, code

import { readDag } from "./dag-wire.js";
import { END, START, displayName, nameInto, shortName } from "./names.js";
import { cell, hyperscript, isReadonly, later, plural, round1, svgHyperscript, table } from "./helpers.js";
import { SVG_NS } from "./types.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").CodeEntry} CodeEntry */
/** @typedef {import("./types.js").Topology} Topology */
/** Thread, running indicator, status text, Stop button, errors. @param {View} view */
export function drawStatus(view) {
  const { parts, model } = view;
  const dag = readDag(model);
  const count = dag && dag.nodes ? dag.nodes.length : 0;
  const lanes = dag && dag.lanes ? dag.lanes : 0;
  const thread = model.get("_thread_id") || (dag && dag.thread_id) || "?";
  parts.thread.textContent = `thread ${shortName(thread)} · ${plural(count, "checkpoint")} · ${plural(lanes, "branch")}`;
  parts.thread.setAttribute("title", `thread ${displayName(thread)}`);
  const running = Boolean(model.get("_running"));
  parts.running.hidden = !running;
  parts.stop.hidden = !running || isReadonly(view);
  parts.refresh.hidden = isReadonly(view);
  parts.threads.hidden = isReadonly(view);
  parts.newRun.hidden = isReadonly(view);
  parts.status.textContent = model.get("_status") || "";
  // A gone kernel says so alone: every other message would be about an object that is gone.
  const messages = view.kernelGone
    ? [view.kernelGone]
    : [model.get("_error"), view.requestError].filter(Boolean);
  parts.error.textContent = messages.join("\n");
  parts.error.hidden = !messages.length;
}

/**
 * The graph's nodes and edges with execution counts; re-executed nodes are highlighted. Uses
 * Python's graphviz drawing when there is one, and draws from x/y otherwise.
 * @param {View} view @param {Topology | null} topology
 */
export function drawTopology(view, topology) {
  const h = hyperscript(view.doc);
  const box = view.parts.topology;
  if (!topology || !topology.nodes) {
    box.replaceChildren(h("span", { class: "dd-empty" }, "no topology"));
    return;
  }
  // graphviz's drawing (sanitized by Python) is copied element by element through an allowlist;
  // when there is none, or it does not parse, the drawing comes from the x/y positions.
  const drawn = topology.svg ? importSvg(view.doc, topology.svg) : null;
  const svg = drawn || topologyDrawing(view.doc, topology, view.uid);
  const picture = h(
    "div",
    { class: "dd-topology-picture", tabindex: "0", "data-lm-suppress-shortcuts": "" },
    svg,
  );
  const zoomBar = h(
    "div",
    { class: "dd-topology-zoom" },
    ...[
      ["out", "−", "zoom out"],
      ["fit", "Fit", "fit the whole graph"],
      ["in", "+", "zoom in"],
    ].map(([what, label, title]) =>
      h("button", { class: "dd-button dd-small", type: "button", "data-topo-zoom": what, title }, label),
    ),
    h("span", { class: "dd-muted dd-topology-hint" }, "drag to pan, Ctrl + wheel to zoom, Fit to see it all"),
  );
  mountPanZoom(view, picture, zoomBar, /** @type {SVGSVGElement} */ (svg));
  const ran = topology.nodes.filter((node) => node.count || node.reruns);
  const counts = table(
    h,
    "dd-count-table",
    null,
    ran.map((node) =>
      h(
        "tr",
        { class: node.reruns > 0 ? "dd-rerun" : "", "data-node": node.id },
        nameInto(cell(h, ""), node.id),
        cell(h, `×${node.count}`, "dd-num"),
        cell(h, node.reruns > 0 ? plural(node.reruns, "re-execution") : "", "dd-muted"),
      ),
    ),
  );
  box.replaceChildren(zoomBar, picture, counts, isReadonly(view) ? "" : drawBreakpoints(view, topology));
  markTopology(view);
}

/** The topology drawing's zoom per view: null fits the whole graph in its box. */
const topologyZoom = /** @type {WeakMap<object, number | null>} */ (new WeakMap());
/** Where the zoomed-in drawing was scrolled to, per view, kept across redraws (new counts). */
const topologyScroll = /** @type {WeakMap<object, { left: number, top: number }>} */ (new WeakMap());

/** The topology's first zoom, at most, when fitting it whole would make its labels too small. */
const READABLE_ZOOM = 0.8;

/**
 * Pan (drag) and zoom (the bar's buttons, Ctrl/⌘ + wheel) the topology inside its box, so
 * every node of a graph of any size can be reached. At first the graph is fitted whole, unless
 * it is so tall that its labels would then be too small: it then fits across (up to
 * READABLE_ZOOM) and opens on its top (the start), and Fit shows it whole. The zoom and the place are kept when the topology is drawn again
 * (new counts).
 * @param {View} view @param {HTMLElement} picture @param {HTMLElement} bar @param {SVGSVGElement} svg
 */
function mountPanZoom(view, picture, bar, svg) {
  const box = svg.viewBox && svg.viewBox.baseVal;
  const natural = {
    w: (box && box.width) || Number.parseFloat(svg.getAttribute("width") || "") || 300,
    h: (box && box.height) || Number.parseFloat(svg.getAttribute("height") || "") || 200,
  };
  if (!svg.getAttribute("viewBox")) svg.setAttribute("viewBox", `0 0 ${natural.w} ${natural.h}`);
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  const fitted = () =>
    Math.min((picture.clientWidth || natural.w) / natural.w, (picture.clientHeight || natural.h) / natural.h);
  const apply = (/** @type {number | null} */ zoom, /** @type {{x: number, y: number}} */ at) => {
    const before = topologyZoom.get(view) ?? fitted();
    topologyZoom.set(view, zoom);
    picture.classList.toggle("dd-fitted", zoom === null);
    if (zoom === null) {
      svg.removeAttribute("width");
      svg.removeAttribute("height");
      return;
    }
    const x = (picture.scrollLeft + at.x) / before;
    const y = (picture.scrollTop + at.y) / before;
    svg.setAttribute("width", String(Math.round(natural.w * zoom)));
    svg.setAttribute("height", String(Math.round(natural.h * zoom)));
    picture.scrollLeft = Math.max(0, x * zoom - at.x);
    picture.scrollTop = Math.max(0, y * zoom - at.y);
  };
  const centre = () => ({ x: picture.clientWidth / 2, y: picture.clientHeight / 2 });
  const step = (/** @type {number} */ factor, at = centre()) => {
    const now = topologyZoom.get(view) ?? fitted();
    apply(Math.min(4, Math.max(0.1, now * factor)), at);
  };
  const first = !topologyZoom.has(view);
  apply(topologyZoom.get(view) ?? null, { x: 0, y: 0 });
  if (first) {
    // Once the picture is in the page (and so has a size): readable rather than whole.
    later(
      view,
      () => {
        if (!picture.isConnected || !picture.clientWidth || topologyZoom.get(view) != null) return;
        const whole = fitted();
        // Never wider than the box at first: a tall graph scrolls down, a wide one fits across.
        const across = Math.min(1, picture.clientWidth / natural.w);
        const zoom = Math.max(whole, Math.min(across, READABLE_ZOOM));
        if (zoom - whole < 0.01) return;
        apply(zoom, { x: 0, y: 0 });
        picture.scrollLeft = Math.max(0, (picture.scrollWidth - picture.clientWidth) / 2);
        picture.scrollTop = 0;
      },
      0,
    );
  }
  const kept = topologyScroll.get(view);
  if (kept && topologyZoom.get(view) != null) {
    // The new picture is laid out once it is in the page: scroll it back there then.
    later(
      view,
      () => {
        picture.scrollLeft = kept.left;
        picture.scrollTop = kept.top;
      },
      0,
    );
  }
  picture.addEventListener("scroll", () =>
    topologyScroll.set(view, { left: picture.scrollLeft, top: picture.scrollTop }),
  );
  bar.addEventListener("click", (event) => {
    const button = /** @type {Element} */ (event.target).closest("[data-topo-zoom]");
    const what = button && button.getAttribute("data-topo-zoom");
    if (what === "in") step(1.25);
    else if (what === "out") step(1 / 1.25);
    else if (what === "fit") apply(null, { x: 0, y: 0 });
  });
  picture.addEventListener(
    "wheel",
    (event) => {
      if (!(event.ctrlKey || event.metaKey)) return;
      event.preventDefault();
      const rect = picture.getBoundingClientRect();
      step(event.deltaY < 0 ? 1.1 : 1 / 1.1, { x: event.clientX - rect.left, y: event.clientY - rect.top });
    },
    { passive: false },
  );
  /** @type {{ x: number, y: number, left: number, top: number } | null} */
  let drag = null;
  picture.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: picture.scrollLeft, top: picture.scrollTop };
    picture.classList.add("dd-panning");
  });
  picture.addEventListener("pointermove", (event) => {
    if (!drag) return;
    picture.scrollLeft = drag.left - (event.clientX - drag.x);
    picture.scrollTop = drag.top - (event.clientY - drag.y);
  });
  const end = () => {
    drag = null;
    picture.classList.remove("dd-panning");
  };
  picture.addEventListener("pointerup", end);
  picture.addEventListener("pointerleave", end);
}

/**
 * While a run goes on, the nodes running now (the `next` of the newest checkpoint) are
 * highlighted in the topology; a checkpoint paused at a breakpoint marks the node it waits at.
 * Called whenever the topology, the DAG, `_running` or `_breakpoints` change.
 * @param {View} view
 */
export function markTopology(view) {
  const picture = view.parts.topology.querySelector(".dd-topology-picture");
  if (!picture) return;
  const latest = view.layout ? view.layout.byId.get(view.layout.latest) : undefined;
  const running = view.model.get("_running") && latest ? latest.next || [] : [];
  const paused = pausedAt(view);
  /** @type {Element | null} */
  let first = null;
  for (const el of picture.querySelectorAll("[data-node]")) {
    const node = el.getAttribute("data-node") || "";
    el.classList.toggle("dd-running", running.includes(node));
    el.classList.toggle("dd-paused", Boolean(paused && paused.nodes.includes(node)));
    if (!first && running.includes(node)) first = el;
  }
  // A node that starts running out of the zoomed-in view is brought into it, once (the user
  // may pan away while it runs).
  const key = running.join("\u0000");
  if (first && runningShown.get(view) !== key) showInPicture(/** @type {HTMLElement} */ (picture), first);
  runningShown.set(view, key);
  const label = view.parts.topology.querySelector(".dd-topology-hint");
  if (label)
    label.textContent = running.length
      ? `running: ${running.map((node) => shortName(node)).join(", ")}`
      : paused
        ? `paused ${paused.when} ${paused.nodes.map((node) => shortName(node)).join(", ")}`
        : "drag to pan, Ctrl + wheel to zoom, Fit to see it all";
}

/** Per view, the running nodes last brought into view. */
const runningShown = /** @type {WeakMap<object, string>} */ (new WeakMap());

/** Scroll the topology's box so that `el` is inside it, when it is not. @param {HTMLElement} picture @param {Element} el */
function showInPicture(picture, el) {
  const box = picture.getBoundingClientRect();
  const at = el.getBoundingClientRect();
  if (
    !box.width ||
    (at.left >= box.left && at.right <= box.right && at.top >= box.top && at.bottom <= box.bottom)
  )
    return;
  picture.scrollLeft += at.left + at.width / 2 - (box.left + box.width / 2);
  picture.scrollTop += at.top + at.height / 2 - (box.top + box.height / 2);
}

/**
 * Where the thread is paused at a breakpoint, if it is: no run going on, and the newest
 * checkpoint (no interrupt, no error) has next steps that a breakpoint set pauses before, or
 * was written by a node that one pauses after.
 * @param {View} view
 * @returns {{ id: string, when: "before" | "after", nodes: string[] } | null}
 */
export function pausedAt(view) {
  if (view.model.get("_running") || !view.layout) return null;
  const node = view.layout.byId.get(view.layout.latest);
  if (!node || !(node.next || []).length || node.interrupts > 0 || node.errors > 0) return null;
  const set = view.model.get("_breakpoints") || {};
  const before = (node.next || []).filter((name) => (set.before || []).includes(name));
  if (before.length) return { id: node.id, when: "before", nodes: before };
  const after = (node.writers || []).filter((name) => (set.after || []).includes(name));
  if (after.length) return { id: node.id, when: "after", nodes: after };
  return null;
}

/**
 * Per node, pause a run started here before it and / or after it (`interrupt_before` /
 * `interrupt_after` of the next reruns and resumes); each change is sent to Python.
 * @param {View} view @param {Topology} topology
 */
function drawBreakpoints(view, topology) {
  const h = hyperscript(view.doc);
  const set = view.model.get("_breakpoints") || { before: [], after: [] };
  const nodes = topology.nodes.map((node) => node.id).filter((id) => id !== START && id !== END);
  const toggle = (/** @type {string} */ node, /** @type {string} */ when) => {
    const input = h("input", {
      type: "checkbox",
      "data-node": node,
      "data-when": when,
      "aria-label": `pause ${when} ${node}`,
    });
    /** @type {HTMLInputElement} */ (input).checked = (set[when] || []).includes(node);
    input.addEventListener("change", () => sendBreakpoints(view));
    return h("label", { class: "dd-break" }, input, ` ${when}`);
  };
  return h(
    "details",
    { class: "dd-breakpoints" },
    h("summary", {}, "Breakpoints (pause the next rerun or resume)"),
    table(
      h,
      "dd-break-table",
      null,
      nodes.map((node) =>
        h(
          "tr",
          { "data-node": node },
          nameInto(cell(h, ""), node),
          h("td", {}, toggle(node, "before"), toggle(node, "after")),
        ),
      ),
    ),
  );
}

/** Send every checked breakpoint. @param {View} view */
function sendBreakpoints(view) {
  /** @type {{before: string[], after: string[]}} */
  const chosen = { before: [], after: [] };
  for (const box of view.parts.topology.querySelectorAll(".dd-breakpoints input[data-when]")) {
    const input = /** @type {HTMLInputElement} */ (box);
    const when = /** @type {"before" | "after"} */ (input.getAttribute("data-when"));
    if (input.checked) chosen[when].push(input.getAttribute("data-node") || "");
  }
  view.requests.request("breakpoints", chosen).then(
    () => clearRequestError(view),
    (error) => showRequestError(view, error),
  );
}

/**
 * The drawing of a Topology laid out by Python (x, y are node centres), as one SVG element.
 * @param {Document} doc @param {Topology} topology
 * @param {string} uid unique per view, for the arrow marker's id
 * @returns {SVGSVGElement}
 */
export function topologyDrawing(doc, topology, uid = "dd") {
  const s = svgHyperscript(doc);
  const size = new Map(
    topology.nodes.map((node) => [node.id, { w: Math.max(48, shortName(node.id).length * 7 + 30), h: 26 }]),
  );
  const boxOf = (/** @type {string} */ id) => size.get(id) || { w: 48, h: 26 };
  const at = new Map(topology.nodes.map((node) => [node.id, node]));
  const marker = `${uid}-arrow`;
  const edges = [];
  for (const edge of topology.edges) {
    const a = at.get(edge.source);
    const b = at.get(edge.target);
    if (!a || !b) continue;
    const [x1, y1] = clipToBox(b.x, b.y, a.x, a.y, boxOf(a.id));
    const [x2, y2] = clipToBox(a.x, a.y, b.x, b.y, boxOf(b.id));
    const cls = `dd-topo-edge${edge.conditional ? " dd-conditional" : ""}`;
    edges.push(s("line", { class: cls, x1, y1, x2, y2, "marker-end": `url(#${marker})` }));
  }
  const nodes = topology.nodes.map((node) => {
    const { w, h } = boxOf(node.id);
    const cls = `dd-topo-node${node.reruns > 0 ? " dd-rerun" : ""}${node.count ? "" : " dd-unrun"}`;
    const label = node.count ? `${shortName(node.id)} ×${node.count}` : shortName(node.id);
    return s(
      "g",
      { class: cls, "data-node": node.id, transform: `translate(${node.x} ${node.y})` },
      shortName(node.id) === node.id ? "" : s("title", {}, displayName(node.id)), // cut or escaped
      s("rect", { x: -w / 2, y: -h / 2, width: w, height: h, rx: 6 }),
      s("text", { dy: "0.35em" }, label),
    );
  });
  const width = Math.max(topology.width || 0, 1);
  const height = Math.max(topology.height || 0, 1);
  const arrow = s(
    "marker",
    { id: marker, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
    s("path", { d: "M0 0L10 5L0 10z" }),
  );
  return /** @type {SVGSVGElement} */ (
    s(
      "svg",
      { class: "dd-topology-svg", viewBox: `0 0 ${width} ${height}`, width, height },
      s("defs", {}, arrow),
      ...edges,
      ...nodes,
    )
  );
}

/** SVG elements a drawing from Python may hold; anything else is left out with its content. */
const SVG_ELEMENTS = new Set([
  "svg",
  "g",
  "polygon",
  "polyline",
  "ellipse",
  "circle",
  "rect",
  "line",
  "path",
  "text",
]);
/** Attributes kept on them (no `on*`, no `href`, no `style`, no `id`). */
const SVG_ATTRIBUTES = new Set(
  (
    "width height viewBox preserveAspectRatio transform class fill fill-opacity stroke stroke-width " +
    "stroke-opacity stroke-dasharray points d cx cy r rx ry x y x1 y1 x2 y2 text-anchor font-family " +
    "font-size font-weight font-style data-node"
  ).split(" "),
);
/** A value with a scheme (`javascript:`), markup or a reference is dropped. */
const UNSAFE_VALUE = /[:<>\\]|url\(|expression\(/i;

/**
 * An SVG drawing given as text (graphviz's, already sanitized in Python), parsed as XML and
 * rebuilt element by element from an allowlist: text stays text, and no link, handler, script,
 * style or foreign content can come through even if the text held one. Null when it does not
 * parse as SVG.
 * @param {Document} doc @param {string} text
 * @returns {SVGSVGElement | null}
 */
export function importSvg(doc, text) {
  const Parser = doc.defaultView && doc.defaultView.DOMParser;
  if (!Parser) return null;
  const parsed = new Parser().parseFromString(text, "image/svg+xml").documentElement;
  if (!parsed || parsed.namespaceURI !== SVG_NS || parsed.localName !== "svg") return null;
  if (parsed.getElementsByTagName("parsererror").length) return null;
  return /** @type {SVGSVGElement | null} */ (copySvg(doc, parsed));
}

/** @param {Document} doc @param {Element} source @returns {SVGElement | null} */
function copySvg(doc, source) {
  if (source.namespaceURI !== SVG_NS || !SVG_ELEMENTS.has(source.localName)) return null;
  const copy = /** @type {SVGElement} */ (doc.createElementNS(SVG_NS, source.localName));
  for (const attr of source.attributes) {
    if (attr.namespaceURI || !SVG_ATTRIBUTES.has(attr.name)) continue;
    if (attr.name !== "data-node" && UNSAFE_VALUE.test(attr.value.replace(/\s+/g, ""))) continue;
    copy.setAttribute(attr.name, attr.value);
  }
  for (const child of source.childNodes) {
    if (child.nodeType === 3 && source.localName === "text")
      copy.append(doc.createTextNode(child.nodeValue || ""));
    else if (child.nodeType === 1) {
      const inner = copySvg(doc, /** @type {Element} */ (child));
      if (inner) copy.append(inner);
    }
  }
  return copy;
}

/**
 * Where the segment from (x0, y0) to the centre of a box at (x, y) enters the box.
 * @param {number} x0 @param {number} y0 @param {number} x @param {number} y
 * @param {{w: number, h: number}} box
 * @returns {[number, number]}
 */
function clipToBox(x0, y0, x, y, box) {
  const dx = x0 - x;
  const dy = y0 - y;
  if (!dx && !dy) return [x, y];
  const scale = 1 / Math.max(Math.abs(dx) / (box.w / 2), Math.abs(dy) / (box.h / 2));
  return [round1(x + dx * Math.min(scale, 1)), round1(y + dy * Math.min(scale, 1))];
}

/**
 * The Python equivalent of every action done in the UI, each with a copy button.
 * @param {View} view @param {CodeEntry[]} entries
 */
export function drawCode(view, entries) {
  const h = hyperscript(view.doc);
  // A read-only export can neither fork, rerun nor resume: no code panel to promise that.
  view.parts.codePanel.hidden = isReadonly(view) && !entries.length;
  if (view.parts.codePanel.hidden) {
    view.parts.code.replaceChildren();
    return;
  }
  if (!entries.length) {
    view.parts.code.replaceChildren(
      h(
        "p",
        { class: "dd-empty" },
        "Each fork, rerun and resume shows its Python here, to replay a session as code.",
      ),
    );
    return;
  }
  view.parts.code.replaceChildren(
    ...entries.map((entry, index) =>
      h(
        "div",
        { class: "dd-code-entry", "data-index": String(index) },
        h(
          "div",
          { class: "dd-code-head" },
          h("span", { class: "dd-pill" }, entry.action),
          h(
            "button",
            {
              class: "dd-button dd-small",
              type: "button",
              "data-action": "copy",
              "data-index": String(index),
            },
            "Copy",
          ),
        ),
        h("pre", { class: "dd-code-text" }, entry.code),
      ),
    ),
  );
}

/** @param {View} view @param {Element} button */
export function copyCode(view, button) {
  const entries = view.model.get("_code") || [];
  const entry = entries[Number(button.getAttribute("data-index"))];
  if (!entry) return;
  const done = (/** @type {string} */ label) => {
    button.textContent = label;
    later(
      view,
      () => {
        button.textContent = "Copy";
      },
      1500,
    );
  };
  const clipboard = globalThis.navigator && globalThis.navigator.clipboard;
  if (clipboard && typeof clipboard.writeText === "function") {
    clipboard.writeText(entry.code).then(
      () => done("Copied"),
      () => selectCode(view, button, done),
    );
  } else {
    selectCode(view, button, done);
  }
}

/**
 * No clipboard (e.g. an insecure context): select the code so Ctrl+C copies it.
 * @param {View} view @param {Element} button @param {(label: string) => void} done
 */
function selectCode(view, button, done) {
  const pre = button.closest(".dd-code-entry")?.querySelector("pre");
  const selection = view.doc.getSelection && view.doc.getSelection();
  if (pre && selection) {
    selection.selectAllChildren(pre);
    done("Selected: press Ctrl+C");
  }
}

/** @param {View} view @param {Error} error */
export function showRequestError(view, error) {
  view.requestError = error.message;
  drawStatus(view);
}

/** @param {View} view */
export function clearRequestError(view) {
  if (!view.requestError) return;
  view.requestError = "";
  drawStatus(view);
}
