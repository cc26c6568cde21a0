"""The text a chat model is writing while a run goes, per (node, message id).

A run streamed with ``stream_mode="messages"`` yields ``(message, metadata)`` pairs: the token
chunks a streaming chat model produces, and whole messages (a model that does not stream, the
messages a node returns). :class:`LiveText` keeps the text each message has so far:

    live = LiveText()
    async for mode, payload in graph.astream(inputs, config, stream_mode=["debug", "messages"]):
        if mode == "messages" and live.add(*payload):
            show(live.entries())   # [{"node": "agent", "id": "run-1", "text": "Paris is", ...}]

A chunk appends to its message's text, a whole message replaces it. Past
:data:`~durable_debug.inspect.jsonable.CLIP_CHARS` characters only the end is kept, after
``"…"``: the words being written are the ones worth watching.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from durable_debug.inspect.jsonable import CLIP_CHARS

__all__ = ["LiveEntry", "LiveText", "message_text"]


class LiveEntry(TypedDict):
    """One message being written: the node whose model writes it, the message id, its text so
    far (its last ``CLIP_CHARS`` characters after ``"…"`` when longer: ``cut``) and its whole
    length."""

    node: str
    id: str
    text: str
    chars: int
    cut: bool


def message_text(message: Any) -> str:
    """The text of a LangChain message or chunk: its ``content`` when a string, else the text
    parts of its content blocks (strings, or ``{"type": "text", "text": ...}``) joined."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


class LiveText:
    """The text of every message streamed since the last :meth:`clear`, in the order they
    began; ``limit`` characters of each are kept (the end)."""

    def __init__(self, limit: int = CLIP_CHARS) -> None:
        self.limit = limit
        self._texts: dict[tuple[str, str], tuple[str, int]] = {}
        """(node, message id) → the text's last ``limit`` characters and its whole length."""

    def add(self, message: Any, metadata: Mapping[str, Any] | None = None) -> bool:
        """Take one ``(message, metadata)`` pair of the ``messages`` stream; True when the
        text shown changed. A chunk (its class name ends in ``Chunk``) appends, a whole
        message replaces; a message without text (a tool call being built) shows nothing."""
        node = str((metadata or {}).get("langgraph_node") or "")
        key = (node, str(getattr(message, "id", None) or ""))
        text = message_text(message)
        chars = len(text)
        if type(message).__name__.endswith("Chunk"):
            before, length = self._texts.get(key, ("", 0))
            text, chars = before + text, length + chars
        kept = (text[-self.limit :], chars)
        if not chars or self._texts.get(key) == kept:
            return False
        self._texts[key] = kept
        return True

    def entries(self) -> list[LiveEntry]:
        """The messages with their text so far, cut to the limit (the end kept)."""
        return [
            LiveEntry(
                node=node,
                id=message_id,
                text=text if chars == len(text) else "…" + text,
                chars=chars,
                cut=chars != len(text),
            )
            for (node, message_id), (text, chars) in self._texts.items()
        ]

    def clear(self) -> bool:
        """Forget every message (a step ended: its messages are in the checkpoint); True when
        there was one."""
        had = bool(self._texts)
        self._texts.clear()
        return had
