"""Recorded calls, replays, the divergence check and stepping into a task, on every saver."""

from __future__ import annotations

import io
import pdb
from typing import Any

import pytest

from durable_debug.checkpoint.records import TASK_CALLS
from durable_debug.inspect import history_frame
from durable_debug.inspect.replay import (
    ReplayMismatchError,
    debug_task,
    recorded_calls,
    replay_check,
    replaying,
)
from support.replay_graphs import Agent

CFG = {"configurable": {"thread_id": "t"}}


@pytest.fixture
def agent(every_saver: Any) -> Agent:
    """The agent, run once on a fresh saver: one turn, 3 model calls, 1 tool call, 1 once()."""
    made = Agent(every_saver)
    made.graph.invoke({"messages": [("user", "tides")]}, CFG)
    assert (made.model.calls, made.tool_calls, made.effects) == (3, 1, 1)
    return made


def _input_checkpoint(agent: Agent) -> dict[str, Any]:
    frame = history_frame(agent.graph, CFG)
    first = frame[frame["step"] == -1]["checkpoint_id"].iloc[0]
    return {"configurable": {"thread_id": "t", "checkpoint_id": first}}


def test_recorded_calls_lists_each_call_of_each_task(agent: Agent) -> None:
    frame = recorded_calls(agent.graph, CFG)
    rows = frame[["node", "kind", "name", "index"]].values.tolist()
    assert rows == [
        ["plan", "chat_model", "CountingModel", 0],
        ["answer", "tool", "lookup", 0],
        ["answer", "chat_model", "CountingModel", 1],
        ["answer", "chat_model", "CountingModel", 2],
        ["answer", "once", "Agent.__init__.<locals>.stamp", 3],
    ]
    plan = frame.iloc[0]
    assert plan["output"] == "answer 1 to tides"
    assert plan["tokens"] == {"input": 2, "output": 3, "total": 5}
    assert plan["latency_ms"] >= 0
    assert plan["input"] == "2 messages, last HumanMessage: tides"
    assert frame.iloc[1]["output"] == "facts about tides #1"
    assert frame["replayed"].isna().all()  # not a replay
    # the task ran from the checkpoint before its step
    history = history_frame(agent.graph, CFG)
    by_step = dict(zip(history["step"], history["checkpoint_id"], strict=True))
    assert list(frame["checkpoint_id"]) == [by_step[0]] + [by_step[1]] * 4


def test_the_recording_is_not_in_langgraph_visible_values(agent: Agent) -> None:
    for snapshot in agent.graph.get_state_history(CFG):
        assert TASK_CALLS not in (snapshot.metadata or {})
        assert "task_calls" not in str(snapshot.values)
    for tup in agent.graph.checkpointer.list(CFG):
        channels = {channel for _, channel, _ in tup.pending_writes or ()}
        assert all("call" not in channel for channel in channels)


def test_a_fork_rerun_inside_replaying_makes_no_new_call(agent: Agent) -> None:
    recorded = agent.graph.get_state(CFG).values["messages"][-1].content
    with replaying(agent.graph, CFG) as replay:
        out = agent.graph.invoke(None, _input_checkpoint(agent))
    assert (agent.model.calls, agent.tool_calls, agent.effects) == (3, 1, 1)
    assert out["messages"][-1].content == recorded
    assert replay.live == []
    assert [(c["node"], c["kind"]) for c in replay.replayed] == [
        ("plan", "chat_model"),
        ("answer", "tool"),
        ("answer", "chat_model"),
        ("answer", "chat_model"),
        ("answer", "once"),
    ]
    # the rerun recorded its own calls, marked replayed
    frame = recorded_calls(agent.graph, CFG)
    assert frame["replayed"].tolist() == [None] * 5 + [True] * 5


def test_an_edited_prompt_makes_exactly_the_changed_call_live(agent: Agent) -> None:
    agent.prompts["answer"] = "Be verbose."
    with replaying(agent.graph, CFG) as replay:
        out = agent.graph.invoke(None, _input_checkpoint(agent))
    assert (agent.model.calls, agent.tool_calls, agent.effects) == (4, 1, 1)
    assert [(c["node"], c["i"]) for c in replay.live] == [("answer", 2)]
    assert len(replay.replayed) == 4
    assert out["messages"][-1].content.startswith("answer 4 to answer 2 to answer 1 to tides")
    frame = recorded_calls(agent.graph, CFG)
    rerun = frame.iloc[5:]
    assert rerun["replayed"].tolist() == [True, True, True, False, True]


