// durable_debug's time-travel widget, bundled from js/src/ by js/build.mjs (esbuild).
// Do not edit: change js/src/ and run `npm run build`.

// js/src/names.js
var START = "__start__";
var END = "__end__";
var NAME_MAX = 40;
var INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
function displayName(name) {
  return String(name).replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
function shortName(name, max = NAME_MAX) {
  const shown = displayName(name);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}
function nameInto(el, name, max = NAME_MAX) {
  const shown = displayName(name);
  el.textContent = shortName(name, max);
  if (shown !== name || shown.length > max) el.setAttribute("title", shown);
  return el;
}

// js/src/dag-wire.js
var DAG_WIRE_FORMAT = "dag-columns-1";
var decoded = /* @__PURE__ */ new WeakMap();
var COLUMNS = ["id", "parent", "step", "source", "next", "writers", "node_depth", "lane", "created_at"];
var SPARSE = ["interrupts", "errors", "findings", "broken_parent", "missing_parent"];
function emptyDag() {
  return { thread_id: "", checkpoint_ns: "", nodes: [], depth: 0, lanes: 0 };
}
function readDag(model) {
  return decodeDag(model.get("_dag"), model.get("_dag_tail"));
}
function decodeDag(wire, tail) {
  if (!wire || typeof wire !== "object") return emptyDag();
  if (wire.format !== DAG_WIRE_FORMAT) return Array.isArray(wire.nodes) ? wire : emptyDag();
  const usable = tail && tail.format === DAG_WIRE_FORMAT ? tail : null;
  const known = decoded.get(wire);
  if (known && known.tail === usable) return known.dag;
  const dag = decodeColumns(mergeTail(unpack(wire), usable && unpack(usable)));
  decoded.set(wire, { tail: usable, dag });
  return dag;
}
var unpacked = /* @__PURE__ */ new WeakMap();
function unpack(value) {
  const packed = value.packed;
  if (packed == null) return value;
  let found = unpacked.get(value);
  if (!found) {
    found = typeof packed === "string" ? JSON.parse(packed) : unpackBytes(bytesOf(packed));
    unpacked.set(value, found);
  }
  return found;
}
var PACKED_MAGIC = [68, 87, 66, 49];
var PACKED_ONLY = /* @__PURE__ */ new Set([
  "id_bytes",
  "parent_rel",
  "step_rel",
  "depth_rel",
  "lane_rel",
  "time0_us",
  "time_us",
  "time_text"
]);
function bytesOf(packed) {
  if (packed instanceof ArrayBuffer) return new Uint8Array(packed);
  if (ArrayBuffer.isView(packed)) return new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength);
  return new Uint8Array(0);
}
function unpackBytes(bytes) {
  const decoder = new TextDecoder();
  if (bytes.length < 8 || PACKED_MAGIC.some((b, i) => bytes[i] !== b))
    return JSON.parse(decoder.decode(bytes));
  const size = (bytes[4] | bytes[5] << 8 | bytes[6] << 16 | bytes[7] << 24) >>> 0;
  const wire = JSON.parse(decoder.decode(bytes.subarray(8, 8 + size)));
  if (wire.id_bytes != null) wire.id = uuidTexts(bytes.subarray(8 + size), wire.id_bytes);
  const start = wire.start || 0;
  const rel = wire.parent_rel || [];
  const count = rel.length;
  const parent = new Array(count).fill(0);
  const step = new Array(count).fill(0);
  const depth = new Array(count).fill(0);
  const lane = new Array(count).fill(0);
  const stepRel = wire.step_rel;
  const depthRel = wire.depth_rel;
  const laneRel = wire.lane_rel;
  for (let k = 0; k < count; k++) {
    const at = start + k;
    const p = rel[k] === 0 ? -1 : at - rel[k];
    parent[k] = p;
    step[k] = stepRel[k];
    depth[k] = depthRel[k];
    lane[k] = laneRel[k];
    if (start <= p && p < at) {
      const q = p - start;
      step[k] += step[q];
      depth[k] += depth[q];
      lane[k] += lane[q];
    }
  }
  const columns = {};
  for (const key of Object.keys(wire)) if (!PACKED_ONLY.has(key)) columns[key] = wire[key];
  columns.parent = parent;
  columns.step = step;
  columns.node_depth = depth;
  columns.lane = lane;
  columns.created_at = timeTexts(wire.time0_us || 0, wire.time_us || [], pairs(wire.time_text));
  return columns;
}
var HEX = (() => {
  const digits = new Uint8Array(512);
  const text = "0123456789abcdef";
  for (let i = 0; i < 256; i++) {
    digits[2 * i] = text.charCodeAt(i >> 4);
    digits[2 * i + 1] = text.charCodeAt(i & 15);
  }
  return digits;
})();
function uuidTexts(raw, count) {
  const ascii = new Uint8Array(36 * count);
  for (let k = 0, o = 0, w = 0; k < count; k++) {
    for (let j = 0; j < 16; j++, o++) {
      const b = raw[o];
      ascii[w++] = HEX[2 * b];
      ascii[w++] = HEX[2 * b + 1];
      if (j === 3 || j === 5 || j === 7 || j === 9) ascii[w++] = 45;
    }
  }
  return cut(new TextDecoder().decode(ascii), 36, count);
}
function cut(text, width, count) {
  const parts = new Array(count);
  for (let k = 0; k < count; k++) parts[k] = text.slice(k * width, k * width + width);
  return parts;
}
function timeTexts(first, deltas, odd) {
  const count = deltas.length;
  const ascii = new Uint8Array(32 * count);
  const some = odd.size > 0;
  let now = first;
  let second = NaN;
  let prefix = new Uint8Array(20);
  for (let k = 0, w = 0; k < count; k++, w += 32) {
    if (some && odd.has(k)) continue;
    now += deltas[k];
    const whole = Math.floor(now / 1e6);
    if (whole !== second) {
      second = whole;
      const text = new Date(whole * 1e3).toISOString().slice(0, 19) + ".";
      prefix = Uint8Array.from(text, (c) => c.charCodeAt(0));
    }
    ascii.set(prefix, w);
    let fraction = now - whole * 1e6 | 0;
    for (let i = w + 25; i >= w + 20; i--) {
      const tenth = fraction / 10 | 0;
      ascii[i] = 48 + fraction - tenth * 10;
      fraction = tenth;
    }
    ascii.set(UTC, w + 26);
  }
  const texts = cut(new TextDecoder().decode(ascii), 32, count);
  for (const [k, text] of odd) if (k < count) texts[k] = text;
  return texts;
}
var UTC = Uint8Array.from("+00:00", (c) => c.charCodeAt(0));
function mergeTail(wire, tail) {
  if (!tail || tail.format !== DAG_WIRE_FORMAT) return wire;
  const start = tail.start || 0;
  if (tail.epoch !== wire.epoch || start < 0 || start > (wire.id || []).length) return wire;
  const merged = { ...tail, start: 0 };
  for (const key of COLUMNS) merged[key] = wire[key].slice(0, start).concat(tail[key]);
  for (const key of SPARSE) {
    const kept = [];
    const pairs2 = wire[key] || [];
    for (let i = 0; i + 1 < pairs2.length; i += 2) if (pairs2[i] < start) kept.push(pairs2[i], pairs2[i + 1]);
    merged[key] = kept.concat(tail[key] || []);
  }
  merged.graph_changed = (wire.graph_changed || []).filter((i) => i < start).concat(tail.graph_changed || []);
  return merged;
}
function decodeColumns(wire) {
  const ids = (
    /** @type {string[]} */
    wire.id || []
  );
  const count = ids.length;
  const parent = wire.parent || [];
  const strings = wire.strings || [];
  const lists = (wire.lists || []).map((names) => names.map((n) => strings[n]));
  const hasChild = new Uint8Array(count);
  for (let i = 0; i < count; i++) if (parent[i] >= 0) hasChild[parent[i]] = 1;
  const interrupts = pairs(wire.interrupts);
  const errors = pairs(wire.errors);
  const findings = pairs(wire.findings);
  const broken = pairs(wire.broken_parent);
  const missing = pairs(wire.missing_parent);
  const changed = new Set(wire.graph_changed || []);
  const nodes = new Array(count);
  for (let i = 0; i < count; i++) {
    const p = parent[i];
    nodes[i] = {
      id: ids[i],
      parent: p >= 0 ? ids[p] : missing.get(i) ?? null,
      broken_parent: broken.get(i) ?? null,
      step: wire.step[i],
      source: strings[wire.source[i]],
      next: lists[wire.next[i]],
      writers: lists[wire.writers[i]],
      interrupts: interrupts.get(i) || 0,
      errors: errors.get(i) || 0,
      graph_changed: changed.has(i),
      findings: findings.get(i) || 0,
      is_head: !hasChild[i],
      is_latest: i === count - 1,
      depth: wire.node_depth[i],
      lane: wire.lane[i],
      created_at: wire.created_at[i]
    };
  }
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => nodes[a].depth - nodes[b].depth || nodes[a].lane - nodes[b].lane || a - b);
  return {
    thread_id: wire.thread_id || "",
    checkpoint_ns: wire.checkpoint_ns || "",
    nodes: order.map((i) => nodes[i]),
    depth: wire.depth || 0,
    lanes: wire.lanes || 0
  };
}
function pairs(flat) {
  const map = /* @__PURE__ */ new Map();
  for (let i = 0; flat && i + 1 < flat.length; i += 2) map.set(flat[i], flat[i + 1]);
  return map;
}

// js/src/types.js
var REQUEST_TIMEOUT_MS = 3e4;
var WATCH_EVERY_MS = 2e3;
var DAG_GEOMETRY = { col: 64, row: 80, pad: 46, radius: 10 };
var SVG_NS = "http://www.w3.org/2000/svg";
var SOURCE_LETTER = { input: "I", loop: "L", update: "U", fork: "F" };
var JSON_ROW_LIMIT = 200;
var TYPE_KEY = "__type__";
var ZOOM = { min: 0.02, max: 2, text: 0.6, dots: 0.25, step: 1.25, first: 1.1 };
var MARK_LIMIT = 1500;

// js/src/helpers.js
function formatVersion(version) {
  if (version === null || version === void 0) return "—";
  const text = String(version);
  const match = /^0*(\d+)\.(.+)$/.exec(text);
  if (match) return `${match[1]} · ${truncate(match[2], 8)}`;
  if (/^0+\d/.test(text)) return text.replace(/^0+(?=\d)/, "");
  return truncate(text, 16);
}
function formatBytes(bytes) {
  if (bytes === null || bytes === void 0 || Number.isNaN(bytes)) return "—";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
function shortId(id) {
  const text = String(id || "");
  const hex = text.replace(/-/g, "");
  if (/^[0-9a-f]{32}$/i.test(hex) && hex[12] === "6") return (hex.slice(0, 12) + hex.slice(13, 16)).slice(-8);
  return text.length > 8 ? text.slice(-8) : text;
}
function plural(n, word) {
  if (n === 1) return `${n} ${word}`;
  return `${n} ${word}${/(s|sh|ch|x)$/.test(word) ? "es" : "s"}`;
}
function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
function compactJson(value) {
  const text = JSON.stringify(value, null, 1) ?? "null";
  return text.length > 2e3 ? `${text.slice(0, 2e3)}…` : text;
}
function round1(n) {
  return Math.round(n * 10) / 10;
}
function table(h, cls, headers, rows) {
  const head = headers ? h("thead", {}, h("tr", {}, ...headers.map((title) => h("th", {}, title)))) : "";
  return h("table", { class: `dd-table ${cls}` }, head, h("tbody", {}, ...rows));
}
function cell(h, content, cls) {
  return h("td", cls ? { class: cls } : {}, content);
}
function hyperscript(doc) {
  return function h(tag, attrs = {}, ...children) {
    const el = doc.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === true) el.setAttribute(name, "");
      else if (value !== false && value != null) el.setAttribute(name, value);
    }
    for (const child of children) {
      if (child === "" || child == null) continue;
      el.append(typeof child === "string" ? doc.createTextNode(child) : child);
    }
    return el;
  };
}
function svgHyperscript(doc) {
  return function s(tag, attrs = {}, ...children) {
    const el = (
      /** @type {SVGElement} */
      doc.createElementNS(SVG_NS, tag)
    );
    for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
    for (const child of children) el.append(typeof child === "string" ? doc.createTextNode(child) : child);
    return el;
  };
}
function later(view, fn, ms) {
  const timer = setTimeout(() => {
    view.timers.delete(timer);
    fn();
  }, ms);
  view.timers.add(timer);
}
function isReadonly(view) {
  return Boolean(view.model.get("_readonly"));
}
function listen(view, target, type, fn, capture = false) {
  target.addEventListener(type, fn, capture);
  view.cleanups.push(() => target.removeEventListener(type, fn, capture));
}
function watch(view, name, fn) {
  view.model.on(name, fn);
  view.cleanups.push(() => view.model.off(name, fn));
}
function section(h, title, cls, ...body) {
  return h("section", { class: `dd-section ${cls}` }, h("h4", {}, title), ...body);
}
function inNamespace(view) {
  const namespace = view.model.get("_selected_ns");
  return namespace ? { checkpoint_ns: namespace } : {};
}

