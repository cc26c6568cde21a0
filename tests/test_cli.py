"""The ``durable-debug`` command: the demo, inspecting stores, and one-line errors."""

from __future__ import annotations

import json
import operator
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Annotated, TypedDict

import pytest

from durable_debug import SqliteSaver
from durable_debug.cli import demo_graph, main
from durable_debug.inspect.dag import dag_from_wire


class Logged(TypedDict):
    log: Annotated[list, operator.add]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def embedded_data(html: Path) -> dict:
    text = html.read_text()
    match = re.search(
        r'<script type="application/json" id="durable-debug-data">(.*?)</script>', text, re.S
    )
    assert match, "the page embeds its data"
    return json.loads(match.group(1).replace("<\\/", "</"))


def test_demo_runs_on_sqlite_prints_the_tree_and_writes_a_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, html = tmp_path / "demo.db", tmp_path / "demo.html"
    code, out, err = run_cli(capsys, "demo", "--db", str(db), "--html", str(html))
    assert code == 0, err
    assert "the fan-out failed: the model endpoint timed out writing 'body'" in out
    assert "thread 'demo': 10 checkpoints, 2 branches" in out
    assert "branch 1, forked from step 1" in out
    assert "write 6 (re-ran 1×)" in out and "review 4 (re-ran 2×)" in out
    data = embedded_data(html)
    assert data["thread_id"] == "demo" and len(dag_from_wire(data["dag"])["nodes"]) == 10
    with SqliteSaver(db) as saver:
        history = list(saver.list({"configurable": {"thread_id": "demo"}}))
    assert len(history) == 10
    assert sorted(t.metadata["source"] for t in history).count("update") == 1
    # running it again starts the demo thread afresh
    code, out, _ = run_cli(capsys, "demo", "--db", str(db), "--html", str(html))
    assert code == 0 and "thread 'demo': 10 checkpoints, 2 branches" in out


def test_inspect_lists_threads_and_shows_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.db"
    with SqliteSaver(db) as saver:
        graph = demo_graph(saver)
        cfg = {"configurable": {"thread_id": "job-1"}}
        with pytest.raises(ConnectionError):
            graph.invoke({"topic": "t"}, cfg)
        graph.invoke(None, cfg)  # pauses at review
    code, out, _ = run_cli(capsys, "inspect", str(db))
    assert code == 0
    assert re.search(r"job-1\s+4\s+2\s+paused on 1 interrupt\(s\) at review", out)
    html = tmp_path / "job.html"
    code, out, _ = run_cli(capsys, "inspect", str(db), "--thread", "job-1", "--html", str(html))
    assert code == 0
    assert "thread 'job-1': 4 checkpoints, 1 branch" in out
    assert "⏸ 1 interrupt" in out and "✗ 1 failed" in out
    assert "step source checkpoint" in out
    assert dag_from_wire(embedded_data(html)["dag"])["nodes"][-1]["interrupts"] == 1


