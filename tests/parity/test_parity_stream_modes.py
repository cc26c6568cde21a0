"""Stream modes as LangGraph has them: the default mode (updates), ``invoke(stream_mode=)``,
``custom`` (the ``writer`` parameter and ``get_stream_writer()``), ``checkpoints``, ``tasks``,
``subgraphs=True`` namespaces, and chunks that come only after their step is saved."""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    topic: str
    log: Annotated[list, operator.add]


def lib(api: Api, name: str) -> Any:
    """A name LangGraph keeps outside ``langgraph.graph``, from the library under test."""
    if api.name == "langgraph":
        import langgraph.config
        import langgraph.runtime

        return getattr(langgraph.config, name, None) or getattr(langgraph.runtime, name)
    import durable_debug

    return getattr(durable_debug, name)


def chain(api: Api, trace: Trace, *, names: tuple[str, ...] = ("a", "b")) -> Any:
    """START → a → b (each logs its name), with a checkpointer."""
    g = api.StateGraph(State)
    for name in names:

        def run(state: State, name: str = name) -> dict:
            trace.ran(name)
            return {"log": [name]}

        g.add_node(name, run)
    g.add_edge(api.START, names[0])
    for first, second in itertools.pairwise(names):
        g.add_edge(first, second)
    return g.compile(checkpointer=api.MemorySaver())


def start(thread: str) -> tuple[dict, dict]:
    return {"topic": "t", "log": []}, {"configurable": {"thread_id": thread}}


def test_stream_without_a_mode_yields_updates_and_invoke_honours_stream_mode():
    def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace)
        trace.call("stream()", g.stream, *start("default"))
        trace.call("invoke updates", g.invoke, *start("inv-u"), stream_mode="updates")
        trace.call("invoke list", g.invoke, *start("inv-l"), stream_mode=["updates", "values"])
        trace.call("invoke values", g.invoke, *start("inv-v"), stream_mode="values")

    ours = check_parity(scenario)
    assert ours["stream()"] == [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}]


@pytest.mark.parametrize("mode", ["updates", "values", "debug", "tasks", "checkpoints"])
def test_breaking_out_after_the_first_chunk_keeps_that_step(mode):
    def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace, names=("a", "b", "c"))
        first, cfg = start("brk")
        for seen, _ in enumerate(g.stream(first, cfg, stream_mode=mode), 1):
            if mode in ("updates", "values") or seen == 3:
                break
        trace.note("state after break", g.get_state(cfg).values)
        trace.call("resumed", g.invoke, None, cfg)

    ours = check_parity(scenario)
    assert ours["executions"] == {"a": 1, "b": 1, "c": 1}


async def test_async_stream_broken_after_the_first_update():
    async def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace)
        first, cfg = start("abrk")
        stream = g.astream(first, cfg)
        async for chunk in stream:
            trace.note("first", chunk)
            break
        await stream.aclose()
        await trace.run("resumed", g.ainvoke(None, cfg))

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"a": 1, "b": 1}


def test_custom_stream_from_the_writer_parameter_and_get_stream_writer():
    def scenario(api: Api, trace: Trace) -> None:
        get_stream_writer = lib(api, "get_stream_writer")

        def a(state: State, writer) -> dict:
            writer({"progress": "a half"})
            writer("a done")
            return {"log": ["a"]}

        def b(state: State) -> dict:
            get_stream_writer()({"progress": "b"})
            return {"log": ["b"]}

        def route(state: State, writer) -> str:
            writer("routing")
            return "b"

        g = (
            api.StateGraph(State)
            .add_node("a", a)
            .add_node("b", b)
            .add_edge(api.START, "a")
            .add_conditional_edges("a", route, ["b"])
            .compile(checkpointer=api.MemorySaver())
        )
        trace.call("custom", g.stream, *start("c1"), stream_mode="custom")
        modes = ["custom", "updates"]
        trace.call("custom+updates", g.stream, *start("c2"), stream_mode=modes)
        trace.call("updates only", g.stream, *start("c3"), stream_mode="updates")

    ours = check_parity(scenario)
    assert ours["custom"] == [{"progress": "a half"}, "a done", "routing", {"progress": "b"}]


def labelled(trace: Trace, payload: dict) -> dict:
    """A tasks/checkpoints payload with task ids labelled (config ids are labelled by
    ``normalize``)."""
    payload = dict(payload)
    if "id" in payload:
        payload["id"] = trace.label("t", payload["id"])
    if "tasks" in payload:
        payload["tasks"] = [{**t, "id": trace.label("t", t["id"])} for t in payload["tasks"]]
        for task in payload["tasks"]:
            task["interrupts"] = [interrupt_of(trace, i) for i in task["interrupts"]]
    if "interrupts" in payload:
        payload["interrupts"] = [interrupt_of(trace, i) for i in payload["interrupts"]]
    return trace.normalize(payload)