// js/src/layout.js
var FILTERS = {
  error: (node) => node.errors > 0,
  interrupt: (node) => node.interrupts > 0,
  fork: (node) => node.source === "fork" || node.source === "update"
};
var CONTEXT = 1;
var MIN_RUN = 3;
function layoutDag(dag, options = {}) {
  const geometry = options.geometry || DAG_GEOMETRY;
  const { col, row: rowPitch, pad } = geometry;
  const nodes = dag && dag.nodes || [];
  const n = nodes.length;
  const index = /* @__PURE__ */ new Map();
  const skip = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (index.has(nodes[i].id)) skip[i] = 1;
    else index.set(nodes[i].id, i);
  }
  const parentOf = new Int32Array(n).fill(-1);
  const kidCount = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (skip[i]) continue;
    const parent = nodes[i].parent;
    const p = parent != null ? index.get(parent) : void 0;
    if (p !== void 0 && p !== i) {
      parentOf[i] = p;
      kidCount[p]++;
    }
  }
  const kidStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) kidStart[i + 1] = kidStart[i] + kidCount[i];
  const kids = new Int32Array(kidStart[n]);
  const fill = kidStart.slice(0, n);
  for (let i = 0; i < n; i++) if (parentOf[i] >= 0) kids[fill[parentOf[i]]++] = i;
  const older = (a, b) => nodes[a].id < nodes[b].id ? -1 : nodes[a].id > nodes[b].id ? 1 : 0;
  for (let i = 0; i < n; i++) {
    if (kidCount[i] > 1) kids.subarray(kidStart[i], kidStart[i + 1]).sort(older);
  }
  const roots = [];
  for (let i = 0; i < n; i++) if (!skip[i] && parentOf[i] < 0) roots.push(i);
  roots.sort(older);
  const depth = new Int32Array(n).fill(-1);
  const branches = [];
  const starts = [];
  for (let r = roots.length - 1; r >= 0; r--) starts.push(roots[r], -1, -1);
  let maxDepth = -1;
  const walk = (start, parentBranch, fork2) => {
    const b = branches.length;
    const branch = {
      nodes: (
        /** @type {DagNode[]} */
        []
      ),
      members: (
        /** @type {number[]} */
        []
      ),
      parent: parentBranch,
      fork: fork2,
      kids: (
        /** @type {number[]} */
        []
      )
    };
    branches.push(branch);
    if (parentBranch >= 0) branches[parentBranch].kids.push(b);
    let d = fork2 >= 0 ? depth[fork2] + 1 : 0;
    for (let current = start; current >= 0 && depth[current] < 0; d++) {
      depth[current] = d;
      branch.nodes.push(nodes[current]);
      branch.members.push(current);
      for (let k = kidStart[current + 1] - 1; k > kidStart[current]; k--) starts.push(kids[k], b, current);
      current = kidCount[current] ? kids[kidStart[current]] : -1;
    }
    maxDepth = Math.max(maxDepth, d - 1);
  };
  while (starts.length) {
    const fork2 = (
      /** @type {number} */
      starts.pop()
    );
    const parentBranch = (
      /** @type {number} */
      starts.pop()
    );
    walk(
      /** @type {number} */
      starts.pop(),
      parentBranch,
      fork2
    );
  }
  for (let i = 0; i < n; i++) if (!skip[i] && depth[i] < 0) walk(i, -1, -1);
  const forkDepth = (b) => branches[b].fork >= 0 ? depth[branches[b].fork] : -1;
  const rowOfBranch = new Int32Array(branches.length);
  const stack = [];
  for (let b = branches.length - 1; b >= 0; b--) if (branches[b].parent < 0) stack.push(b);
  let rowCount = 0;
  while (stack.length) {
    const b = (
      /** @type {number} */
      stack.pop()
    );
    rowOfBranch[b] = rowCount++;
    const order = branches[b].kids.slice();
    order.sort(
      (x, y) => forkDepth(y) - forkDepth(x) || older(branches[y].members[0], branches[x].members[0])
    );
    for (let k = order.length - 1; k >= 0; k--) stack.push(order[k]);
  }
  const shown = new Uint8Array(maxDepth + 1);
  const showAround = (d) => {
    for (let k = Math.max(0, d - CONTEXT); k <= Math.min(maxDepth, d + CONTEXT); k++) shown[k] = 1;
  };
  let latest = -1;
  for (let i = 0; i < n; i++) if (!skip[i] && nodes[i].is_latest) latest = i;
  if (latest < 0) {
    for (let i = 0; i < n; i++) if (!skip[i] && (latest < 0 || nodes[i].id > nodes[latest].id)) latest = i;
  }
  if (options.collapse === false) shown.fill(1);
  else {
    for (let i = 0; i < n; i++) {
      if (skip[i]) continue;
      const node = nodes[i];
      if (kidCount[i] !== 1 || parentOf[i] < 0 || node.errors > 0 || node.interrupts > 0 || node.source !== "loop" || node.graph_changed || i === latest) {
        showAround(depth[i]);
      }
    }
    for (const branch of branches) showAround(depth[branch.members[0]]);
    for (const id of options.reveal || []) {
      const i = index.get(id);
      if (i !== void 0) showAround(depth[i]);
    }
    for (const [from, to] of options.expanded || []) {
      for (let d = Math.max(0, from); d <= Math.min(maxDepth, to); d++) shown[d] = 1;
    }
  }
  const slotOfDepth = new Int32Array(maxDepth + 1);
  const gaps = [];
  const gapOfDepth = new Int32Array(maxDepth + 1).fill(-1);
  let slotCount = 0;
  for (let d = 0; d <= maxDepth; ) {
    let end = d;
    if (!shown[d]) while (end + 1 <= maxDepth && !shown[end + 1]) end++;
    if (!shown[d] && end - d + 1 >= MIN_RUN) {
      gaps.push({ from: d, to: end, slot: slotCount });
      for (let k = d; k <= end; k++) {
        slotOfDepth[k] = slotCount;
        gapOfDepth[k] = gaps.length - 1;
      }
      slotCount++;
      d = end + 1;
    } else {
      slotOfDepth[d] = slotCount++;
      d++;
    }
  }
  const items = [];
  const slots = Array.from({ length: slotCount }, () => []);
  const pos = /* @__PURE__ */ new Map();
  const itemAtNode = new Array(n);
  const rows = new Array(rowCount);
  const rowNodes = new Array(rowCount);
  const edges = [];
  for (let b = 0; b < branches.length; b++) {
    const r = rowOfBranch[b];
    const y = pad + r * rowPitch;
    const rowItems = [];
    let run = null;
    for (const i of branches[b].members) {
      const node = nodes[i];
      const gap = gapOfDepth[depth[i]];
      if (gap >= 0 && run && run.gap === gap) {
        run.count++;
        run.last = node;
        itemAtNode[i] = run;
        continue;
      }
      const slot = slotOfDepth[depth[i]];
      const x = pad + slot * col;
      const item = gap >= 0 ? {
        kind: "run",
        id: `run:${r}:${gaps[gap].from}`,
        node,
        last: node,
        count: 1,
        gap,
        slot,
        row: r,
        x,
        y
      } : { kind: "node", id: node.id, node, last: node, count: 1, gap: -1, slot, row: r, x, y };
      run = gap >= 0 ? item : null;
      rowItems.push(item);
      itemAtNode[i] = item;
    }
    for (const item of rowItems) {
      if (item.kind === "run" && item.count === 1) {
        item.kind = "node";
        item.id = item.node.id;
      }
      if (item.kind === "node") pos.set(item.node.id, { x: item.x, y: item.y });
      items.push(item);
      slots[item.slot].push(item);
    }
    rows[r] = rowItems;
    rowNodes[r] = branches[b].nodes;
    if (rowItems.length > 1) edges.push(`M${rowItems[0].x} ${y}H${rowItems[rowItems.length - 1].x}`);
  }
  const forks = [];
  for (const branch of branches) {
    if (branch.fork >= 0) forks.push(forkCurve(itemAtNode[branch.fork], itemAtNode[branch.members[0]]));
  }
  const mainMembers = branches.length ? branches[0].members : [];
  const main = mainMembers.length ? mainMembers[mainMembers.length - 1] : -1;
  const path = /* @__PURE__ */ new Set();
  const pathEdges = [];
  for (let i = main; i >= 0 && !path.has(nodes[i].id); i = parentOf[i]) {
    path.add(nodes[i].id);
    const p = parentOf[i];
    if (p < 0) break;
    const from = itemAtNode[p];
    const to = itemAtNode[i];
    if (from === to) continue;
    pathEdges.push(from.y === to.y ? `M${from.x} ${from.y}H${to.x}` : forkCurve(from, to));
  }
  const at = (id) => index.get(id);
  return {
    byId: {
      get: (id) => index.has(id) ? nodes[
        /** @type {number} */
        at(id)
      ] : void 0,
      has: (id) => index.has(id),
      size: index.size,
      values: () => nodes.filter((_, i) => !skip[i]).values()
    },
    children: {
      get: (id) => {
        const i = at(id);
        if (i === void 0 || !kidCount[i]) return void 0;
        return Array.from(kids.subarray(kidStart[i], kidStart[i + 1]), (k) => nodes[k]);
      }
    },
    depthOf: { get: (id) => index.has(id) ? depth[
      /** @type {number} */
      at(id)
    ] : void 0 },
    itemOf: {
      get: (id) => index.has(id) ? itemAtNode[
        /** @type {number} */
        at(id)
      ] : void 0,
      size: index.size
    },
    pos,
    items,
    slots,
    rows,
    rowNodes,
    gaps,
    path,
    latest: latest >= 0 ? nodes[latest].id : "",
    main: main >= 0 ? nodes[main].id : "",
    edgePath: edges.join(""),
    forkPath: forks.join(""),
    pathPath: pathEdges.join(""),
    rowCount,
    width: pad * 2 + Math.max(slotCount - 1, 0) * col,
    height: pad * 2 + Math.max(rowCount - 1, 0) * rowPitch,
    geometry
  };
}
function forkCurve(from, to) {
  const bend = (to.x - from.x) / 2;
  return `M${from.x} ${from.y}C${from.x + bend} ${from.y} ${to.x - bend} ${to.y} ${to.x} ${to.y}`;
}
function itemsInArea(layout, area) {
  const { col, pad } = layout.geometry;
  const first = Math.max(0, Math.floor((area.left - pad) / col) - 1);
  const last = Math.min(layout.slots.length - 1, Math.ceil((area.right - pad) / col) + 1);
  const out = [];
  for (let slot = first; slot <= last; slot++) {
    for (const item of layout.slots[slot]) {
      if (item.y >= area.top - pad && item.y <= area.bottom + pad) out.push(item);
    }
  }
  return out;
}
function itemAt(layout, x, y, reach) {
  const { col, row, pad, radius } = layout.geometry;
  const within = Math.max(reach || 0, radius + 8);
  const first = Math.max(0, Math.floor((x - within - pad) / col));
  const last = Math.min(layout.slots.length - 1, Math.ceil((x + within - pad) / col));
  const top = Math.floor((y - within - pad) / row);
  const bottom = Math.ceil((y + within - pad) / row);
  let best = null;
  let distance = Infinity;
  for (let slot = first; slot <= last; slot++) {
    for (const item of layout.slots[slot]) {
      if (item.row < top || item.row > bottom) continue;
      const d = Math.hypot(item.x - x, item.y - y);
      if (d <= within && d < distance) {
        best = item;
        distance = d;
      }
    }
  }
  return best;
}
function placeOf(layout, id) {
  const item = layout.itemOf.get(id);
  return item ? { x: item.x, y: item.y } : void 0;
}
function neighbour(layout, id, key) {
  const node = layout.byId.get(id);
  if (!node) return layout.latest;
  if (key === "ArrowLeft") return node.parent != null && layout.byId.has(node.parent) ? node.parent : "";
  const item = (
    /** @type {DagItem} */
    layout.itemOf.get(id)
  );
  if (key === "ArrowRight") {
    const kids = layout.children.get(node.id) || [];
    const sameRow = kids.find((kid) => layout.itemOf.get(kid.id)?.row === item.row);
    return (sameRow || kids[0] || { id: "" }).id;
  }
  if (key !== "ArrowUp" && key !== "ArrowDown") return "";
  const chain = layout.rowNodes[item.row + (key === "ArrowUp" ? -1 : 1)];
  if (!chain || !chain.length) return "";
  const depth = (
    /** @type {number} */
    layout.depthOf.get(id)
  );
  const first = (
    /** @type {number} */
    layout.depthOf.get(chain[0].id)
  );
  return chain[Math.max(0, Math.min(chain.length - 1, depth - first))].id;
}
function runRange(layout, run) {
  const gap = layout.gaps[run.gap];
  return [gap.from, gap.to];
}

// js/src/matches.js
function findCheckpoints(nodes, query, layout) {
  const q = query.trim();
  if (!q) return [];
  const step = /^(?:step\s*)?(-?\d+)$/i.exec(q);
  const word = q.toLowerCase().replace(/s$/, "");
  let test;
  if (step) test = (node) => node.step === Number(step[1]);
  else if (q === "*") test = () => true;
  else if (FILTERS[word]) test = FILTERS[word];
  else if (word === "input" || word === "loop") test = (node) => node.source === word;
  else test = (node) => (node.writers || []).includes(q) || (node.next || []).includes(q);
  const found = nodes.filter(test);
  if (layout) {
    const depth = (node) => layout.depthOf.get(node.id) || 0;
    const row = (node) => layout.itemOf.get(node.id)?.row || 0;
    found.sort((a, b) => depth(a) - depth(b) || row(a) - row(b));
  } else found.sort((a, b) => a.depth - b.depth || a.lane - b.lane);
  return found.map((node) => node.id);
}
function matchCheckpoints(layout, filters, query) {
  const q = query.trim();
  if (!filters.size && !q) return null;
  const tests = [...filters].map((kind) => FILTERS[kind]).filter(Boolean);
  const nodes = [...layout.byId.values()];
  const kept = tests.length ? nodes.filter((node) => tests.some((test) => test(node))) : nodes;
  return findCheckpoints(kept, q || "*", layout);
}
function refreshMatches(view) {
  const layout = view.layout;
  if (!layout) return false;
  const query = (
    /** @type {HTMLInputElement} */
    view.parts.find.value || ""
  );
  const matches = matchCheckpoints(layout, view.nav.filters, query);
  const changed = !sameList(matches, view.nav.matches) || query !== view.nav.query || view.nav.matchLayout !== layout;
  view.nav.query = query;
  if (changed) {
    view.nav.matches = matches;
    view.nav.matchSet = matches ? new Set(matches) : null;
    view.nav.matchRuns = /* @__PURE__ */ new Set();
    for (const id of matches || []) {
      const item = layout.itemOf.get(id);
      if (item && item.kind === "run") view.nav.matchRuns.add(item.id);
    }
  }
  const dag = readDag(view.model);
  const counted = view.nav.countedDag === dag;
  view.nav.countedDag = dag;
  view.nav.matchLayout = layout;
  for (const button of view.parts.nav.querySelectorAll(".dd-filter")) {
    const kind = button.getAttribute("data-filter") || "";
    button.setAttribute("aria-pressed", view.nav.filters.has(kind) ? "true" : "false");
    const label = button.querySelector(".dd-filter-count");
    if (counted || !label) continue;
    const test = FILTERS[kind];
    let count = 0;
    for (const node of layout.byId.values()) if (test(node)) count++;
    label.textContent = ` ${count}`;
  }
  countLine(view);
  return changed;
}
function sameList(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
function countLine(view) {
  const matches = view.nav.matches;
  const line = view.parts.findCount;
  if (!matches) line.textContent = "";
  else if (!matches.length) line.textContent = "no checkpoint";
  else {
    const at = matches.indexOf(view.selected);
    line.textContent = at >= 0 ? `${at + 1} of ${matches.length}` : `${matches.length} found`;
  }
}

// js/src/overview.js
function visibleArea(view) {
  const box = view.parts.dagScroll;
  const zoom = view.nav.zoom;
  const width = (box.clientWidth || 1600) / zoom;
  const height = (box.clientHeight || 800) / zoom;
  const left = box.scrollLeft / zoom;
  const top = box.scrollTop / zoom;
  return { left, top, right: left + width, bottom: top + height };
}
function setZoomValue(view, zoom) {
  const clamped = Math.min(ZOOM.max, Math.max(minZoom(view), zoom));
  view.nav.zoom = Number.isFinite(clamped) ? clamped : 1;
  view.parts.zoomLabel.textContent = `${Math.round(view.nav.zoom * 100)}%`;
}
function minZoom(view) {
  const layout = view.layout;
  const box = view.parts.dagScroll;
  if (!layout || !box.clientWidth) return ZOOM.min;
  return Math.min(
    1,
    Math.max(ZOOM.min, Math.min(box.clientWidth / layout.width, box.clientHeight / layout.height))
  );
}
var OVERVIEW_HEIGHT = 44;
function drawOverview(view) {
  const svg = (
    /** @type {SVGSVGElement | undefined} */
    /** @type {unknown} */
    view.parts.overview
  );
  const layout = view.layout;
  if (!svg || !layout) return;
  const s = svgHyperscript(view.doc);
  const width = svg.clientWidth || 1e3;
  const height = OVERVIEW_HEIGHT;
  view.nav.overviewWidth = width;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const { pad } = layout.geometry;
  const sx = (width - 8) / Math.max(1, layout.width - 2 * pad);
  const sy = (height - 8) / Math.max(1, layout.height - 2 * pad);
  const px = (x) => Math.round((4 + (x - pad) * sx) * 10) / 10;
  const py = (y) => Math.round((4 + (y - pad) * sy) * 10) / 10;
  const lines = [];
  for (const row of layout.rows) {
    if (!row.length) continue;
    const first = row[0];
    const parent = first.node.parent != null ? layout.itemOf.get(first.node.parent) : void 0;
    const start = parent && parent.row !== first.row ? parent : first;
    lines.push(`M${px(start.x)} ${py(start.y)}L${px(first.x)} ${py(first.y)}H${px(row[row.length - 1].x)}`);
  }
  const ticks = { error: /* @__PURE__ */ new Set(), interrupt: /* @__PURE__ */ new Set(), match: /* @__PURE__ */ new Set() };
  const tick = (item) => `M${Math.round(px(item.x))} ${Math.round(py(item.y))}h0`;
  for (const item of layout.items) {
    if (item.kind !== "node") continue;
    if (item.node.errors > 0) ticks.error.add(tick(item));
    else if (item.node.interrupts > 0) ticks.interrupt.add(tick(item));
  }
  for (const id of view.nav.matches || []) {
    const item = layout.itemOf.get(id);
    if (item) ticks.match.add(tick(item));
  }
  const path = [];
  let previous = null;
  for (const id of layout.path) {
    const item = layout.itemOf.get(id);
    if (item && previous && item !== previous)
      path.push(`M${px(previous.x)} ${py(previous.y)}L${px(item.x)} ${py(item.y)}`);
    previous = item;
  }
  const latest = layout.itemOf.get(layout.latest);
  const kept = svg.querySelector(".dd-overview-view");
  const rect = kept || s("rect", { class: "dd-overview-view" });
  svg.replaceChildren(
    s("path", { class: "dd-overview-lines", d: lines.join("") }),
    s("path", { class: "dd-overview-path", d: path.join("") }),
    s("path", { class: "dd-overview-tick dd-overview-error", d: [...ticks.error].join("") }),
    s("path", { class: "dd-overview-tick dd-overview-interrupt", d: [...ticks.interrupt].join("") }),
    s("path", { class: "dd-overview-tick dd-overview-match", d: [...ticks.match].join("") }),
    s("path", { class: "dd-overview-tick dd-overview-latest", d: latest ? tick(latest) : "" }),
    rect
  );
  svg.classList.toggle("dd-overview-empty", layout.items.length === 0);
  if (!kept) placeViewport(view);
}
function placeViewport(view, visible) {
  const svg = view.parts.overview;
  const rect = svg && svg.querySelector(".dd-overview-view");
  const layout = view.layout;
  if (!rect || !layout) return;
  const area = visible || visibleArea(view);
  const { pad } = layout.geometry;
  const sx = (view.nav.overviewWidth - 8) / Math.max(1, layout.width - 2 * pad);
  const sy = (OVERVIEW_HEIGHT - 8) / Math.max(1, layout.height - 2 * pad);
  const left = Math.max(0, 4 + (area.left - pad) * sx);
  const top = Math.max(0, 4 + (area.top - pad) * sy);
  const right = Math.min(view.nav.overviewWidth, 4 + (area.right - pad) * sx);
  const bottom = Math.min(OVERVIEW_HEIGHT, 4 + (area.bottom - pad) * sy);
  rect.setAttribute("x", left.toFixed(1));
  rect.setAttribute("y", top.toFixed(1));
  rect.setAttribute("width", Math.max(2, right - left).toFixed(1));
  rect.setAttribute("height", Math.max(2, bottom - top).toFixed(1));
}

// js/src/status.js
function drawStatus(view) {
  const { parts, model } = view;
  const dag = readDag(model);
  const count = dag && dag.nodes ? dag.nodes.length : 0;
  const lanes = dag && dag.lanes ? dag.lanes : 0;
  const thread = model.get("_thread_id") || dag && dag.thread_id || "?";
  parts.thread.textContent = `thread ${shortName(thread)} · ${plural(count, "checkpoint")} · ${plural(lanes, "branch")}`;
  parts.thread.setAttribute("title", `thread ${displayName(thread)}`);
  const running = Boolean(model.get("_running"));
  parts.running.hidden = !running;
  parts.stop.hidden = !running || isReadonly(view);
  parts.refresh.hidden = isReadonly(view);
  parts.threads.hidden = isReadonly(view);
  parts.newRun.hidden = isReadonly(view);
  parts.status.textContent = model.get("_status") || "";
  const messages = view.kernelGone ? [view.kernelGone] : [model.get("_error"), view.requestError].filter(Boolean);
  parts.error.textContent = messages.join("\n");
  parts.error.hidden = !messages.length;
}
function drawTopology(view, topology) {
  const h = hyperscript(view.doc);
  const box = view.parts.topology;
  if (!topology || !topology.nodes) {
    box.replaceChildren(h("span", { class: "dd-empty" }, "no topology"));
    return;
  }
  const drawn = topology.svg ? importSvg(view.doc, topology.svg) : null;
  const svg = drawn || topologyDrawing(view.doc, topology, view.uid);
  const picture = h(
    "div",
    { class: "dd-topology-picture", tabindex: "0", "data-lm-suppress-shortcuts": "" },
    svg
  );
  const zoomBar = h(
    "div",
    { class: "dd-topology-zoom" },
    ...[
      ["out", "−", "zoom out"],
      ["fit", "Fit", "fit the whole graph"],
      ["in", "+", "zoom in"]
    ].map(
      ([what, label, title]) => h("button", { class: "dd-button dd-small", type: "button", "data-topo-zoom": what, title }, label)
    ),
    h("span", { class: "dd-muted dd-topology-hint" }, "drag to pan, Ctrl + wheel to zoom, Fit to see it all")
  );
  mountPanZoom(
    view,
    picture,
    zoomBar,
    /** @type {SVGSVGElement} */
    svg
  );
  const ran = topology.nodes.filter((node) => node.count || node.reruns);
  const counts = table(
    h,
    "dd-count-table",
    null,
    ran.map(
      (node) => h(
        "tr",
        { class: node.reruns > 0 ? "dd-rerun" : "", "data-node": node.id },
        nameInto(cell(h, ""), node.id),
        cell(h, `×${node.count}`, "dd-num"),
        cell(h, node.reruns > 0 ? plural(node.reruns, "re-execution") : "", "dd-muted")
      )
    )
  );
  box.replaceChildren(zoomBar, picture, counts, isReadonly(view) ? "" : drawBreakpoints(view, topology));
  markTopology(view);
}
var topologyZoom = (
  /** @type {WeakMap<object, number | null>} */
  /* @__PURE__ */ new WeakMap()
);
var topologyScroll = (
  /** @type {WeakMap<object, { left: number, top: number }>} */
  /* @__PURE__ */ new WeakMap()
);
var READABLE_ZOOM = 0.8;
function mountPanZoom(view, picture, bar, svg) {
  const box = svg.viewBox && svg.viewBox.baseVal;
  const natural = {
    w: box && box.width || Number.parseFloat(svg.getAttribute("width") || "") || 300,
    h: box && box.height || Number.parseFloat(svg.getAttribute("height") || "") || 200
  };
  if (!svg.getAttribute("viewBox")) svg.setAttribute("viewBox", `0 0 ${natural.w} ${natural.h}`);
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  const fitted = () => Math.min((picture.clientWidth || natural.w) / natural.w, (picture.clientHeight || natural.h) / natural.h);
  const apply = (zoom, at) => {
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
  const step = (factor, at = centre()) => {
    const now = topologyZoom.get(view) ?? fitted();
    apply(Math.min(4, Math.max(0.1, now * factor)), at);
  };
  const first = !topologyZoom.has(view);
  apply(topologyZoom.get(view) ?? null, { x: 0, y: 0 });
  if (first) {
    later(
      view,
      () => {
        if (!picture.isConnected || !picture.clientWidth || topologyZoom.get(view) != null) return;
        const whole = fitted();
        const across = Math.min(1, picture.clientWidth / natural.w);
        const zoom = Math.max(whole, Math.min(across, READABLE_ZOOM));
        if (zoom - whole < 0.01) return;
        apply(zoom, { x: 0, y: 0 });
        picture.scrollLeft = Math.max(0, (picture.scrollWidth - picture.clientWidth) / 2);
        picture.scrollTop = 0;
      },
      0
    );
  }
  const kept = topologyScroll.get(view);
  if (kept && topologyZoom.get(view) != null) {
    later(
      view,
      () => {
        picture.scrollLeft = kept.left;
        picture.scrollTop = kept.top;
      },
      0
    );
  }
  picture.addEventListener(
    "scroll",
    () => topologyScroll.set(view, { left: picture.scrollLeft, top: picture.scrollTop })
  );
  bar.addEventListener("click", (event) => {
    const button = (
      /** @type {Element} */
      event.target.closest("[data-topo-zoom]")
    );
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
    { passive: false }
  );
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
function markTopology(view) {
  const picture = view.parts.topology.querySelector(".dd-topology-picture");
  if (!picture) return;
  const latest = view.layout ? view.layout.byId.get(view.layout.latest) : void 0;
  const running = view.model.get("_running") && latest ? latest.next || [] : [];
  const paused = pausedAt(view);
  let first = null;
  for (const el of picture.querySelectorAll("[data-node]")) {
    const node = el.getAttribute("data-node") || "";
    el.classList.toggle("dd-running", running.includes(node));
    el.classList.toggle("dd-paused", Boolean(paused && paused.nodes.includes(node)));
    if (!first && running.includes(node)) first = el;
  }
  const key = running.join("\0");
  if (first && runningShown.get(view) !== key) showInPicture(
    /** @type {HTMLElement} */
    picture,
    first
  );
  runningShown.set(view, key);
  const label = view.parts.topology.querySelector(".dd-topology-hint");
  if (label)
    label.textContent = running.length ? `running: ${running.map((node) => shortName(node)).join(", ")}` : paused ? `paused ${paused.when} ${paused.nodes.map((node) => shortName(node)).join(", ")}` : "drag to pan, Ctrl + wheel to zoom, Fit to see it all";
}
var runningShown = (
  /** @type {WeakMap<object, string>} */
  /* @__PURE__ */ new WeakMap()
);
function showInPicture(picture, el) {
  const box = picture.getBoundingClientRect();
  const at = el.getBoundingClientRect();
  if (!box.width || at.left >= box.left && at.right <= box.right && at.top >= box.top && at.bottom <= box.bottom)
    return;
  picture.scrollLeft += at.left + at.width / 2 - (box.left + box.width / 2);
  picture.scrollTop += at.top + at.height / 2 - (box.top + box.height / 2);
}
function pausedAt(view) {
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
function drawBreakpoints(view, topology) {
  const h = hyperscript(view.doc);
  const set = view.model.get("_breakpoints") || { before: [], after: [] };
  const nodes = topology.nodes.map((node) => node.id).filter((id) => id !== START && id !== END);
  const toggle = (node, when) => {
    const input = h("input", {
      type: "checkbox",
      "data-node": node,
      "data-when": when,
      "aria-label": `pause ${when} ${node}`
    });
    input.checked = (set[when] || []).includes(node);
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
      nodes.map(
        (node) => h(
          "tr",
          { "data-node": node },
          nameInto(cell(h, ""), node),
          h("td", {}, toggle(node, "before"), toggle(node, "after"))
        )
      )
    )
  );
}
function sendBreakpoints(view) {
  const chosen = { before: [], after: [] };
  for (const box of view.parts.topology.querySelectorAll(".dd-breakpoints input[data-when]")) {
    const input = (
      /** @type {HTMLInputElement} */
      box
    );
    const when = (
      /** @type {"before" | "after"} */
      input.getAttribute("data-when")
    );
    if (input.checked) chosen[when].push(input.getAttribute("data-node") || "");
  }
  view.requests.request("breakpoints", chosen).then(
    () => clearRequestError(view),
    (error) => showRequestError(view, error)
  );
}
function topologyDrawing(doc, topology, uid = "dd") {
  const s = svgHyperscript(doc);
  const size = new Map(
    topology.nodes.map((node) => [node.id, { w: Math.max(48, shortName(node.id).length * 7 + 30), h: 26 }])
  );
  const boxOf = (id) => size.get(id) || { w: 48, h: 26 };
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
      shortName(node.id) === node.id ? "" : s("title", {}, displayName(node.id)),
      // cut or escaped
      s("rect", { x: -w / 2, y: -h / 2, width: w, height: h, rx: 6 }),
      s("text", { dy: "0.35em" }, label)
    );
  });
  const width = Math.max(topology.width || 0, 1);
  const height = Math.max(topology.height || 0, 1);
  const arrow = s(
    "marker",
    { id: marker, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
    s("path", { d: "M0 0L10 5L0 10z" })
  );
  return (
    /** @type {SVGSVGElement} */
    s(
      "svg",
      { class: "dd-topology-svg", viewBox: `0 0 ${width} ${height}`, width, height },
      s("defs", {}, arrow),
      ...edges,
      ...nodes
    )
  );
}
var SVG_ELEMENTS = /* @__PURE__ */ new Set([
  "svg",
  "g",
  "polygon",
  "polyline",
  "ellipse",
  "circle",
  "rect",
  "line",
  "path",
  "text"
]);
var SVG_ATTRIBUTES = new Set(
  "width height viewBox preserveAspectRatio transform class fill fill-opacity stroke stroke-width stroke-opacity stroke-dasharray points d cx cy r rx ry x y x1 y1 x2 y2 text-anchor font-family font-size font-weight font-style data-node".split(" ")
);
var UNSAFE_VALUE = /[:<>\\]|url\(|expression\(/i;
function importSvg(doc, text) {
  const Parser = doc.defaultView && doc.defaultView.DOMParser;
  if (!Parser) return null;
  const parsed = new Parser().parseFromString(text, "image/svg+xml").documentElement;
  if (!parsed || parsed.namespaceURI !== SVG_NS || parsed.localName !== "svg") return null;
  if (parsed.getElementsByTagName("parsererror").length) return null;
  return (
    /** @type {SVGSVGElement | null} */
    copySvg(doc, parsed)
  );
}
function copySvg(doc, source) {
  if (source.namespaceURI !== SVG_NS || !SVG_ELEMENTS.has(source.localName)) return null;
  const copy = (
    /** @type {SVGElement} */
    doc.createElementNS(SVG_NS, source.localName)
  );
  for (const attr of source.attributes) {
    if (attr.namespaceURI || !SVG_ATTRIBUTES.has(attr.name)) continue;
    if (attr.name !== "data-node" && UNSAFE_VALUE.test(attr.value.replace(/\s+/g, ""))) continue;
    copy.setAttribute(attr.name, attr.value);
  }
  for (const child of source.childNodes) {
    if (child.nodeType === 3 && source.localName === "text")
      copy.append(doc.createTextNode(child.nodeValue || ""));
    else if (child.nodeType === 1) {
      const inner = copySvg(
        doc,
        /** @type {Element} */
        child
      );
      if (inner) copy.append(inner);
    }
  }
  return copy;
}
function clipToBox(x0, y0, x, y, box) {
  const dx = x0 - x;
  const dy = y0 - y;
  if (!dx && !dy) return [x, y];
  const scale = 1 / Math.max(Math.abs(dx) / (box.w / 2), Math.abs(dy) / (box.h / 2));
  return [round1(x + dx * Math.min(scale, 1)), round1(y + dy * Math.min(scale, 1))];
}
function drawCode(view, entries) {
  const h = hyperscript(view.doc);
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
        "Each fork, rerun and resume shows its Python here, to replay a session as code."
      )
    );
    return;
  }
  view.parts.code.replaceChildren(
    ...entries.map(
      (entry, index) => h(
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
              "data-index": String(index)
            },
            "Copy"
          )
        ),
        h("pre", { class: "dd-code-text" }, entry.code)
      )
    )
  );
}
function copyCode(view, button) {
  const entries = view.model.get("_code") || [];
  const entry = entries[Number(button.getAttribute("data-index"))];
  if (!entry) return;
  const done = (label) => {
    button.textContent = label;
    later(
      view,
      () => {
        button.textContent = "Copy";
      },
      1500
    );
  };
  const clipboard = globalThis.navigator && globalThis.navigator.clipboard;
  if (clipboard && typeof clipboard.writeText === "function") {
    clipboard.writeText(entry.code).then(
      () => done("Copied"),
      () => selectCode(view, button, done)
    );
  } else {
    selectCode(view, button, done);
  }
}
function selectCode(view, button, done) {
  const pre = button.closest(".dd-code-entry")?.querySelector("pre");
  const selection = view.doc.getSelection && view.doc.getSelection();
  if (pre && selection) {
    selection.selectAllChildren(pre);
    done("Selected: press Ctrl+C");
  }
}
function showRequestError(view, error) {
  view.requestError = error.message;
  drawStatus(view);
}
function clearRequestError(view) {
  if (!view.requestError) return;
  view.requestError = "";
  drawStatus(view);
}

