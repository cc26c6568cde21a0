"""Writing state on both libraries: ``Overwrite`` on a reducer key, ``update_state`` with a
``Command``, and ``bulk_update_state``."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]


def overwrite_cls(api: Api):
    if api.name == "langgraph":
        from langgraph.types import Overwrite
    else:
        from durable_debug import Overwrite
    return Overwrite


def chain(api: Api, trace: Trace, **nodes):
    builder = api.StateGraph(State)
    names = list(nodes)
    for name, fn in nodes.items():
        builder.add_node(name, fn)
    builder.add_edge(api.START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder.compile(checkpointer=api.MemorySaver())


def test_overwrite_bypasses_the_reducer():
    def scenario(api: Api, trace: Trace) -> None:
        Overwrite = overwrite_cls(api)

        def a(state: State) -> dict:
            trace.ran("a")
            return {"log": ["a"]}

        def b(state: State) -> dict:
            trace.ran("b")
            return {"log": Overwrite(["b only"])}

        def c(state: State) -> dict:
            trace.ran("c")
            return {"log": {"__overwrite__": ["c as dict"]}, "value": "c"}

        graph = chain(api, trace, a=a, b=b, c=c)
        cfg = {"configurable": {"thread_id": "o"}}
        trace.call("result", graph.invoke, {"log": ["start"]}, cfg)
        trace.history("history", graph.get_state_history(cfg))
        new = graph.update_state(cfg, {"log": Overwrite(["updated"])}, as_node="c")
        trace.note("after update", graph.get_state(new).values)

    check_parity(scenario)


def test_two_overwrites_in_one_step_fail():
    def scenario(api: Api, trace: Trace) -> None:
        Overwrite = overwrite_cls(api)
        builder = api.StateGraph(State)
        builder.add_node("x", lambda s: {"log": Overwrite(["x"])})
        builder.add_node("y", lambda s: {"log": Overwrite(["y"])})
        builder.add_node("z", lambda s: {"log": ["z"]})
        builder.add_edge(api.START, "x").add_edge(api.START, "y").add_edge(api.START, "z")
        graph = builder.compile(checkpointer=api.MemorySaver())
        trace.call(
            "two", graph.invoke, {"log": []}, {"configurable": {"thread_id": "t"}}, message=False
        )

    check_parity(scenario)


def abc(api: Api, trace: Trace):
    def make(name: str):
        def node(state: State) -> dict:
            trace.ran(name)
            return {"value": name, "log": [name]}

        return node

    return chain(api, trace, a=make("a"), b=make("b"), c=make("c"))


def test_update_state_with_a_command():
    def scenario(api: Api, trace: Trace) -> None:
        graph = abc(api, trace)
        cfg = {"configurable": {"thread_id": "cmd"}}
        graph.invoke({"value": "", "log": []}, cfg)
        first = next(s for s in graph.get_state_history(cfg) if s.metadata["step"] == 1)
        new = graph.update_state(first.config, api.Command(update={"log": ["cmd"]}, goto="c"))
        trace.state("updated", graph.get_state(new))
        trace.call("resumed", graph.invoke, None, new)
        trace.history("history", graph.get_state_history(cfg))
        other = {"configurable": {"thread_id": "cmd2"}}
        graph.invoke({"value": "", "log": []}, other)
        latest = graph.update_state(other, api.Command(update={"value": "v"}), as_node="b")
        trace.state("as node", graph.get_state(latest))

    check_parity(scenario)


def test_bulk_update_state():
    def scenario(api: Api, trace: Trace) -> None:
        from langgraph.types import StateUpdate as LgStateUpdate

        if api.name == "langgraph":
            StateUpdate = LgStateUpdate
        else:
            from durable_debug import StateUpdate
        graph = abc(api, trace)
        cfg = {"configurable": {"thread_id": "bulk"}}
        new = graph.bulk_update_state(
            cfg,
            [
                [StateUpdate({"value": "seed", "log": ["seed"]}, api.START)],
                [StateUpdate({"log": ["x"]}, "a"), StateUpdate({"log": ["y"]}, "b")],
                [StateUpdate({"value": "z"}, "b")],
            ],
        )
        trace.state("state", graph.get_state(new))
        trace.history("history", graph.get_state_history(cfg))
        trace.call("resumed", graph.invoke, None, cfg)
        trace.call("empty", graph.bulk_update_state, cfg, [], message=False)
        trace.call("empty step", graph.bulk_update_state, cfg, [[]], message=False)

    check_parity(scenario)


def test_clearing_a_checkpoint_after_editing_its_paused_task_keeps_the_edit() -> None:
    """An update of a paused node's task, given at the checkpoint that paused, is saved as
    that task's writes there, so clearing the checkpoint afterwards (``update_state(None,
    as_node=END)``) applies the edit along with the finished tasks' writes."""

    def scenario(api: Api, trace: Trace) -> None:
        class Log(TypedDict):
            log: Annotated[list, operator.add]

        def ask(state: Log) -> dict:
            api.interrupt("continue?")
            return {"log": ["q"]}

        graph = (
            api.StateGraph(Log)
            .add_node("p", lambda state: {"log": ["p"]})
            .add_node("q", ask)
            .add_edge(api.START, "p")
            .add_edge(api.START, "q")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"log": ["in"]}, cfg)
        head = graph.get_state(cfg)
        edited = graph.update_state(head.config, {"log": ["edit"]}, as_node="q")
        trace.note("edited", graph.get_state(edited).values)
        cleared = graph.update_state(head.config, None, as_node=api.END)
        trace.note("cleared", graph.get_state(cleared).values)
        trace.history("history", graph.get_state_history(cfg))

    check_parity(scenario)
