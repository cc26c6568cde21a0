"""The DAG as the widget sends it: compact columns that decode to the same tree.

``DagReader.wire()`` is what ``_dag`` holds; ``dag_from_wire`` (Python) and
``js/src/dag-wire.js`` (the front end) turn it back into the protocol's ``Dag``. Every
decoded tree must equal the one built from the full thread read, mark for mark.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from durable_debug.inspect.dag import (
    DAG_WIRE_FORMAT,
    DagReader,
    dag_data_of,
    dag_from_wire,
    dag_wire_of,
    pack_wire,
    unpack_wire,
)
from durable_debug.inspect.thread import aread_thread
from support.seed_graphs import load

REPO = Path(__file__).resolve().parents[2]


def seed(name: str, path: Path | None) -> dict[str, Any]:
    """Seed ``name`` on durable_debug's engine, saving to the SQLite ``path`` (else memory)."""
    return load("durable_debug", name, sqlite=path)


async def full_dag(g: Any, cfg: Any) -> Any:
    return dag_data_of(await aread_thread(g, cfg))


async def forked(ns: dict[str, Any]) -> None:
    """Run the accumulate seed, then fork it twice from step 1 and run each fork on."""
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    for i in range(2):
        await g.ainvoke(None, await g.aupdate_state(target.config, {"value": f"F{i}"}))


@pytest.mark.parametrize("store", ["sqlite", "memory"])
async def test_the_wire_decodes_to_the_full_tree(tmp_path, store):
    ns = seed("accumulate", tmp_path / "t.db" if store == "sqlite" else None)
    await forked(ns)
    g, cfg = ns["g"], ns["cfg"]
    reader = DagReader(g, cfg)
    await reader.arefresh()
    wire = reader.wire()
    assert wire["format"] == DAG_WIRE_FORMAT and wire["count"] == 8 and wire["lanes"] == 3
    expected = await full_dag(g, cfg)
    assert dag_from_wire(wire) == expected
    assert dag_from_wire(dag_wire_of(expected)) == expected
    # the wire is plain JSON, smaller than the protocol's nodes; the widget packs it as bytes
    assert json.loads(json.dumps(wire)) == wire
    assert len(json.dumps(wire)) < len(json.dumps(expected)) / 2
    packed = pack_wire(wire)
    assert isinstance(packed["packed"], bytes) and packed["epoch"] == wire["epoch"]
    assert unpack_wire(packed) == wire and dag_from_wire(packed) == expected


@pytest.mark.parametrize("store", ["sqlite", "memory"])
async def test_new_checkpoints_are_appended_and_placed_as_a_full_read_places_them(tmp_path, store):
    ns = seed("accumulate", tmp_path / "t.db" if store == "sqlite" else None)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    reader = DagReader(g, cfg)
    await reader.arefresh()
    history = [s async for s in g.aget_state_history(cfg)]
    for i, snapshot in enumerate(history[1:4]):  # forks from three places, each run on
        await g.ainvoke(None, await g.aupdate_state(snapshot.config, {"value": f"F{i}"}))
        await reader.arefresh()
        assert reader.last_read < len(reader.ids())  # only the newer ones were read
        assert dag_from_wire(reader.wire()) == await full_dag(g, cfg)
    assert reader.wire()["lanes"] == 4


