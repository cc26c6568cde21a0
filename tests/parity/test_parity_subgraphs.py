"""Subgraphs on both libraries: a compiled graph added as a node, a graph with its own schema
invoked from inside a node (nested two levels), their checkpoints under the task's namespace
in the parent's saver, ``compile(checkpointer=True / False)``, and ``interrupt()`` inside a
subgraph pausing the parent until ``Command(resume=...)`` resumes it without re-running the
subgraph's finished steps."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, acheck_parity, multiset
from test_parity_stream_modes import labelled
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    x: str
    log: Annotated[list, operator.add]


class Inner(TypedDict):
    y: str


class Fan(TypedDict):
    items: list
    y: Annotated[list, operator.add]


def namespace(trace: Trace, ns: str) -> str:
    """A namespace with each level's task id replaced by its trace label."""
    return trace.namespace(ns)


def saved(trace: Trace, label: str, saver: Any) -> None:
    """Every checkpoint the saver holds, by namespace then step: values, source, parents."""
    rows = []
    for tup in saver.list(None):
        metadata = tup.metadata
        rows.append(
            {
                "ns": namespace(trace, tup.config["configurable"]["checkpoint_ns"]),
                "step": metadata["step"],
                "source": metadata["source"],
                "values": trace.normalize(
                    {k: v for k, v in tup.checkpoint["channel_values"].items()}
                ),
                "parents": {
                    namespace(trace, ns): trace.label("c", cid)
                    for ns, cid in (metadata.get("parents") or {}).items()
                },
                "extra metadata": sorted(set(metadata) - {"step", "source", "parents"}),
            }
        )
    rows.sort(key=lambda r: (r["ns"], r["step"], r["source"]))
    trace.note(label, rows)


def asking_subgraph(api: Api, trace: Trace) -> Any:
    """s1 → s2 (s2 asks a question); shares the parent's State."""

    def s1(state: State) -> dict:
        trace.ran("s1")
        return {"log": ["s1"]}

    def s2(state: State) -> dict:
        trace.ran("s2")
        answer = api.interrupt("continue?")
        return {"x": answer, "log": [f"s2:{answer}"]}

    builder = api.StateGraph(State).add_node("s1", s1).add_node("s2", s2)
    builder.add_edge(api.START, "s1").add_edge("s1", "s2")
    return builder.compile()


async def test_compiled_graph_as_a_node_interrupts_and_resumes():
    async def scenario(api: Api, trace: Trace) -> None:
        sub = asking_subgraph(api, trace)

        def p1(state: State) -> dict:
            trace.ran("p1")
            return {"log": ["p1"]}

        def after(state: State) -> dict:
            trace.ran("after")
            return {"log": ["after"]}

        builder = api.StateGraph(State).add_node("p1", p1).add_node("sub", sub)
        builder.add_node("after", after)
        builder.add_edge(api.START, "p1").add_edge("p1", "sub").add_edge("sub", "after")
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        await trace.run("paused", g.ainvoke({"x": "", "log": []}, cfg))
        trace.state("state while paused", await g.aget_state(cfg))
        saved(trace, "saved while paused", g.checkpointer)
        await trace.run("resumed", g.ainvoke(api.Command(resume="yes"), cfg))
        saved(trace, "saved at the end", g.checkpointer)
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    await acheck_parity(scenario)


