"""LangGraph's ``langgraph.pregel`` package, at the same path under ``durable_debug``:
``Pregel`` and ``NodeBuilder`` (the low-level API, ``graph/lowlevel.py``), and the modules
listed here."""

from __future__ import annotations

from durable_debug.graph.lowlevel import NodeBuilder, Pregel

__all__ = ["NodeBuilder", "Pregel"]
