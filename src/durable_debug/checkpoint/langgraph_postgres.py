"""Read a PostgreSQL schema LangGraph's ``PostgresSaver`` wrote, without LangGraph.

LangGraph's layout: ``checkpoints`` (the checkpoint as JSONB, with ``channel_values`` holding
only inline primitives, and a ``type`` column), ``checkpoint_blobs`` (one ``(type, blob)`` per
channel and version), ``checkpoint_writes`` and ``checkpoint_migrations``. durable_debug's own
PostgreSQL tables have the same names; :func:`postgres_layout` tells them apart by the
``checkpoints.type`` column only LangGraph's has. The session is read-only.

    reader = LangGraphPostgresReader("postgresql://app@db/agents")
    SaverView(reader)       # threads, DAG with forks, state, blob versions, pending writes
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from durable_debug.checkpoint._schema import DatabaseSetupError
from durable_debug.checkpoint.langgraph_layout import LangGraphReader, LatestRow, WriteRow
from durable_debug.checkpoint.names import SPECIAL_WRITES_SQL
from durable_debug.checkpoint.serde import SerdeError, with_location

__all__ = ["LangGraphPostgresReader", "postgres_layout"]

_COLUMNS_SQL = """
SELECT a.attname FROM pg_attribute a
WHERE a.attrelid = to_regclass('checkpoints') AND a.attnum > 0 AND NOT a.attisdropped
"""

_SELECT = """
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint,
       c.metadata,
       (SELECT array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob, bl.version::bytea])
          FROM jsonb_each_text(c.checkpoint -> 'channel_versions') AS pointer
          JOIN checkpoint_blobs bl
            ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
           AND bl.channel = pointer.key AND bl.version = pointer.value) AS blobs
FROM checkpoints c
"""

_LATEST = f"""
SELECT latest.thread_id, latest.n, x.*,
       (SELECT array_agg(array[w.task_id::bytea, w.channel::bytea, w.type::bytea,
                               CASE WHEN w.channel IN {SPECIAL_WRITES_SQL}
                                    THEN w.blob END,
                               convert_to(w.task_path, 'UTF8')] ORDER BY w.task_id, w.idx)
          FROM checkpoint_writes w
         WHERE w.thread_id = x.thread_id AND w.checkpoint_ns = ''
           AND w.checkpoint_id = x.checkpoint_id) AS writes
FROM (SELECT thread_id, max(checkpoint_id) AS checkpoint_id, count(*) AS n
        FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id) AS latest
CROSS JOIN LATERAL ({_SELECT}
  WHERE c.thread_id = latest.thread_id AND c.checkpoint_ns = ''
    AND c.checkpoint_id = latest.checkpoint_id) AS x
