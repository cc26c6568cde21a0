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

For ``astream_events`` the tap also *reports* the runs under a node (``on_chat_model_start`` /
``_stream`` / ``_end``, ``on_tool_start`` / ``_end``, ``on_chain_start`` / ``_stream`` /
``_end`` of conditional edges and runnables, ``on_prompt_*``…, with their run id, parent run
id, name, tags, metadata and data), which ``events.py`` turns into events under the node's
run. The graph's and the nodes' own runs (``callbacks.py`` marks them in ``engine_runs``) are
not reported: ``events.py`` builds their events from the run's chunks.

Nothing here imports LangChain unless a run streams ``"messages"`` or events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import Any
from uuid import UUID, uuid4

from durable_debug.graph.types import TAG_NOSTREAM

__all__ = ["GRAPH_RUN_METADATA", "make_message_tap", "messages_in"]

GRAPH_RUN_METADATA: dict[str, Any] = {"ls_integration": "langgraph"}
"""What LangGraph adds to the metadata of a graph's callback run (unless the config's metadata
names it already), which every run under the graph inherits: the nodes' runs and the messages
they return, and a chat model's (whose own ``ls_integration`` wins)."""

Emit = Callable[[tuple[Any, dict[str, Any]]], None]
Report = Callable[[dict[str, Any]], None]


def _run_name(name: str | None, serialized: dict[str, Any] | None) -> str:
    """A callback's run name: the one given, else the serialized object's name or class."""
    if name:
        return name
    if serialized:
        if serialized.get("name"):
            return str(serialized["name"])
        if serialized.get("id"):
            return str(serialized["id"][-1])
    return "Unnamed"


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


