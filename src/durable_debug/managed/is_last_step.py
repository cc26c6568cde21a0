"""LangGraph's ``langgraph.managed.is_last_step`` path: ``IsLastStep``, ``RemainingSteps``
and their managers (see ``graph/managed.py``)."""

from __future__ import annotations

from durable_debug.graph.managed import (
    IsLastStep,
    IsLastStepManager,
    RemainingSteps,
    RemainingStepsManager,
)

__all__ = ["IsLastStep", "IsLastStepManager", "RemainingSteps", "RemainingStepsManager"]
