"""The checkpoint tree of a thread run by a low-level ``Pregel`` (nodes subscribed to channels).

A ``Pregel``'s nodes run when a channel they subscribe to changes, and those channels have
the names the user gave them, not the engine's trigger names. The outline (no state decoded,
durable_debug's SQLite saver) must still show each checkpoint's next nodes and the nodes
whose writes made it, as the full read does and as the same graph written with
``StateGraph`` shows them, in ``checkpoint_dag``, ``dag_data`` and the widget alike.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, TypedDict

import pytest

from durable_debug import SqliteSaver, StateGraph, TimeTravel
from durable_debug.channels import LastValue
from durable_debug.graph.lowlevel import NodeBuilder, Pregel
from durable_debug.inspect import acheckpoint_dag, adag_data
from durable_debug.inspect.dag import DagReader, dag_data_of
from durable_debug.inspect.thread import aread_thread

CFG = {"configurable": {"thread_id": "p-1"}}


def pregel_chain(saver: Any) -> Pregel:
    """``one`` (a → b), then ``two`` (b → c) and ``three`` (b, c → d), paused before ``two``."""
    one = NodeBuilder().subscribe_only("a").do(lambda x: x + 1).write_to("b")
    two = NodeBuilder().subscribe_only("b").do(lambda x: x * 10).write_to("c")
    three = (
        NodeBuilder()
        .subscribe_to("c")
        .read_from("b")
        .do(lambda values: values["b"] + values["c"])
        .write_to("d")
    )
    return Pregel(
        nodes={"one": one, "two": two, "three": three},
        channels={name: LastValue(int) for name in "abcd"},
        input_channels="a",
        output_channels="d",
        checkpointer=saver,
        interrupt_before_nodes=["two"],
    )


class State(TypedDict, total=False):
    a: int
    b: int
    c: int
    d: int


def state_chain(saver: Any) -> Any:
    """The same chain as a ``StateGraph``."""
    g = StateGraph(State)
    g.add_node("one", lambda s: {"b": s["a"] + 1})
    g.add_node("two", lambda s: {"c": s["b"] * 10})
    g.add_node("three", lambda s: {"d": s["b"] + s["c"]})
    g.set_entry_point("one")
    g.add_edge("one", "two")
    g.add_edge("two", "three")
    return g.compile(checkpointer=saver, interrupt_before=["two"])


def marks(dag: dict[str, Any]) -> list[tuple[str, list[str], list[str]]]:
    """``(source, next, writers)`` of each checkpoint, oldest first, for the loop and fork
    checkpoints (the steps a StateGraph and a Pregel both save)."""
    nodes = sorted(dag["nodes"], key=lambda n: n["id"])
    return [(n["source"], n["next"], n["writers"]) for n in nodes if n["source"] != "input"]


async def run_paused_then_resumed(graph: Any, first: Any) -> None:
    await graph.ainvoke(first, CFG)
    await graph.ainvoke(None, CFG)


async def test_the_outline_of_a_pregel_thread_shows_next_nodes_and_writers(tmp_path: Path):
    g = pregel_chain(SqliteSaver(str(tmp_path / "p.db")))
    await g.ainvoke(1, CFG)
    reader = DagReader(g, CFG)
    dag = await reader.aread()
    assert reader.outlined
    by_step = {n["step"]: (n["next"], n["writers"]) for n in dag["nodes"]}
    assert by_step == {-1: (["one"], []), 0: (["two"], ["one"])}
    assert dag == dag_data_of(await aread_thread(g, CFG))

    await g.ainvoke(None, CFG)  # resumed: two, then three
    dag = await reader.aread()  # a later read: only what was written since
    assert reader.outlined and reader.reads == 2
    by_step = {n["step"]: (n["next"], n["writers"]) for n in dag["nodes"]}
    assert by_step == {
        -1: (["one"], []),
        0: (["two"], ["one"]),
        1: (["three"], ["two"]),
        2: ([], ["three"]),
    }
    assert dag == dag_data_of(await aread_thread(g, CFG))


async def test_a_pregel_thread_shows_what_the_same_stategraph_shows(tmp_path: Path):
    p = pregel_chain(SqliteSaver(str(tmp_path / "p.db")))
    s = state_chain(SqliteSaver(str(tmp_path / "s.db")))
    await run_paused_then_resumed(p, 1)
    await run_paused_then_resumed(s, {"a": 1})
    assert (await p.aget_state(CFG)).values["d"] == (await s.aget_state(CFG)).values["d"] == 22
    # The StateGraph's first loop checkpoint is its __start__ step's; a Pregel writes the
    # input straight into its channels, so it has none.
    state_marks = marks(await adag_data(s, CFG))
    assert state_marks[0] == ("loop", ["one"], ["__start__"])
    assert marks(await adag_data(p, CFG)) == state_marks[1:]

    tree = await acheckpoint_dag(p, CFG)
    shown = sorted((d["step"], d["next"], d["writers"]) for _, d in tree.nodes(data=True))
    assert shown == [
        (-1, ["one"], []),
        (0, ["two"], ["one"]),
        (1, ["three"], ["two"]),
        (2, [], ["three"]),
    ]


async def test_a_fork_of_a_pregel_thread_is_marked_too(tmp_path: Path):
    g = pregel_chain(SqliteSaver(str(tmp_path / "p.db")))
    await run_paused_then_resumed(g, 1)
    after_one = next(s for s in g.get_state_history(CFG) if s.metadata["step"] == 0)
    forked = await g.aupdate_state(after_one.config, 5, as_node="one")  # through its writers
    await g.ainvoke(None, forked)
    dag = await adag_data(g, CFG)
    assert dag == dag_data_of(await aread_thread(g, CFG))
    assert dag["lanes"] == 2
    fork = next(n for n in dag["nodes"] if n["lane"] == 1 and n["source"] == "update")
    assert (fork["next"], fork["writers"]) == (["two"], ["one"])


async def test_the_pregel_outline_decodes_no_state(tmp_path: Path):
    """State blobs made unreadable: the full read fails, the tree with its marks still opens."""
    database = tmp_path / "p.db"
    g = pregel_chain(SqliteSaver(str(database)))
    await g.ainvoke(1, CFG)
    expected = dag_data_of(await aread_thread(g, CFG))
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE checkpoint_blobs SET blob = x'c1c1' WHERE channel IN ('a', 'b')")
    with pytest.raises(Exception):  # noqa: B017 - any decoding error: the values are garbage
        await aread_thread(g, CFG)
    assert await DagReader(g, CFG).aread() == expected
    assert [n["next"] for n in expected["nodes"]] == [["one"], ["two"]]


async def test_the_widget_shows_a_pregel_threads_next_nodes_and_writers(tmp_path: Path):
    g = pregel_chain(SqliteSaver(str(tmp_path / "p.db")))
    await g.ainvoke(1, CFG)
    widget = TimeTravel(g, CFG)
    await widget.aready()
    shown = sorted((n["step"], n["next"], n["writers"]) for n in widget.dag["nodes"])
    assert shown == [(-1, ["one"], []), (0, ["two"], ["one"])]


async def test_without_the_graph_the_stored_structure_names_the_subscriptions(tmp_path: Path):
    """A saver seen as a graph (what ``durable-debug inspect`` reads) has no nodes to ask: the
    subscriptions come from the graph structure the first checkpoint's debug record holds, and
    the tree is the one the graph's own reader gives."""
    from durable_debug.graph.version import STRUCTURE_TRIGGERS, graph_structure
    from durable_debug.inspect.stored import SaverView

    saver = SqliteSaver(str(tmp_path / "p.db"))
    g = pregel_chain(saver)
    await run_paused_then_resumed(g, 1)
    assert graph_structure(g)[STRUCTURE_TRIGGERS] == ["a -> one", "b -> two", "c -> three"]
    # The stored nodes and edges are the channel links its drawing shows: the same StateGraph's.
    edges = ["__start__ -> one", "one -> two", "three -> __end__", "two -> three"]
    assert graph_structure(g)["edges"] == edges == graph_structure(state_chain(None))["edges"]
    assert graph_structure(g)["nodes"] == graph_structure(state_chain(None))["nodes"]
    assert STRUCTURE_TRIGGERS not in graph_structure(state_chain(None))  # versions unchanged
    reader = DagReader(SaverView(saver), CFG)
    assert await reader.aread() == await adag_data(g, CFG)
    assert reader.outlined and reader.subscribers == {"a": ("one",), "b": ("two",), "c": ("three",)}


