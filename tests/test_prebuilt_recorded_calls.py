"""A ``create_react_agent`` run records its model and tool calls without adding a callback
handler to them (as under LangGraph, a model sees no handler when none was given), and its
model is called the same way with and without callback handlers: a thread recorded with a
handler is replayed without one, and the other way round, with no call going live."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from pydantic import Field

from durable_debug import MemorySaver
from durable_debug.inspect.replay import recorded_calls, replaying
from durable_debug.prebuilt import create_react_agent


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class CountingModel(GenericFakeChatModel):
    """A scripted chat model (one tool call, then the answer) that counts its real calls and
    notes how many callback handlers each call's run had."""

    calls: int = 0
    handlers: list[int] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> CountingModel:
        return self

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls += 1
        self.handlers.append(len(run_manager.handlers) if run_manager else 0)
        return super()._generate(messages, stop, run_manager, **kw)


def _script() -> Any:
    for n in itertools.count():
        yield AIMessage(
            "",
            id=f"ai-{n}-0",
            tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": f"c{n}"}],
        )
        yield AIMessage("3", id=f"ai-{n}-1")


class Seen(BaseCallbackHandler):
    """A handler noting the names of the chain and chat model runs it sees."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.runs.append(str(kw.get("name")))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
        self.runs.append("chat_model")


def _ambient_handlers() -> int:
    """How many handlers a model called directly has here, with no handler given: none in a
    fresh process, two once the inspect layer watches runs in this process (its process-wide
    handlers, ``inspect/process_callbacks.py``, which an earlier test in the same process may
    have registered): what a graph run must not add to."""
    model = CountingModel(messages=_script())
    model.invoke("?")
    return model.handlers[0]


def _agent() -> tuple[Any, CountingModel]:
    model = CountingModel(messages=_script())
    return create_react_agent(model, [add], checkpointer=MemorySaver()), model


def test_a_recorded_model_call_has_no_callback_handler_as_under_langgraph() -> None:
    from langgraph.prebuilt import create_react_agent as lg_create_react_agent

    ours, model = _agent()
    cfg = {"configurable": {"thread_id": "t"}}
    out = ours.invoke({"messages": [("user", "1+2?")]}, cfg)
    assert out["messages"][-1].content == "3"

    theirs_model = CountingModel(messages=_script())
    with warnings.catch_warnings():  # LangGraph points its users at langchain.agents
        warnings.simplefilter("ignore")
        theirs = lg_create_react_agent(theirs_model, [add])
    theirs.invoke({"messages": [("user", "1+2?")]})
    ambient = _ambient_handlers()
    assert model.handlers == theirs_model.handlers == [ambient, ambient]

    calls = recorded_calls(ours, cfg)
    assert calls[["node", "kind", "name"]].values.tolist() == [
        ["agent", "chat_model", "CountingModel"],
        ["tools", "tool", "add"],
        ["agent", "chat_model", "CountingModel"],
    ]
    assert list(calls["output"]) == ["", "3", "3"]


@pytest.mark.parametrize("recorded_with_handler", [True, False])
def test_a_thread_recorded_with_or_without_a_handler_replays_the_other_way(
    recorded_with_handler: bool,
) -> None:
    agent, model = _agent()
    cfg: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    seen = Seen()
    first = {**cfg, "callbacks": [seen]} if recorded_with_handler else cfg
    agent.invoke({"messages": [("user", "1+2?")]}, first)
    assert model.calls == 2
    if recorded_with_handler:  # the prompt | model sequence ran, and its handler saw it
        assert seen.runs.count("Prompt") == 2 and seen.runs.count("chat_model") == 2

    start = next(s for s in agent.get_state_history(cfg) if s.metadata["step"] == -1)
    again = dict(start.config)
    if not recorded_with_handler:
        again["callbacks"] = [Seen()]
    with replaying(agent, cfg) as replay:
        out = agent.invoke(None, again)
    assert model.calls == 2  # every model call answered from the recording
    assert replay.live == []
    assert [c["kind"] for c in replay.replayed] == ["chat_model", "tool", "chat_model"]
    assert out["messages"][-1].content == "3"


async def test_an_async_run_records_the_same_calls_with_no_handler() -> None:
    agent, model = _agent()
    cfg = {"configurable": {"thread_id": "a"}}
    out = await agent.ainvoke({"messages": [("user", "1+2?")]}, cfg)
    assert out["messages"][-1].content == "3"
    ambient = _ambient_handlers()
    assert model.handlers == [ambient, ambient]
    calls = recorded_calls(agent, cfg)
    assert calls[["node", "kind"]].values.tolist() == [
        ["agent", "chat_model"],
        ["tools", "tool"],
        ["agent", "chat_model"],
    ]
