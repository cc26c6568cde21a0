"""Public LangGraph names on both libraries: ``push_message`` (a message sent to the
``messages`` stream from inside a node, and written to the state), the deprecated
``MessageGraph`` and ``langgraph.pregel.types``, ``PregelExecutableTask``, ``Send(...,
timeout=...)`` (the Send's timeout replaces its node's) and ``NodeBuilder.set_timeout``."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import sys
import warnings
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from parity_harness import Api, Trace, acheck_parity, check_parity, durable_api, langgraph_api

pytestmark = pytest.mark.parity


def lib(api: Api, module: str) -> Any:
    """``langgraph.<module>`` or ``durable_debug.<module>``."""
    return importlib.import_module(f"{api.name}.{module}")


def shown(trace: Trace, value: Any) -> Any:
    """Messages as (type, content, id label); containers walked."""
    if isinstance(value, BaseMessage):
        return (value.type, value.content, trace.label("m", value.id))
    if isinstance(value, dict):
        return {k: shown(trace, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shown(trace, v) for v in value]
    return value


def segments(ns: tuple[str, ...]) -> tuple[str, ...]:
    """A namespace's node names (task ids differ between the libraries)."""
    return tuple(part.split(":", 1)[0] for part in ns)


# -- push_message ---------------------------------------------------------------------------


def test_pushed_messages_stream_and_join_the_state() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        message = lib(api, "graph.message")

        def chat(state: Any) -> dict:
            with pytest.raises(ValueError, match="Message ID is required"):
                message.push_message(AIMessage(content="no id"))
            returned = message.push_message(HumanMessage(content="first", id="1"))
            trace.note("returned", shown(trace, returned))
            message.push_message(("assistant", "a pair has no id"))  # raised out of the node
            return {}

        def chat_ids(state: Any) -> dict:
            message.push_message(AIMessage(content="pushed", id="p"))
            message.push_message(AIMessage(content="not kept", id="q"), state_key=None)
            # returning a pushed message again neither streams it twice nor adds it twice
            return {"messages": [AIMessage(content="pushed", id="p"), AIMessage("new", id="n")]}

        graph = (
            api.StateGraph(message.MessagesState)
            .add_node("chat", chat_ids)
            .add_edge(api.START, "chat")
            .compile()
        )
        parts = list(graph.stream({"messages": []}, stream_mode=["messages", "values"]))
        trace.note(
            "parts",
            [
                (mode, shown(trace, chunk if mode == "values" else chunk[0]))
                for mode, chunk in parts
            ],
        )
        trace.note("nodes", [c[1]["langgraph_node"] for m, c in parts if m == "messages"])
        refused = (
            api.StateGraph(message.MessagesState)
            .add_node("chat", chat)
            .add_edge(api.START, "chat")
            .compile()
        )
        with pytest.raises(ValueError, match="Message ID is required"):
            refused.invoke({"messages": []})

    check_parity(scenario)


def test_a_pushed_message_streams_under_its_graphs_namespace() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        message = lib(api, "graph.message")

        def push(state: Any) -> dict:
            message.push_message(AIMessage(id="pushed", content="hi"), state_key=None)
            return {}

        inner = (
            api.StateGraph(message.MessagesState)
            .add_node("push", push)
            .add_edge(api.START, "push")
            .compile()
        )
        outer = (
            api.StateGraph(message.MessagesState)
            .add_node("sub", inner)
            .add_edge(api.START, "sub")
            .compile()
        )
        for subgraphs in (False, True):
            parts = outer.stream({"messages": []}, stream_mode="messages", subgraphs=subgraphs)
            seen = [(segments(p[0]), shown(trace, p[1][0])) if subgraphs else p for p in parts]
            trace.note(f"subgraphs={subgraphs}", seen)
        chunks = list(inner.stream({"messages": []}, stream_mode="messages"))
        trace.note("own node", [meta["langgraph_node"] for _, meta in chunks])
        trace.note("state untouched", inner.invoke({"messages": []}))

    ours = check_parity(scenario)
    assert ours["subgraphs=True"] == [(("sub",), ("ai", "hi", "m0"))]


def test_push_message_outside_a_node_is_refused() -> None:
    def refused(api: Api) -> str:
        with pytest.raises(RuntimeError) as caught:
            lib(api, "graph.message").push_message(AIMessage(content="x", id="1"))
        return type(caught.value).__name__

    assert refused(durable_api()) == refused(langgraph_api()) == "RuntimeError"


def test_message_graph_runs_and_warns() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            builder = lib(api, "graph.message").MessageGraph()
        trace.note("warnings", [(type(w.message).__name__, str(w.message)) for w in caught])
        builder.add_node("bot", lambda messages: [("assistant", f"{len(messages)} so far")])
        builder.set_entry_point("bot")
        builder.set_finish_point("bot")
        trace.note("result", shown(trace, builder.compile().invoke([("user", "hi")])))

    ours = check_parity(scenario)
    assert ours["warnings"][0][0] == "LangGraphDeprecatedSinceV10"


