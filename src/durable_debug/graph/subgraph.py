"""A compiled graph run inside a running task: a *subgraph*.

LangGraph code composes graphs two ways, and both run nested here:

    builder.add_node("sub", sub_graph)              # the compiled graph is the node

    def call(state):                                # or a node calls one
        out = other_graph.invoke({"y": state["x"]})
        return {"x": out["y"]}

A graph is nested when it runs while a task of another graph is running (the task's
:class:`~durable_debug.graph.interrupts.Scratchpad` is current). It then saves its checkpoints
in the same thread under the task's namespace, ``node:task_id`` (nested levels joined with
``|``), through the parent's saver unless compiled otherwise:

* ``compile()`` (no checkpointer): the parent's saver, under the task's namespace;
* ``compile(checkpointer=True)``: the parent's saver, under the namespace without task ids
  (``node``), so the subgraph keeps its state from one parent step to the next;
* ``compile(checkpointer=False)``: nothing saved (an ``interrupt()`` in it pauses the parent,
  which runs it again from its start on resume);
* ``compile(checkpointer=saver)``: that saver, under the task's namespace.

When the parent re-runs a task (resuming after an interrupt or a crash), the subgraph resumes
from the newest checkpoint of its namespace instead of starting over, so its finished steps do
not run again; the answers given to the parent (``Command(resume=...)``) reach the subgraph's
interrupted task by interrupt id. An interrupt in the subgraph is raised to the parent task as
:class:`GraphInterrupt`, which pauses the parent.
"""

from __future__ import annotations

import dis
import sys
import types
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from durable_debug.checkpoint.base import CONFIG_ADDRESS_KEYS, RunnableConfig
from durable_debug.checkpoint.names import NS_END, NS_SEP
from durable_debug.graph.calls import current_call, merge_configs
from durable_debug.graph.interrupts import Answers, current_scratchpad

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import BaseCheckpointSaver
    from durable_debug.graph.pregel import CompiledStateGraph

__all__ = [
    "NS_END",
    "NS_SEP",
    "Nesting",
    "Replay",
    "SubgraphStream",
    "at_top_level",
    "find_subgraph",
    "graph_at",
    "nesting_for",
    "recast_namespace",
    "remote_graph_of",
]


@dataclass(frozen=True)
class SubgraphStream:
    """``stream(..., subgraphs=True)``: the modes the top-level run streams, and where a
    nested run sends its chunks (``send(namespace, mode, chunk)``, from any thread)."""

    modes: frozenset[str]
    send: Callable[[tuple[str, ...], str, Any], None]
    sent_messages: set[str] = field(default_factory=set)
    """Ids of the chat messages streamed so far, at any level (each is streamed once)."""
    protocol: bool = False
    """Chat models stream content-block events to ``messages`` (a v3 event stream's run,
    ``graph/v3_events.py``), at every level."""


@dataclass
class Replay:
    """A top-level run replaying (time travel): the subgraphs it runs load, the first time
    each namespace runs, their newest checkpoint from before the replayed point, not their
    thread's newest one, as LangGraph loads them. Shared by every level of the run."""

    bound: str
    """Checkpoint id of the top-level run that a subgraph's first checkpoint must precede."""
    visited: set[str] = field(default_factory=set)
    """Namespaces that loaded theirs already (task ids of the last level left out)."""

    def first_visit(self, namespace: str) -> bool:
        """True the first time ``namespace`` (without its last level's task id) runs: a
        later run of it (a loop) loads its newest checkpoint."""
        stable = namespace.rsplit(NS_END, 1)[0]
        if stable in self.visited:
            return False
        self.visited.add(stable)
        return True


