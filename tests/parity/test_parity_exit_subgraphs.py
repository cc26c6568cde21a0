"""``durability="exit"`` with nested subgraphs on both libraries: a subgraph that finishes
saves none of its checkpoints (only the outermost graph saves, when the run ends); one that
pauses on an interrupt saves the checkpoint it paused on, so the run resumes there."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    messages: Annotated[list[str], operator.add]


def nested(api: Api, pause: bool) -> Any:
    def node(name: str) -> Any:
        def run(state: State) -> dict[str, Any]:
            if pause and name == "c_two":
                answer = api.interrupt("continue?")
                return {"messages": [f"{name} {answer}"]}
            return {"messages": [name]}

        return run

    child = api.StateGraph(State)
    child.add_node("c_one", node("c_one")).add_node("c_two", node("c_two"))
    child.add_edge(api.START, "c_one").add_edge("c_one", "c_two")
    parent = api.StateGraph(State)
    parent.add_node("p_one", node("p_one")).add_node("p_two", child.compile())
    parent.add_edge(api.START, "p_one").add_edge("p_one", "p_two")
    top = api.StateGraph(State)
    top.add_node("gp_one", node("gp_one")).add_node("gp_two", parent.compile())
    top.add_edge(api.START, "gp_one").add_edge("gp_one", "gp_two")
    return top.compile(checkpointer=api.MemorySaver())


def namespaces(graph: Any, config: dict[str, Any]) -> list[str]:
    """The namespaces of the tasks the thread's latest checkpoint has, nested included."""
    found: list[str] = []
    for task in graph.get_state(config, subgraphs=True).tasks:
        while task.state is not None:
            found.append(task.state.config["configurable"]["checkpoint_ns"].split(":")[0])
            inner = task.state.tasks
            task = inner[0] if inner else type("T", (), {"state": None})()
    return found


@pytest.mark.parametrize("pause", [False, True])
def test_nested_subgraphs_save_only_when_they_pause(pause: bool) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = nested(api, pause)
        config = {"configurable": {"thread_id": "t"}}
        events = list(
            graph.stream(
                {"messages": []}, config, stream_mode="debug", subgraphs=True, durability="exit"
            )
        )
        trace.note("events", [(len(ns), e["type"]) for ns, e in events])
        # how many checkpoints each namespace the run streamed from saved
        saved = []
        for ns in dict.fromkeys(ns for ns, _ in events):
            at = {"configurable": {"thread_id": "t", "checkpoint_ns": "|".join(ns)}}
            saved.append((len(ns), len(list(graph.get_state_history(at)))))
        trace.note("saved per namespace", saved)
        trace.history("history", graph.get_state_history(config))
        trace.note("paused in", namespaces(graph, config))
        if pause:
            trace.note(
                "answered", graph.invoke(api.Command(resume="yes"), config, durability="exit")
            )
            trace.history("history after", graph.get_state_history(config))

    ours = check_parity(scenario)
    expected = [(0, 1), (1, 1), (2, 1)] if pause else [(0, 1), (1, 0), (2, 0)]
    assert ours["saved per namespace"] == expected
    if pause:
        assert ours["answered"]["messages"][-1] == "c_two yes"
