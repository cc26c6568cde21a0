"""durable_debug: a Jupyter-native time-travel debugger for durable graph execution.

It bundles a LangGraph-compatible engine, so LangGraph code runs with only its imports
changed::

    from durable_debug import StateGraph, START, END, MemorySaver

    g = (StateGraph(State).add_node("a", step_a).add_edge(START, "a")
         .compile(checkpointer=MemorySaver()))
    await g.ainvoke({"value": ""}, {"configurable": {"thread_id": "demo-1"}})
"""

from __future__ import annotations

from typing import Any

from durable_debug._version import __version__ as __version__
from durable_debug.checkpoint import (
    AsyncPostgresSaver,
    AsyncRedisSaver,
    AsyncSqliteSaver,
    BaseCheckpointSaver,
    CheckpointNotFoundError,
    CheckpointTuple,
    CorruptPayloadError,
    DatabaseSetupError,
    DurableDebugError,
    DurableDebugWarning,
    GraphChangedError,
    InMemorySaver,
    InvalidConfigError,
    LeaseLostError,
    MemorySaver,
    PostgresSaver,
    RedisSaver,
    SerdeError,
    SqliteSaver,
    StoreClosedError,
    StoreUnavailableError,
    ThreadBusyError,
    UnsupportedValueError,
    allow_types,
    register_type,
    saver_from_url,
)
from durable_debug.graph import (
    END,
    START,
    CachePolicy,
    Command,
    CompiledStateGraph,
    EmptyInputError,
    GraphInterrupt,
    GraphRecursionError,
    InMemoryCache,
    Interrupt,
    InvalidUpdateError,
    NodeInterrupt,
    Overwrite,
    PregelTask,
    Recovered,
    RetryPolicy,
    Runtime,
    Send,
    StateGraph,
    StateSnapshot,
    StateUpdate,
    StreamWriter,
    aonce,
    arecover,
    current_task_id,
    get_config,
    get_runtime,
    get_store,
    get_stream_writer,
    interrupt,
    once,
    recover,
)
from durable_debug.graph.message import REMOVE_ALL_MESSAGES, MessagesState, add_messages
from durable_debug.store.memory import InMemoryStore


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext durable_debug``: register ``%%graph``, ``%checkpoints`` and ``%diff``."""
    from durable_debug.magics import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    """``durable_debug.TimeTravel``, imported on first use: ``import durable_debug`` stays free
    of anywidget, ipywidgets and pandas."""
    if name == "TimeTravel":
        from durable_debug.widget import TimeTravel

        return TimeTravel
    if name in _REPLAY_NAMES:  # deterministic time travel (durable_debug.inspect.replay)
        import durable_debug.inspect.replay as replay

        return getattr(replay, name)
    raise AttributeError(f"module 'durable_debug' has no attribute {name!r}")


_REPLAY_NAMES = frozenset({"replaying", "replay_check", "debug_task", "recorded_calls"})


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext durable_debug``: remove everything ``%load_ext`` added."""
    from durable_debug.magics import unload_ipython_extension as unload

    unload(ipython)


__all__ = [
    "END",
    "REMOVE_ALL_MESSAGES",
    "START",
    "AsyncPostgresSaver",
    "AsyncRedisSaver",
    "AsyncSqliteSaver",
    "BaseCheckpointSaver",
    "CachePolicy",
    "CheckpointNotFoundError",
    "CheckpointTuple",
    "Command",
    "CompiledStateGraph",
    "CorruptPayloadError",
    "DatabaseSetupError",
    "DurableDebugError",
    "DurableDebugWarning",
    "EmptyInputError",
    "GraphChangedError",
    "GraphInterrupt",
    "GraphRecursionError",
    "InMemoryCache",
    "InMemorySaver",
    "InMemoryStore",
    "Interrupt",
    "InvalidConfigError",
    "InvalidUpdateError",
    "LeaseLostError",
    "MemorySaver",
    "MessagesState",
    "NodeInterrupt",
    "Overwrite",
    "PostgresSaver",
    "PregelTask",
    "Recovered",
    "RedisSaver",
    "RetryPolicy",
    "Runtime",
    "Send",
    "SerdeError",
    "SqliteSaver",
    "StateGraph",
    "StateSnapshot",
    "StateUpdate",
    "StoreClosedError",
    "StoreUnavailableError",
    "StreamWriter",
    "ThreadBusyError",
    "TimeTravel",
    "UnsupportedValueError",
    "add_messages",
    "allow_types",
    "aonce",
    "arecover",
    "current_task_id",
    "debug_task",
    "get_config",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "interrupt",
    "load_ipython_extension",
    "once",
    "recorded_calls",
    "recover",
    "register_type",
    "replay_check",
    "replaying",
    "saver_from_url",
    "unload_ipython_extension",
]
