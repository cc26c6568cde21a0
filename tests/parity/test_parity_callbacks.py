"""LangChain callback handlers a user passes in ``config["callbacks"]``, on both libraries: the
graph's chain run, one run per node under it (``graph:step:N``), one run per conditional edge
under its node (``seq:step:K``), a runnable node's steps under the node's run, the chat models
a node calls, subgraphs, and how a run that pauses or fails ends its runs. The handlers see the
same sequence of runs — names, tags, parent links, inputs and outputs."""

from __future__ import annotations

import itertools
import operator
from typing import Annotated, Any
from uuid import UUID

import pytest
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    log: Annotated[list, operator.add]
    n: int


class Runs:
    """Labels run ids in order of first appearance (``r0``, ``r1``, …)."""

    def __init__(self) -> None:
        self.labels: dict[UUID, str] = {}

    def __call__(self, run_id: UUID | None) -> str | None:
        if run_id is None:
            return None
        return self.labels.setdefault(run_id, f"r{len(self.labels)}")


def _shown(value: Any) -> Any:
    """Inputs and outputs as users read them (a Command or Send by its repr)."""
    if isinstance(value, (dict, list, str, int, type(None))):
        return value
    return repr(value)


class Recorder(BaseCallbackHandler):
    """A user's handler: records chain and chat model runs."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.run = Runs()

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        node = (metadata or {}).get("langgraph_node")
        start = ("start", name, self.run(run_id), self.run(parent_run_id), tags, node)
        self.events.append((*start, _shown(inputs)))

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self.events.append(("end", self.run(run_id), self.run(parent_run_id), _shown(outputs)))

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        error_type = type(error).__name__
        self.events.append(("error", self.run(run_id), self.run(parent_run_id), error_type))

    def on_chat_model_start(
        self,
        serialized: Any,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        node = (metadata or {}).get("langgraph_node")
        self.events.append(("chat model", self.run(run_id), self.run(parent_run_id), tags, node))


class AsyncRecorder(AsyncCallbackHandler):
    """An async handler: records the chain runs it is told about (name, run, parent)."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.run = Runs()

    async def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.events.append(("start", name, self.run(run_id), self.run(parent_run_id)))

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append(("end", self.run(run_id)))


def route(state: State) -> str:
    """A named conditional edge."""
    return "act" if state["n"] < 3 else "__end__"


def _loop_graph(api: Api) -> Any:
    """plan → (route) → act → plan …: a function node with a named conditional edge, a
    RunnableLambda node, START with a lambda conditional edge, a runnable conditional edge."""

    def plan(state: State) -> dict:
        return {"log": ["plan"], "n": state["n"] + 1}

    act = RunnableLambda(lambda s: {"log": ["act"]}, name="actor")
    builder = api.StateGraph(State).add_node("plan", plan).add_node("act", act)
    builder.add_node("check", lambda s: {"log": ["check"]})
    builder.add_conditional_edges(api.START, lambda s: "plan")
    builder.add_conditional_edges("plan", route, ["act", api.END])
    builder.add_edge("act", "check")
    builder.add_conditional_edges("check", RunnableLambda(lambda s: "plan", name="again"))
    return builder.compile(checkpointer=api.MemorySaver())


def test_a_handler_sees_the_graph_its_nodes_and_their_conditional_edges():
    def scenario(api: Api, trace: Trace) -> None:
        g = _loop_graph(api)
        recorder = Recorder()
        cfg = {
            "configurable": {"thread_id": "callbacks"},
            "callbacks": [recorder],
            "tags": ["mine"],
        }
        trace.note("result", g.invoke({"log": [], "n": 1}, cfg))
        trace.note("runs", recorder.events)
        named = {"run_name": "my run", "configurable": {"thread_id": "named"}}
        again = Recorder()
        g.invoke({"log": [], "n": 3}, {**named, "callbacks": [again]})
        trace.note("named run", again.events)

    ours = check_parity(scenario)
    runs = ours["runs"]
    assert runs[0] == ("start", "LangGraph", "r0", None, ["mine"], None, {"log": [], "n": 1})
    route_start = next(e for e in runs if e[0] == "start" and e[1] == "route")
    assert route_start[3] == "r3" and "seq:step:3" in route_start[4]  # under plan's run
    assert runs[-1] == ("end", "r0", None, ours["result"])
    assert ours["named run"][0][1] == "my run"


