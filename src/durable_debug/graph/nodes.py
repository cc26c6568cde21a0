"""What a compiled graph knows about each node: its function, its triggers, and the writes
its edges add after it runs.

A node's *writes* are the state keys it returned plus one write per outgoing edge: a plain edge
to ``b`` writes the trigger channel ``branch:to:b``; a join writes the node's name into the
join's barrier; a conditional edge is evaluated on the state as it will be after this node's
own writes, and writes the triggers (or Send packets) it picks.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from durable_debug.checkpoint.names import (
    INPUT_KEYS,
    NO_WRITES,
    TASKS,
    branch_channel,
    join_channel,
)
from durable_debug.graph.calls import CallStyle
from durable_debug.graph.channels import MISSING, BinaryOperatorAggregate, Channel
from durable_debug.graph.schema import StateSchema
from durable_debug.graph.types import (
    END,
    START,
    Command,
    InvalidUpdateError,
    ParentCommand,
    RetryPolicy,
    Send,
    from_langgraph,
    send_packet,
)

__all__ = [
    "INPUT_KEYS",
    "NO_WRITES",
    "TASKS",
    "Branch",
    "NodeSpec",
    "UnmappedBranchError",
    "branch_channel",
    "join_channel",
]


class UnmappedBranchError(InvalidUpdateError, KeyError):
    """A conditional edge returned a value its path map lacks. A ``KeyError``, as LangGraph
    raises for it, and an ``InvalidUpdateError`` naming the edge and the map."""

    __str__ = BaseException.__str__  # the message as given (KeyError would quote it)


@dataclass(frozen=True)
class Branch:
    """A conditional edge: ``path(state)`` picks the next node(s), optionally via ``path_map``."""

    source: str
    path: Callable[..., Any]
    path_map: Mapping[Hashable, str] | None
    style: CallStyle
    """How to call ``path`` (see :mod:`durable_debug.graph.calls`)."""
    input_schema: StateSchema | None = None
    """The schema ``path``'s first parameter is annotated with, when it is a state class: the
    edge reads the state through it (and is not given the node's other returned keys)."""

    def destinations(self) -> list[str] | None:
        """Nodes this branch may go to, when known (for drawing)."""
        if self.path_map is not None:
            return list(dict.fromkeys(self.path_map.values()))
        path: Any = self.path
        if type(path).__name__ == "RunnableLambda":  # LangChain's: read its function
            path = getattr(path, "func", None) or getattr(path, "afunc", None)
        return _literal_destinations(path)

    def resolve(self, result: Any) -> list[str | Send]:
        """Turn what ``path`` returned into a list of node names and Sends."""
        result = from_langgraph(result)
        items = list(result) if isinstance(result, (list, tuple)) else [result]
        resolved: list[str | Send] = []
        for item in items:
            if isinstance(item, Send):
                resolved.append(item)
                continue
            if self.path_map is not None:
                try:
                    item = self.path_map[item]
                except (KeyError, TypeError):
                    raise UnmappedBranchError(
                        f"The conditional edge from {self.source!r} returned {item!r}, which "
                        f"is not a key of its path map ({list(self.path_map)})"
                    ) from None
            if not isinstance(item, str):
                raise InvalidUpdateError(
                    f"The conditional edge from {self.source!r} returned {item!r}; it must "
                    "return a node name, a list of names, or Send objects"
                )
            resolved.append(item)
        return resolved


@dataclass
class NodeSpec:
    """A node of a compiled graph."""

    name: str
    fn: Callable[..., Any] | None
    """The user's function (None for the virtual START node)."""
    style: CallStyle | None = None
    """How to call ``fn`` (see :mod:`durable_debug.graph.calls`)."""
    retry: tuple[RetryPolicy, ...] = ()
    """Retry policies; a failure is retried by the first one whose ``retry_on`` matches."""
    triggers: tuple[str, ...] = ()
    """Channels whose update makes this node run."""
    edges_to: tuple[str, ...] = ()
    """Targets of plain edges (END excluded)."""
    joins: tuple[str, ...] = ()
    """Barrier channels this node writes its name into."""
    branches: tuple[Branch, ...] = ()
    destinations: tuple[str, ...] = ()
    """Declared ``Command(goto=...)`` targets (for drawing)."""
    destination_labels: dict[str, str] = field(default_factory=dict)
    """The edge labels of ``destinations={node: label}`` (for drawing)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    cache_policy: Any = None
    """A :class:`~durable_debug.graph.cache.CachePolicy`: results cached by input."""
    defer: bool = False
    """Run only when nothing else is left to run (``add_node(..., defer=True)``)."""
    input_schema: StateSchema | None = None
    """The schema the node reads when it is not the graph's state schema (its keys may be
    private channels)."""
    input_channel: str | None = None
    """The channel whose value the node receives instead of the state (an ``@entrypoint``
    receives the run input, from ``__start__``)."""
    error_handler: str | None = None
    trace_policy: Any = None
    """A :class:`~durable_debug.graph.trace_policy.TracePolicy`: what tracers record."""
    timeout: Any = None
    """A :class:`~durable_debug.graph.types.TimeoutPolicy` for each attempt (``timeouts.py``)."""
    """A :class:`~durable_debug.graph.trace_policy.TracePolicy`: what tracers record."""
    """The node run, in the same step, when this node's task fails (after its retries):
    ``add_node(..., error_handler=fn)`` or ``set_node_defaults(error_handler=fn)``."""
    is_error_handler: bool = False
    """This node handles other nodes' failures (its own failure fails the run)."""
    writer: Callable[[Any], list[tuple[str, Any]]] | None = None
    """Turns the node's return value into its ``(channel, value)`` writes, instead of the
    state schema and edges (a low-level ``Pregel`` node's ``write_to``)."""
    subgraphs: list[Any] = field(default_factory=list)
    """The compiled graph the node runs, when the graph it belongs to found one as it was
    compiled (``subgraph.find_subgraph``), else empty, as is a graph compiled with
    ``checkpointer=False`` (LangGraph's ``PregelNode.subgraphs``)."""

    def copy(self, update: Mapping[str, Any] | None = None) -> NodeSpec:
        """This node with the fields ``update`` names replaced (LangGraph's
        ``PregelNode.copy``); a TypeError names a field a node does not have."""
        unknown = sorted(set(update or {}) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"NodeSpec.copy: {unknown!r} are not fields of a node")
        return dataclasses.replace(self, **(update or {}))


