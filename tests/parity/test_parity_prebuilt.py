"""LangGraph's prebuilt agent parts on both libraries: ``durable_debug.prebuilt`` on our engine
against ``langgraph.prebuilt`` on LangGraph — ``ToolNode`` (errors, injected state, store and
runtime, tools returning a ``Command``), ``tools_condition`` and ``create_react_agent`` (both
versions, a prompt, ``return_direct``, an interrupt inside a tool, a structured answer), with
fake chat models whose replies are scripted (no network). LangGraph's own ``ToolNode`` inside
our graphs, with either library's ``Command``, is checked too."""

import types
import warnings
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from parity_harness import Api, Trace, acheck_parity, check_parity
from test_parity_messages import names, shown

import durable_debug
from durable_debug.prebuilt import ToolNode

pytestmark = pytest.mark.parity


def prebuilt(api: Api) -> types.SimpleNamespace:
    """The prebuilt names of the library ``api`` comes from."""
    if api.name == "langgraph":
        import langgraph.prebuilt as lib
        from langgraph.store.memory import InMemoryStore
        from langgraph.types import interrupt
    else:
        import durable_debug.prebuilt as lib
        from durable_debug import interrupt
        from durable_debug.store.memory import InMemoryStore

    def create_react_agent(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():  # LangGraph's points at langchain.agents
            warnings.simplefilter("ignore")
            return lib.create_react_agent(*args, **kwargs)

    return types.SimpleNamespace(
        ToolNode=lib.ToolNode,
        tools_condition=lib.tools_condition,
        InjectedState=lib.InjectedState,
        InjectedStore=lib.InjectedStore,
        ToolRuntime=lib.ToolRuntime,
        create_react_agent=create_react_agent,
        InMemoryStore=InMemoryStore,
        interrupt=interrupt,
    )


class ScriptedModel(GenericFakeChatModel):
    """A fake chat model whose replies are scripted; ``bind_tools`` keeps it as it is."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self


def scripted(*replies: AIMessage) -> ScriptedModel:
    return ScriptedModel(messages=iter(replies))


def calling(*calls: tuple[str, dict[str, Any], str], id: str = "ai-1") -> AIMessage:
    """An AI message asking for ``(tool, args, call id)`` calls."""
    return AIMessage("", id=id, tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


def tool_results(trace: Trace, value: Any) -> Any:
    """Tool messages as (call id, tool, content, status); other messages as ``shown``."""
    if isinstance(value, ToolMessage):
        return ("tool", value.tool_call_id, value.name, value.content, value.status)
    if isinstance(value, dict):
        return {k: tool_results(trace, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [tool_results(trace, v) for v in value]
    return shown(trace, value)


async def shown_tools(trace: Trace, awaitable: Any) -> Any:
    """What ``awaitable`` returns, through :func:`tool_results` (message ids are random)."""
    return tool_results(trace, await awaitable)


def sorted_chunks(trace: Trace, chunks: list[Any]) -> list[Any]:
    """Stream chunks of tasks that ran concurrently, in a fixed order (both libraries give
    them in the order the tasks finished)."""
    return sorted(repr(tool_results(trace, c)) for c in chunks)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


@tool(return_direct=True)
def final_answer(text: str) -> str:
    """Answer the user directly."""
    return f"FINAL: {text}"


def alone(api: Api, node: Any) -> Any:
    """A graph that runs ``node`` (a ToolNode) once on its input messages."""
    builder = api.StateGraph(names(api).MessagesState).add_node("tools", node)
    return builder.add_edge(api.START, "tools").compile()


async def test_tool_node_answers_every_call_and_handles_errors_as_langgraph():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        message = calling(
            ("add", {"a": 2, "b": 3}, "c1"),
            ("nope", {}, "c2"),
            ("add", {"a": "x"}, "c3"),
        )
        g = alone(api, lib.ToolNode([add, fail]))
        answered = await g.ainvoke({"messages": [message]})
        trace.note("answers", tool_results(trace, answered["messages"]))
        failing = {"messages": [calling(("fail", {"reason": "disk full"}, "c4"))]}
        await trace.run("default: errors propagate", g.ainvoke(failing))
        for label, handling in (
            ("True", True),
            ("text", "it broke"),
            ("function", lambda e: f"handled {type(e).__name__}"),
            ("matching type", RuntimeError),
            ("other type", ValueError),
            ("False", False),
        ):
            handled = alone(api, lib.ToolNode([fail], handle_tool_errors=handling))
            await trace.run(
                f"handle_tool_errors={label}", shown_tools(trace, handled.ainvoke(failing))
            )
        await trace.run("no AI message", g.ainvoke({"messages": [HumanMessage("hi", id="h")]}))
        trace.note("condition with calls", lib.tools_condition({"messages": [message]}))
        trace.note("condition without", lib.tools_condition([AIMessage("done")]))

    await acheck_parity(scenario)


def test_tool_node_on_a_list_of_messages_answers_with_a_list():
    """Given a list of messages (not a state), the node returns the tool messages as a list."""
    message = calling(("add", {"a": 2, "b": 3}, "c1"), ("add", {"a": 1, "b": 1}, "c2"))
    answers = ToolNode([add]).invoke([HumanMessage("sums?"), message])
    assert [(m.tool_call_id, m.content) for m in answers] == [("c1", "5"), ("c2", "2")]


async def test_tool_node_injects_state_store_runtime_and_call_id():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        msgs = names(api)

        @tool
        def whoami(
            question: str,
            user: Annotated[str, lib.InjectedState("user")],
            state: Annotated[dict, lib.InjectedState],
            store: Annotated[Any, lib.InjectedStore()],
            call_id: Annotated[str, InjectedToolCallId],
        ) -> str:
            """Answer about the user."""
            item = store.get(("users",), user)
            seen = sorted(k for k in state if k != "messages")
            return f"{question} -> {user} ({item.value['plan']}), keys {seen}, call {call_id}"

        @tool
        def with_runtime(n: int, runtime: lib.ToolRuntime) -> str:
            """Read the runtime."""
            return f"n={n} call={runtime.tool_call_id} user={runtime.state['user']}"

        class State(msgs.MessagesState):  # type: ignore[name-defined, misc]
            user: str

        def agent(state: State) -> dict:
            if len(state["messages"]) > 1:
                return {"messages": [AIMessage("done", id="ai-2")]}
            call = calling(
                ("whoami", {"question": "plan?"}, "c1"), ("with_runtime", {"n": 4}, "c2")
            )
            return {"messages": [call]}

        store = lib.InMemoryStore()
        store.put(("users",), "ada", {"plan": "pro"})
        builder = api.StateGraph(State).add_node("agent", agent)
        builder.add_node("tools", lib.ToolNode([whoami, with_runtime]))
        builder.add_edge(api.START, "agent").add_conditional_edges("agent", lib.tools_condition)
        builder.add_edge("tools", "agent")
        g = builder.compile(store=store)
        result = await g.ainvoke({"messages": [HumanMessage("hi", id="h")], "user": "ada"})
        trace.note("result", tool_results(trace, result))
        trace.note("schema the model sees", sorted(whoami.tool_call_schema.model_fields))
        trace.note("runtime tool schema", sorted(with_runtime.tool_call_schema.model_fields))
        no_store = builder.compile()
        await trace.run(
            "no store",
            no_store.ainvoke({"messages": [HumanMessage("hi")], "user": "ada"}),
            message=False,  # the same error type, each library's words
        )

    await acheck_parity(scenario)


async def test_a_tool_returning_a_command_updates_the_state():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        msgs = names(api)

        class State(msgs.MessagesState):  # type: ignore[name-defined, misc]
            user_name: str

        @tool
        def remember(name: str, call_id: Annotated[str, InjectedToolCallId]) -> Any:
            """Remember the user's name."""
            return api.Command(
                update={
                    "user_name": name,
                    "messages": [ToolMessage(f"saved {name}", tool_call_id=call_id)],
                }
            )

        @tool
        def forget(call_id: Annotated[str, InjectedToolCallId]) -> Any:
            """A Command without the tool's answer."""
            return api.Command(update={"user_name": ""})

        def agent(state: State) -> dict:
            if state["messages"][-1].type == "tool":
                return {"messages": [AIMessage(f"hi {state['user_name']}", id="ai-2")]}
            return {"messages": [calling(("remember", {"name": "Bob"}, "c1"))]}

        builder = api.StateGraph(State).add_node("agent", agent)
        builder.add_node("tools", lib.ToolNode([remember]))
        builder.add_edge(api.START, "agent").add_conditional_edges("agent", lib.tools_condition)
        builder.add_edge("tools", "agent")
        g = builder.compile(checkpointer=api.MemorySaver())
        cfg = {"configurable": {"thread_id": "cmd"}}
        result = await g.ainvoke({"messages": [HumanMessage("I am Bob", id="h")]}, cfg)
        trace.note("result", tool_results(trace, result))
        trace.note(
            "history",
            [
                (s.metadata["step"], s.next, tool_results(trace, s.values))
                async for s in g.aget_state_history(cfg)
            ],
        )
        bad = alone(api, lib.ToolNode([forget]))
        await trace.run(
            "a Command without the tool message",
            bad.ainvoke({"messages": [calling(("forget", {}, "c9"))]}),
            message=False,
        )

    await acheck_parity(scenario)


async def test_react_agent_loop_checkpoints_and_stream():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        for version in ("v1", "v2"):
            model = scripted(
                calling(("add", {"a": 2, "b": 3}, "c1"), ("add", {"a": 1, "b": 1}, "c2")),
                AIMessage("2+3=5 and 1+1=2", id="ai-2"),
            )
            agent = lib.create_react_agent(
                model, [add], prompt="Be brief.", checkpointer=api.MemorySaver(), version=version
            )
            cfg = {"configurable": {"thread_id": version}}
            question = {"messages": [HumanMessage("sums?", id="q")]}
            chunks = [c async for c in agent.astream(question, cfg, stream_mode="updates")]
            trace.note(f"{version} updates", sorted_chunks(trace, chunks))
            state = await agent.aget_state(cfg)
            trace.note(f"{version} messages", tool_results(trace, state.values["messages"]))
            trace.note(
                f"{version} history",
                [
                    (s.metadata["step"], s.metadata["source"], s.next)
                    async for s in agent.aget_state_history(cfg)
                ],
            )
            trace.note(f"{version} nodes", sorted(agent.get_graph().nodes))

    await acheck_parity(scenario)


async def test_react_agent_return_direct_and_interrupt_in_a_tool():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)

        @tool
        def ask_human(question: str) -> str:
            """Ask a person."""
            return f"the human said {lib.interrupt(question)}"

        model = scripted(
            calling(("ask_human", {"question": "ok?"}, "c1")),
            calling(("final_answer", {"text": "shipped"}, "c2"), id="ai-2"),
        )
        agent = lib.create_react_agent(
            model, [ask_human, final_answer], checkpointer=api.MemorySaver()
        )
        cfg = {"configurable": {"thread_id": "hitl"}}
        first = await agent.ainvoke({"messages": [HumanMessage("ship it", id="q")]}, cfg)
        trace.note("paused", [i.value for i in first["__interrupt__"]])
        trace.state("paused state", await agent.aget_state(cfg))
        done = await agent.ainvoke(api.Command(resume="yes"), cfg)
        trace.note("done", tool_results(trace, done["messages"]))

    await acheck_parity(scenario)


