"""StateGraph: declare nodes and edges over a state schema, then compile.

    g = (StateGraph(State)
         .add_node("a", step_a).add_node("b", step_b)
         .add_edge(START, "a").add_edge("a", "b").add_edge("b", END)
         .compile(checkpointer=MemorySaver()))

Mistakes in the graph's shape (an edge to a node that does not exist, no edge from START, an
interrupt on an unknown node) are reported by ``compile`` with the names involved.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic

from durable_debug.checkpoint.names import COPY, ERROR, INPUT, INTERRUPT, JOIN_PREFIX, RESUME
from durable_debug.graph.calls import call_style, callable_name
from durable_debug.graph.channel_view import public_channels
from durable_debug.graph.deprecation import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    warn_renamed,
)
from durable_debug.graph.nodes import (
    TASKS,
    Branch,
    NodeSpec,
    branch_channel,
    branch_reader,
    command_destinations,
    join_channel,
)
from durable_debug.graph.schema import StateSchema
from durable_debug.graph.timeouts import check_timeout_target, coerce_timeout
from durable_debug.graph.trace_policy import TracePolicy
from durable_debug.graph.types import (
    END,
    START,
    ContextT,
    InputT,
    OutputT,
    RetryPolicy,
    StateT,
    TimeoutPolicy,
)

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = ["DEFAULT_ERROR_HANDLER", "ERROR_HANDLER_PREFIX", "StateGraph"]

ERROR_HANDLER_PREFIX = "__error_handler__"
"""``add_node(name, fn, error_handler=h)`` adds ``h`` as node ``__error_handler__<name>``
(LangGraph's name, which ``interrupt_before`` and the drawing use)."""
DEFAULT_ERROR_HANDLER = "__default_error_handler__"
"""The node of ``set_node_defaults(error_handler=...)`` (LangGraph's name)."""

_RESERVED = {START, END, TASKS, INTERRUPT, RESUME, ERROR, COPY, INPUT}


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """A graph whose nodes read and write a shared state declared by ``state_schema``.

    Generic as LangGraph's (``StateGraph[State, Context, Input, Output]``, the last three
    optional) for type annotations."""

    def __init__(
        self,
        state_schema: Any,
        context_schema: Any = None,
        *,
        input_schema: Any = None,
        output_schema: Any = None,
        **kwargs: Any,
    ) -> None:
        self.state_schema = StateSchema(state_schema)
        self.context_schema = context_schema
        """Type of ``invoke(..., context=)``: a dict is turned into it when it is a dataclass
        or a pydantic model; nodes read it as ``runtime.context``."""
        for old, new in (("input", "input_schema"), ("output", "output_schema")):
            if old in kwargs:
                warn_renamed(old, new, LangGraphDeprecatedSinceV05)
        if "config_schema" in kwargs:
            warn_renamed("config_schema", "context_schema", LangGraphDeprecatedSinceV10)
            if self.context_schema is None:
                self.context_schema = kwargs.pop("config_schema")
        input_schema = input_schema if input_schema is not None else kwargs.pop("input", None)
        output_schema = output_schema if output_schema is not None else kwargs.pop("output", None)
        self.input_schema = _declared(input_schema, self.state_schema, "input_schema")
        """Keys the run input may set (others known to the graph are dropped, as LangGraph
        does)."""
        self.output_schema = _declared(output_schema, self.state_schema, "output_schema")
        """Keys ``invoke`` returns."""
        self._schemas: list[StateSchema] = [self.input_schema, self.output_schema]
        self.schema = self.state_schema
        self._add_schema(None)
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: set[tuple[str, str]] = set()
        self._edge_order: list[tuple[str, str]] = []
        self.joins: list[tuple[tuple[str, ...], str]] = []
        self.branches: dict[str, list[Branch]] = {}
        self._defaults: dict[str, Any] = {}
        """What ``set_node_defaults`` set: ``retry``, ``cache_policy``, ``error_handler``."""
        self.compiled = False

    # -- nodes -------------------------------------------------------------------------------

    def add_node(
        self,
        node: str | Callable[..., Any],
        action: Callable[..., Any] | None = None,
        *,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        retry: RetryPolicy | Sequence[RetryPolicy] | None = None,
        destinations: Sequence[str] | Mapping[str, str] | None = None,
        metadata: dict[str, Any] | None = None,
        defer: bool = False,
        cache_policy: Any = None,
        error_handler: Callable[..., Any] | None = None,
        trace_policy: TracePolicy | None = None,
        timeout: float | timedelta | TimeoutPolicy | None = None,
        **kwargs: Any,
    ) -> StateGraph[Any, Any, Any, Any]:
        """Add a node. ``add_node(fn)`` names it after the function (a callable object after
        its class, a runnable after its ``get_name()``).

        The node is called with the state; it also receives ``config``, ``writer``, ``store``
        and ``runtime`` when it has parameters of those names (see ``graph/calls.py``).
        ``destinations`` declares where a node that returns ``Command(goto=...)`` may go, so
        the drawing shows those edges; ``retry_policy`` (one policy or a list) retries
        transient errors. ``input_schema=`` (default: the first parameter's annotation when it
        is a state class) is what the node reads, and its keys become channels; ``defer=True``
        runs the node once, when nothing else is left; ``cache_policy=`` reuses its writes for
        an input seen before (with ``compile(cache=...)``).

        ``error_handler=fn``: when the node's task fails (after its retries), ``fn`` runs in
        the same step as node ``__error_handler__<name>``, with the failed task's input and,
        in a parameter annotated :class:`~durable_debug.errors.NodeError`, the failure; its
        writes (a ``Command`` may route on) replace the failed node's, and the run goes on.
        A failing handler fails the run.

        ``trace_policy=TracePolicy(process_inputs=..., process_outputs=...)`` changes what
        tracers record as the node run's input and output (``graph/trace_policy.py``).
        ``timeout=`` (seconds, a timedelta or a ``TimeoutPolicy``) cancels an attempt of an
        async node that runs too long (``graph/timeouts.py``).
        """
        if action is None:
            if isinstance(node, str) or not (
                callable(node) or callable(getattr(node, "ainvoke", None))
            ):
                raise TypeError(f"add_node({node!r}) needs a function to run")
            action, name = node, callable_name(node)
            if not name:
                raise ValueError("Pass a name for this node: add_node('name', fn)")
        else:
            if not isinstance(node, str):
                raise TypeError(f"A node name must be a string, got {node!r}")
            name = node
        if isinstance(action, Mapping):  # LangGraph's shorthand for a RunnableParallel
            action = _runnable_parallel(name, action)
        if not callable(action) and not callable(getattr(action, "ainvoke", None)):
            raise TypeError(f"Node {name!r} must be a function, got {action!r}")
        if name in self.nodes:
            raise ValueError(f"Node {name!r} is already present; node names must be unique")
        if name in _RESERVED or ":" in name:
            raise ValueError(f"Node name {name!r} is reserved; choose another name")
        if retry is not None:
            warn_renamed("retry", "retry_policy", LangGraphDeprecatedSinceV05)
        if "input" in kwargs:
            warn_renamed("input", "input_schema", LangGraphDeprecatedSinceV05)
        node_input = _node_input_schema(action, kwargs, self.state_schema)
        handler_name = None
        if error_handler is not None:
            handler_name = f"{ERROR_HANDLER_PREFIX}{name}"
            if handler_name in self.nodes:
                raise ValueError(f"Error handler node {handler_name!r} already exists")
        if node_input is not None:  # (else the keys are those of the schema made before)
            self._add_schema(node_input)
        if error_handler is not None:  # listed before its node, as LangGraph lists it
            assert handler_name is not None
            self._add_handler(handler_name, error_handler, node_input)
        policy = retry_policy or retry
        # As LangGraph: from a -> Command[Literal[...]] annotation when not given; a mapping's
        # keys are the nodes, its values the edges' labels.
        dests = command_destinations(action) if destinations is None else tuple(destinations)
        self.nodes[name] = NodeSpec(
            name=name,
            fn=action,
            style=call_style(action),
            retry=(policy,) if isinstance(policy, RetryPolicy) else tuple(policy or ()),
            destinations=dests,
            destination_labels=dict(destinations) if isinstance(destinations, Mapping) else {},
            metadata=dict(metadata or {}),
            input_schema=node_input,
            defer=defer,
            cache_policy=cache_policy,
            error_handler=handler_name,
            trace_policy=trace_policy,
            timeout=coerce_timeout(timeout, f"add_node({name!r}, timeout=...)"),
        )
        return self

    def _add_handler(
        self, name: str, handler: Callable[..., Any], input_schema: StateSchema | None
    ) -> None:
        """Add the node that runs ``handler`` when a node fails (reading what it reads)."""
        if not callable(handler) and not callable(getattr(handler, "ainvoke", None)):
            raise TypeError(
                f"The error_handler of node {name.removeprefix(ERROR_HANDLER_PREFIX)!r} must "
                f"be a function, got {handler!r}"
            )
        self.nodes[name] = NodeSpec(
            name=name,
            fn=handler,
            style=call_style(handler),
            input_schema=input_schema,
            is_error_handler=True,
        )

    def set_node_defaults(
        self,
        *,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: Any = None,
        error_handler: Callable[..., Any] | None = None,
        timeout: Any = None,
    ) -> StateGraph[Any, Any, Any, Any]:
        """Policies for every node that does not set its own, applied by ``compile``:
        ``retry_policy`` (error handlers included), ``cache_policy`` and ``error_handler``
        (regular nodes only: a handler's failure fails the run), as LangGraph's."""
        if timeout is not None:
            self._defaults["timeout"] = coerce_timeout(timeout, "set_node_defaults(timeout=...)")
        if retry_policy is not None:
            self._defaults["retry"] = (
                (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy)
            )
        if cache_policy is not None:
            self._defaults["cache_policy"] = cache_policy
        if error_handler is not None:
            self._defaults["error_handler"] = error_handler
        return self

    @property
    def channels(self) -> dict[str, Any]:
        """The channel of each state key (of every schema), as LangGraph's public channel
        classes (``graph/channel_view.py``)."""
        return public_channels(self.schema.make_channels())

    @property
    def managed(self) -> dict[str, Any]:
        """The keys annotated with a managed value (``RemainingSteps``…), with its class."""
        return dict(self.schema.managed)

    def _add_schema(self, schema: StateSchema | None) -> None:
        """Make the keys of ``schema`` channels too (private channels between nodes)."""
        if schema is not None:
            self._schemas.append(schema)
        self.schema = StateSchema(self.state_schema.schema, extra=self._schemas)
        for key in self.schema.keys:
            if key in _RESERVED or key.startswith(("branch:", JOIN_PREFIX)):
                raise ValueError(f"State key {key!r} is reserved by the engine; rename it")

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> StateGraph[Any, Any, Any, Any]:
        """Add nodes that run one after another, with edges between consecutive ones."""
        if not nodes:
            raise ValueError("add_sequence needs at least one node")
        previous: str | None = None
        for item in nodes:
            if isinstance(item, tuple):
                name, fn = item
                self.add_node(name, fn)
            else:
                name = callable_name(item) or ""
                self.add_node(item)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    # -- edges -------------------------------------------------------------------------------

    def add_edge(
        self, start_key: str | Sequence[str], end_key: str
    ) -> StateGraph[Any, Any, Any, Any]:
        """Run ``end_key`` after ``start_key``. A list of starts is a join: ``end_key`` runs
        once, after every one of them has run."""
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be the start of an edge")
            if end_key == START:
                raise ValueError("START cannot be the end of an edge")
            if (start_key, end_key) not in self.edges:
                self.edges.add((start_key, end_key))
                self._edge_order.append((start_key, end_key))
            return self
        sources = tuple(start_key)
        if not sources:
            raise ValueError("add_edge needs at least one start node")
        if len(sources) == 1:
            return self.add_edge(sources[0], end_key)
        if END in sources:
            raise ValueError("END cannot be a start node")
        if START in sources:  # LangGraph's message: a join's sources must be nodes
            raise ValueError(f"Need to add_node `{START}` first: a join cannot start at START")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        self.joins.append((sources, end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: Mapping[Hashable, str] | Sequence[str] | None = None,
    ) -> StateGraph[Any, Any, Any, Any]:
        """After ``source``, call ``path(state)`` to choose what runs next: a node name, a list
        of names, or ``Send`` objects. ``path_map`` translates its return values to names.
        ``path`` may also be a runnable (an object with ``ainvoke``, e.g. ``RunnableLambda``)."""
        if not callable(path) and not callable(getattr(path, "ainvoke", None)):
            raise TypeError(
                f"The conditional edge from {source!r} needs a function or a runnable, got "
                f"{type(path).__name__}"
            )
        mapping: Mapping[Hashable, str] | None
        if path_map is None:
            mapping = None
        elif isinstance(path_map, Mapping):
            mapping = dict(path_map)
        else:
            mapping = {name: name for name in path_map}
        reader = branch_reader(path)
        if reader is not None and reader.schema is not self.state_schema.schema:
            self._add_schema(reader)  # its keys are channels too
        branch = Branch(source, path, mapping, call_style(path), reader)
        self.branches.setdefault(source, []).append(branch)
        return self

    def set_entry_point(self, key: str) -> StateGraph[Any, Any, Any, Any]:
        """Same as ``add_edge(START, key)``."""
        return self.add_edge(START, key)

    def set_conditional_entry_point(
        self, path: Callable[..., Any], path_map: Mapping[Hashable, str] | None = None
    ) -> StateGraph[Any, Any, Any, Any]:
        """Same as ``add_conditional_edges(START, path, path_map)``."""
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph[Any, Any, Any, Any]:
        """Same as ``add_edge(key, END)``."""
        return self.add_edge(key, END)

    # -- compile -----------------------------------------------------------------------------

    def compile(
        self,
        checkpointer: BaseCheckpointSaver | bool | None = None,
        *,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        name: str | None = None,
        debug: bool = False,
        cache: Any = None,
        store: Any = None,
        wait: float | None = None,
        strict: bool = False,
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> CompiledStateGraph[Any, Any, Any, Any]:
        """Check the graph and return a runnable :class:`CompiledStateGraph`.

        ``checkpointer`` is a saver, or for a graph used as a subgraph None (use the
        parent's saver), ``True`` (the parent's saver, one namespace for every call, so the
        subgraph keeps its state between calls) or ``False`` (save nothing); see
        ``subgraph.py``.

        ``wait``: seconds a run waits for its thread when another run holds it, before
        raising :class:`ThreadBusyError` (default: it raises at once).

        ``strict``: where LangGraph silently lets a likely mistake pass (a write to a key the
        schema lacks, a resume with nothing pending, a thread saved by another graph
        structure), raise the error describing it instead of recording a *finding*
        (``graph/findings.py``; default False: behave as LangGraph, warn once, record it).

        ``transformers``: transformer classes or ``scope -> transformer`` factories
        every ``stream_events(version="v3")`` run of the graph registers (``graph/v3_events.py``).
        """
        from durable_debug.graph.pregel import CompiledStateGraph

        self._validate(interrupt_before, interrupt_after)
        nodes = self._node_specs()
        self.compiled = True
        compiled: CompiledStateGraph[Any, Any, Any, Any] = CompiledStateGraph(
            builder=self,
            schema=self.schema,
            nodes=nodes,
            checkpointer=None if isinstance(checkpointer, bool) else checkpointer,
            subgraph_checkpointer=checkpointer if isinstance(checkpointer, bool) else None,
            interrupt_before=_node_list(interrupt_before),
            interrupt_after=_node_list(interrupt_after),
            name=name or "LangGraph",
            cache=cache,
            store=store,
            lease_wait=wait,
            strict=strict,
        )
        if transformers:
            compiled.stream_transformers = tuple(transformers)
        return compiled

    def _validate(
        self,
        interrupt_before: Sequence[str] | str | None,
        interrupt_after: Sequence[str] | str | None,
    ) -> None:
        known = set(self.nodes)
        listing = ", ".join(sorted(known)) or "none"
        has_entry = any(src == START for src, _ in self.edges) or START in self.branches
        if not has_entry:
            raise ValueError(
                "Graph must have an entrypoint: add at least one edge from START to another "
                "node, e.g. builder.add_edge(START, 'first_node')"
            )
        for src, dst in self._edge_order:
            if src != START and src not in known:
                raise ValueError(f"Found edge starting at unknown node {src!r} (nodes: {listing})")
            if dst != END and dst not in known:
                raise ValueError(f"Found edge ending at unknown node {dst!r} (nodes: {listing})")
        for sources, dst in self.joins:
            for src in sources:
                if src not in known:
                    raise ValueError(
                        f"Found join starting at unknown node {src!r} (nodes: {listing})"
                    )
            if dst != END and dst not in known:
                raise ValueError(f"Found join ending at unknown node {dst!r} (nodes: {listing})")
        for src, branches in self.branches.items():
            if src != START and src not in known:
                raise ValueError(
                    f"Found conditional edge starting at unknown node {src!r} (nodes: {listing})"
                )
            for branch in branches:
                for dst in branch.path_map.values() if branch.path_map else ():
                    if dst != END and dst not in known:
                        raise ValueError(
                            f"The path map of the conditional edge from {src!r} names unknown "
                            f"node {dst!r} (nodes: {listing})"
                        )
        for spec in self.nodes.values():
            for dst in spec.destinations:
                if dst != END and dst not in known:
                    raise ValueError(
                        f"Found edge ending at unknown node `{dst}`: node {spec.name!r} declares "
                        f"it in destinations= (nodes: {listing})"
                    )
        for label, names in (
            ("interrupt_before", interrupt_before),
            ("interrupt_after", interrupt_after),
        ):
            for node in _node_list(names):
                if node != "*" and node not in known:
                    raise ValueError(f"{label} names unknown node {node!r} (nodes: {listing})")

    def _node_specs(self) -> dict[str, NodeSpec]:
        """Wire edges into each node's triggers and writers; START becomes a node too."""
        specs: dict[str, NodeSpec] = {
            START: NodeSpec(name=START, fn=None, triggers=(START,)),
        }
        nodes = dict(self.nodes)
        default_handler = self._defaults.get("error_handler")
        if default_handler is not None:
            if DEFAULT_ERROR_HANDLER in nodes:
                raise ValueError(f"Error handler node {DEFAULT_ERROR_HANDLER!r} already exists")
            nodes[DEFAULT_ERROR_HANDLER] = NodeSpec(
                name=DEFAULT_ERROR_HANDLER,
                fn=default_handler,
                style=call_style(default_handler),
                is_error_handler=True,
            )
        for name, spec in list(nodes.items()):
            changes: dict[str, Any] = {}
            if not spec.retry and self._defaults.get("retry"):
                changes["retry"] = self._defaults["retry"]
            if spec.timeout is None and self._defaults.get("timeout") is not None:
                changes["timeout"] = self._defaults["timeout"]
            if (changes.get("timeout") or spec.timeout) is not None:
                assert spec.style is not None
                check_timeout_target(spec.style.is_async, f"node {name!r}")
            if not spec.is_error_handler:
                if spec.error_handler is None and default_handler is not None:
                    changes["error_handler"] = DEFAULT_ERROR_HANDLER
                if spec.cache_policy is None and "cache_policy" in self._defaults:
                    changes["cache_policy"] = self._defaults["cache_policy"]
            if changes:
                nodes[name] = dataclasses.replace(spec, **changes)
        for name, spec in nodes.items():
            triggers = [branch_channel(name)]
            triggers += [join_channel(srcs, dst) for srcs, dst in self.joins if dst == name]
            specs[name] = NodeSpec(**{**spec.__dict__, "triggers": tuple(triggers)})
        for name, spec in specs.items():
            spec.edges_to = tuple(
                dst for src, dst in self._edge_order if src == name and dst != END
            )
            spec.joins = tuple(
                join_channel(srcs, dst) for srcs, dst in self.joins if name in srcs and dst != END
            )
            spec.branches = tuple(self.branches.get(name, ()))
        return specs


def _declared(schema: Any, state: StateSchema, what: str) -> StateSchema:
    if schema is None or schema is state.schema:
        return state
    try:
        return StateSchema(schema)
    except TypeError as exc:
        raise TypeError(f"StateGraph({what}=...): {exc}") from None


def _node_input_schema(
    action: Callable[..., Any], options: dict[str, Any], state: StateSchema
) -> StateSchema | None:
    """The schema a node reads: ``add_node(..., input_schema=)`` (or the older ``input=``),
    else its first parameter's annotation when that is a state class; None: the state."""
    declared = options.pop("input_schema", None) or options.pop("input", None)
    if declared is not None:
        return None if declared is state.schema else _declared(declared, state, "input_schema")
    try:
        target = action if inspect.isroutine(action) else type(action).__call__
        first = next(iter(inspect.signature(action).parameters), None)
        hint = typing.get_type_hints(target).get(first) if first else None
    except Exception:  # annotations that do not resolve: the node reads the state
        return None
    if hint is None or hint is state.schema:
        return None
    return StateSchema.of(hint)


def _node_list(names: Sequence[str] | str | None) -> tuple[str, ...]:
    if names is None:
        return ()
    if isinstance(names, str):
        return (names,)
    return tuple(names)


def _runnable_parallel(name: str, steps: Mapping[str, Any]) -> Any:
    """``add_node(name, {key: runnable, ...})``: LangChain's ``RunnableParallel`` of those
    steps, as LangGraph makes of a dict (each step gets the state; the node returns their
    results by key)."""
    try:
        from langchain_core.runnables import RunnableParallel
    except ImportError as error:
        raise TypeError(
            f"Node {name!r} is a dict of runnables, which runs as LangChain's RunnableParallel: "
            "install langchain-core"
        ) from error
    return RunnableParallel(steps)
