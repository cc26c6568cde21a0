"""LangGraph's low-level API on our engine: ``Pregel`` built from channels and ``NodeBuilder``.

    one = NodeBuilder().subscribe_only("a").do(lambda x: x + 1).write_to("b")
    app = Pregel(
        nodes={"one": one},
        channels={"a": LastValue(int), "b": LastValue(int)},
        input_channels="a",
        output_channels="b",
        checkpointer=MemorySaver(),
    )
    app.invoke(1, {"configurable": {"thread_id": "t"}})   # 2

A :class:`Pregel` is a compiled graph (a :class:`CompiledStateGraph` subclass) whose channels
are the ones given (their names are its state keys) and whose nodes are
:class:`PregelNode` s: a node runs when one of its ``triggers`` was updated, receives the
value of its one channel (``subscribe_only``) or a dict of its channels that hold a value
(``subscribe_to`` / ``read_from``), calls its ``do`` steps in order, and writes what the last
returned to its ``write_to`` channels. The run input is written straight into the input
channels in the ``input`` checkpoint (step -1), as LangGraph writes it: there is no
``__start__`` node. Everything else is the ordinary ``RunLoop``: savers, checkpoints,
pending writes, retries, caching, interrupts, stream modes and the debugger's reading.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, NamedTuple

from typing_extensions import Self, TypedDict

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import BaseCheckpointSaver, RunnableConfig
from durable_debug.checkpoint.foreign import adapt_saver
from durable_debug.checkpoint.names import INTERRUPT, TASKS
from durable_debug.graph.cache import CachePolicy
from durable_debug.graph.calls import CallStyle, call, call_style, current_call
from durable_debug.graph.channels import BinaryOperatorAggregate, Channel
from durable_debug.graph.channels import Topic as SendTopic
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10, warn_renamed
from durable_debug.graph.drawing import DrawableGraph, Edge, Node, as_langchain_graph
from durable_debug.graph.nodes import NodeSpec
from durable_debug.graph.pregel import CompiledStateGraph
from durable_debug.graph.schema import StateSchema, _Key
from durable_debug.graph.streams import OutputKeys
from durable_debug.graph.types import (
    END,
    START,
    InvalidUpdateError,
    RetryPolicy,
    Send,
    TimeoutPolicy,
    send_packet,
)

__all__ = ["PASSTHROUGH", "ChannelWriteEntry", "NodeBuilder", "Pregel", "PregelNode"]


class _Passthrough:
    __slots__ = ()

    def __repr__(self) -> str:
        return "PASSTHROUGH"


PASSTHROUGH: Any = _Passthrough()
"""A write entry's value meaning "what the node returned"."""


class ChannelWriteEntry(NamedTuple):
    """One write a node makes after its steps: to ``channel``, the node's result (or
    ``value``), through ``mapper`` if given; skipped when ``skip_none`` and it is None."""

    channel: str
    value: Any = PASSTHROUGH
    skip_none: bool = False
    mapper: Callable[[Any], Any] | None = None


def _identity(value: Any) -> Any:
    return value


@dataclass
class PregelNode:
    """A node of a :class:`Pregel` (what :meth:`NodeBuilder.build` returns)."""

    channels: str | list[str]
    """The one channel whose value the node receives, or the channels it receives as a dict."""
    triggers: list[str]
    """Channels whose update makes the node run."""
    bound: list[Callable[..., Any]] = field(default_factory=list)
    """The steps, called in order on the input (none: the input is the result)."""
    writers: list[ChannelWriteEntry] = field(default_factory=list)
    """Where the last step's result is written."""
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    retry_policy: list[RetryPolicy] = field(default_factory=list)
    cache_policy: CachePolicy[Any] | None = None
    mapper: Callable[[Any], Any] | None = None
    """Applied to the input before the first step."""
    timeout: TimeoutPolicy | None = None
    """Each attempt's timeout (see :meth:`NodeBuilder.set_timeout`)."""

    def writes_of(self, result: Any) -> list[tuple[str, Any]]:
        """The ``(channel, value)`` writes of a run that returned ``result`` (a ``Send`` among
        what a write entry gives schedules that node with its argument)."""
        writes: list[tuple[str, Any]] = []
        for entry in self.writers:
            if isinstance(entry, Send):
                writes.append((TASKS, send_packet(entry)))
                continue
            value = result if entry.value is PASSTHROUGH else entry.value
            if entry.mapper is not None:
                value = entry.mapper(value)
            if entry.skip_none and value is None:
                continue
            if entry.channel == TASKS and isinstance(value, Send):
                writes.append((TASKS, send_packet(value)))
                continue
            writes.append((entry.channel, value))
        return writes


