// @ts-check
// Types (docs/widget-protocol.md)
/**
 * @typedef {"input" | "loop" | "update" | "fork"} Source
 * @typedef {{ id: string, parent: string | null, step: number, source: Source, next: string[],
 *   writers: string[], interrupts: number, errors: number, is_head: boolean, is_latest: boolean,
 *   depth: number, lane: number, created_at: string, graph_changed: boolean,
 *   broken_parent?: string | null }} DagNode
 * @typedef {{ thread_id: string, checkpoint_ns?: string, nodes: DagNode[], depth: number,
 *   lanes: number }} Dag
 * @typedef {{ channel: string, version: string, status: "new" | "shared", size: number | null }} Blob
 * @typedef {{ id: string, value: any, node: string, task_id: string }} InterruptInfo
 * @typedef {{ id: string, name: string, error: string | null, interrupts: InterruptInfo[],
 *   result: any, failure: string | null }} Task
 * @typedef {{ task_id: string, node: string, channel: string, value: any }} Write
 * @typedef {{ id: string, parent: string | null, step: number, source: string, next: string[],
 *   created_at: string, metadata: object, config: object, values: Record<string, any>,
 *   blobs: Blob[], tasks: Task[], writes: Write[], interrupts: InterruptInfo[],
 *   editable: string[], nodes: string[], clipped?: string[], reducers?: Record<string, string>
 * }} Detail
 * @typedef {{ id: string, x: number, y: number, count: number, reruns: number }} TopologyNode
 * @typedef {{ source: string, target: string, conditional: boolean }} TopologyEdge
 * @typedef {{ nodes: TopologyNode[], edges: TopologyEdge[], width: number, height: number,
 *   svg: string | null }} Topology
 * @typedef {{ action: "fork" | "rerun" | "resume", code: string }} CodeEntry
 * @typedef {{ channel: string, change: "added" | "removed" | "changed", old: any, new: any }} DiffEntry
 * @typedef {{ thread_id: string, checkpoint_ns?: string, dag: any, details: Record<string, Detail>,
 *   detail_defaults?: { editable?: string[], nodes?: string[] }, topology: Topology | null }} ExportData
 *
 * The part of anywidget's model this module uses.
 * @typedef {{ get(name: string): any, set(name: string, value: any): void,
 *   on(name: string, fn: Function): void, off(name?: string | null, fn?: Function | null): void,
 *   send(content: object, callbacks?: any, buffers?: any[]): void,
 *   save_changes(): void }} Model
 *
 * Where each checkpoint sits in the DAG's SVG, and who its neighbours are.
 * @typedef {{ byId: Map<string, DagNode>, pos: Map<string, {x: number, y: number}>,
 *   children: Map<string, DagNode[]>, lanes: Map<number, DagNode[]>, columns: DagNode[][],
 *   edgePath: string, forkPath: string, width: number, height: number }} DagLayout
 *
 * A rectangle of the DAG's SVG, in SVG pixels.
 * @typedef {{ left: number, top: number, right: number, bottom: number }} Area
 */

/** How long a request may go unanswered before the widget says so. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** While a view is shown, it asks Python this often whether the thread changed (`watch`). */
export const WATCH_EVERY_MS = 2_000;

/** DAG geometry in SVG pixels: column and row pitch, margin, mark radius. */
export const DAG_GEOMETRY = { col: 64, row: 80, pad: 46, radius: 10 };

export const SVG_NS = "http://www.w3.org/2000/svg";
export const SOURCE_LETTER = { input: "I", loop: "L", update: "U", fork: "F" };
/** Arrays and objects longer than this show their first items and a "… N more" line. */
export const JSON_ROW_LIMIT = 200;
/** Key of the class name in an object the kernel loaded without its class (docs/storage.md). */
export const TYPE_KEY = "__type__";
