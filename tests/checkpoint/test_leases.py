"""One writer per thread and once-only effects.

A run holds its thread's lease while it runs.

Eight processes resume one interrupted thread at the same moment: exactly one runs the node,
the seven others get ThreadBusyError naming the thread and the holder before any node runs,
the paused checkpoint gets one child, and the side effect happens once. A holder killed with
SIGKILL frees the thread when its (short, in these tests) lease expires.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

import pytest
from test_cross_process import HERE, SRC

from durable_debug import (
    END,
    START,
    Command,
    MemorySaver,
    SqliteSaver,
    StateGraph,
    StateUpdate,
    ThreadBusyError,
    interrupt,
)
from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.checkpoint.url import saver_from_url

PROCESSES = 8


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("redis", marks=pytest.mark.redis),
    ]
)
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.db'}"
    if request.param == "redis":
        return request.getfixturevalue("redis_db")
    return request.getfixturevalue("postgres_db")


def worker(*args: str, lease: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(HERE)])
    env["DURABLE_DEBUG_LEASE_SECONDS"] = lease
    return subprocess.Popen(
        [sys.executable, str(HERE / "lease_workers.py"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def lines(log: Path, kind: str) -> list[str]:
    if not log.exists():
        return []
    return [line.split()[1] for line in log.read_text().splitlines() if line.startswith(kind)]


def wait_until(condition: Any, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def start_paused_thread(url: str, thread_id: str, log: Path, *, failing: bool = False) -> str:
    """Run the thread to its interrupt (``failing``: to its node's failure); return the id
    of the checkpoint it stopped at."""
    out = finish(
        worker("start-failing" if failing else "start", url, thread_id, str(log), lease="5")
    )
    assert out.get("error") == ("the service is down" if failing else None)
    with saver_from_url(url) as saver:
        paused = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    assert paused is not None
    return str(paused.checkpoint["id"])


def children_of(url: str, thread_id: str, checkpoint_id: str) -> int:
    with saver_from_url(url) as saver:
        history = list(saver.list({"configurable": {"thread_id": thread_id}}))
    return sum(
        1
        for t in history
        if t.parent_config and t.parent_config["configurable"]["checkpoint_id"] == checkpoint_id
    )


@pytest.mark.parametrize("how", ["command", "none"])
def test_eight_concurrent_resumes_run_the_node_once(
    durable_url: str, tmp_path: Path, how: str
) -> None:
    """With Command(resume=...) after an interrupt, and with invoke(None) after a failure."""
    log, go, release = tmp_path / "runs.log", tmp_path / "go", tmp_path / "release"
    paused = start_paused_thread(durable_url, "pay-1", log, failing=how == "none")

    phase = "resume" if how == "command" else "resume-none"
    args = (phase, durable_url, "pay-1", str(log), str(go), str(release), "0")
    procs = [worker(*args, lease="5") for _ in range(PROCESSES)]
    try:
        wait_until(lambda: len(lines(log, "ready")) == PROCESSES, "every worker to be ready")
        go.touch()  # all eight resume at once
        # Seven refused (they exit) plus the one running; without leases all eight run.
        wait_until(
            lambda: (
                sum(p.poll() is not None for p in procs) + len(lines(log, "effect")) >= PROCESSES
            ),
            "the refused workers to exit",
        )
        release.touch()
        results = [finish(p) for p in procs]
    finally:
        release.touch()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()

    ran = [r for r in results if "result" in r]
    busy = [r for r in results if "busy" in r]
    assert len(ran) == 1 and len(busy) == PROCESSES - 1
    answer = "yes" if how == "command" else "done"
    assert ran[0]["result"] == {"question": "charge?", "answer": answer}
    assert lines(log, "effect") == [str(ran[0]["pid"])]
    holder = f"{socket.gethostname()}:{ran[0]['pid']}"
    for r in busy:
        assert r["busy"]["thread"] == "pay-1"
        assert r["busy"]["holder"] == holder
        assert r["busy"]["since"] is not None
        assert r["message"].startswith(
            f"thread 'pay-1' is busy: another run holds it (holder {holder}"
        )
    assert children_of(durable_url, "pay-1", paused) == 1


def test_a_killed_holder_frees_the_thread_when_its_lease_expires(
    durable_url: str, tmp_path: Path
) -> None:
    log, go, release = tmp_path / "runs.log", tmp_path / "go", tmp_path / "never"
    paused = start_paused_thread(durable_url, "pay-2", log)
    go.touch()

    holder = worker("resume", durable_url, "pay-2", str(log), str(go), str(release), "0", lease="1")
    try:
        wait_until(lambda: lines(log, "effect"), "the holder to run its node")
        refused = finish(
            worker("resume", durable_url, "pay-2", str(log), str(go), str(release), "0", lease="1")
        )
        assert refused["busy"]["holder"] == f"{socket.gethostname()}:{holder.pid}"
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.communicate()
    assert holder.returncode == -signal.SIGKILL

    release.touch()
    # Waits for the dead holder's lease to expire (1 s), then resumes.
    done = finish(
        worker("resume", durable_url, "pay-2", str(log), str(go), str(release), "60", lease="1")
    )
    assert done["result"] == {"question": "charge?", "answer": "yes"}
    assert children_of(durable_url, "pay-2", paused) == 1


class Ask(TypedDict):
    question: str
    answer: str


def gated_graph(saver: Any, entered: asyncio.Event, gate: asyncio.Event) -> Any:
    async def ask(state: Ask) -> dict[str, Any]:
        answer = interrupt("charge?")
        entered.set()
        await gate.wait()
        return {"answer": answer}

    builder = StateGraph(Ask).add_node("ask", ask).add_edge(START, "ask").add_edge("ask", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_second_writer_in_the_same_process_is_refused_or_waits(
    kind: str, tmp_path: Path
) -> None:
    saver = MemorySaver() if kind == "memory" else SqliteSaver(tmp_path / "t.db")
    entered, gate = asyncio.Event(), asyncio.Event()
    graph = gated_graph(saver, entered, gate)
    config = {"configurable": {"thread_id": "t"}}
    await graph.ainvoke({"question": "q", "answer": ""}, config)

    first = asyncio.ensure_future(graph.ainvoke(Command(resume="yes"), config))
    await entered.wait()
    with pytest.raises(ThreadBusyError, match="thread 't' is busy") as caught:
        await graph.ainvoke(Command(resume="no"), config)
    assert caught.value.holder == f"{socket.gethostname()}:{os.getpid()}"
    with pytest.raises(ThreadBusyError):
        await graph.aupdate_state(config, {"answer": "forced"})
    with pytest.raises(ThreadBusyError, match="thread 't' is busy"):
        await graph.abulk_update_state(config, [[StateUpdate({"answer": "forced"})]])
    other = {"configurable": {"thread_id": "other"}}  # other threads are not held
    assert "__interrupt__" in await graph.ainvoke({"question": "q2", "answer": ""}, other)

    waiting = asyncio.ensure_future(graph.aupdate_state(config, {"answer": "later"}, wait=60))
    await asyncio.sleep(0)
    assert not waiting.done()
    gate.set()
    assert await first == {"question": "q", "answer": "yes"}
    await waiting  # took the thread once the run gave it back
    assert (await graph.aget_state(config)).values["answer"] == "later"
    if kind == "sqlite":
        saver.close()


def test_once_charges_once_across_interrupt_resume_kill_and_another_process(
    durable_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "runs.log"
    first = finish(worker("charge", durable_url, "order-1", str(log), "start", lease="1"))
    assert first["interrupts"] == 1
    assert lines(log, "charged") == [str(first["pid"])]

    hanging = worker("charge", durable_url, "order-1", str(log), "resume-and-hang", lease="1")
    try:
        wait_until(lambda: lines(log, "after"), "the resumed node to pass its interrupt")
        os.kill(hanging.pid, signal.SIGKILL)
        hanging.communicate()
    finally:
        if hanging.poll() is None:
            hanging.kill()
            hanging.communicate()

    done = finish(worker("charge", durable_url, "order-1", str(log), "continue", lease="1"))

    assert done["result"] == {"receipt": f"receipt-{first['pid']}-42", "approved": "yes"}
    assert lines(log, "charged") == [str(first["pid"])]  # never charged again
    assert lines(log, "after") == [str(hanging.pid), str(done["pid"])]


async def test_a_run_whose_lease_another_run_took_stops_before_saving_its_step(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A holder that stalled past its lease (here: the row is taken over by hand, as another
    worker would after expiry) learns it when renewing, and its run stops with LeaseLostError
    before saving its next checkpoint: the thread gets no second branch."""
    import logging
    import sqlite3

    from durable_debug.checkpoint.lease import LeaseLostError

    path = tmp_path / "t.db"
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(state: Ask) -> dict[str, Any]:
        entered.set()
        await release.wait()
        return {"answer": "late"}

    caplog.set_level(logging.WARNING, logger="durable_debug.checkpoint.lease")
    async with SqliteSaver(path) as holder:
        holder.lease_seconds = 0.3
        graph = StateGraph(Ask).add_node("slow", slow).add_edge(START, "slow")
        graph = graph.compile(checkpointer=holder)
        config = {"configurable": {"thread_id": "stalled"}}
        running = asyncio.ensure_future(graph.ainvoke({"question": "q", "answer": ""}, config))
        try:
            await entered.wait()
            saved = [t.checkpoint["id"] async for t in holder.alist(config)]
            with sqlite3.connect(path) as conn:  # another worker took the thread
                conn.execute(
                    "UPDATE thread_leases SET token = 'other', holder = 'worker-2:7', "
                    "expires = 1e12 WHERE thread_id = 'stalled'"
                )
            conn.close()
            deadline = time.monotonic() + 120
            while "taken by another run" not in caplog.text:  # found at the next renewal
                assert time.monotonic() < deadline, "the holder never noticed"
                await asyncio.sleep(0.02)
        finally:
            release.set()
        with pytest.raises(LeaseLostError, match="thread 'stalled': this run's lease expired"):
            await running
        assert [t.checkpoint["id"] async for t in holder.alist(config)] == saved
    with sqlite3.connect(path) as conn:  # the other worker's lease is left alone
        assert conn.execute("SELECT holder FROM thread_leases").fetchall() == [("worker-2:7",)]
    conn.close()


async def test_a_run_longer_than_its_lease_keeps_the_thread_by_renewing_it(tmp_path: Path) -> None:
    """The holder renews its lease while a node runs for many lease lengths; a stream left
    early gives the thread back."""
    import datetime
    import sqlite3

    path = tmp_path / "t.db"
    renewed = asyncio.Event()

    async def slow(state: Ask) -> dict[str, Any]:
        await renewed.wait()  # until the lease was renewed past three lease lengths
        return {"answer": "done"}

    async with SqliteSaver(path) as holder, SqliteSaver(path) as other:
        holder.lease_seconds = 0.3
        build = StateGraph(Ask).add_node("slow", slow).add_edge(START, "slow")
        graph, rival = build.compile(checkpointer=holder), build.compile(checkpointer=other)
        config = {"configurable": {"thread_id": "long"}}
        running = asyncio.ensure_future(graph.ainvoke({"question": "", "answer": ""}, config))
        try:
            with sqlite3.connect(path) as conn:

                def lease() -> tuple[str, float]:
                    row = conn.execute(
                        "SELECT since, expires FROM thread_leases WHERE thread_id = 'long'"
                    ).fetchone()
                    return ("", 0.0) if row is None else (row[0], row[1])

                deadline = time.monotonic() + 120
                while not lease()[0]:
                    assert time.monotonic() < deadline, "the run never took its lease"
                    await asyncio.sleep(0.02)
                taken = datetime.datetime.fromisoformat(lease()[0]).timestamp()
                while lease()[1] <= taken + 4 * 0.3:
                    assert time.monotonic() < deadline, "the lease was not renewed"
                    await asyncio.sleep(0.02)
            with pytest.raises(ThreadBusyError):
                await rival.ainvoke(None, config)
        finally:
            renewed.set()
            await running
        assert (await graph.aget_state(config)).values["answer"] == "done"

        stream = rival.astream({"question": "again", "answer": ""}, config)
        await stream.__anext__()  # the first values event; the run holds the thread
        with pytest.raises(ThreadBusyError):
            await graph.ainvoke(None, config)
        await stream.aclose()  # leaving the stream early ends the run, giving the thread back
        assert "answer" in await graph.ainvoke(None, config)


def test_busy_errors_survive_pickling_and_a_bad_wait_is_a_clear_error() -> None:
    import datetime
    import pickle

    from durable_debug import InvalidConfigError

    since = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    error = ThreadBusyError("t", "host:1", since, waited=2.0)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.thread_id, copy.holder, copy.since, str(copy)) == (
        "t",
        "host:1",
        since,
        str(error),
    )
    assert "(waited 2s)" in str(copy)

    graph = gated_graph(MemorySaver(), asyncio.Event(), asyncio.Event())
    for bad in (-1, "5", float("nan")):
        with pytest.raises(InvalidConfigError, match="thread 'x': wait must be a number"):
            graph.invoke(
                {"question": "q", "answer": ""}, {"configurable": {"thread_id": "x"}}, wait=bad
            )
    assert graph.get_state({"configurable": {"thread_id": "x"}}).values == {}


