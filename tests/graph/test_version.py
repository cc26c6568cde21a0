"""Graph versions: every checkpoint records the structure's fingerprint; resuming a thread
saved by another structure raises GraphChangedError listing what changed, unless allowed."""

from __future__ import annotations

import json
import operator
import os
import subprocess
import sys
import textwrap
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, Command, MemorySaver, SqliteSaver, StateGraph, interrupt
from durable_debug.checkpoint.errors import DurableDebugError, GraphChangedError
from durable_debug.graph.version import graph_structure, graph_version
from durable_debug.inspect import dag_data

GRAPH_CODE = textwrap.dedent(
    """
    import operator
    from typing import Annotated
    from typing_extensions import TypedDict
    from durable_debug import END, START, StateGraph

    class S(TypedDict, total=False):
        log: Annotated[list, operator.add]
        note: str

    def a(s):
        return {"log": ["a"]}

    def route(s):
        return "b"

    def b(s):
        return {"note": "b"}

    builder = StateGraph(S)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_conditional_edges("a", route, {"b": "b"})
    builder.add_edge("b", END)
    graph = builder.compile()
    """
)


def _concat(left: list[Any], right: list[Any]) -> list[Any]:
    return left + right


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


class S2(TypedDict, total=False):
    log: Annotated[list, _concat]


def _a(state: Any) -> dict[str, Any]:
    return {"log": ["a"]}


def _ask(state: Any) -> dict[str, Any]:
    return {"log": [interrupt("ok?")]}


def _build(saver: Any, *, extra: bool = False, schema: Any = S) -> Any:
    builder = StateGraph(schema)
    builder.add_node("a", _a)
    builder.add_node("ask", _ask)
    builder.add_edge(START, "a")
    if extra:
        builder.add_node("audit", _a)
        builder.add_edge("a", "audit")
        builder.add_edge("audit", "ask")
    else:
        builder.add_edge("a", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    if request.param == "memory":
        return MemorySaver()
    return SqliteSaver(str(tmp_path / "v.db"))


def _version_in_a_new_process(hash_seed: str) -> list[str]:
    code = (
        GRAPH_CODE + "\nimport json\nfrom durable_debug.graph.version import graph_structure, "
        "graph_version\nprint(graph_version(graph))\nprint(json.dumps(graph_structure(graph)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )
    return done.stdout.splitlines()


def test_the_version_is_the_same_in_another_process() -> None:
    first, second = _version_in_a_new_process("1"), _version_in_a_new_process("2")
    assert first == second
    assert json.loads(first[1]) == {
        "nodes": ["a", "b"],
        "edges": ["__start__ -> a", "a -.-> b", "b -> __end__"],
        "channels": ["log: _operator.add", "note"],
    }
    assert len(first[0]) == 16


def test_every_checkpoint_records_the_version(saver: Any) -> None:
    graph = _build(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"log": []}, cfg)
    history = list(graph.get_state_history(cfg))
    assert {s.metadata["graph_fingerprint"] for s in history} == {graph_version(graph)}
    # The structure is saved once, on the thread's first checkpoint.
    assert ["graph_structure" in s.metadata for s in history] == [False, False, True]


def test_resuming_with_a_changed_graph_raises_listing_the_changes(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    changed = _build(saver, extra=True)
    with pytest.raises(GraphChangedError) as caught:
        changed.invoke(None, cfg)
    error = caught.value
    assert isinstance(error, DurableDebugError)
    assert error.thread_id == "t"
    assert error.changes == [
        "node 'audit' added",
        "edge 'a -> ask' removed",
        "edge 'a -> audit' added",
        "edge 'audit -> ask' added",
    ]
    assert "Thread 't'" in str(error) and "allow_graph_change" in str(error)
    # Nothing was written: the thread still waits at the same checkpoint.
    assert changed.get_state(cfg).next == ("ask",)
    assert len(list(changed.get_state_history(cfg))) == 3


def test_a_changed_reducer_is_a_change(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    with pytest.raises(GraphChangedError) as caught:
        _build(saver, schema=S2).invoke(None, cfg)
    assert caught.value.changes == [
        "channel 'log: _operator.add' removed",
        "channel 'log: tests.graph.test_version._concat' added",
    ] or caught.value.changes == [
        "channel 'log: _operator.add' removed",
        "channel 'log: test_version._concat' added",
    ]


def test_rerunning_an_old_checkpoint_is_checked_too(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    graph = _build(saver)
    graph.invoke({"log": []}, cfg)
    first = list(graph.get_state_history(cfg))[-1].config
    with pytest.raises(GraphChangedError):
        _build(saver, extra=True).invoke(None, first)


def test_the_caller_may_opt_in_and_the_dag_marks_the_change(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    changed = _build(saver, extra=True)
    allowed = {"configurable": {"thread_id": "t", "allow_graph_change": True}}
    changed.invoke(Command(resume="yes"), allowed)
    state = changed.get_state(cfg)
    assert state.metadata["graph_fingerprint"] == graph_version(changed)
    assert state.metadata["graph_structure"] == graph_structure(changed)
    # From now on the thread is at the new version: a plain resume is accepted.
    changed.invoke({"log": []}, cfg)
    marks = [(n["step"], n["graph_changed"]) for n in dag_data(changed, cfg)["nodes"]]
    assert [step for step, flag in marks if flag] == [2]
    assert len(marks) > 3


def test_update_state_records_the_version(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    graph = _build(saver)
    graph.invoke({"log": []}, cfg)
    graph.update_state(cfg, {"log": ["x"]})
    assert graph.get_state(cfg).metadata["graph_fingerprint"] == graph_version(graph)
    with pytest.raises(GraphChangedError):
        _build(saver, extra=True).invoke(None, cfg)