async def test_graph_invoked_from_a_node_nested_two_levels():
    async def scenario(api: Api, trace: Trace) -> None:
        def deep(state: Inner) -> dict:
            trace.ran("deep")
            first = api.interrupt("first?")
            second = api.interrupt("second?")
            return {"y": f"{state['y']}+{first}+{second}"}

        def prepare(state: Inner) -> dict:
            trace.ran("prepare")
            return {"y": state["y"].upper()}

        inner = api.StateGraph(Inner).add_node("deep", deep).add_edge(api.START, "deep").compile()
        middle = (
            api.StateGraph(Inner)
            .add_node("prepare", prepare)
            .add_node("inner", inner)
            .add_edge(api.START, "prepare")
            .add_edge("prepare", "inner")
            .compile()
        )

        def call(state: State) -> dict:
            trace.ran("call")
            out = middle.invoke({"y": state["x"]})
            return {"x": out["y"], "log": ["call"]}

        builder = api.StateGraph(State).add_node("call", call).add_edge(api.START, "call")
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "nested"}}
        await trace.run("first pause", g.ainvoke({"x": "a", "log": []}, cfg))
        await trace.run("second pause", g.ainvoke(api.Command(resume="one"), cfg))
        trace.state("state while paused", await g.aget_state(cfg))
        await trace.run("done", g.ainvoke(api.Command(resume="two"), cfg))
        saved(trace, "saved", g.checkpointer)

    await acheck_parity(scenario)


@pytest.mark.parametrize("checkpointer", [True, False])
async def test_subgraph_checkpointer_true_or_false(checkpointer):
    async def scenario(api: Api, trace: Trace) -> None:
        def bang(state: Inner) -> dict:
            trace.ran("bang")
            return {"y": state["y"] + "!"}

        sub = (
            api.StateGraph(Inner)
            .add_node("bang", bang)
            .add_edge(api.START, "bang")
            .compile(checkpointer=checkpointer)
        )

        def call(state: State) -> dict:
            return {"x": sub.invoke({"y": state["x"]})["y"]}

        g = (
            api.StateGraph(State)
            .add_node("call", call)
            .add_edge(api.START, "call")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        await trace.run("first", g.ainvoke({"x": "a", "log": []}, cfg))
        await trace.run("second", g.ainvoke({"x": "b", "log": []}, cfg))
        saved(trace, "saved", g.checkpointer)

    await acheck_parity(scenario)


async def test_a_compiled_graph_added_without_a_name_is_named_after_the_graph():
    async def scenario(api: Api, trace: Trace) -> None:
        def work(state: State) -> dict:
            return {"log": ["work"]}

        named = (
            api.StateGraph(State)
            .add_node("work", work)
            .add_edge(api.START, "work")
            .compile(name="researcher")
        )
        g = api.StateGraph(State).add_node(named).add_edge(api.START, "researcher")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "n"}}
        trace.note("nodes", sorted(n for n in g.get_graph().nodes if not n.startswith("__")))
        await trace.run("run", g.ainvoke({"x": "", "log": []}, cfg))
        trace.note("updates", await g.ainvoke({"x": "", "log": []}, cfg, stream_mode="updates"))

    await acheck_parity(scenario)


def task_states(trace: Trace, snapshot: Any) -> list[Any]:
    """Each task's ``state``: a config (its namespace) or a nested snapshot, normalized."""
    out: list[Any] = []
    for task in snapshot.tasks:
        state = task.state
        if state is None:
            out.append(None)
        elif isinstance(state, dict):
            out.append({"ns": namespace(trace, state["configurable"]["checkpoint_ns"])})
        else:
            out.append(
                {
                    "ns": namespace(trace, state.config["configurable"]["checkpoint_ns"]),
                    "values": trace.normalize(state.values),
                    "next": state.next,
                    "interrupts": trace.normalize(list(state.interrupts)),
                    "tasks": task_states(trace, state),
                }
            )
    return out


