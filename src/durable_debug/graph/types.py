"""The engine's public value types and errors: Send, Command, Interrupt, RetryPolicy,
StateSnapshot, PregelTask and the exceptions a run can raise.

    from durable_debug import Command, Send
    route = lambda state: [Send("worker", {"item": it}) for it in state["items"]]
    await graph.ainvoke(Command(resume={"id-x": "APPROVE"}), config)
"""

from __future__ import annotations

import enum
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Generic, Literal, NamedTuple

from typing_extensions import TypeVar

from durable_debug.checkpoint import names
from durable_debug.checkpoint.base import CheckpointMetadata, RunnableConfig
from durable_debug.checkpoint.serde import register_type
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10
from durable_debug.graph.ids import namespace_interrupt_id

__all__ = [
    "END",
    "START",
    "TAG_HIDDEN",
    "TAG_NOSTREAM",
    "Command",
    "EmptyInputError",
    "GraphDrained",
    "GraphInterrupt",
    "GraphRecursionError",
    "Interrupt",
    "InvalidUpdateError",
    "NodeError",
    "Overwrite",
    "ParentCommand",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "TimeoutPolicy",
    "adopt_langchain_tool_output",
    "default_retry_on",
    "from_langgraph",
    "interrupt_payload",
    "is_invalid_resume",
    "packet_timeout",
    "saved_interrupt",
    "send_packet",
]

ResponseT = TypeVar("ResponseT")
"""The type of the answer an :class:`Interrupt` expects (``Interrupt[Decision]``)."""
N = TypeVar("N", bound=str)
"""The node names a :class:`Command` may go to (``Command[Literal["a", "b"]]``)."""
StateT = TypeVar("StateT")
"""The state schema of a graph (``StateGraph[State]``)."""
ContextT = TypeVar("ContextT", default=Any)
"""The type of a run's ``context`` (default: any)."""
InputT = TypeVar("InputT", default=StateT)
"""The run input's schema (default: the state)."""
OutputT = TypeVar("OutputT", default=StateT)
"""The run output's schema (default: the state)."""

START = names.START
"""The virtual first node: edges from START say where a run begins."""
END = names.END
"""The virtual last node: an edge to END finishes that branch."""
TAG_HIDDEN = "langsmith:hidden"
"""A run tag LangChain tracers hide (the START node's callback run carries it)."""
TAG_NOSTREAM = "nostream"
"""A chat model tag: its tokens are not streamed in stream mode ``"messages"``."""


@dataclass(frozen=True, slots=True)
class Send:
    """Schedule one run of ``node`` with ``arg`` as its input, in the next step.

    Returned from a conditional edge (usually many at once) to fan out. The tasks run in
    parallel and their writes are merged in the order the Sends were made. ``timeout`` (a
    :class:`TimeoutPolicy`; a number or timedelta is a ``run_timeout``) replaces the node's
    own timeout for this one task, as LangGraph's ``Send(..., timeout=...)`` does.
    """

    node: str
    """Name of the node to run."""
    arg: Any
    """The input that node receives instead of the graph state."""
    timeout: TimeoutPolicy | None = field(default=None, kw_only=True)
    """The timeout of this task (None: the node's own)."""

    def __post_init__(self) -> None:
        if self.timeout is not None:
            object.__setattr__(self, "timeout", TimeoutPolicy.coerce(self.timeout))

    def __repr__(self) -> str:
        if self.timeout is None:
            return f"Send(node={self.node!r}, arg={self.arg!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"


def send_packet(send: Send) -> list[Any]:
    """A Send as the ``__pregel_tasks`` channel holds it until its task runs: ``[node, arg]``,
    or ``[node, arg, timeout]`` when it carries a :class:`TimeoutPolicy`."""
    if send.timeout is None:
        return [send.node, send.arg]
    return [send.node, send.arg, send.timeout]


def packet_timeout(packet: Sequence[Any]) -> TimeoutPolicy | None:
    """The timeout a pending Send (:func:`send_packet`) carries, if any."""
    return packet[2] if len(packet) > 2 else None


_PLACEHOLDER_ID = "placeholder-id"


