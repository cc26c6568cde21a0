// @ts-check
// Names as the widget shows them: control, bidi and zero-width characters written as \uXXXX
// (a right-to-left override cannot turn "exe.txt" into "txt.exe"), long names cut with an
// ellipsis and the whole escaped name in a tooltip. The same as durable_debug.inspect.names.

/** The engine's virtual first node (checkpoint/names.py: START; tests/test_engine_names.py compares). */
export const START = "__start__";
/** The engine's virtual last node: an edge to it ends the run (checkpoint/names.py: END). */
export const END = "__end__";

/** Characters of a name shown in a label, its ellipsis included (inspect/names.py: NAME_MAX). */
export const NAME_MAX = 40;

// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** `name` with every invisible or direction-changing character as `\uXXXX`. @param {string} name */
export function displayName(name) {
  return String(name).replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** {@link displayName}, cut to `max` characters with an ellipsis. @param {string} name @param {number} [max] */
export function shortName(name, max = NAME_MAX) {
  const shown = displayName(name);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
}

/**
 * Put a name into `el`: short text, the whole escaped name as its tooltip when cut or escaped.
 * @param {Element} el @param {string} name @param {number} [max] @returns {Element}
 */
export function nameInto(el, name, max = NAME_MAX) {
  const shown = displayName(name);
  el.textContent = shortName(name, max);
  if (shown !== name || shown.length > max) el.setAttribute("title", shown);
  return el;
}