@pytest.mark.parametrize("how", ["node", "called"])
async def test_subgraph_state_history_and_update(how):
    async def scenario(api: Api, trace: Trace) -> None:
        sub = asking_subgraph(api, trace)

        def call(state: State) -> dict:
            return sub.invoke(state)

        builder = api.StateGraph(State).add_node("p", sub if how == "node" else call)
        g = builder.add_edge(api.START, "p").compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        await trace.run("paused", g.ainvoke({"x": "", "log": []}, cfg))
        parent = await g.aget_state(cfg)
        trace.note("task states", task_states(trace, parent))
        nested = await g.aget_state(cfg, subgraphs=True)
        trace.note("task states with subgraphs", task_states(trace, nested))
        where = parent.tasks[0].state
        trace.history("subgraph history", [s async for s in g.aget_state_history(where)])
        inside = await g.aget_state(where)
        trace.state("subgraph state", inside)
        await g.aupdate_state(inside.config, {"x": "patched"})
        after = await g.aget_state(cfg, subgraphs=True)
        trace.note("after update", task_states(trace, after))
        await trace.run("resumed", g.ainvoke(api.Command(resume="ok"), cfg))
        trace.history("parent history", [s async for s in g.aget_state_history(cfg)])

    await acheck_parity(scenario)


def stream_items(trace: Trace, items: list[Any], mode: Any = None) -> list[Any]:
    """Streamed ``(namespace, ...)`` items with task ids in namespaces labelled; debug
    chunks without their timestamp, their ids labelled."""
    out = []
    for item in items:
        namespace = tuple(trace.namespace(part) for part in item[0])
        chunk = item[-1]
        if mode == "debug":
            payload = dict(chunk["payload"])
            parents = (payload.get("metadata") or {}).get("parents")
            if parents:
                payload["metadata"] = {
                    **payload["metadata"],
                    "parents": {
                        trace.namespace(k): trace.label("c", v) for k, v in parents.items()
                    },
                }
            chunk = {"step": chunk["step"], "type": chunk["type"], "payload": payload}
            out.append((namespace, labelled(trace, chunk["payload"]), chunk["type"], chunk["step"]))
        else:
            out.append((namespace, *trace.normalize(list(item[1:]))))
    return out


def nested_three_levels(api: Api, trace: Trace) -> Any:
    """parent: call (invokes middle: inner (a graph node: deep)) → p."""

    def deep(state: Inner) -> dict:
        trace.ran("deep")
        return {"y": state["y"] + "!"}

    inner = api.StateGraph(Inner).add_node("deep", deep).add_edge(api.START, "deep").compile()
    middle = api.StateGraph(Inner).add_node("inner", inner).add_edge(api.START, "inner").compile()

    def call(state: State) -> dict:
        return {"x": middle.invoke({"y": state["x"]})["y"], "log": ["call"]}

    def p(state: State) -> dict:
        return {"log": ["p"]}

    builder = api.StateGraph(State).add_node("call", call).add_node("p", p)
    builder.add_edge(api.START, "call").add_edge("call", "p")
    return builder.compile(checkpointer=api.MemorySaver())


@pytest.mark.parametrize("mode", ["updates", "values", "debug", ("updates", "values")])
async def test_stream_subgraphs_yields_each_namespace(mode):
    async def scenario(api: Api, trace: Trace) -> None:
        g = nested_three_levels(api, trace)
        cfg = {"configurable": {"thread_id": "s"}}
        stream_mode = list(mode) if isinstance(mode, tuple) else mode
        items = [
            item
            async for item in g.astream(
                {"x": "a", "log": []}, cfg, stream_mode=stream_mode, subgraphs=True
            )
        ]
        trace.note("items", stream_items(trace, items, mode))
        plain = [c async for c in g.astream({"x": "b", "log": []}, cfg, stream_mode="updates")]
        trace.note("without subgraphs", plain)

    await acheck_parity(scenario)


@pytest.mark.parametrize("mode", ["updates", "debug"])
async def test_stream_subgraphs_through_an_interrupt(mode):
    async def scenario(api: Api, trace: Trace) -> None:
        sub = asking_subgraph(api, trace)
        g = api.StateGraph(State).add_node("sub", sub).add_edge(api.START, "sub")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "i"}}
        first = [
            i async for i in g.astream({"x": "", "log": []}, cfg, stream_mode=mode, subgraphs=True)
        ]
        trace.note("until the interrupt", stream_items(trace, first, mode))
        resumed = [
            i
            async for i in g.astream(
                api.Command(resume="go"), cfg, stream_mode=mode, subgraphs=True
            )
        ]
        trace.note("resumed", stream_items(trace, resumed, mode))

    await acheck_parity(scenario)


