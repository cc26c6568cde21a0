"""A LangGraph app as users write it, for the tests that debug LangGraph apps with their savers.

    chat → (one Send per topic) research → review (asks a human) → END

``chat`` answers the user's message with an ``AIMessage`` (``add_messages`` state); the
research of topic "b" fails on its first attempt; ``review`` interrupts. ``run_app`` drives it
the way a user does, sync or async: the failed run, a resume, the answer, then a fork after
``chat`` with two topics instead of three, run to its interrupt.
"""

from __future__ import annotations

import contextlib
import operator
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict

THREAD = "job-1"
CONFIG: dict[str, Any] = {"configurable": {"thread_id": THREAD}}


class Chat(TypedDict, total=False):
    """The app's state."""

    messages: Annotated[list[Any], add_messages]
    topics: list[str]
    notes: Annotated[list[str], operator.add]
    decision: str


def build_app(saver: Any) -> Any:
    """The app compiled with ``saver``; each build fails topic "b" once."""
    failed: set[str] = set()

    def chat(state: Chat) -> dict[str, Any]:
        return {
            "messages": [AIMessage("researching a, b, c", id="ai-1")],
            "topics": ["a", "b", "c"],
        }

    def fan_out(state: Chat) -> list[Send]:
        return [Send("research", {"topic": topic}) for topic in state["topics"]]

    def research(task: dict[str, str]) -> dict[str, Any]:
        if task["topic"] == "b" and "b" not in failed:
            failed.add("b")
            raise ConnectionError("search backend timed out on 'b'")
        return {"notes": [f"notes on {task['topic']}"]}

    def review(state: Chat) -> dict[str, Any]:
        return {"decision": interrupt({"question": "publish?", "notes": len(state["notes"])})}

    return (
        StateGraph(Chat)
        .add_node("chat", chat)
        .add_node("research", research)
        .add_node("review", review)
        .add_edge(START, "chat")
        .add_conditional_edges("chat", fan_out, ["research"])
        .add_edge("research", "review")
        .compile(checkpointer=saver)
    )


FIRST_INPUT = {"messages": [HumanMessage("find notes", id="h-1")]}


def run_app(graph: Any) -> dict[str, Any]:
    """Run the app with the sync API; returns the fork's config."""
    with contextlib.suppress(ConnectionError):
        graph.invoke(FIRST_INPUT, CONFIG)
    graph.invoke(None, CONFIG)  # resume: only "b" runs again, then review interrupts
    graph.invoke(Command(resume="yes"), CONFIG)
    after_chat = next(
        s.config for s in graph.get_state_history(CONFIG) if s.next == ("research",) * 3
    )
    fork = graph.update_state(after_chat, {"topics": ["a", "c"]})
    graph.invoke(None, fork)
    return fork  # type: ignore[no-any-return]


async def arun_app(graph: Any) -> dict[str, Any]:
    """Async twin of :func:`run_app`."""
    with contextlib.suppress(ConnectionError):
        await graph.ainvoke(FIRST_INPUT, CONFIG)
    await graph.ainvoke(None, CONFIG)
    await graph.ainvoke(Command(resume="yes"), CONFIG)
    history = [s async for s in graph.aget_state_history(CONFIG)]
    after_chat = next(s.config for s in history if s.next == ("research",) * 3)
    fork = await graph.aupdate_state(after_chat, {"topics": ["a", "c"]})
    await graph.ainvoke(None, fork)
    return fork  # type: ignore[no-any-return]
