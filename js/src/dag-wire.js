// @ts-check
// The DAG as it arrives: `_dag` in its compact form, decoded once into the protocol's Dag

/** @typedef {import("./types.js").Dag} Dag */
/** @typedef {import("./types.js").DagNode} DagNode */
/** @typedef {import("./types.js").Model} Model */

/**
 * The `format` of a compact `_dag` (docs/widget-protocol.md, "The DAG on the wire"): one array
 * per field in checkpoint id order, a parent as its index, node names and name lists interned,
 * rare marks as sparse `[index, value, …]` pairs. Python's `inspect.dag.DAG_WIRE_FORMAT`.
 */
export const DAG_WIRE_FORMAT = "dag-columns-1";

/** @type {WeakMap<object, {tail: any, dag: Dag}>} */
const decoded = new WeakMap();

/** Per-checkpoint columns, and sparse `[index, value, …]` lists, of the compact form. */
const COLUMNS = ["id", "parent", "step", "source", "next", "writers", "node_depth", "lane", "created_at"];
const SPARSE = ["interrupts", "errors", "findings", "broken_parent", "missing_parent"];

/** @returns {Dag} */
function emptyDag() {
  return { thread_id: "", checkpoint_ns: "", nodes: [], depth: 0, lanes: 0 };
}

/**
 * The widget's DAG now: `_dag` decoded (once per value the model holds).
 * @param {Model} model
 * @returns {Dag}
 */
export function readDag(model) {
  return decodeDag(model.get("_dag"), model.get("_dag_tail"));
}

/**
 * The protocol's `Dag` (nodes sorted by depth, then lane) from `_dag` in either form: the
 * compact one Python sends, or a plain `{nodes: [...]}` (as older exports hold), returned as
 * it is. `tail` (`_dag_tail`): the checkpoints appended or marked again since `wire` was sent,
 * from its `start` on; a tail of another `epoch` is ignored. Decoded once per pair of
 * objects; anything else is an empty DAG.
 * @param {any} wire
 * @param {any} [tail]
 * @returns {Dag}
 */
export function decodeDag(wire, tail) {
  if (!wire || typeof wire !== "object") return emptyDag();
  if (wire.format !== DAG_WIRE_FORMAT) return Array.isArray(wire.nodes) ? wire : emptyDag();
  const usable = tail && tail.format === DAG_WIRE_FORMAT ? tail : null; // `{}`: no tail
  const known = decoded.get(wire);
  if (known && known.tail === usable) return known.dag;
  const dag = decodeColumns(mergeTail(unpack(wire), usable && unpack(usable)));
  decoded.set(wire, { tail: usable, dag });
  return dag;
}

/** @type {WeakMap<object, any>} */
const unpacked = new WeakMap();

/**
 * The compact form itself, unpacked once per object. Python packs it (`inspect.dag_wire.pack_wire`)
 * into one binary buffer (arriving as a DataView): `PACKED_MAGIC`, a 4-byte little-endian length,
 * that much UTF-8 JSON, then the ids as 16 bytes each when the JSON says `id_bytes`. The JSON holds
 * six columns made small, restored here: `parent_rel` (index minus parent index, 0 for none),
 * `step_rel`, `depth_rel`, `lane_rel` (minus the parent's value when the parent comes earlier in
 * the same buffer), and `created_at` as microseconds (`time0_us`, then `time_us` deltas, with
 * `time_text` pairs for times in another form). A buffer without the magic is plain JSON, as is a
 * string.
 * @param {any} value
 */
export function unpack(value) {
  const packed = value.packed;
  if (packed == null) return value;
  let found = unpacked.get(value);
  if (!found) {
    found = typeof packed === "string" ? JSON.parse(packed) : unpackBytes(bytesOf(packed));
    unpacked.set(value, found);
  }
  return found;
}

/** The first bytes of a packed `_dag`: "DWB1" (Python's `inspect.dag_wire.PACKED_MAGIC`). */
const PACKED_MAGIC = [0x44, 0x57, 0x42, 0x31];

/** The keys of the packed JSON that `unpackBytes` turns back into columns. */
const PACKED_ONLY = new Set([
  "id_bytes",
  "parent_rel",
  "step_rel",
  "depth_rel",
  "lane_rel",
  "time0_us",
  "time_us",
  "time_text",
]);

/** @param {any} packed @returns {Uint8Array} */
function bytesOf(packed) {
  if (packed instanceof ArrayBuffer) return new Uint8Array(packed);
  if (ArrayBuffer.isView(packed)) return new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength);
  return new Uint8Array(0);
}

/** @param {Uint8Array} bytes */
function unpackBytes(bytes) {
  const decoder = new TextDecoder();
  if (bytes.length < 8 || PACKED_MAGIC.some((b, i) => bytes[i] !== b))
    return JSON.parse(decoder.decode(bytes));
  const size = (bytes[4] | (bytes[5] << 8) | (bytes[6] << 16) | (bytes[7] << 24)) >>> 0;
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
  /** @type {any} */
  const columns = {};
  for (const key of Object.keys(wire)) if (!PACKED_ONLY.has(key)) columns[key] = wire[key];
  columns.parent = parent;
  columns.step = step;
  columns.node_depth = depth;
  columns.lane = lane;
  columns.created_at = timeTexts(wire.time0_us || 0, wire.time_us || [], pairs(wire.time_text));
  return columns;
}

/** ASCII codes of the hex digits of each byte value, high digit first. */
const HEX = (() => {
  const digits = new Uint8Array(512);
  const text = "0123456789abcdef";
  for (let i = 0; i < 256; i++) {
    digits[2 * i] = text.charCodeAt(i >> 4);
    digits[2 * i + 1] = text.charCodeAt(i & 15);
  }
  return digits;
})();

