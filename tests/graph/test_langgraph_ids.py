"""Task ids and interrupt ids are LangGraph's: on the same checkpoint both engines give the same
ids, so our engine resumes what LangGraph's engine saved (a simple graph, an interrupt inside a
subgraph, Send fan-out, an ``@entrypoint``/``@task`` workflow), LangGraph resumes what ours
saved, the debugger's file reader shows LangGraph's ids, and threads our older versions saved
(writes under BLAKE2b task ids) still resume.

Each scenario is written once for either library (its imports passed in) and run on real
SQLite files: LangGraph's ``SqliteSaver`` and our own ``SqliteSaver``.
"""

from __future__ import annotations

import asyncio
import operator
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any

import langgraph.func as lg_func
import langgraph.graph as lg_graph
import langgraph.types as lg_types
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as LangGraphSqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.pregel._algo import task_path_str as lg_task_path_str
from typing_extensions import TypedDict

import durable_debug as dd
import durable_debug.func as dd_func
from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import INTERRUPT
from durable_debug.checkpoint.langgraph_sqlite import LangGraphSqliteReader
from durable_debug.checkpoint.names import PUSH
from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.graph.algo import prepare_tasks, restore_channels
from durable_debug.graph.ids import legacy_interrupt_id, legacy_task_id, path_key
from durable_debug.inspect.listing import athread_listing
from durable_debug.inspect.stored import SaverView

