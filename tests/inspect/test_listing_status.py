"""The thread list works out each status from the listing query alone (no snapshot): it must
say what reading every thread in full says, on every shape a run can leave its newest
checkpoint in — paused, failed, Send fan-outs half done, joins half heard, parallel interrupts,
``update_state``, a task that saved a ``once()`` result then failed, a run-input write — in
durable_debug's SQLite layout and in the file LangGraph's ``SqliteSaver`` writes (both of its
decoding paths: a small checkpoint decoded whole, a large one walked)."""

from __future__ import annotations

import asyncio
import contextlib
import operator
import re
import sqlite3
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

import durable_debug
from durable_debug import SqliteSaver
from durable_debug.checkpoint import langgraph_serde
from durable_debug.checkpoint.langgraph_sqlite import LangGraphSqliteReader
from durable_debug.inspect.listing import ThreadRow, _athread_by_thread, athread_listing


class State(TypedDict, total=False):
    """State of the scenarios' graphs: what to do, and what was done."""

    mode: str
    log: Annotated[list[str], operator.add]
    ballast: str


def _lib(name: str) -> Any:
    """durable_debug's engine, or LangGraph's, behind the same names."""
    if name == "durable_debug":
        return durable_debug
    import langgraph.graph
    import langgraph.types

    class LangGraph:
        StateGraph = langgraph.graph.StateGraph
        START = langgraph.graph.START
        END = langgraph.graph.END
        Send = langgraph.types.Send
        Command = langgraph.types.Command
        interrupt = staticmethod(langgraph.types.interrupt)

    return LangGraph


