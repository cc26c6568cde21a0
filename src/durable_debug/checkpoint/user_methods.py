"""A user's saver subclass that overrides saver methods: the run calls those methods.

The engine saves through :meth:`~durable_debug.checkpoint.base.BaseCheckpointSaver.aput_step`
(a step's last writes and its checkpoint in one transaction) and a saver's step queue, and
reads through ``aget_tuple``. A subclass of one of our savers written for LangGraph overrides
``put`` / ``put_writes`` / ``get_tuple`` / ``get_next_version`` (or their async twins) to
watch, change or fail what is saved; LangGraph's synchronous ``invoke``/``stream`` call the
sync methods and its async ones the async methods, so such an override is called on every
save. :class:`SaverCalls` does the same for a run: when the saver's class overrides one of
these methods outside durable_debug, the run saves a step as ``put_writes`` then ``put`` (the
sync ones when synchronous code started the run, see :func:`~durable_debug._sync.sync_caller`)
instead of the one-transaction path; a saver without such overrides keeps the fast path, and
so does one that overrides our own ``aput_step`` or ``step_queue`` (it saves steps its way).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from durable_debug._sync import on_runner_loop, private_loop_context, sync_caller
from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    TaskWrites,
)

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver

__all__ = ["SaverCalls", "overridden_methods"]

_OURS = "durable_debug."

SYNC_METHODS = ("get_tuple", "put", "put_writes", "get_next_version")
"""The saver methods LangGraph's synchronous runs call (``get_next_version`` on both)."""

ASYNC_METHODS = ("aget_tuple", "aput", "aput_writes")
"""The saver methods LangGraph's async runs call."""


STEP_METHODS = ("aput_step", "step_queue")
"""durable_debug's own step saving: a subclass overriding one saves steps its own way."""

_SYNC_WANTED = frozenset(SYNC_METHODS)
_ASYNC_WANTED = frozenset((*ASYNC_METHODS, "get_next_version"))
"""The overrides a sync run calls, and those an async run calls."""


@functools.cache
def _overridden(cls: type) -> frozenset[str]:
    found = set()
    for name in (*SYNC_METHODS, *ASYNC_METHODS, *STEP_METHODS):
        for klass in cls.__mro__:
            if name in vars(klass):
                if not klass.__module__.startswith(_OURS):
                    found.add(name)
                break
    if found.intersection(STEP_METHODS):  # it implements our step protocol: steps go there
        found -= {"put", "put_writes", "aput", "aput_writes", *STEP_METHODS}
    return frozenset(found)


def overridden_methods(saver: BaseCheckpointSaver) -> frozenset[str]:
    """The saver methods a class of ``saver`` defined outside durable_debug overrides."""
    return _overridden(type(saver))


class SaverCalls:
    """How one run calls its saver: through the user's overrides when there are any."""

    __slots__ = ("methods", "saver", "sync", "writes_take_path")

    def __init__(self, saver: BaseCheckpointSaver, *, sync: bool | None = None) -> None:
        self.saver = saver
        self.sync = sync_caller() if sync is None else sync
        """Whether synchronous code started the run (its sync overrides are called)."""
        self.methods = overridden_methods(saver) & (_SYNC_WANTED if self.sync else _ASYNC_WANTED)
        """The overridden methods this run calls; empty: the saver's own fast paths."""
        writes = "put_writes" if self.sync else "aput_writes"
        self.writes_take_path = writes not in self.methods or _takes_task_path(type(saver), writes)
        """Whether the ``put_writes`` (``aput_writes``) override takes ``task_path``
        (LangGraph checks too)."""

    @property
    def saves_by_method(self) -> bool:
        """Whether a step is saved as ``put_writes`` then ``put`` (an override of one)."""
        return bool(self.methods - {"get_tuple", "aget_tuple", "get_next_version"})

    async def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The saver's ``aget_tuple`` (its ``get_tuple`` override on a sync run)."""
        if "get_tuple" in self.methods:
            return cast("CheckpointTuple | None", await _call(self.saver.get_tuple, config))
        return await self.saver.aget_tuple(config)

    async def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes (the ``put_writes`` override on a sync run)."""
        if "put_writes" in self.methods:
            path = (task_path,) if self.writes_take_path else ()
            await _call(self.saver.put_writes, config, writes, task_id, *path)
        elif "aput_writes" in self.methods and not self.writes_take_path:
            await self.saver.aput_writes(config, writes, task_id)
        else:
            await self.saver.aput_writes(config, writes, task_id, task_path)

    async def put_step(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a step as ``aput_step`` does, through the overridden methods if any."""
        if not self.saves_by_method:
            return await self.saver.aput_step(
                config, task_writes, checkpoint, metadata, new_versions
            )
        for task_id, writes, task_path in task_writes:
            await self.put_writes(config, writes, task_id, task_path)
        if "put" in self.methods:
            saved = await _call(self.saver.put, config, checkpoint, metadata, new_versions)
            return cast(RunnableConfig, saved)
        return await self.saver.aput(config, checkpoint, metadata, new_versions)

    def next_version(self, current: str | None) -> None:
        """Call an overridden ``get_next_version`` as LangGraph does when a step writes (its
        errors fail the run); the engine keeps its own versions, which name their branch."""
        if "get_next_version" in self.methods:
            get_next_version = cast(Any, self.saver).get_next_version
            get_next_version(current, None)


@functools.cache
def _takes_task_path(cls: type[BaseCheckpointSaver], method: str) -> bool:
    """Whether ``cls.<method>`` (``put_writes`` or ``aput_writes``) takes a fourth argument
    (``task_path``)."""
    try:
        params = inspect.signature(getattr(cls, method)).parameters.values()
    except (TypeError, ValueError):  # no signature to read: pass it, as to our own savers
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    kinds = [p.kind for p in params]
    return inspect.Parameter.VAR_POSITIONAL in kinds or sum(k in positional for k in kinds) >= 5


async def _call(method: Any, *args: Any) -> Any:
    """A user's sync saver method, run off the event loop: it may call our sync twins
    (``super().put(...)``), which run their coroutine on the shared loop — free while this
    run waits, when the run is on it; a nested run on a private loop may be waited on by the
    shared loop's thread, so there the twins get a private loop of their own."""
    if on_runner_loop():
        return await asyncio.to_thread(method, *args)
    context = private_loop_context()
    return await asyncio.get_running_loop().run_in_executor(None, context.run, method, *args)