LIBS = {"langgraph": (lg_graph, lg_types, lg_func), "durable_debug": (dd, dd, dd_func)}
CFG = {"configurable": {"thread_id": "t"}}


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def simple(graph: Any, types: Any, func: Any, runs: Counter[str], saver: Any) -> Any:
    """START → a → (b, c side by side): b asks, c finishes in the step b pauses in."""

    def a(s: State) -> dict[str, Any]:
        runs["a"] += 1
        return {"log": ["a"]}

    def b(s: State) -> dict[str, Any]:
        runs["b"] += 1
        return {"log": [f"b:{types.interrupt('b?')}"]}

    def c(s: State) -> dict[str, Any]:
        runs["c"] += 1
        return {"log": ["c"]}

    g = graph.StateGraph(State)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_node("c", c)
    g.add_edge(graph.START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    return g.compile(checkpointer=saver)


def subgraph(graph: Any, types: Any, func: Any, runs: Counter[str], saver: Any) -> Any:
    """A parent whose node ``sub`` is a compiled subgraph that asks twice."""

    def inner(s: State) -> dict[str, Any]:
        runs["inner"] += 1
        first = types.interrupt("first?")
        return {"log": [f"inner:{first}:{types.interrupt('second?')}"]}

    sub = graph.StateGraph(State)
    sub.add_node("inner", inner)
    sub.add_edge(graph.START, "inner")
    parent = graph.StateGraph(State)
    parent.add_node("p", lambda s: {"log": ["p"]})
    parent.add_node("sub", sub.compile())
    parent.add_edge(graph.START, "p")
    parent.add_edge("p", "sub")
    return parent.compile(checkpointer=saver)


def fan_out(graph: Any, types: Any, func: Any, runs: Counter[str], saver: Any) -> Any:
    """Three Sends to ``work``: two ask (side by side), one finishes."""

    def work(s: dict[str, Any]) -> dict[str, Any]:
        name = f"w{s['i']}"
        runs[name] += 1
        if name == "w1":
            return {"log": [name]}
        return {"log": [f"{name}:{types.interrupt(name + '?')}"]}

    g = graph.StateGraph(State)
    g.add_node("work", work)
    g.add_conditional_edges(
        graph.START, lambda s: [types.Send("work", {"i": i}) for i in range(3)], ["work"]
    )
    return g.compile(checkpointer=saver)


def functional(graph: Any, types: Any, func: Any, runs: Counter[str], saver: Any) -> Any:
    """An entrypoint calling two tasks: the first finishes, the second asks."""

    @func.task
    def shout(text: str) -> str:
        runs["shout"] += 1
        return text.upper()

    @func.task
    def ask(question: str) -> str:
        runs["ask"] += 1
        return str(types.interrupt(question))

    @func.entrypoint(checkpointer=saver)
    def main(text: str) -> str:
        loud = shout(text).result()
        return f"{loud}:{ask(loud).result()}"

    return main


SCENARIOS: dict[str, tuple[Callable[..., Any], Any]] = {
    "simple": (simple, {"log": []}),
    "subgraph": (subgraph, {"log": []}),
    "fan_out": (fan_out, {"log": []}),
    "functional": (functional, "hi"),
}


@pytest.fixture
def files(tmp_path: Path) -> Iterator[Callable[[str], sqlite3.Connection]]:
    """Connections to real SQLite files under ``tmp_path``, closed afterwards."""
    conns: list[sqlite3.Connection] = []

    def connect(name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(tmp_path / name, check_same_thread=False)
        conns.append(conn)
        return conn

    yield connect
    for conn in conns:
        conn.close()


def _copy(conn: sqlite3.Connection, connect: Callable[[str], sqlite3.Connection], name: str) -> Any:
    """A second file holding what ``conn``'s file holds (both engines resume their own)."""
    copy = connect(name)
    conn.backup(copy)
    return copy


def _shown(app: Any) -> tuple[Any, ...]:
    """What ``get_state`` shows of the paused thread: each task's id, name and interrupts."""
    state = app.get_state(CFG)
    tasks = [(t.id, t.name, [(i.id, i.value) for i in t.interrupts]) for t in state.tasks]
    return state.next, tasks, [(i.id, i.value) for i in state.interrupts]


def _answers(interrupts: Any, resumes: int) -> Any:
    """A resume map answering every pending interrupt by id (each answer names its question)."""
    return {i.id: f"{i.value}{resumes}" for i in interrupts}


def _resume_to_end(app: Any, types: Any) -> list[Any]:
    """Answer every pending interrupt by id until the run ends; what each run returned."""
    outputs = []
    for resumes in range(5):
        pending = app.get_state(CFG).interrupts
        if not pending:
            break
        out = app.invoke(types.Command(resume=_answers(pending, resumes)), CFG)
        outputs.append(_without_interrupt_objects(out))
    return outputs


def _without_interrupt_objects(out: Any) -> Any:
    """A run's output with its interrupts as ``(id, value)`` (the two libraries' classes)."""
    if isinstance(out, dict) and "__interrupt__" in out:
        return {**out, "__interrupt__": [(i.id, i.value) for i in out["__interrupt__"]]}
    return out


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_our_engine_resumes_what_langgraphs_engine_saved(
    files: Callable[[str], sqlite3.Connection], scenario: str
) -> None:
    make, first_input = SCENARIOS[scenario]
    theirs_runs: Counter[str] = Counter()
    conn = files("langgraph.db")
    theirs = make(*LIBS["langgraph"], theirs_runs, LangGraphSqliteSaver(conn))
    paused = theirs.invoke(first_input, CFG)
    lg_shown = _shown(theirs)

    ours_runs: Counter[str] = Counter()
    ours_conn = _copy(conn, files, "ours.db")
    ours = make(*LIBS["durable_debug"], ours_runs, LangGraphSqliteSaver(ours_conn))
    # The same task ids and interrupt ids on the checkpoint LangGraph saved.
    assert _shown(ours) == lg_shown
    assert sorted(i.id for i in paused["__interrupt__"]) == sorted(i[0] for i in lg_shown[2])

    # Run again without an answer, each engine pauses on the same interrupts it works out.
    again = _without_interrupt_objects(ours.invoke(None, CFG))
    assert again == _without_interrupt_objects(theirs.invoke(None, CFG))
    assert sorted(again["__interrupt__"]) == sorted(lg_shown[2])
    before = Counter(theirs_runs)
    ours_runs.clear()
    lg_outputs = _resume_to_end(theirs, lg_types)
    ours_outputs = _resume_to_end(ours, dd)
    assert ours_outputs == lg_outputs
    assert ours.get_state(CFG).values == theirs.get_state(CFG).values
    # The writes LangGraph saved were found: what finished was not run again.
    assert ours_runs == theirs_runs - before
    finished_before = {"simple": "c", "fan_out": "w1", "functional": "shout"}
    if scenario in finished_before:
        assert ours_runs[finished_before[scenario]] == 0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_langgraph_sees_our_engines_ids_and_resumes_by_them(
    files: Callable[[str], sqlite3.Connection], scenario: str
) -> None:
    make, first_input = SCENARIOS[scenario]
    conn = files("ours.db")
    ours = make(*LIBS["durable_debug"], Counter(), LangGraphSqliteSaver(conn))
    paused = ours.invoke(first_input, CFG)
    shown = _shown(ours)
    assert sorted(i.id for i in paused["__interrupt__"]) == sorted(i[0] for i in shown[2])
    theirs_runs: Counter[str] = Counter()
    theirs = make(*LIBS["langgraph"], theirs_runs, LangGraphSqliteSaver(conn))
    assert _shown(theirs) == shown
    ours_again = make(
        *LIBS["durable_debug"], Counter(), LangGraphSqliteSaver(_copy(conn, files, "copy.db"))
    )
    assert _resume_to_end(theirs, lg_types) == _resume_to_end(ours_again, dd)
    assert theirs.get_state(CFG).values == ours_again.get_state(CFG).values


def test_async_runs_on_langgraphs_async_sqlite_saver_resume_each_other(tmp_path: Path) -> None:
    """Send fan-out paused by LangGraph's ``ainvoke`` on ``AsyncSqliteSaver``: our ``ainvoke``
    answers it by LangGraph's ids on one copy of the file, LangGraph on another."""

    async def pause(path: Path) -> tuple[Any, ...]:
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            app = fan_out(*LIBS["langgraph"], Counter(), saver)
            await app.ainvoke({"log": []}, CFG)
            state = await app.aget_state(CFG)
            return tuple((t.id, [i.id for i in t.interrupts]) for t in state.tasks)

    async def resume(lib: str, path: Path, shown: tuple[Any, ...]) -> tuple[Any, ...]:
        graph, types, func = LIBS[lib]
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            runs: Counter[str] = Counter()
            app = fan_out(graph, types, func, runs, saver)
            state = await app.aget_state(CFG)
            assert tuple((t.id, [i.id for i in t.interrupts]) for t in state.tasks) == shown
            answers = {i.id: f"{i.value}!" for i in state.interrupts}
            done = await app.ainvoke(types.Command(resume=answers), CFG)
            return done, runs

    async def scenario() -> None:
        first = tmp_path / "langgraph.db"
        shown = await pause(first)
        copy = tmp_path / "ours.db"
        with closing(sqlite3.connect(first)) as src, closing(sqlite3.connect(copy)) as dst:
            src.backup(dst)
        theirs = await resume("langgraph", first, shown)
        ours = await resume("durable_debug", copy, shown)
        assert ours == theirs
        assert ours[1]["w1"] == 0  # its saved writes were found

    asyncio.run(scenario())


def test_the_debuggers_file_reader_shows_langgraphs_ids(
    files: Callable[[str], sqlite3.Connection], tmp_path: Path
) -> None:
    conn = files("langgraph.db")
    theirs = simple(*LIBS["langgraph"], Counter(), LangGraphSqliteSaver(conn))
    theirs.invoke({"log": []}, CFG)
    view = SaverView(LangGraphSqliteReader(tmp_path / "langgraph.db"))
    assert _shown(view) == _shown(theirs)


# Threads our older versions saved: pending writes keyed by BLAKE2b task ids.


def _as_older_version_saved(path: Path) -> None:
    """Rewrite the latest checkpoint's pending writes in our SQLite file as durable_debug's
    older versions keyed them: each task under its BLAKE2b id, its interrupts' ids too."""
    saver = SqliteSaver(path)
    saved = saver.get_tuple(CFG)
    assert saved is not None and saved.pending_writes
    app = simple(dd, dd, dd_func, Counter(), saver)
    step = int(saved.metadata["step"])
    tasks = prepare_tasks(app, saved.checkpoint, restore_channels(app, saved.checkpoint), step)
    older = {
        t.id: legacy_task_id(saved.checkpoint["id"], "", step + 1, t.name, t.path) for t in tasks
    }
    by_task: dict[str, list[tuple[str, Any]]] = {}
    for tid, channel, value in saved.pending_writes:
        if channel == INTERRUPT:
            value = [{**i, "id": legacy_interrupt_id(older[tid], 0)} for i in value]
        by_task.setdefault(older.get(tid, tid), []).append((channel, value))
    checkpoint_id = saved.checkpoint["id"]
    saver.close()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DELETE FROM checkpoint_writes WHERE checkpoint_id = ?", (checkpoint_id,))
    saver = SqliteSaver(path)
    for tid, writes in by_task.items():
        saver.put_writes(saved.config, writes, tid)
    saver.close()


def test_a_thread_an_older_version_saved_resumes(tmp_path: Path) -> None:
    path = tmp_path / "older.db"
    runs: Counter[str] = Counter()
    app = simple(dd, dd, dd_func, runs, SqliteSaver(path))
    app.invoke({"log": []}, CFG)
    expected_done = app.invoke(dd.Command(resume="yes"), CFG)
    # The same pause again, saved as an older version saved it.
    path.unlink()
    runs.clear()
    app = simple(dd, dd, dd_func, runs, SqliteSaver(path))
    app.invoke({"log": []}, CFG)
    shown_before = _shown(app)
    app.checkpointer.close()
    _as_older_version_saved(path)

    runs.clear()
    app = simple(dd, dd, dd_func, runs, SqliteSaver(path))
    next_, tasks, interrupts = _shown(app)
    assert next_ == shown_before[0] == ("b",)  # c's saved writes still count as done
    assert [t[:2] for t in tasks] == [t[:2] for t in shown_before[1]]
    ((asked, question),) = interrupts
    assert question == "b?" and asked != shown_before[2][0][0]  # the older id, as saved
    # The debugger reads the store the same way, without the graph.
    assert _shown(SaverView(app.checkpointer)) == _shown(app)
    (row,) = run_sync(athread_listing(app.checkpointer))
    assert row.status == "paused on 1 interrupt(s) at b"
    done = app.invoke(dd.Command(resume={asked: "yes"}), CFG)
    assert done == expected_done
    assert runs == Counter({"b": 1})  # c's saved writes were reused


def test_a_workflow_an_older_version_saved_resumes(tmp_path: Path) -> None:
    """An ``@entrypoint`` paused in its second ``@task`` call, saved with the older ids: the
    entrypoint's task, the finished call and the interrupt all keyed as they were."""
    path = tmp_path / "older.db"
    runs: Counter[str] = Counter()
    app = functional(dd, dd, dd_func, runs, SqliteSaver(path))
    app.invoke("hi", CFG)
    saver = app.checkpointer
    saved = saver.get_tuple(CFG)
    checkpoint_id, step = saved.checkpoint["id"], int(saved.metadata["step"]) + 1
    (main,) = app.get_state(CFG).tasks
    old_main = legacy_task_id(checkpoint_id, "", step, "main", main.path)
    old_call = [
        legacy_task_id(checkpoint_id, "", step, n, (PUSH, old_main, i))
        for i, n in enumerate(["shout", "ask"])
    ]
    old_asked = legacy_interrupt_id(old_call[1], 0)
    writes = {}
    for tid, channel, value in saved.pending_writes:
        if tid == main.id:
            value = [{**i, "id": old_asked} for i in value] if channel == INTERRUPT else value
            writes.setdefault(old_main, []).append((channel, value))
        else:  # the finished call to shout
            writes.setdefault(old_call[0], []).append((channel, value))
    saver.close()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DELETE FROM checkpoint_writes WHERE checkpoint_id = ?", (checkpoint_id,))
    saver = SqliteSaver(path)
    for tid, task_writes in writes.items():
        saver.put_writes(saved.config, task_writes, tid)

    runs.clear()
    app = functional(dd, dd, dd_func, runs, saver)
    assert [i.id for i in app.get_state(CFG).interrupts] == [old_asked]
    assert app.invoke(dd.Command(resume={old_asked: "yes"}), CFG) == "HI:yes"
    assert runs == Counter({"ask": 1})  # shout's saved result was reused
    saver.close()


def test_ids_are_langgraphs_for_namespaces_and_paths() -> None:
    assert dd.Interrupt.from_ns("v", "a:1|b:2").id == lg_types.Interrupt.from_ns("v", "a:1|b:2").id
    assert dd.Interrupt("v", ns=["a:1", "b:2"]).id == lg_types.Interrupt("v", ns=["a:1", "b:2"]).id
    for path in [("__pregel_pull", "node"), ("__pregel_push", ("__pregel_pull", "m"), 2, True)]:
        assert path_key(path) == lg_task_path_str(path)
