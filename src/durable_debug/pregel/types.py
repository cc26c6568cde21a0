"""LangGraph's deprecated ``langgraph.pregel.types`` module, at the same path under
``durable_debug``: the names it re-exports from ``durable_debug.types``. Importing it gives
LangGraph's ``LangGraphDeprecatedSinceV10`` warning, as LangGraph's does (once per process:
a module runs once)."""

from __future__ import annotations

import warnings

from durable_debug.graph.cache import CachePolicy
from durable_debug.graph.calls import StreamWriter
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10
from durable_debug.graph.types import (
    PregelExecutableTask,
    PregelTask,
    RetryPolicy,
    StateSnapshot,
    default_retry_on,
)
from durable_debug.graph.update import StateUpdate

__all__ = [
    "CachePolicy",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "StateSnapshot",
    "StateUpdate",
    "StreamWriter",
    "default_retry_on",
]

warnings.warn(
    "Importing from langgraph.pregel.types is deprecated. "
    "Please use 'from langgraph.types import ...' instead.",
    LangGraphDeprecatedSinceV10,
    stacklevel=2,
)
