"""Managed values on our engine: never saved, never written, counted from the run's start."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from graph_support import cfg
from typing_extensions import TypedDict

from durable_debug import END, START, MemorySaver, StateGraph
from durable_debug.managed import IsLastStep, RemainingSteps
from durable_debug.managed.is_last_step import IsLastStep as IsLastStepToo


class State(TypedDict):
    log: Annotated[list, operator.add]
    remaining: RemainingSteps
    last: IsLastStep


def _graph(saver: MemorySaver) -> Any:
    def work(state: State) -> dict:
        return {"log": [state["remaining"]], "remaining": 99}  # the write is dropped

    return (
        StateGraph(State)
        .add_node("work", work)
        .add_edge(START, "work")
        .add_conditional_edges("work", lambda s: END if s["remaining"] <= 3 else "work")
        .compile(checkpointer=saver)
    )


def test_managed_keys_are_read_by_nodes_and_edges_but_never_saved(saver: MemorySaver) -> None:
    graph = _graph(saver)
    config = {**cfg("t"), "recursion_limit": 7}
    assert graph.invoke({"log": []}, config) == {"log": [6, 5, 4, 3]}
    latest = saver.get_tuple(cfg("t"))
    assert latest is not None
    assert "remaining" not in latest.checkpoint["channel_values"]
    assert graph.get_state(cfg("t")).values == {"log": [6, 5, 4, 3]}
    assert IsLastStepToo is IsLastStep


def test_a_resumed_run_counts_its_steps_from_where_it_resumes(saver: MemorySaver) -> None:
    graph = _graph(saver)
    first = {**cfg("t"), "recursion_limit": 7}
    graph.invoke({"log": []}, first, interrupt_after=["work"])
    # Resumed from step 1 with a limit of 4, as LangGraph counts: the next step (2) is the
    # first of the 4 the limit allows after it, with 5 remaining (itself and 4 more).
    out = graph.invoke(None, {**cfg("t"), "recursion_limit": 4})
    assert out == {"log": [6, 5, 4, 3]}


def test_langgraphs_import_paths_of_managed_values() -> None:
    from durable_debug.managed import IsLastStep, RemainingSteps
    from durable_debug.managed.base import ManagedValue
    from durable_debug.managed.is_last_step import IsLastStep as FromModule

    assert FromModule is IsLastStep
    assert all(
        issubclass(manager, ManagedValue)
        for manager in (RemainingSteps.__metadata__[0], IsLastStep.__metadata__[0])
    )
