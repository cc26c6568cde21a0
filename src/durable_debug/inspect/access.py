"""Reading a graph and its saver as the user configured them, sync-only savers included.

LangGraph's sync savers (``SqliteSaver``, ``PostgresSaver``) implement only the sync half of
the saver protocol: their ``aget_tuple``/``alist`` raise ``NotImplementedError``, and so do the
compiled graph's ``aget_state``, ``aget_state_history``, ``aupdate_state`` and ``astream``
that call them. Every read and write the inspect layer, the widget and the magics do goes
through the functions here: they call the async method and, when the saver says it has none,
call the sync twin in a worker thread, so the kernel's event loop keeps running meanwhile.

    snapshots = await astate_history(graph, config)     # aget_state_history, or in a thread
    tup = await aget_checkpoint(saver, config)          # aget_tuple, or get_tuple in a thread

A saver found sync-only is remembered (per saver object), so later calls go straight to the
worker thread. Any other exception is raised as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Protocol, TypeVar, runtime_checkable

from durable_debug.checkpoint.base import CheckpointTuple, RunnableConfig

__all__ = [
    "GraphLike",
    "RunnableGraphLike",
    "SaverLike",
    "aget_checkpoint",
    "alist_checkpoints",
    "alist_since",
    "astate",
    "astate_history",
    "astream",
    "aupdate_state",
    "has_async_methods",
    "is_sync_only",
]

T = TypeVar("T")


@runtime_checkable
class SaverLike(Protocol):
    """A checkpoint saver as the inspect layer reads it: durable_debug's
    (:class:`~durable_debug.checkpoint.base.BaseCheckpointSaver`) or LangGraph's, whose async
    half may raise ``NotImplementedError`` (the functions here then call the sync one). Other
    methods (``alist_threads``, ``serde``, ...) are looked up where they are optional."""

    def get_tuple(self, config: RunnableConfig, /) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (or its thread's latest), or None."""

    def aget_tuple(self, config: RunnableConfig, /) -> Awaitable[CheckpointTuple | None]:
        """Async twin of :meth:`get_tuple`."""

    def list(self, config: RunnableConfig | None, /) -> Iterator[CheckpointTuple]:
        """The checkpoints of ``config``'s thread (every thread for None), newest first."""

    def alist(self, config: RunnableConfig | None, /) -> AsyncIterator[CheckpointTuple]:
        """Async twin of :meth:`list`."""


@runtime_checkable
class GraphLike(Protocol):
    """A compiled graph as the inspect layer reads it: durable_debug's
    :class:`~durable_debug.graph.pregel.CompiledStateGraph`, LangGraph's, or a
    :class:`~durable_debug.inspect.stored.SaverView` standing in for one. Its async methods
    may raise ``NotImplementedError`` when its saver is sync-only (see above)."""

    @property
    def checkpointer(self) -> Any:
        """The graph's saver (None when compiled without one)."""

    def get_state(self, config: RunnableConfig, /) -> Any:
        """The thread's ``StateSnapshot`` at ``config``."""

    def aget_state(self, config: RunnableConfig, /) -> Awaitable[Any]:
        """Async twin of :meth:`get_state`."""

    def get_state_history(self, config: RunnableConfig, /) -> Iterator[Any]:
        """Every ``StateSnapshot`` of the thread, newest first."""

    def aget_state_history(self, config: RunnableConfig, /) -> AsyncIterator[Any]:
        """Async twin of :meth:`get_state_history`."""

    def get_graph(self) -> Any:
        """The graph's drawable shape (None when only a store is at hand)."""


@runtime_checkable
class RunnableGraphLike(GraphLike, Protocol):
    """A compiled graph the inspect layer also runs and forks (the widget's actions):
    durable_debug's or LangGraph's, not a stand-in."""

    def update_state(
        self, config: RunnableConfig, values: Any, /, as_node: str | None = None
    ) -> RunnableConfig:
        """Save ``values`` as a new checkpoint after ``config``'s; its config."""

    def aupdate_state(
        self, config: RunnableConfig, values: Any, /, as_node: str | None = None
    ) -> Awaitable[RunnableConfig]:
        """Async twin of :meth:`update_state`."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, /, **kwargs: Any
    ) -> Iterator[Any]:
        """Run the graph, yielding what its stream modes give."""

    def astream(
        self, input: Any, config: RunnableConfig | None = None, /, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""


_SYNC_ONLY: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
_THREAD_HINT = (
    "the saver's SQLite connection refuses to be used from another thread; open it with "
    "sqlite3.connect(path, check_same_thread=False) (LangGraph's SqliteSaver.from_conn_string "
    "does)"
)


def is_sync_only(saver: SaverLike) -> bool:
    """True once ``saver`` has answered an async call with ``NotImplementedError``."""
    try:
        return _SYNC_ONLY.get(saver, False)
    except TypeError:  # not weak-referenceable
        return False


def _mark_sync_only(saver: SaverLike) -> None:
    with contextlib.suppress(TypeError):
        _SYNC_ONLY[saver] = True


def _saver_of(graph: GraphLike) -> Any:
    return getattr(graph, "checkpointer", None)


async def _in_thread(call: Callable[[], T]) -> T:
    try:
        return await asyncio.to_thread(call)
    except Exception as error:
        if "thread" in str(error) and type(error).__name__ == "ProgrammingError":
            raise RuntimeError(f"{error} ({_THREAD_HINT})") from error
        raise


async def _either(
    saver: SaverLike, run_async: Callable[[], Awaitable[T]], run_sync: Callable[[], T]
) -> T:
    """``await run_async()``, or ``run_sync()`` in a worker thread for a sync-only saver."""
    if not is_sync_only(saver):
        try:
            return await run_async()
        except NotImplementedError:
            _mark_sync_only(saver)
    return await _in_thread(run_sync)


async def _collect(iterator: AsyncIterator[T]) -> list[T]:
    return [item async for item in iterator]


async def astate_history(graph: GraphLike, config: RunnableConfig) -> list[Any]:
    """Every ``StateSnapshot`` of the thread, newest first (``get_state_history``)."""
    return await _either(
        _saver_of(graph),
        lambda: _collect(graph.aget_state_history(config)),
        lambda: list(graph.get_state_history(config)),
    )


async def astate(graph: GraphLike, config: RunnableConfig) -> Any:
    """The graph's ``StateSnapshot`` for ``config`` (``get_state``)."""
    return await _either(
        _saver_of(graph), lambda: graph.aget_state(config), lambda: graph.get_state(config)
    )