def _chain(lib: Any, saver: Any) -> Any:
    """a → b; b asks a human ("pause") or fails ("fail")."""

    def a(state: State) -> dict[str, Any]:
        return {"log": ["a"]}

    def b(state: State) -> dict[str, Any]:
        if state["mode"] == "fail":
            raise RuntimeError("b broke")
        if state["mode"] == "pause":
            return {"log": [str(lib.interrupt("go on?"))]}
        return {"log": ["b"]}

    return (
        lib.StateGraph(State)
        .add_node("a", a)
        .add_node("b", b)
        .add_edge(lib.START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


def _fan_out(lib: Any, saver: Any) -> Any:
    """split → three Send tasks "item"; item 1 asks a human or fails, the others finish."""

    def split(state: State) -> dict[str, Any]:
        return {"log": ["split"]}

    def spread(state: State) -> list[Any]:
        return [lib.Send("item", {"mode": state["mode"], "i": i}) for i in range(3)]

    def item(task: dict[str, Any]) -> dict[str, Any]:
        if task["i"] == 1 and task["mode"] == "fail":
            raise RuntimeError("item 1 broke")
        if task["i"] == 1 and task["mode"] == "pause":
            return {"log": [str(lib.interrupt("item 1?"))]}
        return {"log": [f"item {task['i']}"]}

    return (
        lib.StateGraph(State)
        .add_node("split", split)
        .add_node("item", item)
        .add_edge(lib.START, "split")
        .add_conditional_edges("split", spread, ["item"])
        .add_edge("item", lib.END)
        .compile(checkpointer=saver)
    )


def _join(lib: Any, saver: Any) -> Any:
    """left and right in parallel, then "both" once both ran; right fails ("fail"), or both
    ask a human ("pause")."""

    def left(state: State) -> dict[str, Any]:
        if state["mode"] == "pause":
            return {"log": [str(lib.interrupt("left?"))]}
        return {"log": ["left"]}

    def right(state: State) -> dict[str, Any]:
        if state["mode"] == "fail":
            raise RuntimeError("right broke")
        if state["mode"] == "pause":
            return {"log": [str(lib.interrupt("right?"))]}
        return {"log": ["right"]}

    def both(state: State) -> dict[str, Any]:
        return {"log": ["both"]}

    return (
        lib.StateGraph(State)
        .add_node("left", left)
        .add_node("right", right)
        .add_node("both", both)
        .add_edge(lib.START, "left")
        .add_edge(lib.START, "right")
        .add_edge(["left", "right"], "both")
        .compile(checkpointer=saver)
    )


def _run_scenarios(lib_name: str, saver: Any) -> None:
    lib = _lib(lib_name)
    for shape in (_chain, _fan_out, _join):
        for mode in ("done", "pause", "fail"):
            graph = shape(lib, saver)
            cfg = {"configurable": {"thread_id": f"{shape.__name__[1:]}-{mode}"}}
            with contextlib.suppress(RuntimeError):
                graph.invoke({"mode": mode, "ballast": ""}, cfg)
    # Resumed past its interrupt: the finished task's interrupt is no longer shown.
    graph = _chain(lib, saver)
    cfg = {"configurable": {"thread_id": "chain-pause"}}
    graph.invoke(lib.Command(resume="yes"), cfg)
    # A human's edit as node "a": "b" runs next, nothing ran yet.
    cfg = {"configurable": {"thread_id": "chain-edited"}}
    with contextlib.suppress(RuntimeError):
        graph.invoke({"mode": "fail", "ballast": ""}, cfg)
    graph.update_state(cfg, {"log": ["edited"]}, as_node="a")
    # A state over LangGraph's whole-decoding size: its checkpoint is walked, not decoded.
    cfg = {"configurable": {"thread_id": "chain-big"}}
    with contextlib.suppress(RuntimeError):
        graph.invoke({"mode": "fail", "ballast": "x" * 10_000}, cfg)


EXPECTED = {
    "chain-done": "done",
    "chain-pause": "done",
    "chain-fail": "failed at b",
    "chain-edited": "next b",
    "chain-big": "failed at b",
    "fan_out-done": "done",
    "fan_out-pause": r"paused on 1 interrupt\(s\) at item",
    # A failing task may cancel siblings that had not saved yet (LangGraph does, depending
    # on timing): those are still waiting too.
    "fan_out-fail": "failed at item(, item){0,2}",
    "join-done": "done",
    "join-pause": r"paused on 2 interrupt\(s\) at left, right",
    "join-fail": "failed at (left, )?right",
}
"""What both engines leave each thread as, as patterns (the listing must agree with reading
it, which :func:`_compare` checks exactly)."""


def _check_statuses(rows: list[ThreadRow]) -> None:
    statuses = {row.thread_id: row.status for row in rows}
    assert sorted(statuses) == sorted(EXPECTED)
    for thread, pattern in EXPECTED.items():
        assert re.fullmatch(pattern, statuses[thread]), (thread, statuses[thread])


async def _compare(saver: Any) -> list[ThreadRow]:
    fast = await athread_listing(saver)
    slow = await _athread_by_thread(saver)
    assert fast == sorted(slow)
    return fast


async def test_own_layout_statuses_match_reading_each_thread(tmp_path: Path) -> None:
    with SqliteSaver(str(tmp_path / "own.db")) as saver:
        _run_scenarios("durable_debug", saver)
        rows = await _compare(saver)
    _check_statuses(rows)


@pytest.mark.parametrize("walk", [False, True], ids=["decoded-whole", "walked"])
async def test_langgraph_layout_statuses_match_reading_each_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walk: bool
) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

    db = tmp_path / "lg.db"
    conn = sqlite3.connect(db, check_same_thread=False)
    _run_scenarios("langgraph", LangGraphSqliteSaver(conn))
    conn.close()
    if walk:  # every checkpoint walked, as a large one is
        monkeypatch.setattr(langgraph_serde, "WHOLE_CHECKPOINT_BYTES", 0)
    reader = LangGraphSqliteReader(db)
    try:
        rows = await _compare(reader)
    finally:
        reader.close()
    _check_statuses(rows)


async def test_a_task_that_saved_a_once_result_then_failed_is_listed_failed(
    tmp_path: Path,
) -> None:
    """The ``__once__`` write's value is not loaded by the listing (it is the effect's
    result, not a status): the task still reads as failed, not as broken."""

    def charge(state: State) -> dict[str, Any]:
        durable_debug.once(lambda: "charged")
        raise RuntimeError("after charging")

    with SqliteSaver(str(tmp_path / "own.db")) as saver:
        graph = (
            durable_debug.StateGraph(State)
            .add_node("charge", charge)
            .add_edge(durable_debug.START, "charge")
            .compile(checkpointer=saver)
        )
        with contextlib.suppress(RuntimeError):
            graph.invoke({"mode": "x"}, {"configurable": {"thread_id": "pay"}})
        rows = await _compare(saver)
    assert [(r.thread_id, r.status) for r in rows] == [("pay", "failed at charge")]


async def test_a_newest_checkpoint_with_a_run_input_write_is_read_in_full(
    tmp_path: Path,
) -> None:
    """A run cut off after its START task saved its writes on the input checkpoint (the
    later checkpoints removed, as a crash before the next save leaves it). Those writes name
    the input's keys, which only the whole checkpoint holds, so such a thread is read in
    full: intact, it says what reading it says; naming a key the input lacks, it is broken
    for the same reason reading it gives."""
    import msgpack

    db = tmp_path / "own.db"
    with SqliteSaver(str(db)) as saver:
        graph = _chain(durable_debug, saver)
        for thread in ("cut", "cut-bad", "whole"):
            graph.invoke({"mode": "done"}, {"configurable": {"thread_id": thread}})
    with sqlite3.connect(db) as conn:
        for thread in ("cut", "cut-bad"):
            first = conn.execute(
                "SELECT min(checkpoint_id) FROM checkpoints WHERE thread_id = ?", (thread,)
            ).fetchone()[0]
            conn.execute(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id > ?",
                (thread, first),
            )
        changed = conn.execute(
            "UPDATE checkpoint_writes SET type = 'msgpack', blob = ? "
            "WHERE thread_id = 'cut-bad' AND channel = '__input_keys__'",
            (msgpack.packb(["nope"]),),
        ).rowcount
    assert changed == 1  # the scenario is what the test says it is
    with SqliteSaver(str(db)) as saver:
        rows = await athread_listing(saver)
        slow = {row.thread_id: row for row in await _athread_by_thread(saver)}
    assert [rows[0], rows[2]] == [slow["cut"], slow["whole"]]
    # The START task finished (its writes are saved) and nothing else is scheduled yet.
    assert [(r.thread_id, r.checkpoints, r.step, r.status) for r in (rows[0], rows[2])] == [
        ("cut", 1, -1, "done"),
        ("whole", 4, 2, "done"),
    ]
    assert rows[1].thread_id == "cut-bad" and rows[1].broken
    assert "take key 'nope' from the run input" in rows[1].status
    assert rows[1].status == slow["cut-bad"].status


@pytest.mark.parametrize("walk", [False, True], ids=["decoded-whole", "walked"])
@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"\x91" * 200_000 + b"\xc0", "StackError"),  # nested deeper than msgpack's stack
        # declares 4 billion items: refused (decoded whole) or found missing (walked)
        (b"\xdd\xff\xff\xff\xff", "exceeds max_array_len|OutOfData"),
    ],
    ids=["deep", "huge"],
)
def test_a_hostile_state_value_in_a_langgraph_checkpoint_is_an_error_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, walk: bool, bad: bytes, reason: str
) -> None:
    """The listing never decodes the state, but it must still step over it: a value nested
    too deep or declaring more items than the limits is a clear error, on both paths."""
    import msgpack

    from durable_debug.checkpoint.langgraph_serde import LangGraphLoader
    from durable_debug.checkpoint.names import is_trigger_channel, is_valued_trigger
    from durable_debug.checkpoint.serde import CorruptPayloadError

    if walk:
        monkeypatch.setattr(langgraph_serde, "WHOLE_CHECKPOINT_BYTES", 0)
    blob = (
        b"\x81"
        + msgpack.packb("channel_values")
        + b"\x82"
        + msgpack.packb("branch:to:a")
        + msgpack.packb(None)
        + msgpack.packb("state")
        + bad
    )
    with pytest.raises(CorruptPayloadError, match=f"not a LangGraph msgpack value.*({reason})"):
        LangGraphLoader().checkpoint_parts(blob, is_trigger_channel, is_valued_trigger)


