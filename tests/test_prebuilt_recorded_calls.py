"""A ``create_react_agent`` run records its model and tool calls without adding a callback
handler to them (as under LangGraph, a model sees no handler when none was given), and its
model is called the same way with and without callback handlers: a thread recorded with a
handler is replayed without one, and the other way round, with no call going live."""

from __future__ import annotations

import contextvars
import itertools
import warnings
from typing import Any, ClassVar

import langchain_core.globals
import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langchain_core.tracers.context import register_configure_hook
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


class EnvSeen(Seen):
    """A :class:`Seen` that a configure hook makes when its environment variable is set (its
    runs are noted in the class, since LangChain makes the instance)."""

    made: ClassVar[list[EnvSeen]] = []

    def __init__(self) -> None:
        super().__init__()
        EnvSeen.made.append(self)


_HOOKED: contextvars.ContextVar[Seen | None] = contextvars.ContextVar(
    "test_prebuilt_hooked_handler", default=None
)
_ENV_HOOKED: contextvars.ContextVar[EnvSeen | None] = contextvars.ContextVar(
    "test_prebuilt_env_hooked_handler", default=None
)
register_configure_hook(_HOOKED, True)
register_configure_hook(_ENV_HOOKED, True, EnvSeen, "DURABLE_DEBUG_TEST_HOOKED_HANDLER")


@pytest.mark.parametrize("source", ["hook variable", "hook environment", "debug", "config"])
def test_a_handler_from_outside_the_config_sees_the_prompt_sequence(
    source: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model is called directly only when no handler could see the ``prompt | model``
    runs: a handler a configure hook adds (by its context variable, as the debugger's own
    process-wide handlers are, or by its environment variable), LangChain's debug output and
    a handler manager given in the config all see the "Prompt" run, as under LangGraph."""
    agent, model = _agent()
    seen = Seen()
    cfg: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    token = _HOOKED.set(seen) if source == "hook variable" else None
    if source == "hook environment":
        monkeypatch.setenv("DURABLE_DEBUG_TEST_HOOKED_HANDLER", "true")
        EnvSeen.made.clear()
    if source == "debug":
        monkeypatch.setattr(langchain_core.globals, "_debug", True)
    if source == "config":
        cfg["callbacks"] = CallbackManager(handlers=[seen], inheritable_handlers=[seen])
    try:
        out = agent.invoke({"messages": [("user", "1+2?")]}, cfg)
    finally:
        if token is not None:
            _HOOKED.reset(token)
    assert out["messages"][-1].content == "3"
    assert model.calls == 2
    if source == "debug":
        assert capsys.readouterr().out.count("chain:Prompt] Entering Chain run") == 2
        return
    runs = (
        [r for made in EnvSeen.made for r in made.runs]
        if source == "hook environment"
        else seen.runs
    )
    assert runs.count("Prompt") == 2 and runs.count("chat_model") == 2
