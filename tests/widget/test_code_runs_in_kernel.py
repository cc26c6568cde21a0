"""The code the widget shows runs, pasted into a kernel, on the app it was made for.

For each kind of saver (durable_debug's SQLite and PostgreSQL savers, LangGraph's sync and
async SQLite savers, LangGraph's sync PostgreSQL saver) an app pauses at an interrupt; the
widget forks, reruns the fork, resumes the interrupt and starts a new run, and each action's
code is collected. A Jupyter kernel then builds the same app on the same store, and every piece
of code is run there as a cell: it must run without an error and add checkpoints. A sync-only
saver gets sync calls (``app.update_state``, ``app.invoke``), the others ``await app.a…``.
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_timetravel import open_widget, until

SRC = Path(__file__).resolve().parents[2] / "src"
TIMEOUT_S = 300
"""Seconds a cell may take in the kernel: generous, the machine is small and shared."""

# Builds `app` on the store at STORE (a file path or a PostgreSQL URL): the same text runs in
# the test and in the kernel. `await setup()` opens the saver; `done()` closes what it opened.
APP = """\
import operator
from typing import Annotated
from typing_extensions import TypedDict

KIND, STORE = {kind!r}, {store!r}
if KIND.startswith("ours"):
    from durable_debug import START, Command, StateGraph, interrupt
else:
    from langgraph.graph import START, StateGraph
    from langgraph.types import Command, interrupt

class State(TypedDict, total=False):
    topic: str
    notes: Annotated[list, operator.add]
    decision: str

def research(state):
    return {{"notes": [f"notes on {{state['topic']}}"]}}

def review(state):
    return {{"decision": interrupt({{"question": "publish?"}})}}

_closers = []

async def setup():
    global app
    if KIND == "ours-sqlite":
        from durable_debug.checkpoint.sqlite import SqliteSaver
        saver = SqliteSaver(STORE)
        _closers.append(saver.aclose)
    elif KIND == "ours-postgres":
        from durable_debug.checkpoint.postgres import PostgresSaver
        saver = PostgresSaver(STORE)
        _closers.append(saver.aclose)
    elif KIND == "langgraph-sqlite":
        import sqlite3
        from langgraph.checkpoint.sqlite import SqliteSaver
        conn = sqlite3.connect(STORE, check_same_thread=False)
        saver = SqliteSaver(conn)
        _closers.append(lambda: conn.close())
    elif KIND == "langgraph-aiosqlite":
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
        conn = await aiosqlite.connect(STORE)
        saver = AsyncSqliteSaver(conn)
        _closers.append(conn.close)
    elif KIND == "langgraph-postgres":
        import psycopg
        from psycopg.rows import dict_row
        from langgraph.checkpoint.postgres import PostgresSaver
        conn = psycopg.connect(STORE, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = PostgresSaver(conn)
        saver.setup()
        _closers.append(lambda: conn.close())
    app = (StateGraph(State).add_node("research", research).add_node("review", review)
           .add_edge(START, "research").add_edge("research", "review")
           .compile(checkpointer=saver))
    return app

async def done():
    for close in reversed(_closers):
        result = close()
        if hasattr(result, "__await__"):
            await result
"""

KINDS = ["ours-sqlite", "langgraph-sqlite", "langgraph-aiosqlite", "ours-postgres"]
KINDS += ["langgraph-postgres"]
SYNC_ONLY = {"langgraph-sqlite", "langgraph-postgres"}
CONFIG = {"configurable": {"thread_id": "job-1"}}


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the app keeps its checkpoints: a SQLite file, or a fresh PostgreSQL schema."""
    if kind.endswith("postgres"):
        return str(request.getfixturevalue("postgres_db"))
    return str(tmp_path / "app.db")


@pytest.fixture
def kernel() -> Iterator[Any]:
    """A client of a fresh IPython kernel of this Python, importing this tree's code."""
    from jupyter_client.manager import start_new_kernel

    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=TIMEOUT_S, env=env)
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run_cell(client: Any, code: str) -> str:
    """Run ``code`` as a cell; return what it printed, or fail with the kernel's traceback."""
    msg_id = client.execute(code)
    printed: list[str] = []
    while True:
        try:
            msg = client.get_iopub_msg(timeout=TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"the kernel did not finish the cell:\n{code}") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            printed.append(content["text"])
        elif kind == "error":
            trace = "\n".join(content["traceback"])
            raise AssertionError(f"the cell failed:\n{code}\n{trace}")
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(printed)


