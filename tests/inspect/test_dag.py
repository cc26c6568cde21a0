"""The checkpoint DAG: a tree from parent_checkpoint_id, forks as branches, laid out in lanes."""

from __future__ import annotations

import contextlib
import json

import networkx as nx
import pytest

from durable_debug._sync import run_sync
from durable_debug.inspect import (
    acheckpoint_dag,
    adag_data,
    checkpoint_dag,
    dag_data,
    dag_layout,
)


async def _forked(seed, forks=1):
    """Notebook 03: run a → b, then fork from step 1 (value="FORKED") and run forward."""
    ns = seed("accumulate")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    target = await anext(s async for s in g.aget_state_history(cfg) if s.metadata["step"] == 1)
    for i in range(forks):
        await g.ainvoke(None, await g.aupdate_state(target.config, {"value": f"FORKED{i}"}))
    return g, cfg, target


async def test_fork_makes_a_branch_of_the_tree(seed, engine):
    g, cfg, target = await _forked(seed)
    dag = await acheckpoint_dag(g, cfg)
    assert nx.is_arborescence(dag)
    fork_point = target.config["configurable"]["checkpoint_id"]
    children = sorted(dag.successors(fork_point))
    assert len(children) == 2
    original, fork = children  # ids sort by creation time
    assert dag.nodes[original]["source"] == "loop" and dag.nodes[fork]["source"] == "update"
    # original branch: input, __start__ → c0, a → c1, b → c2; forked: update, then b.
    steps = {n: dag.nodes[n]["step"] for n in dag.nodes}
    main = nx.shortest_path(dag, min(dag.nodes), original)
    assert [steps[n] for n in main] == [-1, 0, 1, 2]
    assert [dag.nodes[n]["writers"] for n in main] == [[], ["__start__"], ["a"], ["b"]]
    (fork_child,) = dag.successors(fork)
    assert steps[fork] == 2 and steps[fork_child] == 3
    assert dag.nodes[fork_child]["writers"] == ["b"]
    # durable_debug records the update's as_node (here inferred: a ran last); LangGraph does not.
    assert dag.nodes[fork]["writers"] == (["a"] if engine == "durable_debug" else [])
    assert dag.nodes[fork_child]["next"] == [] and dag.nodes[fork]["next"] == ["b"]
    assert dag.graph["thread_id"] == "demo-1"


async def test_layout_puts_each_fork_in_a_new_lane_in_creation_order(seed):
    g, cfg, target = await _forked(seed, forks=2)
    dag = await acheckpoint_dag(g, cfg)
    layout = dag_layout(dag)
    fork_point = target.config["configurable"]["checkpoint_id"]
    first_run, fork_1, fork_2 = sorted(dag.successors(fork_point))
    assert layout[min(dag.nodes)] == (0, 0)
    assert layout[first_run] == (3, 0)  # the first run's branch stays in lane 0
    assert layout[fork_1] == (3, 1) and layout[fork_2] == (3, 2)
    assert layout[next(iter(dag.successors(fork_2)))] == (4, 2)
    assert dag_layout(dag) == layout  # deterministic


def test_layout_of_a_hand_made_tree():
    """Lanes follow branch creation (ids), not depth-first order."""
    dag = nx.DiGraph([("1", "2"), ("2", "3"), ("3", "4"), ("2", "5"), ("3", "6"), ("5", "7")])
    layout = dag_layout(dag)
    assert [layout[n].lane for n in "1234"] == [0, 0, 0, 0]
    assert (layout["5"], layout["7"]) == ((2, 1), (3, 1))  # branch started at 5 (older)
    assert layout["6"] == (3, 2)  # branch started at 6 (younger)


async def test_dag_data_is_the_protocol_shape(seed):
    g, cfg, _target = await _forked(seed)
    data = await adag_data(g, cfg)
    json.dumps(data, allow_nan=False)
    assert data["thread_id"] == "demo-1"
    assert (data["depth"], data["lanes"]) == (5, 2)
    keys = {
        "id",
        "parent",
        "broken_parent",
        "step",
        "source",
        "next",
        "writers",
        "interrupts",
        "errors",
        "graph_changed",
        "findings",
        "is_head",
        "is_latest",
        "depth",
        "lane",
        "created_at",
    }
    assert all(set(node) == keys for node in data["nodes"])
    order = [(n["depth"], n["lane"]) for n in data["nodes"]]
    assert order == sorted(order)
    heads = [n for n in data["nodes"] if n["is_head"]]
    assert len(heads) == 2
    latest = [n for n in data["nodes"] if n["is_latest"]]
    assert len(latest) == 1 and latest[0]["lane"] == 1 and latest[0]["is_head"]


