"""Count what a PostgreSQL client sends, on the wire: a proxy between it and the server.

Every connection a saver opens — pooled, its own for the caller's loop, its lease connection —
goes through the proxy, which reads the frontend protocol's messages (a type byte and a length)
as it forwards them and counts them by type. So a test counts statements and round trips
without knowing how the saver manages its connections:

    with WireCounter(postgres_db) as wire:
        saver = PostgresSaver(wire.url)
        ...
        wire.reset()
        await saver.aput_step(...)
        assert wire.statements() == 1

A client's message is counted before it is forwarded, so once the client has the server's answer
the count includes everything it sent for it. The proxy runs its own event loop in a thread.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import struct
import threading

from psycopg.conninfo import conninfo_to_dict, make_conninfo

__all__ = ["WireCounter"]

_UNTYPED_REQUESTS = (80877103, 80877104)  # SSLRequest, GSSENCRequest: answered with one byte
_STATEMENT = {"Q", "B"}
"""A simple Query, or a Bind (one per execution of a statement in the extended protocol)."""
_ROUND_TRIP = {"Q", "S"}
"""Messages after which the client waits for ReadyForQuery: a simple Query, a Sync."""


class WireCounter:
    """A TCP proxy in front of the server ``url`` names, counting the client's messages."""

    def __init__(self, url: str) -> None:
        params = conninfo_to_dict(url)
        self._upstream = (str(params.get("host") or "localhost"), int(params.get("port") or 5432))
        self._url = url
        self._lock = threading.Lock()
        self._counts: collections.Counter[str] = collections.Counter()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.url = ""
        """The server's URL with the proxy's host and port (and TLS off, so it can read)."""

    def __enter__(self) -> WireCounter:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        ).result(timeout=30)
        port = self._server.sockets[0].getsockname()[1]
        self.url = make_conninfo(
            self._url, host="127.0.0.1", port=str(port), sslmode="disable", gssencmode="disable"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()

    # -- counts --------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was counted so far."""
        with self._lock:
            self._counts.clear()

    def counts(self) -> collections.Counter[str]:
        """Messages sent since the last reset, by protocol type letter (startup not included)."""
        with self._lock:
            return collections.Counter(self._counts)

    def statements(self) -> int:
        """Statements executed since the last reset: simple queries and Binds (so a
        ``BEGIN``/``COMMIT`` counts as one each)."""
        counts = self.counts()
        return sum(counts[kind] for kind in _STATEMENT)

    def round_trips(self) -> int:
        """Times the client waited for the server since the last reset (simple queries and
        Syncs: a statement in the extended protocol ends with a Sync unless pipelined)."""
        counts = self.counts()
        return sum(counts[kind] for kind in _ROUND_TRIP)

    # -- the proxy -----------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        host, port = self._upstream
        try:
            if host.startswith("/"):
                up_reader, up_writer = await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
            else:
                up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return
        back = asyncio.ensure_future(_pipe(up_reader, writer))
        try:
            await self._client_to_server(reader, up_writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client or the server hung up, or the proxy is stopping
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await back
            writer.close()
            self._tasks.discard(task)

    async def _client_to_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while True:  # startup: untyped messages until the StartupMessage itself
            head = await reader.readexactly(8)
            length, code = struct.unpack("!ii", head)
            writer.write(head + await reader.readexactly(length - 8))
            await writer.drain()
            if code not in _UNTYPED_REQUESTS:
                break
        while True:
            head = await reader.readexactly(5)
            kind = chr(head[0])
            (length,) = struct.unpack("!i", head[1:])
            body = await reader.readexactly(length - 4)
            with self._lock:
                self._counts[kind] += 1
            writer.write(head + body)
            await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.CancelledError):
        pass
    finally:
        writer.close()