@dataclass(frozen=True, slots=True, init=False)
class Interrupt(Generic[ResponseT]):
    """A pause requested by ``interrupt(value)`` inside a node, waiting for a resume value.

    The keywords of interrupts saved by LangGraph before 0.6 (``ns``, ``when``,
    ``resumable``) are accepted and dropped, as LangGraph does; an ``ns`` given without an
    ``id`` gives the id :meth:`from_ns` gives that namespace.
    """

    value: Any
    """What the node asked (shown to the human who answers)."""
    id: str
    """Deterministic id: the same task and position in the node always give the same id."""
    response_schema: type[ResponseT] | dict[str, Any] | None
    """JSON Schema of the answer expected, when ``interrupt(..., response_schema=...)`` gave
    one (a class given there is shown as its JSON Schema), for clients to render a form."""

    @property
    def interrupt_id(self) -> str:
        """LangGraph's deprecated name of :attr:`id`."""
        warnings.warn(
            "`interrupt_id` is deprecated. Use `id` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return self.id

    def __init__(
        self,
        value: Any,
        id: str = _PLACEHOLDER_ID,
        *,
        response_schema: type[ResponseT] | dict[str, Any] | None = None,
        ns: Sequence[str] | None = None,
        when: str | None = None,
        resumable: bool | None = None,
    ) -> None:
        if ns is not None and id == _PLACEHOLDER_ID and not isinstance(ns, str):
            id = namespace_interrupt_id(names.NS_SEP.join(ns))
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "response_schema", response_schema)

    @classmethod
    def from_ns(
        cls,
        value: Any,
        ns: str,
        *,
        response_schema: type[ResponseT] | dict[str, Any] | None = None,
    ) -> Interrupt[ResponseT]:
        """An interrupt whose id is derived from its namespace ``ns`` (``"a:b|c:d"``)."""
        return cls(value, namespace_interrupt_id(ns), response_schema=response_schema)


def interrupt_payload(interrupt: Interrupt[Any]) -> dict[str, Any]:
    """An interrupt as the ``tasks`` and ``debug`` stream modes show it (its fields)."""
    return {
        "value": interrupt.value,
        "id": interrupt.id,
        "response_schema": interrupt.response_schema,
    }


def saved_interrupt(interrupt: Interrupt[Any]) -> dict[str, Any]:
    """How a paused task's interrupt is saved in its ``__interrupt__`` write (read back by
    ``algo.read_pending_writes``): its value and id, and its response schema when it has
    one."""
    saved = {"id": interrupt.id, "value": interrupt.value}
    if interrupt.response_schema is not None:
        saved["response_schema"] = interrupt.response_schema
    return saved


INVALID_RESUME = "_langgraph_invalid_resume"
"""Attribute set on the ``pydantic.ValidationError`` raised when a resume value does not
match its interrupt's ``response_schema`` (LangGraph's name, so either library's check
recognizes it)."""


def is_invalid_resume(error: BaseException) -> bool:
    """True when ``error`` was raised because a resume value did not match the
    ``response_schema`` of the ``interrupt()`` it answered."""
    return getattr(error, INVALID_RESUME, False) is True


class _Unset(enum.Enum):
    """The "no resume value" marker: an Enum member, so a saved ``Command`` (a thread's
    first input) reads back with the same marker."""

    UNSET = "unset"


_UNSET: Any = _Unset.UNSET


class _ToolOutput:
    """The base of :class:`Command` until LangChain is imported; then LangChain's
    ``ToolOutputMixin`` takes its place (:func:`adopt_langchain_tool_output`), so a LangChain
    tool that returns a Command hands it back as it is instead of as a message's text."""


