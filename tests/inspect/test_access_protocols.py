"""The inspect layer's GraphLike, RunnableGraphLike and SaverLike describe what it is given:
durable_debug's graphs and savers, LangGraph's, and a SaverView standing in for a graph."""

from __future__ import annotations

import operator
from typing import Annotated

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph as LangGraphStateGraph
from typing_extensions import TypedDict

from durable_debug import MemorySaver, StateGraph
from durable_debug.inspect.access import GraphLike, RunnableGraphLike, SaverLike
from durable_debug.inspect.stored import SaverView


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def test_both_libraries_graphs_and_savers_fit_the_protocols() -> None:
    for builder, saver in [(StateGraph, MemorySaver()), (LangGraphStateGraph, InMemorySaver())]:
        graph = builder(State).add_node("a", lambda s: {"log": ["a"]}).set_entry_point("a")
        compiled = graph.compile(checkpointer=saver)
        assert isinstance(saver, SaverLike)
        assert isinstance(compiled, GraphLike)
        assert isinstance(compiled, RunnableGraphLike)


def test_a_saver_view_is_read_like_a_graph_but_not_run() -> None:
    saver = MemorySaver()
    graph = StateGraph(State).add_node("a", lambda s: {"log": ["a"]}).set_entry_point("a")
    config = {"configurable": {"thread_id": "t"}}
    graph.compile(checkpointer=saver).invoke({"log": []}, config)
    view = SaverView(saver)
    assert isinstance(view, GraphLike)
    assert not isinstance(view, RunnableGraphLike)
    assert view.get_state(config).values == {"log": ["a"]}
    history = list(view.get_state_history(config))
    assert history[0].values == {"log": ["a"]}  # newest first, as the graph's own history
    assert [s.config for s in history] == [
        s.config for s in graph.compile(checkpointer=saver).get_state_history(config)
    ]
    assert not isinstance(object(), SaverLike)