def test_strict_replay_refuses_a_changed_call_naming_it(agent: Agent) -> None:
    agent.prompts["plan"] = "Plan at length."
    with (
        replaying(agent.graph, CFG, strict=True),
        pytest.raises(ReplayMismatchError, match=r"thread 't', task .* \(node 'plan'\).* call 0"),
    ):
        agent.graph.invoke(None, _input_checkpoint(agent))
    assert agent.model.calls == 3


def test_replay_check_is_ok_on_unchanged_code_and_names_the_changed_node(agent: Agent) -> None:
    report = replay_check(agent.graph, CFG)
    assert report.ok, report.diverged
    assert report.checked == 2
    assert report.live_calls == []
    assert (agent.model.calls, agent.tool_calls, agent.effects) == (3, 1, 1)

    agent.prompts["answer"] = "Be verbose."
    report = replay_check(agent.graph, CFG)
    assert not report.ok
    assert [d["node"] for d in report.diverged] == ["answer"]
    assert report.diverged[0]["paths"] == ["messages[0]"]
    assert [(c["node"], c["i"], c["kind"]) for c in report.live_calls] == [
        ("answer", 2, "chat_model")
    ]


def test_debug_task_stops_in_pdb_inside_the_node_with_its_recorded_input(agent: Agent) -> None:
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("p state['messages'][-1].content\nc\n"), stdout=out)
    config = _input_checkpoint(agent)
    answer_at = history_frame(agent.graph, CFG).query("step == 1")["checkpoint_id"].iloc[0]
    config["configurable"]["checkpoint_id"] = answer_at
    run = debug_task(agent.graph, config, "answer", debugger=debugger)
    shown = out.getvalue()
    assert "replay_graphs.py" in shown and "answer()" in shown
    assert "'answer 1 to tides'" in shown  # the input the task recorded
    assert run.error is None
    assert (agent.model.calls, agent.tool_calls, agent.effects) == (3, 1, 1)
    assert len(run.replayed) == 3  # its once() result is the one the task saved
    assert history_frame(agent.graph, CFG).shape[0] == 4  # nothing saved


def test_debug_task_names_a_node_without_a_task() -> None:
    from durable_debug.checkpoint.memory import MemorySaver

    agent = Agent(MemorySaver())
    agent.graph.invoke({"messages": [("user", "x")]}, CFG)
    step1 = history_frame(agent.graph, CFG).query("step == 1")["checkpoint_id"].iloc[0]
    at = {"configurable": {"thread_id": "t", "checkpoint_id": step1}}
    with pytest.raises(ValueError, match=r"no task of node 'plan'.*\['answer'\]"):
        debug_task(agent.graph, at, "plan")


def test_replaying_a_thread_without_recording_says_so() -> None:
    from durable_debug.checkpoint.memory import MemorySaver

    agent = Agent(MemorySaver())
    off = {"configurable": {"thread_id": "t", "record_calls": False}}
    agent.graph.invoke({"messages": [("user", "x")]}, off)
    assert recorded_calls(agent.graph, CFG).empty
    with (
        pytest.raises(ValueError, match="thread 't' has no recorded calls"),
        replaying(agent.graph, CFG),
    ):
        pass


def test_a_damaged_recording_names_the_thread_task_and_call() -> None:
    from durable_debug.checkpoint.memory import MemorySaver

    saver = MemorySaver()
    agent = Agent(saver)
    agent.graph.invoke({"messages": [("user", "x")]}, CFG)
    for record in saver.records.values():
        for task in (record.get(TASK_CALLS) or {}).values():
            del task["calls"][0]["hash"]
    with pytest.raises(
        ValueError, match=r"thread 't', task .* \(node 'plan'\), call 0: .*truncated"
    ):
        recorded_calls(agent.graph, CFG)