// js/src/dag.js
function drawDag(view, anchor) {
  const dag = readDag(view.model);
  const nodes = dag.nodes || [];
  const box = view.parts.dagScroll;
  const thread = `${dag.thread_id || ""}\0${dag.checkpoint_ns || ""}`;
  if (view.nav.thread !== thread) {
    view.nav.thread = thread;
    view.nav.opened = false;
    view.nav.revealed.clear();
    view.nav.expanded = [];
  }
  const zoom = view.nav.zoom;
  const before = anchor && view.layout ? placeOf(view.layout, anchor) : void 0;
  const offset = before ? { x: before.x * zoom - box.scrollLeft, y: before.y * zoom - box.scrollTop } : null;
  const kept = { left: box.scrollLeft, top: box.scrollTop };
  const layout = layoutDag(dag, {
    collapse: view.nav.collapse,
    reveal: view.selected ? [...view.nav.revealed, view.selected] : view.nav.revealed,
    expanded: view.nav.expanded
  });
  const { radius } = layout.geometry;
  const svg = (
    /** @type {SVGSVGElement} */
    view.doc.createElementNS(SVG_NS, "svg")
  );
  svg.setAttribute("class", "dd-dag");
  svg.setAttribute("viewBox", `0 0 ${layout.width} ${layout.height}`);
  svg.setAttribute("preserveAspectRatio", "none");
  const s = svgHyperscript(view.doc);
  svg.append(
    s("path", { class: "dd-edges", d: layout.edgePath }),
    s("path", { class: "dd-edges dd-fork-edges", d: layout.forkPath }),
    s("path", { class: "dd-path-edges", d: layout.pathPath }),
    s("g", { class: "dd-marks" }),
    s("circle", { class: "dd-ring dd-ring-diff", r: radius + 9, visibility: "hidden" }),
    s("circle", { class: "dd-ring dd-ring-selected", r: radius + 7, visibility: "hidden" }),
    s(
      "g",
      { class: "dd-paused-marker", visibility: "hidden" },
      s("rect", { class: "dd-paused-tag", x: radius + 4, y: -radius - 22, width: 10, height: 18, rx: 4 }),
      s("path", {
        class: "dd-paused-icon",
        d: `M${radius + 10} ${-radius - 18}v10h3v-10zM${radius + 15} ${-radius - 18}v10h3v-10z`
      }),
      s("text", { x: radius + 22, y: -radius - 9 }, "")
    )
  );
  if (view.svg) view.svg.replaceWith(svg);
  else view.parts.dagCanvas.prepend(svg);
  view.svg = svg;
  view.layout = layout;
  view.drawnArea = null;
  hideTooltip(view);
  sizeCanvas(view);
  box.dataset.empty = nodes.length ? "false" : "true";
  if (!layout.byId.has(view.selected)) view.selected = "";
  if (!layout.byId.has(view.diffTarget)) view.diffTarget = "";
  drawStatus(view);
  markTopology(view);
  refreshMatches(view);
  const opening = !view.nav.opened && nodes.length > 0;
  if (opening) {
    view.nav.opened = true;
    openOnPath(view);
  } else if (anchor !== void 0) {
    const after = anchor ? placeOf(layout, anchor) : void 0;
    box.scrollLeft = after && offset ? Math.max(0, after.x * zoom - offset.x) : kept.left;
    box.scrollTop = after && offset ? Math.max(0, after.y * zoom - offset.y) : kept.top;
  } else {
    const focus = view.model.get("_running") ? layout.latest : view.selected;
    if (focus) scrollToCheckpoint(view, focus);
  }
  drawMarks(view);
  drawOverview(view);
  return opening && !view.selected ? layout.main : "";
}
function relayout(view, anchor = view.selected) {
  drawDag(view, anchor || "");
}
function sizeCanvas(view) {
  if (!view.svg || !view.layout) return;
  const empty = view.layout.items.length === 0;
  const width = Math.round(view.layout.width * view.nav.zoom);
  const height = empty ? 0 : Math.round(view.layout.height * view.nav.zoom);
  view.svg.setAttribute("width", String(width));
  view.svg.setAttribute("height", String(height));
  view.svg.classList.toggle("dd-zoom-far", view.nav.zoom < ZOOM.text);
  view.svg.style.setProperty("--dd-zoom", String(view.nav.zoom));
  view.parts.dagCanvas.style.width = `${width}px`;
  view.parts.dagCanvas.style.height = `${height}px`;
}
function openOnPath(view) {
  const layout = (
    /** @type {DagLayout} */
    view.layout
  );
  const box = view.parts.dagScroll;
  const at = placeOf(layout, layout.main);
  if (!at) return;
  if (!box.clientWidth) {
    view.pendingOpen = true;
    return;
  }
  view.pendingOpen = false;
  let top = at.y;
  let bottom = at.y;
  for (const id of layout.path) {
    const place = (
      /** @type {{x: number, y: number}} */
      placeOf(layout, id)
    );
    top = Math.min(top, place.y);
    bottom = Math.max(bottom, place.y);
  }
  const { col, row } = layout.geometry;
  const tall = bottom - top + row;
  setZoomValue(view, ZOOM.first);
  sizeCanvas(view);
  const zoom = view.nav.zoom;
  box.scrollLeft = Math.max(0, (at.x + 1.5 * col) * zoom - box.clientWidth);
  const fits = tall * zoom <= box.clientHeight;
  const middle = fits ? (top + bottom) / 2 : at.y;
  box.scrollTop = Math.max(0, middle * zoom - box.clientHeight / 2);
}
function drawMarks(view) {
  if (!view.svg || !view.layout) return;
  const visible = visibleArea(view);
  placeViewport(view, visible);
  if (view.drawnArea && contains(view.drawnArea, visible)) return;
  const width = (visible.right - visible.left) / 2;
  const height = (visible.bottom - visible.top) / 2;
  const area = {
    left: visible.left - width,
    right: visible.right + width,
    top: visible.top - height,
    bottom: visible.bottom + height
  };
  const layout = view.layout;
  const s = svgHyperscript(view.doc);
  let items = itemsInArea(layout, area);
  const dots = items.length > MARK_LIMIT || view.nav.zoom < ZOOM.dots;
  if (dots) {
    items = itemsInArea(layout, visible);
    area.left = visible.left;
    area.right = visible.right;
    area.top = visible.top;
    area.bottom = visible.bottom;
  }
  const group = (
    /** @type {Element} */
    view.svg.querySelector(".dd-marks")
  );
  const matches = view.nav.matchSet;
  if (dots) group.replaceChildren(...dotsDrawing(s, items, view));
  else {
    const { radius } = layout.geometry;
    const cache = view.marks.matches === matches ? view.marks.byItem : /* @__PURE__ */ new Map();
    const kept = /* @__PURE__ */ new Map();
    group.replaceChildren(
      ...items.map((item) => {
        let mark = cache.get(item);
        if (!mark) {
          mark = item.kind === "run" ? runDrawing(s, item, radius) : markDrawing(s, item.node, item, radius);
          if (matches && (item.kind === "run" ? view.nav.matchRuns.has(item.id) : matches.has(item.id)))
            mark.classList.add("dd-match");
          if (item.kind === "node" && layout.path.has(item.id)) mark.classList.add("dd-on-path");
        }
        kept.set(item, mark);
        return mark;
      })
    );
    view.marks = { byItem: kept, matches };
  }
  view.svg.classList.toggle("dd-dots", dots);
  view.svg.classList.toggle("dd-filtering", Boolean(matches));
  view.drawnArea = area;
  placeRings(view);
}
function dotsDrawing(s, items, view) {
  const kinds = { plain: [], run: [], interrupt: [], error: [], match: [] };
  const matches = view.nav.matchSet;
  for (const item of items) {
    const dot = `M${item.x} ${item.y}h0`;
    if (item.kind === "run") kinds.run.push(dot);
    else if (item.node.errors > 0) kinds.error.push(dot);
    else if (item.node.interrupts > 0) kinds.interrupt.push(dot);
    else kinds.plain.push(dot);
    if (matches && (item.kind === "run" ? view.nav.matchRuns.has(item.id) : matches.has(item.id)))
      kinds.match.push(dot);
  }
  return Object.entries(kinds).map(
    ([kind, parts]) => s("path", { class: `dd-dot dd-dot-${kind}`, d: parts.join("") })
  );
}
function contains(outer, inner) {
  return inner.left >= outer.left && inner.right <= outer.right && inner.top >= outer.top && inner.bottom <= outer.bottom;
}
function scheduleMarks(view) {
  if (view.frame) return;
  const win = view.doc.defaultView;
  const raf = win && typeof win.requestAnimationFrame === "function" ? (fn) => win.requestAnimationFrame(fn) : (fn) => setTimeout(fn, 16);
  const cancel = win && typeof win.cancelAnimationFrame === "function" ? (id2) => win.cancelAnimationFrame(id2) : (id2) => clearTimeout(id2);
  const id = raf(() => {
    view.frame = null;
    drawMarks(view);
  });
  view.frame = { cancel: () => cancel(id) };
}
function markDrawing(s, node, at, r) {
  const classes = ["dd-mark", `dd-src-${SOURCE_LETTER[node.source] ? node.source : "loop"}`];
  if (node.interrupts > 0) classes.push("dd-has-interrupt");
  if (node.errors > 0) classes.push("dd-has-error");
  if (node.findings) classes.push("dd-has-finding");
  if (node.is_head) classes.push("dd-head");
  if (node.is_latest) classes.push("dd-latest");
  const mark = s("g", {
    class: classes.join(" "),
    "data-id": node.id,
    transform: `translate(${at.x} ${at.y})`
  });
  if (node.is_head) mark.append(s("circle", { class: "dd-head-ring", r: r + 4 }));
  mark.append(
    shapeDrawing(s, node.source, r),
    s("text", { class: "dd-letter", dy: "0.35em" }, SOURCE_LETTER[node.source] || "?"),
    s("text", { class: "dd-step", y: -r - 11 }, String(node.step))
  );
  if (node.writers && node.writers.length) {
    mark.append(
      s("text", { class: "dd-writers", y: r + 19 }, truncate(displayName(node.writers.join(",")), 10))
    );
  }
  if (node.interrupts > 0) {
    mark.append(
      s(
        "g",
        { class: "dd-badge dd-badge-interrupt", transform: `translate(${r} ${-r})` },
        s("circle", { r: 6 }),
        s("text", { dy: "0.35em" }, String(node.interrupts))
      )
    );
  }
  if (node.errors > 0) {
    mark.append(
      s(
        "g",
        { class: "dd-badge dd-badge-error", transform: `translate(${-r} ${-r})` },
        s("circle", { r: 6 }),
        s("text", { dy: "0.35em" }, "!")
      )
    );
  }
  if (node.findings) {
    mark.append(
      s(
        "g",
        { class: "dd-badge dd-badge-finding", transform: `translate(${r} ${r})` },
        s("circle", { r: 6 }),
        s("text", { dy: "0.35em" }, "⚑"),
        s("title", {}, plural(node.findings, "finding"))
      )
    );
  }
  if (node.graph_changed) {
    mark.append(
      s(
        "text",
        { class: "dd-graph-changed", x: -r - 9, dy: "0.35em" },
        "Δ",
        s("title", {}, "graph version changed")
      )
    );
  }
  if (node.is_latest) mark.append(s("text", { class: "dd-latest-label", y: r + 31 }, "latest"));
  return mark;
}
function shapeDrawing(s, source, r) {
  if (source === "input")
    return s("rect", { class: "dd-shape", x: -r, y: -r, width: 2 * r, height: 2 * r, rx: 2 });
  if (source === "update")
    return s("polygon", { class: "dd-shape", points: `0 ${-r - 2} ${r + 2} 0 0 ${r + 2} ${-r - 2} 0` });
  if (source === "fork")
    return s("polygon", { class: "dd-shape", points: `0 ${-r - 2} ${r + 2} ${r} ${-r - 2} ${r}` });
  return s("circle", { class: "dd-shape", r });
}
function runDrawing(s, run, r) {
  const label = String(run.count);
  const half = Math.max(r + 4, 4 + label.length * 3.5);
  const steps = run.node.step === run.last.step ? `step ${run.node.step}` : `steps ${run.node.step}–${run.last.step}`;
  return s(
    "g",
    {
      class: "dd-run",
      "data-run": run.id,
      transform: `translate(${run.x} ${run.y})`,
      role: "button",
      "aria-label": `${run.count} checkpoints, ${steps}: expand`
    },
    s("rect", { class: "dd-run-shape", x: -half, y: -r + 1, width: 2 * half, height: 2 * r - 2, rx: r - 1 }),
    s("text", { class: "dd-run-count", dy: "0.35em" }, label),
    s("text", { class: "dd-step", y: -r - 11 }, steps.replace("steps ", "").replace("step ", "")),
    s("title", {}, `${plural(run.count, "checkpoint")} in a row, ${steps}: click to expand`)
  );
}
function placeRings(view) {
  if (!view.svg || !view.layout) return;
  const rings = [
    [view.svg.querySelector(".dd-ring-selected"), view.selected],
    [view.svg.querySelector(".dd-ring-diff"), view.diffTarget]
  ];
  for (const [ring, id] of rings) {
    if (!ring) continue;
    const at = id ? placeOf(view.layout, id) : void 0;
    ring.setAttribute("visibility", at ? "visible" : "hidden");
    if (at) ring.setAttribute("transform", `translate(${at.x} ${at.y})`);
  }
  placePausedMarker(view);
  for (const old of view.svg.querySelectorAll(".dd-mark[aria-current]")) old.removeAttribute("aria-current");
  const mark = view.selected ? markElement(view, view.selected) : null;
  if (mark) mark.setAttribute("aria-current", "true");
}
function markElement(view, id) {
  if (!view.svg) return null;
  for (const mark of view.svg.querySelectorAll(".dd-mark")) {
    if (mark.getAttribute("data-id") === id) return mark;
  }
  return null;
}
function reveal(view, id) {
  const item = view.layout && view.layout.itemOf.get(id);
  if (!item || item.kind !== "run") return;
  view.nav.revealed.add(id);
  relayout(view, "");
}
function scrollToCheckpoint(view, id) {
  if (!view.layout) return;
  reveal(view, id);
  const at = placeOf(view.layout, id);
  const box = view.parts.dagScroll;
  if (!at) return;
  if (!box.clientWidth) {
    view.pendingScroll = id;
    return;
  }
  view.pendingScroll = "";
  const zoom = view.nav.zoom;
  const x = at.x * zoom;
  const y = at.y * zoom;
  const margin = view.layout.geometry.col * Math.max(zoom, 0.5);
  if (x < box.scrollLeft + margin || x > box.scrollLeft + box.clientWidth - margin) {
    box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
  }
  if (y < box.scrollTop + margin / 2 || y > box.scrollTop + box.clientHeight - margin / 2) {
    box.scrollTop = Math.max(0, y - box.clientHeight / 2);
  }
  drawMarks(view);
}
function showTooltip(view, target) {
  const id = markIdOf(target);
  const layout = view.layout;
  const node = id && layout ? layout.byId.get(id) : void 0;
  if (!node || !layout) return hideTooltip(view);
  const at = (
    /** @type {{x: number, y: number}} */
    layout.pos.get(id)
  );
  const zoom = view.nav.zoom;
  const tip = view.parts.tooltip;
  const lines = [
    `step ${node.step} · ${node.source} · …${shortId(node.id)}`,
    `next: ${node.next && node.next.length ? node.next.join(", ") : "(end)"}`
  ];
  if (node.writers && node.writers.length) lines.push(`written by: ${node.writers.join(", ")}`);
  if (node.interrupts) lines.push(`${plural(node.interrupts, "pending interrupt")}`);
  if (node.errors) lines.push(`${plural(node.errors, "failed task")}`);
  if (node.findings) lines.push(`${plural(node.findings, "finding")}`);
  if (node.is_latest) lines.push("latest checkpoint of the thread");
  else if (node.is_head) lines.push("head of its branch");
  tip.textContent = lines.join("\n");
  tip.hidden = false;
  const box = view.parts.dagScroll;
  const { radius } = layout.geometry;
  const below = (at.y + radius) * zoom + 4;
  const fitsBelow = !box.clientHeight || below + tip.offsetHeight <= box.scrollTop + box.clientHeight;
  tip.style.left = `${(at.x + radius) * zoom + 8}px`;
  tip.style.top = `${fitsBelow ? below : Math.max(0, (at.y - radius) * zoom - 4 - tip.offsetHeight)}px`;
}
function hideTooltip(view) {
  view.parts.tooltip.hidden = true;
}
function markIdOf(target) {
  const el = (
    /** @type {Element | null} */
    target && /** @type {any} */
    target.closest ? target : null
  );
  const mark = el ? el.closest(".dd-mark") : null;
  return mark ? mark.getAttribute("data-id") || "" : "";
}
function showSelected(view, id, scroll = true) {
  if (view.selected === id) return;
  view.selected = id;
  placeRings(view);
  if (id && scroll) scrollToCheckpoint(view, id);
}
function placePausedMarker(view) {
  const marker = view.svg && view.svg.querySelector(".dd-paused-marker");
  if (!marker || !view.layout) return;
  const paused = pausedAt(view);
  const at = paused ? placeOf(view.layout, paused.id) : void 0;
  marker.setAttribute("visibility", paused && at ? "visible" : "hidden");
  if (!paused || !at) return;
  const text = `paused ${paused.when} ${paused.nodes.map((node) => shortName(node)).join(", ")}`;
  const label = (
    /** @type {SVGTextElement} */
    marker.querySelector("text")
  );
  label.textContent = text;
  const rect = (
    /** @type {SVGRectElement} */
    marker.querySelector("rect")
  );
  const measured = typeof label.getComputedTextLength === "function" ? label.getComputedTextLength() : 0;
  const width = Math.round((measured || text.length * 6.4) + 26);
  rect.setAttribute("width", String(width));
  const past = Math.max(0, at.x + Number(rect.getAttribute("x")) + width + 4 - view.layout.width);
  marker.setAttribute("transform", `translate(${at.x - past} ${at.y})`);
}

