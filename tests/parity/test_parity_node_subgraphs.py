"""``graph.nodes[name].subgraphs``: the compiled graph a node runs (the node itself, or a graph
its function captures), as LangGraph finds it."""

from __future__ import annotations

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
