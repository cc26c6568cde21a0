"""``astream_events(version="v2")`` of ``@task`` calls on both libraries: each call is one
run (named after the task, tagged ``seq:step:1``) under its caller's run, with its
``on_chain_stream``, its input by parameter name and LangGraph's ``langgraph_path`` (the
caller's path, the call's index, ``True``); an entrypoint's own run shows what it returned,
and the graph's ``on_chain_stream`` events come in LangGraph's order; ``astream_log``
streams each call's output too."""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from typing import Any

import pytest
from parity_harness import Api, Trace, acheck_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def func_names(api: Api) -> tuple[Any, Any]:
    """``entrypoint`` and ``task`` of the library ``api`` comes from."""
    if api.name == "langgraph":
        from langgraph.func import entrypoint, task
    else:
        from durable_debug.func import entrypoint, task
    return entrypoint, task


def shown(trace: Trace, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a user reads of each event: kind, name, tags, how many parents (the graph's run
    first), data and the ``langgraph_*`` metadata."""
    graph_run = events[0]["run_id"]
    out = []
    for event in events:
        metadata = event["metadata"]
        out.append(
            {
                "event": event["event"],
                "name": event["name"],
                "tags": event["tags"],
                "parents": len(event["parent_ids"]),
                "graph is first parent": event["parent_ids"][:1] in ([], [graph_run]),
                "data": trace.normalize(event["data"]),
                "thread": metadata.get("thread_id"),
                **{k: v for k, v in metadata.items() if k.startswith("langgraph_")},
                "langgraph_checkpoint_ns": isinstance(metadata.get("langgraph_checkpoint_ns"), str),
            }
        )
    return out


async def test_an_entrypoints_task_calls_are_one_run_each_under_the_entrypoints_run():
    async def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task()
        async def double(number: int) -> int:
            await asyncio.sleep(0.01)
            return number * 2

        @task()
        async def fails(number: int) -> int:
            await asyncio.sleep(0.01)
            raise ValueError("no")

        @entrypoint(checkpointer=api.MemorySaver())
        async def workflow(number: int) -> str:
            await double(number)
            with contextlib.suppress(ValueError):  # the caller goes on
                await fails(number)
            await double(number)
            return "done"

        cfg = {"configurable": {"thread_id": "calls"}}
        await trace.run("first", workflow.ainvoke(1, cfg))
        events = [e async for e in workflow.astream_events(1, cfg, version="v2")]
        trace.note("events", shown(trace, events))

    await acheck_parity(scenario)


async def test_a_nodes_task_call_is_a_run_under_the_nodes_run():
    class State(TypedDict):
        n: int

    async def scenario(api: Api, trace: Trace) -> None:
        _, task = func_names(api)

        @task
        def triple(n: int) -> int:
            return n * 3

        async def node(state: State) -> dict:
            return {"n": await triple(state["n"])}

        g = api.StateGraph(State).add_node("node", node).add_edge(api.START, "node").compile()
        events = [e async for e in g.astream_events({"n": 2}, version="v2")]
        graphs = [e for e in events if e["name"] == "LangGraph"]  # apart: see the next test
        trace.note("graph events", shown(trace, graphs))
        trace.note("other events", shown(trace, [e for e in events if e not in graphs]))

    await acheck_parity(scenario)


async def test_a_sync_entrypoint_waiting_on_its_call():
    async def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        def double(n: int) -> int:
            return n * 2

        @entrypoint(checkpointer=api.MemorySaver())
        def total(n: int) -> str:
            return f"got {double(n).result()}"

        cfg = {"configurable": {"thread_id": "sync"}}
        events = [e async for e in total.astream_events(1, cfg, version="v2")]
        # Where the graph's on_chain_stream of the call's update falls among the other
        # events depends on thread timing in LangGraph (a sync call runs in a thread).
        graphs = [e for e in events if e["name"] == "LangGraph"]
        trace.note("graph events", shown(trace, graphs))
        trace.note("other events", shown(trace, [e for e in events if e not in graphs]))

    await acheck_parity(scenario)


async def test_a_chat_model_in_nested_calls_streams_messages_with_the_calls_metadata():
    import itertools
    import re

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    def names(namespace: str) -> str:
        """A namespace without its task ids (they differ by design)."""
        return re.sub(r":[0-9a-f-]{36}", ":<id>", namespace)

    async def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi there")]))

        @task
        async def ask(question: str) -> str:
            return (await model.ainvoke(question)).content

        @task
        async def outer(question: str) -> str:
            return await ask(question)

        @entrypoint(checkpointer=api.MemorySaver())
        async def workflow(question: str) -> str:
            return await outer(question)

        cfg = {"configurable": {"thread_id": "messages"}}
        seen = []
        async for message, metadata in workflow.astream("q", cfg, stream_mode="messages"):
            shown = {k: v for k, v in metadata.items() if k.startswith("langgraph_")}
            shown["langgraph_checkpoint_ns"] = names(metadata["langgraph_checkpoint_ns"])
            shown["checkpoint_ns"] = names(metadata["checkpoint_ns"])
            seen.append((message.content, shown))
        trace.note("messages", seen)

    await acheck_parity(scenario)


async def test_the_run_log_streams_each_calls_output():
    async def scenario(api: Api, trace: Trace) -> None:
        entrypoint, task = func_names(api)

        @task
        async def double(n: int) -> int:
            return n * 2

        @entrypoint(checkpointer=api.MemorySaver())
        async def workflow(n: int) -> int:
            return await double(n) + await double(n + 1)

        cfg = {"configurable": {"thread_id": "log"}}
        final = None
        with warnings.catch_warnings():  # LangChain deprecates astream_log
            warnings.simplefilter("ignore", DeprecationWarning)
            async for patch in workflow.astream_log(1, cfg, diff=False):
                final = patch
        assert final is not None
        state = final.state
        trace.note("output", [state["streamed_output"], state["final_output"]])
        for key, run in sorted(state["logs"].items()):
            trace.note(key, [run["name"], run["tags"], run["streamed_output"], run["final_output"]])

    await acheck_parity(scenario)
