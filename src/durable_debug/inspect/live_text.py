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

:func:`add_chunk_listener` sees the token chunks of every chat model of the process, in runs
started anywhere (a cell's ``graph.astream``), through LangChain's configure hook: a handler
that only listens, so the run, its model and its stream are unchanged. A model streams tokens
only when asked to (``streaming=True``, ``model.stream``, or a run streaming ``"messages"``):
a model called with ``invoke`` in a run that streams no messages gives none to see.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypedDict
from uuid import UUID

from durable_debug.inspect.jsonable import CLIP_CHARS
from durable_debug.inspect.process_callbacks import ProcessCallbacks

__all__ = ["ChunkListener", "LiveEntry", "LiveText", "add_chunk_listener", "message_text"]

logger = logging.getLogger(__name__)

ChunkListener = Callable[[Any, Mapping[str, Any], bool], None]
"""Called with ``(chunk, metadata, False)`` for each token chunk a chat model streams, and
``(message, metadata, True)`` with the whole message when a model that streamed ends."""


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

    def clear(self, ids: Collection[str] | None = None) -> bool:
        """Forget every message (a step ended: its messages are in the checkpoint), or those
        with an id in ``ids``; True when one was forgotten."""
        gone = [key for key in self._texts if ids is None or key[1] in ids]
        for key in gone:
            del self._texts[key]
        return bool(gone)


_listeners: ProcessCallbacks[ChunkListener] = ProcessCallbacks(
    "durable_debug_chunk_listener", lambda: _handler()
)


def add_chunk_listener(listener: ChunkListener) -> Callable[[], None]:
    """Call ``listener(chunk, metadata, False)`` for every token chunk a chat model of this
    process streams (``metadata``: the model call's, with a graph run's ``thread_id`` and
    ``langgraph_node``), and ``listener(message, metadata, True)`` with its whole message when
    it ends; returns the function that removes it. Does nothing without
    ``langchain_core``. The listener runs on the model's thread: it must hand work over."""
    try:
        import langchain_core.callbacks  # noqa: F401
    except ImportError:
        return lambda: None
    return _listeners.add(listener)


def _handler() -> Any:
    from langchain_core.callbacks import BaseCallbackHandler

    class ChunkHandler(BaseCallbackHandler):
        """Hands the token chunks of chat models to the listeners; changes nothing."""

        run_inline = True

        def __init__(self) -> None:
            super().__init__()
            self._calls: dict[UUID, dict[str, Any]] = {}

        def on_chat_model_start(
            self,
            serialized: Any,
            messages: Any,
            *,
            run_id: UUID,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            if _listeners.listeners:
                self._calls[run_id] = dict(metadata or {})

        def on_llm_new_token(
            self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any
        ) -> None:
            metadata = self._calls.get(run_id)
            if metadata is not None:
                metadata["streamed"] = True
                _tell(getattr(chunk, "message", None), metadata, False)

        def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
            metadata = self._calls.pop(run_id, None)
            if metadata is not None and metadata.pop("streamed", False):
                generations = getattr(response, "generations", None) or [[]]
                first = generations[0][0] if generations[0] else None
                _tell(getattr(first, "message", None), metadata, True)

        def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self._calls.pop(run_id, None)

    return ChunkHandler()


def _tell(message: Any, metadata: Mapping[str, Any], final: bool) -> None:
    if message is None:
        return
    for listener in list(_listeners.listeners):
        try:
            listener(message, metadata, final)
        except Exception:
            logger.exception("chunk listener %r failed", listener)
