// @ts-check
// What a chat model is writing while a run goes (`_live_text`: a run started here, or one
// watched whose model streams): each message's text so far under the name of the node writing
// it, as plain text, in the topology panel under the drawing where that node is highlighted
// as running; emptied, and hidden, once the step's checkpoint lands.

import { hyperscript } from "./helpers.js";
import { nameInto } from "./names.js";

/** @typedef {import("./index.js").View} View */
/** @typedef {{ node: string, id: string, text: string, chars: number, cut: boolean }} LiveEntry */

/** Draw `_live_text` into the view's live box. @param {View} view */
export function drawLiveText(view) {
  const box = view.parts.live;
  const entries = /** @type {LiveEntry[]} */ (view.model.get("_live_text") || []);
  const h = hyperscript(view.doc);
  box.replaceChildren(
    ...entries.map((entry) =>
      h(
        "div",
        { class: "dd-live-entry", "data-node": entry.node, "data-message": entry.id },
        nameInto(h("span", { class: "dd-live-node" }), entry.node || "a chat model"),
        h("span", { class: "dd-live-note dd-muted" }, liveNote(entry)),
        h("pre", { class: "dd-live-text" }, entry.text),
      ),
    ),
  );
  box.hidden = !entries.length;
  // The words being written are at the end: keep them in view.
  for (const pre of box.querySelectorAll(".dd-live-text")) pre.scrollTop = pre.scrollHeight;
}

/** What goes after the node's name. @param {LiveEntry} entry */
export function liveNote(entry) {
  return entry.cut ? ` is writing… (the end of ${entry.chars} characters)` : " is writing…";
}
