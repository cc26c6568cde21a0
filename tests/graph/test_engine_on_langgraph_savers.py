"""The engine on LangGraph's own savers: the same builder code run by LangGraph's StateGraph
and ours, on the same saver class (InMemorySaver, SqliteSaver on a real file,
AsyncSqliteSaver), gives the same results and histories, and each reads the other's threads."""

from __future__ import annotations

import asyncio
import json
import operator
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import langgraph.graph as lg_graph
import langgraph.types as lg_types
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from typing_extensions import TypedDict

import durable_debug as dd
from durable_debug.checkpoint.foreign import LangGraphSaver, adapt_saver
from durable_debug.checkpoint.names import DEBUG_METADATA_KEY


class State(TypedDict):
    msgs: Annotated[list[Any], operator.add]
    n: int


def build(graph: Any, types: Any) -> Any:
    """One builder, written once, for either library (its imports passed in)."""

    def a(s: State) -> dict[str, Any]:
        return {"msgs": ["a"], "n": s["n"] + 1}

    def fan(s: State) -> list[Any]:
        return [types.Send("b", {"msgs": [], "n": i}) for i in range(2)]

    def b(s: State) -> dict[str, Any]:
        return {"msgs": [f"b{s['n']}"]}

    def c(s: State) -> dict[str, Any]:
        answer = types.interrupt({"q": "ok?"})
        return {"msgs": [f"c:{answer}"]}

    g = graph.StateGraph(State)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_node("c", c)
    g.add_edge(graph.START, "a")
    g.add_conditional_edges("a", fan, ["b"])
    g.add_edge("b", "c")
    g.add_edge("c", graph.END)
    return g


LIBS = {"langgraph": (lg_graph, lg_types), "durable_debug": (dd, dd)}


@pytest.fixture(params=["memory", "sqlite"])
def make_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    conns: list[sqlite3.Connection] = []

    def make() -> Any:
        if request.param == "memory":
            return InMemorySaver()
        conn = sqlite3.connect(tmp_path / f"app{len(conns)}.db", check_same_thread=False)
        conns.append(conn)
        return SqliteSaver(conn)

    yield make
    for conn in conns:
        conn.close()


def _history(app: Any, cfg: dict[str, Any]) -> list[Any]:
    """The history as its user sees it. LangGraph's engine shows whatever metadata is stored,
    so on a checkpoint our engine saved it also shows the debug record's reserved key (our
    engine leaves it out): the key is dropped here, and looked at in
    tests/checkpoint/test_foreign_records.py."""
    return [
        (
            {k: v for k, v in h.metadata.items() if k != DEBUG_METADATA_KEY},
            h.next,
            h.values,
            [t.name for t in h.tasks],
        )
        for h in app.get_state_history(cfg)
    ]


def _run(lib: str, saver: Any) -> tuple[Any, ...]:
    graph, types = LIBS[lib]
    app = build(graph, types).compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t1"}}
    first = app.invoke({"msgs": [HumanMessage("hi", id="m1")], "n": 0}, cfg)
    paused = app.get_state(cfg)
    done = app.invoke(types.Command(resume="yes"), cfg)
    first.pop("__interrupt__")  # its id is derived from the task id, unique per run
    return first, paused.next, [i.value for i in paused.interrupts], done, _history(app, cfg)


def test_compile_wraps_a_langgraph_saver_once() -> None:
    saver = InMemorySaver()
    app = build(dd, dd).compile(checkpointer=saver)
    assert isinstance(app.checkpointer, LangGraphSaver)
    assert adapt_saver(saver) is app.checkpointer
    assert app.checkpointer.inner is saver
    ours = dd.MemorySaver()
    assert adapt_saver(ours) is ours


def test_same_results_and_history_as_langgraph(make_saver: Callable[[], Any]) -> None:
    theirs = _run("langgraph", make_saver())
    ours = _run("durable_debug", make_saver())
    assert ours == theirs
    # our engine's history shows LangGraph's metadata keys only (the debug record is left out)
    ours_app = build(dd, dd).compile(checkpointer=make_saver())
    ours_app.invoke({"msgs": [], "n": 0}, {"configurable": {"thread_id": "t2"}})
    shown = [h.metadata for h in ours_app.get_state_history({"configurable": {"thread_id": "t2"}})]
    assert {k for m in shown for k in m} == {"source", "step", "parents"}


