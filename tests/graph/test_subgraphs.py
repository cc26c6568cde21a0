"""Subgraph behaviour durable_debug has beyond what the parity tests compare: a fork made
inside a finished subgraph's namespace, run with a config that names its namespace but no
``checkpoint_map``, runs on its own, the inspect layer reads a namespace
through the graph that wrote it, and a namespace no node can explain is a clear error."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from durable_debug import Command, MemorySaver, StateGraph, interrupt
from durable_debug import inspect as ddi


class Doc(TypedDict):
    draft: str
    log: Annotated[list, operator.add]


def write(state: Doc) -> dict:
    return {"draft": "long draft", "log": ["write"]}


def ask(state: Doc) -> dict:
    verdict = interrupt({"draft": state["draft"]})
    return {"draft": f"{state['draft']} [{verdict}]", "log": ["ask"]}


def app() -> object:
    review = StateGraph(Doc).add_node("write", write).add_node("ask", ask)
    review = review.add_edge("__start__", "write").add_edge("write", "ask").compile()
    builder = StateGraph(Doc).add_node("review", review).add_edge("__start__", "review")
    return builder.compile(checkpointer=MemorySaver())


def finished(graph: object) -> str:
    """Run thread "t" through its interrupt to the end; return the subgraph's namespace."""
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"draft": "", "log": []}, cfg)
    namespace = graph.get_state(cfg).tasks[0].state["configurable"]["checkpoint_ns"]
    graph.invoke(Command(resume="ok"), cfg)
    return namespace


def test_a_fork_inside_a_finished_subgraph_runs_that_subgraph():
    graph = app()
    namespace = finished(graph)
    inside = {"configurable": {"thread_id": "t", "checkpoint_ns": namespace}}
    before_ask = next(s for s in graph.get_state_history(inside) if s.next == ("ask",))
    forked = graph.update_state(before_ask.config, {"draft": "short draft"})
    # Without its checkpoint_map (which runs the whole graph, as in LangGraph).
    address = ("thread_id", "checkpoint_ns", "checkpoint_id")
    fork = {"configurable": {k: forked["configurable"][k] for k in address}}

    paused = graph.invoke(None, fork)
    assert [i.value for i in paused["__interrupt__"]] == [{"draft": "short draft"}]
    done = graph.invoke(Command(resume="fine"), fork)
    assert done == {"draft": "short draft [fine]", "log": ["write", "ask"]}
    # The parent thread is untouched: its run finished with the first answer.
    parent = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert parent["draft"] == "long draft [ok]"
    # The fork is a branch of the subgraph's own tree, read through the subgraph.
    frame = ddi.history_frame(graph, inside)
    assert frame.attrs == {"thread_id": "t", "checkpoint_ns": namespace}
    assert ddi.dag_data(graph, inside)["checkpoint_ns"] == namespace
    assert list(frame["source"]) == ["input", "loop", "loop", "loop", "update", "loop"]
    assert list(frame["next"])[:3] == [("__start__",), ("write",), ("ask",)]


def test_a_namespace_no_node_runs_is_read_with_the_graph_refused_for_writes_run_at_the_top():
    graph = app()
    finished(graph)
    bad = {"configurable": {"thread_id": "t", "checkpoint_ns": "nope:123"}}
    # As LangGraph: a namespace no node's graph is found for (a graph a tool runs) is read
    # with this graph's channels; here nothing was saved there.
    assert graph.get_state(bad).values == {}
    assert list(graph.get_state_history(bad)) == []
    with pytest.raises(
        ValueError, match=r"Subgraph nope not found. Namespace 'nope:123': node 'nope' of graph"
    ):
        graph.update_state(bad, {"draft": "x"})
    # A run given it is the graph's own at the top level (LangGraph drops the namespace):
    # the thread is finished, so it has nothing to run.
    top = {"configurable": {"thread_id": "t"}}
    newest = graph.get_state(top).config
    assert graph.invoke(None, bad) == graph.get_state(top).values
    assert graph.get_state(top).config == newest


def test_a_subgraph_node_of_a_sync_run_runs_on_its_callers_thread() -> None:
    """A compiled graph added as a node runs in the enclosing run's thread and event loop
    (no private loop in a thread of its own): its sync nodes see the caller's thread."""
    import threading

    seen: dict[str, int] = {}

    def note(name: str) -> Any:
        def node(state: Doc) -> dict:
            seen[name] = threading.get_ident()
            return {"log": [name]}

        return node

    inner = StateGraph(Doc).add_node("inner", note("inner")).add_edge("__start__", "inner")
    builder = StateGraph(Doc).add_node("outer", note("outer")).add_node("sub", inner.compile())
    builder = builder.add_edge("__start__", "outer").add_edge("outer", "sub")
    graph = builder.compile(checkpointer=MemorySaver())
    out = graph.invoke({"draft": "", "log": []}, {"configurable": {"thread_id": "t"}})
    assert out["log"][-1] == "inner"
    assert seen["inner"] == seen["outer"]