def count_code(kind: str) -> str:
    """A cell printing how many checkpoints thread job-1 has, with the app's own API."""
    if kind in SYNC_ONLY:
        return f"print('COUNT', len(list(app.get_state_history({CONFIG!r}))))"
    return f"print('COUNT', len([s async for s in app.aget_state_history({CONFIG!r})]))"


def snapshot(store: str, name: str) -> str:
    """A copy of the store as it is now, for a cell to run a piece of code on the state the
    widget's action started from (the action itself changed the original): a SQLite file
    copied with SQLite's backup, or every table of the PostgreSQL schema copied to a new one."""
    if "://" not in store:
        import sqlite3

        copy = str(Path(store).with_name(f"{name}.db"))
        with sqlite3.connect(store) as source, sqlite3.connect(copy) as target:
            source.backup(target)
        source.close()
        target.close()
        return copy
    import psycopg

    match = re.search(r"search_path%3D(\w+)", store)
    assert match, store
    schema, new = match.group(1), f"{match.group(1)}_{name}"
    with psycopg.connect(store, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{new}"')
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
        for (table,) in tables:
            conn.execute(
                f'CREATE TABLE "{new}"."{table}" (LIKE "{schema}"."{table}" INCLUDING ALL)'
            )
            conn.execute(f'INSERT INTO "{new}"."{table}" SELECT * FROM "{schema}"."{table}"')
    return store.replace(f"search_path%3D{schema}", f"search_path%3D{new}")


async def widget_code(kind: str, store: str) -> list[tuple[str, str]]:
    """Pause the app at its interrupt, then fork, rerun, resume and run from the widget: the
    code of each action, in order, with a copy of the store as it was before that action."""
    namespace: dict[str, Any] = {}
    # compiled without this module's `from __future__ import annotations`, as in the kernel
    exec(compile(APP.format(kind=kind, store=store), "<app>", "exec", dont_inherit=True), namespace)
    app = await namespace["setup"]()
    before: list[str] = []

    async def keep() -> None:
        before.append(await asyncio.to_thread(snapshot, store, f"before{len(before)}"))

    try:
        if kind in SYNC_ONLY:
            await asyncio.to_thread(app.invoke, {"topic": "a"}, CONFIG)
        else:
            await app.ainvoke({"topic": "a"}, CONFIG)
        widget, front = await open_widget(app, CONFIG, graph_name="app")
        nodes = widget.dag["nodes"]
        paused = nodes[-1]["id"]
        after_input = next(n["id"] for n in nodes if n["id"] != paused and n["parent"])
        await keep()
        await front.result("fork", checkpoint_id=after_input, edits={"topic": '"b"'})
        fork = widget._selected
        await keep()
        await front.result("rerun", checkpoint_id=fork)
        await until(lambda: not widget._running, "the rerun to end")
        detail = await front.select(paused)
        (interrupt_id,) = [i["id"] for i in detail["interrupts"]]
        await keep()
        await front.result("resume", checkpoint_id=paused, answers={interrupt_id: '"yes"'})
        await until(lambda: not widget._running, "the resume to end")
        await keep()
        await front.result("run", text='{"topic": "c"}')
        await until(lambda: not widget._running, "the new run to end")
        assert widget._error == "", widget._error
        return list(zip([entry["code"] for entry in widget._code], before, strict=True))
    finally:
        await namespace["done"]()


async def test_the_code_of_every_action_runs_in_a_kernel(kind, store, kernel) -> None:
    actions = await widget_code(kind, store)
    codes = [code for code, _ in actions]
    assert [c.split("(")[0].split(".")[-1] for c in codes] == (
        ["update_state", "invoke", "invoke", "invoke"]
        if kind in SYNC_ONLY
        else ["aupdate_state", "ainvoke", "ainvoke", "ainvoke"]
    )
    prefix = "app." if kind in SYNC_ONLY else "await app."
    assert all(code.startswith(prefix) for code in codes), codes

    # Each piece of code, pasted into a cell, on the store as the widget's action found it.
    for code, copy in actions:
        run_cell(kernel, APP.format(kind=kind, store=copy) + "\napp = await setup()")
        count = int(run_cell(kernel, count_code(kind)).split()[-1])
        run_cell(kernel, code)
        after = int(run_cell(kernel, count_code(kind)).split()[-1])
        run_cell(kernel, "await done()")
        assert after > count, (code, count, after)
