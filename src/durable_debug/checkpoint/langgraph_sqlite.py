"""Read a SQLite file LangGraph's ``SqliteSaver`` wrote, without LangGraph or the app's code.

LangGraph's layout: ``checkpoints`` (one row per checkpoint, the whole checkpoint as one
``(type, checkpoint)`` value, ``metadata`` as JSON) and ``writes`` (pending writes, one
``(type, value)`` per row). It is told apart from durable_debug's own layout by its columns,
not its table names (:func:`sqlite_layout`). The file is opened read-only (``mode=ro``): the
reader never creates, locks for writing or changes it.

    reader = LangGraphSqliteReader("app.db")
    reader.list_threads()                                   # ['job-1', ...]
    SaverView(reader)                                       # everything inspect does
"""

from __future__ import annotations

import asyncio
import json
import operator
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from durable_debug._collector import collector_paused
from durable_debug.checkpoint._files import access_problem, foreign_file
from durable_debug.checkpoint._schema import DatabaseSetupError
from durable_debug.checkpoint.langgraph_layout import LangGraphReader, WriteRow
from durable_debug.checkpoint.latest import (
    LATEST_PER_THREAD_SQL,
    LatestHead,
    latest_writes_sql,
)
from durable_debug.checkpoint.serde import SerdeError

__all__ = [
    "LANGGRAPH_SQLITE_METADATA",
    "LangGraphSqliteReader",
    "langgraph_metadata_query",
    "open_read_only",
    "sqlite_layout",
]

LANGGRAPH_SQLITE_METADATA = (
    "SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE thread_id = ?"
)
"""LangGraph's SQLite layout: a thread's checkpoint ids with their metadata (JSON), without
the checkpoints."""


def langgraph_metadata_query(thread_id: str, checkpoint_ns: str | None) -> tuple[str, list[str]]:
    """:data:`LANGGRAPH_SQLITE_METADATA` for one namespace (or every one, None), with its
    parameters."""
    if checkpoint_ns is None:
        return LANGGRAPH_SQLITE_METADATA, [thread_id]
    return LANGGRAPH_SQLITE_METADATA + " AND checkpoint_ns = ?", [thread_id, checkpoint_ns]