async def test_command_to_the_parent_graph():
    async def scenario(api: Api, trace: Trace) -> None:
        def s1(state: State) -> dict:
            trace.ran("s1")
            return {"log": ["s1"]}

        def s2(state: State) -> Any:
            trace.ran("s2")
            return api.Command(graph=api.Command.PARENT, goto="fix", update={"x": "sub says"})

        def s3(state: State) -> dict:
            trace.ran("s3")
            return {"log": ["s3"]}

        sub = (
            api.StateGraph(State)
            .add_node("s1", s1)
            .add_node("s2", s2)
            .add_node("s3", s3)
            .add_edge(api.START, "s1")
            .add_edge("s1", "s2")
            .add_edge("s2", "s3")
            .compile()
        )

        def fix(state: State) -> dict:
            trace.ran("fix")
            return {"log": [f"fix saw {state['x']}"]}

        def after(state: State) -> dict:
            return {"log": ["after"]}

        builder = api.StateGraph(State).add_node("sub", sub).add_node("fix", fix)
        builder.add_node("after", after).add_edge(api.START, "sub").add_edge("sub", "after")
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "c"}}
        items = [
            i
            async for i in g.astream(
                {"x": "", "log": []}, cfg, stream_mode="updates", subgraphs=True
            )
        ]
        # fix and after run in one step: their updates come in completion order
        trace.note("items", multiset(stream_items(trace, items)))
        trace.state("final", await g.aget_state(cfg))
        trace.history("history", [s async for s in g.aget_state_history(cfg)])

    await acheck_parity(scenario)


async def test_interrupt_before_inside_a_subgraph_pauses_the_parent():
    async def scenario(api: Api, trace: Trace) -> None:
        def a(state: Inner) -> dict:
            trace.ran("a")
            return {"y": state["y"] + "a"}

        def b(state: Inner) -> dict:
            trace.ran("b")
            return {"y": state["y"] + "b"}

        sub = (
            api.StateGraph(Inner)
            .add_node("a", a)
            .add_node("b", b)
            .add_edge(api.START, "a")
            .add_edge("a", "b")
            .compile(interrupt_before=["b"])
        )

        def call(state: State) -> dict:
            return {"x": sub.invoke({"y": state["x"]})["y"]}

        g = api.StateGraph(State).add_node("call", call).add_edge(api.START, "call")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "static"}}
        await trace.run("paused", g.ainvoke({"x": "1", "log": []}, cfg))
        trace.state("while paused", await g.aget_state(cfg))
        await trace.run("resumed", g.ainvoke(None, cfg))
        saved(trace, "saved", g.checkpointer)

    await acheck_parity(scenario)


async def test_one_node_running_the_same_subgraph_twice():
    async def scenario(api: Api, trace: Trace) -> None:
        def a(state: Inner) -> dict:
            trace.ran("a")
            return {"y": state["y"] + "a"}

        sub = api.StateGraph(Inner).add_node("a", a).add_edge(api.START, "a").compile()

        def twice(state: State) -> dict:
            once = sub.invoke({"y": state["x"]})["y"]
            return {"x": sub.invoke({"y": once})["y"]}

        g = api.StateGraph(State).add_node("twice", twice).add_edge(api.START, "twice")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "twice"}}
        await trace.run("result", g.ainvoke({"x": "1", "log": []}, cfg))
        saved(trace, "saved", g.checkpointer)

    await acheck_parity(scenario)


