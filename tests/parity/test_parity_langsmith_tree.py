"""LangSmith tracing on both libraries: under ``tracing_context(enabled=True)`` a run with no
``callbacks`` is traced, and a node's code runs inside its own run tree (what
``get_current_run_tree()`` and ``@traceable`` functions see). The LangSmith client is
replaced, so nothing leaves the machine."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import langsmith
import pytest
from langsmith.run_helpers import get_current_run_tree
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict, total=False):
    foo: int
    tree: Any


def _graph(api: Api) -> Any:
    def node(state: State) -> dict[str, Any]:
        tree = get_current_run_tree()
        parent = tree.parent_run if tree is not None else None
        return {
            "tree": None
            if tree is None
            else (tree.name, tree.run_type, parent.name if parent else None)
        }

    return api.StateGraph(State).add_node("node", node).add_edge(api.START, "node").compile()


def test_a_node_runs_inside_its_run_tree():
    def scenario(api: Api, trace: Trace) -> None:
        with patch("langchain_core.tracers.langchain.get_client") as get_client:
            get_client.return_value = patch("langsmith.client.Client").start()
            try:
                with langsmith.tracing_context(enabled=True):
                    trace.note("traced", _graph(api).invoke({"foo": 1})["tree"])
            finally:
                patch.stopall()
        trace.note("untraced", _graph(api).invoke({"foo": 1})["tree"])

    ours = check_parity(scenario)
    assert ours["traced"][:2] == ("node", "chain")
    assert ours["untraced"] is None


async def test_an_async_node_runs_inside_its_run_tree():
    async def scenario(api: Api, trace: Trace) -> None:
        with patch("langchain_core.tracers.langchain.get_client") as get_client:
            get_client.return_value = patch("langsmith.client.Client").start()
            try:
                with langsmith.tracing_context(enabled=True):
                    out = await _graph(api).ainvoke({"foo": 1})
            finally:
                patch.stopall()
        trace.note("traced", out["tree"])

    ours = await acheck_parity(scenario)
    assert ours["traced"][:2] == ("node", "chain")