@dataclass
class Nesting:
    """What a task of a running graph hands to a graph run inside it (and to its own tasks)."""

    saver: BaseCheckpointSaver | None
    """The saver the nested run uses (None: it saves nothing)."""
    resuming: bool = False
    """The task runs again (resume or recovery): a subgraph with a saved checkpoint in its
    namespace continues from it instead of starting over."""
    answers: Answers = field(default_factory=Answers)
    """The answers given to the top-level run, shared by every level."""
    spare: bool = False
    """The tasks belong to a subgraph (see :attr:`Scratchpad.spare`)."""
    stream: SubgraphStream | None = None
    """Where a nested run reports its chunks when the top-level run streams subgraphs."""
    settle: Callable[[], Coroutine[Any, Any, None]] | None = None
    """Waits until the run whose task this is has saved every step it put (the checkpoint the
    task runs on, among them): a nested run and a ``once()`` result are saved after it."""
    durability: Literal["sync", "async", "exit"] | None = None
    """The enclosing run's ``durability``, which a nested run saves with unless given one."""
    calls: Any = None
    """The run's ``push.CallRunner``: where a ``@task`` called by the task runs (None
    outside a run)."""
    stop: int | None = None
    """The first step the run's recursion limit refuses (managed values: ``RemainingSteps``)."""
    resumable: bool = False
    """An enclosing level saves its checkpoints, so an ``interrupt()`` here can pause the
    run even when this level saves nothing (``compile(checkpointer=False)``): on resume the
    graph runs again from its start and the answer reaches its first unanswered
    ``interrupt()``, as in LangGraph."""
    replay: Replay | None = None
    """The top-level run replays: where its subgraphs load their checkpoints from."""
    root: str | None = None
    """The id of the top-level run's task the nested run is under (None: this is the
    top-level run's own step), see :attr:`Scratchpad.root`."""


def recast_namespace(namespace: str) -> str:
    """``a:tid|b:tid`` → ``a|b``: the namespace of a subgraph compiled with
    ``checkpointer=True``, the same for every task that runs it."""
    return NS_SEP.join(part.split(NS_END)[0] for part in namespace.split(NS_SEP))


def nesting_for(
    graph: CompiledStateGraph[Any, Any, Any, Any], config: RunnableConfig | None
) -> tuple[RunnableConfig, Nesting] | None:
    """When ``graph`` is started inside a running task: the config it runs with (the task's
    thread and namespace under ``config``) and what the task hands down; else None."""
    parent = current_scratchpad()
    call = current_call()
    if parent is None or parent.nesting is None or call is None:
        return None
    if _addresses_own_thread(config, call.config):
        # A graph invoked with a thread (or checkpoint) of its own runs as a top-level graph
        # there, with its own saver, as LangGraph runs it.
        return None
    merged = merge_configs(call.config, config)
    configurable: dict[str, Any] = dict(merged.get("configurable") or {})
    namespace = str(call.config.get("configurable", {}).get("checkpoint_ns") or "")
    own = graph.checkpointer
    mode = graph.subgraph_checkpointer
    saver: BaseCheckpointSaver | None
    if mode is False:
        saver = None
    elif own is not None:
        saver = own
    else:
        saver = parent.nesting.saver
    if mode is True:
        namespace = recast_namespace(namespace)
    calls = parent.subgraph_calls
    parent.subgraph_calls += 1
    if calls:  # the task's second (third, …) graph: a namespace of its own, as LangGraph
        namespace = f"{namespace}{NS_SEP}{calls}"
    configurable["checkpoint_ns"] = namespace
    # A run given a subgraph's checkpoint config (``get_state(subgraphs=True)``) names the
    # subgraph's checkpoint in ``checkpoint_map``: the subgraph starts from it, as in LangGraph.
    addressed = (configurable.get("checkpoint_map") or {}).get(namespace)
    if addressed:
        configurable["checkpoint_id"] = addressed
    else:
        configurable.pop("checkpoint_id", None)
    merged["configurable"] = configurable
    if merged.get("callbacks"):
        from durable_debug.graph.callbacks import without_taps

        # The parent's "messages" tap reports the parent's nodes only; a subgraph streams
        # its own chat models' tokens when the run streams subgraphs.
        merged["callbacks"] = without_taps(merged["callbacks"])
    # The task's own metadata keys describe the parent's task, not the subgraph's checkpoints.
    metadata = merged.get("metadata") or {}
    merged["metadata"] = {
        k: v
        for k, v in metadata.items()
        if not k.startswith("langgraph_") and k not in CONFIG_ADDRESS_KEYS
    }
    nesting = Nesting(
        saver,
        resuming=parent.nesting.resuming,
        answers=parent.answers or Answers(),
        stream=parent.nesting.stream,
        settle=parent.nesting.settle,
        durability=parent.nesting.durability,
        resumable=parent.nesting.resumable or parent.nesting.saver is not None,
        replay=parent.nesting.replay,
        root=parent.root,
    )
    return merged, nesting


