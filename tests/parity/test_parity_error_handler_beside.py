"""A node's error handler runs as soon as the node fails, beside the step's other tasks still
running, on both libraries: a sibling that waits for the handler to have run sees it, and when
that sibling then fails, a resume runs it again and keeps the handler's result once."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def _node_error(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.errors import NodeError as LangGraphNodeError

        return LangGraphNodeError
    from durable_debug.errors import NodeError

    return NodeError


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_handler_runs_beside_a_sibling_that_then_fails(durability: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        handled = threading.Event()
        attempts = {"c": 0}

        def fails(state: State) -> dict:
            raise RuntimeError("f always fails")

        def handler(state: State, error: Any) -> dict:
            handled.set()
            return {"log": [f"handled {error.node}"]}

        handler.__annotations__["error"] = _node_error(api)

        def flaky(state: State) -> dict:
            attempts["c"] += 1
            if attempts["c"] == 1:
                trace.note("c saw the handler run", handled.wait(60))
                raise ValueError("c fails once")
            return {"log": ["c"]}

        graph = (
            api.StateGraph(State)
            .add_node("f", fails, error_handler=handler)
            .add_node("c", flaky)
            .add_edge(api.START, "f")
            .add_edge(api.START, "c")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "beside"}}
        trace.call("first run", graph.invoke, {"log": ["in"]}, cfg, durability=durability)
        trace.call("resumed", graph.invoke, None, cfg, durability=durability)
        trace.note("c ran", attempts["c"])

    ours = check_parity(scenario)
    assert ours["c saw the handler run"] is True
    assert ours["resumed"] == {"log": ["in", "c", "handled f"]}