def _literal_destinations(fn: Callable[..., Any]) -> list[str] | None:
    """Destinations from a ``-> Literal["a", "b"]`` return annotation, if any."""
    import ast
    import typing

    try:
        ret = typing.get_type_hints(fn).get("return")
    except Exception:
        # A string annotation naming a local import (``from __future__ import annotations``):
        # read the literal values from the text instead of evaluating it.
        ret = getattr(fn, "__annotations__", {}).get("return")
        if isinstance(ret, str):
            try:
                node = ast.parse(ret, mode="eval").body
            except SyntaxError:
                return None
            if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal"):
                items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                constants = [i for i in items if isinstance(i, ast.Constant)]
                if len(constants) == len(items):
                    return [str(i.value) for i in constants]
        return None
    if ret is not None and typing.get_origin(ret) is typing.Literal:
        return [str(v) for v in typing.get_args(ret)]
    return None


_UNIONS = (typing.Union, types.UnionType)


def command_destinations(fn: Any) -> tuple[str, ...]:
    """The nodes a node may go to, from a ``-> Command[Literal["a", "b"]]`` return annotation
    (also inside a Union), as LangGraph reads them for drawing; () when there is none."""
    try:
        target = fn if inspect.isroutine(fn) else type(fn).__call__
        ret = typing.get_type_hints(target).get("return")
    except Exception:  # an annotation that does not resolve (a forward reference)
        return ()
    options = typing.get_args(ret) if typing.get_origin(ret) in _UNIONS else (ret,)
    for option in options:
        args = typing.get_args(option)
        if typing.get_origin(option) is Command and typing.get_origin(args[0]) is typing.Literal:
            return tuple(str(v) for v in typing.get_args(args[0]))
    return ()