async def test_a_node_asking_after_its_subgraph_asked():
    async def scenario(api: Api, trace: Trace) -> None:
        def deep(state: Inner) -> dict:
            trace.ran("deep")
            return {"y": state["y"] + api.interrupt("inner?")}

        sub = api.StateGraph(Inner).add_node("deep", deep).add_edge(api.START, "deep").compile()

        def call(state: State) -> dict:
            trace.ran("call")
            inner = sub.invoke({"y": state["x"]})["y"]
            mine = api.interrupt("outer?")
            return {"x": f"{inner}/{mine}"}

        g = api.StateGraph(State).add_node("call", call).add_edge(api.START, "call")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "both"}}
        await trace.run("inner pause", g.ainvoke({"x": "a", "log": []}, cfg))
        await trace.run("outer pause", g.ainvoke(api.Command(resume="1"), cfg))
        await trace.run("done", g.ainvoke(api.Command(resume="2"), cfg))

    await acheck_parity(scenario)


@pytest.mark.parametrize("subgraphs", [False, True])
async def test_messages_stream_from_a_subgraph_model(subgraphs):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from test_parity_messages import names

    async def scenario(api: Api, trace: Trace) -> None:
        lib = names(api)
        model = GenericFakeChatModel(messages=iter([AIMessage("hello there", id="m1")]))

        def bot(state: Any) -> dict:
            return {"messages": [model.invoke(state["messages"])]}

        sub = api.StateGraph(lib.MessagesState).add_node("bot", bot)
        sub = sub.add_edge(api.START, "bot").compile()
        g = api.StateGraph(lib.MessagesState).add_node("sub", sub).add_edge(api.START, "sub")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "m"}}
        seen = []
        async for item in g.astream(
            {"messages": [("user", "hi")]}, cfg, stream_mode="messages", subgraphs=subgraphs
        ):
            namespace, (message, metadata) = item if subgraphs else ((), item)
            seen.append(
                (
                    tuple(trace.namespace(p) for p in namespace),
                    message.content,
                    message.id,
                    metadata["langgraph_node"],
                    trace.namespace(metadata["langgraph_checkpoint_ns"]),
                )
            )
        trace.note("messages", seen)

    await acheck_parity(scenario)


async def test_send_fans_out_to_a_subgraph_node():
    async def scenario(api: Api, trace: Trace) -> None:
        def shout(state: Inner) -> dict:
            trace.ran("shout")
            return {"y": state["y"].upper()}

        sub = api.StateGraph(Inner).add_node("shout", shout).add_edge(api.START, "shout")
        sub = sub.compile()

        def fan(state: Fan) -> list:
            return [api.Send("sub", {"y": item}) for item in state["items"]]

        def collect(state: Inner) -> dict:
            return {"y": [sub.invoke(state)["y"]]}

        g = api.StateGraph(Fan).add_node("sub", collect)
        g = g.add_conditional_edges(api.START, fan).compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "fan"}}
        out = await g.ainvoke({"items": ["a", "b", "c"], "y": []}, cfg)
        trace.note("result", sorted(out["y"]))
        # One namespace per Send task (their order is completion order): its steps and the
        # value it ended with.
        ended: dict[str, tuple[int, Any]] = {}
        for tup in g.checkpointer.list(None):
            ns = tup.config["configurable"]["checkpoint_ns"]
            step = tup.metadata["step"]
            if ns and step >= ended.get(ns, (-9, None))[0]:
                ended[ns] = (step, tup.checkpoint["channel_values"].get("y"))
        trace.note("subgraphs", sorted((ns.split(":")[0], *v) for ns, v in ended.items()))

    await acheck_parity(scenario)