async def test_an_async_handler_on_ainvoke():
    async def scenario(api: Api, trace: Trace) -> None:
        g = _loop_graph(api)
        recorder = AsyncRecorder()
        cfg = {"configurable": {"thread_id": "async"}, "callbacks": [recorder]}
        await trace.run("result", g.ainvoke({"log": [], "n": 2}, cfg))
        trace.note("runs", recorder.events)

    ours = await acheck_parity(scenario)
    names = [e[1] for e in ours["runs"] if e[0] == "start"]
    # a lambda conditional edge has no run name in an async run (RunnableCallable in a sync one)
    assert names[:4] == ["LangGraph", "__start__", None, "plan"]


def test_interrupts_and_errors_end_the_runs_as_langgraph_does():
    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            return {"log": [api.interrupt("continue?")]}

        def first(state: State) -> Any:
            return api.Command(update={"log": ["first"]}, goto="ask")

        def boom(state: State) -> dict:
            raise ValueError("bad input")

        g = api.StateGraph(State).add_node("first", first).add_node("ask", ask)
        g = g.add_edge(api.START, "first").compile(checkpointer=api.MemorySaver())
        paused = Recorder()
        cfg = {"configurable": {"thread_id": "pause"}, "callbacks": [paused]}
        trace.call("paused", g.invoke, {"log": [], "n": 0}, cfg)
        trace.note("paused runs", paused.events)
        resumed = Recorder()
        trace.call("resumed", g.invoke, api.Command(resume="yes"), {**cfg, "callbacks": [resumed]})
        trace.note("resumed runs", resumed.events)

        failing = api.StateGraph(State).add_node("boom", boom).add_edge(api.START, "boom")
        failed = Recorder()
        cfg = {"configurable": {"thread_id": "fail"}, "callbacks": [failed]}
        trace.call("failed", failing.compile(checkpointer=api.MemorySaver()).invoke, {"n": 0}, cfg)
        trace.note("failed runs", failed.events)

    ours = check_parity(scenario)
    assert ("error", "r2", "r0", "GraphInterrupt") in ours["paused runs"]
    assert ours["failed runs"][-2:] == [
        ("error", "r1", "r0", "ValueError"),
        ("error", "r0", None, "ValueError"),
    ]


def test_chat_models_and_subgraphs_run_under_the_node_that_calls_them():
    def scenario(api: Api, trace: Trace) -> None:
        model = GenericFakeChatModel(messages=itertools.cycle([AIMessage(content="hi")]))

        def ask_model(state: State) -> dict:
            return {"log": [model.invoke("question").content]}

        inner = api.StateGraph(State).add_node("x", ask_model).add_edge(api.START, "x").compile()

        def calls_inner(state: State) -> dict:
            return inner.invoke(state)

        builder = api.StateGraph(State).add_node("calls", calls_inner).add_node("sub", inner)
        builder.add_edge(api.START, "calls").add_edge("calls", "sub")
        g = builder.compile(checkpointer=api.MemorySaver())
        recorder = Recorder()
        cfg = {"configurable": {"thread_id": "nested"}, "callbacks": [recorder]}
        trace.note("result", g.invoke({"log": [], "n": 0}, cfg))
        trace.note("runs", recorder.events)

    ours = check_parity(scenario)
    chat = [e for e in ours["runs"] if e[0] == "chat model"]
    assert chat == [
        ("chat model", "r4", "r3", ["seq:step:1"], "x"),
        ("chat model", "r8", "r7", ["seq:step:1"], "x"),
    ]


def test_parallel_tasks_each_have_a_run_under_the_graph():
    def scenario(api: Api, trace: Trace) -> None:
        def fan(state: State) -> list:
            return [api.Send("work", {"log": [], "n": i}) for i in range(3)]

        def work(state: State) -> dict:
            return {"log": [state["n"]]}

        builder = api.StateGraph(State).add_node("work", work)
        builder.add_conditional_edges(api.START, fan, ["work"])
        g = builder.compile(checkpointer=api.MemorySaver())
        recorder = Recorder()
        cfg = {"configurable": {"thread_id": "fan"}, "callbacks": [recorder]}
        trace.note("result", g.invoke({"log": [], "n": 0}, cfg))
        # Which task starts or ends first is up to the scheduler: compare run by run.
        by_run: dict[str, list[Any]] = {}
        for event in recorder.events:
            by_run.setdefault(event[2] if event[0] == "start" else event[1], []).append(event)
        starts = sorted(repr(e[0][1:2] + e[0][3:]) for e in by_run.values())
        ends = sorted(repr((e[0][1], e[-1][0], e[-1][3])) for e in by_run.values())
        trace.note("runs", (starts, ends))

    check_parity(scenario)


