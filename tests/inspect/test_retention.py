"""Sweeping and retention: stuck interrupts get a policy; prune keeps the last N per branch,
fork points and heads, and every kept checkpoint still reassembles exactly."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from durable_debug import (
    END,
    START,
    Command,
    MemorySaver,
    SqliteSaver,
    StateGraph,
    ThreadBusyError,
    interrupt,
)
from durable_debug.checkpoint.lease import thread_lease
from durable_debug.cli import main
from durable_debug.inspect import health
from durable_debug.inspect.retention import (
    adelete_thread,
    aprune,
    asweep,
    delete_thread,
    kept_checkpoints,
    prune,
    sweep,
)


class S(TypedDict, total=False):
    n: int
    pad: str
    answer: str


def _step(state: S) -> S:
    n = state.get("n", 0) + 1
    return {"n": n, "pad": os.urandom(20_000).hex()}  # a new 40 kB blob every step


def _chain(saver: Any, length: int = 6) -> Any:
    builder = StateGraph(S)
    names = [f"s{i}" for i in range(length)]
    for name in names:
        builder.add_node(name, _step)
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=saver)


def _ask(state: S) -> S:
    return {"answer": interrupt("approve?")}


def _gate(saver: Any) -> Any:
    builder = StateGraph(S)
    builder.add_node("ask", _ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def saver(every_saver: Any) -> Any:
    return every_saver


def _forked_thread(saver: Any) -> tuple[Any, dict[str, Any], str]:
    """A 6-step chain, then a fork from step 2 run to the end: two branches."""
    graph = _chain(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, cfg)
    at = next(s for s in graph.get_state_history(cfg) if s.metadata["step"] == 2)
    graph.invoke(None, graph.update_state(at.config, {"n": 100}))
    return graph, cfg, at.config["configurable"]["checkpoint_id"]


def _states(graph: Any, cfg: Any) -> dict[str, tuple[Any, ...]]:
    return {
        s.config["configurable"]["checkpoint_id"]: (s.values, s.next, s.metadata["step"])
        for s in graph.get_state_history(cfg)
    }


def test_kept_checkpoints_are_the_last_n_per_branch_fork_points_and_heads() -> None:
    parents: dict[str, str | None] = {"a": None, "b": "a", "c": "b", "d": "c", "e": "b", "f": "e"}
    assert kept_checkpoints(parents, 1) == {"b", "d", "f"}
    assert kept_checkpoints(parents, 2) == {"b", "c", "d", "e", "f"}


def test_prune_keeps_every_kept_checkpoint_exact_and_frees_blobs(saver: Any) -> None:
    graph, cfg, fork_point = _forked_thread(saver)
    before = _states(graph, cfg)
    preview = prune(saver, keep_last=2, dry_run=True)
    assert set(preview["action"]) == {"would be deleted"}
    assert _states(graph, cfg) == before  # a dry run changes nothing
    done = prune(saver, keep_last=2)
    assert list(done["checkpoint_id"]) == list(preview["checkpoint_id"])
    assert list(done["bytes"]) == list(preview["bytes"])
    after = _states(graph, cfg)
    gone = set(done["checkpoint_id"])
    assert gone and gone.isdisjoint(after) and set(after) | gone == set(before)
    assert fork_point in after
    assert {cid: before[cid] for cid in after} == after  # every kept one reassembles exactly
    # Each removed step had its own 40 kB blob, so the freed bytes show it.
    assert done["bytes"].sum() > 40_000 * (len(gone) - 2)
    # The graph still runs on from the head.
    assert graph.invoke({"n": 0}, cfg)["n"] == 6


async def test_prune_leaves_a_thread_a_run_holds_or_waits_for_it(saver: Any) -> None:
    """A replay from step 2 (which points at blobs prune would delete) holds its thread:
    prune skips it, naming the holder; prune(wait=...) waits for the run, then prunes what
    the run left, and every kept checkpoint, the replay's included, reassembles exactly."""
    import asyncio
    import socket

    entered, release, block = asyncio.Event(), asyncio.Event(), [False]

    async def step(state: S) -> S:
        if block[0]:
            entered.set()
            await release.wait()
        return _step(state)

    builder = StateGraph(S)
    names = [f"s{i}" for i in range(6)]
    for name in names:
        builder.add_node(name, step)
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    graph = builder.compile(checkpointer=saver)
    cfg, other = {"configurable": {"thread_id": "t"}}, {"configurable": {"thread_id": "u"}}
    await graph.ainvoke({"n": 0}, cfg)
    await graph.ainvoke({"n": 0}, other)
    (at,) = [s async for s in graph.aget_state_history(cfg) if s.metadata["step"] == 2]
    before = {c: v async for c, v in _astates(graph, cfg)}

    block[0] = True
    replay = asyncio.ensure_future(graph.ainvoke(None, at.config))
    await entered.wait()
    skipped = await aprune(saver, keep_last=1)
    holder = f"{socket.gethostname()}:{os.getpid()}"
    rows = skipped[skipped["thread_id"] == "t"]
    assert list(rows["action"]) == [f"skipped: a run holds it ({holder})"]
    assert rows["checkpoint_id"].isna().all() and list(rows["bytes"]) == [0]
    assert set(skipped[skipped["thread_id"] == "u"]["action"]) == {"deleted"}
    held = {c: v async for c, v in _astates(graph, cfg)}
    assert before.items() <= held.items()  # nothing of t went

    waiting = asyncio.ensure_future(aprune(saver, keep_last=1, wait=60))
    for _ in range(20):
        await asyncio.sleep(0)
    assert not waiting.done()
    release.set()
    assert (await replay)["n"] == 6
    done = await waiting
    assert set(done["action"]) == {"deleted"} and set(done["thread_id"]) == {"t"}
    after = {c: v async for c, v in _astates(graph, cfg)}
    # Kept: the fork point (step 2, where the replay branched off) and each branch's head.
    assert at.config["configurable"]["checkpoint_id"] in after and len(after) == 3
    assert {c: held.get(c) for c in after if c in held} == {c: after[c] for c in after if c in held}
    assert [v[0]["n"] for c, v in after.items() if c not in held] == [6]  # the replay's head


