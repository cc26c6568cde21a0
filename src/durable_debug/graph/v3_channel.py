"""The pieces of the v3 event stream (``stream_events(version="v3")``) a transformer author
uses: :class:`ProtocolEvent` (one event of the run), :class:`StreamChannel` (a projection's
single-consumer queue) and :class:`StreamTransformer` (what turns events into projections).

A run stream pulls the graph one stream part at a time *when a consumer asks*: a cursor on
any channel whose queue is empty calls the run's pump, which takes the next part from
``stream(..., version="v2", subgraphs=True)``, wraps it as a :class:`ProtocolEvent` and hands
it to every transformer (``graph/v3_mux.py``). There is no background thread or task, so
memory is bounded by the consumer's pace. Public at LangGraph's paths ``langgraph.stream`` /
``langgraph.stream.stream_channel``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from typing_extensions import NotRequired, TypedDict

__all__ = [
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "needs_async",
    "protocol_event",
]

T = TypeVar("T")

_log = logging.getLogger(__name__)

Pump = Callable[[], bool]
"""Takes one more part from the graph: False once the run is over."""
APump = Callable[[], Awaitable[bool]]
"""The async lane's pump."""


class EventParams(TypedDict):
    """``params`` of a :class:`ProtocolEvent`: the namespace the event comes from (``[]``
    for the run's own graph), wall-clock milliseconds (use ``seq`` to order), the stream
    mode's chunk and, on ``values`` events, the interrupts pending then."""

    namespace: list[str]
    timestamp: int
    data: Any
    interrupts: NotRequired[tuple[Any, ...]]


class ProtocolEvent(TypedDict):
    """One event of a v3 run: ``method`` is the stream mode (``"values"``, ``"messages"``,
    ``"custom"``…) or a channel's name; ``seq`` numbers the events the root log keeps."""

    type: Literal["event"]
    event_id: NotRequired[str]
    seq: NotRequired[int]
    method: str
    params: EventParams


def protocol_event(method: str, namespace: Any, data: Any, **extra: Any) -> ProtocolEvent:
    """A :class:`ProtocolEvent` of ``method`` from ``namespace`` carrying ``data`` (``extra``:
    more ``params``, such as ``interrupts``)."""
    params: EventParams = {
        "namespace": list(namespace),
        "timestamp": int(time.time() * 1000),
        "data": data,
    }
    params.update(extra)  # type: ignore[typeddict-item]  # only EventParams' optional keys are passed
    return {"type": "event", "method": method, "params": params}


class _Stamper(Protocol):
    def next_push_seq(self) -> int: ...


