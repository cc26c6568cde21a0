"""Where checkpoints live: the saver protocol, the serializer and the savers.

from durable_debug.checkpoint import MemorySaver
"""

from __future__ import annotations

from durable_debug.checkpoint._schema import DatabaseSetupError
from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    Checkpoint,
    CheckpointMetadata,
    CheckpointNotFoundError,
    CheckpointTuple,
)
from durable_debug.checkpoint.errors import (
    DurableDebugError,
    DurableDebugWarning,
    GraphChangedError,
    InvalidConfigError,
    StoreClosedError,
    StoreUnavailableError,
    ThreadBusyError,
)
from durable_debug.checkpoint.lease import LeaseLostError
from durable_debug.checkpoint.memory import InMemorySaver, MemorySaver
from durable_debug.checkpoint.objects import allow_types
from durable_debug.checkpoint.postgres import AsyncPostgresSaver, PostgresSaver
from durable_debug.checkpoint.redis import AsyncRedisSaver, RedisSaver
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    SerdeError,
    UnsupportedValueError,
    register_type,
)
from durable_debug.checkpoint.sqlite import AsyncSqliteSaver, SqliteSaver
from durable_debug.checkpoint.url import saver_from_url

__all__ = [
    "AsyncPostgresSaver",
    "AsyncRedisSaver",
    "AsyncSqliteSaver",
    "BaseCheckpointSaver",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointNotFoundError",
    "CheckpointTuple",
    "CorruptPayloadError",
    "DatabaseSetupError",
    "DurableDebugError",
    "DurableDebugWarning",
    "GraphChangedError",
    "InMemorySaver",
    "InvalidConfigError",
    "LeaseLostError",
    "MemorySaver",
    "MsgpackSerializer",
    "PostgresSaver",
    "RedisSaver",
    "SerdeError",
    "SqliteSaver",
    "StoreClosedError",
    "StoreUnavailableError",
    "ThreadBusyError",
    "UnsupportedValueError",
    "allow_types",
    "register_type",
    "saver_from_url",
]
