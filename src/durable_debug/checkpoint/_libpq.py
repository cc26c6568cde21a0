"""PostgresSaver's calls through libpq itself (``psycopg.pq``), below psycopg's cursors.

psycopg's cursor machinery (query conversion, its prepared-statement bookkeeping, a generator
driven per wait, a loader per column) costs more Python time than the local server takes to
answer a primary-key read. The saver's two hottest calls go straight to libpq on a psycopg
connection it holds alone, leaving the connection idle after each, as psycopg expects it:

* a step's statement, sent now and its answer read later (:mod:`._pg_steps`);
* a checkpoint's read (:func:`fetch`): one prepared query, binary results.

    result = await fetch(conn, SELECT_LATEST, (thread_id, checkpoint_ns))
    rows = [[result.get_value(r, c) for c in range(result.nfields)] for r in range(result.ntuples)]

Each statement is prepared once per connection, under a name of this module's own, so
psycopg's own prepared statements on the same connection never clash with them. Errors are the
psycopg exceptions the server's answer names (a lost server: ``psycopg.OperationalError``), so
the saver maps them as it maps psycopg's.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import itertools
import struct
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg
    from psycopg import pq

__all__ = [
    "Blobs",
    "answer",
    "blobs_array",
    "encode",
    "fetch",
    "fetch_together",
    "flush",
    "prepared",
    "python_rows",
]

_BYTEA_ARRAY = 1001
"""The type oid of ``bytea[]``: the blobs of a step go as one binary array."""

_names = itertools.count()
_prepared: weakref.WeakKeyDictionary[Any, dict[str, bytes]] = weakref.WeakKeyDictionary()
"""Per libpq connection, the statements this module prepared on it: SQL → name."""


class Blobs(list[Any]):
    """Blobs (``bytes`` or None) sent as one binary ``bytea[]`` (:func:`blobs_array`)."""


_ARRAY_HEAD, _LENGTH = struct.Struct("!iiiii"), struct.Struct("!i")
_NULL = _LENGTH.pack(-1)


def blobs_array(blobs: Sequence[bytes | None]) -> bytes:
    """``blobs`` as one ``bytea[]`` in PostgreSQL's binary format, written in one ``join``."""
    parts = [_ARRAY_HEAD.pack(1, 1, 17, len(blobs), 1)]  # one dimension, may hold NULLs
    for blob in blobs:
        if blob is None:
            parts.append(_NULL)
        else:
            parts += (_LENGTH.pack(len(blob)), blob)
    return b"".join(parts)


def encode(params: Sequence[Any]) -> tuple[list[bytes | None], list[int], list[int]]:
    """Parameters as libpq takes them (values, type oids, formats): text, with the type left
    to the server as psycopg leaves it for a ``str``; :class:`Blobs` as one binary
    ``bytea[]``."""
    values: list[bytes | None] = []
    types: list[int] = []
    formats: list[int] = []
    for value in params:
        if isinstance(value, Blobs):
            values.append(blobs_array(value))
            types.append(_BYTEA_ARRAY)
            formats.append(1)
        else:
            values.append(None if value is None else str(value).encode())
            types.append(0)
            formats.append(0)
    return values, types, formats


@functools.cache
def _numbered(sql: str) -> str:
    """``sql`` with libpq's ``$1, $2…`` placeholders instead of psycopg's ``%s``."""
    parts = sql.split("%s")
    return "".join(f"{part}${i}" for i, part in enumerate(parts[:-1], 1)) + parts[-1]


async def prepared(conn: psycopg.AsyncConnection[Any], sql: str, types: Sequence[int]) -> bytes:
    """The name of ``sql`` (psycopg's ``%s`` placeholders) prepared on ``conn``, preparing it
    first if needed: one round trip, once per statement and connection."""
    pgconn = conn.pgconn
    names = _prepared.setdefault(pgconn, {})
    name = names.get(sql)
    if name is None:
        name = f"durable_debug_{next(_names)}".encode()
        pgconn.send_prepare(name, _numbered(sql).encode(), types)
        await flush(pgconn)
        error, _result = await answer(conn)
        if error is not None:
            raise error
        names[sql] = name
    return name


