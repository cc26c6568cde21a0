"""LangGraph's low-level ``Pregel`` / ``NodeBuilder`` API on our engine, each run side by side
with the installed LangGraph: the same results, stream chunks, snapshots and saved channel
values; then what our savers keep of such a thread and the errors for a malformed graph."""

from __future__ import annotations

import contextlib
import io
import operator
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.channels.binop import BinaryOperatorAggregate as LGBinop
from langgraph.channels.ephemeral_value import EphemeralValue as LGEphemeral
from langgraph.channels.last_value import LastValue as LGLastValue
from langgraph.channels.topic import Topic as LGTopic
from langgraph.checkpoint.base import BaseCheckpointSaver as LGBaseSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import NodeBuilder as LGNodeBuilder
from langgraph.pregel import Pregel as LGPregel
from typing_extensions import TypedDict

from durable_debug import StateGraph
from durable_debug.channels import BinaryOperatorAggregate, EphemeralValue, LastValue, Topic
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.inspect import Recorder, aread_thread, checkpoint_detail
from durable_debug.managed import RemainingSteps
from durable_debug.pregel import NodeBuilder, Pregel

pytestmark = pytest.mark.parity

Kit = dict[str, Any]


def cfg(thread: str) -> dict[str, Any]:
    """Config for ``thread``."""
    return {"configurable": {"thread_id": thread}}


OURS: Kit = {
    "Pregel": Pregel,
    "NodeBuilder": NodeBuilder,
    "LastValue": LastValue,
    "Topic": Topic,
    "Binop": BinaryOperatorAggregate,
    "Ephemeral": EphemeralValue,
}
LANGGRAPH: Kit = {
    "Pregel": LGPregel,
    "NodeBuilder": LGNodeBuilder,
    "LastValue": LGLastValue,
    "Topic": LGTopic,
    "Binop": LGBinop,
    "Ephemeral": LGEphemeral,
}


def chain(kit: Kit, saver: Any = None, **options: Any) -> Any:
    """input → one (+1) → inbox → two (+1) → output."""
    nb = kit["NodeBuilder"]
    return kit["Pregel"](
        nodes={
            "one": nb().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
            "two": nb().subscribe_only("inbox").do(lambda x: x + 1).write_to("output"),
        },
        channels={
            "input": kit["LastValue"](int),
            "inbox": kit["LastValue"](int),
            "output": kit["LastValue"](int),
        },
        input_channels="input",
        output_channels="output",
        checkpointer=saver,
        **options,
    )


def fan_in(kit: Kit, saver: Any = None) -> Any:
    """Two nodes publish to a Topic; a third sums it into a running total it also reads."""
    nb = kit["NodeBuilder"]
    return kit["Pregel"](
        nodes={
            "a": nb().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
            "b": nb().subscribe_only("input").do(lambda x: x * 10).write_to("inbox"),
            "sum": nb()
            .subscribe_to("inbox")
            .read_from("total")
            .do(lambda d: d["total"] + sum(d["inbox"]))
            .write_to("output", "total"),
        },
        channels={
            "input": kit["LastValue"](int),
            "inbox": kit["Topic"](int),
            "total": kit["Binop"](int, operator.add),
            "output": kit["LastValue"](int),
        },
        input_channels="input",
        output_channels="output",
        checkpointer=saver,
    )


def both(build: Callable[..., Any], saver: Any) -> tuple[Any, Any]:
    """The same graph on our engine (with ``saver``) and on LangGraph (in memory)."""
    return build(OURS, saver), build(LANGGRAPH, InMemorySaver())


def history(app: Any, thread: str) -> list[tuple[Any, ...]]:
    """Each checkpoint as the user reads it: source, step, values, next."""
    return [
        (s.metadata["source"], s.metadata["step"], s.values, s.next)
        for s in app.get_state_history(cfg(thread))
    ]