@dataclass(frozen=True)  # not slotted: its base is swapped for LangChain's (same layout)
class Command(_ToolOutput, Generic[N]):
    """An instruction to the graph, as run input or as a node's return value.

    * ``resume`` — the answer to pending interrupts: one value when one interrupt is pending,
      or ``{interrupt_id: value}`` to answer several (or some) of them.
    * ``update`` — state writes, applied as if the node (or, as input, the caller) wrote them.
    * ``goto`` — node name(s) or :class:`Send` (s) to run next.
    * ``graph`` — :attr:`PARENT` sends the command from a subgraph's node to the graph that
      runs the subgraph: its update and goto become the writes of the parent's task.
    """

    PARENT: ClassVar[str] = "__parent__"
    """``Command(graph=Command.PARENT, ...)``: the command is for the enclosing graph."""

    update: Any = None
    """Writes to apply: a dict of state keys, or None."""
    goto: str | Send | Sequence[str | Send] = ()
    """Where to go next."""
    resume: Any = _UNSET
    """Resume value (or map of interrupt id → value); unset when not resuming."""
    graph: str | None = None
    """None (this graph) or :attr:`PARENT`."""

    @property
    def has_resume(self) -> bool:
        """True when this command carries a resume value."""
        return self.resume is not _UNSET

    def __repr__(self) -> str:
        parts = []
        if self.update is not None:
            parts.append(f"update={self.update!r}")
        if self.goto:
            parts.append(f"goto={self.goto!r}")
        if self.has_resume:
            parts.append(f"resume={self.resume!r}")
        if self.graph is not None:
            parts.append(f"graph={self.graph!r}")
        return f"Command({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class NodeError:
    """What an error handler (``add_node(..., error_handler=fn)``) is told about the failure
    it handles: the handler receives it in a parameter annotated ``NodeError``."""

    node: str
    """The node whose task failed."""
    error: BaseException
    """What it raised (after its retries)."""


def default_retry_on(exc: BaseException) -> bool:
    """Retry transient errors; never retry mistakes in the code (LangGraph's default)."""
    if isinstance(exc, ConnectionError):
        return True
    return not isinstance(
        exc,
        (
            ValueError,
            TypeError,
            ArithmeticError,
            ImportError,
            LookupError,
            NameError,
            SyntaxError,
            RuntimeError,
            ReferenceError,
            StopIteration,
            StopAsyncIteration,
            OSError,
        ),
    )


@dataclass(frozen=True)
class RetryPolicy:
    """How a node is retried before its error is saved and raised."""

    initial_interval: float = 0.5
    """Seconds to wait before the first retry."""
    backoff_factor: float = 2.0
    """Each following wait is this many times longer."""
    max_interval: float = 128.0
    """Upper bound of a wait, in seconds."""
    max_attempts: int = 3
    """Attempts in total, the first one included."""
    jitter: bool = True
    """Add up to one second of random delay to each wait."""
    retry_on: (
        type[BaseException] | Sequence[type[BaseException]] | Callable[[BaseException], bool]
    ) = field(default=default_retry_on)
    """Exception class(es) to retry, or a predicate on the exception."""

    def should_retry(self, exc: BaseException) -> bool:
        """True if ``exc`` is one this policy retries."""
        rule = self.retry_on
        if isinstance(rule, type) and issubclass(rule, BaseException):
            return isinstance(exc, rule)
        if isinstance(rule, Sequence):
            return isinstance(exc, tuple(rule))
        return bool(rule(exc))  # type: ignore[call-arg]  # mypy keeps type[BaseException] in rule past the issubclass test above


