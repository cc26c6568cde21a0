"""Stream mode ``"tools"`` as LangGraph has it: a tool call's start (with its input), its
output deltas (``ToolRuntime.emit_output_delta``), its end or its error, under the namespace
of the graph it runs in; nothing for a tool called outside a node's tool call."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from parity_harness import Api, Trace, check_parity

pytestmark = pytest.mark.parity


def prebuilt(api: Api) -> Any:
    if api.name == "langgraph":
        import langgraph.prebuilt as module
    else:
        import durable_debug.prebuilt as module
    return module


def messages_state(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.graph import MessagesState
    else:
        from durable_debug.graph import MessagesState
    return MessagesState


def tool_graph(api: Api, calls: list[dict[str, Any]]) -> Any:
    """START → caller (asks for ``calls``) → tools (a ToolNode) → END."""
    module = prebuilt(api)

    def echo(text: str, runtime: Any) -> str:
        """Echo the text, streaming it a letter at a time."""
        for letter in text:
            runtime.emit_output_delta(letter)
        return f"echoed:{text}"

    # the annotations as objects (this module's are strings), so the runtime is injected
    echo.__annotations__ = {"text": str, "runtime": module.ToolRuntime, "return": str}
    echo_tool = tool(echo)

    @tool
    def broken(text: str) -> str:
        """Always fails."""
        raise ValueError(f"cannot {text}")

    def caller(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", id="ai", tool_calls=calls)]}

    return (
        api.StateGraph(messages_state(api))
        .add_node("caller", caller)
        .add_node("tools", module.ToolNode([echo_tool, broken], handle_tool_errors=True))
        .add_edge(api.START, "caller")
        .add_edge("caller", "tools")
        .compile()
    )


def shown(chunk: Any) -> Any:
    """A chunk with a ToolMessage output reduced to its content."""
    if isinstance(chunk, tuple):
        return tuple(shown(part) for part in chunk)
    if isinstance(chunk, dict) and "output" in chunk:
        output = chunk["output"]
        return {**chunk, "output": getattr(output, "content", output)}
    return chunk


def test_tools_mode_reports_each_tool_call():
    def scenario(api: Api, trace: Trace) -> None:
        calls = [{"name": "echo", "args": {"text": "hi"}, "id": "tc1", "type": "tool_call"}]
        graph = tool_graph(api, calls)
        chunks = graph.stream({"messages": []}, stream_mode="tools")
        trace.note("tools only", [shown(c) for c in chunks])
        mixed = graph.stream({"messages": []}, stream_mode=["updates", "tools"])
        trace.note("with updates", [mode for mode, _ in mixed])
        chunks = graph.stream({"messages": []}, stream_mode=["tools"], subgraphs=True)
        trace.note("subgraphs", [shown(c) for c in chunks])

    check_parity(scenario)


def test_tools_mode_reports_a_failing_tool():
    def scenario(api: Api, trace: Trace) -> None:
        calls = [{"name": "broken", "args": {"text": "go"}, "id": "tc2", "type": "tool_call"}]
        chunks = tool_graph(api, calls).stream({"messages": []}, stream_mode="tools")
        trace.note("error", [shown(c) for c in chunks])

    check_parity(scenario)


def test_tools_of_a_subgraph_stream_under_its_namespace():
    def scenario(api: Api, trace: Trace) -> None:
        calls = [{"name": "echo", "args": {"text": "ab"}, "id": "tc3", "type": "tool_call"}]
        inner = tool_graph(api, calls)
        outer = (
            api.StateGraph(messages_state(api))
            .add_node("inner", inner)
            .add_edge(api.START, "inner")
            .compile()
        )
        with_subgraphs = outer.stream({"messages": []}, stream_mode="tools", subgraphs=True)
        trace.note(
            "subgraphs",
            [(tuple(n.split(":")[0] for n in ns), shown(c)) for ns, c in with_subgraphs],
        )
        trace.note("without", list(outer.stream({"messages": []}, stream_mode="tools")))

    check_parity(scenario)
