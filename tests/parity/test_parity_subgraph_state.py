"""``get_state(config, subgraphs=True)`` and the ``state`` of a snapshot's tasks, on both
libraries, for each way a subgraph saves: ``compile()`` (under the task's namespace),
``compile(checkpointer=True)`` (one namespace without task ids), ``compile(checkpointer=False)``
(nothing saved: not counted as a subgraph, yet its ``interrupt()`` pauses the parent), while
the subgraph is paused, before it started
and after it finished, nested two levels, in the history and through the async twins."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]


def task_states(trace: Trace, snapshot: Any) -> list[Any]:
    """What each task's ``state`` is: None, a namespace config, or a subgraph's snapshot
    (with its own tasks' states, recursively)."""
    shown = []
    for task in snapshot.tasks:
        state = task.state
        if state is None:
            shown.append((task.name, None))
        elif isinstance(state, dict):
            shown.append(
                (task.name, {"config": trace.namespace(state["configurable"]["checkpoint_ns"])})
            )
        else:
            where = state.config["configurable"]["checkpoint_ns"]
            shown.append(
                (
                    task.name,
                    {
                        "snapshot of": trace.namespace(where),
                        "values": state.values,
                        "next": state.next,
                        "step": (state.metadata or {}).get("step"),
                        "interrupts": [i.value for i in state.interrupts],
                        "tasks": task_states(trace, state),
                    },
                )
            )
    return shown


def graphs(api: Api, checkpointer: bool | None, *, ask: bool, nested: bool) -> Any:
    """parent: START → child (a compiled subgraph) → END; the subgraph's node asks a
    question when ``ask``; with ``nested`` the subgraph runs a second subgraph level."""

    def leaf(state: State) -> dict:
        if ask:
            return {"log": [f"leaf:{api.interrupt('go on?')}"]}
        return {"log": ["leaf"]}

    inner = api.StateGraph(State).add_node("leaf", leaf).add_edge(api.START, "leaf")
    child = inner.compile(checkpointer=checkpointer)
    if nested:
        child = (
            api.StateGraph(State)
            .add_node("inner", child)
            .add_edge(api.START, "inner")
            .compile(checkpointer=checkpointer)
        )
    return (
        api.StateGraph(State)
        .add_node("child", child)
        .add_edge(api.START, "child")
        .compile(checkpointer=api.MemorySaver())
    )


FLAVOURS = [None, True, False]


@pytest.mark.parametrize("checkpointer", FLAVOURS)
@pytest.mark.parametrize("nested", [False, True])
def test_the_state_of_a_paused_subgraph(checkpointer: bool | None, nested: bool) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = graphs(api, checkpointer, ask=True, nested=nested)
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": []}, cfg)
        snapshot = graph.get_state(cfg, subgraphs=True)
        trace.note("with subgraphs", task_states(trace, snapshot))
        trace.note("without", task_states(trace, graph.get_state(cfg)))
        trace.note("history", [task_states(trace, s) for s in graph.get_state_history(cfg)])
        state = snapshot.tasks[0].state if snapshot.tasks else None
        if state is not None and not isinstance(state, dict):
            # The subgraph's own config reads the same state through the parent.
            again = graph.get_state(state.config, subgraphs=True)
            trace.note("through its config", task_states(trace, again))
            trace.note("its values", again.values)
        # A subgraph that saves nothing runs again from its start; the answer reaches it.
        trace.call("resumed", graph.invoke, api.Command(resume="yes"), cfg)

    check_parity(scenario)


@pytest.mark.parametrize("checkpointer", FLAVOURS)
def test_the_state_of_a_subgraph_that_has_not_started(checkpointer: bool | None) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = graphs(api, checkpointer, ask=False, nested=False)
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": []}, cfg, interrupt_before=["child"])
        trace.note("with subgraphs", task_states(trace, graph.get_state(cfg, subgraphs=True)))

    check_parity(scenario)


@pytest.mark.parametrize("checkpointer", FLAVOURS)
def test_the_state_of_a_finished_subgraph(checkpointer: bool | None) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = graphs(api, checkpointer, ask=False, nested=True)
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": []}, cfg)
        trace.note("with subgraphs", task_states(trace, graph.get_state(cfg, subgraphs=True)))
        trace.note("history", [task_states(trace, s) for s in graph.get_state_history(cfg)])

    check_parity(scenario)


@pytest.mark.parametrize("checkpointer", [None, True])
async def test_the_async_twins(checkpointer: bool | None) -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        graph = graphs(api, checkpointer, ask=True, nested=True)
        cfg = {"configurable": {"thread_id": "t"}}
        await trace.run("run", graph.ainvoke({"log": []}, cfg))
        snapshot = await graph.aget_state(cfg, subgraphs=True)
        trace.note("with subgraphs", task_states(trace, snapshot))
        history = [s async for s in graph.aget_state_history(cfg)]
        trace.note("history", [task_states(trace, s) for s in history])
        await trace.run("resumed", graph.ainvoke(api.Command(resume="yes"), cfg))
        done = await graph.aget_state(cfg, subgraphs=True)
        trace.note("after", task_states(trace, done))

    await acheck_parity(scenario)


def test_a_subgraph_a_node_calls_with_checkpointer_true() -> None:
    """The subgraph is invoked inside a node function (not added as the node): its state is
    found through the function, under the namespace without task ids."""

    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            return {"log": [f"asked:{api.interrupt('baz?')}"]}

        sub = (
            api.StateGraph(State)
            .add_node("ask", ask)
            .add_edge(api.START, "ask")
            .compile(checkpointer=True)
        )

        def call(state: State) -> dict:
            return {"log": sub.invoke({"log": ["in"]})["log"]}

        graph = (
            api.StateGraph(State)
            .add_node("call", call)
            .add_edge(api.START, "call")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": []}, cfg)
        trace.note("with subgraphs", task_states(trace, graph.get_state(cfg, subgraphs=True)))
        trace.call("resumed", graph.invoke, api.Command(resume="yes"), cfg)

    check_parity(scenario)
