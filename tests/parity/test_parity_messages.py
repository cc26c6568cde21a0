"""Chat messages on both libraries: ``MessagesState`` and ``add_messages`` (dict messages,
LangChain message objects, id assignment, replace by id, ``RemoveMessage``,
``REMOVE_ALL_MESSAGES``), and user classes (dataclasses, pydantic models, Enums, LangChain
messages) in the state and in the run input, saved without ``register_type``."""

from __future__ import annotations

import dataclasses
import enum
import types
from typing import Annotated, Any

import pydantic
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def names(api: Api) -> types.SimpleNamespace:
    """The message names of the library ``api`` comes from, from its public paths."""
    if api.name == "langgraph":
        from langgraph.graph import MessagesState, add_messages
        from langgraph.graph.message import REMOVE_ALL_MESSAGES
    else:
        from durable_debug import REMOVE_ALL_MESSAGES, MessagesState, add_messages
    return types.SimpleNamespace(
        MessagesState=MessagesState, add_messages=add_messages, REMOVE_ALL=REMOVE_ALL_MESSAGES
    )


def shown(trace: Trace, value: Any) -> Any:
    """``value`` with every message as (type, content, id label, tool calls): message ids
    are random UUIDs in both libraries, so equal labels mean "the same id"."""
    if isinstance(value, BaseMessage):
        calls = [(c["name"], c["args"]) for c in getattr(value, "tool_calls", None) or ()]
        return (value.type, value.content, trace.label("m", value.id), calls)
    if isinstance(value, dict):
        return {k: shown(trace, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown(trace, v) for v in value]
    return value


def chatbot(api: Api, trace: Trace) -> None:
    """LangGraph's basic chatbot: one node answering from the message list, two turns."""
    lib = names(api)

    def bot(state: lib.MessagesState) -> dict:  # type: ignore[name-defined]
        trace.ran("bot")
        last = state["messages"][-1]
        return {"messages": [{"role": "assistant", "content": f"echo: {last.content}"}]}

    graph = (
        api.StateGraph(lib.MessagesState)
        .add_node("bot", bot)
        .add_edge(api.START, "bot")
        .add_edge("bot", api.END)
        .compile(checkpointer=api.MemorySaver())
    )
    cfg = {"configurable": {"thread_id": "chat"}}
    out = graph.invoke({"messages": [{"role": "user", "content": "hi"}]}, cfg)
    trace.note("turn 1", shown(trace, out))
    out = graph.invoke({"messages": [("user", "again")]}, cfg)
    trace.note("turn 2", shown(trace, out))
    out = graph.invoke({"messages": "a plain string"}, cfg)
    trace.note("turn 3", shown(trace, out))
    trace.note("state", shown(trace, graph.get_state(cfg).values))
    trace.note(
        "history",
        [shown(trace, (s.values, s.next)) for s in graph.get_state_history(cfg)],
    )
    chunks = list(
        graph.stream({"messages": [HumanMessage("streamed", id="h9")]}, cfg, stream_mode="updates")
    )
    trace.note("updates", shown(trace, chunks))


def test_basic_chatbot_runs_unchanged():
    check_parity(chatbot)


def merging(api: Api, trace: Trace) -> None:
    """Replace by id, remove by id, remove all, and messages of a subclass of MessagesState."""
    lib = names(api)

    class State(lib.MessagesState):  # type: ignore[name-defined,misc]
        turn: int

    def edit(state: State) -> dict:
        trace.ran("edit")
        first, second = state["messages"][:2]
        return {
            "messages": [
                AIMessage("replaced", id=first.id),
                RemoveMessage(id=second.id),
                HumanMessage("new", id="n1"),
            ],
            "turn": state["turn"] + 1,
        }

    def clear(state: State) -> dict:
        trace.ran("clear")
        return {"messages": [RemoveMessage(id=lib.REMOVE_ALL), AIMessage("fresh", id="f1")]}

    graph = (
        api.StateGraph(State)
        .add_node("edit", edit)
        .add_node("clear", clear)
        .add_edge(api.START, "edit")
        .add_edge("edit", "clear")
        .compile(checkpointer=api.MemorySaver(), interrupt_before=["clear"])
    )
    cfg = {"configurable": {"thread_id": "m"}}
    first = {"messages": [HumanMessage("a", id="a"), HumanMessage("b", id="b")], "turn": 0}
    trace.note("paused", shown(trace, graph.invoke(first, cfg)))
    trace.note("done", shown(trace, graph.invoke(None, cfg)))
    trace.call(
        "remove unknown",
        graph.update_state,
        cfg,
        {"messages": [RemoveMessage(id="nope")]},
        message=False,
    )


def test_replace_remove_and_remove_all_by_id():
    check_parity(merging)


def test_reducer_called_directly():
    def direct(api: Api, trace: Trace) -> None:
        add = names(api).add_messages
        left = [HumanMessage("x", id="1")]
        trace.note("merged", shown(trace, add(left, [AIMessage("y", id="1"), ("ai", "z")])))
        trace.note("single", shown(trace, add(HumanMessage("p", id="p"), HumanMessage("q"))))
        trace.call("only left", add, left, None, message=False)
        trace.call("unknown remove", add, left, [RemoveMessage(id="2")], message=False)
        trace.call("bad format", add(format="nope"), left, [], message=False)
        trace.note("partial", shown(trace, add(format="langchain-openai")(left, [])))

    check_parity(direct)


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclasses.dataclass
class Ticket:
    id: int
    priority: Priority


class Customer(pydantic.BaseModel):
    name: str
    vip: bool = False


class Desk(TypedDict):
    ticket: Ticket
    customer: Customer
    queue: Annotated[list, lambda a, b: a + b]


async def user_classes(api: Api, trace: Trace) -> None:
    """Dataclasses, pydantic models and Enums in the input and in node writes, read back
    from the checkpointer: values, snapshots and history."""

    async def triage(state: Desk) -> dict:
        trace.ran("triage")
        ticket = Ticket(state["ticket"].id, Priority.HIGH)
        return {"ticket": ticket, "queue": [Priority.LOW, ticket], "customer": Customer(name="z")}

    graph = (
        api.StateGraph(Desk)
        .add_node("triage", triage)
        .add_edge(api.START, "triage")
        .compile(checkpointer=api.MemorySaver())
    )
    cfg = {"configurable": {"thread_id": "desk"}}
    start = {"ticket": Ticket(7, Priority.LOW), "customer": Customer(name="a", vip=True)}
    await trace.run("result", graph.ainvoke(start, cfg))
    trace.state("state", await graph.aget_state(cfg))
    trace.history("history", [s async for s in graph.aget_state_history(cfg)])
    snap = await graph.aget_state(cfg)
    trace.note("types", [type(v).__name__ for v in snap.values["queue"]])


async def test_user_classes_are_saved_without_registration():
    ours = await acheck_parity(user_classes)
    assert ours["types"] == ["Priority", "Ticket"]


def test_time_travel_on_a_conversation():
    """Fork a chat at an old checkpoint by replacing the bot's answer (same id), then
    replay from it: the new branch holds the edited answer, the old one is unchanged."""

    def scenario(api: Api, trace: Trace) -> None:
        lib = names(api)

        def bot(state: lib.MessagesState) -> dict:  # type: ignore[name-defined]
            trace.ran("bot")
            return {"messages": [AIMessage(f"answer {len(state['messages'])}")]}

        def polish(state: lib.MessagesState) -> dict:  # type: ignore[name-defined]
            trace.ran("polish")
            last = state["messages"][-1]
            return {"messages": [AIMessage(last.content + "!", id=last.id)]}

        graph = (
            api.StateGraph(lib.MessagesState)
            .add_node("bot", bot)
            .add_node("polish", polish)
            .add_edge(api.START, "bot")
            .add_edge("bot", "polish")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "tt"}}
        graph.invoke({"messages": [("user", "q1")]}, cfg)
        after_bot = next(s for s in graph.get_state_history(cfg) if s.next == ("polish",))
        answer = after_bot.values["messages"][-1]
        forked = graph.update_state(
            after_bot.config, {"messages": [AIMessage("edited", id=answer.id)]}, as_node="bot"
        )
        trace.note("forked", shown(trace, graph.get_state(forked).values))
        trace.note("replayed", shown(trace, graph.invoke(None, forked)))
        trace.note(
            "history",
            [
                shown(trace, (s.values, s.next, s.metadata["step"]))
                for s in graph.get_state_history(cfg)
            ],
        )

    check_parity(scenario)
