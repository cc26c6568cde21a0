"""Stream mode ``"tools"``: the start, output deltas, end or error of each LangChain tool call
a node makes, as LangGraph's.

While ``"tools"`` is streamed the run's config carries a :class:`ToolTap` callback handler
(``make_tool_tap``). A tool reports to it when it starts (``tool-started``: the call id, the
tool's name and its input), ends (``tool-finished`` with its output) or fails
(``tool-error`` with the message; a tool paused by ``interrupt()`` or a drain is not failed,
it starts again on resume). While a tool runs, :func:`tool_call_writer` gives the function
that sends a ``tool-output-delta`` for it (``ToolRuntime.emit_output_delta`` calls it). A
tool run with the ``nostream`` tag, or outside a graph's node, reports nothing.

Nothing here imports LangChain unless a run streams ``"tools"``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar, Token
from typing import Any
from uuid import UUID

from durable_debug.graph.types import TAG_NOSTREAM, GraphDrained, GraphInterrupt

__all__ = ["make_tool_tap", "tool_call_writer"]

Emit = Callable[[dict[str, Any]], None]

_writer: ContextVar[Callable[[Any], None] | None] = ContextVar(
    "durable_debug_tool_call_writer", default=None
)


def tool_call_writer() -> Callable[[Any], None] | None:
    """Sends a ``tool-output-delta`` for the tool call running here; None when no run
    streaming ``"tools"`` is watching it."""
    return _writer.get()


def make_tool_tap(emit: Emit) -> Any:
    """A LangChain callback handler that sends the ``"tools"`` payloads of the tool calls
    under the run's nodes to ``emit``."""
    from langchain_core.callbacks import BaseCallbackHandler

    try:  # handlers of this kind are called in the tool's own context (the writer is seen)
        from langchain_core.tracers._streaming import _StreamingCallbackHandler as Streaming
    except ImportError:  # pragma: no cover - older langchain-core
        Streaming = object  # type: ignore[misc,assignment]  # the fallback base when langchain-core has no such handler

    class ToolTap(BaseCallbackHandler, Streaming):  # type: ignore[type-arg]  # Streaming is generic, or the plain object above: no parameter
        """Reports the tool calls of the running nodes to the ``tools`` stream."""

        run_inline = True
        durable_debug_tool_tap = True
        """Marks a run's tap, so a subgraph's config leaves its parent's tap out."""

        def __init__(self) -> None:
            self.calls: dict[UUID, tuple[str, Token[Callable[[Any], None] | None]]] = {}
            """Tool run id → its tool call id and the writer it set."""

        def on_tool_start(
            self,
            serialized: dict[str, Any] | None,
            input_str: str,
            *,
            run_id: UUID,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            inputs: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            if not metadata or TAG_NOSTREAM in (tags or ()):
                return
            call_id = kwargs.get("tool_call_id") or str(run_id)
            name = (serialized or {}).get("name") or kwargs.get("name") or ""

            def delta(chunk: Any) -> None:
                emit({"event": "tool-output-delta", "tool_call_id": call_id, "delta": chunk})

            self.calls[run_id] = (call_id, _writer.set(delta))
            payload: dict[str, Any] = {
                "event": "tool-started",
                "tool_call_id": call_id,
                "tool_name": name,
            }
            if inputs is not None:
                payload["input"] = inputs
            emit(payload)

        def _finish(self, run_id: UUID) -> str | None:
            call = self.calls.pop(run_id, None)
            if call is None:
                return None
            with contextlib.suppress(ValueError):  # ended in another context than it started
                _writer.reset(call[1])
            return call[0]

        def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
            call_id = self._finish(run_id)
            if call_id is not None:
                emit({"event": "tool-finished", "tool_call_id": call_id, "output": output})

        def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            call_id = self._finish(run_id)
            if call_id is not None and not isinstance(error, (GraphInterrupt, GraphDrained)):
                emit({"event": "tool-error", "tool_call_id": call_id, "message": str(error)})

        def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
            return output

        def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
            return output

    return ToolTap()
