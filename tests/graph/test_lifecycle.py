"""The graph lifecycle managers LangGraph exports (``get_sync_graph_callback_manager_for_config``
and its async twin): they keep only the graph handlers of a config's callbacks, bind the run
id, and refuse callbacks of a type LangChain does not take."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager

from durable_debug.callbacks import (
    GraphCallbackHandler,
    GraphInterruptEvent,
    GraphResumeEvent,
    get_async_graph_callback_manager_for_config,
    get_sync_graph_callback_manager_for_config,
)


class Recorder(GraphCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.seen.append(event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.seen.append(event)


def test_sync_manager_sends_events_to_graph_handlers_only() -> None:
    graph, plain = Recorder(), BaseCallbackHandler()
    run_id = uuid.uuid4()
    for callbacks in ([plain, graph], graph, CallbackManager(handlers=[plain, graph])):
        graph.seen.clear()
        manager = get_sync_graph_callback_manager_for_config(
            {"callbacks": callbacks}, run_id=run_id
        )
        assert manager.handlers == [graph] and manager.run_id == run_id
        manager.on_resume(GraphResumeEvent(run_id, "pending", "cp", ()))
        manager.on_interrupt(GraphInterruptEvent(run_id, "pending", "cp", ("sub:1",), ()))
        assert [type(e).__name__ for e in graph.seen] == ["GraphResumeEvent", "GraphInterruptEvent"]


async def test_async_manager_awaits_async_handlers() -> None:
    seen: list[str] = []

    class AsyncRecorder(GraphCallbackHandler):
        async def on_resume(self, event: GraphResumeEvent) -> None:
            seen.append(event.checkpoint_id)

    manager = get_async_graph_callback_manager_for_config({"callbacks": [AsyncRecorder()]})
    assert manager.is_async and manager.run_id is None
    await manager.on_resume(GraphResumeEvent(None, "pending", "cp-1", ()))
    assert seen == ["cp-1"]
    empty = get_async_graph_callback_manager_for_config({})
    assert empty.handlers == []


def test_callbacks_of_another_type_are_refused() -> None:
    with pytest.raises(TypeError, match="config\\['callbacks'\\] must be"):
        get_sync_graph_callback_manager_for_config({"callbacks": "handler"})
