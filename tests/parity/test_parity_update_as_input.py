"""``update_state`` / ``bulk_update_state`` replaying a run as input on both libraries:
``as_node="__input__"`` saves an ``input`` checkpoint holding the input for START (step -1 on
a new thread), an update as ``__start__`` then takes START's place, and each update's writes
show as the result of the task the checkpoint before it scheduled, so the history matches
the run's step for step."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from test_parity_bulk_update import state_update, thread
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    foo: str
    tasks: Annotated[list[int], operator.add]


def graph_of(api: Api) -> Any:
    def agent(state: State) -> dict:
        return {"foo": "agent"}

    def fan(state: State) -> Any:
        sends = [api.Send("task", {"index": i}) for i in range(3)]
        return api.Command(goto=sends, update={"foo": "map"})

    def task(state: dict) -> dict:
        return {"tasks": [state["index"]]}

    return (
        api.StateGraph(State)
        .add_node("agent", agent)
        .add_node("map", fan, destinations=("task",))
        .add_node("task", task)
        .add_edge(api.START, "agent")
        .add_edge("agent", "map")
        .compile(checkpointer=api.MemorySaver())
    )


def test_a_bulk_update_replays_a_run() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        StateUpdate = state_update(api)
        graph = graph_of(api)
        graph.invoke({"foo": "input"}, thread("run"))
        trace.history("run", graph.get_state_history(thread("run")))
        sends = [api.Send("task", {"index": i}) for i in range(3)]
        graph.bulk_update_state(
            thread("replay"),
            [
                [StateUpdate({"foo": "input"}, "__input__")],
                [StateUpdate({"foo": "input"}, "__start__")],
                [StateUpdate({"foo": "agent", "tasks": []}, "agent")],
                [StateUpdate(api.Command(goto=sends, update={"foo": "map"}), "map")],
                [StateUpdate({"tasks": [i]}, "task") for i in range(3)],
            ],
        )
        trace.history("replay", graph.get_state_history(thread("replay")))

    check_parity(scenario)


def test_two_turns_of_updates_as_input() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        StateUpdate = state_update(api)
        graph = graph_of(api)
        turn = [
            [StateUpdate({"foo": "input"}, "__input__")],
            [StateUpdate({"foo": "input"}, "__start__")],
            [StateUpdate({"foo": "agent"}, "agent")],
        ]
        graph.bulk_update_state(thread("t"), [*turn, *turn])
        trace.history("history", graph.get_state_history(thread("t")))

    check_parity(scenario)


def test_a_run_goes_on_from_an_update_as_input() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = graph_of(api)
        cfg = thread("t")
        trace.call("as input", graph.update_state, cfg, {"foo": "given"}, "__input__")
        trace.state("input checkpoint", graph.get_state(cfg))
        trace.call("run", graph.invoke, None, cfg)
        trace.history("history", graph.get_state_history(cfg))

    check_parity(scenario)