async def test_interrupts_and_errors_are_marked(seed):
    ns = seed("resume")
    g, cfg = ns["g"], ns["cfg"]
    with contextlib.suppress(RuntimeError):
        await g.ainvoke({"log": []}, cfg)
    failed = [n for n in (await adag_data(g, cfg))["nodes"] if n["errors"]]
    assert [(n["step"], n["next"]) for n in failed] == [(2, ["c"])]

    ns = seed("rerun_rule")
    await ns["g"].ainvoke({"prep": "", "decision": ""}, ns["cfg"])
    nodes = (await adag_data(ns["g"], ns["cfg"]))["nodes"]
    assert [(n["next"], n["interrupts"]) for n in nodes if n["interrupts"]] == [(["gate"], 1)]
    await ns["g"].ainvoke(ns["Command"](resume="yes"), ns["cfg"])
    nodes = (await adag_data(ns["g"], ns["cfg"]))["nodes"]
    assert [n for n in nodes if n["interrupts"]] == []  # answered: no longer pending


def test_sync_twin_from_plain_sync_code(seed):
    ns = seed("accumulate")
    run_sync(ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"]))  # async nodes need ainvoke
    assert len(checkpoint_dag(ns["g"], ns["cfg"])) == 4


async def test_sync_twin_called_from_async_code(seed):
    ns = seed("accumulate")
    await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    assert len(checkpoint_dag(ns["g"], ns["cfg"])) == 4  # a running loop in this thread


# --- a damaged store: parent links that loop ---------------------------


def looped_thread(tmp_path, how: str):
    """A SQLite thread of three checkpoints (input, after START, after ``fill``) whose parent
    links were damaged: ``self`` makes the middle one its own parent, ``descendant`` makes the
    first one a child of the last. Returns the graph, its config and the ids, oldest first."""
    import sqlite3

    from typing_extensions import TypedDict

    from durable_debug import END, START, SqliteSaver, StateGraph

    class S(TypedDict):
        a: str

    saver = SqliteSaver(tmp_path / "looped.db")
    g = (
        StateGraph(S)
        .add_node("fill", lambda s: {"a": s["a"] + "!"})
        .add_edge(START, "fill")
        .add_edge("fill", END)
        .compile(checkpointer=saver)
    )
    cfg = {"configurable": {"thread_id": "looped"}}
    g.invoke({"a": "x"}, cfg)
    with contextlib.closing(sqlite3.connect(saver.path)) as db:
        ids = [r[0] for r in db.execute("SELECT checkpoint_id FROM checkpoints ORDER BY 1")]
        child, parent = (ids[1], ids[1]) if how == "self" else (ids[0], ids[2])
        db.execute(
            "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE checkpoint_id = ?",
            (parent, child),
        )
        db.commit()
    return g, cfg, ids, saver


@pytest.mark.parametrize("how", ["self", "descendant"])
def test_a_parent_loop_is_a_marked_broken_link_everywhere_it_is_read(tmp_path, how):
    from durable_debug.inspect import checkpoint_detail, history_frame
    from durable_debug.inspect.text import short_id, tree_text

    g, cfg, ids, saver = looped_thread(tmp_path, how)
    try:
        child, parent = (ids[1], ids[1]) if how == "self" else (ids[0], ids[2])
        data = dag_data(g, cfg)
        nodes = {n["id"]: n for n in data["nodes"]}
        assert set(nodes) == set(ids)
        assert nodes[child]["broken_parent"] == parent and nodes[child]["parent"] is None
        assert [n["id"] for n in data["nodes"] if n["broken_parent"]] == [child]
        dag = checkpoint_dag(g, cfg)
        assert nx.is_directed_acyclic_graph(dag) and not dag.has_edge(parent, child)
        text = tree_text(data)
        assert f"parent {short_id(parent)} loops back" in text
        assert len(history_frame(g, cfg)) == 3
        for checkpoint_id in ids:
            assert checkpoint_detail(g, cfg, checkpoint_id)["id"] == checkpoint_id
    finally:
        saver.close()


def test_loop_links_breaks_each_loop_once_at_its_oldest_checkpoint():
    from durable_debug.inspect.thread import loop_links

    assert loop_links({"a": None, "b": "a", "c": "b"}) == {}
    assert loop_links({"a": None, "b": "b", "c": "b"}) == {"b": "b"}
    assert loop_links({"a": "c", "b": "a", "c": "b", "d": "c"}) == {"a": "c"}
    assert loop_links({"a": "b", "b": "a", "x": "y", "y": "x", "z": "missing"}) == {
        "a": "b",
        "x": "y",
    }
    chain = {str(i).zfill(6): str(i - 1).zfill(6) for i in range(1, 50_000)}
    chain["000000"] = "049999"
    assert loop_links(chain) == {"000000": "049999"}