@pytest.mark.parametrize("writer", ["durable_debug", "langgraph"])
def test_each_reads_the_others_thread(make_saver: Callable[[], Any], writer: str) -> None:
    reader = "langgraph" if writer == "durable_debug" else "durable_debug"
    saver = make_saver()
    cfg = {"configurable": {"thread_id": "shared"}}
    w_graph, w_types = LIBS[writer]
    r_graph, r_types = LIBS[reader]
    written = build(w_graph, w_types).compile(checkpointer=saver)
    read = build(r_graph, r_types).compile(checkpointer=saver)
    written.invoke({"msgs": [HumanMessage("hi", id="m1")], "n": 0}, cfg)
    assert read.get_state(cfg).values == written.get_state(cfg).values
    assert read.get_state(cfg).next == ("c",)
    assert _history(read, cfg) == _history(written, cfg)
    if writer == "durable_debug":  # LangGraph resumes the interrupt our engine saved
        done = read.invoke(r_types.Command(resume="yes"), cfg)
        assert done["msgs"] == [HumanMessage("hi", id="m1"), "a", "b0", "b1", "c:yes"]
        assert _history(read, cfg) == _history(written, cfg)


def test_update_state_and_fork_match_langgraph(make_saver: Callable[[], Any]) -> None:
    results = {}
    for lib in LIBS:
        graph, types = LIBS[lib]
        app = build(graph, types).compile(checkpointer=make_saver())
        cfg = {"configurable": {"thread_id": f"u-{lib}"}}
        app.invoke({"msgs": [], "n": 0}, cfg)
        first = next(h for h in app.get_state_history(cfg) if h.metadata["step"] == 0)
        forked = app.update_state(first.config, {"n": 10}, as_node="a")
        app.invoke(None, forked)
        state = app.get_state(cfg)
        results[lib] = (
            state.values,
            state.next,
            state.metadata,
            len(list(app.get_state_history(cfg))),
        )
    assert results["durable_debug"] == results["langgraph"]


def test_async_sqlite_saver_same_as_langgraph(tmp_path: Path) -> None:
    async def run(lib: str) -> tuple[Any, ...]:
        graph, types = LIBS[lib]
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / f"{lib}.db")) as saver:
            app = build(graph, types).compile(checkpointer=saver)
            cfg = {"configurable": {"thread_id": "t"}}
            await app.ainvoke({"msgs": [], "n": 0}, cfg)
            done = await app.ainvoke(types.Command(resume="y"), cfg)
            hist = [(h.metadata, h.next, h.values) async for h in app.aget_state_history(cfg)]
            return done, hist

    assert asyncio.run(run("durable_debug")) == asyncio.run(run("langgraph"))


def build_parent(graph: Any, types: Any) -> Any:
    """A parent whose second node is a compiled subgraph that pauses on ``interrupt()``."""

    class Msgs(TypedDict):
        msgs: Annotated[list[Any], operator.add]

    def inner(s: Msgs) -> dict[str, Any]:
        return {"msgs": [f"inner:{types.interrupt('sub?')}"]}

    sub = graph.StateGraph(Msgs)
    sub.add_node("inner", inner)
    sub.add_edge(graph.START, "inner")
    parent = graph.StateGraph(Msgs)
    parent.add_node("p", lambda s: {"msgs": ["p"]})
    parent.add_node("sub", sub.compile())
    parent.add_edge(graph.START, "p")
    parent.add_edge("p", "sub")
    return parent


def test_subgraph_state_and_resume_match_langgraph() -> None:
    results = {}
    for lib, (graph, types) in LIBS.items():
        app = build_parent(graph, types).compile(checkpointer=InMemorySaver())
        cfg = {"configurable": {"thread_id": "1"}}
        app.invoke({"msgs": []}, cfg)
        paused = app.get_state(cfg, subgraphs=True)
        sub_state = paused.tasks[0].state
        done = app.invoke(types.Command(resume="y"), cfg)
        history = [(h.metadata, h.next) for h in app.get_state_history(cfg)]
        results[lib] = (done, paused.next, sub_state.values, sub_state.next, history)
    assert results["durable_debug"] == results["langgraph"]
    assert results["durable_debug"][0] == {"msgs": ["p", "p", "inner:y"]}


