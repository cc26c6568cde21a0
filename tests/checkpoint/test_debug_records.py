"""Debug records (``checkpoint/records.py``): each checkpoint's graph version, write latency,
``as_node`` and findings are stored beside it on our four savers, never in ``metadata``;
another process reads them back; older checkpoints' keys in ``metadata`` are still read; a
saver that is not ours keeps them in this process only."""

from __future__ import annotations

import operator
import sqlite3
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from durable_debug import START, Command, StateGraph, interrupt, saver_from_url
from durable_debug._sync import run_sync
from durable_debug.checkpoint.records import aread_records
from durable_debug.graph.version import graph_version
from durable_debug.inspect import findings

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _typo(state: Log) -> dict[str, Any]:
    return {"log": ["a"], "lgo": ["oops"]}


def _ask(state: Log) -> dict[str, Any]:
    return {"log": [interrupt("ok?")]}


def build(saver: Any) -> Any:
    """START → typo (writes a key the schema lacks) → ask (interrupts)."""
    return (
        StateGraph(Log)
        .add_node("typo", _typo)
        .add_node("ask", _ask)
        .add_edge(START, "typo")
        .add_edge("typo", "ask")
        .compile(checkpointer=saver)
    )


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ]
)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'records.db'}"
    if request.param == "redis":
        return str(request.getfixturevalue("redis_db"))
    return str(request.getfixturevalue("postgres_db"))


@pytest.fixture
def saver(url: str) -> Iterator[Any]:
    opened = saver_from_url(url)
    yield opened
    close = getattr(opened, "close", None)
    if callable(close):
        close()


def run_with_findings(saver: Any) -> tuple[Any, dict[str, Any]]:
    graph = build(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph.invoke({"log": []}, cfg)
        graph.invoke(Command(resume="yes"), cfg)
        graph.invoke(Command(resume="again"), cfg)  # nothing pending: a finding
    graph.update_state(cfg, {"log": ["edit"]}, as_node="ask")
    return graph, cfg


def test_records_are_stored_beside_the_checkpoints_not_in_metadata(saver: Any) -> None:
    graph, cfg = run_with_findings(saver)
    history = list(graph.get_state_history(cfg))
    assert all(set(s.metadata) == {"source", "step", "parents"} for s in history)
    stored = run_sync(aread_records(saver, "t"))
    step_of = {s.config["configurable"]["checkpoint_id"]: s.metadata["step"] for s in history}
    by_step = {step: stored[("", cid)] for cid, step in step_of.items()}
    assert {r["graph_fingerprint"] for r in by_step.values()} == {graph_version(graph)}
    assert "graph_structure" in by_step[-1]
    assert by_step[3]["as_node"] == "ask"
    assert by_step[1]["parent_write_ms"] >= 0
    found = findings(graph, cfg)
    codes = {step_of[cid]: [f.code for f in listed] for cid, listed in found.items()}
    assert codes == {1: ["unknown-key"], 2: ["resume-nothing-pending"]}
    # deleting the thread deletes its records
    saver.delete_thread("t")
    assert run_sync(aread_records(saver, "t")) == {}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_another_process_reads_the_findings(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'records.db'}"
        if kind == "sqlite"
        else str(request.getfixturevalue("redis_db"))
    )
    with saver_from_url(url) as saver:
        run_with_findings(saver)
    code = (
        "import sys, json\n"
        "from durable_debug import saver_from_url\n"
        "from durable_debug.inspect import findings\n"
        "with saver_from_url(sys.argv[1]) as saver:\n"
        "    found = findings(saver, {'configurable': {'thread_id': 't'}})\n"
        "print(json.dumps(sorted(f.code for fs in found.values() for f in fs)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, url],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
    )
    assert done.stdout.strip() == '["resume-nothing-pending", "unknown-key"]'