async def test_react_agent_structured_response():
    from pydantic import BaseModel

    class Answer(BaseModel):
        total: int

    class StructuredModel(ScriptedModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
            from langchain_core.runnables import RunnableLambda

            return RunnableLambda(lambda messages: schema(total=len(messages)))

    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        model = StructuredModel(messages=iter([AIMessage("five", id="ai-1")]))
        agent = lib.create_react_agent(model, [add], response_format=("Sum up.", Answer))
        result = await agent.ainvoke({"messages": [HumanMessage("2+3?", id="q")]})
        trace.note("structured", result["structured_response"])
        trace.note("keys", sorted(result))

    await acheck_parity(scenario)


def test_either_tool_node_with_either_command_in_our_graph():
    """In a durable_debug graph, our ``ToolNode`` applies a tool's ``Command`` of either
    library, and LangGraph's own ``ToolNode`` applies LangGraph's (it does not know ours)."""
    from langgraph.prebuilt import ToolNode as LangGraphToolNode
    from langgraph.types import Command as LangGraphCommand

    class State(durable_debug.MessagesState):
        user_name: str

    for command in (LangGraphCommand, durable_debug.Command):

        @tool
        def remember(name: str, call_id: Annotated[str, InjectedToolCallId]) -> Any:
            """Remember the user's name."""
            message = ToolMessage(f"saved {name}", tool_call_id=call_id)
            return command(update={"user_name": name, "messages": [message]})  # noqa: B023

        nodes = [ToolNode([remember])]
        if command is LangGraphCommand:
            nodes.append(LangGraphToolNode([remember]))
        for node in nodes:
            builder = durable_debug.StateGraph(State).add_node("tools", node)
            builder.add_edge(durable_debug.START, "tools")
            g = builder.compile()
            out = g.invoke({"messages": [calling(("remember", {"name": "Bob"}, "c1"))]})
            assert out["user_name"] == "Bob", (command, node)
            assert [m.content for m in out["messages"]][-1] == "saved Bob"


async def test_react_agent_stops_asking_for_tools_when_steps_run_out():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        endless = (calling(("add", {"a": 1, "b": n}, f"c{n}"), id=f"ai-{n}") for n in range(50))
        agent = lib.create_react_agent(ScriptedModel(messages=endless), [add])
        for limit in (4, 5, 6, 7):
            run = agent.ainvoke(
                {"messages": [HumanMessage("loop", id="q")]}, {"recursion_limit": limit}
            )
            await trace.run(f"limit {limit}", shown_tools(trace, run), message=False)

    await acheck_parity(scenario)


def test_react_agent_hooks_prompts_and_a_chosen_model_run_sync():
    """The sync side: a pre-model hook giving ``llm_input_messages``, a post-model hook, a
    prompt function, a model chosen per call, and a structured answer."""
    from langchain_core.messages import SystemMessage
    from langchain_core.runnables import RunnableLambda
    from pydantic import BaseModel

    class Answer(BaseModel):
        total: int

    class StructuredModel(ScriptedModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
            return RunnableLambda(lambda messages: schema(total=len(messages)))

    def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)

        def pre(state: Any) -> dict:
            trace.ran("pre")
            return {"llm_input_messages": [SystemMessage("short"), *state["messages"][-2:]]}

        def post(state: Any) -> dict:
            trace.ran("post")
            return {}

        for label, prompt in (
            ("function", lambda state: [SystemMessage("be kind"), *state["messages"]]),
            ("runnable", RunnableLambda(lambda state: state["messages"])),
            ("message", SystemMessage("be brief")),
        ):
            model = StructuredModel(
                messages=iter([calling(("add", {"a": 1, "b": 2}, "c1")), AIMessage("3", id="a2")])
            )
            agent = lib.create_react_agent(
                lambda state, runtime, model=model: model,
                [add],
                prompt=prompt,
                pre_model_hook=pre,
                post_model_hook=post,
                response_format=Answer,
            )
            result = agent.invoke({"messages": [HumanMessage("1+2?", id="q")]})
            trace.note(f"{label} messages", tool_results(trace, result["messages"]))
            trace.note(f"{label} structured", result["structured_response"])
        trace.note("hooks", dict(trace.executions))

    check_parity(scenario)


def test_react_agent_with_a_model_bound_to_its_tools_and_bad_input():
    from langchain_core.utils.function_calling import convert_to_openai_tool

    def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        bound = scripted(AIMessage("no tools needed", id="a1")).bind(
            tools=[convert_to_openai_tool(add)]
        )
        agent = lib.create_react_agent(bound, [add])
        result = agent.invoke({"messages": [HumanMessage("hi", id="q")]})
        trace.note("bound", tool_results(trace, result["messages"]))
        wrong = scripted(AIMessage("x")).bind(tools=[convert_to_openai_tool(final_answer)])
        trace.call("bound to other tools", lambda: lib.create_react_agent(wrong, [add]))
        trace.call(
            "too many bound",
            message=False,
            fn=lambda: lib.create_react_agent(
                scripted(AIMessage("x")).bind(
                    tools=[convert_to_openai_tool(add), convert_to_openai_tool(fail)]
                ),
                [add],
            ),
        )
        trace.call("bad version", lambda: lib.create_react_agent(scripted(), [add], version="v3"))
        trace.call(
            "schema without remaining_steps",
            lambda: lib.create_react_agent(
                scripted(), [add], state_schema=names(api).MessagesState
            ),
        )
        unanswered = [HumanMessage("hi", id="q"), calling(("add", {"a": 1, "b": 1}, "c9"))]
        plain = lib.create_react_agent(scripted(AIMessage("x")), [add])
        trace.call(
            "unanswered tool call in history", lambda: plain.invoke({"messages": unanswered})
        )

    check_parity(scenario)


def test_tool_node_runs_a_tools_commands_and_messages_and_checks_them():
    """A tool returning a list (its Command and its answer), tools given as plain functions,
    several sync calls at once, and state asked of a node given a list of messages."""

    def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)

        class State(names(api).MessagesState):  # type: ignore[name-defined, misc]
            note: str

        @tool
        def both(text: str, call_id: Annotated[str, InjectedToolCallId]) -> Any:
            """Note ``text`` and answer."""
            return [
                api.Command(update={"note": text}),
                ToolMessage(f"noted {text}", tool_call_id=call_id),
            ]

        @tool
        def none_bound(text: str) -> Any:
            """Answers with a list holding no message for its call."""
            return [api.Command(update={"note": text})]

        def double(n: int) -> int:
            """Double ``n``."""
            return 2 * n

        g = (
            api.StateGraph(State)
            .add_node("tools", lib.ToolNode([both, none_bound, double]))
            .add_edge(api.START, "tools")
            .compile()
        )
        asked = calling(("both", {"text": "hi"}, "c1"), ("double", {"n": 4}, "c2"))
        result = g.invoke({"messages": [asked]})
        trace.note("list answer", tool_results(trace, result))
        bad = {"messages": [calling(("none_bound", {"text": "x"}, "c3"))]}
        trace.call("no answer in the list", lambda: g.invoke(bad), message=False)

        @tool
        def wants_user(user: Annotated[str, lib.InjectedState("user")]) -> str:
            """Needs a state key."""
            return user

        node = lib.ToolNode([wants_user])
        g2 = (
            api.StateGraph(names(api).MessagesState)
            .add_node("tools", node)
            .add_edge(api.START, "tools")
            .compile()
        )
        trace.call(
            "state key missing",
            lambda: g2.invoke({"messages": [calling(("wants_user", {}, "c4"))]}),
            message=False,
        )

    check_parity(scenario)