// js/src/json-tree.js
function drawJson(view, value, openDepth, depth = 0) {
  const h = hyperscript(view.doc);
  if (value === null || value === void 0) return h("span", { class: "dd-json dd-json-null" }, "null");
  if (typeof value === "string") return h("span", { class: "dd-json dd-json-string" }, JSON.stringify(value));
  if (typeof value === "number") return h("span", { class: "dd-json dd-json-number" }, String(value));
  if (typeof value === "boolean") return h("span", { class: "dd-json dd-json-boolean" }, String(value));
  const isArray = Array.isArray(value);
  const size = isArray ? value.length : Object.keys(value).length;
  if (!size) return h("span", { class: "dd-json" }, isArray ? "[]" : "{}");
  const tree = (
    /** @type {HTMLDetailsElement} */
    h(
      "details",
      { class: "dd-json dd-json-tree" },
      h("summary", {}, isArray ? `[${plural(size, "item")}]` : objectSummary(value))
    )
  );
  tree.dataset.depth = String(depth);
  tree.dataset.openDepth = String(openDepth);
  if (depth < openDepth) {
    tree.open = true;
    fillJson(view, tree, value);
  } else {
    view.lazyJson.set(tree, value);
  }
  return tree;
}
function fillJson(view, tree, value) {
  const h = hyperscript(view.doc);
  const entries = Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
  const depth = Number(tree.dataset.depth);
  const openDepth = Number(tree.dataset.openDepth);
  for (const [key, item] of entries.slice(0, JSON_ROW_LIMIT)) {
    tree.append(
      h(
        "div",
        { class: "dd-json-row" },
        h("span", { class: "dd-json-key" }, `${key}: `),
        drawJson(view, item, openDepth, depth + 1)
      )
    );
  }
  if (entries.length > JSON_ROW_LIMIT) {
    tree.append(h("div", { class: "dd-json-row dd-muted" }, `… ${entries.length - JSON_ROW_LIMIT} more`));
  }
}
function fillLazyJson(view, target) {
  const tree = (
    /** @type {HTMLDetailsElement} */
    target
  );
  if (!tree || !tree.open || !view.lazyJson.has(tree)) return;
  const value = view.lazyJson.get(tree);
  view.lazyJson.delete(tree);
  fillJson(view, tree, value);
}
function objectSummary(value) {
  const name = value[TYPE_KEY];
  if (typeof name !== "string") return `{${previewKeys(value)}}`;
  const fields = Object.fromEntries(Object.entries(value).filter(([key]) => key !== TYPE_KEY));
  return `${name} {${previewKeys(fields)}}`;
}
function previewKeys(value) {
  const keys = Object.keys(value);
  const shown = keys.slice(0, 3).join(", ");
  return keys.length > 3 ? `${shown}, … ${keys.length - 3} more` : shown;
}

