"""LangGraph's ``langgraph.stream.transformers`` (see ``graph/v3_transformers.py``)."""

from durable_debug.graph.v3_transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    LifecyclePayload,
    LifecycleTransformer,
    MessagesTransformer,
    SubgraphStatus,
    SubgraphTransformer,
    TasksTransformer,
    UpdatesTransformer,
    ValuesTransformer,
)

__all__ = [
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]
