"""``stream_events(version="v3")`` / ``astream_events(version="v3")`` on both libraries: the
main event log of a graph with a subgraph (methods, namespaces, data, ``seq``), the native
projections (values, lifecycle, subgraph handles, messages), opt-in transformers, a user
transformer with a named channel, interrupts, failures, and the calls refused."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def stream_module(api: Api) -> Any:
    if api.name == "langgraph":
        import langgraph.stream.transformers as transformers
        from langgraph import stream
    else:
        import durable_debug.stream.transformers as transformers
        from durable_debug import stream
    return stream, transformers


def writer_of(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.config import get_stream_writer
    else:
        from durable_debug.config import get_stream_writer
    return get_stream_writer


def nested_graph(api: Api, *, fail: bool = False, pause: bool = False, **compile: Any) -> Any:
    get_stream_writer = writer_of(api)

    def inner(state: State) -> dict[str, Any]:
        get_stream_writer()({"progress": len(state["items"])})
        if fail:
            raise ValueError("inner node failed")
        if pause:
            answer = api.interrupt("name?")
            return {"items": [f"inner:{answer}"]}
        return {"items": ["inner"]}

    sub = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner").compile()
    return (
        api.StateGraph(State)
        .add_node("first", lambda s: {"items": ["first"]})
        .add_node("sub", sub)
        .add_node("last", lambda s: {"items": ["last"]})
        .add_edge(api.START, "first")
        .add_edge("first", "sub")
        .add_edge("sub", "last")
        .compile(**compile)
    )


def event(trace: Trace, item: dict[str, Any]) -> dict[str, Any]:
    params = item["params"]
    data = params["data"]
    if item["method"] == "lifecycle":
        data = {**data, "namespace": [trace.namespace(n) for n in data["namespace"]]}
        if "trigger_call_id" in data:
            data["trigger_call_id"] = trace.label("t", data["trigger_call_id"])
    return {
        "method": item["method"],
        "ns": [trace.namespace(n) for n in params["namespace"]],
        "data": trace.normalize(data),
        "interrupts": trace.normalize(params.get("interrupts", ())),
    }


def test_main_log_projections_and_subgraph_handles() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        _, t = stream_module(api)
        graph = nested_graph(api, transformers=[t.UpdatesTransformer, t.CustomTransformer])
        run = graph.stream_events({"items": []}, version="v3")
        items = list(run)
        seqs = [i["seq"] for i in items]
        trace.note("seq increases", seqs == sorted(seqs) and len(set(seqs)) == len(seqs))
        trace.note("events", [event(trace, i) for i in items])
        trace.note("extensions", sorted(run.extensions))

        run = graph.stream_events({"items": []}, version="v3")
        trace.note("values", list(run.values))
        trace.note("output", run.output)
        trace.note("interrupted", run.interrupted)

        run = graph.stream_events({"items": []}, version="v3")
        handles = []
        for handle in run.subgraphs:
            handles.append(
                {
                    "path": [trace.namespace(p) for p in handle.path],
                    "graph_name": handle.graph_name,
                    "values": list(handle.values),
                    "updates": list(handle.updates),
                    "custom": list(handle.custom),
                }
            )
            handles[-1]["status"] = handle.status
        trace.note("handles", handles)

        run = graph.stream_events({"items": []}, version="v3")
        trace.note("updates", list(run.updates))
        run = graph.stream_events({"items": []}, version="v3")
        trace.note("interleaved", [name for name, _ in run.interleave("values", "updates")])

    ours = check_parity(scenario)
    assert [h["status"] for h in ours["handles"]] == ["completed"]
    assert ours["output"] == {"items": ["first", "first", "inner", "last"]}


async def test_async_run_stream() -> None:
    async def scenario(api: Api, trace: Trace) -> None:
        _, t = stream_module(api)
        graph = nested_graph(api)
        run = await graph.astream_events(
            {"items": []}, version="v3", transformers=[t.TasksTransformer]
        )
        trace.note("values", [v async for v in run.values])
        trace.note("output", await run.output())
        run = await graph.astream_events({"items": []}, version="v3")
        lifecycle = [x async for x in run.lifecycle]
        trace.note("lifecycle", [x["event"] for x in lifecycle])
        run = await graph.astream_events(
            {"items": []}, version="v3", transformers=[t.TasksTransformer]
        )
        tasks = [x async for x in run.tasks]
        trace.note("task names", [x["name"] for x in tasks])
        async with await graph.astream_events({"items": []}, version="v3") as run:
            async for _ in run.values:
                break
        trace.note("output after early exit", await run.output())

    await acheck_parity(scenario)


def test_interrupt_and_failure() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = nested_graph(api, pause=True, checkpointer=api.MemorySaver())
        config = {"configurable": {"thread_id": "v3"}}
        run = graph.stream_events({"items": []}, config, version="v3")
        trace.note("interrupted", run.interrupted)
        trace.note("interrupts", trace.normalize(run.interrupts))
        trace.note("partial output", run.output)
        run = graph.stream_events(api.Command(resume="ada"), config, version="v3")
        trace.note("resumed", run.output)

        graph = nested_graph(api, fail=True)
        run = graph.stream_events({"items": []}, version="v3")
        try:
            trace.note("no output", run.output)
        except ValueError as error:
            trace.note("output raises", str(error))
        run = graph.stream_events({"items": []}, version="v3")
        statuses = []
        try:
            for handle in run.subgraphs:
                statuses.append(handle)
            list(run.values)
        except ValueError as error:
            trace.note("values raise", str(error))
        trace.note("handle status", [(h.status, h.error) for h in statuses])

    ours = check_parity(scenario)
    assert ours["output raises"] == "inner node failed"
    assert ours["handle status"] == [("failed", "inner node failed")]
    assert ours["resumed"] == {"items": ["first", "first", "inner:ada", "last"]}


def test_user_transformer_with_named_channel() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        stream, _ = stream_module(api)

        class Counter(stream.StreamTransformer):  # type: ignore[misc,name-defined]  # the class comes from either library
            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self.channel = stream.StreamChannel("count")
                self.seen = 0

            def init(self) -> dict[str, Any]:
                return {"count": self.channel}

            def process(self, event: Any) -> bool:
                if event["method"] == "values" and not event["params"]["namespace"]:
                    self.seen += 1
                    self.channel.push(self.seen)
                return True

        graph = nested_graph(api, transformers=[Counter])
        run = graph.stream_events({"items": []}, version="v3")
        trace.note("methods", [i["method"] for i in run])
        run = graph.stream_events({"items": []}, version="v3")
        trace.note("projection", list(run.extensions["count"]))
        trace.note("not an attribute", not hasattr(run, "count"))
        tee = nested_graph(api).stream_events({"items": []}, version="v3").values.tee(2)
        trace.note("tee", [len(list(branch)) for branch in tee])

        for bad in ({"stream_mode": "values"}, {"subgraphs": True}):
            try:
                graph.stream_events({"items": []}, version="v3", **bad)
            except TypeError as error:
                trace.note(f"refused {sorted(bad)}", str(error))
        try:
            graph.stream_events({"items": []}, version="v3", transformers=[Counter()])
        except TypeError as error:
            trace.note("instance refused", str(error))

        class Slow(stream.StreamTransformer):  # type: ignore[misc,name-defined]  # the class comes from either library
            def init(self) -> dict[str, Any]:
                return {}

            async def aprocess(self, event: Any) -> bool:
                return True

        try:
            graph.stream_events({"items": []}, version="v3", transformers=[Slow])
        except RuntimeError as error:
            trace.note("async transformer on the sync lane", str(error))

    ours = check_parity(scenario)
    assert ours["projection"] == [1, 2, 3, 4]
    assert ours["methods"].count("custom:count") == 4


def test_messages_projection() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage

        if api.name == "langgraph":
            from langgraph.graph import MessagesState
        else:
            from durable_debug import MessagesState

        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi there")]))
        graph = (
            api.StateGraph(MessagesState)
            .add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
            .add_node("canned", lambda s: {"messages": [AIMessage(content="canned", id="c1")]})
            .add_edge(api.START, "chat")
            .add_edge("chat", "canned")
            .compile()
        )
        run = graph.stream_events({"messages": [("user", "hello")]}, version="v3")
        streams = [(m.node, list(m.text)) for m in run.messages]
        trace.note("streams", streams)
        run = graph.stream_events({"messages": [("user", "hello")]}, version="v3")
        trace.note("contents", [m.content for m in run.output["messages"]][1:])

    ours = check_parity(scenario)
    assert ours["streams"] == [("chat", ["hi", " ", "there"]), ("canned", ["canned"])]
