"""When reducers are called, on both libraries: a write of None reaches the reducer, a key
annotated with an abstract collection (``Sequence[str]``) starts from its concrete empty
value (``[]``) so the reducer sees it, and ``NotRequired`` around a reducer key keeps the
reducer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import NotRequired, TypedDict

pytestmark = pytest.mark.parity

CALLS: list[Any] = []


def merge(current: Any, new: Any) -> list:
    CALLS.append((current, new))
    return [*(current or []), *(new or [])]


class Plain(TypedDict):
    x: Annotated[list, merge]
    y: int


class Abstract(TypedDict):
    x: Annotated[Sequence[str], merge]
    y: int


class Optional_(TypedDict):
    x: NotRequired[Annotated[list, merge]]
    y: int


@pytest.mark.parametrize("schema", [Plain, Abstract, Optional_], ids=["list", "seq", "notreq"])
def test_reducer_calls(schema: Any) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = (
            api.StateGraph(schema)
            .add_node("a", lambda state: {"x": None})
            .add_node("b", lambda state: {"x": ["b"], "y": 1})
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        CALLS.clear()
        trace.call("run", graph.invoke, {"x": None, "y": 0}, cfg)
        trace.note("calls", list(CALLS))
        CALLS.clear()
        graph.update_state(cfg, {"x": None})
        trace.note("update calls", list(CALLS))
        CALLS.clear()
        trace.call("without x", graph.invoke, {"y": 2}, {"configurable": {"thread_id": "u"}})
        trace.note("calls without x", list(CALLS))

    check_parity(scenario)
