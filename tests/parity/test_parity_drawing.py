"""``get_graph()`` on both libraries: the same builders give the same ``to_json()``, the same
``draw_mermaid()`` (with and without styles) and the same edges, for conditional edges with and
without labels, ``Command[Literal[...]]`` nodes, joins and deferred nodes, loops, interrupts,
subgraphs drawn with ``xray=True`` / ``xray=1``, and an ``@entrypoint`` workflow."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, Literal

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def noop(state: State) -> dict:
    return {}


def note_drawing(trace: Trace, label: str, drawing: Any) -> None:
    """Record what a user sees of a drawing: its JSON, its Mermaid (styled and not), its
    edges as tuples."""
    trace.note(f"{label}: json", json.dumps(drawing.to_json(), indent=1))
    trace.note(f"{label}: mermaid", drawing.draw_mermaid())
    trace.note(f"{label}: mermaid plain", drawing.draw_mermaid(with_styles=False))
    trace.note(f"{label}: edges", [tuple(e) for e in drawing.edges])
    trace.note(f"{label}: nodes", [(n.id, n.name, n.metadata) for n in drawing.nodes.values()])


def test_conditional_edges_with_a_path_map_a_literal_and_none() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def mapped(state: State) -> str:
            return "go"

        def literal(state: State) -> Literal["c", "__end__"]:
            return "c"

        def unknown(state: State) -> str:
            return "a"

        g = (
            api.StateGraph(State)
            .add_node("a", noop)
            .add_node("b", noop)
            .add_node("c", noop)
            .add_node("d", noop)
            .add_edge(api.START, "a")
            .add_conditional_edges("a", mapped, {"go": "b", "stop": api.END})
            .add_conditional_edges("b", literal)
            .add_conditional_edges("c", unknown)
            .add_conditional_edges("d", mapped, ["a", "b"])
            .compile()
        )
        note_drawing(trace, "graph", g.get_graph())

    check_parity(scenario)


def test_command_literal_destinations_and_labelled_destinations() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def router(state: State) -> Any:
            return api.Command(goto="even")

        # The library's own Command in the annotation (a string one would not resolve here).
        router.__annotations__["return"] = api.Command[Literal["even", "odd"]]

        g = (
            api.StateGraph(State)
            .add_node("router", router)
            .add_node("even", noop, destinations={"odd": "again", api.END: "done"})
            .add_node("odd", noop)
            .add_edge(api.START, "router")
            .compile()
        )
        note_drawing(trace, "graph", g.get_graph())

    check_parity(scenario)


def test_a_loop_a_join_a_deferred_node_and_interrupts() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        loop = (
            api.StateGraph(State)
            .add_node("human", noop)
            .add_node("agent", noop)
            .add_edge(api.START, "human")
            .add_edge("human", "agent")
            .add_edge("agent", "human")
            .compile(interrupt_before=["human"], interrupt_after=["human", "agent"])
        )
        note_drawing(trace, "loop", loop.get_graph())
        fan = (
            api.StateGraph(State)
            .add_node("split", noop)
            .add_node("left", noop)
            .add_node("right", noop)
            .add_node("longer", noop)
            .add_node("join", noop, defer=True)
            .add_node("after", noop, metadata={"owner": "me"})
            .add_edge(api.START, "split")
            .add_edge("split", "left")
            .add_edge("split", "right")
            .add_edge("right", "longer")
            .add_edge(["left", "longer"], "join")
            .add_edge("join", "after")
            .compile()
        )
        note_drawing(trace, "fan", fan.get_graph())

    check_parity(scenario)


@pytest.mark.parametrize("xray", [False, True, 1, 2])
def test_subgraphs_drawn_in_place_with_xray(xray: bool | int) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def pick(state: State) -> Literal["s2", "__end__"]:
            return "s2"

        inner = (
            api.StateGraph(State)
            .add_node("i1", noop)
            .add_node("i2", noop)
            .add_edge(api.START, "i1")
            .add_edge("i1", "i2")
            .compile()
        )
        sub = (
            api.StateGraph(State)
            .add_node("s1", noop)
            .add_node("s2", noop)
            .add_node("deep", inner)
            .add_edge(api.START, "s1")
            .add_conditional_edges("s1", pick)
            .add_edge("s2", "deep")
            .compile()
        )
        parent = (
            api.StateGraph(State)
            .add_node("before", noop)
            .add_node("sub", sub)
            .add_node("after", noop)
            .add_edge(api.START, "before")
            .add_edge("before", "sub")
            .add_edge("sub", "after")
            .compile()
        )
        note_drawing(trace, "parent", parent.get_graph(xray=xray))

    check_parity(scenario)


def test_entrypoint_workflow() -> None:
    from langgraph.func import entrypoint as theirs

    from durable_debug.func import entrypoint as ours

    def scenario(api: Api, trace: Trace) -> None:
        entrypoint = ours if api.name == "durable_debug" else theirs

        @entrypoint()
        def workflow(n: int) -> int:
            return n

        note_drawing(trace, "workflow", workflow.get_graph())

    check_parity(scenario)


async def test_aget_graph_draws_as_get_graph() -> None:
    from durable_debug import START, StateGraph

    g = StateGraph(State).add_node("a", noop).add_edge(START, "a").compile()
    drawn = await g.aget_graph(xray=True)
    assert drawn.to_json() == g.get_graph().to_json()


@pytest.mark.parametrize("with_tools", [True, False])
def test_a_tool_node_and_a_react_agent(with_tools: bool) -> None:
    from langchain_core.tools import tool
    from test_parity_prebuilt import prebuilt, scripted

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        agent = lib.create_react_agent(scripted(), [add] if with_tools else [])
        note_drawing(trace, "agent", agent.get_graph())
        tools = (
            api.StateGraph(State)
            .add_node("tools", lib.ToolNode([add]))
            .add_edge(api.START, "tools")
            .compile()
        )
        note_drawing(trace, "tool node", tools.get_graph())

    check_parity(scenario)


def test_a_branch_as_a_runnable_lambda_or_a_callable_object_and_interrupts_on_all() -> None:
    from langchain_core.runnables import RunnableLambda

    def literal(state: State) -> Literal["b", "__end__"]:
        return "b"

    class Router:
        def __call__(self, state: State) -> Literal["b", "__end__"]:
            return "b"

    def scenario(api: Api, trace: Trace) -> None:
        for label, path in (("lambda", RunnableLambda(literal)), ("object", Router())):
            g = (
                api.StateGraph(State)
                .add_node("a", noop)
                .add_node("b", noop)
                .add_edge(api.START, "a")
                .add_conditional_edges("a", path)
                .compile(interrupt_before="*")
            )
            note_drawing(trace, label, g.get_graph())

    check_parity(scenario)


def test_a_langgraph_graph_added_as_a_node_is_drawn_in_place() -> None:
    import langgraph.graph as lg

    inner = (
        lg.StateGraph(State)
        .add_node("i1", noop)
        .add_node("i2", noop)
        .add_edge(lg.START, "i1")
        .add_edge("i1", "i2")
        .compile()
    )

    def scenario(api: Api, trace: Trace) -> None:
        g = api.StateGraph(State).add_node("sub", inner).add_edge(api.START, "sub").compile()
        note_drawing(trace, "plain", g.get_graph())
        note_drawing(trace, "xray", g.get_graph(xray=True))

    check_parity(scenario)
