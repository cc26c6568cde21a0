// @ts-check
// Types (docs/widget-protocol.md)
/**
 * @typedef {"input" | "loop" | "update" | "fork"} Source
 * @typedef {{ id: string, parent: string | null, step: number, source: Source, next: string[],
 *   writers: string[], interrupts: number, errors: number, is_head: boolean, is_latest: boolean,
 *   depth: number, lane: number, created_at: string, graph_changed: boolean,
 *   findings?: number, broken_parent?: string | null }} DagNode
 * @typedef {{ thread_id: string, checkpoint_ns?: string, nodes: DagNode[], depth: number,
 *   lanes: number }} Dag
 * @typedef {{ channel: string, version: string, status: "new" | "shared", size: number | null }} Blob
 * @typedef {{ id: string, value: any, node: string, task_id: string }} InterruptInfo
 * @typedef {{ id: string, name: string, error: string | null, interrupts: InterruptInfo[],
 *   result: any, failure: string | null }} Task
 * @typedef {{ task_id: string, node: string, channel: string, value: any }} Write
 * @typedef {{ code: string, message: string, node: string | null, key: string | null }} Finding
 * @typedef {{ i: number, kind: string, name: string, input: string | null, output: string | null,
 *   tokens: { input: number, output: number, total: number } | null, ms: number | null,
 *   replayed: boolean | null, error: string | null }} RecordedCall
 * @typedef {{ task_id: string, node: string, from: string, calls: RecordedCall[] }} TaskCalls
 * @typedef {{ id: string, parent: string | null, step: number, source: string, next: string[],
 *   created_at: string, metadata: object, config: object, values: Record<string, any>,
 *   blobs: Blob[], tasks: Task[], writes: Write[], interrupts: InterruptInfo[],
 *   editable: string[], nodes: string[], clipped?: string[], reducers?: Record<string, string>,
 *   findings?: Finding[], calls?: TaskCalls[] }} Detail
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
 *   save_changes(): void, widget_manager?: any }} Model
 *
 * One mark of the DAG (js/src/layout.js): a checkpoint (`kind` "node", `id` its id) or a
 * collapsed linear run of `count` checkpoints from `node` to `last` (`kind` "run", `gap` the
 * index of its depth range in `DagLayout.gaps`); `slot` is its column, `row` its branch's row,
 * `x`/`y` its centre in SVG pixels.
 * @typedef {{ kind: "node" | "run", id: string, node: DagNode, last: DagNode, count: number,
 *   gap: number, slot: number, row: number, x: number, y: number }} DagItem
 *
 * Where each checkpoint sits in the DAG's SVG, and who its neighbours are: `pos` holds the
 * checkpoints drawn as their own mark, `itemOf` every checkpoint's mark (its run's when
 * collapsed), `slots` the marks by column, `rows` by row, `rowNodes` each row's checkpoints by
 * depth, `gaps` the collapsed depth ranges, `latest` the newest checkpoint,
 * `main` the main run's latest one (the end of the first branch, where forks made later never
 * lead), `path` the ids from the root to `main`.
 * @typedef {{ byId: { get(id: string): DagNode | undefined, has(id: string): boolean, size: number,
 *     values(): IterableIterator<DagNode> },
 *   children: { get(id: string): DagNode[] | undefined },
 *   depthOf: { get(id: string): number | undefined },
 *   pos: Map<string, {x: number, y: number}>,
 *   itemOf: { get(id: string): DagItem | undefined, size: number }, items: DagItem[], slots: DagItem[][], rows: DagItem[][],
 *   rowNodes: DagNode[][], gaps: Array<{ from: number, to: number, slot: number }>,
 *   path: Set<string>, latest: string, main: string, edgePath: string, forkPath: string, pathPath: string,
 *   rowCount: number, width: number, height: number,
 *   geometry: { col: number, row: number, pad: number, radius: number } }} DagLayout
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
/**
 * The DAG's zoom range (1 = DAG_GEOMETRY's pixels); below `text` its marks drop their labels,
 * below `dots` checkpoints are dots; `step` is one zoom in or out; `first` is the first view's,
 * at which the marks' 10 px labels (widget.css: .dd-step, .dd-writers) are 11 px, readable.
 */
export const ZOOM = { min: 0.02, max: 2, text: 0.6, dots: 0.25, step: 1.25, first: 1.1 };
/** Above this many marks near the view, the DAG draws dots instead of marks. */
export const MARK_LIMIT = 1500;
