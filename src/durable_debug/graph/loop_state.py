"""The state one run shares among the parts of :class:`~durable_debug.graph.loop.RunLoop`.

``RunLoop`` is put together from parts, each a class of its own module, stacked on this one:
``loop_stream.LoopStream`` (what the run reports), ``loop_save.LoopSave`` (what it saves),
``loop_start.LoopStart`` (how it loads and starts or resumes) and ``loop_tasks.LoopTasks`` (how a
step's tasks run); ``loop.RunLoop`` drives them. :class:`LoopState` owns no behaviour: it
declares the attributes ``RunLoop.__init__`` sets (each documented there), so every part reads
and writes them typed. It relies on nothing but the types it names.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

if TYPE_CHECKING:
    from collections.abc import Collection

    from durable_debug.checkpoint.base import (
        BaseCheckpointSaver,
        Checkpoint,
        CheckpointMetadata,
        RunnableConfig,
    )
    from durable_debug.graph.algo import Task, TaskRecord
    from durable_debug.graph.calls import Runtime
    from durable_debug.graph.channels import Channel
    from durable_debug.graph.findings import RunFindings
    from durable_debug.graph.interrupts import Answers
    from durable_debug.graph.pregel import CompiledStateGraph
    from durable_debug.graph.push import CallRunner
    from durable_debug.graph.recording import RunRecording
    from durable_debug.graph.saving import RunSaves
    from durable_debug.graph.streams import Producers
    from durable_debug.graph.subgraph import Nesting, Replay, SubgraphStream
    from durable_debug.graph.types import Interrupt

__all__ = ["Durability", "Event", "LoopState", "per_run"]

Event = tuple[str, Any]

Durability = Literal["sync", "async", "exit"]

_T = TypeVar("_T")


class per_run(Generic[_T]):  # lower case, as the decorator it replaces
    """``functools.cached_property`` without its lock (Python 3.11 takes one at each first
    read, and a run reads several once): a value of the run worked out at its first read,
    then kept in the run's ``__dict__``. Two threads reading it at once would both work it
    out, to the same value."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> per_run[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


class LoopState:
    """The attributes of a run, as ``RunLoop.__init__`` sets them."""

    graph: CompiledStateGraph[Any, Any, Any, Any]
    wait: float | None
    nesting: Nesting | None
    input: Any
    config: RunnableConfig
    sink: SubgraphStream | None
    producers: Producers
    updated: frozenset[str]
    forwards: bool
    outbox: list[Event]
    held: list[Event]
    live: collections.deque[Event]
    _wake: asyncio.Event | None
    runtime: Runtime[Any]
    message_tap: Any
    graph_run: Any
    saver: BaseCheckpointSaver | None
    durability: Durability | None
    saves: RunSaves | None
    answers: Answers
    parents: dict[str, str]
    replay: Replay | None
    resuming: bool
    interrupt_before: tuple[str, ...]
    interrupt_after: tuple[str, ...]
    recursion_limit: int
    thread_id: str | None
    checkpoint_ns: str
    paused: bool
    interrupts: tuple[Interrupt[Any], ...]
    values: dict[str, Any]
    write_ms: float | None
    checkpoint: Checkpoint
    checkpoint_config: RunnableConfig
    step: int
    source: str
    metadata: CheckpointMetadata
    record: dict[str, Any]
    findings: RunFindings
    parent_config: RunnableConfig | None
    has_saved: bool
    superseded: bool
    saved_versions: dict[str, str]
    pending: dict[str, TaskRecord]
    pending_names: dict[str, str]
    """Task id → node, for the tasks the loaded checkpoint schedules (``loop_start``)."""
    legacy_ids: dict[str, str]
    """Task id → the id an older version saved its writes under (``ids.adopt_legacy_writes``)."""
    handled: set[str]
    started_handlers: list[Task]
    """Error handlers started while the step's tasks ran side by side (``loop_tasks``)."""
    null_writes: list[tuple[str, Any]]
    given_answers: dict[str, tuple[str, Any]]
    spare_answers: bool
    channels: dict[str, Channel]
    candidates: Collection[str] | None
    reuse_writes: bool
    deferred: list[tuple[Task, list[tuple[str, Any]]]]
    stop: int
    _aio_loop: asyncio.AbstractEventLoop | None
    _loop_thread: int | None
    calls: CallRunner
    recording: RunRecording | None

    # Each attribute above in a slot of its own (set and read without a dict lookup; a run
    # sets some sixty); the dict holds the ``per_run`` values, the weak reference is
    # ``CallRunner``'s.
    __slots__ = (*__annotations__, "__dict__", "__weakref__")
