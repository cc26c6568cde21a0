"""The run stream :meth:`RemoteGraph.stream_events(version="v3")
<durable_debug.pregel.remote.RemoteGraph.stream_events>` returns: the ``langgraph_sdk`` thread
stream of a run on a LangGraph API server, with the surface of a local graph's v3 run stream.

    with remote.stream_events({"messages": [...]}, version="v3") as run:
        for snapshot in run.values: ...
        run.output, run.interrupted, run.interrupts

Entering the stream enters the SDK's thread stream and starts the run (a failed start leaves
the SDK's stream again); ``values``, ``messages``, ``tool_calls``, ``subgraphs`` are the SDK's
projections, ``extensions[name]`` also reaches the ``updates`` / ``checkpoints`` / ``tasks`` /
``custom`` channels (each event's ``params.data``) and custom extensions; ``abort()`` cancels
the run and closes the stream. Iterating the stream gives the SDK's raw events.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from types import TracebackType
from typing import Any

from durable_debug.graph.types import Command, from_langgraph

logger = logging.getLogger(__name__)

__all__ = [
    "V3_SUPPORTED_KWARGS",
    "AsyncRemoteGraphRunStream",
    "ChannelProjection",
    "ProjectionRegistry",
    "RemoteGraphRunStream",
    "translate_command_input",
]

V3_SUPPORTED_KWARGS = frozenset({"metadata", "headers"})
"""The keyword arguments a v3 event stream of a remote graph takes besides input and config."""


def translate_command_input(input: Any) -> Any:
    """The ``input`` a v3 run is started with: a ``Command(resume=v)`` becomes ``v`` (the
    server wraps it as the resume itself when the thread is interrupted); a Command with
    ``goto`` or ``update`` raises NotImplementedError (a v3 start has no such field);
    anything else is sent as it is."""
    command = from_langgraph(input)
    if not isinstance(command, Command):
        return input
    if command.goto or command.update:
        raise NotImplementedError(
            "RemoteGraph v3 streaming supports `Command(resume=...)` only; `goto` / `update` "
            "are not supported by the v3 `run.start` path."
        )
    return command.resume if command.has_resume else None


def _channel_data(channel: str, event: Mapping[str, Any]) -> Iterator[Any]:
    """An event's ``params.data`` when it is of ``channel`` and carries data."""
    if event.get("method") != channel:
        return
    data = (event.get("params") or {}).get("data")
    if data is not None:
        yield data


class ChannelProjection:
    """The items of one wire channel the SDK has no typed projection for: each event's
    ``params.data``. Iterate it with ``for`` on a sync stream, ``async for`` on an async
    one (the stream must be entered)."""

    def __init__(self, sdk: Any, channel: str) -> None:
        self._sdk = sdk
        self._channel = channel

    def __iter__(self) -> Iterator[Any]:
        for event in self._sdk.subscribe([self._channel]):
            yield from _channel_data(self._channel, event)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._aiter()

    async def _aiter(self) -> AsyncIterator[Any]:
        async for event in self._sdk.subscribe([self._channel]):
            for item in _channel_data(self._channel, event):
                yield item


class ProjectionRegistry(Mapping[str, Any]):
    """``run.extensions``: projection by channel name. The typed ones are the SDK's, the
    decoded ones :class:`ChannelProjection` s, any other name a custom extension channel of
    the SDK's. ``lifecycle`` is left out (the SDK consumes it to drive ``output`` and
    ``interrupted``), as is ``debug`` (not a v3 channel)."""

    TYPED = ("values", "messages", "tool_calls", "subgraphs")
    DECODED = ("updates", "checkpoints", "tasks", "custom")
    NATIVE = TYPED + DECODED

    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk

    def __getitem__(self, name: str) -> Any:
        if name in self.TYPED:
            return getattr(self._sdk, name)
        if name in self.DECODED:
            return ChannelProjection(self._sdk, name)
        return self._sdk.extensions[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.NATIVE)

    def __len__(self) -> int:
        return len(self.NATIVE)


