"""LangGraph's ``langgraph.prebuilt.chat_agent_executor`` module path, for code that imports
the ReAct agent from there (``from langgraph.prebuilt.chat_agent_executor import
create_react_agent``): the same names as :mod:`durable_debug.prebuilt.agent`."""

from __future__ import annotations

from durable_debug.prebuilt.agent import (
    AgentState,
    AgentStateWithStructuredResponse,
    create_react_agent,
)

__all__ = ["AgentState", "AgentStateWithStructuredResponse", "create_react_agent"]
