"""A ``unittest.mock.Mock`` given as a node or a conditional edge (as LangGraph's own tests
do) is called as the function it stands for on both libraries: a Mock answers every
attribute, ``ainvoke`` included, yet is no runnable."""

from __future__ import annotations

import operator
from typing import Annotated
from unittest import mock

import pytest
from parity_harness import Api, Trace, check_parity

pytestmark = pytest.mark.parity


def test_a_mock_node_and_edge_are_called_as_functions() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        add_one = mock.Mock(side_effect=lambda _: 1)
        route = mock.Mock(side_effect=lambda count: "add_one" if count < 4 else api.END)
        builder = api.StateGraph(Annotated[int, operator.add])
        builder.add_node("add_one", add_one)
        builder.add_edge(api.START, "add_one")
        builder.add_conditional_edges("add_one", route)
        graph = builder.compile(checkpointer=api.MemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        trace.note("chunks", list(graph.stream(1, config, stream_mode="values")))
        trace.note("calls", [c.args for c in add_one.call_args_list])
        trace.note("routes", [c.args for c in route.call_args_list])

    ours = check_parity(scenario)
    assert ours["chunks"] == [1, 2, 3, 4]