def test_our_tool_node_alone_on_lists_of_messages_and_tool_calls():
    """Outside a graph: a list of messages in, a list out; a state key asked of a list of
    messages is refused; a Command's dict update given a list input is refused."""
    from durable_debug.prebuilt import InjectedState

    @tool
    def wants_user(user: Annotated[str, InjectedState("user")]) -> str:
        """Needs a state key."""
        return user

    @tool
    def whole(messages: Annotated[list, InjectedState("messages")]) -> str:
        """Counts the messages."""
        return str(len(messages))

    asked = calling(("whole", {}, "c1"))
    assert [m.content for m in ToolNode([whole]).invoke([HumanMessage("hi"), asked])] == ["2"]
    with pytest.raises(ValueError, match="requires graph state dict as input"):
        ToolNode([wants_user]).invoke([calling(("wants_user", {}, "c2"))])
    calls = [{"name": "whole", "args": {}, "id": "c3", "type": "tool_call"}]
    with pytest.raises(KeyError, match="messages"):  # tool calls alone carry no state
        ToolNode([whole]).invoke(calls)


async def test_react_agent_with_an_async_model_chooser():
    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        model = scripted(AIMessage("chosen", id="a1"), AIMessage("again", id="a2"))

        async def choose(state: Any, runtime: Any) -> Any:
            return model

        agent = lib.create_react_agent(choose, [add], response_format=("Sum up.", None))
        question = {"messages": [HumanMessage("hi", id="q")]}
        trace.call("sync run of an async chooser", lambda: agent.invoke(question), message=False)
        plain = lib.create_react_agent(choose, [add])
        result = await plain.ainvoke(question)
        trace.note("async run", tool_results(trace, result["messages"]))

    await acheck_parity(scenario)


