"""Graph versions: every checkpoint's debug record holds the structure's fingerprint. As in
LangGraph, a thread saved by another structure resumes; a change that can lose saved state is
a finding, and raises GraphChangedError listing what changed under strict=True."""

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

from durable_debug import (
    END,
    START,
    Command,
    DurableDebugWarning,
    MemorySaver,
    SqliteSaver,
    StateGraph,
    interrupt,
)
from durable_debug._sync import run_sync
from durable_debug.checkpoint.errors import DurableDebugError, GraphChangedError
from durable_debug.checkpoint.records import aread_records
from durable_debug.graph.version import graph_structure, graph_version
from durable_debug.inspect import dag_data, findings

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


def _build(
    saver: Any,
    *,
    extra: bool = False,
    schema: Any = S,
    strict: bool = False,
    without_ask: bool = False,
) -> Any:
    builder = StateGraph(schema)
    builder.add_node("a", _a)
    builder.add_edge(START, "a")
    if without_ask:
        builder.add_edge("a", END)
        return builder.compile(checkpointer=saver, strict=strict)
    builder.add_node("ask", _ask)
    if extra:
        builder.add_node("audit", _a)
        builder.add_edge("a", "audit")
        builder.add_edge("audit", "ask")
    else:
        builder.add_edge("a", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver, strict=strict)


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


def records(saver: Any, thread: str = "t") -> list[dict[str, Any]]:
    """The thread's debug records, newest checkpoint first (as history lists them)."""
    found = run_sync(aread_records(saver, thread))
    return [found[key] for key in sorted(found, key=lambda k: k[1], reverse=True)]


def test_every_checkpoint_records_the_version(saver: Any) -> None:
    graph = _build(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"log": []}, cfg)
    history = list(graph.get_state_history(cfg))
    # in the debug record, never in LangGraph's metadata
    assert all(set(s.metadata) == {"source", "step", "parents"} for s in history)
    kept = records(saver)
    assert len(kept) == len(history) == 3
    assert {r["graph_fingerprint"] for r in kept} == {graph_version(graph)}
    # The structure is saved once, on the thread's first checkpoint.
    assert ["graph_structure" in r for r in kept] == [False, False, True]


def test_resuming_with_an_added_node_runs_and_starts_a_version(saver: Any) -> None:
    """LangGraph resumes a thread whose graph gained a node and edges; so do we (strict
    too: nothing saved can be lost), and the first checkpoint of the new version carries its
    structure, which the DAG marks."""
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    changed = _build(saver, extra=True, strict=True)
    out = changed.invoke(Command(resume="yes"), cfg)
    assert out == {"log": ["a", "yes"]}
    kept = records(saver)
    assert kept[0]["graph_fingerprint"] == graph_version(changed)
    assert kept[0]["graph_structure"] == graph_structure(changed)
    assert "findings" not in kept[0]
    assert findings(changed, cfg) == {}
    marks = [(n["step"], n["graph_changed"]) for n in dag_data(changed, cfg)["nodes"]]
    assert [step for step, flag in marks if flag] == [2]


def test_a_changed_reducer_is_a_finding_and_strict_refuses_it(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    with pytest.raises(GraphChangedError) as caught:
        _build(saver, schema=S2, strict=True).invoke(Command(resume="yes"), cfg)
    error = caught.value
    assert isinstance(error, DurableDebugError)
    assert error.thread_id == "t"
    assert error.changes in (
        [
            "channel 'log: _operator.add' removed",
            "channel 'log: tests.graph.test_version._concat' added",
        ],
        ["channel 'log: _operator.add' removed", "channel 'log: test_version._concat' added"],
    )
    assert "Thread 't'" in str(error) and "allow_graph_change" in str(error)
    # Nothing was written: the thread still waits at the same checkpoint.
    assert _build(saver).get_state(cfg).next == ("ask",)
    assert len(records(saver)) == 3
    # config allow_graph_change=False refuses it as strict does
    refused = {"configurable": {"thread_id": "t", "allow_graph_change": False}}
    with pytest.raises(GraphChangedError):
        _build(saver, schema=S2).invoke(Command(resume="yes"), refused)

    # by default, as LangGraph: it runs, with a finding naming the change
    changed = _build(saver, schema=S2)
    with pytest.warns(DurableDebugWarning, match="channel 'log: _operator.add' removed"):
        assert changed.invoke(Command(resume="yes"), cfg) == {"log": ["a", "yes"]}
    (found,) = findings(changed, cfg).values()
    assert [f.code for f in found] == ["graph-changed"]
    assert "channel 'log: _operator.add' removed or changed" in found[0].message


def test_a_removed_node_the_checkpoint_has_next_is_a_finding(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    with pytest.raises(GraphChangedError, match="node 'ask' removed"):
        _build(saver, without_ask=True, strict=True).invoke(None, cfg)
    changed = _build(saver, without_ask=True)
    with pytest.warns(DurableDebugWarning, match="node 'ask', which the checkpoint has next"):
        changed.invoke(None, cfg)
    (found,) = findings(changed, cfg).values()
    assert [f.code for f in found] == ["graph-changed"]


def test_rerunning_an_old_checkpoint_is_checked_too(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    graph = _build(saver)
    graph.invoke({"log": []}, cfg)
    first = list(graph.get_state_history(cfg))[-1].config
    with pytest.raises(GraphChangedError):
        _build(saver, schema=S2, strict=True).invoke(None, first)


def test_the_caller_may_opt_in_and_the_dag_marks_the_change(saver: Any) -> None:
    cfg = {"configurable": {"thread_id": "t"}}
    _build(saver).invoke({"log": []}, cfg)
    changed = _build(saver, schema=S2, strict=True)
    allowed = {"configurable": {"thread_id": "t", "allow_graph_change": True}}
    changed.invoke(Command(resume="yes"), allowed)
    kept = records(saver)
    assert kept[0]["graph_fingerprint"] == graph_version(changed)
    assert kept[0]["graph_structure"] == graph_structure(changed)
    assert "findings" not in kept[0]  # allowed explicitly: no finding
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
    assert records(saver)[0]["graph_fingerprint"] == graph_version(graph)
    assert "graph_fingerprint" not in graph.get_state(cfg).metadata
    with pytest.raises(GraphChangedError):
        _build(saver, schema=S2, strict=True).invoke(None, cfg)