// js/src/run-form.js
var HISTORY_MAX = 10;
var histories = /* @__PURE__ */ new WeakMap();
function runHistory(view) {
  let list = histories.get(view.model);
  if (!list) histories.set(view.model, list = []);
  return list;
}
function rememberInput(view, text) {
  const list = runHistory(view);
  const at = list.indexOf(text);
  if (at >= 0) list.splice(at, 1);
  list.unshift(text);
  list.length = Math.min(list.length, HISTORY_MAX);
}
function fieldText(field) {
  const value = field.default;
  if (field.kind === "string") return typeof value === "string" ? value : JSON.stringify(value);
  if (field.kind === "integer" || field.kind === "number" || field.kind === "boolean") return String(value);
  if (field.kind === "json" && value === "") return "";
  return JSON.stringify(value, null, 2);
}
function fieldValue(field, text) {
  if (field.kind === "string") return text;
  if (field.kind === "boolean") return text === "true";
  if (field.kind === "integer" || field.kind === "number") {
    const n = Number(text);
    if (text.trim() === "" || !Number.isFinite(n) || field.kind === "integer" && !Number.isInteger(n))
      return new Error(`'${field.key}' needs ${field.kind === "integer" ? "a whole number" : "a number"}`);
    return n;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    return new Error(`'${field.key}' is not valid JSON (${/** @type {Error} */
    error.message})`);
  }
}
function formInput(fields, entries) {
  const input = {};
  for (const field of fields) {
    const entry = entries.get(field.key);
    if (!entry || !entry.use) continue;
    const value = fieldValue(field, entry.text);
    if (value instanceof Error) return value;
    input[field.key] = value;
  }
  return input;
}
function initialEntries(fields) {
  return new Map(fields.map((f) => [f.key, { use: f.has_default, text: fieldText(f) }]));
}
function toggleRunForm(view) {
  const form = view.parts.runForm;
  if (!form.hidden) {
    form.hidden = true;
    return;
  }
  drawForm(view, [], "{}");
  form.hidden = false;
  view.requests.request("input_form").then(
    (answer) => {
      if (!form.hidden && answer && Array.isArray(answer.fields)) drawForm(view, answer.fields, null);
    },
    () => {
    }
    // the JSON box stays: a run can be started without the fields
  );
}
function drawForm(view, fields, jsonText) {
  const h = hyperscript(view.doc);
  const form = view.parts.runForm;
  const entries = initialEntries(fields);
  const rows = fields.map((field) => fieldRow(h, field, entries));
  const grid = h("div", { class: "dd-run-fields", role: "group", "aria-label": "the run's input" }, ...rows);
  const json = (
    /** @type {HTMLTextAreaElement} */
    h("textarea", {
      class: "dd-editor dd-run-input",
      spellcheck: "false",
      rows: "6",
      "aria-label": "the run's input as a JSON object"
    })
  );
  const jsonMode = jsonText !== null || fields.length === 0;
  json.value = jsonText !== null ? jsonText : "{}";
  json.hidden = !jsonMode;
  grid.hidden = jsonMode;
  const slot = h("span", { class: "dd-inline-error dd-run-error", role: "alert", hidden: true });
  const say = (message) => {
    slot.textContent = message;
    slot.hidden = !message;
  };
  const modeButton = h(
    "button",
    { class: "dd-button dd-small dd-run-mode", type: "button", hidden: fields.length === 0 },
    jsonMode ? "Fields" : "JSON"
  );
  modeButton.addEventListener("click", () => {
    if (grid.hidden) {
      let parsed;
      try {
        parsed = JSON.parse(json.value);
      } catch (error) {
        return say(`The input is not valid JSON (${/** @type {Error} */
        error.message})`);
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
        return say("The input is a JSON object of the state's keys");
      for (const field of fields) {
        const has = Object.prototype.hasOwnProperty.call(parsed, field.key);
        const text = has ? fieldText({ ...field, default: parsed[field.key] }) : fieldText(field);
        entries.set(field.key, { use: has, text });
      }
      rows.forEach((row, i) => syncRow(row, entries.get(fields[i].key)));
    } else {
      const input = formInput(fields, entries);
      if (input instanceof Error) return say(input.message);
      json.value = JSON.stringify(input, null, 2);
    }
    say("");
    grid.hidden = !grid.hidden;
    json.hidden = !json.hidden;
    modeButton.textContent = grid.hidden ? "Fields" : "JSON";
  });
  const history = runHistory(view);
  const picker = (
    /** @type {HTMLSelectElement} */
    h(
      "select",
      { class: "dd-run-history", "aria-label": "an input used before", hidden: history.length === 0 },
      h("option", { value: "" }, "Previous inputs…"),
      ...history.map((text, i) => h("option", { value: String(i) }, text.replace(/\s+/g, " ")))
    )
  );
  picker.addEventListener("change", () => {
    const text = history[Number(picker.value)];
    if (text === void 0 || picker.value === "") return;
    json.value = text;
    grid.hidden = true;
    json.hidden = false;
    modeButton.textContent = "Fields";
    picker.value = "";
  });
  const start = h("button", { class: "dd-button dd-primary", type: "button" }, "Start");
  start.addEventListener("click", () => {
    let text = json.value;
    if (!grid.hidden) {
      const input = formInput(fields, entries);
      if (input instanceof Error) return say(input.message);
      text = JSON.stringify(input);
    }
    view.requests.request("run", { text }).then(
      () => {
        say("");
        rememberInput(view, text);
        form.hidden = true;
      },
      (error) => say(String(error && error.message ? error.message : error))
    );
  });
  form.replaceChildren(
    h("div", { class: "dd-muted" }, "Input of a new run of this thread, from its latest checkpoint:"),
    h("div", { class: "dd-run-tools" }, modeButton, picker),
    grid,
    json,
    start,
    slot
  );
}
function fieldRow(h, field, entries) {
  const entry = entries.get(field.key) || { use: false, text: "" };
  const use = (
    /** @type {HTMLInputElement} */
    h("input", { type: "checkbox", class: "dd-run-use", "aria-label": `include ${field.key}` })
  );
  use.checked = entry.use;
  let control;
  if (field.kind === "boolean") {
    control = /** @type {HTMLSelectElement} */
    h("select", {}, h("option", { value: "false" }, "false"), h("option", { value: "true" }, "true"));
  } else if (field.kind === "string" || field.kind === "integer" || field.kind === "number") {
    control = /** @type {HTMLInputElement} */
    h("input", { type: field.kind === "string" ? "text" : "number", spellcheck: "false" });
  } else {
    control = /** @type {HTMLTextAreaElement} */
    h("textarea", { class: "dd-editor", spellcheck: "false", rows: "2" });
  }
  control.classList.add("dd-run-value");
  control.setAttribute("aria-label", `${field.key} (${field.type})`);
  control.value = entry.text;
  const onEdit = () => {
    const now = entries.get(field.key) || entry;
    entries.set(field.key, { use: true, text: control.value });
    if (!now.use) use.checked = true;
  };
  control.addEventListener("input", onEdit);
  control.addEventListener("change", onEdit);
  use.addEventListener("change", () => {
    const now = entries.get(field.key) || entry;
    entries.set(field.key, { use: use.checked, text: now.text });
  });
  return h(
    "label",
    { class: "dd-run-field", "data-key": field.key, title: `${field.key}: ${field.type}` },
    use,
    h("span", { class: "dd-run-key" }, field.key),
    h("span", { class: "dd-run-type dd-muted" }, field.type + (field.has_default ? " · default" : "")),
    control
  );
}
function syncRow(row, entry) {
  if (!entry) return;
  const use = (
    /** @type {HTMLInputElement | null} */
    row.querySelector(".dd-run-use")
  );
  const control = (
    /** @type {HTMLInputElement | null} */
    row.querySelector(".dd-run-value")
  );
  if (use) use.checked = entry.use;
  if (control) control.value = entry.text;
}

// js/src/value-pages.js
function showPages(view, channel, onError) {
  const detail = view.detail;
  if (!detail) return;
  const row = [...view.parts.detail.querySelectorAll(".dd-channel-row")].find(
    (el) => el.getAttribute("data-channel") === channel
  );
  if (!row) return;
  const h = hyperscript(view.doc);
  const pages = h("div", { class: "dd-whole-value dd-pages" });
  const more = (
    /** @type {HTMLButtonElement} */
    h("button", { class: "dd-button dd-small dd-show-more", type: "button", hidden: true }, "Show more")
  );
  const status = h("span", { class: "dd-muted dd-page-status" });
  let asking = false;
  const ask = (offset) => {
    if (asking) return;
    asking = true;
    view.requests.request("value", { checkpoint_id: detail.id, ...inNamespace(view), channel, page: offset }).then(
      (reply) => {
        asking = false;
        if (view.detail !== detail) return;
        if (reply.kind === "text") pages.append(h("pre", { class: "dd-json-text dd-page" }, reply.value));
        else pages.append(h("div", { class: "dd-page" }, drawJson(view, reply.value, 1)));
        const shown = reply.next === null ? reply.total : reply.next;
        const unit = reply.kind === "text" ? "characters" : reply.kind === "value" ? "" : "items";
        status.textContent = unit ? `${shown.toLocaleString("en")} of ${reply.total.toLocaleString("en")} ${unit}` : "";
        more.hidden = reply.next === null;
        more.onclick = () => ask(reply.next);
      },
      (error) => {
        asking = false;
        onError(error);
      }
    );
  };
  const tree = row.querySelector(".dd-json");
  const box = h("div", { class: "dd-paged" }, pages, h("div", { class: "dd-page-tools" }, more, status));
  if (tree) tree.replaceWith(box);
  else row.append(box);
  const note = row.querySelector(".dd-clipped");
  if (note) note.remove();
  ask(0);
}

// js/src/thread-list.js
var STATUS_KINDS = ["running", "paused", "failed", "done"];
function filterThreads(rows, search, kind) {
  const needle = search.trim().toLowerCase();
  return rows.filter(
    (row) => (!kind || row.kind === kind) && (!needle || row.thread_id.toLowerCase().includes(needle))
  );
}
function rowText(row) {
  const steps = row.step === null || row.step === void 0 ? "" : ` · step ${row.step}`;
  return `${shortName(row.thread_id)} · ${plural(row.checkpoints, "checkpoint")}${steps} · ${displayName(row.status)}`;
}
var states = /* @__PURE__ */ new WeakMap();
function stateOf(view) {
  let state = states.get(view);
  if (!state) states.set(view, state = { rows: [], active: "", asking: false });
  return state;
}
function mountThreadList(view) {
  const h = hyperscript(view.doc);
  const panel = view.parts.threadList;
  const search = h("input", {
    class: "dd-thread-search",
    type: "search",
    placeholder: "Search threads",
    spellcheck: "false",
    "aria-label": "search the threads by id"
  });
  const filter = h(
    "select",
    { class: "dd-thread-filter", "aria-label": "show threads of one status" },
    h("option", { value: "" }, "any status"),
    ...STATUS_KINDS.map((kind) => h("option", { value: kind }, kind))
  );
  const list = h("ul", {
    class: "dd-thread-options",
    role: "listbox",
    tabindex: "0",
    "aria-label": "the store's threads: arrows move, Enter shows"
  });
  const count = h("span", { class: "dd-muted dd-thread-count", "aria-live": "polite" });
  panel.replaceChildren(h("div", { class: "dd-thread-tools" }, search, filter, count), list);
  listen(view, search, "input", () => drawRows(view));
  listen(view, filter, "change", () => drawRows(view));
  const onKey = (event) => onListKey(
    view,
    /** @type {KeyboardEvent} */
    event
  );
  listen(view, search, "keydown", onKey);
  listen(view, list, "keydown", onKey);
  listen(view, list, "click", (event) => {
    const item = (
      /** @type {Element} */
      event.target.closest("[data-thread]")
    );
    if (item) choose(view, item.getAttribute("data-thread") || "");
  });
  watch(view, "change:_running", () => {
    if (!view.model.get("_running")) refreshIfOpen(view);
  });
  watch(view, "change:_thread_id", () => refreshIfOpen(view));
}
function refreshIfOpen(view) {
  if (!view.parts.threadList.hidden) listThreads(view);
}
function listThreads(view, onError) {
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
    }
  );
}
function drawRows(view) {
  const state = stateOf(view);
  const panel = view.parts.threadList;
  const search = (
    /** @type {HTMLInputElement} */
    panel.querySelector(".dd-thread-search")
  );
  const filter = (
    /** @type {HTMLSelectElement} */
    panel.querySelector(".dd-thread-filter")
  );
  const list = (
    /** @type {HTMLElement} */
    panel.querySelector(".dd-thread-options")
  );
  const shown = filterThreads(state.rows, search.value, filter.value);
  if (shown.length && !shown.some((row) => row.thread_id === state.active)) state.active = shown[0].thread_id;
  const h = hyperscript(view.doc);
  list.replaceChildren(
    ...shown.map(
      (row, i) => h(
        "li",
        {
          id: `${view.uid}-thread-${i}`,
          role: "option",
          class: `dd-thread-option${row.current ? " dd-current" : ""}`,
          "data-thread": row.thread_id,
          "data-kind": row.kind || "",
          "aria-selected": String(row.thread_id === state.active),
          title: displayName(row.thread_id)
        },
        rowText(row)
      )
    )
  );
  const active = list.querySelector('[aria-selected="true"]');
  if (active) list.setAttribute("aria-activedescendant", active.id);
  else list.removeAttribute("aria-activedescendant");
  panel.querySelector(".dd-thread-count").textContent = shown.length === state.rows.length ? plural(state.rows.length, "thread") : `${shown.length} of ${plural(state.rows.length, "thread")}`;
}
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
  const list = (
    /** @type {HTMLElement} */
    panel.querySelector(".dd-thread-options")
  );
  list.setAttribute("aria-activedescendant", items[next].id);
  if (typeof items[next].scrollIntoView === "function") items[next].scrollIntoView({ block: "nearest" });
}
function choose(view, id) {
  stateOf(view).active = id;
  if (!id || id === view.model.get("_thread_id")) return;
  view.requests.request("thread", { thread_id: id }).then(
    () => refreshIfOpen(view),
    (error) => {
      const count = view.parts.threadList.querySelector(".dd-thread-count");
      if (count) count.textContent = String(error && error.message ? error.message : error);
    }
  );
}

// js/src/diff-view.js
function diffRows(h, entries) {
  const json = (value, shown) => h("pre", { class: "dd-json-text" }, shown ? compactJson(value) : "");
  const rows = [];
  for (const entry of entries) {
    const changes = Array.isArray(entry.changes) ? entry.changes : [];
    const onlyItself = changes.length === 1 && changes[0].path === entry.channel && !changes[0].lines;
    rows.push(
      h(
        "tr",
        { class: `dd-change-${entry.change} dd-diff-channel`, "data-channel": entry.channel },
        cell(h, entry.channel, "dd-channel"),
        cell(h, h("span", { class: `dd-pill dd-change-${entry.change}` }, entry.change)),
        onlyItself || !changes.length ? cell(h, json(entry.old, entry.change !== "added")) : cell(h, ""),
        onlyItself || !changes.length ? cell(h, json(entry.new, entry.change !== "removed")) : cell(h, plural(changes.length + (entry.more || 0), "changed path"), "dd-muted")
      )
    );
    if (onlyItself) continue;
    for (const change of changes) {
      const value = change.lines ? [h("td", { colspan: "2" }, lineDiff(h, change.lines))] : [
        cell(h, json(change.old, change.change !== "added")),
        cell(h, json(change.new, change.change !== "removed"))
      ];
      rows.push(
        h(
          "tr",
          { class: `dd-change-${change.change} dd-diff-path`, "data-path": change.path },
          cell(h, change.path, "dd-path"),
          cell(h, h("span", { class: `dd-pill dd-change-${change.change}` }, change.change)),
          ...value
        )
      );
    }
    if (entry.more) {
      rows.push(
        h(
          "tr",
          { class: "dd-diff-more" },
          h(
            "td",
            { colspan: "4", class: "dd-muted" },
            `… ${plural(entry.more, "more changed path")}, left out to keep the diff light: open the checkpoints to see them`
          )
        )
      );
    }
  }
  return rows;
}
function lineDiff(h, lines) {
  return h(
    "pre",
    { class: "dd-line-diff" },
    ...lines.map((line) => {
      const kind = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
      return h("span", { class: `dd-line dd-line-${kind}` }, `${line}
`);
    })
  );
}

// js/src/conversation.js
var ROLE_OF_TYPE = (
  /** @type {Record<string, string>} */
  {
    human: "user",
    ai: "assistant",
    system: "system",
    tool: "tool",
    function: "tool",
    chat: "chat",
    remove: "removed"
  }
);
function messageRole(item) {
  if (!item || typeof item !== "object" || Array.isArray(item) || !("content" in item)) return "";
  if (typeof item.role === "string" && item.role) return item.role;
  if (typeof item.type === "string") {
    const type = item.type.replace(/MessageChunk$|Message$/, "").toLowerCase();
    return ROLE_OF_TYPE[type] || "";
  }
  return "";
}
function isConversation(value) {
  return Array.isArray(value) && value.length > 0 && value.every((item) => messageRole(item) !== "");
}
function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map(
      (part) => typeof part === "string" ? part : part && typeof part.text === "string" ? part.text : `[${part && part.type || "part"}]`
    ).join("\n");
  return oneLine(content);
}
function oneLine(value) {
  const text = JSON.stringify(value) ?? "null";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
function drawConversation(h, messages) {
  return h(
    "ol",
    { class: "dd-conversation" },
    ...messages.map((message) => {
      const role = messageRole(message);
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      const text = contentText(message.content);
      const name = typeof message.name === "string" && message.name ? ` (${message.name})` : "";
      const answers = typeof message.tool_call_id === "string" && message.tool_call_id ? h("span", { class: "dd-muted dd-answers" }, ` answers ${message.tool_call_id}`) : "";
      return h(
        "li",
        { class: `dd-message dd-role-${role.replace(/[^a-z]/gi, "")}`, "data-role": role },
        h("div", { class: "dd-message-role" }, `${role}${name}`, answers),
        text ? h("div", { class: "dd-message-content" }, text) : "",
        ...calls.map(
          (call) => h(
            "div",
            { class: "dd-tool-call" },
            "→ ",
            h("code", {}, `${call && call.name || "tool"}(${oneLine(call && call.args || {})})`),
            call && call.id ? h("span", { class: "dd-muted" }, ` ${call.id}`) : ""
          )
        )
      );
    })
  );
}

// js/src/subgraph.js
var NS_SEP = "|";
function drawSubgraphSections(view, detail) {
  if (isReadonly(view)) return [];
  const h = hyperscript(view.doc);
  const here = view.model.get("_selected_ns") || "";
  const list = h("div", { class: "dd-subgraph-list" }, h("span", { class: "dd-muted" }, "reading…"));
  const sections = [];
  if (here) {
    const back = h(
      "button",
      { type: "button", class: "dd-subgraph-up", "data-action": "subgraph-up", "data-ns": here },
      "↑ the task's checkpoint"
    );
    const where = h("div", { class: "dd-subgraph-where" }, "in subgraph ", h("code", {}, here), " ", back);
    const node = (here.split(NS_SEP).pop() || "").split(":")[0];
    const own = subgraphItem(h, here, node);
    sections.push(section(h, "Subgraph", "dd-subgraph-here", where, own));
    toggleSubgraph(
      view,
      /** @type {Element} */
      own.querySelector(".dd-subgraph-toggle")
    );
  }
  sections.push(section(h, "Subgraphs run here", "dd-subgraphs", list));
  view.requests.request("subgraphs").then(
    (reply) => fillSubgraphs(view, list, detail.id, here, reply.namespaces || []),
    (error) => list.replaceChildren(h("span", { class: "dd-error-inline" }, error.message))
  );
  return sections;
}
function fillSubgraphs(view, list, id, here, namespaces) {
  const h = hyperscript(view.doc);
  const mine = namespaces.filter((ns) => ns.enclosing === here && ns.parent === id);
  if (!mine.length) {
    list.replaceChildren(h("span", { class: "dd-empty" }, "no task of this checkpoint ran a subgraph"));
    return;
  }
  const taskRows = /* @__PURE__ */ new Map();
  for (const row of view.parts.detail.querySelectorAll(".dd-task[data-task-id]"))
    taskRows.set(row.getAttribute("data-task-id") || "", row);
  const loose = [];
  for (const ns of mine) {
    const task = (ns.checkpoint_ns.split(NS_SEP).pop() || "").split(":").slice(1).join(":");
    const item = subgraphItem(h, ns.checkpoint_ns, ns.node);
    const row = taskRows.get(task);
    if (row) row.append(item);
    else loose.push(item);
  }
  list.replaceChildren(
    ...loose.length ? loose : [h("span", { class: "dd-empty" }, "shown under their tasks above")]
  );
}
function subgraphItem(h, namespace, node) {
  return h(
    "div",
    { class: "dd-subgraph", title: namespace },
    h("span", { class: "dd-subhead" }, "subgraph "),
    h(
      "button",
      {
        type: "button",
        class: "dd-subgraph-toggle",
        "data-action": "subgraph-toggle",
        "aria-expanded": "false",
        "data-ns": namespace,
        "data-node": node
      },
      `▸ ${node}`
    ),
    h("div", { class: "dd-subgraph-tree", hidden: "" })
  );
}
function toggleSubgraph(view, toggle) {
  const h = hyperscript(view.doc);
  const tree = (
    /** @type {HTMLElement | null} */
    toggle.parentElement?.querySelector(".dd-subgraph-tree")
  );
  if (!tree) return;
  const namespace = toggle.getAttribute("data-ns") || "";
  const node = toggle.getAttribute("data-node") || "";
  const open = toggle.getAttribute("aria-expanded") === "true";
  toggle.setAttribute("aria-expanded", open ? "false" : "true");
  toggle.textContent = `${open ? "▸" : "▾"} ${node}`;
  tree.hidden = open;
  if (open) return;
  tree.replaceChildren(h("span", { class: "dd-muted" }, "reading…"));
  view.requests.request("subgraph", { checkpoint_ns: namespace }).then(
    (reply) => tree.replaceChildren(drawSubgraphTree(view, namespace, reply.dag.nodes || [])),
    (error) => tree.replaceChildren(h("span", { class: "dd-error-inline" }, error.message))
  );
}
function drawSubgraphTree(view, namespace, nodes) {
  const h = hyperscript(view.doc);
  const ids = new Set(nodes.map((node) => node.id));
  const children = /* @__PURE__ */ new Map();
  for (const node of [...nodes].sort((a, b) => a.id < b.id ? -1 : 1)) {
    const parent = node.parent && ids.has(node.parent) ? node.parent : "";
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent)?.push(node);
  }
  const branch = (parent) => h(
    "ul",
    { class: "dd-subgraph-branch" },
    ...(children.get(parent) || []).map((node) => {
      const next = node.next && node.next.length ? node.next.join(", ") : "end";
      return h(
        "li",
        {},
        h(
          "button",
          {
            type: "button",
            class: "dd-subgraph-checkpoint",
            "data-action": "subgraph-select",
            "data-checkpoint": node.id,
            "data-ns": namespace,
            title: node.id
          },
          `step ${node.step} · next: ${next}`
        ),
        children.has(node.id) ? branch(node.id) : ""
      );
    })
  );
  return branch("");
}