def test_checkpoints_of_an_older_version_keep_their_keys_in_metadata(tmp_path: Path) -> None:
    """A file written before schema 9: its record keys live in metadata and are read from
    there (versions, as_node); the file is migrated when a saver opens it."""
    from durable_debug import SqliteSaver
    from durable_debug.checkpoint.sqlite import MIGRATIONS
    from durable_debug.inspect import dag_data, read_thread

    path = tmp_path / "old.db"
    with SqliteSaver(str(path)) as saver:
        graph, cfg = run_with_findings(saver)
    with sqlite3.connect(path) as conn:  # as an older durable_debug stored them
        rows = conn.execute("SELECT checkpoint_id, metadata, debug FROM checkpoints").fetchall()
        for cid, metadata, debug in rows:
            import json

            merged = {**json.loads(metadata), **json.loads(debug or "{}")}
            merged.pop("findings", None)
            conn.execute(
                "UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?",
                (json.dumps(merged), cid),
            )
        conn.execute("ALTER TABLE checkpoints DROP COLUMN debug")
        conn.execute("ALTER TABLE thread_leases DROP COLUMN proof")  # schema 10's
        conn.execute("DELETE FROM checkpoint_migrations WHERE v > 8")
    with SqliteSaver(str(path)) as saver:
        graph = build(saver)
        thread = read_thread(graph, cfg)
        assert {r.debug["graph_fingerprint"] for r in thread} == {graph_version(graph)}
        assert thread.writers(thread.latest) == ["ask"]
        assert [n["graph_changed"] for n in dag_data(graph, cfg)["nodes"]] == [False] * 5
        assert findings(graph, cfg) == {}  # older versions recorded none
        with sqlite3.connect(path) as conn:  # the saver migrated the file
            latest = conn.execute("SELECT max(v) FROM checkpoint_migrations").fetchone()
            assert latest == (len(MIGRATIONS) - 1,)


def test_a_saver_that_is_not_ours_keeps_records_in_this_process() -> None:
    """A user's saver (here one that says it does not store records): the records stay out of
    its checkpoints (nowhere safe to put them) and live in this process's registry, so the
    debugger still shows them here, per saver object."""
    from durable_debug import MemorySaver

    class UsersSaver(MemorySaver):
        stores_debug_records = False

    saver = UsersSaver()
    graph, cfg = run_with_findings(saver)
    assert saver.records == {}  # nothing reached the saver
    for tup in saver.list(cfg):
        assert set(tup.metadata) <= {"source", "step", "parents"}
    found = findings(graph, cfg)
    assert sorted(f.code for fs in found.values() for f in fs) == [
        "resume-nothing-pending",
        "unknown-key",
    ]
    stored = run_sync(aread_records(saver, "t"))
    assert any(r.get("as_node") == "ask" for r in stored.values())
    assert findings(UsersSaver(), cfg) == {}  # per saver object


def test_the_memory_saver_reads_the_records_asked_for_by_id_and_namespace() -> None:
    """Records asked for by checkpoint id (and namespace) are exactly those, as copies; the
    thread's other checkpoints and other threads' checkpoints are left out."""
    from durable_debug import MemorySaver

    saver = MemorySaver()
    graph = build(saver)
    for thread in ("a", "b"):
        with warnings.catch_warnings():  # the typo node's dropped key
            warnings.simplefilter("ignore")
            graph.invoke({"log": []}, _config(thread))
    ids = [t.config["configurable"]["checkpoint_id"] for t in saver.list(_config("a"))]
    everything = run_sync(aread_records(saver, "a", ""))
    assert set(everything) == {("", cid) for cid in ids}
    some = run_sync(aread_records(saver, "a", "", [*ids[:2], "no-such-checkpoint"]))
    assert some == {("", cid): everything[("", cid)] for cid in ids[:2]}
    some[("", ids[0])]["changed"] = True
    assert "changed" not in run_sync(aread_records(saver, "a", "", ids[:1]))[("", ids[0])]
    assert run_sync(aread_records(saver, "a", "elsewhere", ids)) == {}


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}
