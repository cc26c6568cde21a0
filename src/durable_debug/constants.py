"""LangGraph's ``langgraph.constants`` names, at the same path under ``durable_debug``
(``from langgraph.constants import START, END`` becomes
``from durable_debug.constants import START, END``)."""

from __future__ import annotations

from durable_debug.graph.types import END, START, TAG_HIDDEN, TAG_NOSTREAM

__all__ = ["END", "START", "TAG_HIDDEN", "TAG_NOSTREAM"]
