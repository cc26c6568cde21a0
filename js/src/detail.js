// @ts-check
// The selected checkpoint's detail

import { drawConversation, isConversation } from "./conversation.js";
import { nameInto } from "./names.js";
import {
  cell,
  formatBytes,
  formatVersion,
  hyperscript,
  isReadonly,
  plural,
  section,
  shortId,
  table,
} from "./helpers.js";
import { drawJson } from "./json-tree.js";
import { showSelected } from "./dag.js";
import { drawSubgraphSections } from "./subgraph.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").Blob} Blob */
/** @typedef {import("./types.js").Detail} Detail */
/** @typedef {import("./types.js").Finding} Finding */
/** @typedef {import("./types.js").InterruptInfo} InterruptInfo */
/** @typedef {import("./types.js").Task} Task */
/** @typedef {import("./types.js").Write} Write */
/** @typedef {import("./types.js").RecordedCall} RecordedCall */
/** @typedef {import("./types.js").TaskCalls} TaskCalls */
/**
 * Draw a Detail: state, next, interrupts, blob versions, tasks and their writes, metadata, and
 * (unless read-only) the fork and rerun controls. Drawing the same detail twice is a no-op, as
 * Python both answers `select` and sets `_detail`.
 * @param {View} view
 * @param {Detail | null} detail
 * @param {boolean} [force] redraw even if this detail is already shown
 */
export function drawDetail(view, detail, force = false) {
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
  view.fullValues = new Map();
  const h = hyperscript(view.doc);
  if (!detail) {
    box.replaceChildren(
      h(
        "p",
        { class: "dd-empty" },
        "Click a checkpoint to see its state. Shift-click another to diff the two.",
      ),
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
      detail.next && detail.next.length
        ? h("ul", { class: "dd-inline-list" }, ...detail.next.map((name) => h("li", {}, h("code", {}, name))))
        : h("span", { class: "dd-empty" }, "nothing: the run ends here"),
    ),
    ...(detail.findings && detail.findings.length
      ? [section(h, "Findings", "dd-findings", drawFindings(view, detail.findings))]
      : []),
    ...(detail.interrupts && detail.interrupts.length
      ? [section(h, "Interrupts", "dd-interrupts", drawInterrupts(view, detail.interrupts, readonly))]
      : []),
    section(h, "Blob versions", "dd-blobs", drawBlobs(view, detail.blobs || [])),
    section(
      h,
      "Tasks and pending writes",
      "dd-tasks",
      drawTasks(view, detail.tasks || [], detail.writes || []),
    ),
    ...(detail.calls && detail.calls.length
      ? [section(h, "Recorded calls", "dd-calls", drawCalls(view, detail.calls))]
      : []),
    ...drawSubgraphSections(view, detail),
    section(
      h,
      "Metadata",
      "dd-metadata",
      drawJson(view, detail.metadata || {}, 1),
      h("div", { class: "dd-subhead" }, "config"),
      drawJson(view, detail.config || {}, 0),
    ),
  );
}

/** @param {View} view @param {Detail} detail @param {boolean} readonly */
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
      h("code", { class: "dd-id", title: "checkpoint id" }, detail.id),
    ),
    h(
      "div",
      { class: "dd-detail-sub" },
      detail.created_at || "",
      detail.parent
        ? h("span", {}, " · parent ", h("code", { title: detail.parent }, `…${shortId(detail.parent)}`))
        : "",
    ),
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
            title: "Answer the rerun's model and tool calls from the thread's recording",
          },
          h("input", { type: "checkbox", class: "dd-replay" }),
          " replay recorded calls",
        ),
        h("span", { class: "dd-inline-error dd-rerun-error", role: "alert", hidden: true }),
      ),
    );
  }
  return header;
}

/**
 * The reassembled state: one collapsible JSON tree per channel; editable channels get an Edit
 * button, and the fork bar sends the edited ones.
 * @param {View} view @param {Detail} detail @param {boolean} readonly
 */
