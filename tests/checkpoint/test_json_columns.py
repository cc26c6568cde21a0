"""The JSON columns of the SQL savers (checkpoint record, metadata): what is written as it is,
what is wrapped, and what reading refuses, whichever path encoding and decoding take."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for, raw_connection

from durable_debug.checkpoint.serde import MAX_DEPTH, CorruptPayloadError
from durable_debug.checkpoint.sqlite import SqliteSaver


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver(str(tmp_path / "checkpoints.db")) as s:
        yield s


def stored_metadata(saver: SqliteSaver) -> Any:
    with raw_connection(saver) as db:
        return json.loads(db.conn.execute("SELECT metadata FROM checkpoints").fetchone()[0])


def test_plain_metadata_is_stored_as_written(saver: SqliteSaver) -> None:
    meta = {"source": "input", "step": -1, "x": [1.5, None, True, {"k": ["é", "[{"]}], "e": {}}
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, meta, versions)
    assert stored_metadata(saver) == meta
    tup = saver.get_tuple(config)
    assert tup is not None and tup.metadata == meta


@pytest.mark.parametrize(
    "value",
    [
        (1, 2),  # a tuple stays a tuple
        {1: "int key"},
        "nul \x00 inside",
        {"$serde": "looks wrapped"},
        b"bytes",
        {"deep": [{"s": {1, 2}}]},
    ],
    ids=["tuple", "int-key", "nul", "marker-key", "bytes", "set-inside"],
)
def test_values_json_cannot_hold_exactly_round_trip(saver: SqliteSaver, value: Any) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, {"source": "input", "step": -1, "v": value}, versions)
    assert "$serde" in json.dumps(stored_metadata(saver))
    tup = saver.get_tuple(config)
    assert tup is not None and tup.metadata["v"] == value
    assert type(tup.metadata["v"]) is type(value)


def test_non_finite_floats_round_trip(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    meta = {"source": "input", "step": -1, "v": [math.inf]}
    config = saver.put(config_for("t"), cp, meta, versions)
    tup = saver.get_tuple(config)
    assert tup is not None and tup.metadata["v"] == [math.inf]


def test_a_lone_surrogate_is_refused_naming_the_field(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    with pytest.raises(Exception, match="field 'metadata'"):
        saver.put(config_for("t"), cp, {"source": "input", "step": -1, "v": "\ud800"}, versions)


def test_brackets_inside_strings_do_not_make_a_shallow_text_too_deep(saver: SqliteSaver) -> None:
    brackets = "[{" * (MAX_DEPTH * 2)
    meta = {"source": "input", "step": -1, "note": brackets}
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, meta, versions)
    tup = saver.get_tuple(config)
    assert tup is not None and tup.metadata["note"] == brackets


def test_a_deep_text_with_few_characters_to_spare_is_still_refused(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, {"source": "input", "step": -1}, versions)
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with raw_connection(saver) as db:
        db.conn.execute(
            "UPDATE checkpoints SET metadata = ?", (f'{{"source": "input", "x": {deep}}}',)
        )
        db.conn.commit()
    with pytest.raises(CorruptPayloadError, match="field 'metadata'.*deeper than the limit"):
        saver.get_tuple(config)


@pytest.mark.parametrize(
    "seen",
    [
        {"$serde": {"a": "x"}},  # a node whose name is the wrapping marker
        {"node": {"é": "x"}, "ñode": {"a": "x"}},  # non-ASCII node and channel names
        {},
    ],
    ids=["marker-node", "non-ascii", "none-seen"],
)
def test_a_checkpoint_record_round_trips_whatever_its_node_names(
    saver: SqliteSaver, seen: dict[str, dict[str, str]]
) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    cp["versions_seen"] = {
        node: {ch: cp["channel_versions"]["a"]} for node, m in seen.items() for ch in m
    }
    cp["extra"] = (1, 2)  # a field beside the version maps that JSON cannot hold exactly
    config = saver.put(config_for("t"), cp, {"source": "input", "step": -1}, versions)
    tup = saver.get_tuple(config)
    assert tup is not None
    assert tup.checkpoint["versions_seen"] == cp["versions_seen"]
    assert tup.checkpoint["extra"] == (1, 2)


def test_a_record_deeper_than_the_limit_is_refused_beside_the_version_maps(
    saver: SqliteSaver,
) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    deep: Any = []
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    cp["extra"] = deep
    with pytest.raises(Exception, match="field 'checkpoint'.*deeper than the limit"):
        saver.put(config_for("t"), cp, {"source": "input", "step": -1}, versions)


def test_a_channel_name_with_nul_in_a_version_map_is_refused(saver: SqliteSaver) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    cp["versions_seen"] = {"node": {"a\x00b": cp["channel_versions"]["a"]}}
    config = saver.put(config_for("t"), cp, {"source": "input", "step": -1}, versions)
    tup = saver.get_tuple(config)  # wrapped, so it reads back exactly
    assert tup is not None and tup.checkpoint["versions_seen"] == cp["versions_seen"]


@pytest.mark.parametrize(
    ("stored", "error"),
    [
        ("not json", "malformed"),
        ('{"source": "input"} trailing', "malformed"),
        ('{"source": "input"', "malformed"),
        ("", "malformed"),
        (' \n{"source": "input", "step": -1}\t', None),  # written by hand: still read
    ],
    ids=["garbage", "trailing", "truncated", "empty", "whitespace"],
)
def test_a_hand_edited_metadata_text_is_read_or_refused_clearly(
    saver: SqliteSaver, stored: str, error: str | None
) -> None:
    cp, versions = child_checkpoint(None, {"a": 1})
    config = saver.put(config_for("t"), cp, {"source": "input", "step": -1}, versions)
    with raw_connection(saver) as db:
        db.conn.execute("UPDATE checkpoints SET metadata = ?", (stored,))
        db.conn.commit()
    if error is None:
        tup = saver.get_tuple(config)
        assert tup is not None and tup.metadata == {"source": "input", "step": -1}
    else:
        with pytest.raises(CorruptPayloadError, match=f"field 'metadata'.*{error}"):
            saver.get_tuple(config)


def _page_rows(saver: SqliteSaver) -> list[Any]:
    with raw_connection(saver) as db:
        return db.conn.execute(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint,"
            " metadata FROM checkpoints ORDER BY checkpoint_id DESC"
        ).fetchall()


def _seen_thread(saver: SqliteSaver, steps: int = 4) -> None:
    """A thread whose checkpoints repeat most nodes' versions_seen (as a run's do)."""
    from durable_debug.checkpoint.base import empty_checkpoint

    config = config_for("t")
    cp = empty_checkpoint()
    for step in range(steps):
        seen = {f"node{n}": {"a": f"{n + 1:032d}.0"} for n in range(3)}
        seen[f"node{step % 3}"] = {"a": f"{step + 5:032d}.0", "b": f"{step + 1:032d}.0"}
        cp = {**child_checkpoint(cp, {"a": step})[0], "versions_seen": seen}
        config = saver.put(config, cp, {"step": step}, {"a": cp["channel_versions"]["a"]})


def test_a_page_decodes_each_versions_seen_as_its_rows_one_by_one(saver: SqliteSaver) -> None:
    """A node's map equal to the row before's is copied, not decoded again: the same maps as
    decoding each row alone, and no two checkpoints share one (a caller may change it)."""
    from durable_debug.checkpoint._rows import parse_checkpoint_row, parse_checkpoint_rows

    _seen_thread(saver)
    rows = _page_rows(saver)
    page = parse_checkpoint_rows(rows, saver.serde)
    alone = [parse_checkpoint_row(row, saver.serde) for row in rows]
    assert [p.record["versions_seen"] for p in page] == [p.record["versions_seen"] for p in alone]
    maps = [m for p in page for m in p.record["versions_seen"].values()]
    assert len({id(m) for m in maps}) == len(maps)
    tuples = list(saver.list(config_for("t")))
    tuples[0].checkpoint["versions_seen"]["node2"]["a"] = "changed"
    assert all(t.checkpoint["versions_seen"]["node2"]["a"] != "changed" for t in tuples[1:])


def test_a_garbled_versions_seen_after_an_equal_one_is_refused_naming_its_checkpoint(
    saver: SqliteSaver,
) -> None:
    _seen_thread(saver)
    rows = _page_rows(saver)
    garbled = rows[2][2]
    with raw_connection(saver) as db:
        db.conn.execute(
            "UPDATE checkpoints SET checkpoint = json_set(checkpoint,"
            " '$.versions_seen.node1', json('{\"1.0\": [7]}')) WHERE checkpoint_id = ?",
            (garbled,),
        )
        db.conn.commit()
    with pytest.raises(CorruptPayloadError) as caught:
        list(saver.list(config_for("t")))
    assert f"thread 't', checkpoint '{garbled}', field 'checkpoint'" in str(caught.value)
    assert "names channel 7" in str(caught.value)
