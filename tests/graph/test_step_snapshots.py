"""Each step's checkpoint copies the one before and reads again only the channels the step
updated. What the saver is handed must be what a whole snapshot of the channels gives: a
graph whose keys are all engine channels (snapshots taken step by step) and the same graph
with one key declared through a public channel class (``durable_debug.channels``, whose
snapshots are taken whole) hand their saver the same checkpoints, step for step, through
Sends, a join, a deferred node, an interrupt and its resume, and a second input on the
thread; and through a loop of steps of one task each."""

from __future__ import annotations

import datetime as dt
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

import durable_debug as dd
from durable_debug.channels import LastValue


class Engine(TypedDict):
    log: Annotated[list, operator.add]
    last: str


class Public(TypedDict):
    log: Annotated[list, operator.add]
    last: Annotated[str, LastValue(str)]


class RecordingSaver(dd.MemorySaver):
    """A MemorySaver keeping a copy of every checkpoint it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[dict[str, Any]] = []

    async def aput_step(
        self, config: Any, task_writes: Any, checkpoint: Any, metadata: Any, new_versions: Any
    ) -> Any:
        self.handed.append(
            {
                "values": dict(checkpoint["channel_values"]),
                "versions": dict(checkpoint["channel_versions"]),
                "updated": checkpoint["updated_channels"],
                "new": sorted(new_versions),
                "ts": checkpoint["ts"],
            }
        )
        return await super().aput_step(config, task_writes, checkpoint, metadata, new_versions)


def build(schema: type, saver: RecordingSaver) -> Any:
    """START → a → (Sends to w ×2, b, c); b and c join into j; w and j → d (deferred); j
    asks a question first."""

    def node(name: str) -> Any:
        def run(state: Any) -> dict[str, Any]:
            if name == "j":
                dd.interrupt("go on?")
            return {"log": [name], "last": name} if name in ("a", "d") else {"log": [name]}

        return run

    def fan(state: Any) -> list[Any]:
        return [dd.Send("w", {"log": [f"s{i}"]}) for i in range(2)]

    builder = dd.StateGraph(schema)
    for name in ("a", "b", "c", "w", "j"):
        builder.add_node(name, node(name))
    builder.add_node("d", node("d"), defer=True)
    builder.add_edge(dd.START, "a")
    builder.add_conditional_edges("a", fan, ["w"])
    builder.add_edge("a", "b").add_edge("a", "c").add_edge(["b", "c"], "j")
    builder.add_edge("w", "d").add_edge("j", "d").add_edge("d", dd.END)
    return builder.compile(checkpointer=saver)


def comparable(handed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checkpoints without what differs between two runs by design (versions carry the
    checkpoint id's hash, timestamps the clock): which channels changed, and the values."""
    return [
        {
            "values": h["values"],
            "updated": h["updated"],
            "new": h["new"],
            "versions": sorted(h["versions"]),
        }
        for h in handed
    ]


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_step_snapshots_equal_whole_snapshots(durability: str) -> None:
    runs = {}
    for schema in (Engine, Public):
        saver = RecordingSaver()
        graph = build(schema, saver)
        cfg = {"configurable": {"thread_id": "t"}}
        paused = graph.invoke({"log": [], "last": ""}, cfg, durability=durability)
        assert [i.value for i in paused["__interrupt__"]] == ["go on?"]
        done = graph.invoke(dd.Command(resume="yes"), cfg, durability=durability)
        assert done["last"] == "d" and done["log"].count("w") == 2
        again = graph.invoke({"log": ["again"]}, cfg, durability=durability)
        assert "__interrupt__" in again
        runs[schema.__name__] = saver.handed
    assert runs["Engine"], "the saver was handed no checkpoint"
    assert comparable(runs["Engine"]) == comparable(runs["Public"])


def build_loop(schema: type, saver: RecordingSaver) -> Any:
    """START → a → b → (a again, or END once the log has six entries): every step one task,
    each step's trigger written by the step before; b also writes a key no node reads."""

    def a(state: Any) -> dict[str, Any]:
        return {"log": ["a"]}

    def b(state: Any) -> dict[str, Any]:
        return {"log": ["b"], "last": f"b{len(state['log'])}"}

    def again(state: Any) -> str:
        return dd.END if len(state["log"]) >= 6 else "a"

    builder = dd.StateGraph(schema)
    builder.add_node("a", a).add_node("b", b)
    builder.add_edge(dd.START, "a").add_edge("a", "b")
    builder.add_conditional_edges("b", again, ["a", dd.END])
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_lone_task_steps_equal_whole_snapshots(durability: str) -> None:
    """Steps of one task each (a loop): the trigger a step cleared and the one it wrote are
    saved as a whole snapshot has them, run after run on one thread."""
    runs = {}
    for schema in (Engine, Public):
        saver = RecordingSaver()
        graph = build_loop(schema, saver)
        cfg = {"configurable": {"thread_id": "t"}}
        first = graph.invoke({"log": [], "last": ""}, cfg, durability=durability)
        assert first == {"log": ["a", "b", "a", "b", "a", "b"], "last": "b5"}
        second = graph.invoke({"log": ["x"]}, cfg, durability=durability)
        assert second["log"][-3:] == ["x", "a", "b"] and second["last"] == "b8"
        runs[schema.__name__] = saver.handed
    assert len(runs["Engine"]) >= 2
    assert comparable(runs["Engine"]) == comparable(runs["Public"])


def test_checkpoint_timestamps_are_utc_iso_times_in_order() -> None:
    saver = RecordingSaver()
    graph = build(Engine, saver)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"log": [], "last": ""}, cfg)
    stamps = [h["ts"] for h in saver.handed]
    parsed = [dt.datetime.fromisoformat(ts) for ts in stamps]
    assert all(p.utcoffset() == dt.timedelta(0) for p in parsed)
    assert all(ts.endswith("+00:00") for ts in stamps)
    assert parsed == sorted(parsed)
    for ts, p in zip(stamps, parsed, strict=True):
        assert ts == p.isoformat()  # written as datetime.isoformat() writes it