async def test_async_nodes_record_and_replay_their_calls() -> None:
    from langchain_core.messages import SystemMessage
    from langchain_core.tools import tool

    from durable_debug import START, MemorySaver, MessagesState, StateGraph
    from support.replay_graphs import CountingModel

    model = CountingModel()
    used: list[str] = []

    @tool
    async def weather(city: str) -> str:
        """The weather in a city."""
        used.append(city)
        return f"sunny in {city}"

    async def agent(state: MessagesState) -> dict[str, Any]:
        report = await weather.ainvoke({"city": "Oslo"})
        reply = await model.ainvoke([SystemMessage(report), *state["messages"]])
        return {"messages": [reply]}

    graph = (
        StateGraph(MessagesState)
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .compile(checkpointer=MemorySaver())
    )
    await graph.ainvoke({"messages": [("user", "hi")]}, CFG)
    first = graph.get_state_history(CFG)
    start = next(s for s in first if s.metadata["step"] == -1).config
    with replaying(graph, CFG) as replay:
        out = await graph.ainvoke(None, start)
    assert (model.calls, used) == (1, ["Oslo"])
    assert out["messages"][-1].content == "answer 1 to hi"
    assert [c["kind"] for c in replay.replayed] == ["tool", "chat_model"]


def test_a_failed_task_keeps_its_calls_on_the_checkpoint_it_ran_from() -> None:
    from durable_debug import START, MemorySaver, MessagesState, StateGraph
    from support.replay_graphs import CountingModel

    model = CountingModel()

    def agent(state: MessagesState) -> dict[str, Any]:
        model.invoke(state["messages"])
        raise ValueError("the reply did not parse")

    graph = (
        StateGraph(MessagesState)
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .compile(checkpointer=MemorySaver())
    )
    with pytest.raises(ValueError, match="did not parse"):
        graph.invoke({"messages": [("user", "hi")]}, CFG)
    frame = recorded_calls(graph, CFG)
    assert frame[["node", "kind", "index"]].values.tolist() == [["agent", "chat_model", 0]]
    head = graph.get_state(CFG).config["configurable"]["checkpoint_id"]
    assert frame["checkpoint_id"].tolist() == [head]  # the task ran from the thread's head


def test_a_recording_of_another_graph_version_is_refused_by_name() -> None:
    from durable_debug.checkpoint.memory import MemorySaver

    saver = MemorySaver()
    agent = Agent(saver)
    agent.graph.invoke({"messages": [("user", "x")]}, CFG)
    changed = agent.graph.builder.add_node("review", lambda s: {}).compile(checkpointer=saver)
    with (
        pytest.raises(ValueError, match=r"thread 't', task .* \(node 'plan'.*another version"),
        replaying(changed, CFG),
    ):
        pass
    with replaying(changed, CFG, any_version=True) as replay:
        assert replay.by_node


def test_replay_check_refuses_a_langgraph_graph_by_name() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    graph = (
        StateGraph(MessagesState)
        .add_node("a", lambda s: {})
        .add_edge(START, "a")
        .compile(checkpointer=InMemorySaver())
    )
    with pytest.raises(TypeError, match="replay_check runs a task's node with durable_debug"):
        replay_check(graph, CFG)


def test_a_call_recorded_without_its_output_goes_live_or_is_refused_as_such() -> None:
    from durable_debug.checkpoint.memory import MemorySaver

    saver = MemorySaver()
    agent = Agent(saver)
    agent.graph.invoke({"messages": [("user", "tides")]}, CFG)
    for record in saver.records.values():  # as if plan's answer had been too large to keep
        for task in (record.get(TASK_CALLS) or {}).values():
            if task["node"] == "plan":
                del task["calls"][0]["value"]
    start = _input_checkpoint(agent)
    with replaying(agent.graph, CFG) as replay:
        agent.graph.invoke(None, start)
    # plan's call goes live, and so do the calls whose input holds its new answer
    assert [(c["node"], c["i"]) for c in replay.live] == [("plan", 0), ("answer", 1), ("answer", 2)]
    assert [(c["node"], c["kind"]) for c in replay.replayed] == [
        ("answer", "tool"),
        ("answer", "once"),
    ]
    assert agent.model.calls == 6
    with (
        pytest.raises(ReplayMismatchError, match=r"\(node 'plan'\).*call 0 .*without its output"),
        replaying(agent.graph, CFG, strict=True),
    ):
        agent.graph.invoke(None, start)
