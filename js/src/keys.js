// @ts-check
// Keyboard: Escape hands the keyboard back to the notebook (its shortcuts work again at once),
// j/k move along the DAG like the arrows, Enter opens the selected checkpoint's detail, and
// "?" (or the toolbar's ? button) shows every shortcut in a popover.

import { hyperscript, listen } from "./helpers.js";
import { neighbour } from "./layout.js";
import { goTo } from "./select.js";

/** @typedef {import("./index.js").View} View */

/** The shortcuts the help lists: [keys, what they do]. */
export const SHORTCUTS = [
  ["← → ↑ ↓", "move to the parent, the child, the branch above or below"],
  ["j / k", "the next / the previous checkpoint (as → / ←)"],
  ["Home / End", "the first / the latest checkpoint"],
  ["Enter", "open the selected checkpoint's detail"],
  ["n / N, p", "next / previous match of the search"],
  ["+ / −, 0, 1", "zoom in / out, fit the whole thread, 100 %"],
  ["Shift-click", "diff two checkpoints"],
  ["?", "show or hide this help"],
  ["Escape", "close this help, else give the keyboard back to the notebook"],
];

/** j and k as the arrows they stand for on the DAG (time runs left to right). */
const ALIASES = /** @type {Record<string, string>} */ ({ j: "ArrowRight", k: "ArrowLeft" });

/**
 * Add the help button and popover, and the keys above, to a view.
 * @param {View} view
 */
export function mountKeys(view) {
  const h = hyperscript(view.doc);
  const help = h(
    "div",
    { class: "dd-help", role: "dialog", "aria-label": "keyboard shortcuts", hidden: true, tabindex: "-1" },
    h("h4", {}, "Keyboard"),
    h(
      "table",
      { class: "dd-help-table" },
      ...SHORTCUTS.map(([keys, what]) => h("tr", {}, h("th", {}, keys), h("td", {}, what))),
    ),
  );
  const button = h(
    "button",
    {
      class: "dd-button dd-small dd-help-button",
      type: "button",
      title: "Keyboard shortcuts (?)",
      "aria-label": "keyboard shortcuts",
      "aria-expanded": "false",
    },
    "?",
  );
  view.parts.refresh.after(button);
  view.parts.refresh.parentElement?.after(help);
  view.parts.help = help;
  view.cleanups.push(() => {
    button.remove();
    help.remove();
  });
  const toggle = (/** @type {boolean} */ open) => {
    help.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
  };
  listen(view, button, "click", () => toggle(Boolean(help.hidden)));
  listen(view, view.parts.dagScroll, "keydown", (event) =>
    onDagExtraKey(view, /** @type {KeyboardEvent} */ (event)),
  );
  listen(view, view.root, "keydown", (event) => {
    const key = /** @type {KeyboardEvent} */ (event);
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

/** @param {EventTarget | null} target */
function isTextEntry(target) {
  const el = /** @type {Element | null} */ (target);
  if (!el || !el.tagName) return false;
  const tag = el.tagName.toLowerCase();
  return (
    tag === "textarea" || tag === "select" || (tag === "input" && el.getAttribute("type") !== "checkbox")
  );
}

/**
 * j/k move like the arrows; Enter opens the detail of the selected checkpoint.
 * @param {View} view @param {KeyboardEvent} event
 */
function onDagExtraKey(view, event) {
  if (!view.layout || event.ctrlKey || event.metaKey || event.altKey) return;
  const arrow = ALIASES[event.key];
  if (arrow) {
    event.preventDefault();
    goTo(view, neighbour(view.layout, view.selected, arrow));
  } else if (event.key === "Enter" && view.selected) {
    event.preventDefault();
    const detail = /** @type {HTMLElement} */ (view.parts.detail);
    if (!detail.hasAttribute("tabindex")) detail.setAttribute("tabindex", "-1");
    detail.focus();
    if (typeof detail.scrollIntoView === "function") detail.scrollIntoView({ block: "nearest" });
  }
}

/**
 * Give the keyboard back to the notebook: focus the notebook itself (JupyterLab and Notebook 7
 * then are in command mode on the widget's cell, so `b` adds a cell below it), else just leave
 * the widget.
 * @param {View} view
 */
export function leaveWidget(view) {
  const active = /** @type {HTMLElement | null} */ (view.doc.activeElement);
  if (active && view.root.contains(active) && typeof active.blur === "function") active.blur();
  const notebook = /** @type {HTMLElement | null} */ (view.root.closest(".jp-Notebook"));
  if (notebook) {
    const cell = /** @type {HTMLElement | null} */ (view.root.closest(".jp-Cell"));
    (cell || notebook).focus();
    if (view.doc.activeElement !== cell) notebook.focus();
  }
}
