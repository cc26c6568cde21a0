// @ts-check
// "Show all" a page at a time: a cut value is replaced by its first page (`value` with `page`),
// and **Show more** appends the next, so a 2 MB string never lands in the page at once.

import { hyperscript, inNamespace } from "./helpers.js";
import { drawJson } from "./json-tree.js";

/** @typedef {import("./index.js").View} View */

/**
 * Replace the cut value of `channel` in the detail with its first page.
 * @param {View} view @param {string} channel @param {(error: Error) => void} onError
 */
export function showPages(view, channel, onError) {
  const detail = view.detail;
  if (!detail) return;
  const row = [...view.parts.detail.querySelectorAll(".dd-channel-row")].find(
    (el) => el.getAttribute("data-channel") === channel,
  );
  if (!row) return;
  const h = hyperscript(view.doc);
  const pages = h("div", { class: "dd-whole-value dd-pages" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { class: "dd-button dd-small dd-show-more", type: "button", hidden: true }, "Show more")
  );
  const status = h("span", { class: "dd-muted dd-page-status" });
  let asking = false;
  const ask = (/** @type {number} */ offset) => {
    if (asking) return;
    asking = true;
    view.requests
      .request("value", { checkpoint_id: detail.id, ...inNamespace(view), channel, page: offset })
      .then(
        (reply) => {
          asking = false;
          if (view.detail !== detail) return;
          if (reply.kind === "text") pages.append(h("pre", { class: "dd-json-text dd-page" }, reply.value));
          else pages.append(h("div", { class: "dd-page" }, drawJson(view, reply.value, 1)));
          const shown = reply.next === null ? reply.total : reply.next;
          const unit = reply.kind === "text" ? "characters" : reply.kind === "value" ? "" : "items";
          status.textContent = unit
            ? `${shown.toLocaleString("en")} of ${reply.total.toLocaleString("en")} ${unit}`
            : "";
          more.hidden = reply.next === null;
          more.onclick = () => ask(reply.next);
        },
        (error) => {
          asking = false;
          onError(error);
        },
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
