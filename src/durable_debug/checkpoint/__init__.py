"""Where checkpoints live: the saver protocol, the serializer and the savers.

from durable_debug.checkpoint import MemorySaver
"""

from __future__ import annotations

from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointNotFoundError,
    CheckpointTuple,
)
from durable_debug.checkpoint.memory import InMemorySaver, MemorySaver
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    SerdeError,
    UnsupportedValueError,
    register_type,
)

__all__ = [
    "BaseCheckpointSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointNotFoundError",
    "CheckpointTuple",
    "CorruptPayloadError",
    "InMemorySaver",
    "MemorySaver",
    "MsgpackSerializer",
    "SerdeError",
    "UnsupportedValueError",
    "register_type",
]
