"""An error handler whose own run failed runs again when the thread resumes; the node it
handles does not (its failure was saved with the node routed to the handler), and the
handler is told the node and the error as saved."""

from __future__ import annotations

import pytest
from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.checkpoint.names import ERROR_SOURCE
from durable_debug.errors import NodeError


class State(TypedDict):
    foo: str


def test_a_resumed_run_runs_the_handler_not_the_failed_node() -> None:
    calls = {"node": 0, "handler": 0}
    seen: list[NodeError] = []
    handler_fails = [True]

    def failing(state: State) -> dict:
        calls["node"] += 1
        raise RuntimeError("boom")

    def handler(state: State, error: NodeError) -> dict:
        calls["handler"] += 1
        seen.append(error)
        if handler_fails[0]:
            raise RuntimeError("handler crash")
        return {"foo": "recovered"}

    saver = MemorySaver()
    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=handler)
        .add_node("fail", failing)
        .add_edge(START, "fail")
        .compile(checkpointer=saver)
    )
    cfg = {"configurable": {"thread_id": "t"}}
    with pytest.raises(RuntimeError, match="handler crash"):
        graph.invoke({"foo": ""}, cfg)
    assert calls == {"node": 1, "handler": 1}
    assert seen[0].node == "fail" and repr(seen[0].error) == "RuntimeError('boom')"
    saved = saver.get_tuple(cfg)
    assert saved is not None
    assert (ERROR_SOURCE, "fail") in [(c, v) for _, c, v in saved.pending_writes or ()]

    handler_fails[0] = False
    assert graph.invoke(None, cfg) == {"foo": "recovered"}
    assert calls == {"node": 1, "handler": 2}
    assert seen[1].node == "fail" and "boom" in str(seen[1].error)
