"""``graph.nodes[name].subgraphs``: the compiled graph a node runs (the node itself, or a graph
its function captures), as LangGraph finds it."""

from __future__ import annotations

import functools
import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def leaf(api: Api, tag: str) -> Any:
    g = api.StateGraph(State).add_node(tag, lambda s: {"log": [tag]})
    compiled = g.add_edge(api.START, tag).compile()
    compiled.name = tag
    return compiled


def detected(api: Api, node: Any) -> Any:
    g = api.StateGraph(State).add_node("n", node).add_edge(api.START, "n").compile()
    return [getattr(s, "name", "?") for s in g.nodes["n"].subgraphs]


def test_node_subgraphs():
    def scenario(api: Api, trace: Trace) -> None:
        direct = leaf(api, "direct")
        captured = leaf(api, "captured")

        def closure(state: State) -> Any:
            return captured.invoke(state)

        trace.note("graph as node", detected(api, direct))
        trace.note("closure", detected(api, closure))
        trace.note("none", detected(api, lambda s: {"log": ["x"]}))

    check_parity(scenario)


class Box:
    def __init__(self, payload: Any) -> None:
        self.payload = payload


class ListWithAttributes(list):
    payload: Any = None


class Raising:
    @property
    def payload(self) -> Any:
        raise RuntimeError("a property that fails when read")


SHAPES = """
def closure(state):
    return CAPTURED.invoke(state)

def attribute_chain(state):
    return CHAIN.payload.payload.invoke(state)

def nested_def(state):
    def inner():
        return HOLDER.payload.invoke(state)
    return inner()

def subscript(state):
    return IN_LIST[0].invoke(state)

def default_argument(state, graph=DEFAULT):
    return graph.invoke(state)

def dead_attribute_chain(state):
    if False:
        HOLDER.payload.invoke(state)
    return {"log": []}

def property_raises(state):
    return RAISING.payload.invoke(state)
"""
"""Node functions whose graphs are globals of the namespace they are compiled in; the
closure-held shapes are built in :func:`shapes` below."""


def shapes(api: Api) -> dict[str, Any]:
    """Every shape of node, each holding graphs built with ``api``."""
    namespace: dict[str, Any] = {
        "CAPTURED": leaf(api, "global"),
        "CHAIN": Box(Box(leaf(api, "chain"))),
        "HOLDER": Box(leaf(api, "nested")),
        "IN_LIST": [leaf(api, "listed")],
        "DEFAULT": leaf(api, "default"),
        "RAISING": Raising(),
    }
    exec(compile(SHAPES, "<node shapes>", "exec"), namespace)
    nodes = {name: namespace[name] for name in namespace if not name.isupper()}
    nodes.pop("__builtins__")

    captured_box = Box(leaf(api, "captured_box"))

    def captured_chain(state: State) -> Any:
        def inner() -> Any:
            return captured_box.payload.invoke(state)

        return inner()

    in_subclass = ListWithAttributes()
    in_subclass.payload = leaf(api, "list_subclass")

    def captured_list_subclass(state: State) -> Any:
        return in_subclass.payload.invoke(state)

    wrapped_graph = leaf(api, "wrapped")

    def inner(state: State) -> Any:
        return wrapped_graph.invoke(state)

    @functools.wraps(inner)
    def decorated(state: State) -> Any:
        return {"log": []}

    def by_hand(state: State) -> Any:
        return {"log": []}

    by_hand.__wrapped__ = inner  # type: ignore[attr-defined]

    dead = leaf(api, "dead_but_captured")

    def captured_in_dead_code(state: State) -> Any:
        if False:
            dead.invoke(state)
        return {"log": []}

    unsaved = (
        api.StateGraph(State)
        .add_node("unsaved", lambda s: {"log": []})
        .add_edge(api.START, "unsaved")
        .compile(checkpointer=False)
    )
    saved = leaf(api, "saved")

    def unsaved_then_saved(state: State) -> Any:
        return unsaved.invoke(state), saved.invoke(state)

    def only_unsaved(state: State) -> Any:
        return unsaved.invoke(state)

    first, second = leaf(api, "first"), leaf(api, "second")

    def two_captured(state: State) -> Any:
        return first.invoke(state), second.invoke(state)

    def method_of_captured(state: State) -> Any:
        run = first.invoke
        return run(state)

    return {
        **nodes,
        "captured_chain": captured_chain,
        "captured_list_subclass": captured_list_subclass,
        "functools_wraps": decorated,
        "wrapped_by_hand": by_hand,
        "captured_in_dead_code": captured_in_dead_code,
        "unsaved_then_saved": unsaved_then_saved,
        "only_unsaved": only_unsaved,
        "two_captured": two_captured,
        "method_of_captured": method_of_captured,
    }


def test_node_subgraphs_of_every_shape_of_node():
    def scenario(api: Api, trace: Trace) -> None:
        for name, node in shapes(api).items():
            trace.note(name, detected(api, node))

    ours = check_parity(scenario)
    assert ours["closure"] == ["global"]
    assert ours["attribute_chain"] == ["chain"]
    assert ours["captured_chain"] == ["captured_box"]
    assert ours["functools_wraps"] == ["wrapped"]
    assert ours["unsaved_then_saved"] == ["saved"]
    assert ours["only_unsaved"] == []
    assert ours["default_argument"] == []


def test_a_graph_an_attribute_chain_reaches_has_its_state_read():
    """The graph a node reaches through an attribute path saves its checkpoints under the
    node's task, and get_state(subgraphs=True) reads its pending interrupt there."""

    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict[str, Any]:
            return {"log": [api.interrupt("ok?")]}

        inner = api.StateGraph(State).add_node("ask", ask).add_edge(api.START, "ask").compile()
        holder = Box(Box(inner))

        def outer(state: State) -> Any:
            return holder.payload.payload.invoke(state)

        graph = api.StateGraph(State).add_node("outer", outer).add_edge(api.START, "outer")
        graph = graph.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("paused", graph.invoke, {"log": []}, cfg)
        snapshot = graph.get_state(cfg, subgraphs=True)
        trace.state("parent", snapshot)
        trace.state("nested", snapshot.tasks[0].state)
        trace.call("resumed", graph.invoke, api.Command(resume="yes"), cfg)

    ours = check_parity(scenario)
    assert ours["nested"]["next"] == ("ask",)
