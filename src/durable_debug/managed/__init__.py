"""LangGraph's ``langgraph.managed`` names at the same path under ``durable_debug``
(``from durable_debug.managed import RemainingSteps, IsLastStep``); see ``graph/managed.py``."""

from __future__ import annotations

from durable_debug.graph.managed import IsLastStep, RemainingSteps

__all__ = ["IsLastStep", "RemainingSteps"]
