"""``get_graph()`` without LangChain: a ``DrawableGraph`` with the nodes, metadata and edges
LangChain's ``Graph`` gets (subgraphs drawn in place too), its Mermaid text, and the stand-in
runnables LangChain's drawing names nodes by."""

from __future__ import annotations

import operator
import subprocess
import sys
import textwrap
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, Command, StateGraph
from durable_debug.graph import drawing


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def noop(state: State) -> dict:
    return {}


def route(state: State) -> Literal["b", "__end__"]:
    return "b"


def jump(state: State) -> Command[Literal["a", "b"]]:
    return Command(goto="a")


def graphs() -> dict[str, Any]:
    inner = (
        StateGraph(State)
        .add_node("i1", noop)
        .add_node("i2", noop)
        .add_edge(START, "i1")
        .add_edge("i1", "i2")
        .compile()
    )
    branching = (
        StateGraph(State)
        .add_node("a", noop)
        .add_node("b", noop, defer=True)
        .add_node("jump", jump)
        .add_node("sub", inner)
        .add_edge(START, "jump")
        .add_conditional_edges("a", route)
        .add_edge("b", "sub")
        .compile(interrupt_before=["b"])
    )
    loop = (
        StateGraph(State)
        .add_node("x", noop)
        .add_node("y", noop)
        .add_edge(START, "x")
        .add_edge("x", "y")
        .add_edge("y", "x")
        .compile()
    )
    return {"branching": branching, "loop": loop}


def shape(drawn: Any) -> tuple[list[Any], list[Any]]:
    nodes = [(n.id, n.name, n.metadata) for n in drawn.nodes.values()]
    return nodes, [tuple(e) for e in drawn.edges]


@pytest.mark.parametrize("xray", [False, True])
@pytest.mark.parametrize("name", ["branching", "loop"])
def test_without_langchain_the_drawing_has_langchains_nodes_and_edges(
    name: str, xray: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = graphs()[name]
    with_langchain = graph.get_graph(xray=xray)
    assert type(with_langchain).__module__ == "langchain_core.runnables.graph"
    monkeypatch.setattr(drawing, "_langchain_graph", lambda: None)
    without = graph.get_graph(xray=xray)
    assert isinstance(without, drawing.DrawableGraph)
    assert shape(without) == shape(with_langchain)
    assert without.to_json() == with_langchain.to_json()


def test_the_fallback_drawing_and_its_mermaid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drawing, "_langchain_graph", lambda: None)
    drawn = graphs()["branching"].get_graph(xray=True)
    assert drawn.nodes["jump"].data == drawing.NodeData(drawing.RUNNABLE_CALLABLE, "jump", jump)
    assert drawn.nodes["b"].metadata == {"defer": True, "__interrupt": "before"}
    assert ("b", "sub:i1", None, False) in [tuple(e) for e in drawn.edges]
    assert repr(drawn).startswith("DrawableGraph(nodes=['__start__'")
    mermaid = drawn.draw_mermaid(with_styles=False)
    assert "\tjump -.-> a;" in mermaid and "\tsub_i2 --> __end__;" in mermaid
    assert mermaid.startswith("graph TD;\n\t__start__([start])")
    with pytest.raises(ValueError, match="Node with id a already exists"):
        drawn.add_node(None, "a")
    with pytest.raises(ValueError, match="Node nowhere not in graph"):
        drawn.add_edge(drawn.nodes["a"], drawing.Node("nowhere", "nowhere"))


def test_node_data_are_runnables_named_as_langgraphs() -> None:
    drawn = graphs()["branching"].get_graph()
    data = drawn.to_json()["nodes"]
    ids = {n["id"]: n.get("data", {}).get("id") for n in data}
    assert ids["jump"] == ["langgraph", "_internal", "_runnable", "RunnableCallable"]
    assert ids["sub"] == ["langgraph", "graph", "state", "CompiledStateGraph"]
    runnable = drawn.nodes["a"].data
    assert runnable.invoke({"n": 1, "log": []}) == {}
    assert drawn.nodes["sub"].data.get_name() == "LangGraph"
    assert drawn.nodes["__start__"].data.invoke({"n": 1}) == {"n": 1}


def test_a_graph_without_end_edges_and_a_subgraph_of_one_node_stays_whole() -> None:
    one = StateGraph(State).add_node("only", noop).add_edge(START, "only").compile()
    parent = (
        StateGraph(State)
        .add_node("wrap", one)
        .add_edge(START, "wrap")
        .add_edge("wrap", END)
        .compile()
    )
    edges = [tuple(e) for e in parent.get_graph(xray=True).edges]
    assert edges == [
        ("__start__", "wrap:only", None, False),
        ("wrap:only", "__end__", None, False),
    ]


def test_a_process_without_langchain_draws_a_drawable_graph() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["langchain_core"] = None  # as if it were not installed
        from typing_extensions import TypedDict
        from durable_debug import START, StateGraph

        class S(TypedDict):
            n: int

        g = StateGraph(S).add_node("a", lambda s: {}).add_edge(START, "a").compile()
        drawn = g.get_graph(xray=True)
        print(type(drawn).__name__, [tuple(e)[:2] for e in drawn.edges])
        print(drawn.to_json()["nodes"][1])
        print(drawn.draw_mermaid(with_styles=True), end="")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.splitlines() == [
        "DrawableGraph [('__start__', 'a'), ('a', '__end__')]",
        "{'id': 'a', 'type': 'runnable', 'data': {'id': ['langgraph', '_internal', '_runnable',"
        " 'RunnableCallable'], 'name': 'a'}}",
        "graph TD;",
        "\t__start__([start])",
        "\ta(a)",
        "\t__end__([end])",
        "\t__start__ --> a;",
        "\ta --> __end__;",
    ]