async def fetch(
    conn: psycopg.AsyncConnection[Any], sql: str, params: Sequence[Any]
) -> pq.abc.PGresult:
    """Run the query ``sql`` with ``params`` on ``conn`` (idle, used by nothing else meanwhile)
    and return its result, every column in PostgreSQL's binary format (``text`` as its UTF-8
    bytes, ``bytea`` as the bytes, ``int4`` as 4 big-endian bytes, NULL as None); raise the
    error the server answered with.

    One round trip, the first time too: a statement not yet prepared on ``conn`` is prepared
    and run in one pipeline (prepare, run, sync), so a saver's first read costs no more than
    the next ones."""
    values, types, formats = encode(params)
    pgconn = conn.pgconn
    names = _prepared.setdefault(pgconn, {})
    name = names.get(sql)
    if name is not None:
        pgconn.send_query_prepared(name, values, formats, result_format=1)
        await flush(pgconn)
        error, result = await answer(conn)
    else:
        name = f"durable_debug_{next(_names)}".encode()
        pgconn.enter_pipeline_mode()
        pgconn.send_prepare(name, _numbered(sql).encode(), types)
        pgconn.send_query_prepared(name, values, formats, result_format=1)
        pgconn.pipeline_sync()
        await flush(pgconn)
        error, result = await answer(conn, pipeline=True)
        # Left in pipeline mode only if the wait above was interrupted: then the connection
        # is not idle, and whoever holds it closes it.
        pgconn.exit_pipeline_mode()
        if error is None:
            names[sql] = name
    if error is not None:
        raise error
    assert result is not None  # a query that did not fail answers with its rows
    return result


async def fetch_together(
    conn: psycopg.AsyncConnection[Any], queries: Sequence[tuple[str, Sequence[Any]]]
) -> list[pq.abc.PGresult]:
    """Run ``queries`` (SQL, parameters), in order, in one pipeline on ``conn`` (idle, used
    by nothing else meanwhile): one round trip for all of them, each its own statement (in
    autocommit, each its own transaction, seeing what the ones before it did). Return their
    results as :func:`fetch` does, in order; raise the first error the server answered with
    (the queries after a failed one are not run)."""
    pgconn = conn.pgconn
    names = _prepared.setdefault(pgconn, {})
    fresh: dict[str, bytes] = {}
    pgconn.enter_pipeline_mode()
    for sql, params in queries:
        values, types, formats = encode(params)
        name = names.get(sql) or fresh.get(sql)
        if name is None:
            name = fresh[sql] = f"durable_debug_{next(_names)}".encode()
            pgconn.send_prepare(name, _numbered(sql).encode(), types)
        pgconn.send_query_prepared(name, values, formats, result_format=1)
    pgconn.pipeline_sync()
    await flush(pgconn)
    error, results = await _answers(conn)
    # Left in pipeline mode only if the wait above was interrupted: then the connection is
    # not idle, and whoever holds it closes it.
    pgconn.exit_pipeline_mode()
    if error is not None:
        raise error
    names.update(fresh)
    if len(results) != len(queries):
        raise AssertionError(f"{len(queries)} queries answered with {len(results)} results")
    return results


async def _answers(
    conn: psycopg.AsyncConnection[Any],
) -> tuple[Exception | None, list[pq.abc.PGresult]]:
    """Read the results of the commands sent in pipeline mode, up to their sync: the first
    error the server answered with, if any, and every query's rows, in order."""
    from psycopg.pq import ExecStatus

    pgconn = conn.pgconn
    error: Exception | None = None
    results: list[pq.abc.PGresult] = []
    while True:
        pgconn.consume_input()
        while pgconn.is_busy():
            await _wait(pgconn.socket, write=False)
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            continue  # the end of one command's results: the next command's follow
        status = result.status
        if status == ExecStatus.TUPLES_OK:
            results.append(result)
        elif status == ExecStatus.PIPELINE_SYNC:
            return error, results
        elif status == ExecStatus.FATAL_ERROR and error is None:
            error = _result_error(conn, result)