class StreamChannel(Generic[T]):
    """A single-consumer queue of a projection (``run.values``, a transformer's own output).

    ``name``: when given, each :meth:`push` is also sent into the run's main event log as an
    event whose method is the name (``custom:<name>`` for a transformer that is not native).
    Items are kept only once a consumer has subscribed (iterated the channel) and are dropped
    as it reads them; a second subscription raises, :meth:`tee` / :meth:`atee` fan out. The
    run binds the channel to the sync or the async lane when its transformer is registered;
    only that lane's iteration works. The run closes (or fails) it when the run ends.
    """

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        """``maxlen`` is accepted as in LangGraph (a positive int or None) and not used: a
        queue grows only as fast as its consumer pulls the run."""
        if maxlen is not None and maxlen <= 0:
            raise ValueError("StreamChannel maxlen must be a positive int or None")
        self.name = name
        self._items: deque[tuple[int, T]] = deque()
        self._maxlen = maxlen
        self._closed = False
        self._error: BaseException | None = None
        self._is_async: bool | None = None
        self._subscribed = False
        self._request_more: Pump | None = None
        self._arequest_more: APump | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: _Stamper | None = None

    # -- set up by the run -------------------------------------------------------------------

    def _bind(self, *, is_async: bool) -> None:
        """Fix the lane (once)."""
        if self._is_async is not None:
            raise RuntimeError("StreamChannel is already bound")
        self._is_async = is_async

    def _bind_mux(self, mux: _Stamper) -> None:
        self._mux = mux

    def _wire(self, forward: Callable[[T], None]) -> None:
        self._wire_fn = forward

    # -- producer ----------------------------------------------------------------------------

    def push(self, item: T) -> None:
        """Add ``item`` (kept only when subscribed; RuntimeError if the channel is closed) and
        forward it to the main log when the channel has a name."""
        if self._subscribed:
            if self._closed:
                raise RuntimeError("Cannot push to a closed StreamChannel")
            stamp = self._mux.next_push_seq() if self._mux is not None else 0
            self._items.append((stamp, item))
        if self._wire_fn is not None:
            self._wire_fn(item)

    def close(self) -> None:
        """No more items: the consumer stops once it has read those queued."""
        self._closed = True

    def fail(self, err: BaseException) -> None:
        """End with ``err``: the consumer gets it raised after the queued items."""
        self._error = err
        self._closed = True

    # -- consumers ---------------------------------------------------------------------------

    def _subscribe(self, is_async: bool) -> None:
        if self._is_async is None:
            raise TypeError(
                "StreamChannel has not been bound yet. "
                "Register the transformer with a StreamMux first."
            )
        if self._is_async != is_async:
            if is_async:
                raise TypeError("This StreamChannel is bound to sync mode — use 'for' instead.")
            raise TypeError("This StreamChannel is bound to async mode — use 'async for' instead.")
        if self._subscribed:
            how = ".atee(n)" if is_async else ".tee(n)"
            raise RuntimeError(f"StreamChannel already has a subscriber; use {how} for fan-out.")
        self._subscribed = True

    def __iter__(self) -> Iterator[T]:
        """Subscribe (once) on the sync lane: reading past the queue pulls the run."""
        self._subscribe(False)
        return self._cursor()

    def _cursor(self) -> Iterator[T]:
        while True:
            if self._items:
                yield self._items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            elif self._request_more is None or (
                not self._request_more() and not self._items and not self._closed
            ):
                return

    def __aiter__(self) -> AsyncIterator[T]:
        """Subscribe (once) on the async lane: reading past the queue pulls the run."""
        self._subscribe(True)
        return self._acursor()

    async def _acursor(self) -> AsyncIterator[T]:
        while True:
            if self._items:
                yield self._items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            elif self._arequest_more is None or (
                not await self._arequest_more() and not self._items and not self._closed
            ):
                return

    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """Subscribe and return ``n`` sync iterators that each see every item."""
        if n < 1:
            raise ValueError("tee() requires n >= 1")
        source = iter(self)
        buffers: list[deque[T]] = [deque() for _ in range(n)]
        done = [False]

        def branch(buffer: deque[T]) -> Iterator[T]:
            while True:
                if buffer:
                    yield buffer.popleft()
                    continue
                if done[0]:
                    return
                try:
                    item = next(source)
                except StopIteration:
                    done[0] = True
                    return
                for each in buffers:
                    each.append(item)

        return tuple(branch(b) for b in buffers)

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """Subscribe and return ``n`` async iterators that each see every item (one of them
        at a time pulls the next item, under a lock)."""
        if n < 1:
            raise ValueError("atee() requires n >= 1")
        source = self.__aiter__()
        buffers: list[deque[T]] = [deque() for _ in range(n)]
        done = [False]
        failure: list[BaseException | None] = [None]
        lock = asyncio.Lock()

        async def branch(buffer: deque[T]) -> AsyncIterator[T]:
            while True:
                if buffer:
                    yield buffer.popleft()
                    continue
                if done[0]:
                    if failure[0] is not None:
                        raise failure[0]
                    return
                async with lock:
                    if buffer or done[0]:
                        continue
                    try:
                        item = await source.__anext__()
                    except StopAsyncIteration:
                        done[0] = True
                        continue
                    except Exception as error:
                        failure[0] = error
                        done[0] = True
                        continue
                    for each in buffers:
                        each.append(item)

        return tuple(branch(b) for b in buffers)