/**
 * Ids stored as 16 bytes each, as canonical lowercase UUID texts: written as ASCII into one
 * buffer, decoded once, then cut (no string is built piece by piece).
 * @param {Uint8Array} raw @param {number} count @returns {string[]}
 */
function uuidTexts(raw, count) {
  const ascii = new Uint8Array(36 * count);
  for (let k = 0, o = 0, w = 0; k < count; k++) {
    for (let j = 0; j < 16; j++, o++) {
      const b = raw[o];
      ascii[w++] = HEX[2 * b];
      ascii[w++] = HEX[2 * b + 1];
      if (j === 3 || j === 5 || j === 7 || j === 9) ascii[w++] = 45; // "-"
    }
  }
  return cut(new TextDecoder().decode(ascii), 36, count);
}

/** @param {string} text @param {number} width @param {number} count @returns {string[]} */
function cut(text, width, count) {
  const parts = new Array(count);
  for (let k = 0; k < count; k++) parts[k] = text.slice(k * width, k * width + width);
  return parts;
}

/**
 * `created_at` texts (`YYYY-MM-DDTHH:MM:SS.ffffff+00:00`, as Python writes them) from
 * microseconds since 1970: the first is `first`, each next one a delta from the one before;
 * `odd` holds the texts of another form (their delta is 0). Written as ASCII into one buffer
 * (the date and time formatted once per second), decoded once, then cut.
 * @param {number} first @param {number[]} deltas @param {Map<number, any>} odd @returns {string[]}
 */
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
      const text = new Date(whole * 1000).toISOString().slice(0, 19) + ".";
      prefix = Uint8Array.from(text, (c) => c.charCodeAt(0));
    }
    ascii.set(prefix, w);
    let fraction = (now - whole * 1e6) | 0; // 0 ≤ fraction < 1e6
    for (let i = w + 25; i >= w + 20; i--) {
      const tenth = (fraction / 10) | 0;
      ascii[i] = 48 + fraction - tenth * 10;
      fraction = tenth;
    }
    ascii.set(UTC, w + 26);
  }
  const texts = cut(new TextDecoder().decode(ascii), 32, count);
  for (const [k, text] of odd) if (k < count) texts[k] = text;
  return texts;
}

/** "+00:00" in ASCII. */
const UTC = Uint8Array.from("+00:00", (c) => c.charCodeAt(0));

/**
 * `wire` with `tail`'s checkpoints in place of those from its start on (as Python's
 * `inspect.dag.merge_wire`); `wire` itself when the tail is empty or belongs to another wire.
 * @param {any} wire @param {any} tail
 */
export function mergeTail(wire, tail) {
  if (!tail || tail.format !== DAG_WIRE_FORMAT) return wire;
  const start = tail.start || 0;
  if (tail.epoch !== wire.epoch || start < 0 || start > (wire.id || []).length) return wire;
  /** @type {any} */
  const merged = { ...tail, start: 0 };
  for (const key of COLUMNS) merged[key] = wire[key].slice(0, start).concat(tail[key]);
  for (const key of SPARSE) {
    const kept = [];
    const pairs = wire[key] || [];
    for (let i = 0; i + 1 < pairs.length; i += 2) if (pairs[i] < start) kept.push(pairs[i], pairs[i + 1]);
    merged[key] = kept.concat(tail[key] || []);
  }
  merged.graph_changed = (wire.graph_changed || [])
    .filter((/** @type {number} */ i) => i < start)
    .concat(tail.graph_changed || []);
  return merged;
}

/**
 * @param {any} wire a `_dag` in the compact form
 * @returns {Dag}
 */
function decodeColumns(wire) {
  const ids = /** @type {string[]} */ (wire.id || []);
  const count = ids.length;
  const parent = wire.parent || [];
  const strings = wire.strings || [];
  const lists = (wire.lists || []).map((/** @type {number[]} */ names) => names.map((n) => strings[n]));
  const hasChild = new Uint8Array(count);
  for (let i = 0; i < count; i++) if (parent[i] >= 0) hasChild[parent[i]] = 1;
  const interrupts = pairs(wire.interrupts);
  const errors = pairs(wire.errors);
  const findings = pairs(wire.findings);
  const broken = pairs(wire.broken_parent);
  const missing = pairs(wire.missing_parent);
  const changed = new Set(wire.graph_changed || []);
  /** @type {DagNode[]} */
  const nodes = new Array(count);
  for (let i = 0; i < count; i++) {
    const p = parent[i];
    nodes[i] = {
      id: ids[i],
      parent: p >= 0 ? ids[p] : (missing.get(i) ?? null),
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
      created_at: wire.created_at[i],
    };
  }
  // Ids sort by creation, and the columns come in id order: sort by depth, lane, then position.
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => nodes[a].depth - nodes[b].depth || nodes[a].lane - nodes[b].lane || a - b);
  return {
    thread_id: wire.thread_id || "",
    checkpoint_ns: wire.checkpoint_ns || "",
    nodes: order.map((i) => nodes[i]),
    depth: wire.depth || 0,
    lanes: wire.lanes || 0,
  };
}

/**
 * `[index, value, index, value, …]` as a Map.
 * @param {any[] | undefined} flat
 * @returns {Map<number, any>}
 */
function pairs(flat) {
  const map = new Map();
  for (let i = 0; flat && i + 1 < flat.length; i += 2) map.set(flat[i], flat[i + 1]);
  return map;
}
