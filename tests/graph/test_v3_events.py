"""v3 event streaming (``graph/v3_*.py``, public as ``durable_debug.stream``) on real graphs:
channels (lanes, single subscriber, tee, closing), transformer registration (conflicts, bad
projections, ``before_builtins``, async-only transformers, scheduled work), interleaving,
early exit, and the calls refused. ``tests/parity/test_parity_stream_events_v3.py`` compares
the projections with LangGraph's."""

from __future__ import annotations

import asyncio
import operator
import sys
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from durable_debug import END, START, MemorySaver, StateGraph
from durable_debug.config import get_stream_writer
from durable_debug.stream import StreamChannel, StreamTransformer
from durable_debug.stream.transformers import CustomTransformer


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def chain(*names: str, **compile: Any) -> Any:
    def node(name: str) -> Any:
        def run(state: State) -> dict[str, Any]:
            get_stream_writer()(name)
            return {"items": [name]}

        return run

    builder = StateGraph(State)
    previous = START
    for name in names:
        builder.add_node(name, node(name))
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile(**compile)


class Recorder(StreamTransformer):
    """Records the methods it sees; a named channel of its own."""

    required_stream_modes = ("custom",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self.seen: list[str] = []
        self.out: StreamChannel[str] = StreamChannel("seen")

    def init(self) -> dict[str, Any]:
        return {"seen": self.out}

    def process(self, event: Any) -> bool:
        self.seen.append(event["method"])
        if event["method"] == "custom":
            self.out.push(event["params"]["data"])
        return True


def test_channel_lanes_and_subscription() -> None:
    loose: StreamChannel[int] = StreamChannel()
    with pytest.raises(TypeError, match="not been bound"):
        iter(loose)
    with pytest.raises(ValueError, match="positive"):
        StreamChannel(maxlen=0)
    run = chain("a", "b").stream_events({"items": []}, version="v3")
    with pytest.raises(TypeError, match="use 'for'"):
        run.values.__aiter__()
    values = iter(run.values)
    with pytest.raises(RuntimeError, match="already has a subscriber"):
        iter(run.values)
    assert [v["items"] for v in values] == [[], ["a"], ["a", "b"]]
    with pytest.raises(AttributeError, match="registered projections: .*values"):
        _ = run.updates


def test_tee_and_closed_channel() -> None:
    run = chain("a").stream_events({"items": []}, version="v3")
    first, second = run.values.tee(2)
    assert list(first) == list(second) == [{"items": []}, {"items": ["a"]}]
    with pytest.raises(RuntimeError, match="closed"):
        run.values.push({"items": ["late"]})
    with pytest.raises(ValueError, match="n >= 1"):
        chain("a").stream_events({"items": []}, version="v3").values.tee(0)


def test_named_channel_is_forwarded_to_the_main_log() -> None:
    graph = chain("a", "b", transformers=[Recorder])
    run = graph.stream_events({"items": []}, version="v3")
    events = list(run)
    forwarded = [e["params"]["data"] for e in events if e["method"] == "custom:seen"]
    assert forwarded == ["a", "b"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert "seen" in run.extensions and "seen" not in vars(run)


def test_registration_errors() -> None:
    graph = chain("a")

    class Clash(StreamTransformer):
        def init(self) -> dict[str, Any]:
            return {"values": StreamChannel()}

        def process(self, event: Any) -> bool:
            return True

    with pytest.raises(ValueError, match=r"'values' \(owned by ValuesTransformer\)"):
        graph.stream_events({"items": []}, version="v3", transformers=[Clash])

    class NotADict(Clash):
        def init(self) -> Any:
            return ["values"]

    with pytest.raises(TypeError, match="must return a dict, got list"):
        graph.stream_events({"items": []}, version="v3", transformers=[NotADict])
    with pytest.raises(TypeError, match="pre-built instance Recorder"):
        graph.stream_events({"items": []}, version="v3", transformers=[Recorder()])
    with pytest.raises(TypeError, match="scope-aware callables, got int"):
        graph.stream_events({"items": []}, version="v3", transformers=[3])
    with pytest.raises(TypeError, match="stream_mode"):
        graph.stream_events({"items": []}, version="v3", stream_mode="values")
    with pytest.raises(NotImplementedError, match=r"version='v2'\) is not supported"):
        graph.stream_events({"items": []})


def test_before_builtins_transformer_sees_events_first() -> None:
    order: list[str] = []

    class Early(StreamTransformer):
        before_builtins = True

        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            if event["method"] == "values":
                order.append("early")
                event["params"]["data"] = {"items": ["redacted"]}
            return True

    run = chain("a").stream_events({"items": []}, version="v3", transformers=[Early])
    assert list(run.values) == [{"items": ["redacted"]}] * 2
    assert order == ["early", "early"]


def test_suppressed_events_and_interleave() -> None:
    class DropCustom(StreamTransformer):
        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            return event["method"] != "custom"

    graph = chain("a", "b", transformers=[CustomTransformer, DropCustom])
    run = graph.stream_events({"items": []}, version="v3")
    assert "custom" not in {e["method"] for e in run}
    run = graph.stream_events({"items": []}, version="v3")
    assert list(run.interleave("values", "custom")) == [
        ("values", {"items": []}),
        ("custom", "a"),
        ("values", {"items": ["a"]}),
        ("custom", "b"),
        ("values", {"items": ["a", "b"]}),
    ]
    run = graph.stream_events({"items": []}, version="v3")
    with pytest.raises(KeyError):
        list(run.interleave("nothing"))


def test_early_exit_ends_the_run() -> None:
    saver = MemorySaver()
    graph = chain("a", "b", "c", checkpointer=saver)
    config = {"configurable": {"thread_id": "early"}}
    with graph.stream_events({"items": []}, config, version="v3") as run:
        for values in run.values:
            if values["items"] == ["a"]:
                break
    assert run.output == {"items": ["a"]}
    assert graph.get_state(config).values["items"] != ["a", "b", "c"]


def test_sync_lane_refuses_async_transformers() -> None:
    class Scheduling(StreamTransformer):
        requires_async = True

        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            return True

    with pytest.raises(RuntimeError, match="Scheduling requires an async run"):
        chain("a").stream_events({"items": []}, version="v3", transformers=[Scheduling])
    pending = asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="requires a running event loop"):
        Scheduling().schedule(pending)
    pending.close()


async def test_async_lane_scheduled_work_and_failures() -> None:
    class Scored(StreamTransformer):
        requires_async = True

        def __init__(self, scope: tuple[str, ...] = ()) -> None:
            super().__init__(scope)
            self.scores: StreamChannel[int] = StreamChannel("scores")

        def init(self) -> dict[str, Any]:
            return {"scores": self.scores}

        def process(self, event: Any) -> bool:
            if event["method"] == "values":
                self.schedule(self._score(len(event["params"]["data"]["items"])))
            return True

        async def _score(self, n: int) -> None:
            await asyncio.sleep(0)
            self.scores.push(n)

    graph = chain("a", "b")
    run = await graph.astream_events({"items": []}, version="v3", transformers=[Scored])
    events = [e async for e in run]
    assert sorted(e["params"]["data"] for e in events if e["method"] == "custom:scores") == [
        0,
        1,
        2,
    ]

    def boom(state: State) -> dict[str, Any]:
        raise RuntimeError("node failed")

    failing = StateGraph(State).add_node("boom", boom).add_edge(START, "boom").compile()
    run = await failing.astream_events({"items": []}, version="v3")
    with pytest.raises(RuntimeError, match="node failed"):
        [v async for v in run.values]
    with pytest.raises(RuntimeError, match="node failed"):
        await run.output()


def test_interrupt_flags() -> None:
    from durable_debug import Command, interrupt

    def ask(state: State) -> dict[str, Any]:
        return {"items": [interrupt("name?")]}

    graph = StateGraph(State).add_node("ask", ask).add_edge(START, "ask")
    compiled = graph.compile(checkpointer=MemorySaver())
    config = {"configurable": {"thread_id": "ask"}}
    run = compiled.stream_events({"items": []}, config, version="v3")
    assert run.interrupted
    assert [i.value for i in run.interrupts] == ["name?"]
    run = compiled.stream_events(Command(resume="ada"), config, version="v3")
    assert not run.interrupted
    assert run.output == {"items": ["ada"]}


async def test_async_fan_out_and_subgraph_handles() -> None:
    def inner(state: State) -> dict[str, Any]:
        if state["items"] == ["fail"]:
            raise ValueError("inner failed")
        return {"items": ["inner"]}

    sub = StateGraph(State).add_node("inner", inner).add_edge(START, "inner").compile()
    graph = StateGraph(State).add_node("sub", sub).add_edge(START, "sub").compile()
    run = await graph.astream_events({"items": []}, version="v3")
    first, second = run.values.atee(2)
    assert [v async for v in first] == [v async for v in second]
    run = await graph.astream_events({"items": []}, version="v3")
    handles = [h async for h in run.subgraphs]
    assert [(h.graph_name, h.status) for h in handles] == [("sub", "completed")]
    assert await handles[0].output() == {"items": ["inner"]}
    run = await graph.astream_events({"items": ["fail"]}, version="v3")
    lifecycle = run.lifecycle.__aiter__()
    failed = []
    with pytest.raises(ValueError, match="inner failed"):
        async for handle in run.subgraphs:
            failed.append(handle)
    assert [(h.status, h.error) for h in failed] == [("failed", "inner failed")]
    assert [await lifecycle.__anext__() for _ in range(2)][1] == {
        "event": "failed",
        "namespace": list(failed[0].path),
        "error": "inner failed",
    }


def test_runs_without_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without LangChain installed the run does not request ``messages`` (whose tap is a
    LangChain handler): the other projections work and ``run.messages`` stays empty."""
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    run = chain("a").stream_events({"items": []}, version="v3")
    assert list(run.messages) == []
    assert run.output == {"items": ["a"]}