async def test_react_agent_prompt_step_reports_to_callbacks_as_langgraphs():
    """The prompt step of no prompt and of a string prompt is a chain run named "Prompt"
    inside the model's sequence, seen by callback handlers on the sync and the async side,
    with the messages the model is given."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Runs(BaseCallbackHandler):
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            if kwargs.get("name") == "Prompt":
                self.seen.append(("start", "Prompt", sorted(kwargs.get("tags") or [])))

        def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
            if isinstance(outputs, list):
                self.seen.append(("end", [type(m).__name__ for m in outputs]))

    async def scenario(api: Api, trace: Trace) -> None:
        lib = prebuilt(api)
        for label, prompt in (("none", None), ("text", "be brief")):
            for side in ("sync", "async"):
                model = scripted(calling(("add", {"a": 1, "b": 2}, "c1")), AIMessage("3"))
                agent = lib.create_react_agent(model, [add], prompt=prompt)
                runs = Runs()
                config: Any = {"callbacks": [runs]}
                given = {"messages": [HumanMessage("1+2?", id="q")]}
                if side == "sync":
                    result = agent.invoke(given, config)
                else:
                    result = await agent.ainvoke(given, config)
                trace.note(f"{label} {side} messages", tool_results(trace, result["messages"]))
                trace.note(f"{label} {side} prompt runs", runs.seen)

    ours = await acheck_parity(scenario)
    assert ours["text async prompt runs"], "the prompt step reported no run"