def test_a_chain_runs_streams_and_saves_as_on_langgraph(tmp_path: Path) -> None:
    with SqliteSaver(str(tmp_path / "p.db")) as saver:
        ours, theirs = both(chain, saver)
        for app in (ours, theirs):
            assert app.invoke(2, cfg("t")) == 4
        assert list(ours.stream(5, cfg("t"), stream_mode="updates")) == list(
            theirs.stream(5, cfg("t"), stream_mode="updates")
        )
        assert list(ours.stream(7, cfg("u"))) == list(theirs.stream(7, cfg("u")))
        assert history(ours, "t") == history(theirs, "t")
        ours_saved = saver.get(cfg("t"))
        theirs_saved = theirs.checkpointer.get(cfg("t"))
        assert ours_saved is not None and theirs_saved is not None
        assert ours_saved["channel_values"] == theirs_saved["channel_values"]
        drawn = [
            (
                sorted(app.get_graph().nodes),
                sorted((e.source, e.target) for e in app.get_graph().edges),
            )
            for app in (ours, theirs)
        ]
        assert drawn[0] == drawn[1]


def test_a_topic_fan_in_with_a_reducer_matches_langgraph() -> None:
    ours, theirs = both(fan_in, MemorySaver())
    for value in (1, 2):
        assert ours.invoke(value, cfg("t")) == theirs.invoke(value, cfg("t"))
    assert ours.get_state(cfg("t")).values == theirs.get_state(cfg("t")).values
    assert ours.get_state(cfg("t")).values["total"] == (2 + 10) + (12 + (3 + 20))


def test_interrupt_after_a_node_then_update_as_it_and_resume_matches_langgraph() -> None:
    ours = chain(OURS, MemorySaver(), interrupt_after_nodes=["one"])
    theirs = chain(LANGGRAPH, InMemorySaver(), interrupt_after_nodes=["one"])
    for app in (ours, theirs):
        # The run stopped before writing its output channel: None, not an old value.
        assert app.invoke(20, cfg("t")) is None
        assert app.get_state(cfg("t")).next == ("two",)
        app.update_state(cfg("t"), 25, as_node="one")
        assert app.invoke(None, cfg("t")) == 26
    assert history(ours, "t") == history(theirs, "t")


def test_an_ephemeral_input_channel_is_not_kept_in_the_checkpoint() -> None:
    def build(kit: Kit, saver: Any) -> Any:
        return kit["Pregel"](
            nodes={"one": kit["NodeBuilder"]().subscribe_only("input").write_to("output")},
            channels={
                "ephemeral": kit["Ephemeral"](Any),
                "input": kit["LastValue"](int),
                "output": kit["LastValue"](int),
            },
            input_channels=["input", "ephemeral"],
            output_channels="output",
            checkpointer=saver,
        )

    ours, theirs = both(build, MemorySaver())
    for app in (ours, theirs):
        app.invoke({"input": 1, "ephemeral": "meow"}, cfg("t"))
    assert ours.checkpointer.get(cfg("t"))["channel_values"] == {"input": 1, "output": 1}
    assert theirs.checkpointer.get(cfg("t"))["channel_values"] == {"input": 1, "output": 1}


async def test_async_steps_and_several_write_targets_match_langgraph() -> None:
    async def add_one(x: int) -> int:
        return x + 1

    def build(kit: Kit, saver: Any) -> Any:
        return kit["Pregel"](
            nodes={
                "one": kit["NodeBuilder"]()
                .subscribe_only("input")
                .do(add_one)
                .do(lambda x: x * 2)
                .write_to("output", fixed=5, plus_one=lambda x: x + 1),
            },
            channels={k: kit["LastValue"](int) for k in ("input", "output", "fixed", "plus_one")},
            input_channels="input",
            output_channels=["output", "fixed", "plus_one"],
            checkpointer=saver,
        )

    ours, theirs = both(build, MemorySaver())
    assert await ours.ainvoke(2, cfg("t")) == await theirs.ainvoke(2, cfg("t"))
    assert await ours.ainvoke(2, cfg("t")) == {"output": 6, "fixed": 5, "plus_one": 7}
    assert ours.get_input_jsonschema() == theirs.get_input_jsonschema()
    assert ours.get_output_jsonschema() == theirs.get_output_jsonschema()