def _positive_seconds(value: float | timedelta | None, what: str) -> float | None:
    """``value`` in seconds (a timedelta converted), or None; ValueError unless positive."""
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"{what} must be greater than 0")
    return seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutPolicy:
    """How long one attempt of a node may run: ``run_timeout`` caps its wall-clock time,
    ``idle_timeout`` the time it may go without progress (``refresh_on="auto"``: any
    progress signal; ``"heartbeat"``: only ``runtime.heartbeat()``). Seconds or timedeltas.

    Timeouts cancel the attempt through asyncio, so they apply to async nodes only.
    """

    run_timeout: float | timedelta | None = None
    """Hard cap, in seconds, on one attempt; never refreshed."""
    idle_timeout: float | timedelta | None = None
    """Longest time, in seconds, one attempt may go without progress."""
    refresh_on: Literal["auto", "heartbeat"] = "auto"
    """Which signals count as progress for ``idle_timeout``."""

    @classmethod
    def coerce(cls, value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
        """A policy with both timeouts in float seconds: a number or timedelta is a
        ``run_timeout``; None, or a policy with neither timeout, gives None. A policy
        already in that form is returned as it is. ValueError on a timeout not above zero
        or an unknown ``refresh_on``."""
        if value is None:
            return None
        policy = value if isinstance(value, TimeoutPolicy) else cls(run_timeout=value)
        if policy.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run = _positive_seconds(policy.run_timeout, "run_timeout")
        idle = _positive_seconds(policy.idle_timeout, "idle_timeout")
        if run is None and idle is None:
            return None
        if (
            policy is value
            and type(policy.run_timeout) is type(run)
            and type(policy.idle_timeout) is type(idle)
        ):
            return policy
        return cls(run_timeout=run, idle_timeout=idle, refresh_on=policy.refresh_on)


@dataclass(frozen=True, slots=True)
class PregelExecutableTask:
    """LangGraph's record of a task ready to run (its name, input, runnable, config, retry
    and timeout policies), public in ``langgraph.types`` for code that annotates with it or
    builds one to call LangGraph's own runner. The engine schedules its tasks with a record
    of its own (``graph/algo.py``) and never makes or reads one of these."""

    name: str
    input: Any
    proc: Any
    """The runnable the task calls."""
    writes: Any
    """Where the task's ``(channel, value)`` writes collect (a deque)."""
    config: RunnableConfig
    triggers: Sequence[str]
    retry_policy: Sequence[RetryPolicy]
    cache_key: Any
    id: str
    path: tuple[Any, ...]
    writers: Sequence[Any] = ()
    subgraphs: Sequence[Any] = ()
    timeout: TimeoutPolicy | None = None


class PregelTask(NamedTuple):
    """A task of the step that follows a checkpoint, as a snapshot shows it."""

    id: str
    """Deterministic task id."""
    name: str
    """Node name."""
    path: tuple[Any, ...]
    """``("__pregel_pull", node)`` for an edge task, ``("__pregel_push", i)`` for a Send."""
    error: str | None = None
    """``repr`` of the exception if the task failed."""
    interrupts: tuple[Interrupt[Any], ...] = ()
    """Interrupts the task raised."""
    state: Any = None
    """Reserved for subgraph state (always None here)."""
    result: Any = None
    """The task's writes as a dict, once it finished."""


class StateSnapshot(NamedTuple):
    """The state of a thread at one checkpoint."""

    values: dict[str, Any]
    """Channel values of the state."""
    next: tuple[str, ...]
    """Nodes that will run in the next step (``()`` when the thread is done)."""
    config: RunnableConfig
    """Config that addresses this checkpoint."""
    metadata: CheckpointMetadata | None
    """Source, step, parents."""
    created_at: str | None
    """Creation time of the checkpoint (ISO 8601)."""
    parent_config: RunnableConfig | None
    """Config of the parent checkpoint."""
    tasks: tuple[PregelTask, ...]
    """Tasks of the next step, with their errors, interrupts and results."""
    interrupts: tuple[Interrupt[Any], ...] = ()
    """Interrupts still waiting for a resume value."""


@dataclass(slots=True)
class Overwrite:
    """Write ``value`` to a reducer key as is, bypassing its reducer (one per key and step).

    return {"messages": Overwrite(["only this"])}
    """

    value: Any
    """The new value of the key."""
    type: str = names.OVERWRITE
    """Marks the dict form ``{"__overwrite__": value}`` that means the same."""


register_type(Overwrite, name="durable_debug.Overwrite")
# A Command is saved as a dataclass (a thread's first input, a Send's argument), as LangGraph
# saves it; its "no resume value" marker with it.
register_type(_Unset, name="durable_debug.Command.unset")
# Saved under stable names, so a process that did not write a thread's checkpoints rebuilds
# its pending Sends (and the Commands they carry) rather than loading tagged dicts.
for _cls in (Send, Command, Interrupt):
    register_type(_cls, name=names.STORED_TYPE_NAMES[_cls.__name__])
register_type(TimeoutPolicy, name=names.STORED_TIMEOUT_POLICY)  # a pending Send's timeout


class InvalidUpdateError(ValueError):
    """A write the graph cannot accept: two values for a plain key in one step, a key the
    state does not have, a node that returned something other than a dict."""


class GraphRecursionError(RecursionError):
    """The run reached ``recursion_limit`` steps without finishing."""


class EmptyInputError(ValueError):
    """A run was asked to resume (input None) on a thread that has nothing to resume."""


class GraphDrained(Exception):
    """A run stopped before its next step because its :class:`RunControl` asked it to
    (``request_drain``); the step before is saved and the thread resumes from there with
    ``invoke(None, config)``."""

    def __init__(self, reason: str = "shutdown") -> None:
        self.reason = reason
        super().__init__(f"Graph drained: {reason}")


class GraphInterrupt(Exception):
    """Raised inside a node by ``interrupt()``; the engine catches it and pauses the run."""

    def __init__(self, interrupts: Sequence[Interrupt[Any]] = ()) -> None:
        # ``args[0]`` is the sequence as given (a list stays a list), as in LangGraph.
        given = interrupts if isinstance(interrupts, (list, tuple)) else tuple(interrupts)
        super().__init__(given)
        self.interrupts: tuple[Interrupt[Any], ...] = tuple(given)


class ParentCommand(Exception):
    """Raised when a subgraph's node returns ``Command(graph=Command.PARENT, ...)``: it ends
    the subgraph's run, and the task of the parent graph that ran it takes the command as
    its own return value."""

    def __init__(self, command: Command[Any]) -> None:
        super().__init__(command)
        self.command = command


def adopt_langchain_tool_output() -> None:
    """Make :class:`Command` a LangChain ``ToolOutputMixin`` once LangChain's messages are
    imported (never importing them for this): LangChain's tools then return a Command as it
    is, as they return LangGraph's, so ``ToolNode`` applies its update."""
    if Command.__bases__[0] is _ToolOutput:
        module = sys.modules.get("langchain_core.messages.tool")
        if module is not None:
            Command.__bases__ = (module.ToolOutputMixin, *Command.__bases__[1:])


def _their_timeout(send: Any) -> TimeoutPolicy | None:
    """The timeout of LangGraph's ``Send`` as ours (its ``TimeoutPolicy`` has our fields)."""
    theirs = getattr(send, "timeout", None)
    if theirs is None or isinstance(theirs, TimeoutPolicy):
        return theirs
    return TimeoutPolicy(
        run_timeout=theirs.run_timeout,
        idle_timeout=theirs.idle_timeout,
        refresh_on=theirs.refresh_on,
    )


def from_langgraph(value: Any) -> Any:
    """``value`` with LangGraph's own ``Command`` and ``Send`` objects (from code written for
    ``langgraph.types``, such as LangGraph's prebuilt ``ToolNode``) made into ours, also inside
    a list or tuple, a Command's ``goto`` and a Send's ``arg``; any other value is returned as
    it is.

    The engine calls it on what nodes and conditional edges return and on run input, so code
    that mixes the two libraries' objects runs unchanged.
    """
    kind = type(value)
    if kind is dict or value is None or kind is str:
        return value
    if kind is list or kind is tuple:
        if any(_is_langgraphs(type(item)) for item in value):
            return kind(from_langgraph(item) for item in value)
        return value
    if not _is_langgraphs(kind):
        return value
    if kind.__name__ == "Send":  # a Command it carries is made ours too, so it can be saved
        return Send(value.node, from_langgraph(value.arg), timeout=_their_timeout(value))
    if kind.__name__ == "Command":
        goto = value.goto
        if isinstance(goto, (list, tuple)):
            goto = [from_langgraph(g) for g in goto]
        else:
            goto = from_langgraph(goto)
        resume = getattr(value, "resume", None)
        return Command(
            update=value.update,
            goto=goto if goto is not None else (),
            resume=_UNSET if resume is None else resume,
            graph=Command.PARENT if value.graph == getattr(kind, "PARENT", None) else value.graph,
        )
    return value


def _is_langgraphs(kind: type) -> bool:
    """True for LangGraph's ``Command`` and ``Send`` classes."""
    return kind.__name__ in ("Command", "Send") and kind.__module__.startswith("langgraph.")