@pytest.mark.parametrize("layout", ["durable_debug", "langgraph"])
async def test_a_json_text_sqlite_cannot_parse_marks_its_thread_not_the_listing(
    tmp_path: Path, layout: str
) -> None:
    """SQLite fails a whole query on one malformed JSON text: the listing then reads thread
    by thread, and only the damaged thread is marked broken, with where and why."""
    db = tmp_path / "store.db"
    if layout == "durable_debug":
        with SqliteSaver(str(db)) as saver:
            _run_scenarios("durable_debug", saver)
        column = "checkpoint"
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver

        conn = sqlite3.connect(db, check_same_thread=False)
        _run_scenarios("langgraph", LangGraphSqliteSaver(conn))
        conn.close()
        column = "metadata"
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            f"UPDATE checkpoints SET {column} = '{{not json' WHERE thread_id = 'chain-done' "
            "AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints "
            "WHERE thread_id = 'chain-done')"
        )
    reader: Any = SqliteSaver(str(db)) if layout == "durable_debug" else LangGraphSqliteReader(db)
    try:
        rows = await athread_listing(reader)
    finally:
        reader.close()
    broken = [row for row in rows if row.broken]
    assert [row.thread_id for row in broken] == ["chain-done"]
    assert "thread 'chain-done'" in broken[0].status and "JSON" in broken[0].status
    assert len(rows) == len(EXPECTED)


