"""The extension in a real in-process IPython shell: load/unload, %%graph, %checkpoints, %diff."""

from __future__ import annotations

import pandas as pd
from IPython.utils.capture import capture_output

import durable_debug
from durable_debug.magics import GraphSession, time_travel_class
from support.seed_graphs import source

EXTENSION = "durable_debug"


def run(ip, cell):
    """Run a cell like a user does; return (result, what it printed: stdout in order, in which
    displays and tracebacks land, then stderr, where usage errors go)."""
    with capture_output(display=False) as out:  # displays print to stdout, in order
        result = ip.run_cell(cell, store_history=True)
    return result, out.stdout + out.stderr


def traces(ip):
    manager = ip.magics_manager
    return (
        {kind: set(names) for kind, names in manager.magics.items()},
        set(manager.registry),
        list(ip.input_transformers_cleanup),
        list(ip.ast_transformers),
        {name: list(cbs) for name, cbs in ip.events.callbacks.items()},
        set(ip.user_ns),
    )


def test_load_and_unload_leave_no_trace(ip):
    # IPython 9 registers its own %load_ext machinery on first use; that is not ours to undo.
    ip.find_line_magic("load_ext")
    ip.find_line_magic("unload_ext")
    before = traces(ip)
    ip.run_line_magic("load_ext", EXTENSION)
    magics = ip.magics_manager.magics
    assert "graph" in magics["cell"]
    assert {"checkpoints", "diff"} <= set(magics["line"])
    assert traces(ip)[4:] == before[4:]  # no events, no names in the namespace
    ip.run_line_magic("unload_ext", EXTENSION)
    assert traces(ip) == before
    _result, printed = run(ip, "%%graph\nx = 1\n")
    assert "Cell magic `%%graph` not found" in printed
    assert "x" not in ip.user_ns


def test_graph_cell_awaits_defines_names_and_shows_counts(ip, engine):
    """Notebook 08 fix B in one cell: prepare 1, gate 2 (re-ran 1×); then the checkpoint table."""
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(source(engine, "rerun_rule"))
    result, printed = run(
        ip,
        "%%graph --counts runs\n"
        'first = await g.ainvoke({"prep": "", "decision": ""}, cfg)\n'
        'await g.ainvoke(Command(resume="APPROVED"), cfg)\n',
    )
    assert result.success
    assert result.result == {"prep": "expensive", "decision": "APPROVED"}
    assert "__interrupt__" in ip.user_ns["first"]  # names the cell defines stay defined
    runs = ip.user_ns["runs"]
    assert isinstance(runs, pd.DataFrame)
    assert runs.summary.tolist() == ["prepare 1", "gate 2 (re-ran 1×)"]
    assert ip.user_ns["charges"]["prepare"] == 1
    counts_at = printed.index("gate 2 (re-ran 1×)")
    if time_travel_class() is None:  # until the widget lands: the DAG table
        assert printed.index("checkpoint_id") > counts_at
    assert printed.index("Out[") > counts_at  # the cell's value still shows, last


def test_counts_accumulate_over_cells(ip, engine):
    """Notebook 07 (a): invoke, then one resume per cell; the table shows all executions."""
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(source(engine, "two_gates"))
    run(ip, '%%graph\nawait g.ainvoke({"a": "", "b": ""}, cfg)\n')
    run(ip, '%%graph\nawait g.ainvoke(Command(resume="A-VALUE"), cfg)\n')
    _, printed = run(ip, '%%graph --counts c\nawait g.ainvoke(Command(resume="B-VALUE"), cfg);\n')
    assert "two_gates 3 (re-ran 2×)" in printed
    assert "Out[" not in printed  # a trailing semicolon still hides the value
    assert ip.user_ns["c"].executions.tolist() == [3]


def test_failing_cell_shows_counts_then_the_exception(ip, engine):
    """Notebook 02: c raises; the counts up to the failure show, then the traceback."""
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(source(engine, "resume"))
    result, printed = run(ip, '%%graph --counts runs\nawait g.ainvoke({"log": []}, cfg)\n')
    assert isinstance(result.error_in_exec, RuntimeError)
    assert printed.index("c 1") < printed.index("RuntimeError")
    assert ip.user_ns["runs"].summary.tolist() == ["a 1", "b 1", "c 1"]
    ip.user_ns["broken"]["c"] = False
    result, printed = run(ip, "%%graph --counts runs --no-widget\nawait g.ainvoke(None, cfg)\n")
    assert result.success
    assert ip.user_ns["runs"].summary.tolist() == ["a 1", "b 1", "c 2 (re-ran 1×)"]
    assert "checkpoint_id" not in printed  # --no-widget: counts only
    assert ip.user_ns["calls"] == {"a": 1, "b": 1, "c": 2}