// js/src/detail.js
function drawDetail(view, detail, force = false) {
  const box = view.parts.detail;
  const drawn = box.childElementCount > 0;
  if (!force && drawn && detail === view.detail) return;
  const key = detail ? JSON.stringify(detail) : "";
  if (!force && drawn && key === view.detailKey) return;
  view.detail = detail || null;
  view.detailKey = key;
  view.editors.clear();
  view.editBoxes.clear();
  view.editModes.clear();
  view.fullValues = /* @__PURE__ */ new Map();
  const h = hyperscript(view.doc);
  if (!detail) {
    box.replaceChildren(
      h(
        "p",
        { class: "dd-empty" },
        "Click a checkpoint to see its state. Shift-click another to diff the two."
      )
    );
    return;
  }
  if (detail.id && detail.id !== view.selected && view.layout?.byId.has(detail.id))
    showSelected(view, detail.id);
  const readonly = isReadonly(view);
  box.replaceChildren(
    drawDetailHeader(view, detail, readonly),
    section(h, "State", "dd-state", drawValues(view, detail, readonly)),
    section(
      h,
      "Next",
      "dd-next",
      detail.next && detail.next.length ? h("ul", { class: "dd-inline-list" }, ...detail.next.map((name) => h("li", {}, h("code", {}, name)))) : h("span", { class: "dd-empty" }, "nothing: the run ends here")
    ),
    ...detail.findings && detail.findings.length ? [section(h, "Findings", "dd-findings", drawFindings(view, detail.findings))] : [],
    ...detail.interrupts && detail.interrupts.length ? [section(h, "Interrupts", "dd-interrupts", drawInterrupts(view, detail.interrupts, readonly))] : [],
    section(h, "Blob versions", "dd-blobs", drawBlobs(view, detail.blobs || [])),
    section(
      h,
      "Tasks and pending writes",
      "dd-tasks",
      drawTasks(view, detail.tasks || [], detail.writes || [])
    ),
    ...detail.calls && detail.calls.length ? [section(h, "Recorded calls", "dd-calls", drawCalls(view, detail.calls))] : [],
    ...drawSubgraphSections(view, detail),
    section(
      h,
      "Metadata",
      "dd-metadata",
      drawJson(view, detail.metadata || {}, 1),
      h("div", { class: "dd-subhead" }, "config"),
      drawJson(view, detail.config || {}, 0)
    )
  );
}
function drawDetailHeader(view, detail, readonly) {
  const h = hyperscript(view.doc);
  const header = h(
    "header",
    { class: "dd-detail-head", "data-id": detail.id },
    h(
      "div",
      { class: "dd-detail-title" },
      h("span", { class: `dd-pill dd-src-${detail.source}` }, detail.source),
      h("strong", {}, `step ${detail.step}`),
      h("code", { class: "dd-id", title: "checkpoint id" }, detail.id)
    ),
    h(
      "div",
      { class: "dd-detail-sub" },
      detail.created_at || "",
      detail.parent ? h("span", {}, " · parent ", h("code", { title: detail.parent }, `…${shortId(detail.parent)}`)) : ""
    )
  );
  if (!readonly) {
    header.append(
      h(
        "div",
        { class: "dd-actions" },
        h("button", { class: "dd-button", type: "button", "data-action": "rerun" }, "Rerun from here"),
        h(
          "label",
          {
            class: "dd-replay-toggle",
            title: "Answer the rerun's model and tool calls from the thread's recording"
          },
          h("input", { type: "checkbox", class: "dd-replay" }),
          " replay recorded calls"
        ),
        h("span", { class: "dd-inline-error dd-rerun-error", role: "alert", hidden: true })
      )
    );
  }
  return header;
}
function drawValues(view, detail, readonly) {
  const h = hyperscript(view.doc);
  const values = detail.values || {};
  const reducers = detail.reducers || {};
  const editable = readonly ? [] : detail.editable || [];
  const channels = [.../* @__PURE__ */ new Set([...Object.keys(values), ...editable])];
  const rows = channels.map((channel) => {
    const has = Object.prototype.hasOwnProperty.call(values, channel);
    return h(
      "div",
      { class: "dd-channel-row", "data-channel": channel },
      h(
        "div",
        { class: "dd-channel-head" },
        nameInto(h("span", { class: "dd-channel" }), channel),
        reducers[channel] ? h(
          "span",
          {
            class: "dd-reducer",
            title: "an edit goes through this reducer unless you replace the value"
          },
          `reducer: ${reducers[channel]}`
        ) : "",
        (detail.clipped || []).includes(channel) ? h(
          "span",
          { class: "dd-clipped" },
          h("span", { class: "dd-muted" }, "shown in part "),
          readonly ? "" : h(
            "button",
            {
              class: "dd-button dd-small",
              type: "button",
              "data-action": "show-all",
              "data-channel": channel
            },
            "Show all"
          )
        ) : "",
        editable.includes(channel) ? h(
          "button",
          { class: "dd-button dd-small", type: "button", "data-action": "edit", "data-channel": channel },
          "Edit"
        ) : ""
      ),
      has ? drawChannelValue(view, values[channel]) : h("span", { class: "dd-empty" }, "(not set)")
    );
  });
  const list = h(
    "div",
    { class: "dd-values" },
    ...rows.length ? rows : [h("span", { class: "dd-empty" }, "(empty state)")]
  );
  if (readonly || !editable.length) return list;
  const asNode = h(
    "select",
    { class: "dd-as-node", "aria-label": "as node" },
    h("option", { value: "" }, "(no node)"),
    ...(detail.nodes || []).map((name) => h("option", { value: name }, name))
  );
  return h(
    "div",
    {},
    list,
    h(
      "div",
      { class: "dd-fork-bar" },
      h("label", {}, "as node ", asNode),
      h("button", { class: "dd-button dd-primary", type: "button", "data-action": "fork" }, "Fork"),
      h("span", { class: "dd-inline-error dd-fork-error", role: "alert", hidden: true })
    )
  );
}
function drawChannelValue(view, value) {
  if (!isConversation(value)) return drawJson(view, value, 2);
  const h = hyperscript(view.doc);
  return h(
    "div",
    { class: "dd-chat" },
    drawConversation(h, value),
    h("details", { class: "dd-raw" }, h("summary", {}, "raw value"), drawJson(view, value, 2))
  );
}
function drawCalls(view, tasks) {
  const h = hyperscript(view.doc);
  return h(
    "div",
    { class: "dd-call-tasks" },
    ...tasks.map(
      (task) => h(
        "div",
        { class: "dd-call-task", "data-task": task.task_id, "data-node": task.node },
        h("div", { class: "dd-subhead" }, h("code", {}, task.node), ` task …${shortId(task.task_id)}`),
        h("ol", { class: "dd-call-list" }, ...task.calls.map((call) => drawCall(h, call)))
      )
    )
  );
}
function drawCall(h, call) {
  const mark = call.replayed === true ? h("span", { class: "dd-call-mark dd-call-replayed" }, "replayed") : call.replayed === false ? h("span", { class: "dd-call-mark dd-call-live" }, "live") : "";
  const facts = [
    call.tokens ? `${call.tokens.total} tokens` : "",
    call.ms === null || call.ms === void 0 ? "" : `${call.ms} ms`
  ].filter(Boolean);
  return h(
    "li",
    { class: "dd-call", "data-kind": call.kind, "data-index": String(call.i) },
    h("code", {}, `#${call.i} ${call.kind} ${call.name}`),
    " ",
    mark,
    h("div", { class: "dd-call-io dd-muted" }, `${call.input || ""} → ${call.error || call.output || ""}`),
    facts.length ? h("div", { class: "dd-call-facts dd-muted" }, facts.join(" · ")) : ""
  );
}
function drawFindings(view, findings) {
  const h = hyperscript(view.doc);
  return h(
    "ul",
    { class: "dd-finding-list" },
    ...findings.map(
      (item) => h(
        "li",
        { class: "dd-finding", "data-code": item.code },
        h("code", { class: "dd-finding-code" }, item.code),
        item.node ? h("span", { class: "dd-muted" }, ` node ${item.node}`) : "",
        item.key ? h("span", { class: "dd-muted" }, ` key ${item.key}`) : "",
        h("div", { class: "dd-finding-message" }, item.message)
      )
    )
  );
}
function drawInterrupts(view, interrupts, readonly) {
  const h = hyperscript(view.doc);
  const items = interrupts.map(
    (item) => h(
      "div",
      { class: "dd-interrupt", "data-interrupt-id": item.id },
      h(
        "div",
        { class: "dd-interrupt-head" },
        h("code", { class: "dd-interrupt-id" }, item.id),
        item.node ? h("span", { class: "dd-muted" }, ` in ${item.node}`) : ""
      ),
      drawJson(view, item.value, 2),
      readonly ? "" : h("textarea", {
        class: "dd-answer",
        rows: "2",
        spellcheck: "false",
        "data-interrupt-id": item.id,
        placeholder: 'answer as JSON, e.g. "yes" or {"approved": true}',
        "aria-label": `answer to interrupt ${item.id}`
      })
    )
  );
  if (readonly) return h("div", {}, ...items);
  return h(
    "div",
    {},
    ...items,
    h(
      "div",
      { class: "dd-resume-bar" },
      h("button", { class: "dd-button dd-primary", type: "button", "data-action": "resume" }, "Resume"),
      h("span", { class: "dd-inline-error dd-resume-error", role: "alert", hidden: true })
    )
  );
}
function drawBlobs(view, blobs) {
  const h = hyperscript(view.doc);
  if (!blobs.length) return h("span", { class: "dd-empty" }, "no channel has a version yet");
  const fresh = blobs.filter((blob) => blob.status === "new").length;
  const rows = blobs.map(
    (blob) => h(
      "tr",
      { class: `dd-blob-${blob.status}`, "data-channel": blob.channel },
      cell(h, blob.channel, "dd-channel"),
      cell(h, h("code", { title: String(blob.version) }, formatVersion(blob.version))),
      cell(
        h,
        h(
          "span",
          { class: `dd-pill dd-blob-${blob.status}` },
          blob.status === "new" ? "new here" : "shared with parent"
        )
      ),
      cell(h, formatBytes(blob.size), "dd-num")
    )
  );
  return h(
    "div",
    {},
    table(h, "dd-blob-table", ["channel", "version", "blob", "size"], rows),
    h(
      "p",
      { class: "dd-muted dd-blob-summary" },
      `${fresh} of ${plural(blobs.length, "blob")} written at this checkpoint`
    )
  );
}
function drawTasks(view, tasks, writes) {
  const h = hyperscript(view.doc);
  const byTask = /* @__PURE__ */ new Map();
  for (const write of writes) {
    const list = byTask.get(write.task_id);
    if (list) list.push(write);
    else byTask.set(write.task_id, [write]);
  }
  const known = new Set(tasks.map((task) => task.id));
  const orphans = [...byTask.keys()].filter((id) => !known.has(id));
  if (!tasks.length && !orphans.length) return h("span", { class: "dd-empty" }, "no tasks");
  const writesTable = (list) => list && list.length ? table(
    h,
    "dd-writes-table",
    null,
    list.map(
      (write) => h(
        "tr",
        { "data-channel": write.channel },
        cell(h, write.channel, "dd-channel"),
        cell(h, drawJson(view, write.value, 0))
      )
    )
  ) : h("div", { class: "dd-muted" }, "no pending writes");
  const items = tasks.map(
    (task) => h(
      "div",
      { class: `dd-task${task.error ? " dd-task-error" : ""}`, "data-task-id": task.id },
      h(
        "div",
        { class: "dd-task-head" },
        h("strong", {}, task.name),
        h("code", { class: "dd-muted", title: task.id }, ` …${shortId(task.id)}`),
        task.interrupts && task.interrupts.length ? h("span", { class: "dd-pill dd-pill-interrupt" }, plural(task.interrupts.length, "interrupt")) : "",
        task.error || task.failure ? h("span", { class: "dd-pill dd-pill-error" }, task.failure || "error") : ""
      ),
      task.error ? h("pre", { class: "dd-task-error-text" }, task.error) : "",
      task.result != null ? h("div", {}, h("span", { class: "dd-subhead" }, "result "), drawJson(view, task.result, 0)) : "",
      writesTable(byTask.get(task.id))
    )
  );
  for (const id of orphans) {
    items.push(
      h(
        "div",
        { class: "dd-task", "data-task-id": id },
        h(
          "div",
          { class: "dd-task-head" },
          h("strong", {}, byTask.get(id)?.[0]?.node || "task"),
          h("code", { class: "dd-muted", title: id }, ` …${shortId(id)}`)
        ),
        writesTable(byTask.get(id))
      )
    );
  }
  return h("div", { class: "dd-task-list" }, ...items);
}

