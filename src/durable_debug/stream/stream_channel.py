"""LangGraph's ``langgraph.stream.stream_channel`` (see ``graph/v3_channel.py``)."""

from durable_debug.graph.v3_channel import StreamChannel

__all__ = ["StreamChannel"]