def test_sync_cell_and_thread_option(ip, engine):
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(source(engine, "sync_nodes"))
    result, _printed = run(
        ip,
        "%%graph --thread sync-2 --counts only\n"
        'g.invoke({"value": ""}, cfg)\n'
        'g.invoke({"value": ""}, {"configurable": {"thread_id": "sync-2"}})\n',
    )
    assert result.success and result.result == {"value": "12"}
    assert ip.user_ns["only"].thread.unique().tolist() == ["sync-2"]


def test_bad_options_are_a_usage_error_and_nothing_runs(ip):
    ip.run_line_magic("load_ext", EXTENSION)
    _result, printed = run(ip, "%%graph --bogus\nran = True\n")
    assert "UsageError" in printed and "--bogus" in printed
    assert "ran" not in ip.user_ns


def test_cell_without_graph_runs_says_so(ip):
    ip.run_line_magic("load_ext", EXTENSION)
    result, printed = run(ip, "%%graph\ny = 2\ny * 3\n")
    assert "no graph node executed in this cell" in printed
    assert result.result == 6 and ip.user_ns["y"] == 2


def test_checkpoints_and_diff_line_magics(ip, engine):
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(source(engine, "accumulate"))
    run(ip, '%%graph --no-widget\nawait g.ainvoke({"value": "", "log": []}, cfg)\n')
    table = ip.run_line_magic("checkpoints", "demo-1")
    assert table.step.tolist() == [-1, 0, 1, 2]
    assert ip.run_line_magic("checkpoints", "").equals(table)  # the last thread by default
    ids = table.checkpoint_id.tolist()
    changes = ip.run_line_magic("diff", f"{ids[2]} {ids[3]}")
    assert changes.channel.tolist() == ["value", "log"]
    paths = ip.run_line_magic("diff", f"{ids[2]} {ids[3]} --paths --graph g --thread demo-1")
    assert paths.path.tolist() == ["value", "log[1]"]
    _result, printed = run(ip, "%checkpoints ghost-thread")
    assert "holds thread 'ghost-thread'" in printed


def test_widget_is_used_when_installed_else_the_dag_table(ip, engine):
    """The switch is automatic; a session told there is no widget shows the DAG table."""
    assert time_travel_class() is getattr(durable_debug, "TimeTravel", None)
    shown: list[object] = []
    ns: dict[str, object] = {}
    exec(compile(source(engine, "accumulate"), "<seed>", "exec", dont_inherit=True), ns)
    session = GraphSession(ns, shown.append, widget_class=lambda: None)
    from durable_debug._sync import run_sync

    with session.cell(session_options()):
        run_sync(ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"]))
    counts, table = shown
    assert counts.summary.tolist() == ["a 1", "b 1"]
    assert table.step.tolist() == [-1, 0, 1, 2]


def session_options():
    from durable_debug.magics import CellOptions

    return CellOptions()


def test_calling_the_cell_magic_directly_also_records(ip, engine):
    """run_cell_magic bypasses the transformers; the magic then runs the body itself."""
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(source(engine, "sync_nodes"))
    with capture_output(display=False) as out:
        ip.run_cell_magic("graph", "--counts direct --no-widget", 'g.invoke({"value": ""}, cfg)')
    assert ip.user_ns["direct"].summary.tolist() == ["first 1", "second 1"]
    assert "second 1" in out.stdout


def test_each_session_holds_its_own_running_cell(engine):
    """A cell's state lives on its session: a cell running in one shell's session is not seen
    by another's, and leaving the cell shows its counts whether it ran sync or async."""
    import asyncio

    from durable_debug._sync import run_sync
    from durable_debug.magics import GraphSession

    shown: list[object] = []
    ns: dict[str, object] = {}
    exec(compile(source(engine, "accumulate"), "<seed>", "exec", dont_inherit=True), ns)
    one = GraphSession(ns, shown.append, widget_class=lambda: None)
    other = GraphSession({}, shown.append, widget_class=lambda: None)
    with one.cell(session_options()) as cell:
        assert one.current is cell and other.current is None
        run_sync(ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"]))

    async def async_cell() -> None:
        async with one.cell(session_options()) as cell:
            assert one.current is cell and other.current is None
            await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])

    asyncio.run(async_cell())
    counts = [item for item in shown if hasattr(item, "summary")]
    assert [c.summary.tolist() for c in counts] == [
        ["a 1", "b 1"],
        ["a 2", "b 2"],
    ]  # a thread's total


