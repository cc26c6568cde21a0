"""Helpers for saver tests: build checkpoints the way the engine does, count and read rows.

cp, new_versions = child_checkpoint(None, {"a": 1})           # first checkpoint of a thread
cp2, new2 = child_checkpoint(cp, {"a": 2})                     # only "a" gets a new version
config = await saver.aput(config, cp2, {"source": "loop", "step": 0}, new2)
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import msgpack
from typing_extensions import TypedDict

from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    empty_checkpoint,
    next_version,
)
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.redis import RedisSaver
from durable_debug.checkpoint.sqlite import SqliteSaver

__all__ = [
    "RawDatabase",
    "child_checkpoint",
    "config_for",
    "count_rows",
    "hostile_payload",
    "raw_connection",
    "redis_thread_keys",
]


class Counter(TypedDict):
    """The state of :func:`chain_builder`'s graph."""

    n: int


def chain_builder(length: int = 10) -> Any:
    """A ``StateGraph`` of ``length`` nodes in a row, each adding 1 to ``n`` (the chain the
    statement- and command-counting tests run: one checkpoint per node, plus input and
    start)."""
    from durable_debug import START, StateGraph

    builder = StateGraph(Counter)
    for i in range(length):
        builder.add_node(f"n{i}", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "n0")
    for i in range(length - 1):
        builder.add_edge(f"n{i}", f"n{i + 1}")
    return builder


def config_for(thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None) -> dict:
    """Return a run config addressing a thread (or one of its checkpoints)."""
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def child_checkpoint(
    parent: Checkpoint | None,
    updates: dict[str, Any],
    *,
    cleared: tuple[str, ...] = (),
) -> tuple[Checkpoint, ChannelVersions]:
    """Return a checkpoint following ``parent`` with ``updates`` applied, and its new versions.

    Channels in ``cleared`` get a new version but no value (an "empty" channel).
    """
    cp = empty_checkpoint()
    values = copy.deepcopy(parent["channel_values"]) if parent else {}
    versions = dict(parent["channel_versions"]) if parent else {}
    new_versions: ChannelVersions = {}
    for channel in [*updates, *cleared]:
        versions[channel] = next_version(versions.get(channel), cp["id"])
        new_versions[channel] = versions[channel]
    values.update(updates)
    for channel in cleared:
        values.pop(channel, None)
    cp["channel_values"] = values
    cp["channel_versions"] = versions
    cp["versions_seen"] = {"node": {channel: versions[channel] for channel in updates}}
    cp["updated_channels"] = sorted(new_versions)
    return cp, new_versions


def hostile_payload(code: int, name: str, marker: Path) -> bytes:
    """A msgpack blob naming an importable callable as if it were a registered type."""
    inner = msgpack.packb([name, {"command": f"touch {marker}", "args": [f"touch {marker}"]}])
    return msgpack.packb(msgpack.ExtType(code, inner))


async def count_rows(
    saver: BaseCheckpointSaver,
    table: str,
    thread_id: str | None = None,
    channel: str | None = None,
) -> int:
    """Count rows of ``table`` (checkpoints, checkpoint_blobs, checkpoint_writes) in any saver.

    For a RedisSaver, the "rows" are read from its keys as docs/storage.md lays them out.
    """
    if isinstance(saver, MemorySaver):
        return _count_memory(saver, table, thread_id, channel)
    if isinstance(saver, RedisSaver):
        return _count_redis(saver, table, thread_id, channel)
    p = "?" if isinstance(saver, SqliteSaver) else "%s"
    where, params = [], []
    if thread_id is not None:
        where.append(f"thread_id = {p}")
        params.append(thread_id)
    if channel is not None:
        where.append(f"channel = {p}")
        params.append(channel)
    sql = f"SELECT count(*) FROM {table}" + (" WHERE " + " AND ".join(where) if where else "")
    rows = await saver.aquery(sql, params)  # type: ignore[attr-defined]
    return int(rows[0][0])


def _count_memory(
    saver: MemorySaver, table: str, thread_id: str | None, channel: str | None
) -> int:
    def keep(t: str, ch: str | None = None) -> bool:
        return (thread_id is None or t == thread_id) and (channel is None or ch == channel)

    if table == "checkpoints":
        return sum(
            len(cps)
            for t, namespaces in saver.storage.items()
            if keep(t)
            for cps in namespaces.values()
        )
    if table == "checkpoint_blobs":
        return sum(1 for (t, _ns, ch, _v) in saver.blobs if keep(t, ch))
    if table == "checkpoint_writes":
        return sum(
            1
            for (t, _ns, _id), bucket in saver.writes.items()
            for write in bucket.values()
            if keep(t, write.channel)
        )
    raise ValueError(f"unknown table {table!r}")


def redis_thread_keys(saver: RedisSaver) -> Iterator[tuple[str, str, str, str]]:
    """(key, thread_id, namespace as in the key, last part) of every per-namespace key of a
    RedisSaver, found by SCAN: ``{prefix}:thread:{thread}:{namespace}:{name}``."""
    import redis

    start = f"{saver.prefix}:thread:"
    client = redis.Redis.from_url(saver.url)
    try:
        for raw in client.scan_iter(match=re.sub(r"([*?\[\]\\])", r"\\\1", start) + "*"):
            key = raw.decode()
            parts = key[len(start) :].split(":")
            if len(parts) == 3:  # not the thread's `namespaces` set
                yield key, unquote(parts[0]), parts[1], parts[2]
    finally:
        client.close()


def _count_redis(saver: RedisSaver, table: str, thread_id: str | None, channel: str | None) -> int:
    import redis

    if table not in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        raise ValueError(f"unknown table {table!r}")
    client = redis.Redis.from_url(saver.url)
    total = 0
    try:
        for key, thread, _ns, name in list(redis_thread_keys(saver)):
            if thread_id is not None and thread != thread_id:
                continue
            if table == "checkpoints" and name == "checkpoints":
                total += client.zcard(key)
            elif table == "checkpoint_blobs" and name == "blobs":
                channels = [f.decode().rsplit(":", 1)[0] for f in client.hkeys(key)]
                total += sum(1 for ch in channels if channel is None or ch == channel)
            elif table == "checkpoint_writes" and name == "write":
                headers = [json.loads(v.split(b"\n", 1)[0]) for v in client.hvals(key)]
                total += sum(1 for h in headers if channel is None or h[1] == channel)
    finally:
        client.close()
    return total


@contextlib.contextmanager
def raw_connection(saver: Any) -> Iterator[RawDatabase]:
    """Open a second, plain connection to a SQL saver's database (not through the saver)."""
    if isinstance(saver, SqliteSaver):
        conn: Any = sqlite3.connect(saver.path)
        try:
            yield RawDatabase(conn, "?")
        finally:
            conn.close()
    else:
        import psycopg

        with psycopg.connect(saver.conn_string, autocommit=True) as conn:
            yield RawDatabase(conn, "%s")


@dataclasses.dataclass
class RawDatabase:
    """A DB-API connection plus its placeholder; SQL is written with ``?``."""

    conn: Any
    placeholder: str

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run ``sql`` (``?`` placeholders), commit, and return its rows (if any)."""
        cur = self.conn.cursor()
        cur.execute(sql.replace("?", self.placeholder), params)
        rows = [tuple(row) for row in cur.fetchall()] if cur.description else []
        self.conn.commit()
        return rows

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of the four tables, sorted, for before/after comparisons."""
        tables = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
        return {t: sorted(self.execute(f"SELECT * FROM {t}"), key=repr) for t in tables}
