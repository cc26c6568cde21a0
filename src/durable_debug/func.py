"""LangGraph's ``langgraph.func`` names, at the same path under ``durable_debug``
(``from langgraph.func import entrypoint, task`` becomes
``from durable_debug.func import entrypoint, task``); see ``graph/func.py``."""

from __future__ import annotations

from durable_debug.graph.func import EntrypointGraph, TaskFunction, TaskFuture, entrypoint, task

__all__ = ["EntrypointGraph", "TaskFunction", "TaskFuture", "entrypoint", "task"]