def test_checkpoints_lists_each_finding_under_its_checkpoint(ip):
    """A node writing a key its schema lacks: the write is dropped (as in LangGraph) and
    %checkpoints prints a line for the finding under its checkpoint, above the table."""
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(
        "import operator, warnings\n"
        "from typing import Annotated, TypedDict\n"
        "from durable_debug import START, MemorySaver, StateGraph\n"
        "class S(TypedDict):\n"
        "    value: str\n"
        "def typo(state):\n"
        "    return {'value': 'a', 'vlaue': 'oops'}\n"
        "g = StateGraph(S).add_node('typo', typo).add_edge(START, 'typo')"
        ".compile(checkpointer=MemorySaver())\n"
        "cfg = {'configurable': {'thread_id': 'typo-1'}}\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    g.invoke({'value': ''}, cfg)\n"
    )
    result, printed = run(ip, "%checkpoints typo-1 --graph g")
    table = result.result
    assert table.findings.tolist() == [0, 0, 1]
    lines = printed.splitlines()
    at = lines.index("findings:")
    step_line = lines[at + 1]
    assert step_line.split()[:2] == ["step", "1"]
    assert (
        lines[at + 2]
        .strip()
        .startswith("⚑ unknown-key (node 'typo', key 'vlaue'): Node 'typo' wrote key 'vlaue'")
    )
    # a thread without findings prints none
    ip.run_cell(
        "ok = StateGraph(S).add_node('fine', lambda s: {'value': 'b'}).add_edge(START, 'fine')"
        ".compile(checkpointer=MemorySaver())\n"
        "ok.invoke({'value': 'x'}, {'configurable': {'thread_id': 'clean'}})\n"
    )
    result, printed = run(ip, "%checkpoints clean --graph ok")
    assert result.result.findings.tolist() == [0, 0, 0]
    assert "findings:" not in printed


def test_checkpoints_on_sqlite_lists_findings_and_decodes_no_state(ip, tmp_path):
    """On durable_debug's SQLite saver %checkpoints reads the outline: the finding still
    shows under its checkpoint, and the table still lists once the state blobs are garbled."""
    import sqlite3
    from contextlib import closing

    import pytest

    from durable_debug.inspect import history_frame

    database = tmp_path / "typo.db"
    ip.run_line_magic("load_ext", EXTENSION)
    ip.run_cell(
        "import warnings\n"
        "from typing import TypedDict\n"
        "from durable_debug import START, SqliteSaver, StateGraph\n"
        "class S(TypedDict):\n"
        "    value: str\n"
        "def typo(state):\n"
        "    return {'value': 'a', 'vlaue': 'oops'}\n"
        "g = StateGraph(S).add_node('typo', typo).add_edge(START, 'typo')"
        f".compile(checkpointer=SqliteSaver({str(database)!r}))\n"
        "cfg = {'configurable': {'thread_id': 'typo-1'}}\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    g.invoke({'value': ''}, cfg)\n"
    )
    result, printed = run(ip, "%checkpoints typo-1 --graph g")
    table = result.result
    assert table.findings.tolist() == [0, 0, 1]
    assert "⚑ unknown-key (node 'typo', key 'vlaue')" in printed
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE checkpoint_blobs SET blob = x'c1c1' WHERE channel = 'value'")
    with pytest.raises(Exception):  # noqa: B017 - any decoding error: the values are garbage
        history_frame(ip.user_ns["g"], ip.user_ns["cfg"], values=True)
    result, printed = run(ip, "%checkpoints typo-1 --graph g")
    assert result.error_in_exec is None, printed
    assert result.result.equals(table)
