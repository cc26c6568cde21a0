"""The debugger on a prebuilt ReAct agent's thread (``create_react_agent`` with a tool and a
chat model that calls it once, then answers), on our engine and on LangGraph's: ``%%graph``
counts the agent's and the tools' runs, the widget shows every checkpoint the thread saved,
the one where the model asked for the tool says the tools run next and holds the tool call,
a fork edits the model's question to the tool, and a rerun from it ends with a new answer."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from test_timetravel import ids, open_widget, until

from durable_debug import TimeTravel
from durable_debug.magics import CellOptions, GraphSession
from support.seed_graphs import ENGINES


class WeatherModel(BaseChatModel):
    """Asks for the weather tool until a tool has answered, then repeats the answer."""

    @property
    def _llm_type(self) -> str:
        return "weather-script"

    def bind_tools(self, tools: Any, **kwargs: Any) -> WeatherModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            answer = AIMessage(f"The weather: {last.content}")
        else:
            call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1"}
            answer = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=answer)])


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def agent_of(engine: str) -> Any:
    """``create_react_agent`` of ``engine`` with its in-memory saver."""
    if engine == "langgraph":
        from langgraph.checkpoint.memory import InMemorySaver as Saver
        from langgraph.prebuilt import create_react_agent
    else:
        from durable_debug import MemorySaver as Saver
        from durable_debug.prebuilt import create_react_agent
    with warnings.catch_warnings():  # LangGraph's points its users at langchain.agents
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(WeatherModel(), [get_weather], checkpointer=Saver())


CFG = {"configurable": {"thread_id": "agent-1"}}
QUESTION = {"messages": [HumanMessage("What is the weather in Paris?", id="q1")]}


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_a_graph_cell_counts_the_agents_and_the_tools_runs(engine: str) -> None:
    agent = agent_of(engine)
    shown: list[Any] = []
    session = GraphSession({"agent": agent, "cfg": CFG}, shown.append)
    async with session.cell(CellOptions()):
        out = await agent.ainvoke(QUESTION, CFG)
    assert out["messages"][-1].content == "The weather: sunny in Paris"
    counts, widget = shown
    by_node = dict(zip(counts.node.tolist(), counts.executions.tolist(), strict=True))
    assert by_node == {"agent": 2, "tools": 1}  # asked for the tool, then answered
    assert isinstance(widget, TimeTravel) and widget._thread_id == "agent-1"


async def test_the_widget_shows_forks_and_reruns_a_react_agent_thread(engine: str) -> None:
    agent = agent_of(engine)
    await agent.ainvoke(QUESTION, CFG)
    history = [s async for s in agent.aget_state_history(CFG)]
    widget, front = await open_widget(agent, CFG)
    assert ids(widget) == sorted(s.config["configurable"]["checkpoint_id"] for s in history)

    # The checkpoint where the model asked for the tool: the tools run next.
    asked = next(s for s in history if s.next == ("tools",))
    asked_id = asked.config["configurable"]["checkpoint_id"]
    detail = await front.select(asked_id)
    assert detail["next"] == ["tools"]
    assert "get_weather" in str(detail["values"]["messages"])
    assert "messages" in detail["editable"]

    # Fork: the model asks about Rome instead; the fork is saved as the agent's write.
    messages = [m.model_dump() for m in asked.values["messages"]]
    messages[-1]["tool_calls"][0]["args"] = {"city": "Rome"}
    edits = {"messages": json.dumps([messages[-1]])}
    fork = await front.result("fork", checkpoint_id=asked_id, edits=edits, as_node="agent")
    forked = {"configurable": {**CFG["configurable"], "checkpoint_id": fork["checkpoint_id"]}}
    state = await agent.aget_state(forked)
    assert state.next == ("tools",)
    assert state.values["messages"][-1].tool_calls[0]["args"] == {"city": "Rome"}
    assert len(state.values["messages"]) == len(asked.values["messages"])  # replaced by id

    # Rerun from the fork: the tool runs on Rome and the model answers with it.
    before = set(ids(widget))
    started = await front.result("rerun", checkpoint_id=fork["checkpoint_id"])
    assert started["started"] is True
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._error == ""
    assert set(ids(widget)) > before
    latest = await agent.aget_state(CFG)
    assert latest.values["messages"][-1].content == "The weather: sunny in Rome"
