"""The shape of a graph as data: nodes and edges, exactly as LangGraph's ``get_graph()`` gives it.

g = graph.get_graph()            # langchain_core's ``Graph`` when LangChain is installed
[(e.source, e.target, e.conditional) for e in g.edges]
print(g.draw_mermaid())          # LangChain's Mermaid (front matter, class styles)
g.to_json()                      # LangChain's JSON, node ids and data as LangGraph's

LangGraph draws a graph by running it dry: every node runs with no input, so it writes only
what it writes whatever its state (its plain edges and its share of a join), plus, once, what
its conditional edges and ``Command`` destinations declare they may go to. Which node each
write triggers next becomes an edge; a node triggered by nothing written in the step before is
reached from every node of that step (a conditional edge). After 250 steps (a loop) or when
nothing is left to run, nodes no edge leaves go to ``__end__``, or, when none, the last step's
only node goes there conditionally. :func:`get_graph` runs the same dry run over the compiled
graph's nodes (their trigger channels, edges, joins, branches and destinations), so its edges,
labels and the odd ones (``agent -.-> __end__`` after a loop) are LangGraph's.

Without LangChain the drawing is a :class:`DrawableGraph`, with the same nodes and edges.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from durable_debug.checkpoint.names import branch_channel
from durable_debug.graph.types import END, START

if TYPE_CHECKING:
    from durable_debug.graph.nodes import NodeSpec
    from durable_debug.graph.pregel import CompiledStateGraph
    from durable_debug.graph.state import StateGraph

__all__ = [
    "COMPILED_STATE_GRAPH",
    "RUNNABLE_CALLABLE",
    "STEP_LIMIT",
    "TOOL_NODE",
    "DrawableGraph",
    "Edge",
    "Node",
    "NodeData",
    "draw_graph",
    "get_graph",
]

STEP_LIMIT = 250
"""Steps of the dry run before a loop is cut (LangGraph's limit)."""


class Node(NamedTuple):
    """A node of the drawing."""

    id: str
    name: str
    data: Any = None
    metadata: dict[str, Any] | None = None

    def copy(self, *, id: str | None = None, name: str | None = None) -> Node:
        """This node with another id or name."""
        return Node(id or self.id, name or self.name, self.data, self.metadata)


class Edge(NamedTuple):
    """An edge of the drawing; ``conditional`` for conditional edges and Command targets."""

    source: str
    target: str
    data: Any = None
    conditional: bool = False

    def copy(self, *, source: str | None = None, target: str | None = None) -> Edge:
        """This edge with another source or target."""
        return Edge(source or self.source, target or self.target, self.data, self.conditional)


class DrawableGraph:
    """Nodes (including ``__start__`` and ``__end__``) and edges of a compiled graph, when
    LangChain (whose ``Graph`` LangGraph returns) is not installed; the methods the drawing
    uses are LangChain's ``Graph``'s."""

    def __init__(self, nodes: dict[str, Node] | None = None, edges: list[Edge] | None = None):
        self.nodes: dict[str, Node] = {} if nodes is None else nodes
        self.edges: list[Edge] = [] if edges is None else edges

    def add_node(self, data: Any, id: str, *, metadata: dict[str, Any] | None = None) -> Node:
        """Add the node ``id``; a ValueError when the drawing has it already."""
        if id in self.nodes:
            raise ValueError(f"Node with id {id} already exists")
        node = Node(id, id, data, metadata)
        self.nodes[id] = node
        return node

    def remove_node(self, node: Node) -> None:
        """Remove ``node`` and its edges."""
        self.nodes.pop(node.id)
        self.edges = [e for e in self.edges if node.id not in (e.source, e.target)]

    def add_edge(
        self, source: Node, target: Node, data: Any = None, conditional: bool = False
    ) -> Edge:
        """Add an edge between two nodes of the drawing."""
        for node in (source, target):
            if node.id not in self.nodes:
                raise ValueError(f"Node {node.id} not in graph")
        edge = Edge(source.id, target.id, data, conditional)
        self.edges.append(edge)
        return edge

    def extend(self, graph: DrawableGraph, *, prefix: str = "") -> tuple[Node | None, Node | None]:
        """Add ``graph``'s nodes and edges, their ids prefixed ``prefix:``; its first and last
        nodes (prefixed)."""

        def prefixed(id: str) -> str:
            return f"{prefix}:{id}" if prefix else id

        self.nodes.update({prefixed(k): v.copy(id=prefixed(k)) for k, v in graph.nodes.items()})
        self.edges.extend(
            e.copy(source=prefixed(e.source), target=prefixed(e.target)) for e in graph.edges
        )
        first, last = graph.first_node(), graph.last_node()
        return (
            first.copy(id=prefixed(first.id)) if first else None,
            last.copy(id=prefixed(last.id)) if last else None,
        )

    def first_node(self, exclude: Sequence[str] = ()) -> Node | None:
        """The one node no edge goes to (None when there is none or several)."""
        targets = {e.target for e in self.edges if e.source not in exclude}
        found = [n for n in self.nodes.values() if n.id not in exclude and n.id not in targets]
        return found[0] if len(found) == 1 else None

    def last_node(self, exclude: Sequence[str] = ()) -> Node | None:
        """The one node no edge leaves (None when there is none or several)."""
        sources = {e.source for e in self.edges if e.target not in exclude}
        found = [n for n in self.nodes.values() if n.id not in exclude and n.id not in sources]
        return found[0] if len(found) == 1 else None

    def trim_first_node(self) -> None:
        """Remove the first node when another would be first and it has one edge out."""
        first = self.first_node()
        if (
            first
            and self.first_node(exclude=[first.id])
            and len({e for e in self.edges if e.source == first.id}) == 1
        ):
            self.remove_node(first)

    def trim_last_node(self) -> None:
        """Remove the last node when another would be last and it has one edge in."""
        last = self.last_node()
        if (
            last
            and self.last_node(exclude=[last.id])
            and len({e for e in self.edges if e.target == last.id}) == 1
        ):
            self.remove_node(last)

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        """The drawing as LangChain's ``Graph.to_json()`` gives it: each node's id, its
        runnable (LangGraph's class path, see :class:`NodeData`) and metadata; each edge's
        source, target, label (``data``) and ``conditional``."""
        nodes: list[dict[str, Any]] = []
        for node in self.nodes.values():
            entry: dict[str, Any] = {"id": node.id}
            if isinstance(node.data, NodeData):
                entry["type"] = "runnable"
                entry["data"] = {"id": node.data.path.split("."), "name": node.id}
            elif node.data is not None:
                entry["type"] = "unknown"
                entry["data"] = node.id
            if node.metadata is not None:
                entry["metadata"] = node.metadata
            nodes.append(entry)
        edges: list[dict[str, Any]] = []
        for edge in self.edges:
            shown: dict[str, Any] = {"source": edge.source, "target": edge.target}
            if edge.data is not None:
                shown["data"] = edge.data
            if edge.conditional:
                shown["conditional"] = True
            edges.append(shown)
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(self, *, with_styles: bool = True) -> str:
        """A Mermaid flowchart of the graph (dotted arrows are conditional); without
        LangChain, no styles whatever ``with_styles`` says."""
        lines = ["graph TD;"]
        for node in self.nodes:
            label = node.strip("_") if node in (START, END) else node
            lines.append(
                f"\t{_mermaid_id(node)}([{label}])"
                if node in (START, END)
                else f"\t{_mermaid_id(node)}({label})"
            )
        for edge in self.edges:
            arrow = "-.->" if edge.conditional else "-->"
            lines.append(f"\t{_mermaid_id(edge.source)} {arrow} {_mermaid_id(edge.target)};")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"DrawableGraph(nodes={list(self.nodes)}, edges={len(self.edges)})"


def _mermaid_id(name: str) -> str:
    return name.replace(":", "_").replace(" ", "_")


def draw_graph(builder: StateGraph[Any, Any, Any, Any]) -> DrawableGraph:
    """The builder's nodes and edges as the graph's structure records them (a conditional
    edge of unknown targets goes to every node): what ``graph/version.py`` compares between
    runs. The drawing ``get_graph()`` returns is :func:`get_graph`'s, LangGraph's."""
    nodes = {START: Node(START, START)}
    for name, spec in builder.nodes.items():
        nodes[name] = Node(name, name, spec.fn, spec.metadata or None)
    edges: list[Edge] = []

    def add(source: str, target: str, conditional: bool, label: str | None = None) -> None:
        edge = Edge(source, target, label, conditional)
        if edge not in edges:
            edges.append(edge)

    for source, target in builder._edge_order:
        add(source, target, False)
    for sources, target in builder.joins:
        for source in sources:
            add(source, target, False)
    for source, branches in builder.branches.items():
        for branch in branches:
            targets = branch.destinations()
            if targets is None:  # unknown: the function may pick any node
                targets = [*builder.nodes, END]
            for target in targets:
                add(source, target, True)
    for name, spec in builder.nodes.items():
        for target in spec.destinations:
            add(name, target, True, spec.destination_labels.get(target))
    for name, spec in builder.nodes.items():
        # An error handler has no edges of its own (it routes with Command), as LangGraph.
        if not spec.is_error_handler and not any(e.source == name for e in edges):
            add(name, END, False)
    if any(e.target == END for e in edges):
        nodes[END] = Node(END, END)
    return DrawableGraph(nodes, edges)


# --- the dry run -----------------------------------------------------------------------------


class _Trigger:
    """A trigger channel of the dry run, with the semantics of LangGraph's channel kind:
    ``__start__`` and ``branch:to:X`` hold a value one step (``defer``: once nothing else
    runs); a join is available once every source wrote (``defer``: then once nothing else
    runs)."""

    def __init__(self, names: frozenset[str] | None, deferred: bool) -> None:
        self.names = names  # a join's sources; None for a value channel
        self.deferred = deferred
        self.seen: set[str] = set()
        self.has_value = False
        self.finished = False

    def _full(self) -> bool:
        return self.seen == self.names if self.names is not None else self.has_value

    def is_available(self) -> bool:
        return self._full() and (self.finished or not self.deferred)

    def update(self, values: Sequence[Any]) -> bool:
        if self.names is not None:
            new = {v for v in values if v not in self.seen}
            self.seen |= new
            return bool(new)
        if not values:
            if self.deferred or not self.has_value:
                return False
            self.has_value = False
            return True
        self.has_value = True
        if self.deferred:
            self.finished = False
        return True

    def consume(self) -> bool:
        if self.names is not None:
            if self.is_available():
                self.seen, self.finished = set(), False
                return True
            return False
        if self.deferred and self.finished:
            self.has_value = self.finished = False
            return True
        return False

    def finish(self) -> bool:
        if self.deferred and not self.finished and self._full():
            self.finished = True
            return True
        return False


_Write = tuple[str, Any]
_Static = tuple[str, "str | None"]
_TriggerEdge = tuple[str, bool, "str | None"]
_DrawnEdge = tuple[str, str, bool, "str | None"]


def _static_groups(spec: NodeSpec) -> list[list[_Static]]:
    """What a node declares it may go to, one group per declaring part, each ``(channel or
    END, label)``: its ``Command`` destinations (labelled by ``destinations={node: label}``),
    then each conditional edge with a path map or a ``Literal`` return annotation (labelled
    by the map's key)."""
    groups: list[list[_Static]] = []
    if spec.destinations:
        groups.append(
            [
                (d if d == END else branch_channel(d), spec.destination_labels.get(d))
                for d in spec.destinations
            ]
        )
    for branch in spec.branches:
        ends: Mapping[Any, str] | None = branch.path_map
        if ends is None:
            literal = branch.destinations()
            ends = None if literal is None else {n: n for n in literal}
        if ends:
            groups.append(
                [(t if t == END else branch_channel(t), str(key)) for key, t in ends.items()]
            )
    return groups


def _dry_run(
    nodes: Mapping[str, NodeSpec],
) -> tuple[set[_DrawnEdge], list[str], dict[str, set[_TriggerEdge]]]:
    """The edges LangGraph's dry run finds, the nodes of its first step, and its last step's
    sources (see the module)."""
    channels: dict[str, _Trigger] = {}
    trigger_to_nodes: dict[str, list[str]] = defaultdict(list)
    for name, spec in nodes.items():
        for chan in spec.triggers:
            trigger_to_nodes[chan].append(name)
            if chan not in channels:
                joined = frozenset(n for n, s in nodes.items() if chan in s.joins)
                channels[chan] = _Trigger(joined if joined else None, spec.defer and chan != START)
    versions: dict[str, int] = {}
    seen: dict[str, dict[str, int]] = defaultdict(dict)

    def apply(tasks: Iterable[tuple[Sequence[str], Sequence[_Write]]]) -> set[str]:
        tasks = list(tasks)
        bump_step = any(triggers for triggers, _ in tasks)
        next_version = max(versions.values(), default=0) + 1
        for chan in {c for triggers, _ in tasks for c in triggers}:
            if channels[chan].consume():
                versions[chan] = next_version
        pending: dict[str, list[Any]] = defaultdict(list)
        for _, writes in tasks:
            for chan, value in writes:
                if chan in channels:
                    pending[chan].append(value)
        updated: set[str] = set()
        for chan, values in pending.items():
            if channels[chan].update(values):
                versions[chan] = next_version
                if channels[chan].is_available():
                    updated.add(chan)
        if bump_step:
            for chan, channel in channels.items():
                if channel.is_available() and chan not in updated and channel.update(()):
                    versions[chan] = next_version
                    if channel.is_available():
                        updated.add(chan)
            if not updated:  # (tentatively) the last step: deferred nodes may run
                for chan, channel in channels.items():
                    if channel.finish():
                        versions[chan] = next_version
                        if channel.is_available():
                            updated.add(chan)
        return updated

    def prepare(updated: set[str]) -> list[str]:
        candidates: Iterable[str] = (
            sorted({n for chan in updated for n in trigger_to_nodes.get(chan, ())})
            if updated
            else nodes
        )
        ready = []
        for name in candidates:
            if any(
                channels[c].is_available() and versions.get(c, 0) > seen[name].get(c, 0)
                for c in nodes[name].triggers
            ):
                ready.append(name)
        return ready

    def run_step(tasks: list[str], writes: Mapping[str, Sequence[_Write]]) -> set[str]:
        for name in tasks:
            seen[name].update({c: versions[c] for c in nodes[name].triggers if c in versions})
        return apply((sorted(nodes[n].triggers), writes[n]) for n in tasks)

    edges: set[_DrawnEdge] = set()
    sources: dict[str, set[_TriggerEdge]] = {}
    step_sources: dict[str, set[_TriggerEdge]] = {}
    declared: dict[str, set[_TriggerEdge]] = defaultdict(set)
    declared_once: set[tuple[str, int]] = set()
    static_groups: dict[str, list[list[_Static]]] = {}
    tasks = prepare(apply([((), [(START, {})])]))
    start_tasks = tasks
    for _ in range(-1, STEP_LIMIT):
        if not tasks:
            break
        conditionals: dict[tuple[str, str, Any], str | None] = {}
        writes: dict[str, list[_Write]] = {}
        for name in tasks:
            spec = nodes[name]
            task_writes: list[_Write] = [(branch_channel(t), None) for t in spec.edges_to]
            task_writes += [(join, name) for join in spec.joins]
            if name not in static_groups:
                static_groups[name] = _static_groups(spec)
            for index, group in enumerate(static_groups[name]):
                if (name, index) in declared_once:
                    continue  # declared writes are sent the first time only, as LangGraph
                declared_once.add((name, index))
                for chan, label in group:
                    if chan == END:
                        edges.add((name, END, True, label))
                rest = [(chan, label) for chan, label in group if chan != END]
                conditionals.update({(name, chan, None): label for chan, label in rest})
                declared[name].update((chan, True, label) for chan, label in rest)
                task_writes += [(chan, None) for chan, _ in rest]
            writes[name] = task_writes
        step_sources = {}
        for name in tasks:
            found: set[_TriggerEdge] = {
                (
                    chan,
                    (name, chan, value or None) in conditionals,
                    conditionals.get((name, chan, value or None)),
                )
                for chan, value in writes[name]
            }
            step_sources[name] = found | declared.get(name, set())
        sources.update(step_sources)
        trigger_to_sources: dict[str, set[_TriggerEdge]] = defaultdict(set)
        for src, triggers in sources.items():
            for trigger, conditional, label in triggers:
                trigger_to_sources[trigger].add((src, conditional, label))
        tasks = prepare(run_step(tasks, writes))
        for name in tasks:
            added = False
            for trigger in sorted(nodes[name].triggers):
                for src, conditional, label in list(trigger_to_sources[trigger]):
                    edges.add((src, name, conditional, label))
                    if (trigger, conditional, label) in step_sources.get(src, set()):
                        added = True
                    else:
                        sources[src].discard((trigger, conditional, label))
            if not added:  # reached from no write of the last step: from any of its nodes
                edges.update((src, name, True, None) for src in step_sources)
    return edges, start_tasks, step_sources


# --- the drawing -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _langchain_graph() -> type[Any] | None:
    try:
        from langchain_core.runnables.graph import Graph
    except ImportError:
        return None
    return Graph


RUNNABLE_CALLABLE = "langgraph._internal._runnable.RunnableCallable"
COMPILED_STATE_GRAPH = "langgraph.graph.state.CompiledStateGraph"
TOOL_NODE = "langgraph.prebuilt.tool_node.ToolNode"
"""The class paths LangGraph's drawing names a node's runnable by (``to_json()``'s node
``data.id``): a function, a compiled graph added as a node, a tool node. Tools reading a
drawing (LangGraph Studio) know these, so a drawing here names its nodes the same way."""


class NodeData(NamedTuple):
    """What a node of a :class:`DrawableGraph` holds: the LangGraph class path its runnable
    would have, the runnable's name, and the node's function (or compiled graph)."""

    path: str
    name: str
    func: Any


@functools.lru_cache(maxsize=1)
def _stand_ins() -> dict[str, type[Any]]:
    """Runnables standing for a node in LangChain's drawing, one per class path above, each
    carrying that path (LangChain's ``to_json()`` names a runnable by its class's module and
    name). ``invoke`` calls the node's function with the input alone."""
    from langchain_core.runnables import Runnable

    def invoke(self: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if self.func is None:
            return input
        target = getattr(self.func, "invoke", self.func)
        return target(input)

    def init(self: Any, name: str, func: Any) -> None:
        self.name = name
        self.func = func

    made: dict[str, type[Any]] = {}
    for path in (RUNNABLE_CALLABLE, COMPILED_STATE_GRAPH, TOOL_NODE):
        module, _, cls_name = path.rpartition(".")
        made[path] = type(
            cls_name,
            (Runnable,),
            {
                "__module__": module,
                "__init__": init,
                "invoke": invoke,
                "__doc__": f"Stands for a node in a drawing (LangGraph's ``{cls_name}``).",
            },
        )
    return made


def _node_data(name: str, spec: NodeSpec, graph: Any, lc: bool) -> Any:
    """What a node of the drawing holds: the node's own runnable, else a stand-in named as
    LangGraph's (a :class:`NodeData` without LangChain)."""
    fn = spec.fn
    sub = graph._runs_graph(name)
    if sub is not None and id(fn) == id(sub):  # a compiled graph added as a node
        data = NodeData(COMPILED_STATE_GRAPH, sub.get_name(), sub)
    elif isinstance(getattr(fn, "tools_by_name", None), Mapping):
        data = NodeData(TOOL_NODE, getattr(fn, "name", None) or "tools", fn)
    else:
        data = NodeData(RUNNABLE_CALLABLE, name, fn)
    if not lc:
        return data
    from langchain_core.runnables import Runnable

    if isinstance(fn, Runnable):
        return fn
    return _stand_ins()[data.path](data.name, data.func)


def _add_edge(
    graph: Any, source: str, target: str, *, data: Any = None, conditional: bool = False
) -> None:
    if any(e.source == source and e.target == target for e in graph.edges):
        return
    if target not in graph.nodes and target == END:
        graph.add_node(None, END)
    graph.add_edge(graph.nodes[source], graph.nodes[target], data, conditional)


def _edge_key(edge: _DrawnEdge) -> tuple[str, str, bool, bool, str]:
    source, target, conditional, label = edge
    return (source, target, conditional, label is not None, label or "")


def get_graph(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    config: Any = None,
    *,
    xray: int | bool = False,
) -> Any:
    """The drawing of a compiled graph, as LangGraph's ``get_graph(config, xray=...)`` makes
    it: langchain_core's ``Graph`` when LangChain is installed, else a :class:`DrawableGraph`.
    ``xray`` draws subgraphs' nodes in place of their node, ids prefixed ``node:`` (an int:
    that many levels deep)."""
    subgraphs: dict[str, Any] = {}
    if xray:
        deeper = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
        for name, spec in graph.nodes.items():
            sub: Any = graph._runs_graph(name)
            if sub is None and callable(getattr(spec.fn, "get_subgraphs", None)):
                sub = spec.fn  # a LangGraph compiled graph added as a node draws itself
            if sub is not None:
                subgraphs[name] = sub.get_graph(config, xray=deeper)
    lc_graph = _langchain_graph()
    drawing: Any = DrawableGraph() if lc_graph is None else lc_graph()
    nodes = graph.nodes
    edges, start_tasks, last_sources = _dry_run(nodes)
    deferred = {name for name, spec in nodes.items() if spec.defer}
    for name, spec in nodes.items():
        metadata = dict(spec.metadata or {})
        if name in deferred:
            metadata["defer"] = True
        before, after = name in graph.interrupt_before, name in graph.interrupt_after
        if before or after:
            metadata["__interrupt"] = ",".join(
                w for w, on in (("before", before), ("after", after)) if on
            )
        tools = getattr(spec.fn, "tools_by_name", None)
        if isinstance(tools, Mapping) and tools:
            metadata["__tools"] = list(tools)
        drawing.add_node(
            _node_data(name, spec, graph, lc_graph is not None), name, metadata=metadata or None
        )
    if START not in nodes:
        drawing.add_node(None, START)
        for name in start_tasks:
            _add_edge(drawing, START, name)
    for source, target, conditional, label in sorted(edges, key=_edge_key):
        _add_edge(
            drawing,
            source,
            target,
            data=label if label != target else None,
            conditional=conditional,
        )
    termini = {t for _, t, _, _ in edges if t != END}.difference(s for s, _, _, _ in edges)
    if termini:
        for source in sorted(termini):
            _add_edge(drawing, source, END)
    elif len(last_sources) == 1 and not any(t == END for _, t, _, _ in edges):
        for source in sorted(last_sources):
            _add_edge(drawing, source, END, conditional=True)
    for name, sub in subgraphs.items():
        _inline(drawing, name, sub)
    return drawing


def _inline(drawing: Any, name: str, sub: Any) -> None:
    """Draw subgraph ``sub``'s nodes in place of node ``name`` (its ``__start__`` and
    ``__end__`` dropped when that leaves it one first and one last node), as LangGraph."""
    if len(sub.nodes) <= 1 or name not in drawing.nodes:
        return
    if not (sub.first_node() and sub.last_node()):
        return
    sub.trim_first_node()
    sub.trim_last_node()
    drawing.nodes.pop(name)
    first, last = drawing.extend(sub, prefix=name)
    for index, edge in enumerate(drawing.edges):
        if edge.source == name and last is not None:
            edge = edge.copy(source=last.id)
        if edge.target == name and first is not None:
            edge = edge.copy(target=first.id)
        drawing.edges[index] = edge