async def _astates(graph: Any, cfg: Any) -> Any:
    async for s in graph.aget_state_history(cfg):
        yield s.config["configurable"]["checkpoint_id"], (s.values, s.next, s.metadata["step"])


def test_a_sqlite_file_shrinks_after_prune_and_vacuum(tmp_path: Path) -> None:
    db = tmp_path / "big.db"
    saver = SqliteSaver(str(db))
    graph = _chain(saver, length=12)
    for i in range(3):
        graph.invoke({"n": 0}, {"configurable": {"thread_id": f"t{i}"}})
    saver.close()
    size = db.stat().st_size
    saver = SqliteSaver(str(db))
    prune(saver, keep_last=1)
    saver.close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with sqlite3.connect(db, isolation_level=None) as conn:
        conn.execute("VACUUM")
    conn.close()
    assert db.stat().st_size < size / 4


def test_sweep_fails_deletes_or_escalates_stuck_threads(saver: Any) -> None:
    gate = _gate(saver)
    for name in ("old-1", "old-2", "answered"):
        gate.invoke({"n": 0}, {"configurable": {"thread_id": name}})
    gate.invoke(Command(resume="yes"), {"configurable": {"thread_id": "answered"}})
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)
    week, day = dt.timedelta(days=7), dt.timedelta(days=1)
    assert sweep(saver, older_than=week, policy="delete", now=later).empty

    seen: list[Any] = []
    escalated = sweep(saver, older_than=day, policy="escalate", escalate=seen.append, now=later)
    assert sorted(escalated["thread_id"]) == ["old-1", "old-2"]
    assert sorted(s.thread_id for s in seen) == ["old-1", "old-2"]
    assert seen[0].questions == ("approve?",)

    dry = sweep(saver, older_than=day, policy="fail", dry_run=True, now=later)
    assert set(dry["action"]) == {"would be failed"}
    failed = sweep(saver, older_than=day, policy="fail", now=later)
    assert set(failed["action"]) == {"failed"}
    [task] = gate.get_state({"configurable": {"thread_id": "old-1"}}).tasks
    assert task.error.startswith("InterruptExpired(")
    assert health(saver, sla=day, now=later)["waiting"].empty  # no longer waiting
    assert sweep(saver, older_than=day, policy="delete", now=later).empty
    # A late answer still resumes a failed thread.
    late = {"configurable": {"thread_id": "old-1"}}
    assert gate.invoke(Command(resume="late yes"), late)["answer"] == "late yes"

    delete_thread(saver, "old-2")
    assert sorted(saver.list_threads()) == ["answered", "old-1"]


async def test_sweep_skips_a_thread_a_run_holds_and_delete_thread_waits_for_no_one(
    tmp_path: Path,
) -> None:
    """One writer per thread: sweeping and deleting write to the thread, so they hold its
    lease; a thread someone's run holds right now is left alone, named with its holder."""
    import asyncio
    import socket

    saver = SqliteSaver(str(tmp_path / "store.db"))
    gate = _gate(saver)
    for name in ("held", "free"):
        await gate.ainvoke({"n": 0}, {"configurable": {"thread_id": name}})
    entered, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:  # what a run answering the thread holds while it runs
        async with thread_lease(saver, "held"):
            entered.set()
            await release.wait()

    holder = asyncio.ensure_future(hold())
    await entered.wait()
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)
    swept = await asweep(saver, older_than=dt.timedelta(days=1), policy="delete", now=later)
    with pytest.raises(ThreadBusyError, match="thread 'held' is busy"):
        await adelete_thread(saver, "held")
    release.set()
    await holder
    assert dict(zip(swept["thread_id"], swept["action"], strict=True)) == {
        "held": f"skipped: a run holds it ({socket.gethostname()}:{os.getpid()})",
        "free": "deleted",
    }
    assert await saver.alist_threads() == ["held"]
    await adelete_thread(saver, "held")  # given back: now it goes
    assert await saver.alist_threads() == []
    await saver.aclose()


def test_sweep_refuses_a_bad_policy() -> None:
    with pytest.raises(ValueError, match="use one of fail, delete, escalate"):
        sweep(MemorySaver(), older_than=dt.timedelta(0), policy="drop")
    with pytest.raises(ValueError, match="needs escalate"):
        sweep(MemorySaver(), older_than=dt.timedelta(0), policy="escalate")


def test_the_cli_sweeps_and_prunes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "store.db"
    saver = SqliteSaver(str(db))
    _gate(saver).invoke({"n": 0}, {"configurable": {"thread_id": "stuck"}})
    _chain(saver).invoke({"n": 0}, {"configurable": {"thread_id": "long"}})
    saver.close()
    args = ["sweep", str(db), "--older-than", "0", "--policy", "delete", "--keep-last", "2"]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would be deleted" in out and "stuck" in out and "bytes freed" in out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "deleted" in out
    saver = SqliteSaver(str(db))
    assert saver.list_threads() == ["long"]
    assert len(list(saver.list({"configurable": {"thread_id": "long"}}))) == 2
