"""Names as the debugger draws them: invisible and direction-changing characters made visible,
a long name cut, so a hostile node name neither turns text around nor blanks the drawing."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from langgraph.graph.message import add_messages

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.inspect.detail import reducer_name, reducers_of
from durable_debug.inspect.names import NAME_MAX, display_name, short_name
from durable_debug.inspect.topology import topology_data


class State(TypedDict, total=False):
    x: int


class Chat(TypedDict):
    messages: Annotated[list, add_messages]


def test_bidi_and_control_characters_are_written_as_escapes() -> None:
    assert display_name("report\u202etxt.exe") == "report\\u202etxt.exe"
    assert display_name("a\x00b\u200bc\n\u2066") == "a\\u0000b\\u200bc\\u000a\\u2066"
    assert display_name("plain é 名前") == "plain é 名前"
    assert short_name("n" * 10_000) == "n" * (NAME_MAX - 1) + "…"


def test_a_10000_character_node_name_keeps_the_topology_narrow() -> None:
    long = "n" * 10_000
    graph = (
        StateGraph(State)
        .add_node(long, lambda state: {"x": 1})
        .add_edge(START, long)
        .compile(checkpointer=MemorySaver())
    )
    topo = topology_data(graph, renderer="python")
    assert topo["width"] < 1_000
    assert [n["id"] for n in topo["nodes"] if n["id"] == long] == [long]  # the id unchanged


def test_reducer_names_are_readable() -> None:
    assert reducer_name(operator.add) == "operator.add"
    graph = StateGraph(Chat).add_node("a", lambda s: {}).add_edge(START, "a").compile()
    assert reducer_name(reducers_of(graph)["messages"]) == "add_messages"

    def factory():  # a reducer made by a function, as LangGraph's add_messages is
        def _merge(a, b):
            return a + b

        return _merge

    assert reducer_name(factory()) == "merge"
