"""The triggers a task lists, as LangGraph lists them: every trigger of its node, sorted, so a
join's node lists its ``branch:to:`` channel before the join channel, whether or not a plain
edge reaches it too and whether or not it is deferred (``tasks`` and ``debug`` payloads, and
the ``langgraph_triggers`` metadata a node sees); a Send's task lists ``__pregel_push``."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


@pytest.mark.parametrize("defer", [False, True], ids=["plain", "deferred"])
@pytest.mark.parametrize("direct", [False, True], ids=["join_only", "join_and_edge"])
def test_a_join_task_lists_all_its_node_triggers(defer: bool, direct: bool) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        seen: dict[str, Any] = {}

        def make(name: str) -> Any:
            def node(state: State, config: RunnableConfig) -> dict[str, Any]:
                seen[name] = config["metadata"]["langgraph_triggers"]
                return {"log": [name]}

            return node

        def fan(state: State) -> list[Any]:
            return [api.Send("sent", {"log": []})]

        builder = api.StateGraph(State)
        for name in ("a", "b", "c", "sent"):
            builder.add_node(name, make(name))
        builder.add_node("qa", make("qa"), defer=defer)
        builder.add_edge(api.START, "a").add_edge(api.START, "b")
        builder.add_conditional_edges(api.START, fan, ["sent"])
        builder.add_edge(["a", "b"], "qa")
        if direct:
            builder.add_edge(api.START, "c").add_edge("c", "qa")
        graph = builder.compile()
        tasks = [
            (chunk["name"], chunk["triggers"])
            for chunk in graph.stream({"log": []}, stream_mode="tasks")
            if "triggers" in chunk
        ]
        trace.note("tasks", sorted(tasks))
        debug = [
            (event["payload"]["name"], event["payload"]["triggers"])
            for event in graph.stream({"log": []}, stream_mode="debug")
            if event["type"] == "task"
        ]
        trace.note("debug", sorted(debug))
        trace.note("metadata", dict(sorted(seen.items())))

    check_parity(scenario)
