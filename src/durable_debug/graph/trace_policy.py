"""``add_node(..., trace_policy=TracePolicy(...))``: what tracers record of a node's run.

    graph.add_node("chat", chat, trace_policy=TracePolicy(process_inputs=omit_payload))

As in LangGraph, the policy changes only what *tracers* (LangChain ``BaseTracer`` handlers,
such as LangSmith's) record as the node run's input and output: the node itself, the other
callback handlers, the stream modes and ``astream_events`` see the real values, and the runs
under the node (chat models, tools) are unchanged. A processor is called with the real value
and returns the value to record; one that raises is logged and the real value recorded.
Streaming handlers (``astream_log``'s, ``astream_events``') count as real handlers, not
tracers: they feed the caller's own stream.
"""

from __future__ import annotations

import copy
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "TracePolicy",
    "langsmith_tracing",
    "omit_payload",
    "recorded_payload",
    "split_tracers",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True, slots=True)
class TracePolicy:
    """How a node's own run is recorded by tracers (not a way to redact secrets: the runs
    under the node and the graph's run keep the real values)."""

    process_inputs: Callable[[Any], Any] | None = None
    """Called with the node's input; returns what tracers record as the run's input."""
    process_outputs: Callable[[Any], Any] | None = None
    """Called with the node's output; returns what tracers record as the run's output."""


def omit_payload(_value: Any) -> dict[str, Any]:
    """A :class:`TracePolicy` processor recording an empty payload (the run and its timing
    stay in the trace)."""
    return {}


def recorded_payload(value: Any, process: Callable[[Any], Any] | None) -> Any:
    """What tracers record of ``value``: ``process(value)``, or ``value`` itself when there
    is no processor or it raised (the error is logged, the node runs on)."""
    if process is None:
        return value
    try:
        return process(value)
    except Exception:
        logger.exception("a TracePolicy processor raised; the tracers record the real value")
        return value


_tracing_is_enabled: Callable[[], Any] | None = None
"""LangSmith's ``tracing_is_enabled``, once :func:`langsmith_tracing` has imported it."""


def langsmith_tracing() -> bool:
    """Whether LangSmith tracing is on (``tracing_context(enabled=True)``, or its environment
    variables): a run then reports to LangChain's tracer even without ``callbacks``, as
    LangGraph's runs do, and each node runs inside its LangSmith run tree."""
    global _tracing_is_enabled
    ask = _tracing_is_enabled
    if ask is None:
        if "langsmith" not in sys.modules:  # tracing needs it imported: nothing to ask
            return False
        from langsmith.utils import tracing_is_enabled

        ask = _tracing_is_enabled = tracing_is_enabled  # (imported once, not at each run)
    return bool(ask())


def _is_streaming(handler: Any) -> bool:
    """A streaming handler by inheritance (LangChain's protocol also matches any handler
    that merely has tap methods)."""
    from langchain_core.tracers._streaming import _StreamingCallbackHandler

    return _StreamingCallbackHandler in type(handler).__mro__


def split_tracers(manager: Any) -> tuple[Any, Any]:
    """Two shallow copies of a callback manager or run manager: one with its handlers that
    are not tracers, one with its tracers (``BaseTracer`` handlers that do not stream)."""
    from langchain_core.tracers.base import BaseTracer

    tracers = [h for h in manager.handlers if isinstance(h, BaseTracer) and not _is_streaming(h)]
    real, traced = copy.copy(manager), copy.copy(manager)
    real.handlers = [h for h in manager.handlers if h not in tracers]
    traced.handlers = tracers
    return real, traced