class StreamTransformer(ABC):
    """Turns a run's events into projections (the extension point of v3 streaming).

    :meth:`init` returns the projection dict: its keys become ``run.extensions[key]`` (and
    attributes of the run when the class sets ``_native = True``); :class:`StreamChannel`
    values in it are bound, forwarded when named, and closed / failed with the run.
    :meth:`process` sees every event in registration order and returns False to keep it out
    of the main log. The async lane (``astream_events``) awaits :meth:`aprocess` instead;
    a transformer overriding ``aprocess`` / ``afinalize`` / ``afail`` or setting
    ``requires_async`` is refused on the sync lane unless it sets ``supports_sync``.
    ``required_stream_modes``: the stream modes the run must request for it.
    ``before_builtins``: register ahead of the built-in transformers (to change events
    before they are projected). ``scope`` is the namespace the transformer's run stream
    covers (``()`` for the root; a subgraph handle's path for its own pipeline).
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        """Each run (and each subgraph handle) calls the factory with its scope."""
        self.scope: tuple[str, ...] = scope

    @abstractmethod
    def init(self) -> dict[str, Any]:
        """The projection dict (see the class)."""

    def _on_register(self, mux: Any) -> None:
        """Called once the run has registered the transformer (the built-in subgraph
        transformer keeps the run's mux to build its handles' pipelines)."""
        return

    def process(self, event: ProtocolEvent) -> bool:
        """See one event on the sync lane; False keeps it out of the main log."""
        raise NotImplementedError(f"{type(self).__name__} must override process() or aprocess()")

    async def aprocess(self, event: ProtocolEvent) -> bool:
        """The async lane's :meth:`process` (awaited before the next transformer sees the
        event); by default :meth:`process`."""
        return self.process(event)

    def finalize(self) -> None:
        """The run ended normally (its channels are closed after this)."""
        return

    async def afinalize(self) -> None:
        """The async lane's :meth:`finalize`, after every task :meth:`schedule` started."""
        self.finalize()

    def fail(self, err: BaseException) -> None:
        """The run ended with ``err`` (its channels fail with it after this)."""
        return

    async def afail(self, err: BaseException) -> None:
        """The async lane's :meth:`fail`, after the scheduled tasks are cancelled."""
        self.fail(err)

    def schedule(
        self,
        coro: Coroutine[Any, Any, Any],
        *,
        on_error: Literal["log", "raise"] = "log",
    ) -> asyncio.Task[Any]:
        """Run ``coro`` alongside the run (async lane only): the run awaits it before
        :meth:`afinalize` and cancels it on failure. ``on_error="log"`` logs its exception;
        ``"raise"`` makes it fail the run."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop; this "
                "transformer must run under astream(), not stream(). Set "
                "requires_async=True on the class so this fails at registration rather "
                "than at first event."
            ) from None
        task = asyncio.create_task(_logged(coro) if on_error == "log" else coro)
        tasks = self._scheduled()
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return task

    def _scheduled(self) -> set[asyncio.Task[Any]]:
        """The tasks :meth:`schedule` started and still running (made on first use, so a
        subclass need not call ``super().__init__``)."""
        tasks: set[asyncio.Task[Any]] | None = self.__dict__.get("_stream_scheduled_tasks")
        if tasks is None:
            tasks = self.__dict__["_stream_scheduled_tasks"] = set()
        return tasks


async def _logged(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except BaseException:
        _log.exception("Scheduled StreamTransformer task failed")
        return None


def needs_async(transformer: StreamTransformer) -> bool:
    """Whether ``transformer`` can run only on the async lane (see :class:`StreamTransformer`)."""
    if transformer.requires_async:
        return True
    if transformer.supports_sync:
        return False
    cls = type(transformer)
    return any(
        getattr(cls, name) is not getattr(StreamTransformer, name)
        for name in ("aprocess", "afinalize", "afail")
    )