function drawValues(view, detail, readonly) {
  const h = hyperscript(view.doc);
  const values = detail.values || {};
  const reducers = detail.reducers || {};
  const editable = readonly ? [] : detail.editable || [];
  const channels = [...new Set([...Object.keys(values), ...editable])];
  const rows = channels.map((channel) => {
    const has = Object.prototype.hasOwnProperty.call(values, channel);
    return h(
      "div",
      { class: "dd-channel-row", "data-channel": channel },
      h(
        "div",
        { class: "dd-channel-head" },
        nameInto(h("span", { class: "dd-channel" }), channel),
        reducers[channel]
          ? h(
              "span",
              {
                class: "dd-reducer",
                title: "an edit goes through this reducer unless you replace the value",
              },
              `reducer: ${reducers[channel]}`,
            )
          : "",
        (detail.clipped || []).includes(channel)
          ? h(
              "span",
              { class: "dd-clipped" },
              h("span", { class: "dd-muted" }, "shown in part "),
              readonly
                ? ""
                : h(
                    "button",
                    {
                      class: "dd-button dd-small",
                      type: "button",
                      "data-action": "show-all",
                      "data-channel": channel,
                    },
                    "Show all",
                  ),
            )
          : "",
        editable.includes(channel)
          ? h(
              "button",
              { class: "dd-button dd-small", type: "button", "data-action": "edit", "data-channel": channel },
              "Edit",
            )
          : "",
      ),
      has ? drawChannelValue(view, values[channel]) : h("span", { class: "dd-empty" }, "(not set)"),
    );
  });
  const list = h(
    "div",
    { class: "dd-values" },
    ...(rows.length ? rows : [h("span", { class: "dd-empty" }, "(empty state)")]),
  );
  if (readonly || !editable.length) return list;
  const asNode = h(
    "select",
    { class: "dd-as-node", "aria-label": "as node" },
    h("option", { value: "" }, "(no node)"),
    ...(detail.nodes || []).map((name) => h("option", { value: name }, name)),
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
      h("span", { class: "dd-inline-error dd-fork-error", role: "alert", hidden: true }),
    ),
  );
}

/**
 * A channel's value: a conversation (a list of chat messages) as one, its raw value a click
 * away; anything else as a JSON tree.
 * @param {View} view @param {any} value
 */
function drawChannelValue(view, value) {
  if (!isConversation(value)) return drawJson(view, value, 2);
  const h = hyperscript(view.doc);
  return h(
    "div",
    { class: "dd-chat" },
    drawConversation(h, value),
    h("details", { class: "dd-raw" }, h("summary", {}, "raw value"), drawJson(view, value, 2)),
  );
}

/**
 * The model, tool and once() calls recorded by the tasks whose step saved this checkpoint: per
 * task its node, then one row per call (index, kind, name, input → output, tokens, latency),
 * marked "replayed" or "live" when the task ran inside a replay.
 * @param {View} view @param {TaskCalls[]} tasks
 */
function drawCalls(view, tasks) {
  const h = hyperscript(view.doc);
  return h(
    "div",
    { class: "dd-call-tasks" },
    ...tasks.map((task) =>
      h(
        "div",
        { class: "dd-call-task", "data-task": task.task_id, "data-node": task.node },
        h("div", { class: "dd-subhead" }, h("code", {}, task.node), ` task …${shortId(task.task_id)}`),
        h("ol", { class: "dd-call-list" }, ...task.calls.map((call) => drawCall(h, call))),
      ),
    ),
  );
}

/** @param {ReturnType<typeof hyperscript>} h @param {RecordedCall} call */
function drawCall(h, call) {
  const mark =
    call.replayed === true
      ? h("span", { class: "dd-call-mark dd-call-replayed" }, "replayed")
      : call.replayed === false
        ? h("span", { class: "dd-call-mark dd-call-live" }, "live")
        : "";
  const facts = [
    call.tokens ? `${call.tokens.total} tokens` : "",
    call.ms === null || call.ms === undefined ? "" : `${call.ms} ms`,
  ].filter(Boolean);
  return h(
    "li",
    { class: "dd-call", "data-kind": call.kind, "data-index": String(call.i) },
    h("code", {}, `#${call.i} ${call.kind} ${call.name}`),
    " ",
    mark,
    h("div", { class: "dd-call-io dd-muted" }, `${call.input || ""} → ${call.error || call.output || ""}`),
    facts.length ? h("div", { class: "dd-call-facts dd-muted" }, facts.join(" · ")) : "",
  );
}

/**
 * What the run let pass here as LangGraph does: one item per finding, its code, the node and
 * key it concerns, and its message (text, never markup).
 * @param {View} view @param {Finding[]} findings
 */
function drawFindings(view, findings) {
  const h = hyperscript(view.doc);
  return h(
    "ul",
    { class: "dd-finding-list" },
    ...findings.map((item) =>
      h(
        "li",
        { class: "dd-finding", "data-code": item.code },
        h("code", { class: "dd-finding-code" }, item.code),
        item.node ? h("span", { class: "dd-muted" }, ` node ${item.node}`) : "",
        item.key ? h("span", { class: "dd-muted" }, ` key ${item.key}`) : "",
        h("div", { class: "dd-finding-message" }, item.message),
      ),
    ),
  );
}