def test_the_listing_reads_every_write_channel_as_a_snapshot_does() -> None:
    """``task_states`` (the listing's cut-down reading of pending writes) says, for every
    write channel the engine names and an ordinary state channel, in every pair, what
    ``read_pending_writes`` (the snapshot's reading) says: finished, error, interrupts."""
    import itertools

    from durable_debug.checkpoint import names
    from durable_debug.checkpoint.base import NULL_TASK_ID, CheckpointTuple
    from durable_debug.graph.algo import read_pending_writes
    from durable_debug.inspect.listing import task_states

    values = {
        names.ERROR: "RuntimeError('x')",
        names.INTERRUPT: [{"id": "i1", "value": "?"}, {"id": "i2", "value": "!"}],
        names.RESUME: ["yes"],
        names.FAILURES: [{"error": "x"}],
        names.ONCE: ["charged"],
        names.ERROR_SOURCE: "failing_node",
        names.NO_WRITES: None,
        names.RETURN: 2,
        names.PREVIOUS: 1,
        "state_key": 1,
        names.branch_channel("b"): None,
    }
    special = {v for k, v in vars(names).items() if k.isupper() and isinstance(v, str)}
    # Not task writes: nodes, as_node values, a path element, keys of values; and the START
    # task's marker, whose snapshot reading needs the checkpoint's input, which the tuples here
    # do not carry.
    left_out = {names.START, names.END, names.COPY, names.INPUT, names.UPDATE_PATH}
    left_out |= {names.TYPE_KEY, names.OVERWRITE, names.INPUT_KEYS}
    left_out.add(names.MESSAGES_PROTOCOL)  # a configurable key, not a channel
    left_out.add(names.DEBUG_METADATA_KEY)  # a metadata key, not a channel
    assert {c for c in special if c.startswith("__") and c.endswith("__")} <= set(values) | (
        left_out
    ), "a write channel the engine names is missing from this test"
    for first, second in itertools.product(values, repeat=2):
        writes = [
            ("t", first, values[first]),
            ("t", second, values[second]),
            ("u", second, values[second]),
            (NULL_TASK_ID, "state_key", 2),
        ]
        saved = CheckpointTuple({}, {"channel_values": {}}, {}, None, writes)  # type: ignore[typeddict-item]
        expected = {
            task: (record.finished, bool(record.error), len(record.interrupts))
            for task, record in read_pending_writes(saved)[0].items()
        }
        listed = task_states(writes)
        assert listed is not None
        got = {task: (s.finished, bool(s.error), s.interrupts) for task, s in listed.items()}
        assert got == expected, (first, second)