ORDER BY latest.thread_id
"""
"""Each thread's newest top-level checkpoint with its blobs and writes (the values of errors,
interrupts and resumes; only the channel of the others: enough to know a task finished)."""


def _connect(url: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise ImportError(
            "reading PostgreSQL needs psycopg: pip install 'durable-debug[postgres]'"
        ) from None
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise DatabaseSetupError(
            f"cannot connect to the PostgreSQL database at {_shown(url)}: {exc}"
        ) from None
    conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    return conn


def postgres_layout(url: str) -> str | None:
    """``"langgraph"``, ``"durable_debug"`` or None (no ``checkpoints`` table), by columns."""
    conn = _connect(url)
    try:
        columns = {str(row[0]) for row in conn.execute(_COLUMNS_SQL).fetchall()}
    finally:
        conn.close()
    if not columns:
        return None
    return "langgraph" if "type" in columns else "durable_debug"


class LangGraphPostgresReader(LangGraphReader):
    """Read-only saver over LangGraph's PostgreSQL layout (see the module docstring)."""

    layout = "LangGraph PostgreSQL"

    def __init__(self, url: str) -> None:
        super().__init__(_shown(url))
        self._conn = _connect(url)
        self._lock = threading.Lock()
        self._blob_sizes: dict[tuple[str, str, str, str], int] = {}

    def __repr__(self) -> str:
        return f"<LangGraphPostgresReader {self.where}>"

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def blob_size_of(self, thread_id: str, ns: str, channel: str, version: str) -> int | None:
        """Bytes stored for (channel, version) in ``checkpoint_blobs``, once read."""
        return self._blob_sizes.get((thread_id, ns, channel, version))

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            rows: list[Any] = self._conn.execute(sql, params).fetchall()
            return rows

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
                where.append(f"c.{column} = %s")
                params.append(value)
        sql = _SELECT + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY c.checkpoint_id DESC"
        return [self._row(row) for row in self._fetch(sql, params)]

    def _row(self, row: Sequence[Any]) -> tuple[Any, ...]:
        thread_id, ns, checkpoint_id, parent_id, checkpoint, metadata, blobs = row
        checkpoint = dict(checkpoint or {})
        values = dict(checkpoint.get("channel_values") or {})
        for channel_b, kind_b, blob, version_b in blobs or ():
            channel, kind, version = (
                bytes(channel_b).decode(),
                bytes(kind_b).decode(),
                bytes(version_b).decode(),
            )
            if kind == "empty":
                continue
            self._blob_sizes[(thread_id, ns, channel, version)] = len(blob or b"")
            with with_location(thread=thread_id, checkpoint=checkpoint_id, channel=channel):
                values[channel] = self.serde.loads_typed((kind, blob))
        checkpoint["channel_values"] = values
        return (
            str(thread_id),
            str(ns or ""),
            str(checkpoint_id),
            None if parent_id is None else str(parent_id),
            self._checkpoint(thread_id, checkpoint_id, checkpoint),
            self._metadata(thread_id, checkpoint_id, metadata),
        )

    def _write_rows(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Sequence[str] | None
    ) -> list[WriteRow]:
        sql = (
            "SELECT checkpoint_id, task_id, channel, type, blob, task_path FROM checkpoint_writes "
            "WHERE thread_id = %s AND checkpoint_ns = %s"
        )
        params: list[Any] = [thread_id, checkpoint_ns]
        if checkpoint_ids is not None:
            sql += " AND checkpoint_id = ANY(%s)"
            params.append(list(checkpoint_ids))
        sql += " ORDER BY checkpoint_id, task_id, idx"
        return [
            (str(c), str(t), str(ch), str(k or "null"), v, str(p or ""))
            for c, t, ch, k, v, p in self._fetch(sql, params)
        ]

    def _thread_ids(self) -> list[str]:
        rows = self._fetch("SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1")
        return [str(r[0]) for r in rows]

    def _metadata_rows(
        self, thread_id: str, checkpoint_ns: str | None
    ) -> list[tuple[str, str, Any]]:
        sql = "SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE thread_id = %s"
        params = [thread_id]
        if checkpoint_ns is not None:
            sql += " AND checkpoint_ns = %s"
            params.append(checkpoint_ns)
        return [
            (str(ns or ""), str(cid), self._metadata(thread_id, str(cid), metadata))
            for ns, cid, metadata in self._fetch(sql, params)
        ]

    def _latest_rows(self) -> list[LatestRow]:
        found: list[LatestRow] = []
        for thread_id, count, *row in self._fetch(_LATEST):
            try:
                checkpoint_row = self._row(row[:7])
                writes = [
                    (
                        checkpoint_row[2],
                        bytes(t).decode(),
                        bytes(ch).decode(),
                        bytes(k).decode() if k is not None and v is not None else "null",
                        v,
                        bytes(p).decode(),
                    )
                    for t, ch, k, v, p in row[7] or ()
                ]
                tup = self._tuple(checkpoint_row, writes)
                found.append(LatestRow(str(thread_id), int(count), tup))
            except SerdeError as exc:
                found.append(LatestRow(str(thread_id), int(count), None, str(exc)))
        return found


def _shown(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    return f"{scheme}{sep}{userinfo}{at}{host}"