class NodeBuilder:
    """Builds a :class:`PregelNode` step by step, as LangGraph's ``NodeBuilder``:

    ``NodeBuilder().subscribe_only("a").do(fn).write_to("b")``;
    ``subscribe_to("a", "b")`` (input: a dict of those channels), ``read_from("c")`` (read
    without being triggered), ``meta(*tags, **metadata)``, ``add_retry_policies(...)``,
    ``add_cache_policy(...)``, then ``build()``.
    """

    __slots__ = (
        "_bound",
        "_cache_policy",
        "_channels",
        "_metadata",
        "_retry_policy",
        "_tags",
        "_timeout",
        "_triggers",
        "_writes",
    )

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._writes: list[ChannelWriteEntry] = []
        self._bound: list[Callable[..., Any]] = []
        self._retry_policy: list[RetryPolicy] = []
        self._cache_policy: CachePolicy[Any] | None = None
        self._timeout: TimeoutPolicy | None = None

    def subscribe_only(self, channel: str) -> Self:
        """Run when ``channel`` is updated, receiving its value alone."""
        if self._channels:
            raise ValueError(
                "Cannot subscribe to single channels when other channels are already subscribed to"
            )
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> Self:
        """Run when one of ``channels`` is updated, receiving a dict of the channels read
        (these too unless ``read=False``)."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot subscribe to channels when subscribed to a single channel")
        if read:
            self._channels.extend(channels)
        self._triggers.extend(channels)
        return self

    def read_from(self, *channels: str) -> Self:
        """Also read ``channels`` into the input dict, without being triggered by them."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot read additional channels when subscribed to a single channel")
        self._channels.extend(channels)
        return self

    def do(self, node: Callable[..., Any]) -> Self:
        """Add a step: a function, a coroutine function or a runnable, called on what the
        previous step returned."""
        self._bound.append(node)
        return self

    def write_to(self, *channels: str | ChannelWriteEntry, **kwargs: Any) -> Self:
        """Write the result to ``channels``; ``name=value`` writes ``value`` (a callable:
        its result on the node's result) to ``name``."""
        self._writes.extend(ChannelWriteEntry(c) if isinstance(c, str) else c for c in channels)
        self._writes.extend(
            ChannelWriteEntry(k, mapper=v) if callable(v) else ChannelWriteEntry(k, value=v)
            for k, v in kwargs.items()
        )
        return self

    def meta(self, *tags: str, **metadata: Any) -> Self:
        """Add tags and metadata to the node."""
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> Self:
        """Retry the node's failures by these policies (the first that matches)."""
        self._retry_policy.extend(policies)
        return self

    def add_cache_policy(self, policy: CachePolicy[Any]) -> Self:
        """Cache the node's writes by its input."""
        self._cache_policy = policy
        return self

    def set_timeout(self, timeout: float | timedelta | TimeoutPolicy | None) -> Self:
        """A per-attempt timeout (a :class:`TimeoutPolicy`; a number or timedelta is a
        ``run_timeout``), enforced as a ``StateGraph`` node's (``graph/timeouts.py``); a node
        with sync steps is refused when the graph is built, as in LangGraph."""
        self._timeout = TimeoutPolicy.coerce(timeout)
        return self

    def build(self) -> PregelNode:
        """The node."""
        return PregelNode(
            channels=self._channels if isinstance(self._channels, str) else list(self._channels),
            triggers=list(self._triggers),
            bound=list(self._bound),
            writers=list(self._writes),
            tags=list(self._tags),
            metadata=dict(self._metadata),
            retry_policy=list(self._retry_policy),
            cache_policy=self._cache_policy,
            timeout=self._timeout,
        )