class _Surface:
    """What the sync and async run streams share: the start arguments and the projections."""

    def __init__(
        self,
        client: Any,
        sdk_thread: Any,
        input: Any,
        config: Any,
        metadata: dict[str, Any] | None,
    ) -> None:
        self._client = client
        self._sdk = sdk_thread
        self._start_kwargs: dict[str, Any] = {
            "input": translate_command_input(input),
            "config": config,
            "metadata": metadata,
        }
        self._run_id: str | None = None
        self._closed = False

    @property
    def values(self) -> Any:
        """The state after each step (the SDK's projection)."""
        return self._sdk.values

    @property
    def messages(self) -> Any:
        """The chat model message streams (the SDK's projection)."""
        return self._sdk.messages

    @property
    def subgraphs(self) -> Any:
        """The subgraph run handles (the SDK's projection)."""
        return self._sdk.subgraphs

    @property
    def tool_calls(self) -> Any:
        """Tool executions (the ``tools`` channel): started, output, finished."""
        return self._sdk.tool_calls

    @property
    def extensions(self) -> Mapping[str, Any]:
        """Every projection by channel name (see :class:`ProjectionRegistry`)."""
        return ProjectionRegistry(self._sdk)


class RemoteGraphRunStream(_Surface):
    """A sync v3 run stream of a remote graph (see the module's docstring)."""

    def __init__(
        self,
        *,
        sync_client: Any,
        sdk_thread: Any,
        input: Any,
        config: Any,
        metadata: dict[str, Any] | None,
    ) -> None:
        super().__init__(sync_client, sdk_thread, input, config, metadata)
        self._events: Iterator[Any] | None = None

    def __enter__(self) -> RemoteGraphRunStream:
        if self._closed:
            raise RuntimeError("this remote run stream is closed already")
        self._sdk.__enter__()
        try:
            started = self._sdk.run.start(**self._start_kwargs)
        except BaseException:
            self._sdk.__exit__(*sys.exc_info())
            raise
        self._run_id = started["run_id"]
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._closed:
            self._closed = True
            self._sdk.__exit__(exc_type, exc, tb)

    @property
    def output(self) -> Any:
        """The run's final state (the SDK's)."""
        return self._sdk.output

    @property
    def interrupted(self) -> bool:
        """Whether the run is paused on an interrupt now (does not wait for the run's end,
        unlike a local run stream's)."""
        return bool(self._sdk.interrupted)

    @property
    def interrupts(self) -> list[Any]:
        """The interrupts outstanding now."""
        return list(self._sdk.interrupts)

    def abort(self) -> None:
        """Cancel the run (when it started) and close the stream; a failure of either is
        logged, not raised. Once only."""
        if self._closed:
            return
        self._closed = True
        if self._run_id is not None:
            try:
                self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:
                logger.debug("abort: runs.cancel failed", exc_info=True)
        try:
            self._sdk.close()
        except Exception:
            logger.debug("abort: closing the SDK stream failed", exc_info=True)

    def __iter__(self) -> Iterator[Any]:
        if self._events is None:
            self._events = iter(self._sdk.events)
        return self._events

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """``(name, item)`` of the named projections, in the order their items arrive."""
        yield from self._sdk.interleave_projections(list(names))


class AsyncRemoteGraphRunStream(_Surface):
    """An async v3 run stream of a remote graph (``async with``; ``output()``,
    ``interrupted()`` and ``interrupts()`` are awaited)."""

    def __init__(
        self,
        *,
        client: Any,
        sdk_thread: Any,
        input: Any,
        config: Any,
        metadata: dict[str, Any] | None,
    ) -> None:
        super().__init__(client, sdk_thread, input, config, metadata)
        self._events: AsyncIterator[Any] | None = None

    async def __aenter__(self) -> AsyncRemoteGraphRunStream:
        if self._closed:
            raise RuntimeError("this remote run stream is closed already")
        await self._sdk.__aenter__()
        try:
            started = await self._sdk.run.start(**self._start_kwargs)
        except BaseException:
            await self._sdk.__aexit__(*sys.exc_info())
            raise
        self._run_id = started["run_id"]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._closed:
            self._closed = True
            await self._sdk.__aexit__(exc_type, exc, tb)

    async def output(self) -> Any:
        """The run's final state, once the run has ended."""
        return await self._sdk.output

    async def interrupted(self) -> bool:
        """Whether the run is paused on an interrupt now (does not wait)."""
        return bool(self._sdk.interrupted)

    async def interrupts(self) -> list[Any]:
        """The interrupts outstanding now."""
        return list(self._sdk.interrupts)

    async def abort(self) -> None:
        """Cancel the run (when it started) and close the stream; a failure of either is
        logged, not raised. Once only."""
        if self._closed:
            return
        self._closed = True
        if self._run_id is not None:
            try:
                await self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:
                logger.debug("abort: runs.cancel failed", exc_info=True)
        try:
            await self._sdk.close()
        except Exception:
            logger.debug("abort: closing the SDK stream failed", exc_info=True)

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._events is None:
            self._events = self._sdk.events.__aiter__()
        return self._events
