"""Stream mode ``"messages"``: ``(message, metadata)`` pairs from the chat models a node calls
and from the messages a node returns.

A chat model reports to the callbacks of the config it runs under. A node rarely passes its
config on (``model.invoke(state["messages"])``), so while a node runs the engine makes the
node's config LangChain's current config (``calls.call`` does that); the config carries a
:class:`MessageTap` handler when ``"messages"`` is streamed. The tap then

* sends each token chunk a streaming model produces (``on_llm_new_token``), and the whole
  message of a model that does not stream (``on_llm_end``), with the metadata of the model
  call (the node's ``langgraph_*`` keys and the model's own);
* after the node returns, sends the messages of its return value it has not sent yet and the
  node did not receive in its input, with the node's metadata.

Nothing here imports LangChain unless a run streams ``"messages"``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any
from uuid import UUID, uuid4

__all__ = ["make_message_tap", "messages_in"]

Emit = Callable[[tuple[Any, dict[str, Any]]], None]


def messages_in(value: Any) -> Iterable[Any]:
    """The LangChain messages held by a node's input or output: directly, in a list, or as
    values (or lists of values) of a dict, dataclass, pydantic model or ``Command.update``."""
    from langchain_core.messages import BaseMessage

    from durable_debug.graph.types import Command

    if isinstance(value, Command):
        value = value.update
    if isinstance(value, BaseMessage):
        yield value
        return
    if isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            if isinstance(item, Command):
                yield from messages_in(item)
            elif isinstance(item, BaseMessage):
                yield item
        return
    if isinstance(value, dict):
        fields: Iterable[Any] = value.values()
    elif hasattr(value, "__dataclass_fields__"):
        fields = (getattr(value, name) for name in value.__dataclass_fields__)
    elif hasattr(type(value), "model_fields"):
        fields = (getattr(value, name) for name in type(value).model_fields)
    else:
        return
    for field in fields:
        if isinstance(field, BaseMessage):
            yield field
        elif isinstance(field, Sequence) and not isinstance(field, str):
            yield from (item for item in field if isinstance(item, BaseMessage))


def make_message_tap(emit: Emit, sent: set[str] | None = None) -> Any:
    """A LangChain callback handler that sends ``(message, metadata)`` pairs to ``emit``.

    ``sent``: ids of messages already streamed, shared with the taps of the run's subgraphs
    (a message a subgraph streamed is not streamed again when its parent node returns it).
    """
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk

    try:  # a handler of this kind makes chat models stream their tokens even from invoke()
        from langchain_core.tracers._streaming import _StreamingCallbackHandler as Streaming
    except ImportError:  # pragma: no cover - older langchain-core
        Streaming = object  # type: ignore[misc,assignment]

    shared = set() if sent is None else sent

    class MessageTap(BaseCallbackHandler, Streaming):
        """Reports chat model output of the running nodes to the ``messages`` stream."""

        run_inline = True
        durable_debug_message_tap = True
        """Marks the tap, so a subgraph's config can leave its parent's tap out."""

        def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
            return output

        def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
            return output

        def __init__(self) -> None:
            self.calls: dict[UUID, dict[str, Any]] = {}
            """Chat model run id → metadata of that call."""
            self.sent: set[str] = shared
            """Ids of messages already sent (or received by a node as input)."""

        def send(self, message: Any, metadata: dict[str, Any], *, once: bool) -> None:
            if once and message.id in self.sent:
                return
            if message.id is None:
                message.id = str(uuid4())
            self.sent.add(message.id)
            emit((message, metadata))

        def on_chat_model_start(
            self,
            serialized: dict[str, Any],
            messages: list[list[Any]],
            *,
            run_id: UUID,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            if metadata and "nostream" not in (tags or ()):
                self.calls[run_id] = metadata

        def on_llm_new_token(
            self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any
        ) -> None:
            metadata = self.calls.get(run_id)
            if metadata is not None and isinstance(chunk, ChatGenerationChunk):
                self.send(chunk.message, metadata, once=False)

        def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
            metadata = self.calls.pop(run_id, None)
            if metadata is None or not response.generations or not response.generations[0]:
                return
            generation = response.generations[0][0]
            if isinstance(generation, ChatGeneration):
                self.send(generation.message, metadata, once=True)

        def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self.calls.pop(run_id, None)

        def node_input(self, state: Any) -> None:
            """Messages a node receives are not news when it returns them."""
            self.sent.update(m.id for m in messages_in(state) if m.id is not None)

        def node_output(self, result: Any, metadata: dict[str, Any]) -> None:
            """Send the messages a node returned that were not sent yet."""
            for message in messages_in(result):
                self.send(message, metadata, once=True)

    return MessageTap()