/**
 * Pending interrupts with their ids and values; unless read-only, one answer box per id.
 * @param {View} view @param {InterruptInfo[]} interrupts @param {boolean} readonly
 */
function drawInterrupts(view, interrupts, readonly) {
  const h = hyperscript(view.doc);
  const items = interrupts.map((item) =>
    h(
      "div",
      { class: "dd-interrupt", "data-interrupt-id": item.id },
      h(
        "div",
        { class: "dd-interrupt-head" },
        h("code", { class: "dd-interrupt-id" }, item.id),
        item.node ? h("span", { class: "dd-muted" }, ` in ${item.node}`) : "",
      ),
      drawJson(view, item.value, 2),
      readonly
        ? ""
        : h("textarea", {
            class: "dd-answer",
            rows: "2",
            spellcheck: "false",
            "data-interrupt-id": item.id,
            placeholder: 'answer as JSON, e.g. "yes" or {"approved": true}',
            "aria-label": `answer to interrupt ${item.id}`,
          }),
    ),
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
      h("span", { class: "dd-inline-error dd-resume-error", role: "alert", hidden: true }),
    ),
  );
}

/**
 * The blob versions table: per channel its version, whether the blob was written here or is
 * shared with the parent, and its size.
 * @param {View} view @param {Blob[]} blobs
 */
function drawBlobs(view, blobs) {
  const h = hyperscript(view.doc);
  if (!blobs.length) return h("span", { class: "dd-empty" }, "no channel has a version yet");
  const fresh = blobs.filter((blob) => blob.status === "new").length;
  const rows = blobs.map((blob) =>
    h(
      "tr",
      { class: `dd-blob-${blob.status}`, "data-channel": blob.channel },
      cell(h, blob.channel, "dd-channel"),
      cell(h, h("code", { title: String(blob.version) }, formatVersion(blob.version))),
      cell(
        h,
        h(
          "span",
          { class: `dd-pill dd-blob-${blob.status}` },
          blob.status === "new" ? "new here" : "shared with parent",
        ),
      ),
      cell(h, formatBytes(blob.size), "dd-num"),
    ),
  );
  return h(
    "div",
    {},
    table(h, "dd-blob-table", ["channel", "version", "blob", "size"], rows),
    h(
      "p",
      { class: "dd-muted dd-blob-summary" },
      `${fresh} of ${plural(blobs.length, "blob")} written at this checkpoint`,
    ),
  );
}

/**
 * The next step's tasks — errors, interrupts, results — each with its pending writes.
 * @param {View} view @param {Task[]} tasks @param {Write[]} writes
 */
function drawTasks(view, tasks, writes) {
  const h = hyperscript(view.doc);
  /** @type {Map<string, Write[]>} */
  const byTask = new Map();
  for (const write of writes) {
    const list = byTask.get(write.task_id);
    if (list) list.push(write);
    else byTask.set(write.task_id, [write]);
  }
  const known = new Set(tasks.map((task) => task.id));
  const orphans = [...byTask.keys()].filter((id) => !known.has(id));
  if (!tasks.length && !orphans.length) return h("span", { class: "dd-empty" }, "no tasks");

  const writesTable = (/** @type {Write[] | undefined} */ list) =>
    list && list.length
      ? table(
          h,
          "dd-writes-table",
          null,
          list.map((write) =>
            h(
              "tr",
              { "data-channel": write.channel },
              cell(h, write.channel, "dd-channel"),
              cell(h, drawJson(view, write.value, 0)),
            ),
          ),
        )
      : h("div", { class: "dd-muted" }, "no pending writes");
  const items = tasks.map((task) =>
    h(
      "div",
      { class: `dd-task${task.error ? " dd-task-error" : ""}`, "data-task-id": task.id },
      h(
        "div",
        { class: "dd-task-head" },
        h("strong", {}, task.name),
        h("code", { class: "dd-muted", title: task.id }, ` …${shortId(task.id)}`),
        task.interrupts && task.interrupts.length
          ? h("span", { class: "dd-pill dd-pill-interrupt" }, plural(task.interrupts.length, "interrupt"))
          : "",
        task.error || task.failure
          ? h("span", { class: "dd-pill dd-pill-error" }, task.failure || "error")
          : "",
      ),
      task.error ? h("pre", { class: "dd-task-error-text" }, task.error) : "",
      task.result != null
        ? h("div", {}, h("span", { class: "dd-subhead" }, "result "), drawJson(view, task.result, 0))
        : "",
      writesTable(byTask.get(task.id)),
    ),
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
          h("code", { class: "dd-muted", title: id }, ` …${shortId(id)}`),
        ),
        writesTable(byTask.get(id)),
      ),
    );
  }
  return h("div", { class: "dd-task-list" }, ...items);
}