@pytest.mark.parametrize("how", ["node", "called"])
async def test_astream_events_include_the_subgraph_run(how):
    async def scenario(api: Api, trace: Trace) -> None:
        def inner(state: State) -> dict:
            return {"x": state["x"] + "i"}

        sub = api.StateGraph(State).add_node("inner", inner).add_edge(api.START, "inner")
        sub = sub.compile(name="reviewer")

        def call(state: State) -> dict:
            return {"x": sub.invoke(state)["x"]}

        def outer(state: State) -> dict:
            return {"x": state["x"] + "o"}

        builder = api.StateGraph(State).add_node("outer", outer)
        builder.add_node("sub", sub if how == "node" else call)
        g = builder.add_edge(api.START, "outer").add_edge("outer", "sub")
        g = g.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "events"}}
        names: dict[str, str] = {}
        seen = []
        async for event in g.astream_events({"x": "", "log": []}, cfg, version="v2"):
            names.setdefault(event["run_id"], event["name"])
            seen.append(
                (
                    event["event"],
                    event["name"],
                    event["metadata"].get("langgraph_node"),
                    trace.namespace(event["metadata"].get("langgraph_checkpoint_ns", "")),
                    [names.get(p, "?") for p in event["parent_ids"]],
                    trace.normalize(event["data"].get("chunk")),
                )
            )
        trace.note("events", seen)

    await acheck_parity(scenario)


async def test_astream_events_of_a_chat_model_inside_a_subgraph():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from test_parity_messages import names

    async def scenario(api: Api, trace: Trace) -> None:
        lib = names(api)
        model = GenericFakeChatModel(messages=iter([AIMessage("hi you", id="m1")]))

        def bot(state: Any) -> dict:
            return {"messages": [model.invoke(state["messages"])]}

        sub = api.StateGraph(lib.MessagesState).add_node("bot", bot)
        sub = sub.add_edge(api.START, "bot").compile()
        g = api.StateGraph(lib.MessagesState).add_node("sub", sub).add_edge(api.START, "sub")
        g = g.compile(checkpointer=api.MemorySaver())
        names_by_run: dict[str, str] = {}
        tokens = []
        async for event in g.astream_events(
            {"messages": [("user", "hi")]}, {"configurable": {"thread_id": "e"}}, version="v2"
        ):
            names_by_run.setdefault(event["run_id"], event["name"])
            if event["event"] == "on_chat_model_stream":
                parents = [names_by_run.get(p, "?") for p in event["parent_ids"]]
                tokens.append((event["data"]["chunk"].content, parents))
        trace.note("tokens", tokens)

    await acheck_parity(scenario)


@pytest.mark.parametrize("subgraphs", [True, False])
async def test_a_subgraph_paused_by_interrupt_before_streams_as_langgraph(subgraphs):
    # The subgraph's static interrupt is reported once, by the top level (no namespaced
    # __interrupt__, no update or task result of the paused task); on resume the step's task
    # that had finished is reported as started and its saved writes as a cached update.
    async def scenario(api: Api, trace: Trace) -> None:
        def one(state: State) -> dict:
            trace.ran("one")
            return {"log": ["one"]}

        def two(state: State) -> dict:
            trace.ran("two")
            return {"log": ["two"]}

        def side(state: State) -> dict:
            trace.ran("side")
            return {"log": ["side"]}

        inner = (
            api.StateGraph(State)
            .add_node("one", one)
            .add_node("two", two)
            .add_edge(api.START, "one")
            .add_edge("one", "two")
            .compile(interrupt_before=["two"])
        )
        g = (
            api.StateGraph(State)
            .add_node("inner", inner)
            .add_node("side", side)
            .add_edge(api.START, "inner")
            .add_edge(api.START, "side")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "static"}}
        modes = ["updates", "values", "tasks"]

        def shown(items: list[Any]) -> list[Any]:
            out = []
            for item in items:
                *namespace, mode, chunk = item if subgraphs else ((), *item)
                chunk = labelled(trace, chunk) if mode == "tasks" else trace.normalize(chunk)
                out.append(([trace.namespace(p) for p in namespace[0]], mode, chunk))
            return out

        first = [
            i
            async for i in g.astream(
                {"x": "", "log": []}, cfg, stream_mode=modes, subgraphs=subgraphs
            )
        ]
        trace.note("until the interrupt", shown(first))
        again = [i async for i in g.astream(None, cfg, stream_mode=modes, subgraphs=subgraphs)]
        trace.note("resumed", shown(again))

    ours = await acheck_parity(scenario)
    assert ours["executions"] == {"one": 1, "side": 1, "two": 1}