def _step_style(step: Callable[..., Any]) -> CallStyle:
    """How to call one step: a runnable (its class has ``ainvoke``) through it, any other
    callable object through its ``__call__`` (a mock answers every attribute)."""
    if inspect.isroutine(step) or callable(getattr(type(step), "ainvoke", None)):
        return call_style(step)
    return call_style(getattr(step, "__call__", step))  # noqa: B004


SYNC_TIMEOUT = (
    "Node timeouts are only supported for async nodes because sync Python execution cannot "
    "be safely cancelled in-process."
)
"""The start of LangGraph's error for a timeout declared on a node that runs sync code."""


def _natively_async(step: Any) -> bool:
    """Whether ``step`` runs without sync code a timeout could not cancel, as LangGraph
    judges it: a coroutine function; a runnable binding, sequence or parallel whose parts
    all are; a ``RunnableLambda`` with an async function; another runnable that defines its
    own ``ainvoke``."""
    if inspect.isroutine(step):
        return inspect.iscoroutinefunction(step)
    if not callable(getattr(type(step), "ainvoke", None)):  # a callable object
        return inspect.iscoroutinefunction(getattr(step, "__call__", None))  # noqa: B004
    while type(step).__name__.startswith("RunnableBinding") and hasattr(step, "bound"):
        step = step.bound
    parts = getattr(step, "steps__", None)  # RunnableParallel
    if isinstance(parts, Mapping):
        return all(_natively_async(p) for p in parts.values())
    if type(step).__name__ == "RunnableSequence":
        return all(_natively_async(p) for p in step.steps)
    if type(step).__name__ == "RunnableLambda":
        return bool(getattr(step, "afunc", None))
    try:
        from langchain_core.runnables import Runnable
    except ImportError:  # not a LangChain runnable: its ainvoke is its own
        return True
    return getattr(type(step), "ainvoke", None) is not Runnable.ainvoke


class _Steps:
    """A node's steps run one after the other, each on the previous one's result."""

    def __init__(self, steps: Sequence[Callable[..., Any]], mapper: Any = None) -> None:
        self.steps = list(steps)
        self.mapper = mapper
        self.styles = [_step_style(s) for s in steps]

    async def __call__(self, value: Any) -> Any:
        context = current_call()
        if self.mapper is not None:
            value = self.mapper(value)
        for style in self.styles:
            assert context is not None
            value = await call(style, value, context, inline=False)
        return value