_LG_CHECKPOINTS = {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id"}
_LG_CHECKPOINT_VALUE = {"type", "checkpoint", "metadata"}
_LG_WRITES = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type"}


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """Open an existing SQLite file for reading only: a missing file is an error (never
    created), and the file is left as it was found — no write, no journal mode switch, no
    ``-wal`` / ``-shm`` file left behind.

    The connection refuses every write (``PRAGMA query_only``). A file in WAL mode needs
    ``-wal`` and ``-shm`` files to be read, and SQLite creates them when absent; a connection
    opened read-only (``mode=ro``) cannot remove them when it closes, so when they are absent
    (no other connection has the file open, everything is in the file itself) the file is
    opened read-write and SQLite removes them on close, as it does for its last connection;
    an empty ``-wal`` leaves the file untouched. When a ``-wal`` or ``-journal`` file is
    present (a writer has the file open, or crashed), it is opened ``mode=ro``: the files
    were there already, and a read-only connection never moves their content into the file.
    """
    file = Path(path)
    if not file.is_file():
        raise DatabaseSetupError(f"no such SQLite file: {path}")
    problem = access_problem(file, write=False)
    if problem is not None:
        raise DatabaseSetupError(problem)
    resolved = str(file.resolve())
    if file.stat().st_size == 0:
        raise DatabaseSetupError(f"{path} is an empty file (0 bytes): it holds no checkpoints")
    busy = any(Path(resolved + suffix).exists() for suffix in ("-wal", "-journal"))
    modes: tuple[str, ...] = ("ro",) if busy else ("rw", "ro")
    if foreign_file(resolved):
        # Another user's store (or one this process may not write): a -wal / -shm created
        # here would be this user's, and the owner could not write the store any more. With
        # them present (the owner has it open), read through them; absent, the file holds
        # everything: read it as it is, creating nothing and taking no lock (a write the owner
        # makes meanwhile may not be seen, see docs/storage.md).
        modes = ("ro",) if Path(resolved + "-shm").exists() else ("ro&immutable=1",)
    # In a directory SQLite cannot create the -wal / -shm files in, mode=ro reads without.
    failure: sqlite3.Error | None = None
    for mode in modes:
        try:
            return _connect_read_only(resolved, mode)
        except sqlite3.OperationalError as exc:  # cannot open or lock it
            failure = exc
        except sqlite3.DatabaseError as exc:
            raise DatabaseSetupError(f"{path} is not a SQLite database ({exc})") from None
    raise DatabaseSetupError(f"cannot read {path} ({failure})")


def _connect_read_only(resolved: str, mode: str) -> sqlite3.Connection:
    conn = sqlite3.connect(
        f"file:{quote(resolved)}?mode={mode}",
        uri=True,
        check_same_thread=False,
        isolation_level=None,
    )
    try:
        conn.execute("PRAGMA query_only = 1")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def sqlite_layout(conn: sqlite3.Connection) -> str | None:
    """``"langgraph"``, ``"durable_debug"``, ``"empty"`` or None (some other database),
    decided by the tables' columns."""
    tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return "empty"
    checkpoints = _columns(conn, "checkpoints") if "checkpoints" in tables else set()
    if (
        checkpoints >= _LG_CHECKPOINTS | _LG_CHECKPOINT_VALUE
        and "writes" in tables
        and _LG_WRITES | {"value"} <= _columns(conn, "writes")
    ):
        return "langgraph"
    if (
        "checkpoint_migrations" in tables
        and _LG_CHECKPOINTS | {"checkpoint", "metadata"} <= checkpoints
        and "type" not in checkpoints
        and "checkpoint_blobs" in tables
    ):
        return "durable_debug"
    return None


class LangGraphSqliteReader(LangGraphReader):
    """Read-only saver over LangGraph's SQLite layout (see the module docstring)."""

    layout = "LangGraph SQLite"

    def __init__(self, path: str | Path) -> None:
        super().__init__(str(path))
        self._conn = open_read_only(path)
        self._lock = threading.Lock()
        if sqlite_layout(self._conn) != "langgraph":
            self._conn.close()
            raise DatabaseSetupError(
                f"{path} has no LangGraph checkpoint tables (checkpoints with type/checkpoint/"
                "metadata columns, and writes)"
            )

    def __repr__(self) -> str:
        return f"<LangGraphSqliteReader {self.where!r}>"

    def close(self) -> None:
        """Close the file."""
        self._conn.close()

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _checkpoint_rows(
        self, thread_id: str | None, checkpoint_ns: str | None, checkpoint_id: str | None
    ) -> list[tuple[Any, ...]]:
        where, params = [], []
        for column, value in (
            ("thread_id", thread_id),
            ("checkpoint_ns", checkpoint_ns),
            ("checkpoint_id", checkpoint_id),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = (
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            "checkpoint, metadata FROM checkpoints"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY checkpoint_id DESC"
        )
        return [self._row(row) for row in self._fetch(sql, params)]

    def _row(self, row: Sequence[Any]) -> tuple[Any, ...]:
        thread_id, ns, checkpoint_id, parent_id, kind, blob, metadata = row
        try:
            loaded = self.serde.loads_typed((kind or "msgpack", blob))
        except SerdeError as exc:
            raise exc.located(
                thread=thread_id, checkpoint=checkpoint_id, field="checkpoint"
            ) from None
        return (
            str(thread_id),
            str(ns or ""),
            str(checkpoint_id),
            None if parent_id is None else str(parent_id),
            self._checkpoint(thread_id, checkpoint_id, loaded),
            self._metadata(thread_id, checkpoint_id, metadata),
        )

    def _write_rows(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str] | None
    ) -> list[WriteRow]:
        sql = (
            "SELECT checkpoint_id, task_id, channel, type, value, task_path FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = ?"
        )
        params: list[Any] = [thread_id, checkpoint_ns]
        if checkpoint_ids is not None:
            sql += f" AND checkpoint_id IN ({', '.join('?' * len(checkpoint_ids))})"
            params.extend(checkpoint_ids)
        sql += " ORDER BY checkpoint_id, task_id, idx"
        return [
            (str(c), str(t), str(ch), str(k or "null"), v, str(p or ""))
            for c, t, ch, k, v, p in self._fetch(sql, params)
        ]

    def _thread_ids(self) -> list[str]:
        return [
            str(r[0]) for r in self._fetch("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")
        ]

    def _metadata_rows(
        self, thread_id: str, checkpoint_ns: str | None
    ) -> list[tuple[str, str, Any]]:
        sql, params = langgraph_metadata_query(thread_id, checkpoint_ns)
        return [
            (str(ns or ""), str(cid), self._metadata(thread_id, str(cid), metadata))
            for ns, cid, metadata in self._fetch(sql, params)
        ]

    def latest_heads(self) -> list[LatestHead]:
        """Each thread's newest top-level checkpoint, as a thread list reads it
        (:class:`~durable_debug.checkpoint.latest.LatestHead`), in one query."""
        rows = self._fetch(LATEST_SQL)
        with collector_paused():
            writes_of = _parsed_writes([row[6] for row in rows if row[6]])
            heads = [
                self._head(
                    str(thread_id),
                    int(count),
                    str(checkpoint_id),
                    step,
                    (kind, blob),
                    next(writes_of) if writes else (),
                )
                for thread_id, count, checkpoint_id, kind, blob, step, writes in rows
            ]
        heads.sort(key=_thread_of)
        return heads

    async def alatest_heads(self) -> list[LatestHead]:
        """Async twin of :meth:`latest_heads` (runs in a worker thread)."""
        return await asyncio.to_thread(self.latest_heads)


_thread_of = operator.itemgetter(0)
"""A head's thread id (its first field): the order of a listing."""


def _parsed_writes(texts: list[str]) -> Iterator[list[Any]]:
    """Each of the listing query's writes texts (a ``group_concat`` of JSON arrays) parsed,
    all in one call of the JSON parser (its fixed cost paid once); each text is made of
    ``json_array`` values, so they cannot merge into each other. Should the document not split
    back into as many lists, each text is parsed on its own."""
    if not texts:
        return iter(())
    whole = json.loads("[[" + "],[".join(texts) + "]]")
    if len(whole) == len(texts):
        return iter(whole)
    return (json.loads(f"[{text}]") for text in texts)  # pragma: no cover - cannot happen


LATEST_SQL = f"""
SELECT latest.thread_id, latest.n, c.checkpoint_id, c.type, c.checkpoint,
       json_extract(c.metadata, '$.step'),
       {latest_writes_sql("writes", "value")}
{LATEST_PER_THREAD_SQL}"""
"""Each thread's newest top-level checkpoint, its checkpoint count, its step and the writes
saved on it: the values of the special ones (errors, interrupts, resumes), only the channel
of the others (enough to know the task finished). Sorted in Python: no temporary B-tree."""
