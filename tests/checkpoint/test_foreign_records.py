"""The debugger's records on LangGraph's own savers: kept in the store, read by another process.

When the engine runs on one of LangGraph's savers (``compile(checkpointer=<LangGraph's
saver>)``), each checkpoint's debug record (findings, graph fingerprint, ``as_node``) is kept
in its metadata under a reserved key, which every LangGraph saver stores. A new process reads
the findings back (the ``durable-debug`` command on the SQLite file); the engine's
``get_state`` / ``get_state_history`` leave the key out of the metadata; LangGraph's own
engine reads and resumes the thread as it resumes one it wrote itself (differential: the same
builder code run by both libraries).
"""

from __future__ import annotations

import asyncio
import json
import operator
import sqlite3
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import langgraph.graph as lg_graph
import langgraph.types as lg_types
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from typing_extensions import TypedDict

import durable_debug as dd
from durable_debug._sync import run_sync
from durable_debug.checkpoint.foreign import LangGraphSaver
from durable_debug.checkpoint.names import DEBUG_METADATA_KEY
from durable_debug.checkpoint.records import aread_records
from durable_debug.inspect import afindings, findings

SRC = Path(__file__).resolve().parents[2] / "src"
CFG = {"configurable": {"thread_id": "t"}}
LIBS = {"langgraph": (lg_graph, lg_types), "durable_debug": (dd, dd)}


class Log(TypedDict):
    log: Annotated[list[str], operator.add]


def build(lib: str) -> Any:
    """START → typo (writes a key the schema lacks: a finding) → ask (interrupts), written
    once for either library."""
    graph, types = LIBS[lib]

    def typo(state: Log) -> dict[str, Any]:
        return {"log": ["a"], "lgo": ["oops"]}

    def ask(state: Log) -> dict[str, Any]:
        return {"log": [types.interrupt("ok?")]}

    g = graph.StateGraph(Log)
    g.add_node("typo", typo)
    g.add_node("ask", ask)
    g.add_edge(graph.START, "typo")
    g.add_edge("typo", "ask")
    return g


def run_ours(saver: Any) -> Any:
    """Our engine: a run that records a finding (the typo) and pauses at ``ask``."""
    app = build("durable_debug").compile(checkpointer=saver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the typo node's dropped key
        app.invoke({"log": []}, CFG)
    return app


def codes(found: dict[str, Any]) -> list[str]:
    return sorted(f.code for listed in found.values() for f in listed)


@pytest.fixture(params=["memory", "sqlite"])
def lg_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    """A maker of LangGraph savers over one store (a new saver object each call, on its own
    connection, for the SQLite file)."""
    if request.param == "memory":
        memory = InMemorySaver()
        yield lambda: memory
        return
    conns: list[sqlite3.Connection] = []

    def make() -> Any:
        conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False)
        conns.append(conn)
        return SqliteSaver(conn)

    yield make
    for conn in conns:
        conn.close()


def test_the_records_are_read_back_from_the_store_not_the_process(lg_saver: Any) -> None:
    """A new adapter over the saver (what a new process has: no record of this one's runs)
    reads the findings, ``as_node`` and fingerprints back from the checkpoints' metadata,
    also a finding added after its checkpoint was saved (a resume with nothing pending)."""
    app = run_ours(lg_saver())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app.invoke(dd.Command(resume="yes"), CFG)
        app.invoke(dd.Command(resume="again"), CFG)  # nothing pending: a finding, added later
    app.update_state(CFG, {"log": ["edit"]}, as_node="ask")
    fresh = LangGraphSaver(lg_saver())
    stored = run_sync(aread_records(fresh, "t"))
    assert len(stored) == 5  # input, 0, 1, 2 and the update
    assert {r["as_node"] for r in stored.values() if "as_node" in r} == {"ask"}
    assert len({r["graph_fingerprint"] for r in stored.values()}) == 1
    assert codes(findings(fresh, CFG)) == ["resume-nothing-pending", "unknown-key"]
    # looked up by id, as a view refreshing a few checkpoints asks
    ids = [t.config["configurable"]["checkpoint_id"] for t in run_sync(_listed(fresh))]
    some = run_sync(aread_records(fresh, "t", "", ids[:2]))
    assert some == {("", cid): stored[("", cid)] for cid in ids[:2]}


async def _listed(saver: Any) -> list[Any]:
    return [t async for t in saver.alist(CFG)]


def test_our_engine_shows_no_reserved_key_langgraph_shows_it(lg_saver: Any) -> None:
    """Our get_state / get_state_history give LangGraph's metadata keys only; LangGraph's
    engine, which shows whatever metadata is stored, shows the record's JSON text under the
    reserved key, and nothing else differs."""
    ours = run_ours(lg_saver())
    theirs = build("langgraph").compile(checkpointer=lg_saver())
    our_view = [h.metadata for h in ours.get_state_history(CFG)]
    assert all(set(m) == {"source", "step", "parents"} for m in our_view)
    assert set(ours.get_state(CFG).metadata) == {"source", "step", "parents"}
    their_view = [h.metadata for h in theirs.get_state_history(CFG)]
    assert all(DEBUG_METADATA_KEY in m for m in their_view)
    assert [{k: v for k, v in m.items() if k != DEBUG_METADATA_KEY} for m in their_view] == (
        our_view
    )
    found = [json.loads(m[DEBUG_METADATA_KEY]).get("findings") for m in their_view]
    assert [f[0]["code"] for f in found if f] == ["unknown-key"]


