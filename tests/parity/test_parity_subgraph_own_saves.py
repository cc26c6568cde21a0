"""A subgraph compiled with ``checkpointer=True`` (it saves with the graph that runs it), on
both libraries: editing it through its paused task's state config (``update_state(task.state,
...)``) changes what the parent's ``get_state(subgraphs=True)`` shows for it, as it does for a
subgraph compiled without a checkpointer; and run on its own, such a graph refuses to read or
edit state with LangGraph's ``RuntimeError``."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def _child(api: Api, checkpointer: Any) -> Any:
    return (
        api.StateGraph(State)
        .add_node("a", lambda state: {"log": ["a1"]})
        .add_node("b", lambda state: {"log": ["b1"]})
        .add_edge(api.START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=checkpointer, interrupt_before=["b"])
    )


@pytest.mark.parametrize("checkpointer", [True, None], ids=["per-thread", "per-invocation"])
def test_editing_a_paused_subgraph_through_its_task_config(checkpointer: Any) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        app = (
            api.StateGraph(State)
            .add_node("child", _child(api, checkpointer))
            .add_edge(api.START, "child")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", app.invoke, {"log": []}, cfg)
        (task,) = app.get_state(cfg).tasks
        app.update_state(task.state, {"log": ["edit"]}, as_node="a")
        (task,) = app.get_state(cfg, subgraphs=True).tasks
        trace.note("child values", task.state.values)
        trace.note("child next", task.state.next)
        trace.call("resume", app.invoke, None, cfg)

    check_parity(scenario)


def test_a_checkpointer_true_graph_on_its_own_refuses_state_reads() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        child = (
            api.StateGraph(State)
            .add_node("a", lambda state: {"log": ["a1"]})
            .add_edge(api.START, "a")
            .compile(checkpointer=True)
        )
        cfg = {"configurable": {"thread_id": "t"}}
        for name, read in [
            ("get_state", lambda: child.get_state(cfg)),
            ("history", lambda: list(child.get_state_history(cfg))),
            ("update_state", lambda: child.update_state(cfg, {"log": ["x"]})),
        ]:
            try:
                read()
            except RuntimeError as exc:
                trace.note(name, ("RuntimeError", str(exc).startswith("checkpointer=True cannot")))

    check_parity(scenario)