def _with_subgraph(lib: Any, saver: Any) -> Any:
    """outer: a → inner (a compiled subgraph: b, which asks a human in "pause" mode)."""

    def a(state: State) -> dict[str, Any]:
        return {"log": ["a"]}

    def b(state: State) -> dict[str, Any]:
        if state["mode"] == "pause":
            return {"log": [str(lib.interrupt("go on?"))]}
        return {"log": ["b"]}

    inner = lib.StateGraph(State).add_node("b", b).add_edge(lib.START, "b").compile()
    return (
        lib.StateGraph(State)
        .add_node("a", a)
        .add_node("inner", inner)
        .add_edge(lib.START, "a")
        .add_edge("a", "inner")
        .compile(checkpointer=saver)
    )


async def test_subgraph_threads_and_damaged_rows_in_one_listing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Subgraph namespaces do not count as the thread's checkpoints nor change its status; a
    damaged newest checkpoint among sound ones (versions_seen that is not an object, an
    interrupt write that is not a list) marks only its own thread broken, and the command
    says so with exit 2."""
    from durable_debug.cli import main

    db = tmp_path / "own.db"
    with SqliteSaver(str(db)) as saver:
        _run_scenarios("durable_debug", saver)
        for mode in ("done", "pause"):
            cfg = {"configurable": {"thread_id": f"sub-{mode}"}}
            _with_subgraph(durable_debug, saver).invoke({"mode": mode, "ballast": ""}, cfg)
        rows = await _compare(saver)
    statuses = {row.thread_id: (row.checkpoints, row.status) for row in rows}
    assert statuses["sub-done"][1] == "done"
    assert statuses["sub-pause"][1] == "paused on 1 interrupt(s) at inner"
    with sqlite3.connect(db) as conn:
        nested = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = 'sub-pause' AND checkpoint_ns != ''"
        ).fetchone()[0]
        top = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = 'sub-pause' AND checkpoint_ns = ''"
        ).fetchone()[0]
        assert nested > 0 and statuses["sub-pause"][0] == top
        newest = (
            "checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints "
            "WHERE thread_id = {0!r} AND checkpoint_ns = '') AND thread_id = {0!r}"
        )
        conn.execute(
            "UPDATE checkpoints SET checkpoint = json_set(checkpoint, '$.versions_seen', "
            f"'1],[2') WHERE {newest.format('chain-fail')}"
        )
        conn.execute(
            "UPDATE checkpoint_writes SET blob = x'a3616263' WHERE channel = '__interrupt__' "
            f"AND {newest.format('join-pause')}"
        )
    with SqliteSaver(str(db)) as saver:
        after = await athread_listing(saver)
    broken = {row.thread_id: row.status for row in after if row.broken}
    assert sorted(broken) == ["chain-fail", "join-pause"]
    assert "thread 'chain-fail'" in broken["chain-fail"]
    assert "thread 'join-pause'" in broken["join-pause"]
    assert "__interrupt__" in broken["join-pause"]
    sound = {row.thread_id: (row.checkpoints, row.status) for row in after if not row.broken}
    assert sound == {t: s for t, s in statuses.items() if t not in broken}
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["inspect", str(db)]) == 2  # its own event loop
    out, err = capsys.readouterr()
    assert "2 of 13 threads could not be read" in err
    shown = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "broken: " in shown["chain-fail"] and "broken: " in shown["join-pause"]
    assert shown["sub-pause"].endswith("paused on 1 interrupt(s) at inner")
