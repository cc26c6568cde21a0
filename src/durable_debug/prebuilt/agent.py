"""``create_react_agent``: the model-and-tools loop as a compiled graph, as LangGraph builds it.

    agent = create_react_agent(model, [search], prompt="Be brief.", checkpointer=saver)
    agent.invoke({"messages": [("user", "weather in sf?")]}, config)

The graph has an ``agent`` node (the model, given the tools) and a ``tools`` node
(:class:`~durable_debug.prebuilt.ToolNode`): while the model's answer asks for tool calls, the
calls run and the model is asked again; an answer without tool calls ends the run. With
``version="v2"`` (the default) each tool call runs as its own task (a ``Send``), so an
``interrupt()`` in one tool pauses only that call; ``"v1"`` runs them in one task. Optional
parts: a ``prompt`` before the messages, a ``pre_model_hook`` / ``post_model_hook`` node around
the model, a ``response_format`` (a final structured answer in ``structured_response``), and
tools with ``return_direct=True`` ending the run with their answer.

Needs ``langchain-core``; the checkpoints, interrupts and streams are the engine's.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal, cast

from langchain_core.callbacks import CallbackManager
from langchain_core.language_models import BaseChatModel, LanguageModelLike
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableLambda,
    RunnableSequence,
)
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    var_child_runnable_config,
)
from langchain_core.tools import BaseTool
from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict, deprecated, get_type_hints

from durable_debug.graph.calls import current_call
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10
from durable_debug.graph.managed import RemainingSteps
from durable_debug.graph.message import add_messages
from durable_debug.graph.state import StateGraph
from durable_debug.graph.types import END, Send
from durable_debug.prebuilt.tool_node import TOOL_CALL_WITH_CONTEXT, ToolNode

__all__ = ["AgentState", "AgentStateWithStructuredResponse", "create_react_agent"]

NEED_MORE_STEPS = "Sorry, need more steps to process this request."
"""The answer that replaces a model's tool calls when too few steps are left to run them."""


StructuredResponse = dict | BaseModel  # type: ignore[type-arg]  # bare dict: LangGraph's JSON schema of it
"""What ``structured_response`` holds: the answer ``response_format`` asks for."""

# LangGraph's classes, as its JSON schemas show them (docstring, types and its deprecation
# mark, which pydantic reports as "deprecated": true); ``remaining_steps`` is a managed
# value: the engine fills it in, nothing saves it.


@deprecated(
    "AgentState has been moved to `langchain.agents`. Please update your import to "
    "`from langchain.agents import AgentState`.",
    category=LangGraphDeprecatedSinceV10,
)
class AgentState(TypedDict):
    """The state of the agent."""

    messages: Annotated[Sequence[BaseMessage], add_messages]

    remaining_steps: NotRequired[RemainingSteps]


with warnings.catch_warnings():  # LangGraph's own subclass of the deprecated class
    warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)

    @deprecated(
        "AgentStateWithStructuredResponse has been deprecated in favor of AgentState in "
        "`langchain.agents`.",
        category=LangGraphDeprecatedSinceV10,
    )
    class AgentStateWithStructuredResponse(AgentState):
        """The state of the agent with a structured response."""

        structured_response: StructuredResponse