def test_a_react_agent_with_langgraphs_tool_node():
    from langchain_core.messages import HumanMessage
    from langgraph.prebuilt import ToolNode, tools_condition
    from test_parity_messages import names
    from test_parity_runnables import add, scripted_model, shout

    class ToolRecorder(Recorder):
        def on_tool_start(
            self,
            serialized: Any,
            input_str: str,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            tags: list[str] | None = None,
            **kwargs: Any,
        ) -> None:
            self.events.append(("tool", self.run(run_id), self.run(parent_run_id), tags))

    def scenario(api: Api, trace: Trace) -> None:
        lib = names(api)
        llm = scripted_model().bind_tools([add, shout])

        def agent(state: Any) -> dict:
            return {"messages": [llm.invoke(state["messages"])]}

        builder = api.StateGraph(lib.MessagesState).add_node("agent", agent)
        builder.add_node("tools", ToolNode([add, shout]))
        builder.add_edge(api.START, "agent").add_conditional_edges("agent", tools_condition)
        builder.add_edge("tools", "agent")
        g = builder.compile(checkpointer=api.MemorySaver())
        recorder = ToolRecorder()
        cfg = {"configurable": {"thread_id": "agent"}, "callbacks": [recorder]}
        g.invoke({"messages": [HumanMessage("2+3, loudly?", id="q")]}, cfg)
        # inputs and outputs hold message objects: compare the shape of the run tree
        trace.note("runs", [e[:5] if e[0] == "start" else e[:3] for e in recorder.events])

    ours = check_parity(scenario)
    tools = [e for e in ours["runs"] if e[0] == "tool"]
    assert len(tools) == 2 and all(e[2] == tools[0][2] for e in tools)  # both under "tools"


def test_a_run_id_in_the_config_names_the_graph_run_only():
    run_id = UUID("01234567-89ab-4def-8123-456789abcdef")

    def scenario(api: Api, trace: Trace) -> None:
        double = RunnableLambda(lambda n: n * 2, name="double")

        def node(state: State, config: RunnableConfig) -> dict:
            return {"log": [double.invoke(state["n"], config)]}

        g = api.StateGraph(State).add_node("node", node).add_edge(api.START, "node").compile()
        recorder = Recorder()
        g.invoke({"log": [], "n": 4}, {"callbacks": [recorder], "run_id": run_id})
        trace.note("graph run", recorder.run(run_id))
        trace.note("runs", recorder.events)

    ours = check_parity(scenario)
    assert ours["graph run"] == "r0"
    assert [e[2] for e in ours["runs"] if e[0] == "start"] == ["r0", "r1", "r2"]


async def test_a_sibling_cancelled_by_a_failure_ends_its_run_with_the_cancellation():
    import asyncio

    async def scenario(api: Api, trace: Trace) -> None:
        slow_started = asyncio.Event()

        async def slow(state: State) -> dict:
            slow_started.set()
            await asyncio.Event().wait()  # until cancelled
            return {"log": ["never"]}

        async def bad(state: State) -> dict:
            await slow_started.wait()
            raise ValueError("bad input")

        builder = api.StateGraph(State).add_node("slow", slow).add_node("bad", bad)
        builder.add_edge(api.START, "slow").add_edge(api.START, "bad")
        g = builder.compile(checkpointer=api.MemorySaver())
        recorder = Recorder()
        cfg = {"configurable": {"thread_id": "cancel"}, "callbacks": [recorder]}
        await trace.run("failed", g.ainvoke({"log": [], "n": 0}, cfg))
        starts = sorted(e[1] for e in recorder.events if e[0] == "start")
        ends = [e[3] for e in recorder.events if e[0] != "start"]  # the error types, in order
        trace.note("runs", (starts, ends))

    ours = await acheck_parity(scenario)
    assert ours["runs"][1] == ["ValueError", "CancelledError", "ValueError"]


def test_task_calls_run_under_their_callers_run():
    def scenario(api: Api, trace: Trace) -> None:
        from test_parity_func import func_names

        entrypoint, task = func_names(api)

        @task
        def double(x: int, *, by: int = 2) -> int:
            return x * by

        @entrypoint(checkpointer=api.MemorySaver())
        def graph(numbers: list) -> list:
            return [double(n).result() for n in numbers]

        recorder = Recorder()
        cfg = {"configurable": {"thread_id": "t"}, "callbacks": [recorder]}
        trace.note("result", graph.invoke([1, 2], cfg))
        # (name, run, parent, inputs) of each run that starts; how each run ends
        trace.note("starts", [(e[1], e[2], e[3], e[6]) for e in recorder.events if e[0] == "start"])
        trace.note("ends", [e for e in recorder.events if e[0] != "start"])

    check_parity(scenario)