def test_inspect_reads_postgresql_by_url(
    postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from durable_debug import Command, PostgresSaver

    with PostgresSaver.from_conn_string(postgres_db) as saver:
        graph = demo_graph(saver)
        cfg = {"configurable": {"thread_id": "pg-job"}}
        with pytest.raises(ConnectionError):
            graph.invoke({"topic": "t"}, cfg)
        graph.invoke(None, cfg)
        graph.invoke(Command(resume="ok"), cfg)
    code, out, err = run_cli(capsys, "inspect", postgres_db, "--thread", "pg-job")
    assert code == 0, err
    assert "thread 'pg-job': 6 checkpoints, 1 branch" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["inspect", "{tmp}/missing.db"], "no such file: {tmp}/missing.db"),
        (["inspect", "{tmp}/notes.txt"], "{tmp}/notes.txt is not a SQLite database"),
        (
            ["inspect", "{tmp}/other.db"],
            "is a SQLite database but not a durable_debug checkpoint store",
        ),
        (["inspect", "redis2://x"], "unknown scheme 'redis2'"),
        (
            ["inspect", "postgresql://nobody@127.0.0.1:1/x"],
            "cannot connect to the PostgreSQL database",
        ),
        (["demo", "--db", "{tmp}/no/such/dir/x.db"], "no directory '{tmp}/no/such/dir'"),
        (["demo", "--db", "{tmp}/other.db"], "not a durable_debug checkpoint store"),
    ],
)
def test_bad_paths_and_urls_get_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "notes.txt").write_text("not a database, just text " * 100)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE mine (x INTEGER)")
        conn.execute("INSERT INTO mine VALUES (1)")
    before = other.read_bytes()
    code, out, err = run_cli(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("durable-debug: error: ")
    assert message.format(tmp=tmp_path) in err
    assert other.read_bytes() == before  # nothing touched


def test_inspect_thread_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "demo.db"
    assert run_cli(capsys, "demo", "--db", str(db), "--html", str(tmp_path / "d.html"))[0] == 0
    code, _, err = run_cli(capsys, "inspect", str(db), "--thread", "nope")
    assert (code, err.strip().splitlines()) == (
        2,
        [
            "reading thread 'nope'…",  # the one read of the thread is also the existence check
            "durable-debug: error: no thread 'nope' in this store (threads: 'demo')",
        ],
    )
    code, _, err = run_cli(capsys, "inspect", str(db), "--html", "x.html")
    assert code == 2 and "--html needs --thread" in err


def test_the_command_runs_as_a_program(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[1] / "src"
    proc = subprocess.run(
        [sys.executable, "-m", "durable_debug.cli", "inspect", str(tmp_path / "none.db")],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"durable-debug: error: no such file: {tmp_path / 'none.db'}"


def damaged_store(tmp_path: Path) -> Path:
    """A SQLite store with four threads: ``fine``; ``garbled`` (a blob that is not msgpack);
    ``lost`` (paused before its node, its blob rows deleted: the trigger's among them);
    ``looped`` (its first checkpoint made its last one's child)."""
    from typing_extensions import TypedDict

    from durable_debug import END, START, StateGraph

    class S(TypedDict):
        a: str

    db = tmp_path / "damaged.db"
    with SqliteSaver(db) as saver:
        builder = (
            StateGraph(S)
            .add_node("fill", lambda s: {"a": s["a"] + "!"})
            .add_edge(START, "fill")
            .add_edge("fill", END)
        )
        graph = builder.compile(checkpointer=saver)
        for thread in ("fine", "garbled", "looped"):
            graph.invoke({"a": thread}, {"configurable": {"thread_id": thread}})
        # Paused, so its newest checkpoint has a trigger that holds a value: the one blob a
        # listing reads (a finished thread's triggers hold none, and have no row).
        paused = builder.compile(checkpointer=saver, interrupt_before=["fill"])
        paused.invoke({"a": "lost"}, {"configurable": {"thread_id": "lost"}})
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE checkpoint_blobs SET blob = x'c1c1c1' WHERE thread_id = 'garbled'")
        conn.execute("DELETE FROM checkpoint_blobs WHERE thread_id = 'lost'")
        ids = [
            row[0]
            for row in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = 'looped' ORDER BY 1"
            )
        ]
        conn.execute(
            "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE checkpoint_id = ?",
            (ids[-1], ids[0]),
        )
    return db


def test_a_damaged_store_is_listed_with_its_broken_threads_marked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = damaged_store(tmp_path)
    code, out, err = run_cli(capsys, "inspect", str(db))
    assert code == 2
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert sorted(rows) == ["fine", "garbled", "looped", "lost"]
    assert rows["fine"].endswith("done") and rows["looped"].endswith("done")
    # The listing decodes no state (it stays one query for 10,000 threads), so a garbled
    # state blob shows when the thread is read; a lost blob row shows here already.
    assert "broken: thread 'lost'" in rows["lost"] and "no blob of that version" in rows["lost"]
    assert err == "durable-debug: error: 1 of 4 threads could not be read (marked broken above)\n"


@pytest.mark.parametrize(
    ("thread", "html", "message"),
    [("garbled", True, "not valid serialized data"), ("lost", False, "no blob of that version")],
)
def test_a_damaged_thread_is_one_line_and_status_2_never_a_traceback(
    tmp_path: Path, thread: str, html: bool, message: str
) -> None:
    """A thread whose tree cannot be read (a lost trigger blob), or whose states cannot be
    decoded where they are shown (the HTML page holds every checkpoint's state)."""
    db = damaged_store(tmp_path)
    src = Path(__file__).resolve().parents[1] / "src"
    page = ["--html", str(tmp_path / "page.html")] if html else []
    proc = subprocess.run(
        [sys.executable, "-m", "durable_debug.cli", "inspect", str(db), "--thread", thread, *page],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
        },
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if not line.startswith("reading thread")]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"durable-debug: error: thread {thread!r}, checkpoint ")
    assert message in lines[0]


