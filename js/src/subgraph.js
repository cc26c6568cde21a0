// @ts-check
// Subgraph namespaces: a subgraph's checkpoints, nested under the task that ran it.
// A checkpoint's detail asks which subgraphs its tasks ran (`subgraphs`); each gets a toggle on
// the row of its task, collapsed; expanding one reads that namespace's checkpoints
// (`subgraph`) as a small tree, and clicking one selects it with its namespace (select.js). The
// buttons are `data-action` buttons, dispatched by the root's one click handler (actions.js).

import { hyperscript, isReadonly, section } from "./helpers.js";

/** Joins the levels of a nested namespace (durable_debug.checkpoint.names.NS_SEP; a test compares them). */
export const NS_SEP = "|";

/** @typedef {import("./index.js").View} View */
/** @typedef {import("./types.js").Detail} Detail */
/** @typedef {import("./types.js").DagNode} DagNode */
/**
 * @typedef {{ checkpoint_ns: string, enclosing: string, node: string, parent: string | null }} Namespace
 */

/**
 * The detail's subgraph sections: where the selected checkpoint lives (inside a subgraph, with
 * a way back to the task's checkpoint), and the subgraphs this checkpoint's tasks ran. The
 * namespaces are asked for once the sections are drawn; an export shows none.
 * @param {View} view @param {Detail} detail @returns {HTMLElement[]}
 */
export function drawSubgraphSections(view, detail) {
  if (isReadonly(view)) return []; // an export holds one namespace; subgraphs open in Jupyter
  const h = hyperscript(view.doc);
  const here = view.model.get("_selected_ns") || "";
  const list = h("div", { class: "dd-subgraph-list" }, h("span", { class: "dd-muted" }, "reading…"));
  const sections = [];
  if (here) {
    const back = h(
      "button",
      { type: "button", class: "dd-subgraph-up", "data-action": "subgraph-up", "data-ns": here },
      "↑ the task's checkpoint",
    );
    const where = h("div", { class: "dd-subgraph-where" }, "in subgraph ", h("code", {}, here), " ", back);
    // This namespace's own tree, open: its other checkpoints one click (or Shift-click) away.
    const node = (here.split(NS_SEP).pop() || "").split(":")[0];
    const own = subgraphItem(h, here, node);
    sections.push(section(h, "Subgraph", "dd-subgraph-here", where, own));
    toggleSubgraph(view, /** @type {Element} */ (own.querySelector(".dd-subgraph-toggle")));
  }
  sections.push(section(h, "Subgraphs run here", "dd-subgraphs", list));
  view.requests.request("subgraphs").then(
    (reply) => fillSubgraphs(view, list, detail.id, here, reply.namespaces || []),
    (error) => list.replaceChildren(h("span", { class: "dd-error-inline" }, error.message)),
  );
  return sections;
}

/**
 * Put one toggle per subgraph run from checkpoint `id` on its task's row (in the section when
 * the detail lists no such task).
 * @param {View} view @param {Element} list @param {string} id @param {string} here
 * @param {Namespace[]} namespaces
 */
function fillSubgraphs(view, list, id, here, namespaces) {
  const h = hyperscript(view.doc);
  const mine = namespaces.filter((ns) => ns.enclosing === here && ns.parent === id);
  if (!mine.length) {
    list.replaceChildren(h("span", { class: "dd-empty" }, "no task of this checkpoint ran a subgraph"));
    return;
  }
  /** @type {Map<string, Element>} */
  const taskRows = new Map();
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
    ...(loose.length ? loose : [h("span", { class: "dd-empty" }, "shown under their tasks above")]),
  );
}

/**
 * A subgraph's collapsed toggle and the (empty, hidden) place of its tree.
 * @param {ReturnType<typeof hyperscript>} h @param {string} namespace @param {string} node
 * @returns {HTMLElement}
 */
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
        "data-node": node,
      },
      `▸ ${node}`,
    ),
    h("div", { class: "dd-subgraph-tree", hidden: "" }),
  );
}

/**
 * Expand (reading that namespace's checkpoints) or collapse one subgraph.
 * @param {View} view @param {Element} toggle
 */
export function toggleSubgraph(view, toggle) {
  const h = hyperscript(view.doc);
  const tree = /** @type {HTMLElement | null} */ (toggle.parentElement?.querySelector(".dd-subgraph-tree"));
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
    (error) => tree.replaceChildren(h("span", { class: "dd-error-inline" }, error.message)),
  );
}

/**
 * One namespace's checkpoints as a small tree (children indented under their parent, oldest
 * first); each is a button that selects it like any checkpoint.
 * @param {View} view @param {string} namespace @param {DagNode[]} nodes @returns {HTMLElement}
 */
function drawSubgraphTree(view, namespace, nodes) {
  const h = hyperscript(view.doc);
  const ids = new Set(nodes.map((node) => node.id));
  /** @type {Map<string, DagNode[]>} */
  const children = new Map();
  for (const node of [...nodes].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const parent = node.parent && ids.has(node.parent) ? node.parent : "";
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent)?.push(node);
  }
  /** @param {string} parent @returns {HTMLElement} */
  const branch = (parent) =>
    h(
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
              title: node.id,
            },
            `step ${node.step} · next: ${next}`,
          ),
          children.has(node.id) ? branch(node.id) : "",
        );
      }),
    );
  return branch("");
}
