// @ts-check
// Health: the store's health tables (`health` request, inspect.health), in a panel of its own

import { cell, formatBytes, hyperscript, isReadonly, listen, round1, table, watch } from "./helpers.js";
import { createRequester } from "./requests.js";

/** @typedef {import("./index.js").H} H */
/** @typedef {import("./index.js").View} View */
/** Seconds an interrupt may wait before its thread is listed; the CLI's default too. */
export const HEALTH_SLA_S = 3600;
/** How long the panel waits for a report: reading every thread of a big store takes a while. */
export const HEALTH_TIMEOUT_MS = 300_000;

/**
 * Add the toolbar's **Health** button and its panel: opening it (or its Refresh) asks Python for
 * `health` and draws every table as text; a refusal is shown as its sentence. Hidden in the
 * read-only export, which has no kernel to ask. Everything it adds is removed by cleanup.
 * @param {View} view
 */
export function mountHealth(view) {
  const h = hyperscript(view.doc);
  const button = h(
    "button",
    {
      class: "dd-button dd-small dd-health-button",
      type: "button",
      "data-health-action": "toggle",
      "aria-expanded": "false",
      title: "The store's health: write latency, waiting threads, failures, size",
    },
    "Health",
  );
  const sla = h("input", {
    class: "dd-health-sla",
    type: "number",
    min: "0",
    step: "60",
    value: String(HEALTH_SLA_S),
    "aria-label": "list threads waiting on an interrupt longer than this many seconds",
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
        "Refresh",
      ),
      h("button", { class: "dd-button dd-small", type: "button", "data-health-action": "close" }, "Close"),
    ),
    body,
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
    const seconds = Number(/** @type {HTMLInputElement} */ (sla).value);
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
      },
    );
  };
  const show = (/** @type {boolean} */ open) => {
    panel.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (open) ask();
    else ticket++; // a late answer no longer draws
  };
  const onClick = (/** @type {Event} */ event) => {
    const target = /** @type {Element} */ (event.target);
    const hit = target && target.closest ? target.closest("[data-health-action]") : null;
    const action = hit && hit.getAttribute("data-health-action");
    if (action === "toggle") show(Boolean(panel.hidden));
    else if (action === "refresh") ask();
    else if (action === "close") show(false);
  };
  listen(view, button, "click", onClick);
  listen(view, panel, "click", onClick);
  listen(view, sla, "keydown", (event) => {
    if (/** @type {KeyboardEvent} */ (event).key === "Enter") ask();
  });
  const readonly = () => {
    button.hidden = isReadonly(view);
    if (button.hidden) show(false);
  };
  watch(view, "change:_readonly", readonly);
  readonly();
}

/**
 * One titled table per health table, cells as text; an empty table says "none".
 * @param {H} h @param {{ sla_s: number, tables: { name: string, columns: string[], rows: any[][] }[] }} reply
 */
function healthTables(h, reply) {
  return (reply.tables || []).map((t) => {
    const title = t.name === "waiting" ? `waiting longer than ${reply.sla_s} s` : t.name;
    const rows = t.rows.map((row) =>
      h(
        "tr",
        {},
        ...row.map((value, i) =>
          cell(h, healthCell(t.columns[i], value), typeof value === "number" ? "dd-num" : ""),
        ),
      ),
    );
    const content = rows.length
      ? table(h, `dd-health-table dd-health-${t.name}`, t.columns, rows)
      : h("div", { class: "dd-empty" }, "none");
    return h("div", { class: "dd-health-item", "data-health": t.name }, h("h5", {}, title), content);
  });
}

/**
 * A health cell as text: bytes readable, a rate as a percentage, a missing value as "—".
 * @param {string} column @param {any} value
 */
export function healthCell(column, value) {
  if (value === null || value === undefined) return "—";
  if (typeof value !== "number") return String(value);
  if (/bytes$/.test(column)) return formatBytes(value);
  if (/rate$/.test(column)) return `${round1(value * 100)} %`;
  return String(value);
}
