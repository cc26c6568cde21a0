"""LangGraph's prebuilt agent parts, at the same path under ``durable_debug``
(``from langgraph.prebuilt import ToolNode`` becomes ``from durable_debug.prebuilt import
ToolNode``): a node that runs tool calls, the edge that routes to it, and the ReAct agent built
from them.

    from durable_debug.prebuilt import create_react_agent
    agent = create_react_agent(model, [search], checkpointer=SqliteSaver("runs.db"))

Needs ``langchain-core`` (``pip install langchain-core``). LangGraph's ``ValidationNode`` and
its tool-call middleware (``wrap_tool_call``) are not provided.
"""

from __future__ import annotations

try:
    import langchain_core  # noqa: F401
except ImportError as exc:  # pragma: no cover - the dev extra installs it
    raise ImportError(
        "durable_debug.prebuilt needs langchain-core: pip install langchain-core"
    ) from exc

from durable_debug.graph.types import adopt_langchain_tool_output
from durable_debug.prebuilt.agent import (
    AgentState,
    AgentStateWithStructuredResponse,
    create_react_agent,
)
from durable_debug.prebuilt.tool_node import (
    InjectedState,
    InjectedStore,
    ToolCallWithContext,
    ToolInvocationError,
    ToolNode,
    ToolRuntime,
    tools_condition,
)

adopt_langchain_tool_output()  # tools in a ToolNode may return durable_debug's Command

__all__ = [
    "AgentState",
    "AgentStateWithStructuredResponse",
    "InjectedState",
    "InjectedStore",
    "ToolCallWithContext",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "create_react_agent",
    "tools_condition",
]
