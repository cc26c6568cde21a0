"""``ToolNode``: a node that runs the tool calls of the latest AI message, as LangGraph's does.

    tools = ToolNode([search, add])
    builder.add_node("tools", tools)
    builder.add_conditional_edges("agent", tools_condition)   # "tools" or END

The node reads the newest ``AIMessage`` of its input (the ``messages`` key of the state, or a
list of messages), runs each of its tool calls concurrently, and returns one ``ToolMessage``
per call, in the order of the calls: ``{"messages": [...]}`` for a state, a list for a list.
A call of a tool the node does not have, and (by default) a call whose arguments the tool
refuses, become error messages the model can read; other errors propagate unless
``handle_tool_errors`` says otherwise. A tool may return a :class:`Command` (LangGraph's too):
the node then returns a list of updates, which the engine applies in order.

Tools may ask for what the model must not provide: ``Annotated[dict, InjectedState]`` (the
graph state), ``Annotated[str, InjectedState("key")]`` (one key of it),
``Annotated[BaseStore, InjectedStore()]`` (the graph's store), a ``runtime: ToolRuntime``
parameter (state, context, config, store, stream writer and tool call id together), and
LangChain's own ``InjectedToolCallId``.

Needs ``langchain-core``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import inspect
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, Generic, Literal, TypeVar, Union, cast, get_args, get_origin

from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg
from langchain_core.tools import tool as as_tool
from langchain_core.tools.base import _DirectlyInjectedToolArg
from pydantic import ValidationError
from typing_extensions import TypedDict, get_type_hints

from durable_debug.checkpoint.names import END
from durable_debug.graph.calls import current_call
from durable_debug.graph.tool_stream import tool_call_writer
from durable_debug.graph.types import (
    Command,
    GraphInterrupt,
    ParentCommand,
    Send,
    from_langgraph,
)

__all__ = [
    "InjectedState",
    "InjectedStore",
    "ToolCallWithContext",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "tools_condition",
]

INVALID_TOOL_NAME = "Error: {name} is not a valid tool, try one of [{names}]."
"""Content of the error message for a call of a tool the node does not have."""
HANDLED_ERROR = "Error: {error!r}\n Please fix your mistakes."
"""Content of the error message for a handled tool error (``handle_tool_errors=True``)."""
INVALID_ARGUMENTS = (
    "Error invoking tool '{name}' with kwargs {args} with error:\n {error}\n"
    " Please fix the error and try again."
)
"""Content of the error message for arguments the tool's schema refuses (the default)."""
TOOL_CALL_WITH_CONTEXT = "tool_call_with_context"
"""``__type`` of a :class:`ToolCallWithContext` payload (one call sent with the state)."""

ContextT = TypeVar("ContextT")
StateT = TypeVar("StateT")

ErrorHandling = bool | str | Callable[..., str] | type[Exception] | tuple[type[Exception], ...]
"""What ``handle_tool_errors`` accepts (see :class:`ToolNode`)."""


class ToolCallWithContext(TypedDict):
    """One tool call sent to a :class:`ToolNode` with ``Send``, with the state it answers
    (how ``create_react_agent(version="v2")`` runs each call as its own task)."""

    __type: Literal["tool_call_with_context"]
    tool_call: ToolCall
    state: Any


class InjectedState(InjectedToolArg):
    """Marks a tool parameter the node fills with the graph state, or with the state key
    ``field`` (``Annotated[list, InjectedState("messages")]``); the model never sees it."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field

    def __repr__(self) -> str:
        return f"InjectedState({self.field!r})" if self.field else "InjectedState()"


class InjectedStore(InjectedToolArg):
    """Marks a tool parameter the node fills with the graph's store
    (``compile(store=...)``); the model never sees it."""


@dataclasses.dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool declaring ``runtime: ToolRuntime`` receives: the call's context."""

    state: StateT
    """The graph state the node was given."""
    context: ContextT
    """The run's context (``invoke(..., context=...)``)."""
    config: dict[str, Any]
    """The node's config."""
    stream_writer: Callable[[Any], None]
    """Writes a chunk to stream mode ``"custom"``."""
    tool_call_id: str | None
    """The id of the tool call being answered."""
    store: Any
    """The graph's store, or None."""

    def emit_output_delta(self, delta: Any) -> None:
        """Send ``delta`` as a ``tool-output-delta`` of this call to stream mode ``"tools"``;
        does nothing when the run does not stream that mode."""
        writer = tool_call_writer()
        if writer is not None:
            writer(delta)


