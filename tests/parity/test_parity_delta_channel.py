"""``DeltaChannel``: a reducer key whose reducer takes each step's writes as one batch, read
back the same through runs, history, streams and ``Overwrite``, as in LangGraph."""

# No ``from __future__ import annotations``: the state class below is built in the scenario,
# its annotations naming the library's DeltaChannel as an object.
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, durable_api, langgraph_api, observe
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def names(api: Api) -> tuple[Any, Any]:
    if api.name == "langgraph":
        from langgraph.channels.delta import DeltaChannel
        from langgraph.types import Overwrite
    else:
        from durable_debug.channels.delta import DeltaChannel
        from durable_debug.types import Overwrite
    return DeltaChannel, Overwrite


def extend(state: list[Any], writes: list[Any]) -> list[Any]:
    out = list(state)
    for write in writes:
        out.extend(write if isinstance(write, list) else [write])
    return out


def merge(state: dict[str, Any], writes: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(state)
    for write in writes:
        out.update(write)
    return out


def test_a_delta_channel_reads_like_a_reducer_key_through_runs_and_history_but_saves_whole_values():
    def scenario(api: Api, trace: Trace) -> None:
        DeltaChannel, Overwrite = names(api)

        class State(TypedDict):
            items: Annotated[list, DeltaChannel(extend)]
            d: Annotated[dict, DeltaChannel(merge, snapshot_frequency=1)]

        g = (
            api.StateGraph(State)
            .add_node("a", lambda s: {"items": ["a"], "d": {"a": 1}})
            .add_node("b", lambda s: {"items": "b"})
            .add_node("c", lambda s: {"items": Overwrite(["z"])})
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .add_edge("a", "c")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}}
        trace.note("first run", g.invoke({"items": ["x"]}, cfg))
        trace.note("second run", g.invoke({"items": ["y"]}, cfg))
        history = list(g.get_state_history(cfg))
        trace.note("history", [(s.values, s.next, s.metadata["step"]) for s in history])
        # The writes since each key's last whole save, counted in the metadata as LangGraph
        # counts them (graph/delta_counters.py), though this engine saves the whole value.
        trace.note(
            "delta counters",
            [s.metadata.get("counters_since_delta_snapshot") for s in history],
        )
        trace.note("values", list(g.stream({"d": {"q": 2}}, cfg, stream_mode="values")))
        trace.call(
            "two overwrites",
            lambda: channel_with_two_overwrites(DeltaChannel, Overwrite),
            message=False,
        )
        trace.call("no snapshots", DeltaChannel, extend, snapshot_frequency=0)

    ours = observe(scenario, durable_api())
    theirs = observe(scenario, langgraph_api())
    assert ours == theirs
    assert all(counters for counters in ours["delta counters"])
    assert ours["first run"] == {"items": ["z"], "d": {"a": 1}}
    assert ours["two overwrites"] == {"raised": "InvalidUpdateError"}


def channel_with_two_overwrites(DeltaChannel: Any, Overwrite: Any) -> Any:
    channel = DeltaChannel(extend).from_checkpoint(None)
    channel.update([Overwrite([1]), Overwrite([2])])
    return channel.get()


def merge_files(state: dict[str, Any], writes: list[dict[str, Any]]) -> dict[str, Any]:
    """A filesystem-style reducer: a None value deletes its key."""
    out = dict(state)
    for write in writes:
        for key, value in write.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
    return out


def test_a_dict_delta_channel_reads_its_deletions_as_langgraph_does():
    """Files written over three runs, then one deleted in a later step: every checkpoint of
    the thread, its history and the forks made from it read the same on both."""

    def scenario(api: Api, trace: Trace) -> None:
        DeltaChannel, _ = names(api)

        class State(TypedDict):
            files: Annotated[dict[str, str], DeltaChannel(merge_files)]

        turn = {"n": 0}

        def write_file(state: State) -> dict[str, Any]:
            turn["n"] += 1
            return {"files": {f"/doc_{turn['n']}.txt": f"turn {turn['n']}"}}

        def delete_file(state: State) -> dict[str, Any]:
            return {"files": {"/doc_1.txt": None, "/missing.txt": None}}

        g = (
            api.StateGraph(State)
            .add_node("write_file", write_file)
            .add_node("delete_file", delete_file)
            .add_edge(api.START, "write_file")
            .add_edge("write_file", "delete_file")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "fs"}}
        for run in range(3):
            trace.note(f"run {run}", g.invoke({"files": {}}, cfg))
        history = list(g.get_state_history(cfg))
        trace.note("history", [(s.values, s.next, s.metadata["step"]) for s in history])
        before_delete = next(s for s in history if s.next == ("delete_file",))
        fork = g.update_state(before_delete.config, {"files": {"/doc_2.txt": None}})
        trace.note("forked", g.get_state(fork).values)
        trace.note("fork run", g.invoke(None, fork))

    ours = observe(scenario, durable_api())
    theirs = observe(scenario, langgraph_api())
    assert ours == theirs
    assert ours["run 2"] == {"files": {"/doc_2.txt": "turn 2", "/doc_3.txt": "turn 3"}}