async def alist_checkpoints(
    saver: SaverLike, config: RunnableConfig | None
) -> list[CheckpointTuple]:
    """The saver's checkpoint tuples for ``config``, newest first (``list``)."""
    return await _either(
        saver, lambda: _collect(saver.alist(config)), lambda: list(saver.list(config))
    )


async def alist_since(
    saver: SaverLike, config: RunnableConfig, since: str
) -> list[CheckpointTuple]:
    """The saver's checkpoint tuples for ``config`` from checkpoint id ``since`` on, newest
    first: the listing (newest first, as every saver lists) stops at the first older one, so
    only what is new is read."""

    async def run_async() -> list[CheckpointTuple]:
        found: list[CheckpointTuple] = []
        async for tup in saver.alist(config):
            if str(tup.config["configurable"]["checkpoint_id"]) < since:
                break
            found.append(tup)
        return found

    def run_sync() -> list[CheckpointTuple]:
        found: list[CheckpointTuple] = []
        for tup in saver.list(config):
            if str(tup.config["configurable"]["checkpoint_id"]) < since:
                break
            found.append(tup)
        return found

    return await _either(saver, run_async, run_sync)


async def aget_checkpoint(saver: SaverLike, config: RunnableConfig) -> CheckpointTuple | None:
    """The saver's checkpoint tuple for ``config``, or None (``get_tuple``)."""
    return await _either(saver, lambda: saver.aget_tuple(config), lambda: saver.get_tuple(config))


async def aupdate_state(
    graph: RunnableGraphLike, config: RunnableConfig, values: Any, as_node: str | None = None
) -> RunnableConfig:
    """Write a fork with the graph's own ``update_state``; returns the new checkpoint's config."""
    return await _either(
        _saver_of(graph),
        lambda: graph.aupdate_state(config, values, as_node=as_node),
        lambda: graph.update_state(config, values, as_node=as_node),
    )


async def astream(
    graph: RunnableGraphLike, command: Any, config: RunnableConfig, **kwargs: Any
) -> AsyncIterator[Any]:
    """The graph's ``astream`` events; for a sync-only saver, its ``stream`` in a thread.

    Cancelling the consumer (Stop in the widget) stops the sync stream after the step it is
    running, the way closing ``stream`` does.
    """
    saver = _saver_of(graph)
    if not is_sync_only(saver):
        stream = graph.astream(command, config, **kwargs)
        try:
            first = await stream.__anext__()
        except StopAsyncIteration:
            return
        except NotImplementedError:
            _mark_sync_only(saver)
        else:
            yield first
            async for event in stream:
                yield event
            return
    async for event in _threaded(lambda: graph.stream(command, config, **kwargs)):
        yield event


_DONE = object()


async def _threaded(make: Callable[[], Iterator[Any]]) -> AsyncIterator[Any]:
    """Iterate a blocking iterator in a worker thread, handing each item to this loop."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            iterator = make()
            try:
                for item in iterator:
                    loop.call_soon_threadsafe(queue.put_nowait, (item, None))
                    if stop.is_set():
                        break
            finally:
                close = getattr(iterator, "close", None)
                if close is not None:
                    close()
        except BaseException as error:  # handed to the consumer, raised there
            loop.call_soon_threadsafe(queue.put_nowait, (_DONE, error))
            return
        loop.call_soon_threadsafe(queue.put_nowait, (_DONE, None))

    worker = loop.run_in_executor(None, pump)
    try:
        while True:
            item, error = await queue.get()
            if item is _DONE:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        with contextlib.suppress(BaseException):
            await asyncio.shield(worker)


def has_async_methods(saver: SaverLike | None) -> bool:
    """False for a saver that implements only the sync half of the saver protocol, as
    LangGraph's ``SqliteSaver`` and ``PostgresSaver`` do (their async methods are the base
    class's, which raise ``NotImplementedError``), or that has already answered an async call
    so; True for every other saver (durable_debug's, LangGraph's async and in-memory ones)."""
    if saver is None:
        return True
    if is_sync_only(saver):
        return False
    for cls in type(saver).__mro__:
        if "aget_tuple" in vars(cls):
            base = cls.__name__ == "BaseCheckpointSaver" and cls.__module__.startswith("langgraph")
            return not base
    return True