@pytest.mark.postgres
def test_postgres_saver_same_as_langgraph(postgres_db: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    results = {}
    with PostgresSaver.from_conn_string(postgres_db) as saver:
        saver.setup()
        for lib, (graph, types) in LIBS.items():
            app = build(graph, types).compile(checkpointer=saver)
            cfg = {"configurable": {"thread_id": f"pg-{lib}"}}
            app.invoke({"msgs": [], "n": 0}, cfg)
            done = app.invoke(types.Command(resume="y"), cfg)
            results[lib] = (done, _history(app, cfg))
        # LangGraph reads the thread our engine wrote
        theirs = build(lg_graph, lg_types).compile(checkpointer=saver)
        ours_cfg = {"configurable": {"thread_id": "pg-durable_debug"}}
        assert _history(theirs, ours_cfg) == results["durable_debug"][1]
    assert results["durable_debug"] == results["langgraph"]


def test_cli_inspects_a_langgraph_file_our_engine_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_cli import run_cli

    path = tmp_path / "app.db"
    with sqlite3.connect(path, check_same_thread=False) as conn:
        app = build(dd, dd).compile(checkpointer=SqliteSaver(conn))
        app.invoke({"msgs": [], "n": 0}, {"configurable": {"thread_id": "job-1"}})
    code, out, err = run_cli(capsys, "inspect", str(path), "--thread", "job-1")
    assert code == 0, err
    assert "thread 'job-1': 4 checkpoints" in out


def test_findings_are_kept_in_the_stores_metadata_not_shown_as_metadata(tmp_path: Path) -> None:
    from durable_debug import inspect as ddi

    class X(TypedDict):
        x: int

    builder = dd.StateGraph(X)
    builder.add_node("a", lambda s: {"x": 1, "bogus": 2})
    builder.add_edge(dd.START, "a")
    with sqlite3.connect(tmp_path / "f.db", check_same_thread=False) as conn:
        saver = SqliteSaver(conn)
        app = builder.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "f"}}
        with pytest.warns(dd.DurableDebugWarning):
            assert app.invoke({"x": 0}, cfg) == {"x": 1}
        frame = ddi.history_frame(app, cfg)
        assert frame["findings"].tolist() == [0, 0, 1]
        # our engine's metadata: LangGraph's keys only
        assert [h.metadata for h in app.get_state_history(cfg)] == [
            {"source": "loop", "step": 1, "parents": {}},
            {"source": "loop", "step": 0, "parents": {}},
            {"source": "input", "step": -1, "parents": {}},
        ]
        # LangGraph's saver holds the debug record as JSON text under the reserved key
        stored = [t.metadata for t in saver.list(cfg)]
        assert [{k: v for k, v in m.items() if k != DEBUG_METADATA_KEY} for m in stored] == [
            {"source": "loop", "step": 1, "parents": {}},
            {"source": "loop", "step": 0, "parents": {}},
            {"source": "input", "step": -1, "parents": {}},
        ]
        assert json.loads(stored[0][DEBUG_METADATA_KEY])["findings"][0]["key"] == "bogus"


def test_entrypoint_and_copy_take_a_langgraph_saver() -> None:
    from durable_debug.func import entrypoint

    saver = InMemorySaver()

    @entrypoint(checkpointer=saver)
    def double(x: int) -> int:
        return 2 * x

    cfg = {"configurable": {"thread_id": "e"}}
    assert double.invoke(3, cfg) == 6
    assert saver.get_tuple(cfg) is not None  # saved in the user's store

    other = InMemorySaver()
    app = build(dd, dd).compile(checkpointer=saver).copy({"checkpointer": other})
    app.invoke({"msgs": [], "n": 0}, {"configurable": {"thread_id": "c"}})
    assert app.get_state({"configurable": {"thread_id": "c"}}).next == ("c",)
    assert other.get_tuple({"configurable": {"thread_id": "c"}}) is not None


def test_stream_listing_filters_and_delete_match_langgraph(make_saver: Callable[[], Any]) -> None:
    results = {}
    for lib, (graph, types) in LIBS.items():
        saver = make_saver()
        app = build(graph, types).compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": f"s-{lib}"}}
        chunks = list(app.stream({"msgs": [], "n": 0}, cfg, stream_mode="updates"))
        assert chunks[-1]["__interrupt__"][0].value == {"q": "ok?"}
        loops = app.get_state_history(cfg, filter={"source": "loop"}, limit=2)
        steps = [h.metadata["step"] for h in loops]
        before = app.get_state_history(cfg, before=app.get_state(cfg).config)
        older = [h.metadata["step"] for h in before]
        app.checkpointer.delete_thread(f"s-{lib}")
        # parallel Send tasks stream in the order they finish: compare as a set
        updates = sorted(map(repr, chunks[:-1]))
        results[lib] = (updates, steps, older, app.get_state(cfg).values, saver.get_tuple(cfg))
    assert results["durable_debug"] == results["langgraph"]
    assert results["durable_debug"][1:] == ([2, 1], [1, 0, -1], {}, None)


def test_a_failed_task_is_saved_and_retried_as_in_langgraph(make_saver: Callable[[], Any]) -> None:
    class X(TypedDict):
        x: int

    results = {}
    for lib, (graph, _types) in LIBS.items():
        calls: list[int] = []

        def flaky(s: X, calls: list[int] = calls) -> dict[str, Any]:
            calls.append(1)
            if len(calls) == 1:
                raise ValueError("boom")
            return {"x": 1}

        builder = graph.StateGraph(X)
        builder.add_node("a", flaky)
        builder.add_edge(graph.START, "a")
        saver = make_saver()
        app = builder.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": f"e-{lib}"}}
        with pytest.raises(ValueError, match="boom"):
            app.invoke({"x": 0}, cfg)
        paused = app.get_state(cfg)
        saved = [(c, v) for _, c, v in saver.get_tuple(cfg).pending_writes]
        results[lib] = (paused.next, [t.error for t in paused.tasks], saved, app.invoke(None, cfg))
    assert results["durable_debug"] == results["langgraph"]
    assert results["durable_debug"][3] == {"x": 1}