# -- deprecated module, task record ---------------------------------------------------------


def test_importing_pregel_types_warns_and_gives_the_names() -> None:
    def imported(api: Api) -> tuple[list[tuple[str, str]], list[str]]:
        name = f"{api.name}.pregel.types"
        sys.modules.pop(name, None)  # the warning comes when the module runs
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module(name)
        types = lib(api, "types")
        same = [n for n in module.__all__ if getattr(types, n, None) is getattr(module, n)]
        return [(type(w.message).__name__, str(w.message)) for w in caught], same

    ours, theirs = imported(durable_api()), imported(langgraph_api())
    assert ours[0] == theirs[0] and len(ours[0]) == 1
    assert {"PregelExecutableTask", "PregelTask", "RetryPolicy", "StateSnapshot"} <= set(ours[1])


def test_pregel_executable_task_has_langgraphs_fields() -> None:
    def fields(api: Api) -> list[tuple[str, Any]]:
        cls = lib(api, "types").PregelExecutableTask
        return [(f.name, f.default) for f in dataclasses.fields(cls)]

    assert fields(durable_api()) == fields(langgraph_api())
    task = lib(durable_api(), "types").PregelExecutableTask(
        "n", {}, None, [], {}, ["a"], [], None, "id", ("__pregel_pull", "n")
    )
    assert task.timeout is None and task.writers == ()


# -- Send(..., timeout=...) -----------------------------------------------------------------


async def _slow(state: dict) -> dict:
    await asyncio.sleep(5)
    return {"x": state["x"] + 1}


def test_a_send_carries_its_timeout() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        types = lib(api, "types")
        policy = types.TimeoutPolicy(run_timeout=1, idle_timeout=2)
        send = api.Send("worker", {"x": 1}, timeout=policy)
        trace.note("repr", repr(send))
        trace.note("plain repr", repr(api.Send("worker", 1)))
        trace.note("equal", send == api.Send("worker", {"x": 1}, timeout=policy))
        trace.note("differs", send == api.Send("worker", {"x": 1}))
        trace.note("seconds", api.Send("w", 1, timeout=0.5).timeout.run_timeout)
        same = api.Send("w", 1, timeout=types.TimeoutPolicy(run_timeout=0.5))
        trace.note("hash", hash(api.Send("w", 1, timeout=0.5)) == hash(same))
        with pytest.raises(TypeError):
            api.Send("w", 1, 0.5)  # keyword only
        with pytest.raises(ValueError):
            api.Send("w", 1, timeout=0)

    check_parity(scenario)


async def test_a_sends_timeout_replaces_its_nodes() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        errors, types = lib(api, "errors"), lib(api, "types")

        async def quick(state: dict) -> dict:
            await asyncio.sleep(0.01)
            return {"x": state["x"] + 1}

        def build(node: Any, timeout: Any) -> Any:
            def route(state: dict) -> list[Any]:
                return [api.Send("work", state, timeout=timeout)]

            return (
                api.StateGraph(dict)
                .add_node("work", node, timeout=types.TimeoutPolicy(idle_timeout=30))
                .add_conditional_edges(api.START, route)
                .compile()
            )

        with pytest.raises(errors.NodeTimeoutError) as caught:
            await build(_slow, types.TimeoutPolicy(idle_timeout=0.05)).ainvoke({"x": 1})
        trace.note("idle", (caught.value.node, caught.value.kind, caught.value.idle_timeout))
        with pytest.raises(errors.NodeTimeoutError) as caught:
            await build(_slow, 0.05).ainvoke({"x": 1})
        trace.note("seconds", (caught.value.kind, caught.value.run_timeout))
        trace.note("in time", await build(quick, 5).ainvoke({"x": 1}))

    await acheck_parity(scenario)


async def test_node_builder_timeout_is_enforced() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        pregel, channels = lib(api, "pregel"), lib(api, "channels")
        errors, types = lib(api, "errors"), lib(api, "types")

        async def slow(value: int) -> int:
            await asyncio.sleep(5)
            return value + 1

        graph = pregel.Pregel(
            nodes={
                "slow": pregel.NodeBuilder()
                .subscribe_only("input")
                .do(slow)
                .set_timeout(types.TimeoutPolicy(idle_timeout=0.05))
                .write_to("output")
            },
            channels={"input": channels.EphemeralValue(int), "output": channels.LastValue(int)},
            input_channels="input",
            output_channels="output",
        )
        with pytest.raises(errors.NodeTimeoutError) as caught:
            await graph.ainvoke(1)
        trace.note("timed out", (caught.value.node, caught.value.kind))

    await acheck_parity(scenario)
