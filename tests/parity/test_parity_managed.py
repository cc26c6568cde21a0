"""Managed values on both libraries: a state key annotated ``RemainingSteps`` or
``IsLastStep`` reads the steps the recursion limit leaves, so a loop can stop cleanly."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import NotRequired, TypedDict

pytestmark = pytest.mark.parity


def managed_names(api: Api) -> tuple[Any, Any]:
    if api.name == "langgraph":
        from langgraph.managed import IsLastStep, RemainingSteps
    else:
        from durable_debug.managed import IsLastStep, RemainingSteps
    return RemainingSteps, IsLastStep


def test_a_loop_reads_its_remaining_steps_and_stops_before_the_limit():
    def scenario(api: Api, trace: Trace) -> None:
        RemainingSteps, IsLastStep = managed_names(api)

        # The functional form: the annotations are evaluated here, where the names are.
        State = TypedDict(  # noqa: UP013
            "State",
            {
                "log": Annotated[list, operator.add],
                "remaining": RemainingSteps,
                "last": NotRequired[IsLastStep],
            },
        )

        def work(state: Any) -> dict:
            return {"log": [[state["remaining"], state["last"]]]}

        def route(state: Any) -> str:
            return api.END if state["remaining"] <= 2 else "work"

        graph = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_edge(api.START, "work")
            .add_conditional_edges("work", route)
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}, "recursion_limit": 6}
        trace.call("invoke", graph.invoke, {"log": []}, cfg)
        trace.state("state", graph.get_state(cfg))
        trace.call("again", graph.invoke, {"log": []}, cfg)
        short = {"configurable": {"thread_id": "2"}, "recursion_limit": 4}
        trace.call("values", graph.stream, {"log": []}, short, stream_mode="values")

    check_parity(scenario)


def test_is_last_step_ends_a_loop_that_would_hit_the_limit():
    def scenario(api: Api, trace: Trace) -> None:
        _, IsLastStep = managed_names(api)

        State = TypedDict(  # noqa: UP013
            "State", {"log": Annotated[list, operator.add], "last": IsLastStep}
        )

        def work(state: Any) -> dict:
            return {"log": [state["last"]], "last": "ignored"}

        graph = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_edge(api.START, "work")
            .add_conditional_edges("work", lambda s: api.END if s["last"] else "work")
            .compile()
        )
        for limit in (2, 5):
            trace.call(f"limit {limit}", graph.invoke, {"log": []}, {"recursion_limit": limit})

    check_parity(scenario)


def test_a_resumed_run_counts_its_steps_and_limit_from_where_it_resumes():
    def scenario(api: Api, trace: Trace) -> None:
        RemainingSteps, _ = managed_names(api)
        State = TypedDict(  # noqa: UP013
            "State", {"log": Annotated[list, operator.add], "remaining": RemainingSteps}
        )

        def work(state: Any) -> dict:
            return {"log": [state["remaining"]]}

        graph = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_edge(api.START, "work")
            .add_conditional_edges("work", lambda s: api.END if len(s["log"]) >= 5 else "work")
            .compile(checkpointer=api.MemorySaver())
        )
        for limit in (2, 3, 4, 6):
            cfg = {"configurable": {"thread_id": f"t{limit}"}}
            graph.invoke({"log": []}, {**cfg, "recursion_limit": 10}, interrupt_after=["work"])
            resumed = {**cfg, "recursion_limit": limit}
            trace.call(f"resume, limit {limit}", graph.invoke, None, resumed, message=False)

    check_parity(scenario)