def test_the_cli_shows_a_pregel_threads_next_nodes_and_writers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from durable_debug.cli import main

    database = tmp_path / "p.db"
    pregel_chain(SqliteSaver(str(database))).invoke(1, CFG)
    assert main(["inspect", str(database), "--thread", "p-1"]) == 0
    out = capsys.readouterr().out
    assert "next one" in out
    assert "wrote one  next two" in out


async def test_a_full_read_without_the_graph_shows_them_too(tmp_path: Path):
    """A store read in full without the graph (the memory saver, which gives no outline; the
    CLI's ``--html``): the subscriptions come from the oldest checkpoint's debug record."""
    from durable_debug import MemorySaver
    from durable_debug.inspect.stored import SaverView

    saver = MemorySaver()
    g = pregel_chain(saver)
    await run_paused_then_resumed(g, 1)
    shown = dag_data_of(await aread_thread(SaverView(saver), CFG))
    assert marks(shown) == marks(await adag_data(g, CFG))
    assert [n["next"] for n in sorted(shown["nodes"], key=lambda n: n["id"])] == [
        ["one"],
        ["two"],
        ["three"],
        [],
    ]


async def test_the_history_table_shows_them(tmp_path: Path):
    """``history_frame`` (``%checkpoints``) builds its table from the same outline."""
    from durable_debug.inspect import ahistory_frame

    g = pregel_chain(SqliteSaver(str(tmp_path / "p.db")))
    await run_paused_then_resumed(g, 1)
    frame = await ahistory_frame(g, CFG)
    rows = list(zip(frame["step"], frame["next"], frame["writers"], strict=True))
    assert [(int(s), list(n), list(w)) for s, n, w in rows] == [
        (-1, ["one"], []),
        (0, ["two"], ["one"]),
        (1, ["three"], ["two"]),
        (2, [], ["three"]),
    ]