class ToolInvocationError(Exception):
    """A tool call's arguments do not fit the tool's schema (raised inside the node, turned
    into an error message for the model by the default ``handle_tool_errors``)."""

    def __init__(
        self, name: str, args: dict[str, Any], error: ValidationError, hidden: frozenset[str]
    ) -> None:
        self.tool_name = name
        self.tool_kwargs = args
        self.source = error
        # One line per problem with what the model sent (not with what the node injects).
        problems = [
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}"
            for e in error.errors()
            if not (e["loc"] and e["loc"][0] in hidden)
        ]
        self.message = INVALID_ARGUMENTS.format(name=name, args=args, error="\n".join(problems))
        super().__init__(self.message)


@dataclasses.dataclass(frozen=True)
class _Injections:
    """The injected parameters of one tool."""

    state: dict[str, str | None]
    """Parameter → state key (None: the whole state)."""
    store: str | None
    """The parameter that gets the store."""
    runtime: str | None
    """The parameter that gets the :class:`ToolRuntime`."""
    hidden: frozenset[str]
    """Every parameter the model does not provide (dropped from its arguments)."""


def _default_error_handling(error: Exception) -> str:
    """The default of ``handle_tool_errors``: arguments the tool refuses become a message
    for the model; every other error propagates."""
    if isinstance(error, ToolInvocationError):
        return error.message
    raise error