// js/src/select.js
function selectCheckpoint(view, id, namespace) {
  view.diffTarget = "";
  showSelected(view, id, false);
  const ticket = ++view.selectTicket;
  view.selecting = id;
  view.parts.detail.classList.add("dd-loading");
  const where = namespace === void 0 ? {} : { checkpoint_ns: namespace };
  view.requests.request("select", { checkpoint_id: id, ...where }).then(
    () => {
      if (ticket !== view.selectTicket) return;
      view.selecting = "";
      view.parts.detail.classList.remove("dd-loading");
      clearRequestError(view);
      drawDetail(view, view.model.get("_detail"));
    },
    (error) => {
      if (ticket !== view.selectTicket) return;
      view.selecting = "";
      view.parts.detail.classList.remove("dd-loading");
      showRequestError(view, error);
    }
  );
}
function requestDiff(view, a, b, namespace) {
  view.diffTarget = b;
  placeRings(view);
  const ticket = ++view.diffTicket;
  const where = namespace === void 0 ? {} : { checkpoint_ns: namespace };
  view.requests.request("diff", { a, b, ...where }).then(
    (entries) => ticket === view.diffTicket && drawDiff(view, a, b, entries),
    (error) => ticket === view.diffTicket && drawDiff(view, a, b, null, error)
  );
}
function diffValues(a, b) {
  const before = a || {};
  const after = b || {};
  const channels = [.../* @__PURE__ */ new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const entries = [];
  for (const channel of channels) {
    const inA = Object.prototype.hasOwnProperty.call(before, channel);
    const inB = Object.prototype.hasOwnProperty.call(after, channel);
    if (inA && !inB) entries.push({ channel, change: "removed", old: before[channel], new: null });
    else if (!inA && inB) entries.push({ channel, change: "added", old: null, new: after[channel] });
    else if (!sameJson(before[channel], after[channel])) {
      entries.push({ channel, change: "changed", old: before[channel], new: after[channel] });
    }
  }
  return entries;
}
function sameJson(x, y) {
  if (x === y) return true;
  if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
  if (Array.isArray(x) !== Array.isArray(y)) return false;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  if (kx.length !== ky.length) return false;
  return kx.every((k) => Object.prototype.hasOwnProperty.call(y, k) && sameJson(x[k], y[k]));
}
function drawDiff(view, a, b, entries, error) {
  const h = hyperscript(view.doc);
  const box = view.parts.diff;
  box.hidden = false;
  const title = h(
    "div",
    { class: "dd-panel-head" },
    h(
      "h4",
      {},
      "Diff ",
      h("code", { title: a }, `…${shortId(a)}`),
      " → ",
      h("code", { title: b }, `…${shortId(b)}`)
    ),
    h("button", { class: "dd-button dd-small", type: "button", "data-action": "close-diff" }, "Close")
  );
  if (error) {
    box.replaceChildren(title, h("p", { class: "dd-inline-error", role: "alert" }, error.message));
    return;
  }
  if (!entries || !entries.length) {
    box.replaceChildren(title, h("p", { class: "dd-empty" }, "No channel changed."));
    return;
  }
  const rows = diffRows(h, entries);
  box.replaceChildren(title, table(h, "dd-diff-table", ["channel / path", "change", "old", "new"], rows));
}
function selectInSubgraph(view, button, event) {
  const id = button.getAttribute("data-checkpoint") || "";
  const namespace = button.getAttribute("data-ns") || "";
  const selected = view.model.get("_selected");
  if (event.shiftKey && selected && selected !== id && view.model.get("_selected_ns") === namespace)
    requestDiff(view, selected, id, namespace);
  else selectCheckpoint(view, id, namespace);
}
function upFromSubgraph(view, namespace) {
  view.requests.request("subgraphs").then(
    (reply) => {
      const listed = reply.namespaces || [];
      const found = listed.find((ns) => ns.checkpoint_ns === namespace);
      if (found && found.parent) selectCheckpoint(view, found.parent, found.enclosing);
    },
    (error) => showRequestError(view, error)
  );
}
function goTo(view, id) {
  if (!id || id === view.selected) return;
  selectCheckpoint(view, id);
  scrollToCheckpoint(view, id);
}

// js/src/actions.js
function onAction(view, event) {
  const target = (
    /** @type {Element} */
    event.target
  );
  const button = target && target.closest ? target.closest("[data-action]") : null;
  if (!button || !view.root.contains(button)) return;
  const action = button.getAttribute("data-action");
  if (action === "edit") toggleEditor(view, button.getAttribute("data-channel") || "");
  else if (action === "show-all") showAll(view, button.getAttribute("data-channel") || "");
  else if (action === "preview") previewEdit(view, button.getAttribute("data-channel") || "");
  else if (action === "fork") fork(view);
  else if (action === "rerun") rerun(view);
  else if (action === "resume") resume(view);
  else if (action === "stop") stop(view);
  else if (action === "refresh") refresh(view);
  else if (action === "threads") toggleThreads(view);
  else if (action === "new-run") toggleRunForm(view);
  else if (action === "copy") copyCode(view, button);
  else if (action === "close-diff") closeDiff(view);
  else if (action === "subgraph-toggle") toggleSubgraph(view, button);
  else if (action === "subgraph-select") selectInSubgraph(view, button, event);
  else if (action === "subgraph-up") upFromSubgraph(view, button.getAttribute("data-ns") || "");
}
function toggleEditor(view, channel) {
  const row = [...view.parts.detail.querySelectorAll(".dd-channel-row")].find(
    (el) => el.getAttribute("data-channel") === channel
  );
  if (!row || !view.detail) return;
  const open = view.editors.get(channel);
  if (open) {
    (view.editBoxes.get(channel) || open).remove();
    view.editors.delete(channel);
    view.editBoxes.delete(channel);
    view.editModes.delete(channel);
    return;
  }
  if ((view.detail.clipped || []).includes(channel) && !view.fullValues.has(channel)) {
    fetchFullValue(view, channel).then(
      (found) => found && toggleEditor(view, channel),
      (error) => showRequestError(view, error)
    );
    return;
  }
  const values = view.detail.values || {};
  const text = view.fullValues.has(channel) ? JSON.stringify(view.fullValues.get(channel), null, 2) : Object.prototype.hasOwnProperty.call(values, channel) ? JSON.stringify(values[channel], null, 2) : "";
  const editor = (
    /** @type {HTMLTextAreaElement} */
    hyperscript(view.doc)("textarea", {
      class: "dd-editor",
      spellcheck: "false",
      "data-channel": channel,
      rows: String(Math.min(12, Math.max(2, text.split("\n").length))),
      "aria-label": `new value of ${channel} as JSON`
    })
  );
  editor.value = text;
  editor.defaultValue = text;
  const reducer = (view.detail.reducers || {})[channel];
  if (reducer) {
    row.append(drawModeChoice(view, channel, reducer, editor));
  } else {
    row.append(editor);
  }
  view.editors.set(channel, editor);
  editor.focus();
}
function drawModeChoice(view, channel, reducer, editor) {
  const h = hyperscript(view.doc);
  const name = `${view.uid}-mode-${channel}`;
  const current = editor.value;
  view.editModes.set(channel, "replace");
  const radio = (mode, label) => {
    const input = (
      /** @type {HTMLInputElement} */
      h("input", { type: "radio", name, value: mode, "data-mode": mode })
    );
    input.checked = mode === "replace";
    input.addEventListener("change", () => {
      view.editModes.set(channel, mode);
      editor.value = mode === "replace" ? current : "";
      editor.placeholder = mode === "replace" ? "" : `value to pass through ${reducer}, as JSON`;
      preview.replaceChildren();
    });
    return h("label", { class: "dd-mode" }, input, ` ${label}`);
  };
  const preview = h("div", { class: "dd-preview", "aria-live": "polite" });
  const box = h(
    "div",
    { class: "dd-edit-box", "data-channel": channel },
    h(
      "div",
      { class: "dd-modes", role: "radiogroup", "aria-label": `how the fork writes ${channel}` },
      radio("replace", "replace the value (Overwrite)"),
      radio("append", `append through the reducer (${reducer})`)
    ),
    editor,
    h(
      "button",
      { class: "dd-button dd-small", type: "button", "data-action": "preview", "data-channel": channel },
      "Preview"
    ),
    preview
  );
  view.editBoxes.set(channel, box);
  return box;
}
function previewEdit(view, channel) {
  const editor = view.editors.get(channel);
  const box = view.editBoxes.get(channel);
  const detail = view.detail;
  if (!editor || !box || !detail) return;
  const slot = box.querySelector(".dd-preview");
  const mode = view.editModes.get(channel) || "append";
  view.requests.request("preview", {
    checkpoint_id: detail.id,
    ...inNamespace(view),
    channel,
    text: editor.value,
    modes: { [channel]: mode }
  }).then(
    (reply) => {
      if (view.detail !== detail || !slot) return;
      const h = hyperscript(view.doc);
      slot.replaceChildren(
        h("span", { class: "dd-muted" }, mode === "replace" ? "after the fork: " : "after the reducer: "),
        drawJson(view, reply.value, 1)
      );
    },
    (error) => slot && setInline(slot, String(error && error.message ? error.message : error))
  );
}
function fetchFullValue(view, channel) {
  const detail = view.detail;
  if (!detail) return Promise.resolve(false);
  return view.requests.request("value", { checkpoint_id: detail.id, ...inNamespace(view), channel }).then((reply) => {
    if (view.detail !== detail) return false;
    view.fullValues.set(channel, reply.value);
    return true;
  });
}
function showAll(view, channel) {
  showPages(view, channel, (error) => showRequestError(view, error));
}
function fork(view) {
  const detail = view.detail;
  const errorSlot = view.parts.detail.querySelector(".dd-fork-error");
  if (!detail) return;
  const edits = {};
  for (const [channel, editor] of view.editors) {
    if (editor.value !== editor.defaultValue) edits[channel] = editor.value;
  }
  const select = (
    /** @type {HTMLSelectElement | null} */
    view.parts.detail.querySelector(".dd-as-node")
  );
  const asNode = select && select.value ? select.value : null;
  if (!Object.keys(edits).length && !asNode) {
    return setInline(
      errorSlot,
      "Nothing to fork: press Edit on a channel and change its value, or choose a node."
    );
  }
  setInline(errorSlot, "");
  const modes = {};
  for (const channel of Object.keys(edits)) {
    const mode = view.editModes.get(channel);
    if (mode) modes[channel] = mode;
  }
  runAction(
    view,
    "fork",
    { checkpoint_id: detail.id, ...inNamespace(view), edits, as_node: asNode, modes },
    errorSlot
  );
}
function rerun(view) {
  if (!view.detail) return;
  const slot = view.parts.detail.querySelector(".dd-rerun-error");
  const replay = view.parts.detail.querySelector("input.dd-replay");
  const fields = { checkpoint_id: view.detail.id, ...inNamespace(view) };
  runAction(view, "rerun", replay && replay.checked ? { ...fields, replay: true } : fields, slot);
}
function resume(view) {
  if (!view.detail) return;
  const slot = view.parts.detail.querySelector(".dd-resume-error");
  const answers = {};
  for (const box of view.parts.detail.querySelectorAll("textarea.dd-answer")) {
    const text = (
      /** @type {HTMLTextAreaElement} */
      box.value
    );
    if (text.trim()) answers[box.getAttribute("data-interrupt-id") || ""] = text;
  }
  if (!Object.keys(answers).length) {
    return setInline(slot, "Type an answer (JSON) for at least one interrupt, then press Resume.");
  }
  runAction(view, "resume", { checkpoint_id: view.detail.id, ...inNamespace(view), answers }, slot);
}
function refresh(view) {
  view.requests.request("refresh").then(
    () => clearRequestError(view),
    (error) => showRequestError(view, error)
  );
}
function scheduleWatch(view) {
  if (view.closed) return;
  later(
    view,
    () => {
      const shown = view.root.isConnected && view.doc.visibilityState !== "hidden";
      if (!shown || isReadonly(view)) return scheduleWatch(view);
      view.requests.request("watch").then(
        () => scheduleWatch(view),
        () => scheduleWatch(view)
        // a failed look is not the user's error; the next may work
      );
    },
    WATCH_EVERY_MS
  );
}
function stop(view) {
  view.requests.request("stop").catch((error) => showRequestError(view, error));
}
function runAction(view, kind, fields, errorSlot) {
  const button = view.parts.detail.querySelector(`[data-action="${kind}"]`);
  if (button) button.setAttribute("disabled", "");
  setInline(errorSlot, "");
  view.requests.request(kind, fields).then(
    () => {
      if (button) button.removeAttribute("disabled");
    },
    (error) => {
      if (button) button.removeAttribute("disabled");
      setInline(errorSlot, error.message);
    }
  );
}
function toggleThreads(view) {
  if (!view.parts.threadList.hidden) {
    view.parts.threadList.hidden = true;
    return;
  }
  clearRequestError(view);
  listThreads(view, (error) => showRequestError(view, error));
}
function setInline(slot, message) {
  if (!slot) return;
  slot.textContent = message;
  slot.hidden = !message;
}
function closeDiff(view) {
  view.parts.diff.hidden = true;
  view.parts.diff.replaceChildren();
  view.diffTarget = "";
  placeRings(view);
}

// js/src/navigate.js
function createNav() {
  return {
    zoom: 1,
    opened: false,
    collapse: true,
    revealed: /* @__PURE__ */ new Set(),
    expanded: [],
    filters: /* @__PURE__ */ new Set(),
    matches: null,
    matchSet: null,
    matchRuns: /* @__PURE__ */ new Set(),
    query: "",
    drag: null,
    dragged: false,
    overviewDrag: false,
    matchLayout: null,
    thread: "",
    overviewWidth: 1e3,
    countedDag: null
  };
}
function navParts(h, doc) {
  const button = (nav2, label, title, extra = {}) => h(
    "button",
    { class: "dd-button dd-small dd-nav-button", type: "button", "data-nav": nav2, title, ...extra },
    label
  );
  const zoomLabel = h("span", { class: "dd-zoom-level dd-muted", "aria-live": "polite" }, "100%");
  const filter = (kind, label) => h(
    "button",
    {
      class: `dd-button dd-small dd-filter dd-filter-${kind}`,
      type: "button",
      "data-nav": "filter",
      "data-filter": kind,
      "aria-pressed": "false",
      title: `Highlight the ${label} and step through them (n / N)`
    },
    label,
    h("span", { class: "dd-filter-count" }, "")
  );
  const overview = (
    /** @type {SVGSVGElement} */
    doc.createElementNS(SVG_NS, "svg")
  );
  overview.setAttribute("class", "dd-overview");
  overview.setAttribute("preserveAspectRatio", "none");
  overview.setAttribute("role", "img");
  overview.setAttribute("aria-label", "Overview of the whole thread; click or drag to move the view");
  const nav = h(
    "div",
    { class: "dd-nav", role: "toolbar", "aria-label": "Zoom, filter and move around the checkpoints" },
    button("zoom-out", "−", "Zoom out (-)"),
    zoomLabel,
    button("zoom-in", "+", "Zoom in (+)"),
    button("fit", "Fit", "Show the whole thread (0)"),
    button("latest", "Latest", "Go to the latest checkpoint (End)"),
    h("span", { class: "dd-nav-sep" }),
    filter("error", "errors"),
    filter("interrupt", "interrupts"),
    filter("fork", "forks"),
    button("prev", "◀", "Previous match (N)", { "aria-label": "previous match" }),
    button("next", "▶", "Next match (n)", { "aria-label": "next match" }),
    h("span", { class: "dd-nav-sep" }),
    button("collapse", "Expand runs", "Show every checkpoint of the linear runs, or fold them again")
  );
  return { nav, zoomLabel, overview };
}
function setZoom(view, zoom, at) {
  const box = view.parts.dagScroll;
  const old = view.nav.zoom;
  const point = at || { x: (box.clientWidth || 0) / 2, y: (box.clientHeight || 0) / 2 };
  const layoutX = (box.scrollLeft + point.x) / old;
  const layoutY = (box.scrollTop + point.y) / old;
  setZoomValue(view, zoom);
  sizeCanvas(view);
  box.scrollLeft = Math.max(0, layoutX * view.nav.zoom - point.x);
  box.scrollTop = Math.max(0, layoutY * view.nav.zoom - point.y);
  view.drawnArea = null;
  drawMarks(view);
}
function keyZoom(view, key) {
  if (key === "+" || key === "=") setZoom(view, view.nav.zoom * ZOOM.step);
  else if (key === "-" || key === "_") setZoom(view, view.nav.zoom / ZOOM.step);
  else if (key === "0") fitAll(view);
  else if (key === "1") setZoom(view, 1);
  else return false;
  return true;
}
function fitAll(view) {
  setZoom(view, 0);
  const box = view.parts.dagScroll;
  box.scrollLeft = 0;
  box.scrollTop = 0;
  view.drawnArea = null;
  drawMarks(view);
}
function onWheel(view, event) {
  if (!(event.ctrlKey || event.metaKey) || !view.layout) return;
  event.preventDefault();
  const rect = view.parts.dagScroll.getBoundingClientRect();
  const factor = Math.exp(-Math.max(-300, Math.min(300, event.deltaY)) * 2e-3);
  setZoom(view, view.nav.zoom * factor, { x: event.clientX - rect.left, y: event.clientY - rect.top });
}
function onPanStart(view, event) {
  if (event.button !== 0) return;
  const box = view.parts.dagScroll;
  view.nav.dragged = false;
  view.nav.drag = {
    x: event.clientX,
    y: event.clientY,
    left: box.scrollLeft,
    top: box.scrollTop,
    moved: false
  };
}
function onPanMove(view, event) {
  const drag = view.nav.drag;
  if (!drag) return;
  const dx = event.clientX - drag.x;
  const dy = event.clientY - drag.y;
  if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 5) return;
  if (!drag.moved) {
    drag.moved = true;
    view.parts.dagScroll.classList.add("dd-panning");
    const target = (
      /** @type {any} */
      view.parts.dagScroll
    );
    if (typeof target.setPointerCapture === "function") {
      try {
        target.setPointerCapture(event.pointerId);
      } catch {
      }
    }
  }
  const box = view.parts.dagScroll;
  box.scrollLeft = Math.max(0, drag.left - dx);
  box.scrollTop = Math.max(0, drag.top - dy);
}
function onPanEnd(view) {
  const drag = view.nav.drag;
  view.nav.drag = null;
  if (!drag) return;
  view.parts.dagScroll.classList.remove("dd-panning");
  view.nav.dragged = drag.moved;
}
function stepMatch(view, direction) {
  updateMatches(view);
  const matches = view.nav.matches;
  if (!matches || !matches.length || !view.layout) return;
  const at = matches.indexOf(view.selected);
  let next;
  if (at >= 0) next = (at + direction + matches.length) % matches.length;
  else next = direction > 0 ? 0 : matches.length - 1;
  goTo(view, matches[next]);
  countLine(view);
}
function onNavClick(view, event) {
  const el = (
    /** @type {Element | null} */
    event.target
  );
  const button = el && el.closest ? el.closest("[data-nav]") : null;
  if (!button || !view.layout) return;
  const what = button.getAttribute("data-nav");
  if (what === "zoom-in") setZoom(view, view.nav.zoom * ZOOM.step);
  else if (what === "zoom-out") setZoom(view, view.nav.zoom / ZOOM.step);
  else if (what === "fit") fitAll(view);
  else if (what === "latest") goTo(view, view.layout.latest);
  else if (what === "next" || what === "prev") stepMatch(view, what === "next" ? 1 : -1);
  else if (what === "filter") {
    const kind = button.getAttribute("data-filter") || "";
    if (view.nav.filters.has(kind)) view.nav.filters.delete(kind);
    else view.nav.filters.add(kind);
    updateMatches(view);
  } else if (what === "collapse") {
    view.nav.collapse = !view.nav.collapse;
    view.nav.expanded = [];
    button.textContent = view.nav.collapse ? "Expand runs" : "Collapse runs";
    relayout(view);
  }
}
function onOverviewPointer(view, event) {
  if (event.type === "pointerdown") {
    if (event.button !== 0) return;
    view.nav.overviewDrag = true;
    const target = (
      /** @type {any} */
      view.parts.overview
    );
    if (typeof target.setPointerCapture === "function") {
      try {
        target.setPointerCapture(event.pointerId);
      } catch {
      }
    }
  } else if (event.type === "pointerup" || event.type === "pointercancel") {
    view.nav.overviewDrag = false;
    return;
  } else if (!view.nav.overviewDrag) return;
  const layout = view.layout;
  if (!layout) return;
  event.preventDefault();
  const rect = view.parts.overview.getBoundingClientRect();
  if (!rect.width || !rect.height) return;
  const { pad } = layout.geometry;
  const x = pad + (event.clientX - rect.left - 4) / Math.max(1, rect.width - 8) * (layout.width - 2 * pad);
  const y = pad + (event.clientY - rect.top - 4) / Math.max(1, rect.height - 8) * (layout.height - 2 * pad);
  const box = view.parts.dagScroll;
  const zoom = view.nav.zoom;
  box.scrollLeft = Math.max(0, x * zoom - box.clientWidth / 2);
  box.scrollTop = Math.max(0, y * zoom - box.clientHeight / 2);
  view.drawnArea = null;
  drawMarks(view);
}
function updateMatches(view) {
  if (!refreshMatches(view)) return;
  view.drawnArea = null;
  drawMarks(view);
  drawOverview(view);
}

// js/src/dag-input.js
function targetOf(view, event) {
  const el = (
    /** @type {Element | null} */
    event.target && /** @type {any} */
    event.target.closest ? event.target : null
  );
  const mark = el ? el.closest(".dd-mark") : null;
  if (mark) return { id: mark.getAttribute("data-id") || "", run: null };
  const runMark = el ? el.closest(".dd-run") : null;
  const layout = view.layout;
  if (runMark && layout) {
    const id = runMark.getAttribute("data-run") || "";
    return { id: "", run: layout.items.find((item) => item.id === id) || null };
  }
  if (el && el.classList && el.classList.contains("dd-dot") && layout && view.svg) {
    const box = view.svg.getBoundingClientRect();
    const mouse = (
      /** @type {MouseEvent} */
      event
    );
    const zoom = view.nav.zoom;
    const item = itemAt(
      layout,
      (mouse.clientX - box.left) / zoom,
      (mouse.clientY - box.top) / zoom,
      8 / zoom
    );
    if (item) return item.kind === "run" ? { id: "", run: item } : { id: item.id, run: null };
  }
  return { id: "", run: null };
}
function onDagClick(view, event) {
  if (view.nav.dragged) {
    view.nav.dragged = false;
    return;
  }
  const { id, run } = targetOf(view, event);
  if (run && view.layout) {
    view.nav.expanded.push(runRange(view.layout, run));
    relayout(view, run.node.id);
    return;
  }
  if (!id) return;
  if (event.shiftKey && view.selected && view.selected !== id) requestDiff(view, view.selected, id);
  else selectCheckpoint(view, id);
}
function onFindKey(view, event) {
  if (event.key !== "Enter") return;
  event.preventDefault();
  stepMatch(view, event.shiftKey ? -1 : 1);
}
function onDagKey(view, event) {
  if (!view.layout || event.ctrlKey || event.metaKey || event.altKey) return;
  if (keyZoom(view, event.key)) {
    event.preventDefault();
    return;
  }
  if (event.key === "n" || event.key === "N" || event.key === "p") {
    event.preventDefault();
    stepMatch(view, event.key === "n" ? 1 : -1);
    return;
  }
  let next = "";
  if (event.key === "End") next = view.layout.latest;
  else if (event.key === "Home") {
    const first = view.layout.rowNodes[0];
    next = first && first.length ? first[0].id : "";
  } else if (event.key.startsWith("Arrow")) next = neighbour(view.layout, view.selected, event.key);
  else return;
  event.preventDefault();
  goTo(view, next);
}

// js/src/requests.js
function createRequester(model, { timeoutMs = REQUEST_TIMEOUT_MS, newId = newUuid } = {}) {
  const pending = /* @__PURE__ */ new Map();
  const onMessage = (message) => {
    const entry = message && typeof message === "object" ? pending.get(message.uuid) : void 0;
    if (!entry) return;
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
              `No answer to '${kind}' after ${timeoutMs / 1e3} s: the kernel may be busy or gone. Wait for the running cell, or re-run the cell that shows this widget.`
            )
          );
        }, timeoutMs);
        pending.set(uuid, { resolve, reject, timer });
        try {
          model.send({ uuid, kind, ...fields });
        } catch (error) {
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
    }
  };
}
function goneMessage(error) {
  const said = error instanceof Error ? error.message : String(error);
  return `Cannot reach the kernel (${said}): it was restarted or shut down since this widget was shown, so what it shows may be out of date. Re-run the cell that shows this widget.`;
}
var GONE_STATUSES = ["restarting", "autorestarting", "dead"];
function watchKernel(model, onGone) {
  const manager = model.widget_manager;
  const signal = manager && manager.kernel && manager.kernel.statusChanged;
  if (!signal || typeof signal.connect !== "function") return () => {
  };
  const onStatus = (_kernel, status) => {
    if (GONE_STATUSES.includes(status)) onGone(kernelGoneMessage(status));
  };
  signal.connect(onStatus);
  return () => signal.disconnect(onStatus);
}
function kernelGoneMessage(status) {
  const what = status === "dead" ? "was shut down" : status === "autorestarting" ? "died" : "was restarted";
  return `The kernel ${what}: this widget is no longer connected to it, so what it shows may be out of date and its buttons do nothing. Re-run the cells that build the graph and show this widget.`;
}
function newUuid() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === "function") return c.randomUUID();
  return `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`;
}

