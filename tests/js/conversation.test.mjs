import assert from "node:assert/strict";
import { test } from "node:test";
import { Window } from "happy-dom";
import { drawConversation, isConversation, messageRole } from "../../js/src/conversation.js";
import { hyperscript } from "../../js/src/helpers.js";

test("a list of LangChain or role/content messages is a conversation; other lists are not", () => {
  assert.equal(messageRole({ type: "human", content: "hi" }), "user");
  assert.equal(messageRole({ type: "AIMessageChunk", content: "" }), "assistant");
  assert.equal(messageRole({ role: "system", content: "be brief" }), "system");
  assert.equal(messageRole({ type: "human" }), ""); // no content
  assert.ok(
    isConversation([
      { type: "ai", content: "x" },
      { role: "user", content: "y" },
    ]),
  );
  assert.ok(!isConversation([]));
  assert.ok(!isConversation(["hi"]));
  assert.ok(!isConversation([{ type: "ai", content: "x" }, { note: 1 }]));
});

test("a conversation shows each message's role, text and tool calls as text", () => {
  const window = new Window();
  const h = hyperscript(window.document);
  const list = drawConversation(h, [
    {
      type: "ai",
      content: "<b>not markup</b>",
      tool_calls: [{ name: "search", args: { q: "x" }, id: "c1" }],
    },
    { type: "tool", content: [{ type: "text", text: "Paris" }, { type: "image" }], tool_call_id: "c1" },
  ]);
  const items = [...list.querySelectorAll(".dd-message")];
  assert.equal(items.length, 2);
  assert.equal(items[0].querySelector(".dd-message-role").textContent, "assistant");
  assert.equal(items[0].querySelector(".dd-message-content").textContent, "<b>not markup</b>");
  assert.equal(items[0].querySelector("b"), null);
  assert.equal(items[0].querySelector(".dd-tool-call code").textContent, 'search({"q":"x"})');
  assert.equal(items[1].querySelector(".dd-message-role").textContent, "tool answers c1");
  assert.equal(items[1].querySelector(".dd-message-content").textContent, "Paris\n[image]");
  window.close();
});
