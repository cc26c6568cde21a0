"""LangGraph's public channel classes as state channels (``Annotated[T, Topic(...)]``…) on
both libraries, and their own API."""

from __future__ import annotations

import operator
from collections.abc import MutableMapping, Sequence
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def channels_of(api: Api) -> Any:
    if api.name == "langgraph":
        import langgraph.channels as channels
        from langgraph.errors import EmptyChannelError
    else:
        import durable_debug.channels as channels
        from durable_debug.errors import EmptyChannelError
    return channels, EmptyChannelError


def test_annotated_channels_in_a_graph():
    def scenario(api: Api, trace: Trace) -> None:
        ch, _ = channels_of(api)
        State = TypedDict(  # noqa: UP013
            "State",
            {
                "events": Annotated[list, ch.Topic(str, accumulate=True)],
                "latest": Annotated[list, ch.Topic(str)],
                "scratch": Annotated[str, ch.EphemeralValue(str)],
                "total": Annotated[int, ch.BinaryOperatorAggregate(int, operator.add)],
                "plain": Annotated[str, ch.LastValue(str)],
                "any": Annotated[str, ch.AnyValue(str)],
                "untracked": Annotated[str, ch.UntrackedValue(str)],
            },
        )

        def first(state: Any) -> dict:
            return {
                "events": ["first"],
                "latest": ["first"],
                "scratch": "tmp",
                "total": 1,
                "plain": "p",
                "any": "a",
                "untracked": "u",
            }

        def left(state: Any) -> dict:
            return {"events": ["left", "more"], "latest": "left", "total": 10, "any": "same"}

        def right(state: Any) -> dict:
            return {
                "events": "right",
                "total": 100,
                "any": "same",
                "plain": f"{state.get('scratch')}/{state.get('untracked')}",
            }

        def last(state: Any) -> dict:
            return {"events": [f"saw {sorted(state['latest'])} {state.get('scratch')}"]}

        graph = (
            api.StateGraph(State)
            .add_node("first", first)
            .add_node("left", left)
            .add_node("right", right)
            .add_node("last", last)
            .add_edge(api.START, "first")
            .add_edge("first", "left")
            .add_edge("first", "right")
            .add_edge(["left", "right"], "last")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "1"}}
        trace.call("invoke", graph.invoke, {"events": ["input"], "total": 0}, cfg)
        trace.state("state", graph.get_state(cfg))
        # (Not the history: LangGraph's shows the accumulating Topic's final value on the
        # checkpoint before the last step too.)
        trace.note("steps", [s.next for s in graph.get_state_history(cfg)])
        trace.call("values", graph.stream, {"latest": ["again"]}, cfg, stream_mode="values")

    check_parity(scenario)


def test_the_channels_own_api():
    def scenario(api: Api, trace: Trace) -> None:
        ch, EmptyChannelError = channels_of(api)
        for name, channel, writes in (
            ("last", ch.LastValue(int), [[1], [2, 3]]),
            ("any", ch.AnyValue(int), [[1, 1], []]),
            ("ephemeral", ch.EphemeralValue(int), [[5], [], [1, 2]]),
            ("ephemeral unguarded", ch.EphemeralValue(int, guard=False), [[1, 2]]),
            ("topic", ch.Topic(int), [[1, [2, 3]], []]),
            ("topic accumulate", ch.Topic(int, accumulate=True), [[1], [[2, 3]], []]),
            ("binop", ch.BinaryOperatorAggregate(int, operator.add), [[1, 2], [3]]),
            ("untracked", ch.UntrackedValue(int), [[4]]),
        ):
            fresh = channel.from_checkpoint(None) if name == "untracked" else channel.copy()
            try:
                fresh.get()
                trace.note(f"{name} empty", "has a value")
            except EmptyChannelError:
                trace.note(f"{name} empty", "EmptyChannelError")
            for i, values in enumerate(writes):
                try:
                    changed = fresh.update(values)
                except Exception as exc:
                    trace.note(f"{name} {i}", type(exc).__name__)
                    continue
                try:
                    value = fresh.get()
                except EmptyChannelError:
                    value = "empty"
                trace.note(f"{name} {i}", [changed, value, fresh.is_available()])
            restored = fresh.from_checkpoint(fresh.checkpoint())
            trace.note(f"{name} restored", restored.is_available())

    check_parity(scenario)


def test_the_channels_value_and_update_types():
    def scenario(api: Api, trace: Trace) -> None:
        ch, _ = channels_of(api)
        for name, channel in (
            ("last", ch.LastValue(int)),
            ("any", ch.AnyValue(str)),
            ("ephemeral", ch.EphemeralValue(int)),
            ("topic", ch.Topic(str)),
            ("topic accumulate", ch.Topic(int, accumulate=True)),
            ("topic of anything", ch.Topic(Any)),
            ("binop", ch.BinaryOperatorAggregate(int, operator.add)),
            ("untracked", ch.UntrackedValue(dict)),
            ("barrier", ch.NamedBarrierValue(str, {"a", "b"})),
        ):
            trace.note(name, [repr(channel.ValueType), repr(channel.UpdateType)])
        # A reducer channel starts from its type's empty value, from nothing saved too.
        nothing = ch.LastValue(int).checkpoint()  # what an empty channel saves
        for typ in (int, list[int], Sequence[str], MutableMapping[str, int], set):
            binop = ch.BinaryOperatorAggregate(typ, operator.or_)
            restored = binop.from_checkpoint(nothing)
            trace.note(f"binop {typ!r}", [binop.get(), restored.get(), restored.ValueType])
        # A Pregel's JSON schemas are built from its channels' update and value types.
        if api.name == "langgraph":
            from langgraph.pregel import NodeBuilder, Pregel
        else:
            from durable_debug.pregel import NodeBuilder, Pregel
        node = NodeBuilder().subscribe_only("a").do(lambda x: [x]).write_to("b")
        channels = {"a": ch.Topic(str), "b": ch.Topic(str, accumulate=True)}
        app = Pregel(
            nodes={"n": node}, channels=channels, input_channels=["a"], output_channels=["b"]
        )
        trace.note("input schema", app.get_input_jsonschema())
        trace.note("output schema", app.get_output_jsonschema())
        trace.call("run", app.invoke, {"a": ["x", "y"]})

    check_parity(scenario)
