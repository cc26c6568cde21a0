// @ts-check
// A chat channel as a conversation: a list of messages (LangChain's `{type, content, tool_calls}`
// or OpenAI-style `{role, content}`) shown one per row, its role, its text and the tool calls it
// makes; the raw value stays one click away (widget's JSON tree, in detail.js).

/** @typedef {ReturnType<typeof import("./helpers.js").hyperscript>} H */

/** LangChain's message types, as the role a reader knows them by. */
const ROLE_OF_TYPE = /** @type {Record<string, string>} */ ({
  human: "user",
  ai: "assistant",
  system: "system",
  tool: "tool",
  function: "tool",
  chat: "chat",
  remove: "removed",
});

/**
 * The role of a message, or "" when `item` is not one.
 * @param {any} item
 */
export function messageRole(item) {
  if (!item || typeof item !== "object" || Array.isArray(item) || !("content" in item)) return "";
  if (typeof item.role === "string" && item.role) return item.role;
  if (typeof item.type === "string") {
    const type = item.type.replace(/MessageChunk$|Message$/, "").toLowerCase();
    return ROLE_OF_TYPE[type] || "";
  }
  return "";
}

/** Whether a channel's value is a conversation: a non-empty list of messages. @param {any} value */
export function isConversation(value) {
  return Array.isArray(value) && value.length > 0 && value.every((item) => messageRole(item) !== "");
}

/** A message's content as text: a string, or a list of parts (their text, other parts named). @param {any} content */
function contentText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        typeof part === "string"
          ? part
          : part && typeof part.text === "string"
            ? part.text
            : `[${(part && part.type) || "part"}]`,
      )
      .join("\n");
  return oneLine(content);
}

/** JSON on one line, cut at 300 characters. @param {any} value */
function oneLine(value) {
  const text = JSON.stringify(value) ?? "null";
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * The conversation: one row per message, its role, its text and its tool calls.
 * @param {H} h @param {any[]} messages @returns {HTMLElement}
 */
export function drawConversation(h, messages) {
  return h(
    "ol",
    { class: "dd-conversation" },
    ...messages.map((message) => {
      const role = messageRole(message);
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      const text = contentText(message.content);
      const name = typeof message.name === "string" && message.name ? ` (${message.name})` : "";
      const answers =
        typeof message.tool_call_id === "string" && message.tool_call_id
          ? h("span", { class: "dd-muted dd-answers" }, ` answers ${message.tool_call_id}`)
          : "";
      return h(
        "li",
        { class: `dd-message dd-role-${role.replace(/[^a-z]/gi, "")}`, "data-role": role },
        h("div", { class: "dd-message-role" }, `${role}${name}`, answers),
        text ? h("div", { class: "dd-message-content" }, text) : "",
        ...calls.map((/** @type {any} */ call) =>
          h(
            "div",
            { class: "dd-tool-call" },
            "→ ",
            h("code", {}, `${(call && call.name) || "tool"}(${oneLine((call && call.args) || {})})`),
            call && call.id ? h("span", { class: "dd-muted" }, ` ${call.id}`) : "",
          ),
        ),
      );
    }),
  );
}