class ToolNode:
    """A graph node that runs the tool calls of the latest AI message (see the module).

    ``tools``: LangChain tools or plain functions (made into tools). ``handle_tool_errors``:
    ``True`` turns every error into an error message, a string is that message, a function
    ``(error) -> str`` makes it (for the error types its annotation names), an exception
    type or tuple of types limits which errors are handled, ``False`` lets all propagate.
    ``messages_key``: the state key holding the messages.
    """

    def __init__(
        self,
        tools: Sequence[BaseTool | Callable[..., Any]],
        *,
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: ErrorHandling = _default_error_handling,
        messages_key: str = "messages",
    ) -> None:
        self.name = name
        self.tags = tags
        self.handle_tool_errors = handle_tool_errors
        self.messages_key = messages_key
        self.tools_by_name: dict[str, BaseTool] = {}
        self._injections: dict[str, _Injections] = {}
        for given in tools:
            made = given if isinstance(given, BaseTool) else as_tool(given)
            self.tools_by_name[made.name] = made
            self._injections[made.name] = _injections_of(made)

    def get_name(self) -> str:
        """The node's default name (``add_node(tool_node)``)."""
        return self.name

    def __repr__(self) -> str:
        return f"ToolNode(tools={list(self.tools_by_name)!r})"

    # -- running --------------------------------------------------------------------------

    def invoke(self, input: Any, config: dict[str, Any] | None = None, **_: Any) -> Any:
        """Run the tool calls (in threads, each with the caller's context)."""
        config = config or {}
        calls, shape, state = self._parse(input)
        runtime = self._runtime(state, config)
        if len(calls) <= 1:
            outputs = [self._run_one(call, shape, runtime) for call in calls]
        else:
            with ThreadPoolExecutor(max_workers=len(calls)) as pool:
                futures = [
                    pool.submit(contextvars.copy_context().run, self._run_one, c, shape, runtime)
                    for c in calls
                ]
                outputs = [f.result() for f in futures]
        return self._combine(outputs, shape)

    async def ainvoke(self, input: Any, config: dict[str, Any] | None = None, **_: Any) -> Any:
        """Run the tool calls concurrently."""
        config = config or {}
        calls, shape, state = self._parse(input)
        runtime = self._runtime(state, config)
        outputs = await asyncio.gather(*(self._arun_one(c, shape, runtime) for c in calls))
        return self._combine(list(outputs), shape)

    def _parse(self, input: Any) -> tuple[list[ToolCall], str, Any]:
        """The calls to run, the input's shape ("list", "dict" or "tool_calls") and the
        state tools may ask for."""
        if isinstance(input, dict) and input.get("__type") == TOOL_CALL_WITH_CONTEXT:
            return [input["tool_call"]], "tool_calls", input.get("state")
        if isinstance(input, list):
            if input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
                return list(input), "tool_calls", {}
            messages, shape = input, "list"
        elif isinstance(input, dict):
            messages, shape = input.get(self.messages_key) or [], "dict"
        else:
            messages, shape = getattr(input, self.messages_key, None) or [], "dict"
        if not messages:
            raise ValueError("No message found in input")
        latest = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if latest is None:
            raise ValueError("No AIMessage found in input")
        return list(latest.tool_calls), shape, input

    def _runtime(self, state: Any, config: dict[str, Any]) -> ToolRuntime[Any, Any]:
        context = current_call()
        runtime = context.runtime if context is not None else None
        return ToolRuntime(
            state=state,
            context=getattr(runtime, "context", None),
            config=config,
            stream_writer=getattr(runtime, "stream_writer", None) or _no_writer,
            tool_call_id=None,
            store=getattr(runtime, "store", None),
        )

    def _prepare(
        self, call: ToolCall, runtime: ToolRuntime[Any, Any]
    ) -> tuple[BaseTool | None, dict[str, Any]]:
        """The tool of ``call`` and what to invoke it with (its injections filled in)."""
        tool = self.tools_by_name.get(call["name"])
        if tool is None:
            return None, {}
        injections = self._injections[call["name"]]
        args = {k: v for k, v in call["args"].items() if k not in injections.hidden}
        if injections.state:
            args.update(self._injected_state(call, injections, runtime.state))
        if injections.store is not None:
            if runtime.store is None:
                raise ValueError(
                    f"Tool {call['name']!r} asks for the store (InjectedStore): compile the "
                    "graph with a store (compile(store=...))."
                )
            args[injections.store] = runtime.store
        if injections.runtime is not None:
            args[injections.runtime] = dataclasses.replace(runtime, tool_call_id=call["id"])
        return tool, {**call, "args": args, "type": "tool_call"}

    def _injected_state(
        self, call: ToolCall, injections: _Injections, state: Any
    ) -> dict[str, Any]:
        if isinstance(state, list):  # the node was given a list of messages
            fields = list(injections.state.values())
            if fields[0] is None or fields == [self.messages_key]:
                state = {self.messages_key: state}
            else:
                wanted = ", ".join(f for f in fields if f)
                raise ValueError(
                    f"Invalid input to ToolNode. Tool {call['name']} requires graph state dict "
                    f"as input. State should contain fields {wanted}."
                )
        values: dict[str, Any] = {}
        for param, key in injections.state.items():
            if key is None:
                values[param] = state
            elif isinstance(state, dict):
                values[param] = state[key]
            else:
                values[param] = getattr(state, key)
        return values

    def _run_one(self, call: ToolCall, shape: str, runtime: ToolRuntime[Any, Any]) -> Any:
        try:
            tool, invocation = self._prepare(call, runtime)
            if tool is None:
                return self._unknown_tool(call)
            try:
                response = tool.invoke(invocation, cast(RunnableConfig, runtime.config))
            except ValidationError as exc:
                hidden = self._injections[call["name"]].hidden
                raise ToolInvocationError(call["name"], call["args"], exc, hidden) from exc
            return self._checked(response, call, shape)
        except (GraphInterrupt, ParentCommand):
            raise
        except Exception as exc:
            return self._handled(exc, call)

    async def _arun_one(self, call: ToolCall, shape: str, runtime: ToolRuntime[Any, Any]) -> Any:
        try:
            tool, invocation = self._prepare(call, runtime)
            if tool is None:
                return self._unknown_tool(call)
            try:
                response = await tool.ainvoke(invocation, cast(RunnableConfig, runtime.config))
            except ValidationError as exc:
                hidden = self._injections[call["name"]].hidden
                raise ToolInvocationError(call["name"], call["args"], exc, hidden) from exc
            return self._checked(response, call, shape)
        except (GraphInterrupt, ParentCommand):
            raise
        except Exception as exc:
            return self._handled(exc, call)

    def _unknown_tool(self, call: ToolCall) -> ToolMessage:
        content = INVALID_TOOL_NAME.format(name=call["name"], names=", ".join(self.tools_by_name))
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    def _handled(self, error: Exception, call: ToolCall) -> ToolMessage:
        """The error message for ``error``, or ``error`` raised when it is not handled."""
        handling = self.handle_tool_errors
        if handling is False or not isinstance(error, _handled_types(handling)):
            raise error
        if isinstance(handling, str):
            content = handling
        elif callable(handling) and not isinstance(handling, type):
            content = handling(error)
        else:
            content = HANDLED_ERROR.format(error=error)
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    # -- what a tool returned -------------------------------------------------------------

    def _checked(self, response: Any, call: ToolCall, shape: str) -> Any:
        command = _as_command(response)
        if command is not None:
            return self._checked_command(command, call, shape)
        if isinstance(response, ToolMessage):
            response.content = _content(response.content)
            return response
        if isinstance(response, list) and all(
            isinstance(r, ToolMessage) or _as_command(r) is not None for r in response
        ):
            answers = sum(1 for m in self._messages_of(response) if m.tool_call_id == call["id"])
            if answers != 1:
                raise ValueError(
                    f"Tool {call['name']} returned a list with {answers} messages bound to "
                    f"tool_call_id {call['id']!r}; expected exactly one terminating "
                    "ToolMessage."
                )
            return [
                self._checked_command(c, call, shape, answered=True)
                if (c := _as_command(r)) is not None
                else self._checked(r, call, shape)
                for r in response
            ]
        raise TypeError(f"Tool {call['name']} returned unexpected type: {type(response)}")

    def _messages_of(self, items: list[Any]) -> list[ToolMessage]:
        found: list[ToolMessage] = []
        for item in items:
            if isinstance(item, ToolMessage):
                found.append(item)
            elif (command := _as_command(item)) is not None and isinstance(command.update, dict):
                found += [
                    m
                    for m in command.update.get(self.messages_key, [])
                    if isinstance(m, ToolMessage)
                ]
        return found

    def _checked_command(
        self, command: Command[Any], call: ToolCall, shape: str, *, answered: bool = False
    ) -> Command[Any]:
        """``command`` if its messages answer ``call`` (a tool's ``Command`` must carry the
        ``ToolMessage`` for its own call, unless it goes to the parent graph)."""
        from langchain_core.messages import RemoveMessage, convert_to_messages

        update = command.update
        if isinstance(update, dict):
            if shape == "list":
                raise ValueError(
                    "Tools can provide a dict in Command.update only when using dict with "
                    f"'{self.messages_key}' key as ToolNode input, got: {update} for tool "
                    f"'{call['name']}'"
                )
            messages = convert_to_messages(update.get(self.messages_key, []))
            if self.messages_key in update:
                update = {**update, self.messages_key: messages}
        elif isinstance(update, list):
            if shape != "list":
                raise ValueError(
                    "Tools can provide a list of messages in Command.update only when using "
                    f"list of messages as ToolNode input, got: {update} for tool "
                    f"'{call['name']}'"
                )
            messages = update = convert_to_messages(update)
        else:
            return command
        from durable_debug.graph.message import REMOVE_ALL_MESSAGES

        if [(type(m), m.id) for m in messages] == [(RemoveMessage, REMOVE_ALL_MESSAGES)]:
            return dataclasses.replace(command, update=update)
        matched = False
        for message in messages:
            if isinstance(message, ToolMessage) and message.tool_call_id == call["id"]:
                message.name = call["name"]
                matched = True
        if not matched and not answered and command.graph is None:
            example = "ToolMessage('done', tool_call_id=tool_call_id)"
            if shape != "list":
                example = f"{{{self.messages_key!r}: [{example}], ...}}"
            raise ValueError(
                f"Tool {call['name']!r} returned a Command whose update has no ToolMessage "
                f"answering its call {call['id']!r} (got {messages}): every tool call needs "
                f"its answer in the history. Return Command(update={example}) with the call id "
                "the tool receives as an InjectedToolCallId argument."
            )
        return dataclasses.replace(command, update=update)

    def _combine(self, outputs: list[Any], shape: str) -> Any:
        """The node's return value: the messages alone (a list, or under the messages key)
        when no tool returned a Command; else a list of updates, one per output, with the
        parent-graph Sends of every tool merged into one Command."""
        flat: list[Any] = []
        for output in outputs:
            flat.extend(output if isinstance(output, list) else [output])
        if not any(isinstance(o, Command) for o in flat):
            return flat if shape == "list" else {self.messages_key: flat}
        updates: list[Any] = []
        parent_sends: list[Send] = []
        for output in flat:
            if not isinstance(output, Command):
                updates.append([output] if shape == "list" else {self.messages_key: [output]})
            elif (
                output.graph == Command.PARENT
                and isinstance(output.goto, list)
                and all(isinstance(s, Send) for s in output.goto)
            ):
                parent_sends += output.goto
            else:
                updates.append(output)
        if parent_sends:
            updates.append(Command(graph=Command.PARENT, goto=parent_sends))
        return updates


