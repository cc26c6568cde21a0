"""The sync ``stream()`` drives the run step by step from the caller's thread; the run's
context (the thread's lease it holds, which a subgraph's run shares) lasts from one step to
the next, so a subgraph that runs after the first step streams as under ``astream``."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph


class State(TypedDict):
    msgs: Annotated[list, operator.add]


def parent_then_subgraph() -> object:
    sub = StateGraph(State).add_node("s", lambda s: {"msgs": ["s"]}).add_edge(START, "s").compile()
    return (
        StateGraph(State)
        .add_node("p", lambda s: {"msgs": ["p"]})
        .add_node("sub", sub)
        .add_edge(START, "p")
        .add_edge("p", "sub")
        .compile(checkpointer=MemorySaver())
    )


def test_a_subgraph_after_the_first_step_streams_in_the_runs_lease() -> None:
    graph = parent_then_subgraph()
    cfg = {"configurable": {"thread_id": "t"}}
    assert list(graph.stream({"msgs": []}, cfg)) == [
        {"p": {"msgs": ["p"]}},
        {"sub": {"msgs": ["p", "s"]}},
    ]
    # The lease went back when the stream ended: the thread runs again, also streaming the
    # subgraph's own chunks.
    values = list(graph.stream({"msgs": []}, cfg, stream_mode="values"))
    assert values[-1] == graph.get_state(cfg).values
    levels = [ns for ns, _ in graph.stream({"msgs": []}, cfg, subgraphs=True)]
    assert [ns[0].partition(":")[0] if ns else None for ns in levels] == [None, "sub", None]


def test_leaving_a_sync_stream_early_gives_the_thread_back() -> None:
    graph = parent_then_subgraph()
    cfg = {"configurable": {"thread_id": "t"}}
    for _chunk in graph.stream({"msgs": []}, cfg):
        break
    assert graph.invoke(None, cfg)["msgs"] == ["p", "p", "s"]


def test_a_script_failing_inside_a_sync_stream_exits() -> None:
    """A stream left open when a script fails is dropped at exit: the process ends with the
    error instead of waiting on a loop thread that no longer runs."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        from durable_debug import START, StateGraph
        from typing_extensions import TypedDict

        class S(TypedDict, total=False):
            x: int

        g = (
            StateGraph(S)
            .add_node("a", lambda s: {"x": 1})
            .add_node("b", lambda s: {"x": 2})
            .add_edge(START, "a")
            .add_edge("a", "b")
            .compile()
        )
        chunks = [c["missing"] for c in g.stream({}, stream_mode="tasks")]
        """
    )
    # the timeout only guards against a hang: the process ends at once
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert "KeyError: 'missing'" in done.stderr


def test_a_sync_stream_dropped_on_the_runner_loop_closes_without_a_hang() -> None:
    """A sync stream left unfinished may be garbage collected by code that runs on the loop
    it steps on (a node, a callback): closing it there must not wait for that loop from its
    own thread. Its closing runs on the loop instead, and gives the thread's lease back."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import operator
        from typing import Annotated
        from typing_extensions import TypedDict
        from durable_debug import START, MemorySaver, StateGraph
        from durable_debug._sync import run_sync

        class S(TypedDict):
            msgs: Annotated[list, operator.add]

        g = (
            StateGraph(S)
            .add_node("a", lambda s: {"msgs": ["a"]})
            .add_node("b", lambda s: {"msgs": ["b"]})
            .add_edge(START, "a")
            .add_edge("a", "b")
            .compile(checkpointer=MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        stream = g.stream({"msgs": []}, cfg)
        print(next(stream))
        held = [stream]
        del stream

        async def drop() -> None:
            held.clear()  # the last reference: the stream is closed here, on the loop

        run_sync(drop())
        print(g.invoke(None, cfg)["msgs"])
        """
    )
    # the timeout only guards against the hang this test is about
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["{'a': {'msgs': ['a']}}", "['a', 'b']"]
