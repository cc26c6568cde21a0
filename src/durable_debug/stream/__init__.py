"""LangGraph's ``langgraph.stream``: v3 event streaming (``graph.stream_events(version="v3")``
/ ``await graph.astream_events(..., version="v3")``), its channels and transformers; the
engine's modules ``graph/v3_*.py`` hold them."""

from durable_debug.graph.v3_channel import ProtocolEvent, StreamChannel, StreamTransformer
from durable_debug.graph.v3_run import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)
from durable_debug.graph.v3_transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    LifecyclePayload,
    LifecycleTransformer,
    SubgraphStatus,
    SubgraphTransformer,
    TasksTransformer,
    UpdatesTransformer,
)

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "GraphRunStream",
    "LifecyclePayload",
    "LifecycleTransformer",
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "SubgraphRunStream",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
]