def test_a_malformed_graph_is_refused_as_langgraph_refuses_it() -> None:
    nb = NodeBuilder
    with pytest.raises(ValueError, match="reads channel 'missing'"):
        Pregel(
            nodes={"one": nb().subscribe_to("input").read_from("missing").write_to("output")},
            channels={"input": LastValue(int), "output": LastValue(int)},
            input_channels="input",
            output_channels="output",
        )
    with pytest.raises(ValueError, match="not subscribed to by any node"):
        Pregel(
            nodes={"one": nb().subscribe_only("other").write_to("output")},
            channels={"input": LastValue(int), "other": LastValue(int), "output": LastValue(int)},
            input_channels="input",
            output_channels="output",
        )
    with pytest.raises(TypeError):
        Pregel(nodes={"one": nb().subscribe_only("input")})  # type: ignore[call-arg]  # the input and output channels are required, as LangGraph's
    with pytest.raises(ValueError, match="single channel"):
        nb().subscribe_only("a").subscribe_to("b")


async def test_the_debugger_reads_a_pregel_thread_and_counts_its_nodes() -> None:
    app = fan_in(OURS, MemorySaver())
    with Recorder() as recorder:
        await app.ainvoke(1, cfg("t"))
    thread = await aread_thread(app, cfg("t"))
    assert [(r.source, r.step) for r in thread] == [("input", -1), ("loop", 0), ("loop", 1)]
    assert thread.latest.values == {"input": 1, "total": 12, "output": 12}
    frame = recorder.counts_frame()
    counts = set(zip(frame["node"], frame["executions"], strict=True))
    assert counts == {("a", 1), ("b", 1), ("sum", 1)}
    detail = checkpoint_detail(app, cfg("t"), thread.latest.id)
    assert detail["values"] == {"input": 1, "total": 12, "output": 12}


def test_channels_and_managed_keys_read_as_langgraph_shows_them() -> None:
    class State(TypedDict):
        log: Annotated[list[str], operator.add]
        value: str
        remaining: RemainingSteps

    builder = StateGraph(State)
    builder.add_node("n", lambda s: {"value": "x"})
    builder.add_edge("__start__", "n")
    assert set(builder.channels) == {"log", "value"}
    assert isinstance(builder.channels["log"], BinaryOperatorAggregate)
    assert builder.channels["log"].operator is operator.add
    assert isinstance(builder.channels["value"], LastValue)
    assert set(builder.managed) == {"remaining"}
    graph = builder.compile()
    assert isinstance(graph.channels["log"], BinaryOperatorAggregate)
    assert graph.channels["log"].get() == []
    app = fan_in(OURS)
    assert set(app.channels) == {"input", "inbox", "total", "output"}
    assert app.schema.reducers() == {"total": operator.add}


def test_a_saver_answers_langgraphs_get_next_version_like_langgraphs() -> None:
    theirs = InMemorySaver()
    for current in (None, 1, 41):
        expected = LGBaseSaver.get_next_version(theirs, current, None)
        assert MemorySaver().get_next_version(current, None) == expected


def test_a_pregel_mapped_over_a_topic_inside_another_matches_langgraph(tmp_path: Path) -> None:
    def build(kit: Kit, saver: Any) -> Any:
        nb = kit["NodeBuilder"]
        inner = kit["Pregel"](
            nodes={"one": nb().subscribe_only("input").do(lambda x: x + 1).write_to("output")},
            channels={"input": kit["LastValue"](int), "output": kit["LastValue"](int)},
            input_channels="input",
            output_channels="output",
        )
        outer = kit["Pregel"](
            nodes={
                "split": nb().subscribe_only("input").do(lambda xs: xs).write_to("inbox"),
                "each": nb().subscribe_only("inbox").do(inner.map()).write_to("outbox"),
                "sum": nb().subscribe_only("outbox").do(sum).write_to("output"),
            },
            channels={
                "input": kit["LastValue"](list),
                "inbox": kit["Topic"](int),
                "outbox": kit["LastValue"](list),
                "output": kit["LastValue"](int),
            },
            input_channels="input",
            output_channels="output",
            checkpointer=saver,
        )
        return outer, inner

    with SqliteSaver(str(tmp_path / "p.db")) as saver:
        (ours, ours_inner), (theirs, theirs_inner) = (
            build(OURS, saver),
            build(LANGGRAPH, InMemorySaver()),
        )
        assert ours.invoke([2, 3], cfg("t")) == theirs.invoke([2, 3], cfg("t")) == 7
        ours_inner.checkpointer = theirs_inner.checkpointer = False  # the inner saves nothing
        assert ours.invoke([4], cfg("t")) == theirs.invoke([4], cfg("t")) == 5
        assert history(ours, "t") == history(theirs, "t")