def create_react_agent(
    model: LanguageModelLike | Callable[..., Any],
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | ToolNode,
    *,
    prompt: Any = None,
    response_format: Any = None,
    pre_model_hook: Any = None,
    post_model_hook: Any = None,
    state_schema: Any = None,
    context_schema: Any = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    version: Literal["v1", "v2"] = "v2",
    name: str | None = None,
) -> Any:
    """Build and compile the agent graph (see the module).

    ``model``: a chat model (its ``bind_tools`` is called with the tools unless it is
    already bound to them), or a function ``(state, runtime) -> model`` choosing one per call.
    ``prompt``: a string or ``SystemMessage`` put before the messages, a function of the state
    returning the model's input, or a runnable. ``state_schema`` must have ``messages`` and
    ``remaining_steps`` (and ``structured_response`` with ``response_format``).
    """
    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version}. Supported versions are 'v1' and 'v2'.")
    if state_schema is not None:
        required = {"messages", "remaining_steps"}
        if response_format is not None:
            required.add("structured_response")
        if missing := required - set(get_type_hints(state_schema)):
            raise ValueError(f"Missing required key(s) {missing} in state_schema")
    else:
        state_schema = (
            AgentStateWithStructuredResponse if response_format is not None else AgentState
        )

    if isinstance(tools, ToolNode):
        tool_node, builtin = tools, []
    else:
        builtin = [t for t in tools if isinstance(t, dict)]
        tool_node = ToolNode([t for t in tools if not isinstance(t, dict)])
    tool_list = list(tool_node.tools_by_name.values())
    return_direct = {t.name for t in tool_list if t.return_direct}

    chooses_model = not isinstance(model, Runnable) and callable(model)
    prompt_step = _prompt_runnable(prompt)
    fixed_model: Runnable[Any, Any] | None = None
    if not chooses_model:
        bound = model
        if (tool_list or builtin) and _needs_binding(model, tool_list, builtin):
            bound = model.bind_tools([*tool_list, *builtin])  # type: ignore[union-attr]  # the user's chat model; Runnable does not declare bind_tools
        fixed_model = prompt_step | bound
    # No prompt or a system message: when no callback handler listens, the model
    # is called without the ``prompt | model`` sequence around it (see _quiet_call).
    direct: Any = None
    if not chooses_model and isinstance(prompt_step, _MessagesPrompt):
        direct = bound

    def model_for(state: Any) -> Runnable[Any, Any]:
        if fixed_model is not None:
            return fixed_model
        if inspect.iscoroutinefunction(model):
            raise RuntimeError(
                "Async model callable provided but agent invoked synchronously. Use "
                "agent.ainvoke() or agent.astream(), or provide a sync model callable."
            )
        step: Runnable[Any, Any] = prompt_step | model(state, _runtime())  # type: ignore[operator]  # chooses_model: model is the user's callable choosing a model
        return step

    async def amodel_for(state: Any) -> Runnable[Any, Any]:
        if fixed_model is not None:
            return fixed_model
        chosen = model(state, _runtime())  # type: ignore[operator]  # chooses_model: model is the user's callable choosing a model
        if inspect.isawaitable(chosen):
            chosen = await chosen
        step: Runnable[Any, Any] = prompt_step | chosen
        return step

    def model_input(state: Any) -> Any:
        messages = None
        if pre_model_hook is not None:
            messages = _get(state, "llm_input_messages")
        messages = messages or _get(state, "messages")
        if messages is None:
            wanted = "'messages' key"
            if pre_model_hook is not None:
                wanted = "'llm_input_messages' or 'messages' key"
            raise ValueError(f"Expected input to call_model to have {wanted}, but got {state}")
        _check_history(messages)
        if isinstance(state, dict):
            return {**state, "messages": messages}
        state.messages = messages
        return state

    def answer(state: Any, response: Any) -> dict[str, Any]:
        response.name = name
        remaining = _get(state, "remaining_steps")
        calls = response.tool_calls if isinstance(response, AIMessage) else []
        too_few = remaining is not None and (
            (remaining < 1 and calls and all(c["name"] in return_direct for c in calls))
            or (remaining < 2 and bool(calls))
        )
        if too_few:
            return {"messages": [AIMessage(id=response.id, content=NEED_MORE_STEPS)]}
        return {"messages": [response]}

    def call_model(state: Any, config: Any) -> dict[str, Any]:
        if direct is not None and (quiet := _quiet_call(config)) is not None:
            messages = cast(_MessagesPrompt, prompt_step).messages(model_input(state))
            return answer(state, direct.invoke(messages, quiet))
        return answer(state, model_for(state).invoke(model_input(state), config))

    async def acall_model(state: Any, config: Any) -> dict[str, Any]:
        if direct is not None and (quiet := _quiet_call(config)) is not None:
            messages = cast(_MessagesPrompt, prompt_step).messages(model_input(state))
            return answer(state, await direct.ainvoke(messages, quiet))
        chosen = await amodel_for(state)
        return answer(state, await chosen.ainvoke(model_input(state), config))

    def structured_input(state: Any) -> tuple[Any, list[Any]]:
        messages = list(_get(state, "messages"))
        schema = response_format
        if isinstance(response_format, tuple):
            system, schema = response_format
            messages = [SystemMessage(content=system), *messages]
        return schema, messages

    def structured_answer(state: Any, config: Any) -> dict[str, Any]:
        schema, messages = structured_input(state)
        chosen = _chat_model(model_for(state)).with_structured_output(schema)
        return {"structured_response": chosen.invoke(messages, config)}

    async def astructured_answer(state: Any, config: Any) -> dict[str, Any]:
        schema, messages = structured_input(state)
        chosen = _chat_model(await amodel_for(state)).with_structured_output(schema)
        return {"structured_response": await chosen.ainvoke(messages, config)}

    agent_input = state_schema
    if pre_model_hook is not None:
        agent_input = _with_llm_input(state_schema)

    graph: StateGraph[Any] = StateGraph(state_schema, context_schema=context_schema)
    graph.add_node(
        "agent", cast(Any, _Step("agent", call_model, acall_model)), input_schema=agent_input
    )
    first = "agent"
    if pre_model_hook is not None:
        graph.add_node("pre_model_hook", pre_model_hook)
        graph.add_edge("pre_model_hook", "agent")
        first = "pre_model_hook"
    graph.set_entry_point(first)
    after_model = "post_model_hook" if post_model_hook is not None else None
    if post_model_hook is not None:
        graph.add_node("post_model_hook", post_model_hook)
        graph.add_edge("agent", "post_model_hook")
    finish = END
    if response_format is not None:
        step = _Step("generate_structured_response", structured_answer, astructured_answer)
        graph.add_node("generate_structured_response", cast(Any, step))
        finish = "generate_structured_response"

    def compiled() -> Any:
        return graph.compile(
            checkpointer=checkpointer,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
            name=name,
        )

    if not tool_list:
        if response_format is not None:
            graph.add_edge(after_model or "agent", "generate_structured_response")
        return compiled()

    def calls_to_tools(state: Any, calls: list[Any]) -> list[Send]:
        return [
            Send("tools", {"__type": TOOL_CALL_WITH_CONTEXT, "tool_call": call, "state": state})
            for call in calls
        ]

    def should_continue(state: Any) -> Any:
        last = _get(state, "messages")[-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return after_model or finish
        if version == "v1":
            return "tools"
        return after_model or calls_to_tools(state, last.tool_calls)

    graph.add_node("tools", cast(Any, tool_node))  # a runnable: called through ainvoke
    agent_paths = [after_model] if after_model else ["tools", finish]
    graph.add_conditional_edges("agent", should_continue, agent_paths)

    if post_model_hook is not None:

        def after_hook(state: Any) -> Any:
            messages = _get(state, "messages")
            answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
            last_ai = next(m for m in reversed(messages) if isinstance(m, AIMessage))
            pending = [c for c in last_ai.tool_calls if c["id"] not in answered]
            if pending:
                return calls_to_tools(state, pending)
            if isinstance(messages[-1], ToolMessage):
                return first
            return finish

        graph.add_conditional_edges("post_model_hook", after_hook, [first, "tools", finish])

    if return_direct:

        def after_tools(state: Any) -> str:
            message: Any = None
            for message in reversed(_get(state, "messages")):
                if not isinstance(message, ToolMessage):
                    break
                if message.name in return_direct:
                    return END
            if isinstance(message, AIMessage) and any(
                c["name"] in return_direct for c in message.tool_calls
            ):
                return END
            return first

        graph.add_conditional_edges("tools", after_tools, [first, END])
    else:
        graph.add_edge("tools", first)
    return compiled()


# -- helpers ---------------------------------------------------------------------------------


class _Step:
    """A node with a sync and an async side (called through ``invoke`` / ``ainvoke``, as the
    engine calls a runnable): a sync run calls the model's sync API, an async run its async
    one, as LangGraph's agent does."""

    def __init__(
        self,
        name: str,
        sync: Callable[[Any, Any], dict[str, Any]],
        asynchronous: Callable[[Any, Any], Awaitable[dict[str, Any]]],
    ) -> None:
        self.name = name
        self._sync = sync
        self._async = asynchronous

    def get_name(self) -> str:
        return self.name

    def invoke(self, state: Any, config: Any = None, **_: Any) -> dict[str, Any]:
        return self._sync(state, config)

    async def ainvoke(self, state: Any, config: Any = None, **_: Any) -> dict[str, Any]:
        return await self._async(state, config)


def _runtime() -> Any:
    """The running task's runtime (what a model-choosing function is given)."""
    context = current_call()
    return context.runtime if context is not None else None


def _get(state: Any, key: str) -> Any:
    return state.get(key) if isinstance(state, dict) else getattr(state, key, None)


def _prompt_runnable(prompt: Any) -> Runnable[Any, Any]:
    """The step that turns the state into the model's input."""
    if prompt is None:
        return _MessagesPrompt(None)
    if isinstance(prompt, str):
        prompt = SystemMessage(content=prompt)
    if isinstance(prompt, SystemMessage):
        return _MessagesPrompt(prompt)
    if isinstance(prompt, Runnable):
        return prompt
    if callable(prompt):
        if inspect.iscoroutinefunction(prompt):
            return RunnableLambda(_sync_unsupported, prompt, name="Prompt")
        return RunnableLambda(prompt, name="Prompt")
    raise ValueError(f"Got unexpected type for `prompt`: {type(prompt)}")


class _MessagesPrompt(Runnable[Any, Any]):
    """The prompt step of no prompt or a system message: the state's messages, after the
    system message if any. Reported to callbacks as a chain run named "Prompt", as the
    ``RunnableLambda`` a prompt function becomes, without what a lambda costs per call
    (inspecting its function's signature, running it in a worker thread when awaited)."""

    name = "Prompt"

    def __init__(self, system: SystemMessage | None) -> None:
        self.system = system

    def messages(self, state: Any) -> Any:
        """The model's input for the state ``state`` (nothing reported)."""
        messages = _get(state, "messages")
        return messages if self.system is None else [self.system, *messages]

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """The model's input for the state ``input``, reported to ``config``'s callbacks."""
        config = ensure_config(config)
        run = get_callback_manager_for_config(config).on_chain_start(
            None, input, name=config.get("run_name") or self.name, run_id=config.pop("run_id", None)
        )
        try:
            output = self.messages(input)
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end(output)
        return output

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """:meth:`invoke`, reporting to async callbacks."""
        config = ensure_config(config)
        run = await get_async_callback_manager_for_config(config).on_chain_start(
            None, input, name=config.get("run_name") or self.name, run_id=config.pop("run_id", None)
        )
        try:
            output = self.messages(input)
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(output)
        return output


def _quiet_call(config: Any) -> RunnableConfig | None:
    """``config``, to call the model with directly, skipping the ``prompt | model`` sequence,
    when no callback handler would see the runs (no callbacks, tracing, debug or verbose
    output): the sequence's and the prompt's chain runs are then seen by nobody, and the
    model's own run is the same (the call recording, which is no handler, sees the same name,
    messages and parameters). None: call the sequence, as LangGraph does; so too with a
    ``run_id`` or ``run_name``, which belong to the sequence's run. The keys are read as
    ``ensure_config`` merges them (``config`` over the config of the runnable being run)."""
    given = config or {}
    outer = var_child_runnable_config.get() or {}

    def value(key: str) -> Any:
        found = given.get(key)
        return found if found is not None else outer.get(key)

    if value("run_id") is not None or value("run_name") is not None:
        return None
    if not _no_handler(value("callbacks")):
        return None
    return cast(RunnableConfig, config)


def _no_handler(callbacks: Any) -> bool:
    """Whether ``CallbackManager.configure(callbacks)`` would give a manager without a
    handler, found without building one: no handler given, LangChain's debug output off, no
    LangSmith tracing, and no configure hook (a context variable holding a handler, or its
    environment variable) set. These are the only places ``configure`` takes handlers from;
    should LangChain's private names it reads ever move, the manager is built and asked."""
    hooks = _configure_sources()
    if hooks is None:
        return not CallbackManager.configure(callbacks).handlers
    if callbacks and (isinstance(callbacks, list) or callbacks.handlers):
        return False
    get_debug, tracer_var, tracing_enabled, configure_hooks, env_var_is_set = hooks
    if get_debug() or tracer_var.get() is not None or tracing_enabled():
        return False
    for var, _inheritable, handler_class, env_var in configure_hooks:
        if var.get() is not None:
            return False
        if env_var is not None and handler_class is not None and env_var_is_set(env_var):
            return False
    return True


_SOURCES: list[tuple[Any, ...] | None] = []


def _configure_sources() -> tuple[Any, ...] | None:
    """What ``CallbackManager.configure`` reads its handlers from, looked up once (None:
    not found in this LangChain version)."""
    if not _SOURCES:
        try:
            from langchain_core.callbacks.manager import _get_debug
            from langchain_core.tracers.context import (
                _configure_hooks,
                _tracing_v2_is_enabled,
                tracing_v2_callback_var,
            )
            from langchain_core.utils.env import env_var_is_set

            found: tuple[Any, ...] | None = (
                _get_debug,
                tracing_v2_callback_var,
                _tracing_v2_is_enabled,
                _configure_hooks,
                env_var_is_set,
            )
        except ImportError:
            found = None
        _SOURCES.append(found)
    return _SOURCES[0]


def _sync_unsupported(state: Any) -> Any:
    raise RuntimeError("An async prompt function needs the agent run with ainvoke or astream")


def _chat_model(model: Any) -> BaseChatModel:
    """The chat model inside a prompt | model chain or a bound model."""
    if isinstance(model, RunnableSequence):
        model = next(
            (s for s in model.steps if isinstance(s, (BaseChatModel, RunnableBinding))), model
        )
    if isinstance(model, RunnableBinding):
        model = model.bound
    if not isinstance(model, BaseChatModel):
        raise TypeError(f"Expected `model` to be a ChatModel or RunnableBinding, got {model}")
    return model


def _needs_binding(model: Any, tools: list[BaseTool], builtin: list[dict[str, Any]]) -> bool:
    """True unless ``model`` is already bound to exactly these tools."""
    if isinstance(model, RunnableSequence):
        model = next((s for s in model.steps if isinstance(s, RunnableBinding)), model)
    if not isinstance(model, RunnableBinding):
        return True
    bound_tools = model.kwargs.get("tools")
    if not bound_tools:
        return True
    if len(bound_tools) != len(tools) + len(builtin):
        raise ValueError(
            "Number of tools in the model.bind_tools() and tools passed to create_react_agent "
            "must match"
        )
    names = {t.name for t in tools}
    bound = set()
    for entry in bound_tools:
        if isinstance(entry, dict) and "function" in entry:
            bound.add(entry["function"].get("name"))
        elif isinstance(entry, dict) and "name" in entry:
            bound.add(entry["name"])
    if missing := names - bound:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")
    return False


def _check_history(messages: Sequence[Any]) -> None:
    """Refuse a history whose tool calls were not all answered (the model would refuse it)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    unanswered = [
        call
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]
    if unanswered:
        raise ValueError(
            "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
            f"Here are the first few of those tool calls: {unanswered[:3]}.\n\n"
            "Every tool call (LLM requesting to call a tool) in the message history MUST have "
            "a corresponding ToolMessage (result of a tool invocation to return to the LLM) - "
            "this is required by most LLM providers."
        )


def _with_llm_input(schema: Any) -> Any:
    """``schema`` plus an ``llm_input_messages`` key (the agent node's input with a
    pre-model hook)."""
    if isinstance(schema, type) and hasattr(schema, "model_fields"):
        from pydantic import create_model

        return create_model(
            "CallModelInputSchema", llm_input_messages=(list[AnyMessage], ...), __base__=schema
        )

    class CallModelInputSchema(schema):  # type: ignore[misc]  # schema is the user's TypedDict, a class known only at run time
        llm_input_messages: list[AnyMessage]

    return CallModelInputSchema