def _result_error(conn: Any, result: Any) -> psycopg.Error:
    """The psycopg exception a failed result stands for (its class by the SQLSTATE, as psycopg
    raises it), with the server's message."""
    import psycopg
    from psycopg.pq import DiagnosticField

    encoding = conn.info.encoding
    state = (result.error_field(DiagnosticField.SQLSTATE) or b"").decode()
    try:
        cls: type[psycopg.Error] = psycopg.errors.lookup(state)
    except KeyError:
        cls = psycopg.DatabaseError
    return cls(result.get_error_message(encoding), info=result, encoding=encoding)


_POSTGRES_EPOCH = _dt.datetime(2000, 1, 1, tzinfo=_dt.timezone.utc)
_INT8 = struct.Struct("!q")
_TEXT_TYPES = frozenset({19, 25, 1043})
"""Type oids of ``name``, ``text`` and ``varchar``: UTF-8 bytes in the binary format."""
_BOOL, _TIMESTAMPTZ = 16, 1184


def python_rows(result: pq.abc.PGresult) -> list[Sequence[Any]]:
    """The rows of a binary ``result`` (:func:`fetch`) as Python values, for the few column
    types the saver's small statements return: text (``str``), ``bool``, ``timestamptz``
    (an aware UTC ``datetime``). Any other column type is a ``TypeError`` naming its oid."""
    types = [result.ftype(c) for c in range(result.nfields)]
    for oid in types:
        if oid not in _TEXT_TYPES and oid not in (_BOOL, _TIMESTAMPTZ):
            raise TypeError(f"python_rows cannot decode a column of type oid {oid}")
    rows: list[Sequence[Any]] = []
    for r in range(result.ntuples):
        row: list[Any] = []
        for c, oid in enumerate(types):
            value = result.get_value(r, c)
            if value is None:
                row.append(None)
            elif oid == _BOOL:
                row.append(value == b"\x01")
            elif oid == _TIMESTAMPTZ:
                micros = _INT8.unpack(value)[0]
                row.append(_POSTGRES_EPOCH + _dt.timedelta(microseconds=micros))
            else:
                row.append(bytes(value).decode())
        rows.append(tuple(row))
    return rows


async def _wait(fd: int, *, write: bool) -> None:
    """Return when the socket ``fd`` is readable (writable with ``write``)."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    if write:
        loop.add_writer(fd, wake)
    else:
        loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


async def flush(pgconn: Any) -> None:
    """Send what libpq has buffered, waiting for the socket when it is full."""
    while pgconn.flush() != 0:
        await _wait(pgconn.socket, write=True)


async def answer(
    conn: psycopg.AsyncConnection[Any], *, pipeline: bool = False
) -> tuple[Exception | None, pq.abc.PGresult | None]:
    """Read the results of the one command in flight (with ``pipeline``: of the commands sent
    in pipeline mode, up to their sync) until the connection is idle again; return the first
    error the server answered with, if any, and the rows of a query (raise when the connection
    failed)."""
    from psycopg.pq import ExecStatus

    pgconn = conn.pgconn
    error: Exception | None = None
    rows: pq.abc.PGresult | None = None
    while True:
        pgconn.consume_input()
        while pgconn.is_busy():
            await _wait(pgconn.socket, write=False)
            pgconn.consume_input()
        result = pgconn.get_result()
        if result is None:
            if pipeline:
                continue  # the end of one command's results: the next command's follow
            return error, rows
        status = result.status
        if status == ExecStatus.TUPLES_OK:
            rows = result
        elif status == ExecStatus.PIPELINE_SYNC:
            return error, rows
        elif status == ExecStatus.FATAL_ERROR and error is None:
            error = _result_error(conn, result)