def test_langgraph_resumes_the_thread_as_one_it_wrote(lg_saver: Any) -> None:
    """Differential: LangGraph's engine resumes the paused thread our engine wrote (records in
    its metadata) exactly as it resumes the same thread written by itself."""
    results = {}
    for writer in LIBS:
        saver = lg_saver()
        cfg = {"configurable": {"thread_id": f"by-{writer}"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(writer).compile(checkpointer=saver).invoke({"log": []}, cfg)
        resumer = build("langgraph").compile(checkpointer=saver)
        paused = resumer.get_state(cfg)
        done = resumer.invoke(lg_types.Command(resume="yes"), cfg)
        after = [
            (h.metadata["source"], h.metadata["step"], h.next, h.values)
            for h in resumer.get_state_history(cfg)
        ]
        results[writer] = (paused.next, paused.values, done, after)
        newest = resumer.get_state(cfg).metadata
        assert DEBUG_METADATA_KEY not in newest  # LangGraph's own checkpoints carry none
    assert results["durable_debug"] == results["langgraph"]
    assert results["langgraph"][2] == {"log": ["a", "yes"]}


def test_async_sqlite_saver_keeps_the_records(tmp_path: Path) -> None:
    """On LangGraph's AsyncSqliteSaver: the findings come back through a new connection, and
    LangGraph's engine resumes the thread as it resumes its own."""

    async def scenario() -> tuple[Any, ...]:
        path = str(tmp_path / "lg-async.db")
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            app = build("durable_debug").compile(checkpointer=saver)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await app.ainvoke({"log": []}, CFG)
            shown = [h.metadata async for h in app.aget_state_history(CFG)]
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            found = await afindings(LangGraphSaver(saver), CFG)
            theirs = build("langgraph").compile(checkpointer=saver)
            done = await theirs.ainvoke(lg_types.Command(resume="yes"), CFG)
        return shown, codes(found), done

    shown, found, done = asyncio.run(scenario())
    assert all(set(m) == {"source", "step", "parents"} for m in shown)
    assert found == ["unknown-key"]
    assert done == {"log": ["a", "yes"]}


def test_a_new_process_lists_the_findings_and_langgraph_resumes(tmp_path: Path) -> None:
    """Our engine writes a finding into LangGraph's SqliteSaver file; ``durable-debug inspect``
    in a new process lists it under its checkpoint; LangGraph's engine then resumes the
    thread, and the finding is still listed."""
    path = tmp_path / "app.db"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        run_ours(SqliteSaver(conn))
    conn.close()

    def inspect_thread() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "durable_debug.cli", "inspect", str(path), "--thread", "t"],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(SRC), "PATH": ""},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = inspect_thread()
    assert "findings:" in out and "wrote key 'lgo'" in out
    assert DEBUG_METADATA_KEY not in out
    with sqlite3.connect(path, check_same_thread=False) as conn:
        theirs = build("langgraph").compile(checkpointer=SqliteSaver(conn))
        assert theirs.get_state(CFG).next == ("ask",)
        assert theirs.invoke(lg_types.Command(resume="yes"), CFG) == {"log": ["a", "yes"]}
    conn.close()
    out = inspect_thread()
    assert "wrote key 'lgo'" in out and "thread 't': 4 checkpoints" in out


@pytest.mark.postgres
def test_postgres_saver_keeps_the_records_for_another_process(postgres_db: str) -> None:
    """On LangGraph's PostgresSaver: the findings come back through a new connection, and
    ``durable-debug inspect URL`` in a new process lists them."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(postgres_db) as saver:
        saver.setup()
        run_ours(saver)
    with PostgresSaver.from_conn_string(postgres_db) as saver:
        assert codes(findings(LangGraphSaver(saver), CFG)) == ["unknown-key"]
        theirs = build("langgraph").compile(checkpointer=saver)
        assert theirs.invoke(lg_types.Command(resume="yes"), CFG) == {"log": ["a", "yes"]}
        # our engine answers again: nothing pending, a finding added to LangGraph's last
        # checkpoint (saved again under its id); LangGraph still reads the thread as it was
        before = theirs.get_state(CFG)
        ours = build("durable_debug").compile(checkpointer=saver)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours.invoke(dd.Command(resume="again"), CFG)
        after = theirs.get_state(CFG)
        assert (after.values, after.next, after.config) == (before.values, (), before.config)
    with PostgresSaver.from_conn_string(postgres_db) as saver:
        assert codes(findings(LangGraphSaver(saver), CFG)) == [
            "resume-nothing-pending",
            "unknown-key",
        ]
    done = subprocess.run(
        [sys.executable, "-m", "durable_debug.cli", "inspect", postgres_db, "--thread", "t"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote key 'lgo'" in done.stdout