def make_message_tap(
    emit: Emit,
    sent: set[str] | None = None,
    report: Report | None = None,
    *,
    protocol: bool = False,
) -> Any:
    """A LangChain callback handler that sends ``(message, metadata)`` pairs to ``emit`` and,
    if ``report`` is given, the start and end of the chat model, tool and chain runs nested in
    a node to it.

    ``protocol`` (a v3 event stream, ``graph/v3_events.py``): chat models stream content-block
    events instead (``(event, metadata)`` with the model call's ``run_id``), the whole message
    of a model that streamed them is not sent again, and tool messages a node returns are
    not sent.

    ``sent``: ids of messages already streamed, shared with the taps of the run's subgraphs
    (a message a subgraph streamed is not streamed again when its parent node returns it).
    """
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk

    try:  # a handler of this kind makes chat models stream their tokens even from invoke()
        from langchain_core.tracers._streaming import _StreamingCallbackHandler as Streaming
    except ImportError:  # pragma: no cover - older langchain-core
        Streaming = object  # type: ignore[misc,assignment]  # the fallback base when langchain-core has no such handler

    shared = set() if sent is None else sent

    class MessageTap(BaseCallbackHandler, Streaming):  # type: ignore[type-arg]  # Streaming is generic, or the plain object above: no parameter
        """Reports chat model output of the running nodes to the ``messages`` stream."""

        run_inline = True
        durable_debug_message_tap = True
        """Marks the tap, so a subgraph's config can leave its parent's tap out."""

        durable_debug_streams_nodes = report is not None
        """Under ``astream_events`` runnable nodes are streamed (see ``callbacks.py``)."""

        def _streamed(self, run_id: UUID) -> dict[str, Any] | None:
            """The start event of a reported run whose chunks are to be reported (once:
            a run tapped twice reports through its first tap only)."""
            start = self.runs.get(run_id)
            if report is None or start is None or run_id in self.tapped:
                return None
            self.tapped.add(run_id)
            return start

        def _chunk(self, start: dict[str, Any], chunk: Any) -> None:
            assert report is not None
            kind = start["event"][3:].rpartition("_")[0]
            report({**start, "event": f"on_{kind}_stream", "data": {"chunk": chunk}})

        def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
            start = self._streamed(run_id)
            if start is None:
                yield from output
                return
            for chunk in output:
                self._chunk(start, chunk)
                yield chunk

        async def tap_output_aiter(
            self, run_id: UUID, output: AsyncIterator[Any]
        ) -> AsyncIterator[Any]:
            start = self._streamed(run_id)
            async for chunk in output:
                if start is not None:
                    self._chunk(start, chunk)
                yield chunk

        def __init__(self) -> None:
            self.calls: dict[UUID, dict[str, Any]] = {}
            """Chat model run id → metadata of that call."""
            self.sent: set[str] = shared
            """Ids of messages already sent (or received by a node as input)."""
            self.runs: dict[UUID, dict[str, Any]] = {}
            """Reported run id → its start event (name, tags, metadata, parent, input)."""
            self.engine_runs: set[UUID] = set()
            """Run ids of the engine's own runs (graphs, nodes: see ``callbacks.py``), whose
            events ``astream_events`` builds itself; their children are reported as the
            node's (no parent run id)."""
            self.tapped: set[UUID] = set()
            """Runs whose streamed chunks are reported."""
            self.protocol_runs: set[UUID] = set()
            """Chat model runs that streamed content-block events (``protocol`` taps)."""

        def _start(
            self,
            kind: str,
            run_id: UUID,
            parent_run_id: UUID | None,
            name: str,
            tags: list[str] | None,
            metadata: dict[str, Any] | None,
            data: dict[str, Any],
        ) -> None:
            if report is None:
                return
            if parent_run_id in self.engine_runs:
                parent_run_id = None
            event = {
                "event": f"on_{kind}_start",
                "name": name,
                "run_id": str(run_id),
                "parent_run_id": None if parent_run_id is None else str(parent_run_id),
                "tags": list(tags or ()),
                "metadata": dict(metadata or {}),
                "data": data,
            }
            self.runs[run_id] = event
            report(event)

        def _end(self, kind: str, run_id: UUID, output: Any) -> None:
            start = self.runs.pop(run_id, None)
            if report is None or start is None:
                return
            data = {"output": output, "input": start["data"].get("input")}
            report({**start, "event": f"on_{kind}_end", "data": data})

        def on_tool_start(
            self,
            serialized: dict[str, Any],
            input_str: str,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            name: str | None = None,
            inputs: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            self._start(
                "tool",
                run_id,
                parent_run_id,
                _run_name(name, serialized),
                tags,
                metadata,
                {"input": inputs or {}},
            )

        def on_retriever_start(
            self,
            serialized: dict[str, Any],
            query: str,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            name: str | None = None,
            **kwargs: Any,
        ) -> None:
            name = _run_name(name, serialized)
            data = {"input": {"query": query}}
            self._start("retriever", run_id, parent_run_id, name, tags, metadata, data)

        def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
            self._end("retriever", run_id, documents)

        def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self.runs.pop(run_id, None)

        def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
            self._end("tool", run_id, output)

        def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self.runs.pop(run_id, None)

        def on_chain_start(
            self,
            serialized: dict[str, Any] | None,
            inputs: Any,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            name: str | None = None,
            **kwargs: Any,
        ) -> None:
            if report is None or run_id in self.engine_runs:
                return
            kind = kwargs.get("run_type") or "chain"
            data = {} if inputs == {"input": ""} else {"input": inputs}
            self._start(
                kind, run_id, parent_run_id, _run_name(name, serialized), tags, metadata, data
            )

        def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
            if run_id in self.engine_runs:
                self.engine_runs.discard(run_id)
                return
            start = self.runs.get(run_id)
            if start is not None and "inputs" in kwargs and "input" not in start["data"]:
                start["data"] = {"input": kwargs["inputs"]}
            if start is not None:
                self._end(start["event"][3:].rpartition("_")[0], run_id, outputs)

        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self.runs.pop(run_id, None)
            self.engine_runs.discard(run_id)

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
            parent_run_id: UUID | None = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            name: str | None = None,
            **kwargs: Any,
        ) -> None:
            if metadata and TAG_NOSTREAM not in (tags or ()):
                # The call's own tags (not LangChain's seq:step bookkeeping), as LangGraph.
                user_tags = [t for t in tags or () if not t.startswith("seq:step")]
                self.calls[run_id] = {**metadata, "tags": user_tags} if user_tags else metadata
            self._start(
                "chat_model",
                run_id,
                parent_run_id,
                _run_name(name, serialized),
                tags,
                metadata,
                {"input": {"messages": messages}},
            )

        def on_stream_event(self, event: Any, *, run_id: UUID, **kwargs: Any) -> None:
            """A content-block event of a chat model call (``protocol`` taps only)."""
            metadata = self.calls.get(run_id)
            if metadata is None:
                return
            if event.get("event") == "message-start":
                self.protocol_runs.add(run_id)
                if event.get("message_id"):
                    self.sent.add(str(event["message_id"]))
            emit((event, {**metadata, "run_id": str(run_id)}))

        def on_llm_new_token(
            self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any
        ) -> None:
            metadata = None if protocol else self.calls.get(run_id)
            if metadata is not None and isinstance(chunk, ChatGenerationChunk):
                self.send(chunk.message, metadata, once=False)
            start = self.runs.get(run_id)
            if report is not None and start is not None and run_id not in self.tapped:
                message = chunk.message if isinstance(chunk, ChatGenerationChunk) else token
                kind = start["event"][3:].rpartition("_")[0]
                report({**start, "event": f"on_{kind}_stream", "data": {"chunk": message}})

        def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
            if run_id in self.runs:
                generations = response.generations[0] if response.generations else []
                message = getattr(generations[0], "message", None) if generations else None
                self._end("chat_model", run_id, message)
            metadata = self.calls.pop(run_id, None)
            if metadata is None or not response.generations or not response.generations[0]:
                return
            generation = response.generations[0][0]
            if isinstance(generation, ChatGeneration):
                if run_id in self.protocol_runs:  # its events carried it already
                    self.protocol_runs.discard(run_id)
                    generation.message.id = generation.message.id or str(uuid4())
                    self.sent.add(generation.message.id)
                    return
                self.send(generation.message, metadata, once=True)

        def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self.calls.pop(run_id, None)
            self.protocol_runs.discard(run_id)
            self.runs.pop(run_id, None)

        def node_input(self, state: Any) -> None:
            """Messages a node receives are not news when it returns them."""
            self.sent.update(m.id for m in messages_in(state) if m.id is not None)

        def node_output(self, result: Any, metadata: dict[str, Any]) -> None:
            """Send the messages a node returned that were not sent yet."""
            metadata = {**GRAPH_RUN_METADATA, **metadata}
            for message in messages_in(result):
                if not (protocol and isinstance(message, ToolMessage)):
                    self.send(message, metadata, once=True)

    if protocol:  # a handler of this kind makes chat models stream content-block events
        from langchain_core.tracers._streaming import _V2StreamingCallbackHandler

        return type("ProtocolMessageTap", (MessageTap, _V2StreamingCallbackHandler), {})()
    return MessageTap()