class _ChannelsSchema(StateSchema):
    """The "state" of a :class:`Pregel`: its channels (``keys`` names them, in order);
    ``reads`` narrows it to the channels one node receives."""

    def __init__(
        self,
        channels: Mapping[str, Channel],
        reads: Sequence[str] | None = None,
        shown: str | Sequence[str] = (),
    ) -> None:
        self.shown_channels = shown
        """What a snapshot's ``values`` show: the stream channels (one: its value)."""
        names = list(channels) if reads is None else [n for n in reads if n in channels]
        make: Any = TypedDict  # its functional form, with the channel names as keys
        self.schema = make("PregelChannels", dict.fromkeys(names, Any))
        self.kind = "typeddict"
        self.managed = {}
        self._keys = [_Key(n, Any, None, channels[n]) for n in names]
        self.own_keys = tuple(names)
        self._own_set = frozenset(names)
        self.keys = tuple(names)
        self.key_set = frozenset(names)

    def shown(self, values: Mapping[str, Any]) -> Any:
        return _select(values, self.shown_channels)

    def reducers(self) -> dict[str, Callable[[Any, Any], Any]]:
        """The channels that fold their writes with an operator, with it."""
        return {
            k.name: k.channel.operator
            for k in self._keys
            if isinstance(k.channel, BinaryOperatorAggregate)
        }

    def make_channels(self) -> dict[str, Channel]:
        channels: dict[str, Channel] = {}
        for key in self._keys:
            assert key.channel is not None
            channel = key.channel.copy()
            channel.key = key.name
            channels[key.name] = channel
        return channels

    def updates_from(
        self,
        value: Any,
        *,
        where: str,
        on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
    ) -> dict[str, Any]:
        """``{channel: value}`` writes (an update of a Pregel names its channels)."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise InvalidUpdateError(
                f"{where} gave {type(value).__name__} {value!r:.80}; a Pregel's update is a "
                f"dict of its channels ({', '.join(self.keys)})"
            )
        unknown = [k for k in value if k not in self.key_set]
        if unknown:
            raise InvalidUpdateError(
                f"{where} wrote channel(s) {unknown!r}, which this Pregel does not have "
                f"(its channels: {', '.join(self.keys)})"
            )
        return dict(value)


@dataclass
class _Builder:
    """What the compiled graph reads from its builder."""

    nodes: dict[str, NodeSpec]
    input_schema: StateSchema
    output_schema: StateSchema
    context_schema: Any = None
    joins: tuple[()] = ()
    branches: Mapping[str, Any] = field(default_factory=dict)
    _edge_order: list[tuple[str, str]] = field(default_factory=list)


def _names(channels: str | Sequence[str]) -> list[str]:
    return [channels] if isinstance(channels, str) else list(channels)


class Pregel(CompiledStateGraph[Any, Any, Any, Any]):
    """A graph made of channels and nodes, with LangGraph's ``Pregel`` constructor and the
    API of a compiled graph (``invoke``, ``stream``, ``get_state``, ``update_state``…).

    ``input_channels``: where the run input goes (one name: the input is its value; several:
    the input is a dict of them). ``output_channels``: what ``invoke`` returns (one name: its
    value; several: a dict of those holding a value); ``stream_channels``
    (default: every channel) what ``values`` chunks and ``get_state().values`` show.
    """

    def __init__(
        self,
        *,
        nodes: Mapping[str, PregelNode | NodeBuilder],
        channels: Mapping[str, Channel] | None,
        input_channels: str | Sequence[str],
        output_channels: str | Sequence[str],
        auto_validate: bool = True,
        stream_mode: str = "values",
        stream_eager: bool = False,
        stream_channels: str | Sequence[str] | None = None,
        interrupt_after_nodes: str | Sequence[str] = (),
        interrupt_before_nodes: str | Sequence[str] = (),
        step_timeout: float | None = None,
        debug: bool | None = None,
        checkpointer: BaseCheckpointSaver | bool | None = None,
        store: Any = None,
        cache: Any = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] = (),
        cache_policy: CachePolicy[Any] | None = None,
        context_schema: Any = None,
        config: RunnableConfig | None = None,
        name: str = "LangGraph",
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - {"config_type", "trigger_to_nodes"})
        if unknown:
            raise TypeError(f"Pregel() got unexpected keyword argument(s) {unknown}")
        if "config_type" in kwargs:
            warn_renamed("config_type", "context_schema", LangGraphDeprecatedSinceV10)
            context_schema = context_schema or kwargs["config_type"]
        built = {k: v.build() if isinstance(v, NodeBuilder) else v for k, v in nodes.items()}
        own = dict(channels or {})
        if TASKS in own and not isinstance(own[TASKS], SendTopic):
            raise ValueError(f"Channel '{TASKS}' is reserved and cannot be used in the graph.")
        own.pop(TASKS, None)
        self._given = own
        self.pregel_nodes = built
        """The :class:`PregelNode` of each node."""
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.stream_channels = stream_channels
        self.stream_mode = stream_mode
        self.stream_eager = stream_eager
        self.step_timeout = step_timeout
        self.debug = bool(debug)
        self.retry_policy: tuple[RetryPolicy, ...] = (
            (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)
        )
        self.cache_policy = cache_policy
        if auto_validate:
            self._validate()
        schema = _ChannelsSchema(own, shown=self.stream_channels_asis)
        specs = {name: self._spec(name, node) for name, node in built.items()}
        builder = _Builder(specs, schema, schema, context_schema)
        super().__init__(
            builder=builder,  # type: ignore[arg-type]  # _Builder stands in for a StateGraph, with every attribute the compiled graph reads
            schema=schema,
            nodes=specs,
            checkpointer=None if isinstance(checkpointer, bool) else checkpointer,
            subgraph_checkpointer=checkpointer if isinstance(checkpointer, bool) else None,
            interrupt_before=tuple(_names(interrupt_before_nodes)),
            interrupt_after=tuple(_names(interrupt_after_nodes)),
            name=name,
            cache=cache,
            store=store,
            config=config,
        )

    def _spec(self, name: str, node: PregelNode) -> NodeSpec:
        if len(node.bound) == 1 and node.mapper is None:
            fn: Callable[..., Any] = node.bound[0]
            style = _step_style(fn)
        else:
            fn = _Steps(node.bound, node.mapper) if node.bound else _identity
            style = call_style(fn)
        reads = node.channels
        return NodeSpec(
            name,
            fn,
            style=style,
            retry=tuple(node.retry_policy) or self.retry_policy,
            triggers=tuple(node.triggers),
            metadata={**node.metadata, **({"tags": node.tags} if node.tags else {})},
            cache_policy=node.cache_policy or self.cache_policy,
            input_channel=reads if isinstance(reads, str) else None,
            input_schema=None if isinstance(reads, str) else _ChannelsSchema(self.channels, reads),
            writer=node.writes_of,
            timeout=node.timeout,
        )

    def _validate(self) -> None:
        """LangGraph's checks of a Pregel's nodes and channels, with its errors."""
        known = repr(sorted(self.channels))[:100]
        subscribed: set[str] = set()
        for name, node in self.pregel_nodes.items():
            if name in (START, END, TASKS):
                raise ValueError(f"Node name '{name}' is reserved")
            if not isinstance(node, PregelNode):
                raise TypeError(
                    f"Invalid node type {type(node)}, expected PregelNode or NodeBuilder"
                )
            subscribed.update(node.triggers)
            if node.timeout is not None and not all(_natively_async(b) for b in node.bound):
                raise ValueError(f"{SYNC_TIMEOUT} Node {name!r} is sync.")
            for chan in _names(node.channels):
                if chan not in self.channels:
                    raise ValueError(
                        f"Node {name} reads channel '{chan}' not in known channels: '{known}'"
                    )
        for chan in subscribed:
            if chan not in self.channels:
                raise ValueError(f"Subscribed channel '{chan}' not in known channels: '{known}'")
        for chan in _names(self.input_channels):
            if chan not in self.channels:
                raise ValueError(f"Input channel '{chan}' not in known channels: '{known}'")
        if isinstance(self.input_channels, str):
            if self.input_channels not in subscribed:
                raise ValueError(
                    f"Input channel {self.input_channels} is not subscribed to by any node"
                )
        elif not any(c in subscribed for c in self.input_channels):
            raise ValueError(
                f"None of the input channels {self.input_channels} are subscribed to by any node"
            )
        for chan in _names(self.output_channels) + _names(self.stream_channels or []):
            if chan not in self.channels:
                raise ValueError(f"Output channel '{chan}' not in known channels: '{known}'")

    @property
    def checkpointer(self) -> BaseCheckpointSaver | None:
        """The saver; setting True or False instead says how the graph saves when it runs
        inside another graph's node (its parent's saver, or none), as in LangGraph."""
        return self._checkpointer

    @checkpointer.setter
    def checkpointer(self, value: BaseCheckpointSaver | bool | None) -> None:
        if isinstance(value, bool):
            self._checkpointer, self.subgraph_checkpointer = None, value
        else:
            self._checkpointer = adapt_saver(value)

    @property
    def channels(self) -> dict[str, Any]:
        """The channels given, by name (LangGraph's ``Pregel.channels``)."""
        return self._given

    @property
    def stream_channels_asis(self) -> str | Sequence[str]:
        """What ``values`` chunks and ``get_state().values`` show: the stream channels, by
        default every channel (LangGraph's)."""
        return self.stream_channels or list(self.channels)

    # -- channels ----------------------------------------------------------------------------

    def _channel_specs(self) -> dict[str, Any]:
        specs: dict[str, Any] = self.schema.make_channels()
        specs[TASKS] = SendTopic(TASKS)
        return specs

    def input_writes(self, input: Any) -> list[tuple[str, Any]]:
        """The run input written into the input channels (one channel: the input is its
        value; several: a dict of them, its other keys dropped)."""
        if isinstance(self.input_channels, str):
            return [(self.input_channels, input)]
        if not isinstance(input, Mapping):
            raise InvalidUpdateError(
                f"The input of a Pregel with input channels {list(self.input_channels)} must "
                f"be a dict of them, not {type(input).__name__} {input!r:.80}"
            )
        return [(k, input[k]) for k in self.input_channels if k in input]

    def input_updates(
        self,
        input: Any,
        on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
    ) -> dict[str, Any]:
        """The input's writes, as a dict (checked as the run begins)."""
        return dict(self.input_writes(input))

    def output_values(self, values: Mapping[str, Any]) -> Any:
        """What ``invoke`` returns: the output channels."""
        return _select(values, self.output_channels)

    # -- running -----------------------------------------------------------------------------

    def _output_keys(self, output_keys: OutputKeys) -> OutputKeys:
        if output_keys is None:
            return self.output_channels
        return super()._output_keys(output_keys)

    async def ainvoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        stream_mode: str | Sequence[str] = "values",
        output_keys: OutputKeys = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> Any:
        """Run to the end (or an interrupt); return the output channels (``output_keys=``
        others) as the run last wrote them: None when it wrote none of them, as in LangGraph
        (not what an earlier run of the thread left there). Pending interrupts are added
        under ``"__interrupt__"``."""
        kwargs.pop("debug", None)
        if stream_mode != "values" or version != "v1":
            return await super().ainvoke(
                input,
                config,
                stream_mode=stream_mode,
                output_keys=output_keys,
                version=version,
                **kwargs,
            )
        keys = self.output_channels if output_keys is None else output_keys
        latest: Any = None
        interrupts: list[Any] = []
        stream = CompiledStateGraph.astream(
            self, input, config, stream_mode=["values", "updates"], output_keys=keys, **kwargs
        )
        async for mode, chunk in stream:
            if mode == "values":
                latest = chunk
            elif isinstance(chunk, dict) and chunk.get(INTERRUPT):
                interrupts.extend(chunk[INTERRUPT])
        if interrupts:
            return (
                {**latest, INTERRUPT: interrupts}
                if isinstance(latest, dict)
                else {INTERRUPT: interrupts}
            )
        return latest

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Stream the run (default mode: the ``stream_mode`` given to the constructor;
        ``values`` chunks show the stream channels)."""
        kwargs.pop("debug", None)
        if kwargs.get("stream_mode") is None:
            kwargs["stream_mode"] = self.stream_mode
        if kwargs.get("output_keys") is None:
            kwargs["output_keys"] = self.stream_channels_asis
        async for chunk in super().astream(input, config, **kwargs):
            yield chunk

    # -- schemas ------------------------------------------------------------------------------

    def _io_schema(self, channels: str | Sequence[str], suffix: str, attr: str) -> Any:
        """A pydantic model of ``channels``: one channel's type as a root model, else a model
        with a field (default None) per channel, named like LangGraph's (``LangGraphInput``)."""
        import pydantic  # only here: the package imports without pydantic

        name = f"{self.name}{suffix}"
        if isinstance(channels, str):
            generic: Any = pydantic.RootModel
            root = generic[getattr(self.channels[channels], attr, Any)]
            return type(name, (root,), {"__module__": __name__})
        fields: dict[str, Any] = {
            k: (getattr(self.channels[k], attr, Any), None) for k in channels if k in self.channels
        }
        return pydantic.create_model(name, **fields)

    def get_input_schema(self, config: RunnableConfig | None = None) -> Any:
        """The pydantic model of the input: the input channel's update type, or a field per
        input channel."""
        return self._io_schema(self.input_channels, "Input", "UpdateType")

    def get_output_schema(self, config: RunnableConfig | None = None) -> Any:
        """The pydantic model of the output: the output channel's value type, or a field per
        output channel."""
        return self._io_schema(self.output_channels, "Output", "ValueType")

    @property
    def input_schema(self) -> Any:
        """:meth:`get_input_schema` (LangGraph's ``input_schema``)."""
        return self.get_input_schema()

    @property
    def output_schema(self) -> Any:
        """:meth:`get_output_schema` (LangGraph's ``output_schema``)."""
        return self.get_output_schema()

    def get_input_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The JSON schema of :meth:`get_input_schema`."""
        schema: dict[str, Any] = self.get_input_schema(config).model_json_schema()
        return schema

    def get_output_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The JSON schema of :meth:`get_output_schema`."""
        schema: dict[str, Any] = self.get_output_schema(config).model_json_schema()
        return schema

    def map(self) -> _Each:
        """A runnable that runs this graph on each item of a list input, concurrently, and
        returns the list of results (LangChain's ``Runnable.map``)."""
        return _Each(self)

    def get_graph(self, config: RunnableConfig | None = None, *, xray: int | bool = False) -> Any:
        """Nodes linked through the channels: an edge from each writer of a channel to each
        node it triggers; the input from ``__start__``, the output to ``__end__``. As for a
        compiled graph (``graph/drawing.py``): langchain_core's ``Graph`` when LangChain is
        installed, else a ``DrawableGraph``; ``config`` and ``xray`` change nothing here."""
        drawn = self._channel_drawing()
        return as_langchain_graph(drawn)

    def _channel_drawing(self) -> DrawableGraph:
        drawn: dict[str, Node] = {START: Node(START, START)}
        for name, spec in self.nodes.items():
            drawn[name] = Node(name, name, spec.fn, spec.metadata or None)
        drawn[END] = Node(END, END)
        edges: list[Edge] = []
        for name, node in self.pregel_nodes.items():
            for chan in node.triggers:
                if chan in _names(self.input_channels):
                    edges.append(Edge(START, name))
        for name, node in self.pregel_nodes.items():
            written = {w.channel for w in node.writers if isinstance(w, ChannelWriteEntry)}
            for other, reader in self.pregel_nodes.items():
                if written & set(reader.triggers):
                    edges.append(Edge(name, other))
            if written & set(_names(self.output_channels)):
                edges.append(Edge(name, END))
        return DrawableGraph(drawn, list(dict.fromkeys(edges)))

    def __repr__(self) -> str:
        return (
            f"<Pregel nodes={list(self.nodes)} channels={list(self.channels)} "
            f"checkpointer={type(self.checkpointer).__name__}>"
        )


class _Each:
    """``Pregel.map()``: the graph run on each item of a list (``invoke`` / ``ainvoke``)."""

    def __init__(self, graph: Pregel) -> None:
        self.graph = graph

    async def ainvoke(self, inputs: Sequence[Any], config: RunnableConfig | None = None) -> Any:
        """The graph's result for each of ``inputs``, in order."""
        runs = [self.graph.ainvoke(item, config) for item in inputs]
        return list(await asyncio.gather(*runs))

    def invoke(self, inputs: Sequence[Any], config: RunnableConfig | None = None) -> Any:
        """Sync twin of :meth:`ainvoke`."""
        return run_sync(self.ainvoke(inputs, config))


def _select(values: Mapping[str, Any], channels: str | Sequence[str]) -> Any:
    if isinstance(channels, str):
        return values.get(channels)
    return {k: values[k] for k in channels if k in values}