def state_writes(
    schema: StateSchema,
    node: str,
    result: Any,
    on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
) -> tuple[list[tuple[str, Any]], list[Any]]:
    """Split a node's return value into state writes (``(key, value)`` pairs, in order) and
    ``goto`` targets. A list holding a ``Command`` is a list of updates, as in LangGraph: each
    Command's update and goto, each other item's writes (a key written twice is written
    twice: a reducer gets both). A key the schema lacks: see ``StateSchema.updates_from``."""
    where = f"Node {node!r}"
    if isinstance(result, Command):
        goto = result.goto
        targets = [goto] if isinstance(goto, (str, Send)) else list(goto or ())
        return command_update_pairs(schema, result.update, where, on_unknown), targets
    if isinstance(result, (list, tuple)) and result and any(isinstance(r, Command) for r in result):
        writes: list[tuple[str, Any]] = []
        targets = []
        for item in result:
            if isinstance(item, Command) and item.graph == Command.PARENT:
                raise ParentCommand(item)
            more, goto = state_writes(schema, node, item, on_unknown)
            writes += more
            targets += goto
        return writes, targets
    return list(schema.updates_from(result, where=where, on_unknown=on_unknown).items()), []


def command_update_pairs(
    schema: StateSchema,
    update: Any,
    where: str,
    on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
) -> list[tuple[str, Any]]:
    """A ``Command``'s ``update`` as ``(key, value)`` writes, in order. Besides what a node may
    return, LangGraph takes a list of ``(key, value)`` pairs here, a key written as often as
    it is named (a reducer gets each value)."""
    if (
        schema.kind != "root"
        and isinstance(update, (list, tuple))
        and update
        and all(isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update)
    ):
        pairs: list[tuple[str, Any]] = []
        for key, value in update:
            one = schema.updates_from({key: value}, where=where, on_unknown=on_unknown)
            pairs += one.items()
        return pairs
    return list(schema.updates_from(update, where=where, on_unknown=on_unknown).items())


def fresh_state(
    schema: StateSchema,
    channels: Mapping[str, Channel],
    updates: Mapping[str, Any] | Sequence[tuple[str, Any]],
    reader: StateSchema | None = None,
    output: Any = None,
) -> Any:
    """The state as a conditional edge of this task sees it, as LangGraph reads it: the keys
    of ``reader`` (default: the state) with the task's own writes applied (reducers run on a
    copy; the channels are not touched). Unless the edge declares its own schema
    (``Branch.input_schema``), a dict ``output`` (what the node returned) is merged under it,
    so the edge also sees returned keys the state lacks."""
    reader = reader or schema
    pairs = list(updates.items()) if isinstance(updates, Mapping) else list(updates)
    written: dict[str, list[Any]] = {}
    for key, new in pairs:
        written.setdefault(key, []).append(new)
    values = {}
    for key in reader.keys:
        channel = channels.get(key)
        if channel is None:
            continue
        value = channel.value if channel.is_available() else MISSING
        if key in written:
            if isinstance(channel, BinaryOperatorAggregate) and value is not MISSING:
                preview = channel.copy()
                preview.update(written[key])
                value = preview.get()
            else:
                value = written[key][-1]
        if value is not MISSING:
            values[key] = value
    state = reader.to_input(values)
    if isinstance(state, dict) and isinstance(output, dict):
        state = {**output, **state}
    return state


def branch_reader(path: Any) -> StateSchema | None:
    """The schema a conditional edge's function declares with its first parameter's
    annotation, when that is a class with annotated keys (as LangGraph infers it); None:
    the edge reads what its source node reads."""
    target = getattr(path, "func", None) if not inspect.isroutine(path) else path
    if not inspect.isroutine(target):
        return None
    try:
        hints = typing.get_type_hints(target)
        first = next(iter(inspect.signature(target).parameters), None)
    except Exception:  # annotations that do not resolve, or no signature
        return None
    hint = hints.get(first) if first else None
    if not isinstance(hint, type):
        return None
    try:
        if not typing.get_type_hints(hint):
            return None
    except Exception:
        return None
    return StateSchema.of(hint)


def targets_to_writes(
    node: str, targets: Sequence[str | Send], known: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """Writes that schedule ``targets`` (node names or Sends) for the next step."""
    writes: list[tuple[str, Any]] = []
    for target in targets:
        if isinstance(target, Send):
            if target.node not in known:
                raise InvalidUpdateError(
                    f"Node {node!r} sent to unknown node {target.node!r} "
                    f"(nodes: {', '.join(n for n in known if n != START)})"
                )
            writes.append((TASKS, send_packet(target)))
        elif target == END:
            continue
        elif target not in known or target == START:
            raise InvalidUpdateError(
                f"Node {node!r} routed to unknown node {target!r} "
                f"(nodes: {', '.join(n for n in known if n != START)})"
            )
        else:
            writes.append((branch_channel(target), None))
    return writes
