"""The dispatcher of a v3 run (``stream_events(version="v3")``): one per run stream (and one
per subgraph handle, scoped to the subgraph's namespace).

It registers the transformers (from factories called with its scope, ``before_builtins`` ones
first), merges their projections into ``extensions``, binds their channels to its lane, and
hands each event to every transformer before appending it to the main event log (numbered
by ``seq`` on the root). A push on a named channel is sent into the main log directly,
without passing the transformers again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from durable_debug.graph.v3_channel import (
    APump,
    ProtocolEvent,
    Pump,
    StreamChannel,
    StreamTransformer,
    needs_async,
    protocol_event,
)

__all__ = ["StreamMux", "TransformerFactory"]

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]
"""Builds a transformer for a scope (a transformer class is one)."""


class StreamMux:
    """Routes a run's events through its transformers into the main log (see the module)."""

    def __init__(
        self,
        transformers: Sequence[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: Sequence[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        assign_seq: bool = True,
    ) -> None:
        """``factories`` are called with ``scope`` (and again for each subgraph handle, see
        :meth:`make_child`); ``transformers`` are registered on this mux only."""
        self.is_async = is_async
        self.scope = scope
        self._assign_seq = assign_seq
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._channels: list[StreamChannel[Any]] = []
        self._seq = 0
        self._push_seq = 0
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        self._owners: dict[str, StreamTransformer] = {}
        self._factories = list(factories) if factories is not None else None
        self._pump_fn: Pump | None = None
        self._apump_fn: APump | None = None
        if factories is not None:
            self._register_all([factory(scope) for factory in factories])
        self._register_all(list(transformers or ()))

    def _register_all(self, transformers: list[StreamTransformer]) -> None:
        early = [t for t in transformers if getattr(t, "before_builtins", False)]
        late = [t for t in transformers if not getattr(t, "before_builtins", False)]
        for transformer in early + late:
            self._register(transformer)

    def _register(self, transformer: StreamTransformer) -> None:
        name = type(transformer).__name__
        if not self.is_async and needs_async(transformer):
            raise RuntimeError(
                f"{name} requires an async run — it overrides aprocess/afinalize/afail or "
                "sets requires_async=True. Use astream(), not stream()."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(
                f"StreamTransformer.init() must return a dict, got {type(projection).__name__}"
            )
        clashes = sorted(set(projection) & set(self.extensions))
        if clashes:
            owned = ", ".join(
                f"{key!r} (owned by {type(self._owners[key]).__name__})" for key in clashes
            )
            raise ValueError(
                f"Transformer {name} returned projection keys that conflict with "
                f"already-registered keys: {owned}"
            )
        native = bool(getattr(transformer, "_native", False))
        self._transformers.append(transformer)
        for value in projection.values():
            if isinstance(value, StreamChannel):
                self._adopt(value, native)
        self.extensions.update(projection)
        for key in projection:
            self._owners[key] = transformer
        if native:
            self.native_keys.update(projection)
        transformer._on_register(self)

    def _adopt(self, channel: StreamChannel[Any], native: bool) -> None:
        channel._bind(is_async=self.is_async)
        channel._bind_mux(self)
        self._channels.append(channel)
        if channel.name is not None:
            method = channel.name if native else f"custom:{channel.name}"
            channel._wire(lambda item: self._forward(method, item))

    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        """The transformer whose projection has ``key``."""
        return self._owners.get(key)

    def next_push_seq(self) -> int:
        """The stamp of the next item queued on one of this mux's channels (arrival order
        across channels, for ``interleave``)."""
        self._push_seq += 1
        return self._push_seq

    # -- pumping -----------------------------------------------------------------------------

    def bind_pump(self, pump: Pump) -> None:
        """Make every cursor of this mux (main log, channels, transformers that ask for it
        with ``_bind_pump``) pull the run through ``pump``."""
        self._pump_fn = pump
        self._events._request_more = pump
        for channel in self._channels:
            channel._request_more = pump
        for transformer in self._transformers:
            bind = getattr(transformer, "_bind_pump", None)
            if bind is not None:
                bind(pump)

    def bind_apump(self, pump: APump) -> None:
        """The async lane's :meth:`bind_pump`."""
        self._apump_fn = pump
        self._events._arequest_more = pump
        for channel in self._channels:
            channel._arequest_more = pump
        for transformer in self._transformers:
            bind = getattr(transformer, "_bind_apump", None)
            if bind is not None:
                bind(pump)

    def make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mux for a subgraph handle at ``scope``: fresh transformers from the same
        factories, pulled by this mux's pump, not numbering its events."""
        if self._factories is None:
            raise RuntimeError(
                "StreamMux.make_child requires the mux to be constructed with `factories=`; "
                "pre-built transformers can't be cloned to a new scope."
            )
        child = StreamMux(
            factories=self._factories, is_async=self.is_async, scope=scope, assign_seq=False
        )
        if self._pump_fn is not None:
            child.bind_pump(self._pump_fn)
        if self._apump_fn is not None:
            child.bind_apump(self._apump_fn)
        return child

    # -- events ------------------------------------------------------------------------------

    def _append(self, event: ProtocolEvent) -> None:
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    def _forward(self, method: str, item: Any) -> None:
        """A named channel's push, as an event of the main log (not shown to transformers)."""
        self._append(protocol_event(method, (), item))

    def push(self, event: ProtocolEvent) -> None:
        """Hand ``event`` to every transformer, then log it unless one returned False."""
        keep = True
        for transformer in self._transformers:
            if not transformer.process(event):
                keep = False
        if keep:
            self._append(event)

    async def apush(self, event: ProtocolEvent) -> None:
        """The async lane's :meth:`push` (each ``aprocess`` awaited in turn)."""
        keep = True
        for transformer in self._transformers:
            if not await transformer.aprocess(event):
                keep = False
        if keep:
            self._append(event)

    def _close_channels(self) -> None:
        for channel in self._channels:
            if not channel._closed:
                channel.close()
        self._events.close()

    def _fail_channels(self, err: BaseException) -> None:
        for channel in self._channels:
            if not channel._closed:
                channel.fail(err)
        if not self._events._closed:
            self._events.fail(err)

    def close(self) -> None:
        """The run ended: ``finalize`` every transformer, close every channel and the log
        (all of them even when a ``finalize`` raises; the first error is raised after)."""
        first: BaseException | None = None
        for transformer in self._transformers:
            try:
                transformer.finalize()
            except BaseException as error:
                first = first or error
        self._close_channels()
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        """The run failed with ``err``: ``fail`` every transformer, fail every channel."""
        for transformer in self._transformers:
            with contextlib.suppress(BaseException):
                transformer.fail(err)
        self._fail_channels(err)

    def _pending(self) -> list[asyncio.Task[Any]]:
        return [
            task
            for transformer in self._transformers
            for task in transformer.__dict__.get("_stream_scheduled_tasks", ())
            if not task.done()
        ]

    async def aclose(self) -> None:
        """The async lane's :meth:`close`, after awaiting the transformers' scheduled tasks
        (one that raised under ``on_error="raise"`` is raised)."""
        pending = self._pending()
        if pending:
            results = await asyncio.gather(*pending, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException) and not isinstance(
                    result, asyncio.CancelledError
                ):
                    raise result
        first: BaseException | None = None
        for transformer in self._transformers:
            try:
                await transformer.afinalize()
            except BaseException as error:
                first = first or error
        self._close_channels()
        if first is not None:
            raise first

    async def afail(self, err: BaseException) -> None:
        """The async lane's :meth:`fail`, after cancelling the scheduled tasks."""
        pending = self._pending()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for transformer in self._transformers:
            with contextlib.suppress(BaseException):
                await transformer.afail(err)
        self._fail_channels(err)