class Count(TypedDict):
    v: int


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("style", ["sync", "async"])
def test_a_graph_run_inside_a_node_on_the_same_thread_shares_its_callers_lease(
    kind: str, style: str, tmp_path: Path
) -> None:
    saver = MemorySaver() if kind == "memory" else SqliteSaver(tmp_path / "t.db")
    inner = StateGraph(Count).add_node("x", lambda s: {"v": s["v"] + 1}).add_edge(START, "x")
    sub = inner.compile(checkpointer=saver)

    def outer_sync(state: Count, config: RunnableConfig) -> dict[str, Any]:
        return sub.invoke(state, config)

    async def outer_async(state: Count, config: RunnableConfig) -> dict[str, Any]:
        return await sub.ainvoke(state, config)

    outer = outer_sync if style == "sync" else outer_async
    graph = (
        StateGraph(Count)
        .add_node("o", outer)
        .add_node("p", lambda s: {"v": s["v"] * 10})
        .add_edge(START, "o")
        .add_edge("o", "p")
        .compile(checkpointer=saver)
    )
    assert graph.invoke({"v": 1}, {"configurable": {"thread_id": "nest"}}) == {"v": 20}
    if kind == "sqlite":
        saver.close()


def test_a_store_made_before_leases_gains_the_lease_table_as_migration_7(tmp_path: Path) -> None:
    """A SQLite file at schema version 6 (its index migrations 5 and 6 applied, no lease table)
    is migrated in place: migration 7 adds thread_leases, its threads run and are held."""
    import sqlite3

    from durable_debug.checkpoint.sqlite import MIGRATIONS

    path = tmp_path / "v6.db"
    with sqlite3.connect(path) as conn:
        for version, sql in enumerate(MIGRATIONS[:7]):
            conn.execute(sql)
            conn.execute("INSERT INTO checkpoint_migrations (v) VALUES (?)", (version,))
    assert "thread_leases" in MIGRATIONS[7]

    async def run() -> None:
        entered, gate = asyncio.Event(), asyncio.Event()
        async with SqliteSaver(path) as saver:
            graph = gated_graph(saver, entered, gate)
            config = {"configurable": {"thread_id": "old"}}
            await graph.ainvoke({"question": "q", "answer": ""}, config)
            first = asyncio.ensure_future(graph.ainvoke(Command(resume="yes"), config))
            await entered.wait()
            with pytest.raises(ThreadBusyError, match="thread 'old' is busy"):
                await graph.ainvoke(Command(resume="no"), config)
            gate.set()
            assert (await first)["answer"] == "yes"

    asyncio.run(run())
    with sqlite3.connect(path) as conn:
        versions = [v for (v,) in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
        assert versions == list(range(len(MIGRATIONS)))
        assert conn.execute("SELECT count(*) FROM thread_leases").fetchone() == (0,)  # given back


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_subgraph_shares_its_parents_lease_and_a_second_writer_is_refused(
    kind: str, tmp_path: Path
) -> None:
    """A compiled graph used as a node saves through its parent's saver on the same thread:
    it runs under the parent's lease (not refused by it), while another run of the thread is
    refused until the parent's run ends."""
    entered, gate = asyncio.Event(), asyncio.Event()

    async def inner(state: Ask) -> dict[str, Any]:
        entered.set()
        await gate.wait()
        return {"answer": "from the subgraph"}

    child = StateGraph(Ask).add_node("inner", inner).add_edge(START, "inner").compile()
    saver: Any = MemorySaver() if kind == "memory" else SqliteSaver(tmp_path / "sub.db")
    parent = StateGraph(Ask).add_node("child", child).add_edge(START, "child")
    graph = parent.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "nested"}}
    run = asyncio.ensure_future(graph.ainvoke({"question": "q", "answer": ""}, config))
    await entered.wait()  # the subgraph's node runs: the parent's run holds the thread
    with pytest.raises(ThreadBusyError, match="thread 'nested' is busy"):
        await graph.aupdate_state(config, {"answer": "meanwhile"})
    gate.set()
    assert (await run)["answer"] == "from the subgraph"
    assert (await graph.aget_state(config)).values["answer"] == "from the subgraph"
    if kind == "sqlite":
        await saver.aclose()


