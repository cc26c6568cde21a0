"""LangChain runnables and LangGraph's prebuilt nodes on both libraries: ``RunnableLambda`` and
an LCEL chain as nodes and as a conditional edge, LangGraph's own ``ToolNode`` and
``tools_condition`` (from ``langgraph.prebuilt``) in durable_debug graphs, and a ReAct agent
built by hand from a fake chat model that calls tools (no network)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, tools_condition
from parity_harness import Api, Trace, acheck_parity
from test_parity_messages import names, shown
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


async def test_runnable_lambda_and_lcel_chain_as_nodes_and_branch():
    async def scenario(api: Api, trace: Trace) -> None:
        double = RunnableLambda(lambda s: {"n": s["n"] * 2, "log": ["double"]}, name="double")
        chain = RunnableLambda(lambda s: s["n"] + 1) | RunnableLambda(
            lambda n: {"n": n, "log": ["chain"]}
        )
        route = RunnableLambda(lambda s: "big" if s["n"] > 10 else "small", name="route")

        async def big(state: State) -> dict:
            return {"log": ["big"]}

        async def small(state: State) -> dict:
            return {"log": ["small"]}

        builder = api.StateGraph(State).add_node("double", double).add_node("chain", chain)
        builder.add_node("big", big).add_node("small", small)
        builder.add_edge(api.START, "double").add_edge("double", "chain")
        builder.add_conditional_edges("chain", route, ["big", "small"])
        g = builder.compile(checkpointer=api.MemorySaver())
        for n in (1, 7):
            cfg = {"configurable": {"thread_id": f"r{n}"}}
            await trace.run(f"run {n}", g.ainvoke({"n": n, "log": []}, cfg))
            trace.history(f"history {n}", [s async for s in g.aget_state_history(cfg)])
        trace.note("nodes", sorted(g.get_graph().nodes))

    await acheck_parity(scenario)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Say ``text`` loudly."""
    return text.upper() + "!"


class ToolCallingFake(GenericFakeChatModel):
    """A fake chat model that accepts ``bind_tools`` (its replies are scripted)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self


def scripted_model() -> ToolCallingFake:
    """Calls add and shout in one turn, then answers."""
    calls = [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "call-add"},
        {"name": "shout", "args": {"text": "five"}, "id": "call-shout"},
    ]
    return ToolCallingFake(
        messages=iter(
            [
                AIMessage(content="", id="ai-1", tool_calls=calls),
                AIMessage(content="2 + 3 = 5, FIVE!", id="ai-2"),
            ]
        )
    )


def tool_messages(value: Any) -> Any:
    """Tool messages as (tool_call_id, name, content, status), for both libraries."""
    return [
        (m.tool_call_id, m.name, m.content, m.status) for m in value["messages"] if m.type == "tool"
    ]


async def test_react_agent_with_tool_node_and_tools_condition():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = names(api)
        llm = scripted_model().bind_tools([add, shout])

        def agent(state: lib.MessagesState) -> dict:  # type: ignore[name-defined]
            trace.ran("agent")
            return {"messages": [llm.invoke(state["messages"])]}

        builder = api.StateGraph(lib.MessagesState).add_node("agent", agent)
        builder.add_node("tools", ToolNode([add, shout]))
        builder.add_edge(api.START, "agent").add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "agent"}}
        question = {"messages": [HumanMessage("what is 2+3, loudly?", id="q")]}
        updates = [u async for u in g.astream(question, cfg, stream_mode="updates")]
        trace.note("updates", shown(trace, updates))
        state = await g.aget_state(cfg)
        trace.note("messages", shown(trace, state.values))
        trace.note("tool messages", tool_messages(state.values))
        trace.note(
            "history",
            [
                (s.metadata["step"], s.next, shown(trace, s.values))
                async for s in g.aget_state_history(cfg)
            ],
        )
        trace.note("executions of the model", trace.executions.get("agent"))

    await acheck_parity(scenario)
