"""The run streams ``stream_events(version="v3")`` / ``astream_events(version="v3")`` return,
and the handles of the subgraphs they discover.

A run stream owns its :class:`~durable_debug.graph.v3_mux.StreamMux`; native projections
(``values``, ``messages``, ``lifecycle``, ``subgraphs``, and ``updates`` / ``custom`` /
``checkpoints`` / ``debug`` / ``tasks`` when their transformers are registered) are attributes,
every projection is in ``extensions``. Iterating the run gives the main event log. The
consumer's iteration drives the graph (see ``graph/v3_channel.py``); ``output`` /
``interrupted`` / ``interrupts`` run it to the end. A subgraph handle has the same surface for
the subgraph's namespace and is fed by its parent's pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Literal, NoReturn

from durable_debug.graph.v3_channel import APump, ProtocolEvent, Pump, StreamChannel
from durable_debug.graph.v3_mux import StreamMux

__all__ = [
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "GraphRunStream",
    "SubgraphRunStream",
    "SubgraphStatus",
    "to_event",
]

SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]
"""Where a subgraph handle's run is (terminal once it is not ``"started"``)."""


def to_event(part: Any) -> ProtocolEvent:
    """The :class:`ProtocolEvent` of a v2 stream part (``{"type", "ns", "data"}``, and
    ``"interrupts"`` on ``values`` parts)."""
    from durable_debug.graph.v3_channel import protocol_event

    extra = {"interrupts": part["interrupts"]} if "interrupts" in part else {}
    return protocol_event(part["type"], part["ns"], part["data"], **extra)


def _missing(run: object, name: str) -> NoReturn:
    mux = run.__dict__.get("_mux")
    known = ", ".join(sorted(mux.native_keys)) if mux is not None else ""
    raise AttributeError(
        f"{type(run).__name__!r} object has no attribute {name!r} "
        f"(registered projections: {known or 'none'})"
    )