def tools_condition(state: Any, messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """Route to ``"tools"`` when the latest message asks for tool calls, else to END: the
    conditional edge after a model node (``add_conditional_edges("agent", tools_condition)``).
    """
    if isinstance(state, list):
        messages = state
    elif isinstance(state, dict):
        messages = state.get(messages_key, [])
    else:
        messages = getattr(state, messages_key, [])
    if not messages:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    last = messages[-1]
    return "tools" if getattr(last, "tool_calls", None) else END


# -- helpers ---------------------------------------------------------------------------------


def _no_writer(chunk: Any) -> None:
    """The stream writer outside a run: drops the chunk."""


def _as_command(value: Any) -> Command[Any] | None:
    """``value`` as our :class:`Command`: ours as it is, LangGraph's (a tool written for it)
    field by field; None for anything else."""
    value = from_langgraph(value)
    return value if isinstance(value, Command) else None


def _content(output: Any) -> Any:
    """A tool's output as message content: text and content blocks as they are, anything
    else as JSON (or its ``str`` when JSON cannot hold it)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(
        isinstance(b, dict) and b.get("type") in _BLOCK_TYPES for b in output
    ):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


_BLOCK_TYPES = frozenset(
    {
        "text",
        "image_url",
        "image",
        "json",
        "search_result",
        "custom_tool_call_output",
        "document",
        "file",
    }
)
"""Content block types a tool message may carry as they are."""


def _handled_types(handling: ErrorHandling) -> tuple[type[BaseException], ...]:
    """The error types ``handle_tool_errors`` handles."""
    if isinstance(handling, type) and issubclass(handling, Exception):
        return (handling,)
    if isinstance(handling, tuple):
        return handling
    if callable(handling) and not isinstance(handling, type):
        return _annotated_error_types(handling)
    return (Exception,)


def _annotated_error_types(handler: Callable[..., str]) -> tuple[type[BaseException], ...]:
    """The exception types a handler's first parameter is annotated with (a union counts
    each); every exception when it has no annotation."""
    parameters = list(inspect.signature(handler).parameters.values())
    if not parameters:
        return (Exception,)
    try:
        hints = get_type_hints(handler)
    except Exception:
        return (Exception,)
    hint = hints.get(parameters[0].name)
    if hint is None:
        return (Exception,)
    kinds = get_args(hint) if get_origin(hint) in (Union, _union_type()) else (hint,)
    found = tuple(k for k in kinds if isinstance(k, type) and issubclass(k, BaseException))
    if len(found) != len(kinds):
        names = ", ".join(getattr(k, "__name__", repr(k)) for k in kinds)
        raise ValueError(
            f"handle_tool_errors {handler.__name__!r}: its first parameter must be annotated "
            f"with exception types, got {names}"
        )
    return found


def _union_type() -> Any:
    import types

    return getattr(types, "UnionType", Union)


def _injections_of(tool: BaseTool) -> _Injections:
    """Find the parameters of ``tool`` the node fills in (from its argument schema and, for a
    function tool, the function's annotations)."""
    annotations: dict[str, Any] = {}
    fn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if fn is not None:
        with contextlib.suppress(Exception):  # unresolvable hints: the schema still tells
            annotations.update(get_type_hints(fn, include_extras=True))
    schema = tool.get_input_schema()
    for name, field in getattr(schema, "model_fields", {}).items():
        if field.metadata:
            annotations[name] = Annotated[(field.annotation, *field.metadata)]
        else:
            annotations.setdefault(name, field.annotation)
    state: dict[str, str | None] = {}
    store = runtime = None
    hidden: set[str] = set()
    for name, hint in annotations.items():
        if name == "return":
            continue
        marks = _marks(hint)
        if any(isinstance(m, InjectedToolArg) or _is_class(m, InjectedToolArg) for m in marks):
            hidden.add(name)
        for mark in marks:
            if isinstance(mark, InjectedState):
                state[name] = mark.field
            elif _is_class(mark, InjectedState):
                state[name] = None
            elif isinstance(mark, InjectedStore) or _is_class(mark, InjectedStore):
                store = name
            elif _is_class(mark, ToolRuntime):
                runtime = name
        if name == "runtime" or _is_class(get_origin(hint) or hint, ToolRuntime):
            runtime = name
    if runtime is not None:
        hidden.add(runtime)
    return _Injections(state, store, runtime, frozenset(hidden | set(state)))


def _marks(hint: Any) -> list[Any]:
    """The metadata of an ``Annotated`` hint (also inside an Optional / union)."""
    origin = get_origin(hint)
    if origin is Annotated:
        return [*get_args(hint)[1:], *_marks(get_args(hint)[0])]
    if origin in (Union, _union_type()):
        return [m for arg in get_args(hint) for m in _marks(arg)]
    return [hint]


def _is_class(value: Any, kind: type) -> bool:
    origin = get_origin(value) or value
    return isinstance(origin, type) and issubclass(origin, kind)


AnyMessage = AnyMessage  # re-exported for annotations of state schemas using ToolNode