def _addresses_own_thread(config: RunnableConfig | None, task: RunnableConfig) -> bool:
    """True when ``config`` names a checkpoint lineage of its own (a ``thread_id``,
    ``checkpoint_ns``, ``checkpoint_id`` or ``checkpoint_map``) rather than being the
    running task's config (``task``: same thread and namespace) handed down."""
    configurable = (config or {}).get("configurable") or {}
    if not any(configurable.get(k) for k in (*CONFIG_ADDRESS_KEYS, "checkpoint_map")):
        return False
    own = task.get("configurable") or {}
    return any(configurable.get(k) != own.get(k) for k in ("thread_id", "checkpoint_ns"))


def from_parent_checkpoint(config: RunnableConfig) -> RunnableConfig:
    """A top-level run's config given a subgraph's checkpoint config (its ``checkpoint_ns``):
    as in LangGraph, the run is the whole graph's, from the parent checkpoint its
    ``checkpoint_map`` names (the thread's newest without one); the map stays, so the
    subgraph starts from the checkpoint it names there (:func:`nesting_for`)."""
    configurable = dict(config.get("configurable") or {})
    configurable["checkpoint_ns"] = ""
    configurable.pop("checkpoint_id", None)
    if parent := (configurable.get("checkpoint_map") or {}).get(""):
        configurable["checkpoint_id"] = parent
    return {**config, "configurable": configurable}


def at_top_level(config: RunnableConfig) -> RunnableConfig:
    """A top-level run's config given a ``checkpoint_ns`` no node of the graph explains (a
    graph a node's function or a tool invoked, a namespace a LangGraph server passes on): as
    LangGraph runs it, the run is the graph's own, at the top level from the thread's newest
    checkpoint (the namespace and ``checkpoint_id`` left out); the metadata of its nodes'
    configs keeps the ones it was given (LangGraph's config copies them there first; no
    checkpoint's metadata takes them, ``checkpoint.base.run_metadata``)."""
    configurable = dict(config.get("configurable") or {})
    metadata = dict(config.get("metadata") or {})
    for key in ("checkpoint_ns", "checkpoint_id"):
        if configurable.get(key):
            metadata.setdefault(key, configurable[key])
    configurable["checkpoint_ns"] = ""
    configurable.pop("checkpoint_id", None)
    return {**config, "configurable": configurable, "metadata": metadata}


def checkpoint_parents(config: Mapping[str, Any]) -> dict[str, str]:
    """``metadata["parents"]`` of a nested run's checkpoints: namespace → the checkpoint each
    enclosing level ran its task from (empty for a top-level run)."""
    mapping = (config.get("configurable") or {}).get("checkpoint_map") or {}
    return {str(ns): str(cid) for ns, cid in mapping.items()}


def find_subgraph(
    fn: Any, compiled: type[CompiledStateGraph[Any, Any, Any, Any]]
) -> CompiledStateGraph[Any, Any, Any, Any] | None:
    """The compiled graph a node runs, found as LangGraph finds it: the node itself, else the
    first graph among what its function reaches (:func:`reachable_values`; a bound method
    stands for the object it is bound to), the steps of a LangChain ``RunnableSequence`` and
    the dependencies of a ``RunnableLambda``; None when there is none. A graph compiled with
    ``checkpointer=False`` is passed over for a later one (LangGraph does not count it) but
    returned when there is no other, since it still runs nested. ``compiled`` is the class of
    compiled graphs (passed in: this module sits below ``pregel``, which uses it)."""
    try:
        return _first_graph(fn, compiled)
    except Exception:  # a property raised on the way: no subgraph, as in LangGraph
        return None


_REMOTE_GRAPH_MODULES = ("durable_debug.pregel.remote", "langgraph.pregel.remote")
"""Where the ``RemoteGraph`` classes are: ours and LangGraph's (both run as a node)."""


def remote_graph_of(fn: Any) -> Any:
    """The ``RemoteGraph`` (a graph on a LangGraph API server) a node is, or None: it saves
    on the server, not under the task's namespace, but LangGraph counts it as a subgraph in
    ``get_state``'s tasks (``state`` is its namespace's config, or with ``subgraphs=True``
    the server's state of it)."""
    kind = type(fn)
    if kind.__name__ == "RemoteGraph" and kind.__module__ in _REMOTE_GRAPH_MODULES:
        return fn
    return None


