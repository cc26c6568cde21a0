"""The widget's "Rerun from here" with "replay recorded calls", and ``TimeTravel.debug``."""

from __future__ import annotations

import io
import pdb

from test_timetravel import ids, open_widget, until

from durable_debug import MemorySaver
from durable_debug.inspect.replay import recorded_calls
from support.replay_graphs import Agent

CFG = {"configurable": {"thread_id": "t"}}


async def test_rerun_with_replay_answers_the_calls_from_the_recording() -> None:
    agent = Agent(MemorySaver())
    await agent.graph.ainvoke({"messages": [("user", "tides")]}, CFG)
    widget, front = await open_widget(agent.graph, CFG)
    first = ids(widget)[0]

    started = await front.result("rerun", checkpoint_id=first, replay=True)

    assert started["code"].startswith("with durable_debug.replaying(graph, {'configurable': ")
    assert "    await graph.ainvoke(None, " in started["code"]
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._error == "" and widget._status.endswith("done")
    assert (agent.model.calls, agent.tool_calls, agent.effects) == (3, 1, 1)
    frame = recorded_calls(agent.graph, CFG)
    assert frame["replayed"].tolist() == [None] * 5 + [True] * 5


async def test_rerun_without_replay_calls_the_model_again() -> None:
    agent = Agent(MemorySaver())
    await agent.graph.ainvoke({"messages": [("user", "tides")]}, CFG)
    widget, front = await open_widget(agent.graph, CFG)
    await front.result("rerun", checkpoint_id=ids(widget)[0])
    await until(lambda: not widget._running, "the rerun to end")
    assert agent.model.calls == 6


def test_debug_steps_into_a_task_of_the_widgets_thread() -> None:
    agent = Agent(MemorySaver())
    agent.graph.invoke({"messages": [("user", "tides")]}, CFG)
    from durable_debug import TimeTravel

    widget = TimeTravel(agent.graph, CFG)
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("p len(state['messages'])\nc\n"), stdout=out)
    plan_at = agent.graph.get_state_history(CFG)
    step0 = next(s for s in plan_at if s.metadata["step"] == 0)
    run = widget.debug(
        step0.config["configurable"]["checkpoint_id"][:23], "plan", debugger=debugger
    )
    assert "plan()" in out.getvalue() and "(Pdb) 1\n" in out.getvalue()
    assert run.error is None and agent.model.calls == 3  # answered from the recording