def interrupt_of(trace: Trace, interrupt: Any) -> dict:
    """An interrupt in a payload (a dict, or an Interrupt), as value and labelled id."""
    if not isinstance(interrupt, dict):
        interrupt = {"value": interrupt.value, "id": interrupt.id}
    return {"value": interrupt["value"], "id": trace.label("i", interrupt["id"])}


def test_checkpoints_and_tasks_modes():
    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            return {"log": [api.interrupt("ok?")]}

        g = (
            api.StateGraph(State)
            .add_node("a", lambda s: {"log": ["a"]})
            .add_node("ask", ask)
            .add_edge(api.START, "a")
            .add_edge("a", "ask")
            .compile(checkpointer=api.MemorySaver())
        )
        for mode in ("checkpoints", "tasks"):
            first, cfg = start(mode)
            trace.note(mode, [labelled(trace, c) for c in g.stream(first, cfg, stream_mode=mode)])
            resume = g.stream(api.Command(resume="yes"), cfg, stream_mode=mode)
            trace.note(f"{mode} resume", [labelled(trace, c) for c in resume])

    ours = check_parity(scenario)
    assert [c["metadata"]["step"] for c in ours["checkpoints"]] == [-1, 0, 1]


def test_subgraphs_true_prefixes_the_namespace():
    def scenario(api: Api, trace: Trace) -> None:
        g = chain(api, trace)
        trace.call("one mode", g.stream, *start("s1"), subgraphs=True)
        modes = ["values", "updates"]
        trace.call("modes", g.stream, *start("s2"), stream_mode=modes, subgraphs=True)

    ours = check_parity(scenario)
    assert ours["one mode"][0] == ((), {"a": {"log": ["a"]}})


@dataclass
class Ctx:
    user: str
    lang: str = "en"


def test_context_schema_runtime_and_get_runtime():
    def scenario(api: Api, trace: Trace) -> None:
        get_runtime = lib(api, "get_runtime")

        def greet(state: State, runtime) -> dict:
            ctx = runtime.context
            runtime.stream_writer(f"hello {ctx.user}")
            return {"log": [f"{type(ctx).__name__} {ctx.user} {ctx.lang}"]}

        def again(state: State) -> dict:
            return {"log": [f"again {get_runtime(Ctx).context.user}"]}

        g = (
            api.StateGraph(State, context_schema=Ctx)
            .add_node("greet", greet)
            .add_node("again", again)
            .add_edge(api.START, "greet")
            .add_edge("greet", "again")
            .compile(checkpointer=api.MemorySaver())
        )
        first, cfg = start("ctx")
        trace.call("dict context", g.invoke, first, cfg, context={"user": "ada"})
        first, cfg = start("ctx2")
        trace.call("instance", g.invoke, first, cfg, context=Ctx("bob", "fr"))
        first, cfg = start("ctx3")
        trace.call("custom", g.stream, first, cfg, context={"user": "eve"}, stream_mode="custom")

    ours = check_parity(scenario)
    assert ours["dict context"]["log"] == ["Ctx ada en", "again ada"]


@pytest.mark.parametrize("output_keys", [None, "log", ["log", "topic"]])
def test_a_key_written_more_than_once_in_updates(output_keys):
    # A node returning several Commands writes a key more than once: its updates chunk lists
    # one dict per write (one key shown: the list of its values), as LangGraph shows it.
    def scenario(api: Api, trace: Trace) -> None:
        def twice(state: State) -> Any:
            return [api.Command(update={"log": ["a1"]}), api.Command(update={"log": ["a2"]})]

        def both(state: State) -> dict:
            return {"topic": "t", "log": ["b"]}

        g = (
            api.StateGraph(State)
            .add_node("twice", twice)
            .add_node("both", both)
            .add_edge(api.START, "twice")
            .add_edge("twice", "both")
            .compile()
        )
        kwargs = {} if output_keys is None else {"output_keys": output_keys}
        chunks = list(g.stream({"topic": "", "log": []}, stream_mode="updates", **kwargs))
        trace.note("updates", chunks)

    check_parity(scenario)


def test_a_root_state_written_more_than_once_in_updates():
    def scenario(api: Api, trace: Trace) -> None:
        def twice(state: str) -> Any:
            return [api.Command(update="a1"), api.Command(update="a2")]

        g = (
            api.StateGraph(Annotated[str, operator.add])
            .add_node("twice", twice)
            .add_node("once", lambda s: "b")
            .add_edge(api.START, "twice")
            .add_edge("twice", "once")
            .compile()
        )
        trace.note("updates", list(g.stream("", stream_mode="updates")))

    ours = check_parity(scenario)
    assert ours["updates"] == [{"twice": ["a1", "a2"]}, {"once": "b"}]
