"""Values handed out by a graph on the in-memory saver are the caller's own: changing the
output of a run, or the values ``get_state`` returned, changes neither the saved checkpoints
nor what the next run's nodes read (as with LangGraph's ``InMemorySaver``, run side by side)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver as LangGraphMemorySaver
from langgraph.graph import END as LG_END
from langgraph.graph import START as LG_START
from langgraph.graph import MessagesState as LGMessagesState
from langgraph.graph import StateGraph as LGStateGraph

from durable_debug import END, START, MemorySaver, MessagesState, StateGraph


def chat(ours: bool) -> tuple[Any, list[list[str]]]:
    """A one-node chat on each library's in-memory saver, and what its node saw per turn."""
    seen: list[list[str]] = []

    def bot(state: Any) -> dict[str, Any]:
        seen.append([str(m.content) for m in state["messages"]])
        return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}

    if ours:
        graph = StateGraph(MessagesState).add_node("bot", bot)
        graph = graph.add_edge(START, "bot").add_edge("bot", END)
        return graph.compile(checkpointer=MemorySaver()), seen
    lg = LGStateGraph(LGMessagesState).add_node("bot", bot)
    lg = lg.add_edge(LG_START, "bot").add_edge("bot", LG_END)
    return lg.compile(checkpointer=LangGraphMemorySaver()), seen


@pytest.mark.parametrize("ours", [True, False], ids=["durable_debug", "langgraph"])
def test_changing_a_run_output_or_a_snapshot_changes_no_saved_state(ours: bool) -> None:
    graph, seen = chat(ours)
    cfg = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"messages": [HumanMessage("one")]}, cfg)
    out["messages"][0].content = "changed after the run"
    out["messages"].append(HumanMessage("appended after the run"))
    snapshot = graph.get_state(cfg)
    assert [m.content for m in snapshot.values["messages"]] == ["one", "echo 1"]
    snapshot.values["messages"][1].content = "changed in a snapshot"
    snapshot.values["messages"][1].additional_kwargs["note"] = "added in a snapshot"
    snapshot.values["messages"].clear()
    graph.invoke({"messages": [HumanMessage("two")]}, cfg)
    assert seen == [["one"], ["one", "echo 1", "two"]]
    again = graph.get_state(cfg).values["messages"]
    assert [m.content for m in again] == ["one", "echo 1", "two", "echo 3"]
    assert again[1].additional_kwargs == {}
    # Two reads of the same checkpoint share nothing either.
    first, second = (graph.get_state(cfg).values["messages"] for _ in range(2))
    first[0].content = "changed in the first read"
    assert second[0].content == "one"


@pytest.mark.parametrize("ours", [True, False], ids=["durable_debug", "langgraph"])
def test_a_node_changing_a_message_in_place_does_not_rewrite_history(ours: bool) -> None:
    def first(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage("as written", id="a")]}

    def second(state: Any) -> dict[str, Any]:
        state["messages"][-1].content = "changed in place"
        return {}

    lib: Any = (
        (StateGraph, MessagesState, START, END, MemorySaver)
        if ours
        else (LGStateGraph, LGMessagesState, LG_START, LG_END, LangGraphMemorySaver)
    )
    builder = lib[0](lib[1]).add_node("first", first).add_node("second", second)
    builder = builder.add_edge(lib[2], "first").add_edge("first", "second")
    graph = builder.add_edge("second", lib[3]).compile(checkpointer=lib[4]())
    cfg = {"configurable": {"thread_id": "t"}}
    # durability="sync": LangGraph's default saves a step in the background, and may
    # serialize it after the next node already changed the message.
    graph.invoke({"messages": [HumanMessage("hi", id="h")]}, cfg, durability="sync")
    history = {s.metadata["step"]: s.values for s in graph.get_state_history(cfg)}
    assert history[1]["messages"][-1].content == "as written"
