"""LangGraph's ``langgraph.stream.run_stream`` (see ``graph/v3_run.py``)."""

from durable_debug.graph.v3_run import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)

__all__ = ["AsyncGraphRunStream", "AsyncSubgraphRunStream", "GraphRunStream", "SubgraphRunStream"]
