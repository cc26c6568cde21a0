"""Channels with a version but no value (schema version 8, ``checkpoint/_rows.py``): no blob row,
listed in the stored checkpoint's ``empty_versions``; checkpoints stored the older way (every
channel in ``channel_versions``, an empty one pointing at a row of type ``empty``) read the same.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import chain_builder, config_for

from durable_debug.checkpoint._rows import EMPTY_VERSIONS, ungroup_versions
from durable_debug.checkpoint.readonly import ReadOnlySqliteSaver
from durable_debug.checkpoint.serde import CorruptPayloadError
from durable_debug.checkpoint.sqlite import MIGRATIONS, OLDEST_READABLE, SqliteSaver


def run_chain(path: Path, threads: tuple[str, ...] = ("t",)) -> None:
    with SqliteSaver(path) as saver:
        graph = chain_builder(3).compile(checkpointer=saver)
        for thread in threads:
            graph.invoke({"n": 0}, {"configurable": {"thread_id": thread}})


def history(saver: Any, thread: str = "t") -> list[Any]:
    return [
        (t.config, t.checkpoint, t.metadata, t.pending_writes)
        for t in saver.list(config_for(thread))
    ]


def test_a_run_stores_no_row_for_a_channel_without_a_value(tmp_path: Path):
    path = tmp_path / "chain.db"
    run_chain(path)
    with sqlite3.connect(path) as conn:
        types = {t for (t,) in conn.execute("SELECT DISTINCT type FROM checkpoint_blobs")}
        rows = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE checkpoint_ns = '' ORDER BY checkpoint_id"
        ).fetchall()
    assert "empty" not in types
    latest = json.loads(rows[-1][0])
    # The finished chain's latest checkpoint: only n holds a value; the consumed triggers
    # (__start__, branch:to:n0 … n2) are listed apart, with their versions.
    assert sorted(ungroup_versions(latest["channel_versions"])) == ["n"]
    assert sorted(ungroup_versions(latest[EMPTY_VERSIONS])) == [
        "__start__",
        "branch:to:n0",
        "branch:to:n1",
        "branch:to:n2",
    ]
    with SqliteSaver(path) as saver:
        tup = saver.get_tuple(config_for("t"))
    assert tup is not None
    assert tup.checkpoint["channel_values"] == {"n": 3}
    stored = {**ungroup_versions(latest["channel_versions"])}
    stored.update(ungroup_versions(latest[EMPTY_VERSIONS]))
    assert tup.checkpoint["channel_versions"] == stored
    assert EMPTY_VERSIONS not in tup.checkpoint


def to_schema_7(path: Path) -> None:
    """Rewrite a file as a durable_debug of schema version 7 wrote it: every channel in
    ``channel_versions``, a row of type ``empty`` for each empty channel version."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, checkpoint FROM checkpoints"
        ).fetchall()
        for thread, ns, cid, text in rows:
            record = json.loads(text)
            empty = record.pop(EMPTY_VERSIONS, {})
            for version, channels in empty.items():
                record["channel_versions"].setdefault(version, []).extend(channels)
                for channel in channels:
                    conn.execute(
                        "INSERT OR IGNORE INTO checkpoint_blobs VALUES (?, ?, ?, ?, 'empty', NULL)",
                        (thread, ns, channel, version),
                    )
            conn.execute(
                "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_ns = ?"
                " AND checkpoint_id = ?",
                (json.dumps(record), thread, ns, cid),
            )
        conn.execute("ALTER TABLE checkpoints DROP COLUMN debug")  # schema 9's
        conn.execute("ALTER TABLE thread_leases DROP COLUMN proof")  # schema 10's
        conn.execute("DELETE FROM checkpoint_migrations WHERE v > 7")


def test_checkpoints_of_schema_7_read_the_same_and_the_file_is_upgraded(tmp_path: Path):
    path = tmp_path / "old.db"
    run_chain(path, ("t", "u"))
    with SqliteSaver(path) as saver:
        new_format = history(saver)
    to_schema_7(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoint_blobs WHERE type = 'empty'").fetchone()
        assert conn.execute("SELECT max(v) FROM checkpoint_migrations").fetchone() == (7,)
    assert OLDEST_READABLE == 7
    with ReadOnlySqliteSaver(path) as reader:  # read as it is, never migrated
        assert history(reader) == new_format
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT max(v) FROM checkpoint_migrations").fetchone() == (7,)
    with SqliteSaver(path) as saver:  # the app's saver upgrades it, and goes on from it
        assert history(saver) == new_format
        graph = chain_builder(3).compile(checkpointer=saver)
        assert graph.invoke({"n": 10}, {"configurable": {"thread_id": "t"}}) == {"n": 13}
        assert len(history(saver)) == len(new_format) + 5
    with sqlite3.connect(path) as conn:
        latest = conn.execute("SELECT max(v) FROM checkpoint_migrations").fetchone()
    assert latest == (len(MIGRATIONS) - 1,)


def test_a_channel_listed_with_a_value_and_empty_is_a_clear_error(tmp_path: Path):
    path = tmp_path / "crafted.db"
    run_chain(path)
    with sqlite3.connect(path) as conn:
        cid, text = conn.execute(
            "SELECT checkpoint_id, checkpoint FROM checkpoints ORDER BY checkpoint_id DESC"
        ).fetchone()
        record = json.loads(text)
        version = next(iter(record["channel_versions"]))
        record[EMPTY_VERSIONS][version] = ["n"]
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
            (json.dumps(record), cid),
        )
    with SqliteSaver(path) as saver, pytest.raises(CorruptPayloadError) as caught:
        saver.get_tuple(config_for("t"))
    message = str(caught.value)
    assert "'n' both with a value and empty" in message
    assert "thread 't'" in message and cid in message