class _RunState:
    """What a run stream tracks from its own ``values`` events: the last state and the
    interrupts."""

    _mux: StreamMux
    _scope_list: list[str]
    _latest: Any
    _interrupted: bool
    _interrupts: list[Any]

    def _setup(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions: Mapping[str, Any] = MappingProxyType(mux.extensions)
        self._exhausted = False
        self._latest = None
        self._interrupted = False
        self._interrupts = []
        self._scope_list = list(mux.scope)
        for key in mux.native_keys:
            setattr(self, key, mux.extensions[key])

    def _observe_event(self, event: ProtocolEvent) -> None:
        if event["method"] != "values" or event["params"]["namespace"] != self._scope_list:
            return
        self._latest = event["params"]["data"]
        interrupts = event["params"].get("interrupts", ())
        if interrupts:
            self._interrupted = True
            self._interrupts.extend(interrupts)

    def _raise_failure(self) -> None:
        error = self._mux._events._error
        if error is not None:
            raise error


class GraphRunStream(_RunState):
    """The sync run stream of ``stream_events(version="v3")`` (see the module). Leaving it
    early (``with`` block, :meth:`abort`) ends the run."""

    values: StreamChannel[dict[str, Any]]
    messages: StreamChannel[Any]
    lifecycle: StreamChannel[Any]
    subgraphs: StreamChannel[SubgraphRunStream]
    updates: StreamChannel[dict[str, Any]]
    custom: StreamChannel[Any]
    checkpoints: StreamChannel[dict[str, Any]]
    debug: StreamChannel[dict[str, Any]]
    tasks: StreamChannel[dict[str, Any]]

    def __getattr__(self, name: str) -> StreamChannel[Any]:
        """A projection no registered transformer provides: AttributeError listing those
        that are."""
        _missing(self, name)

    def __init__(
        self, graph_iter: Iterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        """``graph_iter``: the run's v2 parts (None for a subgraph handle, pulled by its
        parent)."""
        self._graph_iter = graph_iter
        self._setup(mux)
        if wire_pump:
            mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """Take one part from the run into the pipeline; False once it is over."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            event = to_event(next(self._graph_iter))
            self._observe_event(event)
            self._mux.push(event)
            return True
        except StopIteration:
            self._mux.close()
            self._exhausted = True
            return False
        except Exception as error:
            self._mux.fail(error)
            self._exhausted = True
            return False

    def abort(self) -> None:
        """End the run now (its nodes are cancelled) and close the projections."""
        if self._exhausted:
            return
        self._exhausted = True
        graph_iter, self._graph_iter = self._graph_iter, None
        close = getattr(graph_iter, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()
        with contextlib.suppress(Exception):
            self._mux.close()

    def __enter__(self) -> GraphRunStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.abort()

    def _drain(self) -> None:
        while self._pump_next():
            pass
        self._raise_failure()

    @property
    def output(self) -> Any:
        """Run to the end; the last state of this run's graph (raises the run's error)."""
        self._drain()
        return self._latest

    @property
    def interrupted(self) -> bool:
        """Run to the end; whether the run paused on an interrupt."""
        self._drain()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        """Run to the end; the interrupts the run paused on."""
        self._drain()
        return self._interrupts

    def __iter__(self) -> Iterator[ProtocolEvent]:
        """The main event log (subscribes to it: once)."""
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """``(name, item)`` of the named channel projections in the order the items were
        pushed (KeyError for a name no transformer provides; the channels count as
        subscribed while this runs)."""
        channels: dict[str, StreamChannel[Any]] = {}
        try:
            for name in names:
                channel = self.extensions[name]
                if not isinstance(channel, StreamChannel):
                    raise TypeError(
                        "interleave() requires StreamChannel projections, "
                        f"got {type(channel).__name__} for {name!r}"
                    )
                if channel._is_async is None:
                    raise TypeError(
                        f"StreamChannel {name!r} has not been bound yet. "
                        "Register the transformer with a StreamMux first."
                    )
                if channel._is_async:
                    raise TypeError(
                        f"StreamChannel {name!r} is bound to async mode — "
                        "sync interleave() cannot consume async channels."
                    )
                if channel._subscribed:
                    raise RuntimeError(
                        f"StreamChannel {name!r} already has a subscriber; use .tee(n) for fan-out."
                    )
                channel._subscribed = True
                channels[name] = channel
            yield from self._interleaved(channels)
        finally:
            for channel in channels.values():
                channel._subscribed = False

    def _interleaved(self, channels: dict[str, StreamChannel[Any]]) -> Iterator[tuple[str, Any]]:
        done: set[str] = set()
        while len(done) < len(channels):
            first: tuple[int, str] | None = None
            for name, channel in channels.items():
                if name in done:
                    continue
                if channel._items:
                    stamp = channel._items[0][0]
                    if first is None or stamp < first[0]:
                        first = (stamp, name)
                elif channel._closed:
                    if channel._error is not None:
                        raise channel._error
                    done.add(name)
            if first is not None:
                yield first[1], channels[first[1]]._items.popleft()[1]
                continue
            pump = self._mux._pump_fn
            if pump is None or not pump():
                ended = {
                    name
                    for name, channel in channels.items()
                    if name not in done and not channel._items and channel._closed
                }
                for name in ended:
                    error = channels[name]._error
                    if error is not None:
                        raise error
                if not ended:
                    return
                done |= ended


class AsyncGraphRunStream(_RunState):
    """The async run stream ``await graph.astream_events(..., version="v3")`` gives (see the
    module). Cursors awaiting at once share one pump: one of them pulls the run, the others
    wait for its step. ``async with`` (or :meth:`abort`) ends the run when left."""

    values: StreamChannel[dict[str, Any]]
    messages: StreamChannel[Any]
    lifecycle: StreamChannel[Any]
    subgraphs: StreamChannel[AsyncSubgraphRunStream]
    updates: StreamChannel[dict[str, Any]]
    custom: StreamChannel[Any]
    checkpoints: StreamChannel[dict[str, Any]]
    debug: StreamChannel[dict[str, Any]]
    tasks: StreamChannel[dict[str, Any]]

    def __getattr__(self, name: str) -> StreamChannel[Any]:
        """As :meth:`GraphRunStream.__getattr__`."""
        _missing(self, name)

    def __init__(
        self, graph_aiter: AsyncIterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        """``graph_aiter``: the run's v2 parts (None for a subgraph handle)."""
        self._graph_aiter = graph_aiter
        self._setup(mux)
        self._pump_cond = asyncio.Condition()
        self._pumping = False
        self._anext_task: asyncio.Future[Any] | None = None
        self._aborting = False
        if wire_pump:
            mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        """Take one part into the pipeline, or wait for the cursor taking one; False once
        the run is over."""
        async with self._pump_cond:
            if self._exhausted or self._graph_aiter is None:
                return False
            if self._pumping:
                await self._pump_cond.wait()
                return not self._exhausted
            self._pumping = True
        try:
            return await self._pull(self._graph_aiter)
        finally:
            async with self._pump_cond:
                self._pumping = False
                self._pump_cond.notify_all()

    async def _pull(self, graph_aiter: AsyncIterator[Any]) -> bool:
        try:
            # A task of its own, so that abort() can cancel a pull in flight (and the nodes
            # and subgraphs running under it).
            self._anext_task = asyncio.ensure_future(graph_aiter.__anext__())
            try:
                part = await self._anext_task
            except asyncio.CancelledError:
                if self._aborting:
                    self._exhausted = True
                    return False
                self._anext_task.cancel()
                raise
            finally:
                self._anext_task = None
            event = to_event(part)
            self._observe_event(event)
            await self._mux.apush(event)
            return True
        except StopAsyncIteration:
            self._exhausted = True
            await self._mux.aclose()
            return False
        except Exception as error:
            self._exhausted = True
            await self._mux.afail(error)
            return False

    async def abort(self) -> None:
        """End the run now (a pull in flight is cancelled, the run's iterator closed) and
        close the projections."""
        async with self._pump_cond:
            if self._exhausted:
                return
            self._exhausted = True
            self._aborting = True
            graph_aiter, self._graph_aiter = self._graph_aiter, None
            pulling = self._anext_task
            self._pump_cond.notify_all()
        if pulling is not None and not pulling.done():
            pulling.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pulling
        aclose = getattr(graph_aiter, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
        with contextlib.suppress(Exception):
            await self._mux.aclose()

    async def __aenter__(self) -> AsyncGraphRunStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.abort()

    async def _adrain(self) -> None:
        while await self._apump_next():
            pass
        self._raise_failure()

    async def output(self) -> Any:
        """Run to the end; the last state of this run's graph (raises the run's error)."""
        await self._adrain()
        return self._latest

    async def interrupted(self) -> bool:
        """Run to the end; whether the run paused on an interrupt."""
        await self._adrain()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        """Run to the end; the interrupts the run paused on."""
        await self._adrain()
        return self._interrupts

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        """The main event log (subscribes to it: once)."""
        return self._mux._events.__aiter__()


class SubgraphRunStream(GraphRunStream):
    """A subgraph the sync run discovered: ``path`` (its namespace), ``graph_name``,
    ``trigger_call_id`` (the task that runs it), ``status`` and ``error``; its projections
    are pulled by the root run."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        """The handle of ``mux`` (a child of the run's mux, already pulled by the root)."""
        self._parent_pump_fn: Pump | None = mux._pump_fn
        super().__init__(None, mux, wire_pump=False)
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status: SubgraphStatus = "started"
        self.error: str | None = None
        self._seen_terminal = False

    def _pump_next(self) -> bool:
        if (
            self._exhausted
            or self._seen_terminal
            or self._mux._events._closed
            or self._parent_pump_fn is None
        ):
            return False
        return self._parent_pump_fn()


class AsyncSubgraphRunStream(AsyncGraphRunStream):
    """The async lane's :class:`SubgraphRunStream`."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        """As :class:`SubgraphRunStream`."""
        self._parent_apump_fn: APump | None = mux._apump_fn
        super().__init__(None, mux, wire_pump=False)
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status: SubgraphStatus = "started"
        self.error: str | None = None
        self._seen_terminal = False

    async def _apump_next(self) -> bool:
        if (
            self._exhausted
            or self._seen_terminal
            or self._mux._events._closed
            or self._parent_apump_fn is None
        ):
            return False
        return await self._parent_apump_fn()


Handle = SubgraphRunStream | AsyncSubgraphRunStream
"""A subgraph handle of either lane."""
