// @ts-check
// A diff's rows (inspect.diff_view): per channel, the changed paths first, each with its old
// and new value cut short, a long string as the lines around each change, and how many paths
// the answer left out to stay light.

import { cell, compactJson, plural } from "./helpers.js";

/** @typedef {import("./index.js").H} H */

/**
 * The table rows of a diff, one per changed path under a row per channel.
 * @param {H} h @param {any[]} entries
 * @returns {HTMLElement[]}
 */
export function diffRows(h, entries) {
  const json = (/** @type {any} */ value, /** @type {boolean} */ shown) =>
    h("pre", { class: "dd-json-text" }, shown ? compactJson(value) : "");
  /** @type {HTMLElement[]} */
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
        onlyItself || !changes.length
          ? cell(h, json(entry.new, entry.change !== "removed"))
          : cell(h, plural(changes.length + (entry.more || 0), "changed path"), "dd-muted"),
      ),
    );
    if (onlyItself) continue;
    for (const change of changes) {
      const value = change.lines
        ? [h("td", { colspan: "2" }, lineDiff(h, change.lines))]
        : [
            cell(h, json(change.old, change.change !== "added")),
            cell(h, json(change.new, change.change !== "removed")),
          ];
      rows.push(
        h(
          "tr",
          { class: `dd-change-${change.change} dd-diff-path`, "data-path": change.path },
          cell(h, change.path, "dd-path"),
          cell(h, h("span", { class: `dd-pill dd-change-${change.change}` }, change.change)),
          ...value,
        ),
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
            `… ${plural(entry.more, "more changed path")}, left out to keep the diff light: open the checkpoints to see them`,
          ),
        ),
      );
    }
  }
  return rows;
}

/**
 * A unified line diff: removed lines, added lines and their context, each its own line.
 * @param {H} h @param {string[]} lines
 */
function lineDiff(h, lines) {
  return h(
    "pre",
    { class: "dd-line-diff" },
    ...lines.map((line) => {
      const kind = line.startsWith("+")
        ? "add"
        : line.startsWith("-")
          ? "del"
          : line.startsWith("@@")
            ? "hunk"
            : "ctx";
      return h("span", { class: `dd-line dd-line-${kind}` }, `${line}\n`);
    }),
  );
}