def test_a_thread_whose_states_cannot_be_decoded_still_shows_its_tree_and_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tree and the table come from the outline (ids, parents, metadata, triggers): no
    state is decoded for them, so garbled state blobs do not hide the thread."""
    db = damaged_store(tmp_path)
    code, out, err = run_cli(capsys, "inspect", str(db), "--thread", "garbled")
    assert code == 0, err
    assert "thread 'garbled': 3 checkpoints" in out
    table = out.split("\n\n")[-1].splitlines()
    assert table[0].split() == [
        "step",
        "source",
        "checkpoint",
        "parent",
        "next",
        "writers",
        "flags",
    ]
    assert [line.split()[:2] for line in table[1:]] == [
        ["-1", "input"],
        ["0", "loop"],
        ["1", "loop"],
    ]
    assert table[2].split()[-2:] == ["fill", "__start__"]  # next, writers of step 0


def test_a_parent_loop_is_shown_not_a_key_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = damaged_store(tmp_path)
    code, out, err = run_cli(capsys, "inspect", str(db), "--thread", "looped")
    assert code == 0, err
    assert "thread 'looped': 3 checkpoints" in out
    assert "loops back (link ignored)" in out


def test_an_unexpected_error_is_one_line_naming_its_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import durable_debug.cli as cli

    async def fails(*args: object) -> int:
        raise KeyError("surprise")

    monkeypatch.delenv("DURABLE_DEBUG_TRACEBACK", raising=False)
    monkeypatch.setattr(cli, "_run_inspect", fails)
    db = damaged_store(tmp_path)
    code, out, err = run_cli(capsys, "inspect", str(db))
    assert (code, out, err) == (2, "", "durable-debug: error: KeyError: 'surprise'\n")


def test_inspect_thread_prints_subgraph_trees_nested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A thread whose node ran a subgraph (which ran another): each namespace's tree is
    printed under a header naming its node, indented one level per nesting."""
    from durable_debug import Command, StateGraph, interrupt

    def ask(state: dict) -> dict:
        return {"log": [interrupt("ok?")]}

    inner = StateGraph(Logged).add_node("ask", ask).add_edge("__start__", "ask").compile()
    middle = StateGraph(Logged).add_node("inner", inner).add_edge("__start__", "inner").compile()
    db = tmp_path / "nested.db"
    with SqliteSaver(db) as saver:
        g = StateGraph(Logged).add_node("middle", middle).add_edge("__start__", "middle")
        g = g.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "nest"}}
        g.invoke({"log": []}, cfg)
        g.invoke(Command(resume="yes"), cfg)
    code, out, err = run_cli(capsys, "inspect", str(db), "--thread", "nest")
    assert code == 0, err
    assert "thread 'nest': 3 checkpoints, 1 branch" in out
    middle_at = out.index("└─ subgraph 'middle' (task ")
    inner_at = out.index("    └─ subgraph 'inner' (task ")
    assert middle_at < inner_at
    assert "thread 'nest': 3 checkpoints" in out[middle_at:inner_at]
    assert "        thread 'nest': 3 checkpoints" in out[inner_at:]


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    import durable_debug

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"durable-debug {durable_debug.__version__}\n"


def test_inspect_thread_prints_each_finding_under_its_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Findings are stored beside the checkpoints (the SQLite file's debug column): another
    process, the CLI reading the file without the graph's code, lists them."""
    from durable_debug import START, StateGraph

    def typo(state: Logged) -> dict:
        return {"log": ["a"], "lgo": ["oops"]}

    db = tmp_path / "found.db"
    with SqliteSaver(db) as saver:
        graph = StateGraph(Logged).add_node("typo", typo).add_edge(START, "typo")
        with pytest.warns(Warning, match="wrote key 'lgo'"):
            graph.compile(checkpointer=saver).invoke(
                {"log": []}, {"configurable": {"thread_id": "job-1"}}
            )
    code, out, err = run_cli(capsys, "inspect", str(db), "--thread", "job-1")
    assert code == 0, err
    tree = out.split("\n\n")[0]
    assert "⚑ 1 finding" in tree  # the mark on the checkpoint in the tree
    lines = out.splitlines()
    at = lines.index("findings:")
    assert lines[at + 1].split()[:2] == ["step", "1"]
    assert lines[at + 2].strip() == (
        "⚑ unknown-key (node 'typo', key 'lgo'): Node 'typo' wrote key 'lgo', which the state "
        "schema Logged does not have (its keys: log): the write was dropped, as LangGraph "
        "drops it."
    )
    assert len(lines) == at + 3  # one line per finding, nothing after