async def test_errors_and_interrupts_travel_as_sparse_marks(tmp_path):
    ns = seed("resume", tmp_path / "r.db")
    g, cfg = ns["g"], ns["cfg"]
    with contextlib.suppress(RuntimeError):
        await g.ainvoke({"log": []}, cfg)
    reader = DagReader(g, cfg)
    await reader.arefresh()
    wire = reader.wire()
    assert len(wire["errors"]) == 2 and wire["errors"][1] == 1
    assert dag_from_wire(wire) == await full_dag(g, cfg)

    ns = seed("rerun_rule", tmp_path / "h.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"prep": "", "decision": ""}, cfg)
    reader = DagReader(g, cfg)
    await reader.arefresh()
    assert reader.wire()["interrupts"][1::2] == [1]
    await g.ainvoke(ns["Command"](resume="yes"), cfg)
    await reader.arefresh()  # the paused checkpoint is read again: answered now
    assert reader.wire()["interrupts"] == []
    assert dag_from_wire(reader.wire()) == await full_dag(g, cfg)


async def test_a_parent_the_store_lost_is_still_named(tmp_path):
    """A checkpoint whose parent row is gone (pruned, or lost) is a root that still names its
    parent, as in the full read."""
    database = tmp_path / "t.db"
    ns = seed("accumulate", database)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    with closing(sqlite3.connect(database)) as db, db:
        first = db.execute("SELECT min(checkpoint_id) FROM checkpoints").fetchone()[0]
        db.execute("DELETE FROM checkpoints WHERE checkpoint_id = ?", (first,))
    reader = DagReader(g, cfg)
    await reader.arefresh()
    wire = reader.wire()
    assert wire["missing_parent"] == [0, first]
    dag = dag_from_wire(wire)
    assert dag == await full_dag(g, cfg)
    assert [n["parent"] for n in dag["nodes"] if n["depth"] == 0] == [first]


def test_a_wire_of_another_form_is_refused_by_name():
    with pytest.raises(ValueError, match="format 'dag-rows-9'"):
        dag_from_wire({"format": "dag-rows-9", "id": []})
    plain = {"thread_id": "t", "checkpoint_ns": "", "nodes": [], "depth": 0, "lanes": 0}
    assert dag_from_wire(plain) is plain  # the plain form is already a Dag


@pytest.mark.skipif(shutil.which("node") is None, reason="the front end's decoder runs in node")
async def test_the_front_end_decodes_the_wire_to_the_same_tree(tmp_path):
    ns = seed("accumulate", tmp_path / "t.db")
    await forked(ns)
    g, cfg = ns["g"], ns["cfg"]
    reader = DagReader(g, cfg)
    await reader.arefresh()
    base = reader.wire()
    g2 = ns["g"]  # one more run: a tail from the newest checkpoint seen on
    await g2.ainvoke({"value": "", "log": []}, cfg)
    await reader.arefresh()
    tail = reader.wire(reader.low)
    assert 0 < tail["start"] < len(base["id"]) and tail["epoch"] == base["epoch"]
    pair = {"base": base, "tail": tail, "stale": {**tail, "epoch": -1}}
    (tmp_path / "wire.json").write_text(json.dumps(pair), "utf-8")
    module = (REPO / "js" / "src" / "dag-wire.js").as_uri()
    script = (
        f"import {{ decodeDag, DAG_WIRE_FORMAT }} from {json.dumps(module)};"
        "import { readFileSync } from 'node:fs';"
        "const pair = JSON.parse(readFileSync(process.argv[1], 'utf8'));"
        "const dag = decodeDag(pair.base, pair.tail);"
        "if (decodeDag(pair.base, pair.tail) !== dag) throw new Error('decoded twice');"
        "const stale = decodeDag(pair.base, pair.stale).nodes.length;"
        "process.stdout.write(JSON.stringify({ format: DAG_WIRE_FORMAT, dag, stale }));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(tmp_path / "wire.json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["format"] == DAG_WIRE_FORMAT
    expected = await full_dag(g, cfg)
    assert out["dag"] == json.loads(json.dumps(expected))
    assert dag_from_wire(base, tail) == expected  # Python merges the same way
    assert out["stale"] == len(base["id"])  # a tail of another epoch is ignored


async def test_a_tail_extends_only_the_wire_it_follows(tmp_path):
    ns = seed("accumulate", tmp_path / "t.db")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    reader = DagReader(g, cfg)
    await reader.arefresh()
    base = reader.wire()
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    await g.ainvoke(None, await g.aupdate_state(target.config, {"value": "F"}))
    await reader.arefresh()  # a fork from step 1: its parent is marked again
    assert reader.low == 2 and reader.epoch == base["epoch"]
    assert dag_from_wire(base, reader.wire(reader.low)) == await full_dag(g, cfg)
    reader.forget()
    await reader.arefresh()  # laid out anew: a new epoch, an old wire takes no tail of it
    assert reader.epoch != base["epoch"] and reader.low == 0
    assert dag_from_wire(base, reader.wire(2)) == dag_from_wire(base)


def odd_wire(start: int) -> dict[str, Any]:
    """A compact form with what packing must keep exactly: an id that is no UUID, a time in
    another form, a parent after its child, a lost parent, negative steps."""
    return {
        "format": DAG_WIRE_FORMAT,
        "thread_id": "t",
        "checkpoint_ns": "",
        "epoch": 3,
        "start": start,
        "count": start + 4,
        "depth": 3,
        "lanes": 2,
        "strings": ["input"],
        "lists": [[]],
        "id": ["c0", "c1", "c2", "c3"],
        "parent": [-1, start + 3, start, -1],
        "step": [-1, 4, 0, 7],
        "source": [0, 0, 0, 0],
        "next": [0, 0, 0, 0],
        "writers": [0, 0, 0, 0],
        "node_depth": [0, 2, 1, 0],
        "lane": [0, 1, 0, 1],
        "created_at": [
            "2026-12-04T23:59:59.999999+00:00",
            "yesterday",
            "2026-12-05T00:00:00+00:00",
            "1969-12-31T23:59:59.000001+00:00",
        ],
        "interrupts": [],
        "errors": [],
        "findings": [],
        "graph_changed": [],
        "broken_parent": [],
        "missing_parent": [start + 3, "gone"],
    }


@pytest.mark.parametrize("start", [0, 5])
def test_packing_keeps_every_column_exactly(start):
    wire = odd_wire(start)
    packed = pack_wire(wire)
    assert packed["packed"][:4] == b"DWB1" and packed["start"] == start
    assert unpack_wire(packed) == wire


async def test_the_packed_buffer_is_small_and_exact(tmp_path):
    """Ids go as 16 bytes, times as microsecond deltas: a fraction of the JSON they were."""
    ns = seed("accumulate", tmp_path / "t.db")
    await forked(ns)
    reader = DagReader(ns["g"], ns["cfg"])
    await reader.arefresh()
    wire = reader.wire()
    packed = pack_wire(wire)["packed"]
    assert unpack_wire(pack_wire(wire)) == wire
    assert len(packed) < len(json.dumps(wire, separators=(",", ":")))
    assert wire["id"][0].encode() not in packed  # the ids travel as bytes
    assert wire["created_at"][0].encode() not in packed  # the times as numbers


@pytest.mark.skipif(shutil.which("node") is None, reason="the front end's decoder runs in node")
async def test_the_front_end_unpacks_the_buffers_python_packs(tmp_path):
    ns = seed("accumulate", tmp_path / "t.db")
    await forked(ns)
    g, cfg = ns["g"], ns["cfg"]
    reader = DagReader(g, cfg)
    await reader.arefresh()
    base = pack_wire(reader.wire())
    await g.ainvoke({"value": "", "log": []}, cfg)
    await reader.arefresh()
    tail = pack_wire(reader.wire(reader.low))
    odd = pack_wire(odd_wire(0))
    for name, value in (("base", base), ("tail", tail), ("odd", odd)):
        (tmp_path / f"{name}.bin").write_bytes(value["packed"])
    module = (REPO / "js" / "src" / "dag-wire.js").as_uri()
    fields = {
        name: {k: v for k, v in value.items() if k != "packed"}
        for name, value in (("base", base), ("tail", tail))
    }
    script = (
        f"import {{ decodeDag, unpack, DAG_WIRE_FORMAT }} from {json.dumps(module)};"
        "import { readFileSync } from 'node:fs';"
        "const read = (name, value) => { const b = new Uint8Array(readFileSync(process.argv[1]"
        " + '/' + name + '.bin')); return { ...value, packed: new DataView(b.buffer,"
        " b.byteOffset, b.byteLength) }; };"
        f"const base = read('base', {json.dumps(fields['base'])});"
        f"const tail = read('tail', {json.dumps(fields['tail'])});"
        "const odd = unpack(read('odd', { format: DAG_WIRE_FORMAT }));"
        "process.stdout.write(JSON.stringify({ dag: decodeDag(base, tail), odd }));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["dag"] == json.loads(json.dumps(await full_dag(g, cfg)))
    assert out["odd"] == odd_wire(0)