@pytest.mark.postgres
async def test_a_busy_postgres_lease_names_its_holder_and_the_servers_time(
    postgres_db: str,
) -> None:
    """A run's lease statements go straight through libpq on PostgreSQL: the refusal still
    names the holder and the instant the server recorded, to the microsecond."""
    import psycopg

    from durable_debug import PostgresSaver
    from durable_debug.checkpoint.lease import thread_lease

    async with PostgresSaver(postgres_db) as holder, PostgresSaver(postgres_db) as rival:
        await holder.aget_tuple({"configurable": {"thread_id": "warm"}})  # both sides open
        await rival.aget_tuple({"configurable": {"thread_id": "warm"}})
        async with thread_lease(holder, "t-1"):
            with pytest.raises(ThreadBusyError) as refused:
                async with thread_lease(rival, "t-1"):
                    pass
            with psycopg.connect(postgres_db) as conn:
                row = conn.execute(
                    "SELECT holder, since FROM thread_leases WHERE thread_id = 't-1'"
                ).fetchone()
        assert row is not None
        assert (refused.value.holder, refused.value.since) == (row[0], row[1])
        assert refused.value.since.utcoffset() is not None
        async with thread_lease(rival, "t-1"):  # given back: free at once
            pass


@pytest.mark.postgres
async def test_a_postgres_run_gives_its_lease_back_to_any_saver_of_the_process(
    postgres_db: str,
) -> None:
    """On PostgreSQL a run sends its lease's give-back without waiting for the answer; the
    next run on the thread — through the same saver, or through another saver on the same
    database in this process — still finds the thread free at once, every time."""
    from durable_debug import PostgresSaver

    async with PostgresSaver(postgres_db) as first, PostgresSaver(postgres_db) as second:
        graphs = [
            StateGraph(Ask)
            .add_node("ask", lambda s: {"answer": s["question"] + "!"})
            .add_edge(START, "ask")
            .compile(checkpointer=saver)
            for saver in (first, second, first)
        ]
        for i in range(30):
            config = {"configurable": {"thread_id": f"t-{i}"}}
            for n, graph in enumerate(graphs):
                out = await graph.ainvoke({"question": f"q{n}", "answer": ""}, config)
                assert out["answer"] == f"q{n}!"
        assert await first.alist_abandoned_threads() == []
        assert await second.alist_abandoned_threads() == []