SOURCE = """
import operator
from langgraph.channels import BinaryOperatorAggregate, LastValue, Topic
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import NodeBuilder, Pregel

app = Pregel(
    nodes={
        "a": NodeBuilder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox"),
        "b": NodeBuilder().subscribe_only("input").do(lambda x: x * 10).write_to("inbox"),
        "sum": NodeBuilder().subscribe_to("inbox").read_from("total")
        .do(lambda d: d["total"] + sum(d["inbox"])).write_to("output", "total"),
    },
    channels={
        "input": LastValue(int),
        "inbox": Topic(int),
        "total": BinaryOperatorAggregate(int, operator.add),
        "output": LastValue(int),
    },
    input_channels="input",
    output_channels="output",
    checkpointer=InMemorySaver(),
)
cfg = {"configurable": {"thread_id": "t"}}
# tasks of one step finish in any order: their chunks are compared sorted
print(app.invoke(1, cfg), sorted(map(str, app.stream(2, cfg, stream_mode="updates"))))
print(app.get_state(cfg).values, app.get_state(cfg).next)
print([(s.metadata["source"], s.metadata["step"]) for s in app.get_state_history(cfg)])
"""


def run(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<pregel>", "exec", dont_inherit=True), {"__name__": "__main__"})
    return out.getvalue()


def test_pregel_code_runs_with_only_its_imports_changed() -> None:
    ours = re.sub(r"\bfrom langgraph\b", "from durable_debug", SOURCE)
    assert "langgraph" not in ours
    lines = run(ours)
    assert lines == run(SOURCE)
    assert lines.startswith("12 ")  # (1 + 1) + (1 * 10)


def test_a_timeout_on_a_node_with_sync_steps_is_refused_as_langgraph_refuses_it() -> None:
    from langchain_core.runnables import RunnableLambda, RunnableParallel

    async def fast(value: int) -> int:
        return value + 1

    def slow(value: int) -> int:
        return value + 1

    def build(kit: Kit, step: Any) -> Any:
        return kit["Pregel"](
            nodes={
                "n": kit["NodeBuilder"]()
                .subscribe_only("input")
                .do(step)
                .set_timeout(0.05)
                .write_to("output")
            },
            channels={"input": kit["LastValue"](int), "output": kit["LastValue"](Any)},
            input_channels="input",
            output_channels="output",
        )

    refused = [slow, RunnableLambda(slow).with_config(tags=["t"])]
    refused.append(RunnableParallel(a=RunnableLambda(slow), b=RunnableLambda(fast)))
    for step in refused:
        for kit in (OURS, LANGGRAPH):
            with pytest.raises(ValueError, match="only supported for async nodes"):
                build(kit, step)
    for step in (fast, RunnableLambda(fast).with_config(tags=["t"])):
        for kit in (OURS, LANGGRAPH):
            build(kit, step)


def test_an_interrupt_in_a_pregel_node_pauses_and_resumes_as_on_langgraph() -> None:
    from langgraph.types import Command as LGCommand
    from langgraph.types import interrupt as lg_interrupt

    from durable_debug.types import Command, interrupt

    def build(kit: Kit, saver: Any, ask: Any) -> Any:
        return kit["Pregel"](
            nodes={
                "ask": kit["NodeBuilder"]()
                .subscribe_only("input")
                .do(lambda x: f"{x}:{ask('name?')}")
                .write_to("output")
            },
            channels={"input": kit["LastValue"](str), "output": kit["LastValue"](str)},
            input_channels="input",
            output_channels="output",
            checkpointer=saver,
        )

    runs = []
    for app, resume in (
        (build(OURS, MemorySaver(), interrupt), Command(resume="ada")),
        (build(LANGGRAPH, InMemorySaver(), lg_interrupt), LGCommand(resume="ada")),
    ):
        paused = app.invoke("hi", cfg("t"))
        asked = [i.value for i in paused["__interrupt__"]]
        runs.append((asked, app.get_state(cfg("t")).next, app.invoke(resume, cfg("t"))))
        runs.append(history(app, "t"))
    assert runs[0] == runs[2] == (["name?"], ("ask",), "hi:ada")
    assert runs[1] == runs[3]
