"""CompiledStateGraph: run a graph and read or change its threads.

    graph = builder.compile(checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "demo-1"}}
    await graph.ainvoke({"value": "", "log": []}, cfg)
    snap = await graph.aget_state(cfg)                 # values, next, tasks, interrupts
    async for snap in graph.aget_state_history(cfg):   # newest first, every branch
        ...

Every async method has a sync twin without the ``a``; the sync twins also work inside a
running event loop (a Jupyter cell).
"""

from __future__ import annotations

import asyncio
import copy
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, cast

from typing_extensions import Self

from durable_debug._sync import iterate_sync, run_sync
from durable_debug.checkpoint.base import (
    BaseCheckpointSaver,
    RunnableConfig,
    check_address,
    checkpoint_config,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
)
from durable_debug.checkpoint.foreign import adapt_saver
from durable_debug.checkpoint.lease import thread_lease
from durable_debug.checkpoint.names import INTERRUPT
from durable_debug.graph.cache import node_namespace
from durable_debug.graph.calls import RunControl, coerce_context, merge_configs
from durable_debug.graph.channel_view import public_channels
from durable_debug.graph.channels import (
    MISSING,
    Channel,
    EphemeralValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
)
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10, warn_renamed
from durable_debug.graph.drawing import get_graph
from durable_debug.graph.events import EventFilter, GraphEvents, RunEvents
from durable_debug.graph.findings import Finding
from durable_debug.graph.inputs import valid_checkpointer
from durable_debug.graph.jsonschema import context_jsonschema, schema_title, state_jsonschema
from durable_debug.graph.log_stream import astream_events_v1, astream_log
from durable_debug.graph.loop import DURABILITY, Durability, RunLoop, check_durability
from durable_debug.graph.nodes import TASKS, NodeSpec, branch_channel, join_channel
from durable_debug.graph.run_runtime import run_runtime
from durable_debug.graph.runnable import as_runnable, pipe
from durable_debug.graph.schema import ROOT, StateSchema
from durable_debug.graph.snapshot import snapshot_from_tuple, task_result
from durable_debug.graph.stream_parts import (
    STREAM_VERSIONS,
    GraphOutput,
    Mapper,
    schema_mapper,
    stream_part,
)
from durable_debug.graph.streams import (
    EVENTS_MODE,
    OutputKeys,
    print_chunk,
    print_modes,
    select_output,
    stream_modes,
)
from durable_debug.graph.subgraph import (
    NS_END,
    NS_SEP,
    at_top_level,
    find_subgraph,
    from_parent_checkpoint,
    graph_at,
    nesting_for,
    recast_namespace,
    remote_graph_of,
)
from durable_debug.graph.types import (
    END,
    START,
    ContextT,
    GraphDrained,
    InputT,
    InvalidUpdateError,
    OutputT,
    StateSnapshot,
    StateT,
)
from durable_debug.graph.update import abulk_update_state, aupdate_state
from durable_debug.graph.v3_events import stream_events_v3, with_v3
from durable_debug.graph.v3_run import GraphRunStream

if TYPE_CHECKING:
    from durable_debug.graph.state import StateGraph

__all__ = ["CompiledStateGraph"]

StreamMode = str


def _checkpoint_during(durability: Durability | None, kwargs: dict[str, Any]) -> Any:
    """``durability``, or what LangGraph's deprecated ``checkpoint_during=`` in ``kwargs``
    means (True: ``"async"``, False: ``"exit"``), with LangGraph's warning."""
    if "checkpoint_during" not in kwargs:
        return durability
    warn_renamed("checkpoint_during", "durability", LangGraphDeprecatedSinceV10)
    during = kwargs.pop("checkpoint_during")
    if durability is not None or during is None:
        return durability
    return "async" if during else "exit"


class CompiledStateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """A compiled :class:`StateGraph`, ready to run threads (generic like it, for type
    annotations)."""

    stream_transformers: tuple[Any, ...] = ()
    """``compile(transformers=...)``: transformer factories every v3 event stream of
    the graph registers after the built-in ones (``graph/v3_events.py``)."""

    streams_while_running = False
    """Whether a lone task's run reports events while it runs (an ``@entrypoint``'s task
    calls stream as each one finishes); else only what its output mode needs does."""

    returns_end = False
    """Whether a node's debug result is ``{"__end__": value}`` for a returned ``value`` (an
    ``@entrypoint``'s): ``astream_events`` then shows the value, as LangGraph does."""

    sync_invoke_hops_threads = True
    """Its ``invoke`` runs ``ainvoke`` on the runner loop's thread (``_sync.run_sync``): as a
    node, it is awaited through ``ainvoke`` even in a sync run (``calls.call_style``)."""

    def __init__(
        self,
        *,
        builder: StateGraph[Any, Any, Any, Any],
        schema: StateSchema,
        nodes: dict[str, NodeSpec],
        checkpointer: BaseCheckpointSaver | None,
        interrupt_before: tuple[str, ...],
        interrupt_after: tuple[str, ...],
        name: str,
        cache: Any = None,
        store: Any = None,
        config: RunnableConfig | None = None,
        lease_wait: float | None = None,
        subgraph_checkpointer: bool | None = None,
        strict: bool = False,
    ) -> None:
        self.builder = builder
        self.strict = strict
        """``compile(strict=True)``: findings raise their errors (``graph/findings.py``)."""
        self.store = store
        """The store given to ``compile(store=...)`` (nodes get it as ``store``)."""
        self.config: RunnableConfig | None = config
        """Config bound by :meth:`with_config`, merged under each call's config."""
        self.schema = schema
        self.nodes = nodes
        # LangGraph's savers: checkpoint/foreign.py; anything else but a saver: TypeError
        self.checkpointer = adapt_saver(valid_checkpointer(checkpointer))
        self.subgraph_checkpointer = subgraph_checkpointer
        """``compile(checkpointer=True/False)``: how the graph saves when run as a subgraph."""
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.name = name
        self.cache = cache
        """The cache given to ``compile(cache=...)`` for nodes with a ``cache_policy``."""
        self.lease_wait = lease_wait
        """Default seconds a run waits for its thread when another run holds it (``wait=`` of
        ``compile``); None: refuse at once with ThreadBusyError."""
        self.node_order: list[str] = list(nodes)
        """START, then the nodes in the order they were added (how tasks are listed)."""
        self._channel_factories = self._channel_specs()
        self._channel_copies = tuple(
            (name, proto, type(proto) if type(proto).copy is Channel.copy else None)
            for name, proto in self._channel_factories.items()
        )
        """``(name, prototype, its class when it copies as Channel.copy)`` of each channel,
        for :meth:`new_channels`."""
        self.pull_id_tails: dict[str, str] = {}
        """Node → :func:`~durable_debug.graph.ids.pull_id_tail` of its task ids, filled as
        ``algo.prepare_tasks`` schedules them (a node's triggers do not change)."""
        self.plain_available: frozenset[str] = frozenset(
            name
            for name, channel in self._channel_factories.items()
            if type(channel).is_available is Channel.is_available
        )
        """Channels available exactly when they hold a value (``Channel.is_available``): the
        engine reads ``value`` instead of calling ``is_available()`` for those."""
        self._plain_state = self.plain_available.issuperset(self.schema.keys)
        """Whether every state key is one of :attr:`plain_available` (``read_state``)."""
        self.state_is_new = type(self).read_state is CompiledStateGraph.read_state
        """Whether :meth:`read_state` returns a new dict at each call, which nobody else holds
        (``prepare_tasks`` hands it to a task as its input)."""
        self.plain_checkpoint: frozenset[str] = frozenset(
            name
            for name, channel in self._channel_factories.items()
            if type(channel).checkpoint is Channel.checkpoint
        )
        """Channels a checkpoint stores the value of as it is (``Channel.checkpoint``)."""
        self.ephemeral_channels: tuple[str, ...] = tuple(
            name for name, channel in self.new_channels().items() if channel.ephemeral
        )
        self.ephemeral_set = frozenset(self.ephemeral_channels)
        """:attr:`ephemeral_channels` as a set."""
        self.consuming: frozenset[str] = frozenset(
            name
            for name, channel in self._channel_factories.items()
            if type(channel).consume is not Channel.consume
        )
        """Channels that a node they trigger may change by running (``consume()``)."""
        self.deferred_channels: tuple[str, ...] = tuple(
            name
            for name, channel in self._channel_factories.items()
            if isinstance(channel, (LastValueAfterFinish, NamedBarrierValueAfterFinish))
        )
        """Triggers of deferred nodes, released when nothing else would run."""
        self.untracked_channels: frozenset[str] = frozenset(
            name
            for name, channel in self._channel_factories.items()
            if getattr(channel, "untracked", False)
        )
        """Channels whose writes are never saved (``UntrackedValue``)."""
        self._subgraphs: dict[str, CompiledStateGraph[Any, Any, Any, Any] | None] = {}
        for name, spec in nodes.items():
            found = find_subgraph(spec.fn, CompiledStateGraph) if spec.fn is not None else None
            self._subgraphs[name] = found
            spec.subgraphs = [found] if self.subgraph_of(name) is not None else []
        self._triggered_by: dict[str, tuple[str, ...]] = {}
        for node in self.node_order:
            for channel in nodes[node].triggers:
                self._triggered_by[channel] = (*self._triggered_by.get(channel, ()), node)

    # -- channels ----------------------------------------------------------------------------

    def _channel_specs(self) -> dict[str, Any]:
        specs: dict[str, Any] = {}
        for key, channel in self.schema.make_channels().items():
            specs[key] = channel
        specs[START] = EphemeralValue(START)
        deferred = {name for name, spec in self.nodes.items() if spec.defer}
        for node in self.nodes:
            if node != START:
                trigger = branch_channel(node)
                kind = LastValueAfterFinish if node in deferred else EphemeralValue
                specs[trigger] = kind(trigger)
        for sources, target in self.builder.joins:
            if target == END:  # drawn only, as in LangGraph: the run ends anyway
                continue
            name = join_channel(sources, target)
            barrier = NamedBarrierValueAfterFinish if target in deferred else NamedBarrierValue
            specs[name] = barrier(name, sources)
        specs[TASKS] = Topic(TASKS)
        return specs

    @property
    def channels(self) -> dict[str, Any]:
        """Every channel by name, as LangGraph's public channel classes (its
        ``Pregel.channels``; see ``graph/channel_view.py``)."""
        return public_channels(self._channel_factories)

    def new_channels(self) -> dict[str, Channel]:
        """A fresh set of empty channels (reducers start from their empty value)."""
        channels: dict[str, Channel] = {}
        for name, proto, kind in self._channel_copies:
            if kind is None:
                channels[name] = proto.copy()
            else:  # Channel.copy, without a call per channel
                new = object.__new__(kind)
                new.key = proto.key
                new.value = proto.value
                channels[name] = new
        return channels

    def read_channels(self, values: Mapping[str, Any]) -> dict[str, Channel]:
        """Channels holding ``values``, for reading only (building a snapshot).

        A channel without a value is the graph's own empty channel, shared by every caller,
        so none of these channels may be updated: copy one first, as ``preview_values`` does.
        """
        channels = dict(self._channel_factories)
        for name, value in values.items():
            empty = channels.get(name)
            if empty is not None:
                channel = empty.copy()
                channel.restore(value)
                channels[name] = channel
        return channels

    def read_state(self, channels: Mapping[str, Channel]) -> dict[str, Any]:
        """The state keys that hold a value, as a dict."""
        values = {}
        if self._plain_state:  # (no call per key)
            for key in self.schema.keys:
                value = channels[key].value
                if value is not MISSING:
                    values[key] = value
            return values
        for key in self.schema.keys:
            channel = channels[key]
            if channel.is_available():
                values[key] = channel.value
        return values

    def input_writes(self, input: Any) -> list[tuple[str, Any]]:
        """What a run's input writes in its ``input`` checkpoint: the START channel, which
        the START task turns into state writes (``lowlevel.Pregel`` writes its channels)."""
        return [(START, input)]

    def input_updates(
        self,
        input: Any,
        on_unknown: Callable[[str, str, InvalidUpdateError], None] | None = None,
    ) -> dict[str, Any]:
        """The state writes of a run input: the keys of the input schema (a key of another
        schema of the graph is dropped, as LangGraph does; a key of none is dropped too, and
        reported to ``on_unknown`` — without it, an error)."""
        updates = self.schema.updates_from(input, where="The graph input", on_unknown=on_unknown)
        accepted = self.builder.input_schema.key_set
        if accepted.issuperset(updates):  # (every key accepted: a copy, without a loop)
            return dict(updates)
        return {k: v for k, v in updates.items() if k in accepted}

    def output_values(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """What ``invoke`` returns: the keys of the output schema."""
        shown = self.builder.output_schema.key_set
        if shown.issuperset(values):  # (every key shown: a copy, without a loop)
            return dict(values)
        return {k: v for k, v in values.items() if k in shown}

    def result_of(self, writes: Sequence[tuple[str, Any]]) -> dict[str, Any] | None:
        """A finished task's writes of state keys (its ``debug`` result), None if none."""
        return task_result(writes, self.schema.key_set.__contains__) or None

    def update_of(self, writes: Sequence[tuple[str, Any]]) -> tuple[Any] | None:
        """What a finished task's ``updates`` chunk shows when it is not its state writes
        (``(value,)``: an ``@entrypoint``'s return value); None for a StateGraph."""
        return None

    def nodes_triggered_by(self, channels: set[str]) -> set[str]:
        """Nodes that one of ``channels`` can trigger."""
        nodes: set[str] = set()
        for channel in channels:
            nodes.update(self._triggered_by.get(channel, ()))
        return nodes

    # -- running -----------------------------------------------------------------------------

    async def ainvoke(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] = "values",
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        durability: Durability | None = None,
        wait: float | None = None,
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: OutputKeys = None,
        version: str = "v1",
        control: RunControl | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the thread to its end (or to an interrupt) and return the final state.

        ``input`` is a state dict to start (or restart) the thread, ``None`` to resume it, or a
        :class:`Command` (``resume=`` answers interrupts). When the run stops on interrupts,
        the result has ``"__interrupt__"``: the list of pending :class:`Interrupt`. With a
        ``stream_mode`` other than ``"values"``, returns the list of chunks that mode
        streams, as LangGraph does. ``context`` is what nodes see as ``runtime.context``.
        ``output_keys`` (a state key or a list of them) narrows the result: one key gives its
        value. ``print_mode`` modes are printed to stdout as the run goes (for debugging).
        ``control`` (a :class:`RunControl`) lets another thread stop the run cooperatively
        before its next step (:class:`GraphDrained`).
        ``version="v2"`` returns a :class:`GraphOutput` (``value``, ``interrupts``) instead,
        or with another ``stream_mode`` the list of v2 parts (``graph/stream_parts.py``).

        The run holds its thread (one writer per thread): if another run holds it, this one
        raises :class:`ThreadBusyError` before any node runs, or first waits up to ``wait``
        seconds (default: the ``wait=`` given to ``compile``) for it to be released.
        """
        if kwargs:  # (only LangGraph's deprecated checkpoint_during= goes there)
            durability = _checkpoint_during(durability, kwargs)
        if stream_mode != "values":
            return [
                chunk
                async for chunk in self.astream(
                    input,
                    config,
                    context=context,
                    stream_mode=stream_mode,
                    print_mode=print_mode,
                    output_keys=output_keys,
                    interrupt_before=interrupt_before,
                    interrupt_after=interrupt_after,
                    durability=durability,
                    wait=wait,
                    version=version,
                    control=control,
                )
            ]
        # (the default, printing nothing, without the call)
        printed, misspelt = (_NO_MODES, []) if print_mode == () else print_modes(print_mode)
        output_keys = self._output_keys(output_keys)
        loop = self._run_loop(
            input,
            config,
            context,
            printed,
            interrupt_before,
            interrupt_after,
            durability,
            output_keys,
            wait=wait,
            unknown_print=misspelt,
            version=version,
            control=control,
        )
        async for mode, chunk in loop.events():
            print_chunk(mode, chunk)
        _raise_if_drained(loop)
        if output_keys is not None:  # (a one-value state's key among them)
            output = select_output(loop.values, output_keys)
        else:
            output = loop.graph.output_values(loop.values)
        if version == "v2":
            mapper = self._output_mapper()
            if mapper is not None and isinstance(output, dict):
                output = mapper(output)
            return GraphOutput(output, tuple(loop.interrupts))
        if loop.interrupts:  # a result that is not a dict is left out, as LangGraph
            output = {**(output if isinstance(output, dict) else {})}
            output[INTERRUPT] = list(loop.interrupts)
        return output

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Sync twin of :meth:`ainvoke`."""
        return run_sync(self.ainvoke(input, config, **kwargs))

    def _run_loop(
        self,
        input: Any,
        config: RunnableConfig | None,
        context: Any,
        modes: frozenset[str],
        interrupt_before: Sequence[str] | None,
        interrupt_after: Sequence[str] | None,
        durability: Durability | None,
        output_keys: OutputKeys = None,
        *,
        subgraphs: bool = False,
        wait: float | None = None,
        unknown_print: Sequence[str] = (),
        version: str = "v1",
        control: RunControl | None = None,
    ) -> RunLoop:
        """The run of ``input``. An unknown ``durability`` runs as the default (``"async"``)
        and a ``print_mode`` that names no stream mode prints nothing, as in LangGraph, each
        with a finding (``strict=True``: the ValueError naming it, before anything runs); so
        does a ``version`` other than ``"v1"`` / ``"v2"`` (LangGraph streams it as ``"v1"``)."""
        odd_durability = durability is not None and durability not in DURABILITY
        nested = nesting_for(self, config)
        nesting = None
        graph, saver = self, None
        if nested is not None:
            config, nesting = nested
        elif config is not None and config_checkpoint_ns(config):
            if "checkpoint_map" in (config.get("configurable") or {}):
                config = from_parent_checkpoint(config)  # a subgraph's snapshot config
            else:
                # A namespace without the map (written by hand, or by the widget's rerun of
                # a fork made inside a subgraph): that subgraph runs alone, through this
                # graph's saver; a namespace no node explains is LangGraph's top-level run.
                graph = self._reader_at(config_checkpoint_ns(config))
                if graph is self:
                    config = at_top_level(config)
                else:
                    saver = self.checkpointer
        # (the calls left out for what they return as it is: None)
        before = None if interrupt_before is None else _optional_tuple(interrupt_before)
        after = None if interrupt_after is None else _optional_tuple(interrupt_after)
        if context is not None:
            context = coerce_context(self.builder.context_schema, context)
        loop = RunLoop(
            graph,
            input,
            # (RunLoop copies the config it is given: no copy here when there is nothing to merge)
            merge_configs(self.config, config) if self.config else config,
            nesting=nesting,
            saver=saver,
            subgraphs=subgraphs,
            modes=modes,
            interrupt_before=before,
            interrupt_after=after,
            context=context,
            wait=wait,
            output_keys=output_keys,
            durability=None if odd_durability else durability,
        )
        loop.runtime = run_runtime(loop.runtime, loop.config, control)
        if odd_durability:
            try:
                check_durability(durability)
            except ValueError as error:
                loop.findings.report(
                    Finding(
                        "unknown-durability",
                        f"durability {durability!r} is not one of "
                        f"{', '.join(map(repr, DURABILITY))}: the run saved as with the "
                        "default, 'async', as LangGraph does.",
                        key=str(durability),
                    ),
                    error,
                )
        if version not in STREAM_VERSIONS:
            loop.findings.report(
                Finding(
                    "unknown-stream-version",
                    f"version {version!r} is not one of "
                    f"{', '.join(map(repr, STREAM_VERSIONS))}: the run's output had the default "
                    "format, 'v1', as in LangGraph.",
                    key=str(version),
                ),
                ValueError(f"version must be 'v1' or 'v2', not {version!r}"),
            )
        for mode in unknown_print:
            try:
                stream_modes(mode)
            except ValueError as error:
                loop.findings.report(
                    Finding(
                        "unknown-print-mode",
                        f"print_mode {mode!r} names no stream mode: nothing was printed for it, "
                        "as in LangGraph.",
                        key=mode,
                    ),
                    error,
                )
        return loop

    def _output_keys(self, output_keys: OutputKeys) -> OutputKeys:
        """The ``output_keys`` a run streams and returns: as given (ValueError naming an
        entry that is not a state key), else the one value of a one-value output schema."""
        if output_keys is None:
            return ROOT if self.builder.output_schema.is_root else None
        keys = [output_keys] if isinstance(output_keys, str) else list(output_keys)
        unknown = [k for k in keys if k not in self.schema.key_set]
        if unknown:
            raise ValueError(
                f"output_keys {unknown!r} are not state keys of this graph; "
                f"its keys are {sorted(self.schema.key_set)!r}"
            )
        return output_keys

    def _output_mapper(self) -> Mapper | None:
        """What makes a ``values`` dict an instance of the output schema in v2 output (None
        unless that schema is a pydantic model or dataclass; see ``graph/stream_parts.py``)."""
        output = self.builder.output_schema
        return schema_mapper(output.schema, output.kind)

    def _state_mapper(self) -> Mapper | None:
        """The same for the state schema: the values of v2 ``checkpoints`` / ``debug`` parts."""
        return schema_mapper(self.schema.schema, self.schema.kind)

    async def astream(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        context: Any = None,
        stream_mode: StreamMode | Sequence[StreamMode] | None = None,
        interrupt_before: Sequence[str] | None = None,
        interrupt_after: Sequence[str] | None = None,
        durability: Durability | None = None,
        subgraphs: bool = False,
        wait: float | None = None,
        print_mode: StreamMode | Sequence[StreamMode] = (),
        output_keys: OutputKeys = None,
        version: str = "v1",
        control: RunControl | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Run like :meth:`ainvoke`, yielding as it goes.

        ``stream_mode`` (default ``"updates"``, as in LangGraph): ``"values"`` (the whole
        state after each step), ``"updates"`` (``{node: writes}`` per task once it is saved),
        ``"custom"`` (what nodes pass to their ``writer``), ``"messages"``, ``"tasks"``,
        ``"checkpoints"``, ``"debug"``, or a list of them — then items are ``(mode, chunk)``.
        With ``subgraphs=True`` each item is prefixed by its namespace (``()`` for this
        graph). Every chunk that reports a step comes after the step is saved.
        ``output_keys`` narrows ``values`` and ``updates`` chunks to those state keys (one key:
        its value); ``print_mode`` modes are printed to stdout, and yielded only if also in
        ``stream_mode``.
        ``version="v2"`` yields every chunk as a dict ``{"type": mode, "ns": namespace,
        "data": chunk}`` whatever the modes and ``subgraphs`` (``values`` parts add
        ``"interrupts"``; see ``graph/stream_parts.py``).
        ``wait`` as for :meth:`ainvoke`.
        """
        durability = _checkpoint_during(durability, kwargs)
        requested = "updates" if stream_mode is None else stream_mode
        single = isinstance(requested, str)
        modes = stream_modes(requested)
        # (the default, printing nothing, without the call)
        printed, misspelt = (_NO_MODES, []) if print_mode == () else print_modes(print_mode)
        output_keys = self._output_keys(output_keys)
        loop = self._run_loop(
            input,
            config,
            context,
            frozenset(modes) | printed,
            interrupt_before,
            interrupt_after,
            durability,
            output_keys,
            subgraphs=subgraphs,
            wait=wait,
            unknown_print=misspelt,
            version=version,
            control=control,
        )
        v2 = version == "v2"
        output_mapper = self._output_mapper() if v2 else None
        state_mapper = self._state_mapper() if v2 else None
        events = loop.events()
        own = loop.namespace  # a graph a node streams: chunks under the node's namespace
        try:
            async for mode, chunk in events:
                namespace = own
                if mode == "subgraph":
                    namespace, mode, chunk = chunk
                if mode in printed:
                    print_chunk(mode, chunk)
                    if mode not in modes:
                        continue
                if v2:
                    yield stream_part(namespace, mode, chunk, output_mapper, state_mapper)
                elif subgraphs:
                    yield (namespace, chunk) if single else (namespace, mode, chunk)
                else:
                    yield chunk if single else (mode, chunk)
            _raise_if_drained(loop)
        finally:
            # A caller that leaves early ends the run now (giving its thread back), not
            # whenever the garbage collector finalizes the run's generator.
            await events.aclose()

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Sync twin of :meth:`astream` (events arrive as the run produces them)."""
        agen = cast(AsyncGenerator[Any, None], self.astream(input, config, **kwargs))
        # Every step of the run, and its closing, in one context and on one loop: the run's
        # context variables (the thread's lease it holds, which a subgraph's run shares) last
        # from step to step.
        yield from iterate_sync(agen)

    def stream_events(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: str = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> GraphRunStream:
        """``version="v3"``: the run as a ``GraphRunStream`` of typed projections, pulled by
        iterating them (``graph/v3_events.py``); no other version streams synchronously."""
        if version != "v3":
            raise NotImplementedError(
                f"stream_events(version={version!r}) is not supported. Use astream_events() "
                "for v1/v2, or stream_events(version='v3')."
            )
        return stream_events_v3(self, input, config, transformers=transformers, **kwargs)

    @with_v3
    async def astream_events(
        self,
        input: Any,
        config: RunnableConfig | None = None,
        *,
        version: str = "v2",
        include_names: Sequence[str] | None = None,
        include_types: Sequence[str] | None = None,
        include_tags: Sequence[str] | None = None,
        exclude_names: Sequence[str] | None = None,
        exclude_types: Sequence[str] | None = None,
        exclude_tags: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Run like :meth:`astream`, yielding LangChain-style ``version="v2"`` events:
        ``on_chain_start`` / ``on_chain_stream`` / ``on_chain_end`` for the graph and for each
        node (metadata with ``langgraph_node`` and ``langgraph_step``), and
        ``on_chat_model_stream`` for the token chunks of chat models the nodes call.

        ``include_*`` / ``exclude_*`` keep or drop events by name, type (``"chain"``,
        ``"chat_model"``) or tag, as LangChain's filters do. Chat models, tools and runnables
        a node calls have start / end events under the node's run; conditional edges have
        none (LangGraph reports them too; see docs/engine.md). ``version="v1"`` gives
        LangChain's older events, built from the run log as :meth:`astream_log` builds it.
        """
        if version == "v1":  # LangChain's run-log events (graph/log_stream.py)
            filters = dict(include_names=include_names, include_types=include_types)
            filters |= dict(include_tags=include_tags, exclude_names=exclude_names)
            filters |= dict(exclude_types=exclude_types, exclude_tags=exclude_tags)
            async for item in astream_events_v1(self, input, config, **filters, **kwargs):
                yield item
            return
        if version != "v2":
            raise ValueError(f"astream_events supports version='v1' or 'v2', not {version!r}")
        keep = EventFilter(
            include_names, include_types, include_tags, exclude_names, exclude_types, exclude_tags
        )
        events = GraphEvents(self.name, merge_configs(self.config, config))
        events.returns_end = self.returns_end
        start = events.graph_start(input)
        if keep(start):
            yield start
        modes = ["values", "updates", "debug", EVENTS_MODE]
        chosen = kwargs.pop("stream_mode", None)
        if chosen is not None:  # the graph's on_chain_stream events carry these modes' chunks
            events.chunk_modes = chosen
            wanted = [chosen] if isinstance(chosen, str) else list(chosen)
            modes += [m for m in wanted if m not in modes]
        run = RunEvents(events, self._subgraph_at)
        items = self.astream(input, config, stream_mode=modes, subgraphs=True, **kwargs)
        async for namespace, mode, chunk in items:
            for event in run.on_item(namespace, mode, chunk):
                if keep(event):
                    yield event
        for event in events.graph_end():
            if keep(event):
                yield event

    async def astream_log(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """The run as LangChain's run log (``RunLogPatch`` objects; ``diff``, the
        ``include_*`` / ``exclude_*`` filters and the run's keyword arguments as LangChain's
        ``Runnable.astream_log`` takes them; graph/log_stream.py)."""
        async for item in astream_log(self, input, config, **kwargs):
            yield item

    def copy(self, update: Mapping[str, Any] | None = None) -> Self:
        """A copy of this compiled graph with the attributes ``update`` names replaced
        (``{"checkpointer": saver}``, ``{"name": ...}``), as LangGraph's ``copy``; a
        TypeError names an attribute the graph does not have."""
        unknown = sorted(k for k in update or {} if not hasattr(self, k))
        if unknown:
            raise TypeError(f"copy(update=...): {unknown!r} are not attributes of the graph")
        clone = copy.copy(self)
        clone._subgraphs = {}
        for key, value in (update or {}).items():
            setattr(clone, key, adapt_saver(value) if key == "checkpointer" else value)
        return clone

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached writes of ``nodes`` (default: every node) in the graph's
        ``cache``; ValueError when it has none, as in LangGraph."""
        self._cache_to_clear().clear(self._cached_nodes(nodes))

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Async twin of :meth:`clear_cache`."""
        await self._cache_to_clear().aclear(self._cached_nodes(nodes))

    def _cache_to_clear(self) -> Any:
        """The graph's cache (LangGraph's ValueError when it has none)."""
        if not self.cache:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        return self.cache

    def _cached_nodes(self, nodes: Sequence[str] | None) -> list[tuple[str, ...]]:
        """The cache namespaces of ``nodes`` (default: every node)."""
        names = [n for n in (nodes or self.nodes) if n in self.nodes]
        return [node_namespace(n, self.nodes[n].fn) for n in names]

    def __or__(self, other: Any) -> Any:
        """``graph | step``: LangChain's ``RunnableSequence`` of this graph then ``step``, as a
        LangGraph graph (a ``Runnable``) gives it (``graph/runnable.py``)."""
        return pipe(self, other)

    def __ror__(self, other: Any) -> Any:
        """``step | graph`` for a ``step`` that is no ``Runnable`` (a function, a dict)."""
        from langchain_core.runnables import RunnableSequence

        return RunnableSequence(other, as_runnable(self))

    def pipe(self, *others: Any, name: str | None = None) -> Any:
        """LangChain's ``RunnableSequence`` of this graph then ``others``."""
        return pipe(self, *others, name=name)

    def with_config(
        self, config: RunnableConfig | None = None, **kwargs: Any
    ) -> CompiledStateGraph[Any, Any, Any, Any]:
        """This graph with ``config`` (and keyword config keys) bound: each run's own config
        is merged over it (``configurable`` and ``metadata`` key by key)."""
        clone = copy.copy(self)
        clone.config = merge_configs(self.config, {**(config or {}), **kwargs})
        return clone

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Run :meth:`ainvoke` on each input concurrently; results in input order.

        ``config`` is one config for all runs or one per input. With ``return_exceptions``
        a failed run's exception takes its place in the results instead of being raised.
        """
        inputs = list(inputs)
        if config is None or isinstance(config, Mapping):
            configs: list[RunnableConfig | None] = [config] * len(inputs)
        else:
            configs = list(config)
            if len(configs) != len(inputs):
                raise ValueError(
                    f"batch got {len(inputs)} inputs but {len(configs)} configs; give one "
                    "config for all of them or one per input"
                )
        runs = [self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs, strict=True)]
        return list(await asyncio.gather(*runs, return_exceptions=return_exceptions))

    def batch(
        self,
        inputs: Sequence[Any],
        config: RunnableConfig | Sequence[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Sync twin of :meth:`abatch`."""
        return run_sync(self.abatch(inputs, config, return_exceptions=return_exceptions, **kwargs))

    # -- state -------------------------------------------------------------------------------

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """The state at the checkpoint ``config`` names, or at the thread's latest one.

        A ``checkpoint_ns`` in ``config`` reads a subgraph's state (``tasks[i].state`` of
        the parent gives that config). Each task whose node runs a subgraph has its ``state``:
        the config of its namespace, or with ``subgraphs=True`` the subgraph's snapshot
        there (nested levels included; an empty snapshot when it has saved none yet). A
        subgraph compiled with ``checkpointer=False`` saves nothing: its task's ``state``
        stays None.
        """
        saver = self._require_saver("get_state")
        graph = self._reader_at(config_checkpoint_ns(config))
        return await graph._state(saver, config, subgraphs)

    async def _state(
        self, saver: BaseCheckpointSaver, config: RunnableConfig, subgraphs: bool
    ) -> StateSnapshot:
        config = self._own_config(config)
        saved = await saver.aget_tuple(config)
        if saved is None:
            return StateSnapshot(
                values={},
                next=(),
                config=checkpoint_config(
                    config_thread_id(config), config_checkpoint_ns(config), None
                ),
                metadata=None,
                created_at=None,
                parent_config=None,
                tasks=(),
                interrupts=(),
            )
        latest = config_checkpoint_id(config) is None
        snapshot = snapshot_from_tuple(self, saved, apply_pending=latest)
        return await self._task_states(saver, snapshot, subgraphs)

    def _own_config(self, config: RunnableConfig) -> RunnableConfig:
        """``config`` addressing this graph's own checkpoints: a graph compiled with
        ``checkpointer=True`` keeps one history per thread under its namespace without task
        ids (see ``subgraph.recast_namespace``)."""
        namespace = config_checkpoint_ns(config)
        if self.subgraph_checkpointer is not True or not namespace:
            return config
        configurable = {**config["configurable"], "checkpoint_ns": recast_namespace(namespace)}
        return {**config, "configurable": configurable}

    def _reader_at(self, namespace: str) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The graph whose channels read the checkpoints of ``namespace``: the subgraph
        found there, else this graph (a graph a node's function runs without naming it, e.g.
        through a tool), as LangGraph reads it."""
        try:
            return graph_at(self, namespace)
        except ValueError:
            return self

    async def _task_states(
        self, saver: BaseCheckpointSaver, snapshot: StateSnapshot, subgraphs: bool
    ) -> StateSnapshot:
        """``snapshot`` with ``state`` set on the tasks whose node runs a subgraph: the
        config of the task's namespace, or with ``subgraphs`` the subgraph's snapshot."""
        subs = {t.name: self.subgraph_of(t.name) or self._remote_at(t.name) for t in snapshot.tasks}
        if not any(subs.values()):
            return snapshot
        thread = config_thread_id(snapshot.config)
        namespace = config_checkpoint_ns(snapshot.config)
        tasks = []
        for task in snapshot.tasks:
            sub = subs[task.name]
            if sub is None:
                tasks.append(task)
                continue
            own = f"{task.name}{NS_END}{task.id}"
            where = checkpoint_config(
                thread, f"{namespace}{NS_SEP}{own}" if namespace else own, None
            )
            state: Any = where
            if subgraphs and isinstance(sub, CompiledStateGraph):
                state = await sub._state(sub.checkpointer or saver, where, True)
            elif subgraphs:  # a RemoteGraph: the server's state of the namespace
                state = await sub.aget_state(where, subgraphs=True)
            tasks.append(task._replace(state=state))
        return snapshot._replace(tasks=tuple(tasks))

    def _remote_at(self, node: str) -> Any:
        """The RemoteGraph node ``node`` is, if it is one (``subgraph.remote_graph_of``)."""
        spec = self.nodes.get(node)
        return None if spec is None else remote_graph_of(spec.fn)

    def _subgraph_at(self, namespace: str) -> tuple[str, bool]:
        """The name of the graph running at ``namespace`` and whether it is its node."""
        graph = self
        node: NodeSpec | None = None
        for part in namespace.split(NS_SEP) if namespace else ():
            node = graph.nodes.get(part.partition(NS_END)[0])
            sub = graph._runs_graph(part.partition(NS_END)[0])
            if sub is None:  # a graph its node's function does not name: LangGraph's default
                return "LangGraph", False
            graph = sub
        fn: object = None if node is None else node.fn  # a subgraph added as a node is its fn
        return graph.name, fn is graph

    def _runs_graph(self, node: str) -> CompiledStateGraph[Any, Any, Any, Any] | None:
        """The compiled graph node ``node`` runs (see ``subgraph.find_subgraph``), if any."""
        if node not in self._subgraphs:
            spec = self.nodes.get(node)
            self._subgraphs[node] = (
                find_subgraph(spec.fn, CompiledStateGraph) if spec is not None else None
            )
        return self._subgraphs[node]

    def subgraph_of(self, node: str) -> CompiledStateGraph[Any, Any, Any, Any] | None:
        """The compiled graph node ``node`` runs and saves under its task's namespace, if
        any: a graph compiled with ``checkpointer=False`` saves nothing, so it has no state
        to read (LangGraph does not count it as a subgraph either)."""
        sub = self._runs_graph(node)
        return None if sub is None or sub.subgraph_checkpointer is False else sub

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, CompiledStateGraph[Any, Any, Any, Any]]]:
        """``(namespace, graph)`` for each subgraph of this graph (a node's graph, see
        :meth:`subgraph_of`), as LangGraph lists them: ``namespace`` (node names joined with
        ``|``, no task ids) keeps only the subgraph there, matched segment by segment;
        ``recurse`` goes into subgraphs' subgraphs."""
        for name in self.node_order:
            if namespace is not None and not (
                namespace == name or namespace.startswith(name + NS_SEP)
            ):
                continue
            graph = self.subgraph_of(name)
            if graph is None:
                continue
            if name == namespace:
                yield name, graph
                return
            if namespace is None:
                yield name, graph
            if recurse:
                inner = None if namespace is None else namespace[len(name) + 1 :]
                for path, sub in graph.get_subgraphs(namespace=inner, recurse=True):
                    yield f"{name}{NS_SEP}{path}", sub

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, CompiledStateGraph[Any, Any, Any, Any]]]:
        """Async twin of :meth:`get_subgraphs`."""
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """Sync twin of :meth:`aget_state`."""
        return run_sync(self.aget_state(config, subgraphs=subgraphs))

    async def aget_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first, across all its branches (of a
        subgraph's namespace when ``config`` has a ``checkpoint_ns``)."""
        saver = self._require_saver("get_state_history")
        check_address(config)
        graph = self._reader_at(config_checkpoint_ns(config))
        namespace = config_checkpoint_ns(graph._own_config(config))
        thread = checkpoint_config(config_thread_id(config), namespace, None)
        subgraph_of = graph.subgraph_of
        async for saved in saver.alist(thread, filter=filter, before=before, limit=limit):
            snapshot = snapshot_from_tuple(graph, saved, apply_pending=False)
            if any(subgraph_of(t.name) for t in snapshot.tasks):  # else nothing to add
                snapshot = await graph._task_states(saver, snapshot, False)
            yield snapshot

    def get_state_history(
        self,
        config: RunnableConfig,
        *,
        filter: Mapping[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """Sync twin of :meth:`aget_state_history`."""

        async def collect() -> list[StateSnapshot]:
            return [
                s
                async for s in self.aget_state_history(
                    config, filter=filter, before=before, limit=limit
                )
            ]

        return iter(run_sync(collect()))

    async def aupdate_state(
        self,
        config: RunnableConfig,
        values: Any,
        as_node: str | None = None,
        *,
        wait: float | None = None,
        **kwargs: Any,
    ) -> RunnableConfig:
        """Write ``values`` onto a checkpoint as node ``as_node`` would (default: the node
        that ran last). On an old checkpoint this forks; returns the new checkpoint's config.
        Holds the thread like a run (``wait`` as for :meth:`ainvoke`)."""
        saver = self._require_saver("update_state")
        async with thread_lease(
            saver, config_thread_id(config), wait=self.lease_wait if wait is None else wait
        ):
            return await aupdate_state(self, config, values, as_node)

    def update_state(
        self,
        config: RunnableConfig,
        values: Any,
        as_node: str | None = None,
        *,
        wait: float | None = None,
        **kwargs: Any,
    ) -> RunnableConfig:
        """Sync twin of :meth:`aupdate_state`."""
        return run_sync(self.aupdate_state(config, values, as_node, wait=wait))

    async def abulk_update_state(
        self,
        config: RunnableConfig,
        supersteps: Sequence[Sequence[Any]],
        *,
        wait: float | None = None,
    ) -> RunnableConfig:
        """Apply updates in supersteps: each superstep is a list of ``StateUpdate(values,
        as_node)`` applied together as one checkpoint. Returns the last checkpoint's config.
        Holds the thread like a run (``wait`` as for :meth:`ainvoke`)."""
        saver = self._require_saver("bulk_update_state")
        async with thread_lease(
            saver, config_thread_id(config), wait=self.lease_wait if wait is None else wait
        ):
            return await abulk_update_state(self, config, supersteps)

    def bulk_update_state(
        self,
        config: RunnableConfig,
        supersteps: Sequence[Sequence[Any]],
        *,
        wait: float | None = None,
    ) -> RunnableConfig:
        """Sync twin of :meth:`abulk_update_state`."""
        return run_sync(self.abulk_update_state(config, supersteps, wait=wait))

    # -- structure ---------------------------------------------------------------------------

    def get_name(self) -> str:
        """The graph's name (``compile(name=...)``, default ``"LangGraph"``): what
        ``add_node(graph)`` names the node."""
        return self.name

    def get_input_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The JSON schema of the graph's input, as LangGraph gives it
        (``graph/jsonschema.py``)."""
        return self._io_jsonschema(self.builder.input_schema, "Input")

    def get_output_jsonschema(self, config: RunnableConfig | None = None) -> dict[str, Any]:
        """The JSON schema of what the graph returns, as LangGraph gives it."""
        return self._io_jsonschema(self.builder.output_schema, "Output")

    def _io_jsonschema(self, schema: StateSchema, suffix: str) -> dict[str, Any]:
        title = schema_title(self.get_name(), suffix)
        return state_jsonschema(schema.schema, schema.kind, schema.own_key_types(), title)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """The JSON schema of the graph's ``context_schema`` (None without one)."""
        return context_jsonschema(self.builder.context_schema)

    @property
    def context_schema(self) -> Any:
        """The type of ``invoke(..., context=)`` (None without one)."""
        return self.builder.context_schema

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        """LangGraph's deprecated form of :meth:`get_context_jsonschema`: a pydantic model
        with the context schema as its ``configurable`` field, and the config keys named in
        ``include``."""
        warnings.warn(
            "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant "
            "schema instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        import pydantic  # imported when first asked, as the schemas are

        fields: dict[str, Any] = {}
        if self.builder.context_schema is not None:
            fields["configurable"] = (self.builder.context_schema, None)
        for key in include or ():
            if key != "configurable":
                fields[key] = (Any, None)
        return pydantic.create_model(f"{self.get_name()}Config", **fields)

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict[str, Any]:
        """LangGraph's deprecated form of :meth:`get_context_jsonschema`: the JSON schema of
        :meth:`config_schema`."""
        warnings.warn(
            "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            model = self.config_schema(include=include)
        return cast("dict[str, Any]", model.model_json_schema())

    def get_graph(self, config: RunnableConfig | None = None, *, xray: int | bool = False) -> Any:
        """The graph's drawing as LangGraph's: langchain_core's ``Graph`` (``.nodes``,
        ``.edges``, ``to_json()``, ``draw_mermaid()``), or without LangChain a
        ``DrawableGraph``; ``xray`` draws subgraphs' nodes in place (see ``graph/drawing.py``)."""
        return get_graph(self, config, xray=xray)

    async def aget_graph(
        self, config: RunnableConfig | None = None, *, xray: int | bool = False
    ) -> Any:
        """Async twin of :meth:`get_graph`."""
        return self.get_graph(config, xray=xray)

    def _require_saver(self, method: str) -> BaseCheckpointSaver:
        if self.checkpointer is None and self.subgraph_checkpointer is True:
            # Run on its own, a graph compiled to save with its parent has no saver to read.
            raise RuntimeError(
                f"checkpointer=True cannot be used for root graphs: {method} reads the "
                "checkpoints of a graph compiled with checkpointer=True through the graph "
                "that runs it as a subgraph (its task's state config on the parent's "
                "get_state), or compile it with a saver of its own"
            )
        if self.checkpointer is None:
            raise ValueError(
                f"No checkpointer set: {method} needs a checkpointer: "
                "compile(checkpointer=MemorySaver()) "
                "(or SqliteSaver / PostgresSaver)"
            )
        return self.checkpointer

    def __repr__(self) -> str:
        nodes = ", ".join(n for n in self.nodes if n != START)
        return (
            f"<CompiledStateGraph nodes=[{nodes}] checkpointer={type(self.checkpointer).__name__}>"
        )


def _raise_if_drained(loop: RunLoop) -> None:
    """GraphDrained when the run stopped before a step because its RunControl asked it to."""
    control = loop.runtime.control
    if loop.drained and control is not None:
        raise GraphDrained(control.drain_reason or "shutdown")


_NO_MODES: frozenset[str] = frozenset()
"""The ``print_mode`` modes of a run that prints none."""


def _optional_tuple(names: Sequence[str] | str | None) -> tuple[str, ...] | None:
    if names is None:
        return None
    return (names,) if isinstance(names, str) else tuple(names)