def _first_graph(
    fn: Any, compiled: type[CompiledStateGraph[Any, Any, Any, Any]]
) -> CompiledStateGraph[Any, Any, Any, Any] | None:
    candidates: list[Any] = [fn]
    seen: set[int] = set()
    fallback = None
    for candidate in candidates:
        if id(candidate) in seen:
            continue
        seen.add(id(candidate))
        if isinstance(candidate, compiled):
            if candidate.subgraph_checkpointer is not False:
                return candidate
            fallback = fallback or candidate
        elif candidate is fn or _is_runnable_callable(candidate):
            candidates.extend(_runnable_parts(candidate))
    return fallback


def _is_runnable_callable(value: Any) -> bool:
    """A LangGraph ``RunnableCallable`` (a function wrapped as a node): searched further
    when a node's function reaches one, as LangGraph searches it."""
    kind = type(value)  # by name: importing LangGraph here is not wanted
    return (kind.__module__, kind.__name__) == ("langgraph._internal._runnable", "RunnableCallable")


def _runnable_parts(value: Any) -> list[Any]:
    """What a node's runnable is made of, for :func:`find_subgraph`."""
    core = sys.modules.get("langchain_core.runnables.base")
    if core is not None:
        if isinstance(value, core.RunnableSequence):
            return list(value.steps)
        if isinstance(value, core.RunnableLambda):
            return list(value.deps)
    if _is_runnable_callable(value):
        value = value.func if value.func is not None else getattr(value, "afunc", None)
    return [getattr(v, "__self__", v) for v in reachable_values(value)]


_LEAF_TYPES = frozenset(
    {int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset}
    | {type(None)}
)
"""Types (exactly these: a subclass can carry attributes) no graph is looked for in: when a
function reaches only these, its bytecode is not walked."""

_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def reachable_values(fn: Any) -> list[Any]:
    """The values a function reaches from outside its own scope, as LangGraph lists them to
    find a node's subgraph: every value its closure holds, then the value of each global it
    loads and each value along an attribute path it loads from a global or a closure variable
    (``holder.payload.graph``), nested functions, lambdas and comprehensions included (their
    names resolve against the function's own closure and globals). A method stands for its
    function, a ``functools.wraps`` wrapper for the function it wraps; anything but a Python
    function reaches nothing. Over-approximates: a value may be listed that the function never
    uses at run time (a captured one); code the compiler dropped reaches nothing."""
    func = getattr(fn, "__func__", fn)
    wrapped = getattr(func, "__wrapped__", None)
    if callable(wrapped):
        func = getattr(wrapped, "__func__", wrapped)
    if not isinstance(func, types.FunctionType):
        return []
    code = func.__code__
    cells: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, func.__closure__ or (), strict=True):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # an empty cell: a name assigned later (or never)
            continue
    values = list(cells.values())
    namespace = func.__globals__
    globals_ = {name: namespace[name] for name in code.co_names if name in namespace}
    if all(type(v) in _LEAF_TYPES for v in (*values, *globals_.values())):
        return values
    codes = [code]
    for current in codes:
        codes.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
        value: Any = None
        for instruction in dis.get_instructions(current):
            op = instruction.opname
            if op == "LOAD_GLOBAL":
                value = globals_.get(instruction.argval)
            elif op == "LOAD_DEREF":
                value = cells.get(instruction.argval)
            elif op in _ATTRIBUTE_LOADS:
                value = getattr(value, instruction.argval, None)
            else:
                value = None  # any other instruction ends a path: ``a, b.c`` is not ``a.c``
                continue
            if value is not None:
                values.append(value)
    return values


def graph_at(
    graph: CompiledStateGraph[Any, Any, Any, Any], namespace: str
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The graph whose checkpoints a namespace of ``graph``'s threads holds (``graph`` for
    ``""``). Raises ValueError naming the namespace and the node when a level's node runs no
    graph this process can find."""
    current = graph
    for part in namespace.split(NS_SEP) if namespace else ():
        node = part.split(NS_END)[0]
        found = current.subgraph_of(node)
        if found is None:
            raise ValueError(
                f"Subgraph {recast_namespace(namespace)} not found. Namespace {namespace!r}: "
                f"node {node!r} of graph {current.name!r} runs no subgraph this graph can find "
                "(a compiled graph added as the node, or the one compiled graph its function "
                "refers to)"
            )
        current = found
    return current