// js/src/health.js
var HEALTH_SLA_S = 3600;
var HEALTH_TIMEOUT_MS = 3e5;
function mountHealth(view) {
  const h = hyperscript(view.doc);
  const button = h(
    "button",
    {
      class: "dd-button dd-small dd-health-button",
      type: "button",
      "data-health-action": "toggle",
      "aria-expanded": "false",
      title: "The store's health: write latency, waiting threads, failures, size"
    },
    "Health"
  );
  const sla = h("input", {
    class: "dd-health-sla",
    type: "number",
    min: "0",
    step: "60",
    value: String(HEALTH_SLA_S),
    "aria-label": "list threads waiting on an interrupt longer than this many seconds"
  });
  const body = h("div", { class: "dd-health-body", "aria-live": "polite" });
  const panel = h(
    "section",
    { class: "dd-panel dd-health", hidden: true },
    h(
      "div",
      { class: "dd-health-head" },
      h("h4", {}, "Health of this store"),
      h("label", { class: "dd-muted" }, "waiting longer than ", sla, " s"),
      h(
        "button",
        { class: "dd-button dd-small", type: "button", "data-health-action": "refresh" },
        "Refresh"
      ),
      h("button", { class: "dd-button dd-small", type: "button", "data-health-action": "close" }, "Close")
    ),
    body
  );
  view.parts.refresh.before(button);
  view.parts.error.after(panel);
  view.parts.healthButton = button;
  view.parts.health = panel;
  view.cleanups.push(() => {
    button.remove();
    panel.remove();
  });
  const requests = createRequester(view.model, { timeoutMs: HEALTH_TIMEOUT_MS });
  view.cleanups.push(() => requests.dispose());
  let ticket = 0;
  const ask = () => {
    const seconds = Number(
      /** @type {HTMLInputElement} */
      sla.value
    );
    const mine = ++ticket;
    body.replaceChildren(h("span", { class: "dd-empty" }, "reading the store…"));
    requests.request("health", { sla_s: Number.isFinite(seconds) ? seconds : HEALTH_SLA_S }).then(
      (reply) => {
        if (mine === ticket) body.replaceChildren(...healthTables(h, reply));
      },
      (error) => {
        if (mine !== ticket) return;
        const message = String(error && error.message ? error.message : error);
        body.replaceChildren(h("div", { class: "dd-inline-error", role: "alert" }, message));
      }
    );
  };
  const show = (open) => {
    panel.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (open) ask();
    else ticket++;
  };
  const onClick = (event) => {
    const target = (
      /** @type {Element} */
      event.target
    );
    const hit = target && target.closest ? target.closest("[data-health-action]") : null;
    const action = hit && hit.getAttribute("data-health-action");
    if (action === "toggle") show(Boolean(panel.hidden));
    else if (action === "refresh") ask();
    else if (action === "close") show(false);
  };
  listen(view, button, "click", onClick);
  listen(view, panel, "click", onClick);
  listen(view, sla, "keydown", (event) => {
    if (
      /** @type {KeyboardEvent} */
      event.key === "Enter"
    ) ask();
  });
  const readonly = () => {
    button.hidden = isReadonly(view);
    if (button.hidden) show(false);
  };
  watch(view, "change:_readonly", readonly);
  readonly();
}
function healthTables(h, reply) {
  return (reply.tables || []).map((t) => {
    const title = t.name === "waiting" ? `waiting longer than ${reply.sla_s} s` : t.name;
    const rows = t.rows.map(
      (row) => h(
        "tr",
        {},
        ...row.map(
          (value, i) => cell(h, healthCell(t.columns[i], value), typeof value === "number" ? "dd-num" : "")
        )
      )
    );
    const content = rows.length ? table(h, `dd-health-table dd-health-${t.name}`, t.columns, rows) : h("div", { class: "dd-empty" }, "none");
    return h("div", { class: "dd-health-item", "data-health": t.name }, h("h5", {}, title), content);
  });
}
function healthCell(column, value) {
  if (value === null || value === void 0) return "—";
  if (typeof value !== "number") return String(value);
  if (/bytes$/.test(column)) return formatBytes(value);
  if (/rate$/.test(column)) return `${round1(value * 100)} %`;
  return String(value);
}

// js/src/keys.js
var SHORTCUTS = [
  ["← → ↑ ↓", "move to the parent, the child, the branch above or below"],
  ["j / k", "the next / the previous checkpoint (as → / ←)"],
  ["Home / End", "the first / the latest checkpoint"],
  ["Enter", "open the selected checkpoint's detail"],
  ["n / N, p", "next / previous match of the search"],
  ["+ / −, 0, 1", "zoom in / out, fit the whole thread, 100 %"],
  ["Shift-click", "diff two checkpoints"],
  ["?", "show or hide this help"],
  ["Escape", "close this help, else give the keyboard back to the notebook"]
];
var ALIASES = (
  /** @type {Record<string, string>} */
  { j: "ArrowRight", k: "ArrowLeft" }
);
function mountKeys(view) {
  const h = hyperscript(view.doc);
  const help = h(
    "div",
    { class: "dd-help", role: "dialog", "aria-label": "keyboard shortcuts", hidden: true, tabindex: "-1" },
    h("h4", {}, "Keyboard"),
    h(
      "table",
      { class: "dd-help-table" },
      ...SHORTCUTS.map(([keys, what]) => h("tr", {}, h("th", {}, keys), h("td", {}, what)))
    )
  );
  const button = h(
    "button",
    {
      class: "dd-button dd-small dd-help-button",
      type: "button",
      title: "Keyboard shortcuts (?)",
      "aria-label": "keyboard shortcuts",
      "aria-expanded": "false"
    },
    "?"
  );
  view.parts.refresh.after(button);
  view.parts.refresh.parentElement?.after(help);
  view.parts.help = help;
  view.cleanups.push(() => {
    button.remove();
    help.remove();
  });
  const toggle = (open) => {
    help.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
  };
  listen(view, button, "click", () => toggle(Boolean(help.hidden)));
  listen(
    view,
    view.parts.dagScroll,
    "keydown",
    (event) => onDagExtraKey(
      view,
      /** @type {KeyboardEvent} */
      event
    )
  );
  listen(view, view.root, "keydown", (event) => {
    const key = (
      /** @type {KeyboardEvent} */
      event
    );
    if (key.defaultPrevented || key.ctrlKey || key.metaKey || key.altKey) return;
    if (key.key === "?" && !isTextEntry(key.target)) {
      key.preventDefault();
      toggle(Boolean(help.hidden));
    } else if (key.key === "Escape") {
      key.preventDefault();
      if (!help.hidden) return toggle(false);
      leaveWidget(view);
    }
  });
}
function isTextEntry(target) {
  const el = (
    /** @type {Element | null} */
    target
  );
  if (!el || !el.tagName) return false;
  const tag = el.tagName.toLowerCase();
  return tag === "textarea" || tag === "select" || tag === "input" && el.getAttribute("type") !== "checkbox";
}
function onDagExtraKey(view, event) {
  if (!view.layout || event.ctrlKey || event.metaKey || event.altKey) return;
  const arrow = ALIASES[event.key];
  if (arrow) {
    event.preventDefault();
    goTo(view, neighbour(view.layout, view.selected, arrow));
  } else if (event.key === "Enter" && view.selected) {
    event.preventDefault();
    const detail = (
      /** @type {HTMLElement} */
      view.parts.detail
    );
    if (!detail.hasAttribute("tabindex")) detail.setAttribute("tabindex", "-1");
    detail.focus();
    if (typeof detail.scrollIntoView === "function") detail.scrollIntoView({ block: "nearest" });
  }
}
function leaveWidget(view) {
  const active = (
    /** @type {HTMLElement | null} */
    view.doc.activeElement
  );
  if (active && view.root.contains(active) && typeof active.blur === "function") active.blur();
  const notebook = (
    /** @type {HTMLElement | null} */
    view.root.closest(".jp-Notebook")
  );
  if (notebook) {
    const cell2 = (
      /** @type {HTMLElement | null} */
      view.root.closest(".jp-Cell")
    );
    (cell2 || notebook).focus();
    if (view.doc.activeElement !== cell2) notebook.focus();
  }
}

// js/src/live-text.js
function drawLiveText(view) {
  const box = view.parts.live;
  const entries = (
    /** @type {LiveEntry[]} */
    view.model.get("_live_text") || []
  );
  const h = hyperscript(view.doc);
  box.replaceChildren(
    ...entries.map(
      (entry) => h(
        "div",
        { class: "dd-live-entry", "data-node": entry.node, "data-message": entry.id },
        nameInto(h("span", { class: "dd-live-node" }), entry.node || "a chat model"),
        h("span", { class: "dd-live-note dd-muted" }, liveNote(entry)),
        h("pre", { class: "dd-live-text" }, entry.text)
      )
    )
  );
  box.hidden = !entries.length;
  for (const pre of box.querySelectorAll(".dd-live-text")) pre.scrollTop = pre.scrollHeight;
}
function liveNote(entry) {
  return entry.cut ? ` is writing… (the end of ${entry.chars} characters)` : " is writing…";
}

// js/src/static-model.js
function createStaticModel(data) {
  const details = data.details || {};
  const state = {
    _thread_id: data.thread_id || data.dag && data.dag.thread_id || "",
    _dag: data.dag || { thread_id: "", nodes: [], depth: 0, lanes: 0 },
    _selected: "",
    _detail: null,
    _topology: data.topology || null,
    _running: false,
    _status: "",
    _error: "",
    _code: [],
    _readonly: true
  };
  const handlers = /* @__PURE__ */ new Map();
  const emit = (name, ...args) => {
    for (const fn of [...handlers.get(name) || []]) fn(...args);
  };
  const defaults = data.detail_defaults || {};
  const namespace = data.checkpoint_ns || data.dag && data.dag.checkpoint_ns || "";
  const fullDetail = (id, detail) => ({
    ...defaults,
    config: { configurable: { thread_id: state._thread_id, checkpoint_ns: namespace, checkpoint_id: id } },
    ...detail
  });
  const missing = (id) => `Checkpoint ${id} is not in this export: export the thread again to include it.`;
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
      error: `'${message.kind}' is not available in a read-only export: open the thread in Jupyter with durable_debug.TimeTravel(graph, config) to fork, rerun or resume.`
    };
  };
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
      else handlers.set(name, /* @__PURE__ */ new Set([fn]));
    },
    off(name, fn) {
      if (name == null) handlers.clear();
      else if (fn == null) handlers.delete(name);
      else handlers.get(name)?.delete(fn);
    },
    /** @param {any} message */
    send(message) {
      setTimeout(() => emit("msg:custom", { uuid: message.uuid, ...answer(message) }, []), 0);
    },
    save_changes() {
    }
  };
  return model;
}

// js/src/index.js
var index_default = { render };
function render({ model, el }) {
  const view = createView(model, el);
  drawAll(view);
  return () => disposeView(view);
}
var viewCount = 0;
function createView(model, el) {
  const doc = el.ownerDocument;
  const { root, parts } = buildSkeleton(doc);
  el.appendChild(root);
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
    marks: { byItem: /* @__PURE__ */ new Map(), matches: null },
    drawnArea: null,
    frame: null,
    detail: null,
    detailKey: "",
    editors: /* @__PURE__ */ new Map(),
    editBoxes: /* @__PURE__ */ new Map(),
    editModes: /* @__PURE__ */ new Map(),
    fullValues: /* @__PURE__ */ new Map(),
    lazyJson: /* @__PURE__ */ new WeakMap(),
    uid: `dd${++viewCount}`,
    timers: /* @__PURE__ */ new Set(),
    closed: false
  };
  view.cleanups.push(
    () => view.requests.dispose(),
    () => root.remove(),
    watchKernel(model, (message) => {
      view.kernelGone = message;
      drawStatus(view);
    })
  );
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
  listen(view, parts.dagScroll, "click", (event) => onDagClick(
    view,
    /** @type {MouseEvent} */
    event
  ));
  listen(view, parts.dagScroll, "keydown", (event) => onDagKey(
    view,
    /** @type {KeyboardEvent} */
    event
  ));
  listen(view, parts.dagScroll, "mouseover", (event) => showTooltip(view, event.target));
  listen(view, parts.dagScroll, "mouseleave", () => hideTooltip(view));
  listen(view, parts.dagScroll, "scroll", () => scheduleMarks(view));
  listen(view, root, "click", (event) => onAction(
    view,
    /** @type {MouseEvent} */
    event
  ));
  listen(view, parts.find, "keydown", (event) => onFindKey(
    view,
    /** @type {KeyboardEvent} */
    event
  ));
  listen(
    view,
    root,
    "dd-show",
    (event) => scrollToCheckpoint(view, String(
      /** @type {CustomEvent} */
      event.detail || ""
    ))
  );
  listen(view, parts.find, "input", () => updateMatches(view));
  listen(view, parts.nav, "click", (event) => onNavClick(
    view,
    /** @type {MouseEvent} */
    event
  ));
  listen(view, parts.dagScroll, "wheel", (event) => onWheel(
    view,
    /** @type {WheelEvent} */
    event
  ));
  listen(
    view,
    parts.dagScroll,
    "pointerdown",
    (event) => onPanStart(
      view,
      /** @type {PointerEvent} */
      event
    )
  );
  listen(
    view,
    parts.dagScroll,
    "pointermove",
    (event) => onPanMove(
      view,
      /** @type {PointerEvent} */
      event
    )
  );
  for (const type of ["pointerup", "pointercancel"])
    listen(view, parts.dagScroll, type, () => onPanEnd(view));
  for (const type of ["pointerdown", "pointermove", "pointerup", "pointercancel"]) {
    listen(
      view,
      parts.overview,
      type,
      (event) => onOverviewPointer(
        view,
        /** @type {PointerEvent} */
        event
      )
    );
  }
  listen(view, root, "focusin", (event) => suppressShortcuts(event.target));
  for (const type of ["keydown", "keypress", "keyup"]) listen(view, root, type, keepKey);
  observeSize(view);
  mountHealth(view);
  mountThreadList(view);
  mountKeys(view);
  scheduleWatch(view);
  listen(view, root, "toggle", (event) => fillLazyJson(view, event.target), true);
  return view;
}
function suppressShortcuts(target) {
  const el = (
    /** @type {Element | null} */
    target
  );
  if (el && typeof el.setAttribute === "function") el.setAttribute("data-lm-suppress-shortcuts", "true");
}
function keepKey(event) {
  event.stopPropagation();
}
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
function disposeView(view) {
  view.closed = true;
  if (view.frame) view.frame.cancel();
  view.frame = null;
  for (const timer of view.timers) clearTimeout(timer);
  view.timers.clear();
  for (const cleanup of view.cleanups.splice(0).reverse()) cleanup();
}
function openDag(view) {
  const first = drawDag(view);
  if (first) selectCheckpoint(view, first);
}
function drawAll(view) {
  view.root.classList.toggle("dd-readonly", isReadonly(view));
  drawStatus(view);
  drawLiveText(view);
  openDag(view);
  drawDetail(view, view.model.get("_detail") || view.detail, true);
  drawTopology(view, view.model.get("_topology"));
  drawCode(view, view.model.get("_code") || []);
}
function buildSkeleton(doc) {
  const h = hyperscript(doc);
  const { nav, zoomLabel, overview } = navParts(h, doc);
  const parts = {
    nav,
    zoomLabel,
    overview: (
      /** @type {HTMLElement} */
      /** @type {unknown} */
      overview
    ),
    thread: h("span", { class: "dd-thread" }),
    running: h("span", { class: "dd-running", role: "status", hidden: true }, "running…"),
    stop: h(
      "button",
      { class: "dd-button dd-stop", type: "button", "data-action": "stop", hidden: true },
      "Stop"
    ),
    find: h("input", {
      class: "dd-find",
      type: "search",
      placeholder: "go to: step 12, a node, error, interrupt, fork",
      "aria-label": "Go to a checkpoint: a step number, a node name, error, interrupt or fork; Enter for the next",
      "data-lm-suppress-shortcuts": "true"
    }),
    findCount: h("span", { class: "dd-find-count dd-muted", "aria-live": "polite" }),
    newRun: h(
      "button",
      { class: "dd-button dd-small dd-new-run-button", type: "button", "data-action": "new-run" },
      "New run"
    ),
    runForm: h("div", { class: "dd-run-form", hidden: true }),
    threads: h(
      "button",
      { class: "dd-button dd-small dd-threads-button", type: "button", "data-action": "threads" },
      "Threads"
    ),
    threadList: h("div", {
      class: "dd-threads",
      role: "group",
      "aria-label": "show another thread of this store",
      hidden: true
    }),
    refresh: h(
      "button",
      {
        class: "dd-button dd-small dd-refresh",
        type: "button",
        "data-action": "refresh",
        title: "Read the thread again (runs from a cell or another process show by themselves)"
      },
      "Refresh"
    ),
    status: h("span", { class: "dd-status" }),
    error: h("div", { class: "dd-error", role: "alert", hidden: true }),
    live: h("div", { class: "dd-live", role: "status", "aria-live": "polite", hidden: true }),
    dagScroll: h("div", {
      class: "dd-dag-scroll",
      tabindex: "0",
      "data-lm-suppress-shortcuts": "true",
      role: "application",
      "aria-label": "Checkpoint graph: click a checkpoint to inspect it, shift-click another to diff, arrow keys move; + and - zoom, 0 fits, Home and End go to the first and the latest checkpoint, n and N to the next and previous match; drag to pan"
    }),
    dagCanvas: h("div", { class: "dd-dag-canvas" }),
    tooltip: h("div", { class: "dd-tooltip", hidden: true }),
    topology: h("div", { class: "dd-topology" }),
    detail: h("div", { class: "dd-detail" }),
    diff: h("section", { class: "dd-panel dd-diff", hidden: true }),
    code: h("div", { class: "dd-code" }),
    codePanel: h("section", { class: "dd-panel dd-code-panel" })
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
      parts.refresh
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
        parts.live
      )
    ),
    h(
      "div",
      { class: "dd-bottom" },
      h("section", { class: "dd-panel dd-detail-panel" }, parts.detail),
      h("div", { class: "dd-side" }, parts.diff, parts.codePanel)
    )
  );
  return { root, parts };
}
function legend(h) {
  const item = (cls, glyph, label) => h("span", { class: `dd-legend-item ${cls}` }, h("span", { class: "dd-legend-glyph" }, glyph), label);
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
    item("dd-legend-run", "⋯", "folded run")
  );
}
export {
  CONTEXT,
  DAG_GEOMETRY,
  FILTERS,
  HEALTH_SLA_S,
  HEALTH_TIMEOUT_MS,
  MARK_LIMIT,
  MIN_RUN,
  REQUEST_TIMEOUT_MS,
  WATCH_EVERY_MS,
  ZOOM,
  createRequester,
  createStaticModel,
  index_default as default,
  diffValues,
  findCheckpoints,
  formatBytes,
  formatVersion,
  healthCell,
  importSvg,
  itemAt,
  itemsInArea,
  layoutDag,
  matchCheckpoints,
  neighbour,
  shortId,
  topologyDrawing
};
