"""``bulk_update_state`` details: a ``StateUpdate``'s ``task_id`` and the ``(None, END)`` form
that clears the tasks a checkpoint scheduled."""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: str
    log: Annotated[list, operator.add]


def state_update(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.types import StateUpdate
    else:
        from durable_debug import StateUpdate
    return StateUpdate


def thread(name: str) -> dict:
    return {"configurable": {"thread_id": name}}


def test_clearing_the_scheduled_tasks():
    def scenario(api: Api, trace: Trace) -> None:
        StateUpdate = state_update(api)

        def a(state: State) -> dict:
            trace.ran("a")
            return {"value": "a", "log": ["a"]}

        def b(state: State) -> dict:
            trace.ran("b")
            return {"log": ["b"]}

        g = (
            api.StateGraph(State)
            .add_node("a", a)
            .add_node("b", b)
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .compile(checkpointer=api.MemorySaver(), interrupt_before=["b"])
        )
        cfg = thread("clear")
        g.invoke({"value": "", "log": []}, cfg)
        trace.state("paused", g.get_state(cfg))
        g.bulk_update_state(cfg, [[StateUpdate(None, api.END)]])
        trace.state("cleared", g.get_state(cfg))
        trace.note("resumed", g.invoke(None, cfg))
        trace.history("history", g.get_state_history(cfg))

        other = thread("clear via update_state")
        g.invoke({"value": "", "log": []}, other)
        g.update_state(other, None, as_node=api.END)
        trace.state("cleared by update_state", g.get_state(other))

    ours = check_parity(scenario)
    assert ours["cleared"]["next"] == ()
    assert ours["executions"].get("b", 0) == 0


def test_clearing_keeps_what_finished_tasks_wrote():
    def scenario(api: Api, trace: Trace) -> None:
        StateUpdate = state_update(api)

        def ok(state: State) -> dict:
            trace.ran("ok")
            return {"log": ["ok"]}

        saver = api.MemorySaver()
        cfg = thread("partial")

        def bad(state: State) -> dict:
            trace.ran("bad")
            # Fail only once "ok" has saved its write: otherwise which of the two wins is up to
            # the scheduler (LangGraph drops a write still on its way when the run fails).
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                saved = saver.get_tuple(cfg)
                writes = saved.pending_writes if saved is not None else []
                if any(channel == "log" and value == ["ok"] for _, channel, value in writes):
                    break
                time.sleep(0.005)
            raise RuntimeError("bad failed")

        g = (
            api.StateGraph(State)
            .add_node("ok", ok)
            .add_node("bad", bad)
            .add_edge(api.START, "ok")
            .add_edge(api.START, "bad")
            .compile(checkpointer=saver)
        )
        with pytest.raises(RuntimeError):
            g.invoke({"value": "", "log": []}, cfg)
        g.bulk_update_state(cfg, [[StateUpdate(None, api.END)]])
        trace.state("cleared", g.get_state(cfg))
        with pytest.raises(api.InvalidUpdateError) as caught:
            g.bulk_update_state(
                cfg, [[StateUpdate(None, api.END), StateUpdate({"value": "x"}, "ok")]]
            )
        trace.note("two updates with a clear", type(caught.value).__name__)

    ours = check_parity(scenario)
    assert ours["cleared"]["values"]["log"] == ["ok"]


def test_task_id_names_the_task_an_update_answers():
    def scenario(api: Api, trace: Trace) -> None:
        StateUpdate = state_update(api)

        def fan(state: State) -> list:
            return [api.Send("work", {"value": v, "log": []}) for v in ("x", "y")]

        def work(state: State) -> dict:
            trace.ran("work")
            return {"log": [state["value"]]}

        g = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_conditional_edges(api.START, fan, ["work"])
            .compile(checkpointer=api.MemorySaver(), interrupt_before=["work"])
        )
        cfg = thread("task ids")
        g.invoke({"value": "", "log": []}, cfg)
        paused = g.get_state(cfg)
        second = paused.tasks[1].id
        g.bulk_update_state(cfg, [[StateUpdate({"log": ["by hand"]}, "work", second)]])
        trace.history("history", g.get_state_history(cfg))

    ours = check_parity(scenario)
    tasks = ours["history"]["checkpoints"][1]["tasks"]
    assert [t.get("result") for t in tasks][1] == {"log": ["by hand"]}
