"""The SQL queries documented in ``docs/storage.md`` run and return what the doc says."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for

from durable_debug.checkpoint._rows import compact_version
from durable_debug.checkpoint.base import BaseCheckpointSaver
from durable_debug.checkpoint.serde import MsgpackSerializer
from durable_debug.checkpoint.sqlite import SqliteSaver

DOC = Path(__file__).resolve().parents[2] / "docs" / "storage.md"


def documented_queries() -> dict[tuple[str, str], str]:
    text = DOC.read_text()
    found = re.findall(r"<!-- query: (\S+) (\S+) -->\s*```sql\n(.*?)```", text, re.DOTALL)
    return {(name, dialect): sql for name, dialect, sql in found}


def test_the_doc_holds_both_queries_for_both_databases():
    assert set(documented_queries()) == {
        ("thread-checkpoints", "sqlite"),
        ("thread-checkpoints", "postgres"),
        ("shared-blobs", "sqlite"),
        ("shared-blobs", "postgres"),
    }


def build_thread(saver: BaseCheckpointSaver) -> list[Any]:
    """Three checkpoints: a and b written, then a changed, then b changed."""
    cp1, v1 = child_checkpoint(None, {"a": 1, "b": "x" * 50})
    c1 = saver.put(config_for("doc"), cp1, {"source": "input", "step": -1}, v1)
    cp2, v2 = child_checkpoint(cp1, {"a": 2})
    c2 = saver.put(c1, cp2, {"source": "loop", "step": 0}, v2)
    cp3, v3 = child_checkpoint(cp2, {"b": "y"})
    saver.put(c2, cp3, {"source": "loop", "step": 1}, v3)
    saver.put(config_for("other"), cp1, {"source": "input", "step": -1}, v1)
    return [cp1, cp2, cp3]


def stored_pointers(cp: Any) -> dict[str, str]:
    return {ch: compact_version(v) for ch, v in cp["channel_versions"].items()}


def blob_size(value: Any) -> int:
    return len(MsgpackSerializer().dumps(value))


def check_thread_checkpoints(rows: list[tuple[Any, ...]], cps: list[Any]) -> None:
    assert [r[:4] for r in rows] == [
        (cps[0]["id"], None, -1, "input"),
        (cps[1]["id"], cps[0]["id"], 0, "loop"),
        (cps[2]["id"], cps[1]["id"], 1, "loop"),
    ]
    pointer_maps = [json.loads(r[4]) if isinstance(r[4], str) else r[4] for r in rows]
    assert pointer_maps == [stored_pointers(cp) for cp in cps]


def check_shared_blobs(saver_rows: Any, cps: list[Any]) -> None:
    second = saver_rows(cps[1]["id"])
    assert [(r[0], r[1], bool(r[2]), r[3], r[4]) for r in second] == [
        ("a", stored_pointers(cps[1])["a"], False, "msgpack", blob_size(2)),
        ("b", stored_pointers(cps[0])["b"], True, "msgpack", blob_size("x" * 50)),
    ]
    first = saver_rows(cps[0]["id"])
    assert [bool(r[2]) for r in first] == [False, False]


def test_documented_sqlite_queries(tmp_path: Path):
    path = tmp_path / "doc.db"
    with SqliteSaver(path) as saver:
        cps = build_thread(saver)
    queries = documented_queries()
    with sqlite3.connect(path) as conn:  # as a user would, outside durable_debug
        rows = conn.execute(
            queries[("thread-checkpoints", "sqlite")], {"thread_id": "doc"}
        ).fetchall()
        check_thread_checkpoints(rows, cps)

        def shared(checkpoint_id: str) -> list[tuple[Any, ...]]:
            sql = queries[("shared-blobs", "sqlite")]
            return conn.execute(
                sql, {"thread_id": "doc", "checkpoint_id": checkpoint_id}
            ).fetchall()

        check_shared_blobs(shared, cps)


@pytest.mark.postgres
def test_documented_postgres_queries(postgres_db: str):
    import psycopg

    from durable_debug.checkpoint.postgres import PostgresSaver

    with PostgresSaver(postgres_db) as saver:
        cps = build_thread(saver)
    queries = documented_queries()
    with psycopg.connect(postgres_db) as conn:
        rows = conn.execute(
            queries[("thread-checkpoints", "postgres")], {"thread_id": "doc"}
        ).fetchall()
        check_thread_checkpoints(rows, cps)

        def shared(checkpoint_id: str) -> list[tuple[Any, ...]]:
            sql = queries[("shared-blobs", "postgres")]
            params = {"thread_id": "doc", "checkpoint_id": checkpoint_id}
            return conn.execute(sql, params).fetchall()

        check_shared_blobs(shared, cps)
