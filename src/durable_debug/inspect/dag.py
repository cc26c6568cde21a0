"""The checkpoint DAG of a thread: a tree built from ``parent_checkpoint_id``, forks as branches.

    dag = checkpoint_dag(graph, {"configurable": {"thread_id": "demo-1"}})
    [dag.nodes[c]["step"] for c in nx.topological_sort(dag)]   # [-1, 0, 1, 2, 3, 2, 3, 4]
    dag_layout(dag)[fork_id]                                    # DagPosition(depth=3, lane=1)
    dag_data(graph, config)["lanes"]                            # 2: the widget draws this

Layout: a column per depth (distance from the root) and a lane per branch. The branch of the
first run is lane 0; at every checkpoint the oldest child continues its parent's lane and each
younger child starts a new branch; branches get lanes in the order they were created.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from typing_extensions import TypedDict

from durable_debug._collector import collector_paused
from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import RunnableConfig, config_checkpoint_id
from durable_debug.checkpoint.outline import alatest_mark
from durable_debug.checkpoint.records import AS_NODE, aread_records
from durable_debug.graph.algo import PULL, PUSH, task_id
from durable_debug.graph.findings import findings_of
from durable_debug.graph.version import GRAPH_VERSION_KEY
from durable_debug.inspect.thread import (
    CheckpointRecord,
    Thread,
    _thread_of,
    aread_thread,
    checkpointer_of,
    loop_links,
    thread_config,
)

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "DAG_WIRE_FORMAT",
    "Dag",
    "DagNode",
    "DagPosition",
    "DagReader",
    "acheckpoint_dag",
    "adag_data",
    "checkpoint_dag",
    "dag_data",
    "dag_data_of",
    "dag_from_thread",
    "dag_from_wire",
    "dag_layout",
    "dag_wire_of",
    "merge_wire",
    "pack_wire",
    "unpack_wire",
]


class DagPosition(NamedTuple):
    """Where a checkpoint is drawn."""

    depth: int
    """Column: distance from the root."""
    lane: int
    """Row: branch index (0 = the branch of the first run)."""


class DagNode(TypedDict):
    """One checkpoint of the protocol's ``Dag`` (see docs/widget-protocol.md)."""

    id: str
    parent: str | None
    broken_parent: str | None
    """The parent id the store names when that link closes a loop (a damaged store): the
    checkpoint is then drawn as a root, ``parent`` is None."""
    step: int
    source: str
    next: list[str]
    writers: list[str]
    interrupts: int
    errors: int
    graph_changed: bool
    """The graph version differs from the parent checkpoint's (the code changed here)."""
    findings: int
    """How many findings the checkpoint's debug record holds (``graph/findings.py``)."""
    is_head: bool
    is_latest: bool
    depth: int
    lane: int
    created_at: str


class Dag(TypedDict):
    """A thread's checkpoint tree with its layout, as the widget draws it."""

    thread_id: str
    checkpoint_ns: str
    """The namespace shown: "" for the thread's own graph, ``node:task_id`` for a subgraph."""
    nodes: list[DagNode]
    depth: int
    lanes: int


DAG_WIRE_FORMAT = "dag-columns-1"
"""The ``format`` of the compact ``_dag`` (docs/widget-protocol.md, "The DAG on the wire"):
one array per field in checkpoint id order, a parent as its index, node names and name lists
interned, rare marks as sparse ``[index, value, …]`` pairs; ``is_head`` and ``is_latest``
follow from the parents and the order. ``js/src/dag-wire.js`` decodes it, as does
:func:`dag_from_wire`."""


async def acheckpoint_dag(graph: Any, config: RunnableConfig) -> nx.DiGraph:
    """The checkpoint tree of the thread ``config`` names, as a ``networkx.DiGraph``.

    One node per checkpoint (attributes: id, parent, broken_parent, step, source, next,
    writers, interrupts, errors, created_at, config, metadata), one edge parent → child (none
    for a parent link that loops back, see :attr:`Thread.broken_links`). Graph attributes
    hold ``thread_id`` and ``checkpoint_ns``.
    """
    return dag_from_thread(await aread_thread(graph, config))


def checkpoint_dag(graph: Any, config: RunnableConfig) -> nx.DiGraph:
    """Sync twin of :func:`acheckpoint_dag`."""
    return run_sync(acheckpoint_dag(graph, config))


def dag_from_thread(thread: Thread) -> nx.DiGraph:
    """Build the checkpoint tree of an already read :class:`Thread`."""
    import networkx as nx

    dag = nx.DiGraph(thread_id=thread.thread_id, checkpoint_ns=thread.checkpoint_ns)
    for record in thread:
        dag.add_node(
            record.id,
            id=record.id,
            parent=None if record.id in thread.broken_links else record.parent_id,
            broken_parent=thread.broken_links.get(record.id),
            step=record.step,
            source=record.source,
            next=list(record.next),
            writers=thread.writers(record),
            interrupts=len(record.pending_interrupts()),
            errors=len(record.failed_tasks()),
            created_at=record.created_at,
            config=record.config,
            metadata=record.metadata,
        )
    for record in thread:
        parent = thread.parent(record)
        if parent is not None:
            dag.add_edge(parent.id, record.id)
    return dag


def dag_layout(dag: nx.DiGraph) -> dict[str, DagPosition]:
    """Place every checkpoint: a column per depth, a lane per branch (deterministic).

    Checkpoint ids sort by creation time, so "oldest" below means "smallest id".
    """
    roots = sorted(n for n in dag.nodes if dag.in_degree(n) == 0)
    depth: dict[str, int] = {}
    branch_starts: list[str] = []
    branch_of: dict[str, str] = {}
    for root in roots:
        branch_starts.append(root)
        stack = [(root, 0, root)]
        while stack:
            node, d, branch = stack.pop()
            depth[node] = d
            branch_of[node] = branch
            children = sorted(dag.successors(node))
            for i, child in enumerate(children):
                child_branch = branch if i == 0 else child
                if i > 0:
                    branch_starts.append(child)
                stack.append((child, d + 1, child_branch))
    # Lane 0 is the first root's branch; the other branches in the order they were created.
    first = branch_starts[:1]
    lanes = {start: i for i, start in enumerate(first + sorted(branch_starts[1:]))}
    return {node: DagPosition(depth[node], lanes[branch_of[node]]) for node in dag.nodes}


async def adag_data(graph: Any, config: RunnableConfig) -> Dag:
    """The protocol's ``Dag`` for the thread ``config`` names (JSON-ready)."""
    return dag_data_of(await aread_thread(graph, config))


def dag_data(graph: Any, config: RunnableConfig) -> Dag:
    """Sync twin of :func:`adag_data`."""
    return run_sync(adag_data(graph, config))


class DagReader:
    """Reads one thread's ``Dag`` again and again, as a view that refreshes does.

    On durable_debug's SQLite saver the tree comes from checkpoint rows, metadata, trigger
    channels and the writes' channels only (:func:`~durable_debug.checkpoint.outline.aread_outline`:
    no state value is decoded), in one read session, and each read after the first asks only
    for the checkpoints from the newest one seen on (plus the parents of newer ones, whose
    writes grew). Any other saver is read in full each time
    (:func:`~durable_debug.inspect.thread.aread_thread`). The tree is kept as one column per
    field in id order, so checkpoints newer than every one read are appended and placed
    without touching the others, and :meth:`wire` hands the columns out as they are.

        reader = DagReader(graph, {"configurable": {"thread_id": "job-1"}})
        dag = await reader.aread()          # the whole tree
        dag = await reader.aread()          # only what was written since
        wire = reader.wire()                # the same tree in the widget's compact form
    """

    def __init__(self, graph: Any, config: RunnableConfig) -> None:
        self.graph = graph
        self.thread_id, self.checkpoint_ns = _thread_of(config, "DagReader")
        self.reads = 0
        """Reads of the store so far (one per :meth:`aread`)."""
        self.last_read = 0
        """Checkpoints the last read returned (the whole thread, or only the newer ones)."""
        self.forget()

    async def alatest_mark(self) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)``: a cheap mark of the thread's progress
        to watch (one index query on durable_debug's SQLite saver; else the newest checkpoint
        read through the saver)."""
        saver = checkpointer_of(self.graph)
        mark = await alatest_mark(saver, self.thread_id, self.checkpoint_ns)
        if mark is not None:
            return mark
        from durable_debug.inspect.access import aget_checkpoint

        latest = await aget_checkpoint(saver, thread_config(self.thread_id, self.checkpoint_ns))
        if latest is None:
            return ("", 0)
        return (str(config_checkpoint_id(latest.config)), len(latest.pending_writes or ()))

    def forget(self) -> None:
        """Drop what was read: the next :meth:`aread` reads the whole thread again."""
        self._rows: dict[str, _Row] = {}
        self._order: list[str] = []
        """Every checkpoint id read, ascending (creation order)."""
        self._index: dict[str, int] = {}
        self._children: dict[str, list[str]] = {}
        self._broken: dict[str, str] = {}
        self._lanes = 0
        self._strings: dict[str, int] = {}
        self._lists: dict[tuple[str, ...], int] = {}
        self._col: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
        self.epoch = next(_EPOCHS)
        """Changes whenever the columns are laid out anew (a first read, or a checkpoint older
        than the newest one read): a tail (:meth:`wire` with ``start``) extends only a wire
        of the same epoch."""
        self.low = 0
        """The lowest index the last read marked again or added (the whole tree after a new
        layout): a wire sent before it and a tail from it make the tree."""

    async def aread(self) -> Dag:
        """The thread's ``Dag`` as it is now."""
        await self.arefresh()
        return self.dag()

    async def arefresh(self) -> None:
        """Read what was written since the last read (everything, the first time)."""
        from durable_debug.checkpoint.outline import aread_outline

        saver = checkpointer_of(self.graph)
        since = self._order[-1] if self._order else None
        self.reads += 1
        with collector_paused():  # many small containers, no cycles: no collection meanwhile
            listed = await aread_outline(saver, self.thread_id, self.checkpoint_ns, since=since)
            if listed is not None:
                self.last_read = len(listed)
                ids = [row.checkpoint_id for row in listed]
                debug = await aread_records(saver, self.thread_id, self.checkpoint_ns, ids)
                self._take(
                    [
                        _with_debug(
                            _row_of_outline(row, self.checkpoint_ns),
                            debug.get((self.checkpoint_ns, row.checkpoint_id)),
                        )
                        for row in listed
                    ]
                )
                return
        if self._order:
            read = await self._aread_since(saver, self._order[-1])
            self.last_read = len(read)
            with collector_paused():
                self._take([_row_of(record) for record in read])
            return
        thread = await aread_thread(self.graph, thread_config(self.thread_id, self.checkpoint_ns))
        self.last_read = len(thread)
        with collector_paused():
            self._take([_row_of(record) for record in thread])

    async def _aread_since(self, saver: Any, newest: str) -> list[CheckpointRecord]:
        """Through the saver protocol: the checkpoints from ``newest`` on (the listing stops at
        the first older one), and the parents of the new ones again (their writes grew), each
        with its snapshot (the graph's own ``get_state`` for a LangGraph graph)."""
        from durable_debug.inspect.access import aget_checkpoint, alist_since, astate
        from durable_debug.inspect.thread import _record, _snapshots

        base = thread_config(self.thread_id, self.checkpoint_ns)
        listed = await alist_since(saver, base, newest)
        have = {str(config_checkpoint_id(t.config)) for t in listed}
        for tup in list(listed):
            parent = config_checkpoint_id(tup.parent_config) if tup.parent_config else None
            if parent and parent not in have and parent in self._rows:
                have.add(parent)
                again = await aget_checkpoint(saver, thread_config(*_address(base, parent)))
                if again is not None:
                    listed.append(again)
        by_id = {str(config_checkpoint_id(t.config)): t for t in listed}
        debug = await aread_records(saver, self.thread_id, self.checkpoint_ns, list(by_id))
        if _reads_history(self.graph):
            snapshots = [await astate(self.graph, t.config) for t in by_id.values()]
        else:
            snapshots = await _snapshots(self.graph, base, list(by_id.values()))
        records = []
        for snapshot in snapshots:
            checkpoint_id = str(snapshot.config["configurable"]["checkpoint_id"])
            records.append(_record(snapshot, by_id.get(checkpoint_id), debug))
        return sorted(records, key=lambda r: r.id)

    def _take(self, read: list[_Row]) -> None:
        """Merge the rows of one read: append and place the checkpoints newer than every one
        read before (the usual case), else lay the whole tree out again."""
        rows, newest = self._rows, self._order[-1] if self._order else ""
        added = [row.id for row in read if row.id not in rows]
        for row in read:
            rows[row.id] = row
        # A loop of parent links needs a link to a newer checkpoint (a damaged store), and
        # a checkpoint older than the newest one read means the columns must be rebuilt.
        appending = (
            not self._broken
            and (not added or added[0] > newest)
            and all((rows[cid].parent_id or "") < cid for cid in added)
        )
        if not appending:
            self._rebuild()
            self.epoch = next(_EPOCHS)
            self.low = 0
            return
        order, index, children = self._order, self._index, self._children
        for column in self._col.values():
            column.extend([None] * len(added))
        place = self._place
        for cid in added:
            index[cid] = len(order)
            order.append(cid)
            place(cid, rows[cid].parent_id)
        if not newest:  # the first read: every checkpoint, in order
            self._mark(order)
            self.low = 0
            return
        again = {row.id for row in read}
        for row in read:  # their children's writers come from their writes
            again.update(children.get(row.id, ()))
        marked = sorted(again)
        self._mark(marked)
        self.low = index[marked[0]] if marked else len(order)

    def _rebuild(self) -> None:
        """Lay every checkpoint read out again, in id order."""
        rows = self._rows
        self._order = sorted(rows)
        self._index = {cid: i for i, cid in enumerate(self._order)}
        self._broken = loop_links({cid: r.parent_id for cid, r in rows.items()})
        count = len(self._order)
        self._col = {name: [None] * count for name in _COLUMNS}
        self._children, self._lanes = {}, 0
        parents = {cid: None if cid in self._broken else rows[cid].parent_id for cid in self._order}
        if all((parent or "") < cid for cid, parent in parents.items()):
            for cid in self._order:  # parents come first: place as they come
                self._place(cid, parents[cid])
        else:
            children, place, self._lanes = _placement(parents)
            self._children = children
            depth, lane = self._col["node_depth"], self._col["lane"]
            for cid, (d, n) in place.items():
                depth[self._index[cid]], lane[self._index[cid]] = d, n
        self._mark(self._order)

    def _place(self, cid: str, parent: str | None) -> None:
        """Place a checkpoint whose parent (if read) is placed: the oldest child of a
        checkpoint continues its lane, a younger one (or a root after the first) starts the
        next lane (the layout of :func:`dag_layout`)."""
        index, depths, lanes = self._index, self._col["node_depth"], self._col["lane"]
        at = None if parent is None else index.get(parent)
        if at is None or (self._broken and (parent in self._broken or cid in self._broken)):
            depth, lane = 0, self._lanes
            self._lanes += 1
        else:
            siblings = self._children.get(parent)  # type: ignore[arg-type]
            depth, lane = depths[at] + 1, lanes[at]
            if siblings is None:
                self._children[parent] = [cid]  # type: ignore[index]
            else:
                lane = self._lanes
                self._lanes += 1
                siblings.append(cid)
        i = index[cid]
        depths[i], lanes[i] = depth, lane

    def _mark(self, cids: list[str]) -> None:
        """Fill the columns of checkpoints from their rows and their parents' (what
        :func:`_marks` gives for a full read)."""
        rows, index, broken_links = self._rows, self._index, self._broken
        strings, listed = self._strings, self._list
        col = self._col
        parents, broken_col, steps = col["parent"], col["broken_parent"], col["step"]
        sources, nexts, writers_col = col["source"], col["next"], col["writers"]
        interrupts, errors, changed = col["interrupts"], col["errors"], col["graph_changed"]
        found = col["findings"]
        times = col["created_at"]
        for cid in cids:
            i = index[cid]
            row = rows[cid]
            broken = cid in broken_links
            parent = None if broken or not row.parent_id else rows.get(row.parent_id)
            if row.source == "input":
                writers: tuple[str, ...] = ()
            elif row.named is not None:
                writers = row.named
            elif row.source != "loop" or parent is None:
                writers = ()
            else:
                writers = parent.done
            version = row.version
            before = None if parent is None else parent.version
            parents[i] = None if broken else row.parent_id
            broken_col[i] = broken_links.get(cid) if broken else None
            steps[i] = row.step
            sources[i] = _intern(strings, row.source)
            nexts[i] = listed(row.next)
            writers_col[i] = listed(writers)
            interrupts[i] = row.interrupts
            errors[i] = row.errors
            found[i] = row.findings
            changed[i] = version is not None and before is not None and version != before
            times[i] = row.created_at

    def _list(self, names: tuple[str, ...]) -> int:
        found = self._lists.get(names)
        if found is None:
            for name in names:
                _intern(self._strings, name)
            found = self._lists[names] = len(self._lists)
        return found

    def ids(self) -> list[str]:
        """Every checkpoint id read, oldest first."""
        return list(self._order)

    def dag(self) -> Dag:
        """The protocol's ``Dag`` of what was read (nodes sorted by depth, lane)."""
        return dag_from_wire(self.wire())

    def wire(self, start: int = 0) -> dict[str, Any]:
        """The tree in the widget's compact form (see :data:`DAG_WIRE_FORMAT`): fresh lists,
        so a traitlet holding the previous one sees a change.

        ``start`` > 0: only the checkpoints from that index on (a *tail*, ``"start"`` says
        where it begins; parents are still indices into the whole tree), to send after a
        refresh that appended checkpoints and re-marked none before ``start``
        (:attr:`low`). A tail carries the :attr:`epoch` of the columns: it extends only a
        wire of the same epoch.
        """
        col, index, order = self._col, self._index, self._order
        parents: list[int] = []
        orphans: list[Any] = []
        for i in range(start, len(order)):
            parent = col["parent"][i]
            at = -1 if parent is None else index.get(parent, -1)
            parents.append(at)
            if at < 0 and parent is not None:
                orphans += (i, parent)
        strings = list(self._strings)
        return {
            "format": DAG_WIRE_FORMAT,
            "thread_id": self.thread_id,
            "checkpoint_ns": self.checkpoint_ns,
            "epoch": self.epoch,
            "start": start,
            "count": len(order),
            "depth": 1 + max(col["node_depth"], default=-1),
            "lanes": self._lanes,
            "strings": strings,
            "lists": [[self._strings[n] for n in key] for key in self._lists],
            "id": order[start:],
            "parent": parents,
            "step": col["step"][start:],
            "source": col["source"][start:],
            "next": col["next"][start:],
            "writers": col["writers"][start:],
            "node_depth": col["node_depth"][start:],
            "lane": col["lane"][start:],
            "created_at": col["created_at"][start:],
            "interrupts": _sparse(col["interrupts"], start),
            "errors": _sparse(col["errors"], start),
            "findings": _sparse(col["findings"], start),
            "graph_changed": [i for i in range(start, len(order)) if col["graph_changed"][i]],
            "broken_parent": _sparse(col["broken_parent"], start),
            "missing_parent": orphans,
        }


_EPOCHS = itertools.count(1)
"""Epochs of every reader's columns, never reused: a tail never extends another's wire."""

_COLUMNS = (
    "parent",
    "broken_parent",
    "step",
    "source",
    "next",
    "writers",
    "interrupts",
    "errors",
    "findings",
    "graph_changed",
    "created_at",
    "node_depth",
    "lane",
)
"""The per-checkpoint columns a :class:`DagReader` keeps (in id order)."""


def _intern(strings: dict[str, int], name: str) -> int:
    found = strings.get(name)
    if found is None:
        found = strings[name] = len(strings)
    return found


def _sparse(column: list[Any], start: int = 0) -> list[Any]:
    """``[index, value, index, value…]`` of the entries from ``start`` on that are set (not
    0, None)."""
    return [x for i in range(start, len(column)) if (value := column[i]) for x in (i, value)]


def _reads_history(graph: Any) -> bool:
    """True for a graph whose snapshots only it can build (a LangGraph compiled graph): not
    durable_debug's engine, nor a saver seen as a graph."""
    from durable_debug.graph.pregel import CompiledStateGraph

    return (
        not isinstance(graph, CompiledStateGraph) and getattr(graph, "snapshots_of", None) is None
    )


def _address(base: RunnableConfig, checkpoint_id: str) -> tuple[str, str, str]:
    configurable = base["configurable"]
    return (
        str(configurable["thread_id"]),
        str(configurable.get("checkpoint_ns") or ""),
        checkpoint_id,
    )


class _Row(NamedTuple):
    """What a checkpoint's mark, and the marks of its children, need."""

    id: str
    parent_id: str | None
    step: int
    source: str
    next: tuple[str, ...]
    interrupts: int
    errors: int
    done: tuple[str, ...]
    """The nodes a loop child of this checkpoint was written by (its finished tasks)."""
    named: tuple[str, ...] | None
    """The writers its metadata names (``as_node``, or the keys of ``writes``); None if none."""
    version: Any
    """The graph version its debug record holds (None if none)."""
    created_at: str
    findings: int = 0
    """How many findings its debug record holds."""


def _with_debug(row: _Row, debug: Mapping[str, Any] | None) -> _Row:
    """``row`` with what the checkpoint's debug record says (``checkpoint/records.py``):
    the node an update was applied as, the graph version, the findings."""
    if not debug:
        return row
    named = (str(debug[AS_NODE]),) if debug.get(AS_NODE) else row.named
    version = debug.get(GRAPH_VERSION_KEY, row.version)
    return row._replace(named=named, version=version, findings=len(findings_of(debug)))


def _named_writers(metadata: dict[str, Any]) -> tuple[str, ...] | None:
    """The nodes a checkpoint's metadata says wrote it (see :meth:`Thread.writers`): an older
    durable_debug stored ``as_node`` there; now the debug record holds it (:func:`_with_debug`)."""
    if metadata.get(AS_NODE):
        return (str(metadata[AS_NODE]),)
    if isinstance(metadata.get("writes"), dict):
        return tuple(str(node) for node in metadata["writes"])
    return None


def _row_of_outline(row: Any, checkpoint_ns: str) -> _Row:
    """A :class:`_Row` from an outline row: the tasks are matched to their writes by the ids
    the engine gives them (:func:`~durable_debug.graph.algo.task_id`)."""
    metadata = row.metadata
    step = int(metadata.get("step", -1))
    names = list(row.pull)
    if row.packets:
        from durable_debug.inspect.stored import _packet_node

        names += [_packet_node(p) for p in row.packets]
    interrupts = errors = 0
    done: list[str] = []
    if row.tasks:
        paths = [(PULL, n) for n in row.pull] + [(PUSH, i) for i in range(len(row.packets))]
        failed_done: list[str] = []
        for name, path in zip(names, paths, strict=True):
            tid = task_id(row.checkpoint_id, checkpoint_ns, step + 1, name, path)
            task = row.tasks.get(tid)
            if task is None:
                continue
            if not task.finished:
                interrupts += task.interrupts
            if task.failed:
                errors += 1
                if task.finished and name not in failed_done:
                    failed_done.append(name)
            elif (task.finished or not task.interrupts) and name not in done:
                done.append(name)
        done += [name for name in failed_done if name not in done]
    return _Row(
        row.checkpoint_id,
        row.parent_id,
        step,
        str(metadata.get("source", "")),
        tuple(names),
        interrupts,
        errors,
        tuple(done),
        _named_writers(metadata),
        metadata.get(GRAPH_VERSION_KEY),
        row.ts,
    )


def _row_of(record: CheckpointRecord) -> _Row:
    """A :class:`_Row` from a full read's record."""
    metadata = record.metadata
    written = {task_id for task_id, _, _ in record.pending_writes}
    done: list[str] = []
    for task in record.tasks:
        finished = task.result is not None or (task.id in written and not task.interrupts)
        if finished and not task.error and task.name not in done:
            done.append(str(task.name))
    for task in record.tasks:
        if task.error and task.result is not None and task.name not in done:
            done.append(str(task.name))
    row = _Row(
        record.id,
        record.parent_id,
        record.step,
        record.source,
        tuple(record.next),
        len(record.pending_interrupts()),
        len(record.failed_tasks()),
        tuple(done),
        _named_writers(metadata),
        metadata.get(GRAPH_VERSION_KEY),
        record.created_at,
    )
    return _with_debug(row, record.debug)


def dag_data_of(thread: Thread) -> Dag:
    """The protocol's ``Dag`` of an already read :class:`Thread`."""
    marks = {record.id: _marks(thread, record) for record in thread}
    return _assemble(thread.thread_id, thread.checkpoint_ns, marks)


def _marks(thread: Thread, record: CheckpointRecord) -> DagNode:
    """What the DAG shows of one checkpoint, before it is placed (depth, lane, head, latest)."""
    parent = thread.parent(record)
    return DagNode(
        id=record.id,
        parent=None if record.id in thread.broken_links else record.parent_id,
        broken_parent=thread.broken_links.get(record.id),
        step=record.step,
        source=record.source,
        next=list(record.next),
        writers=thread.writers(record),
        interrupts=len(record.pending_interrupts()),
        errors=len(record.failed_tasks()),
        graph_changed=parent is not None and _graph_changed(parent, record),
        findings=len(record.findings),
        is_head=False,
        is_latest=False,
        depth=0,
        lane=0,
        created_at=record.created_at,
    )


def _graph_changed(parent: CheckpointRecord, record: CheckpointRecord) -> bool:
    """True when the checkpoint records a graph version other than its parent's."""
    version = record.debug.get(GRAPH_VERSION_KEY)
    before = parent.debug.get(GRAPH_VERSION_KEY)
    return version is not None and before is not None and version != before


def _assemble(thread_id: str, checkpoint_ns: str, marks: dict[str, DagNode]) -> Dag:
    """Place the checkpoints (the layout of :func:`dag_layout`, without building a graph)."""
    children, place, lanes = _placement({cid: mark["parent"] for cid, mark in marks.items()})
    latest = max(marks) if marks else None
    nodes: list[DagNode] = []
    for node_id, mark in marks.items():
        node = DagNode(**mark)
        node["depth"], node["lane"] = place[node_id]
        node["is_head"] = node_id not in children
        node["is_latest"] = node_id == latest
        nodes.append(node)
    nodes.sort(key=lambda n: (n["depth"], n["lane"], n["id"]))
    return Dag(
        thread_id=thread_id,
        checkpoint_ns=checkpoint_ns,
        nodes=nodes,
        depth=1 + max((n["depth"] for n in nodes), default=-1),
        lanes=lanes,
    )


def _placement(
    parents: dict[str, str | None],
) -> tuple[dict[str, list[str]], dict[str, tuple[int, int]], int]:
    """``(children, checkpoint id → (depth, lane), lanes)``: a column per depth, a lane per
    branch; the oldest child continues its parent's lane, each younger child (and each root
    after the first) starts a branch, and branches get lanes in the order they were created."""
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for node_id in sorted(parents):
        parent = parents[node_id]
        if parent is not None and parent in parents:
            children.setdefault(parent, []).append(node_id)
        else:
            roots.append(node_id)
    depth: dict[str, int] = {}
    branch_of: dict[str, str] = {}
    branch_starts: list[str] = []
    for root in roots:
        branch_starts.append(root)
        stack = [(root, 0, root)]
        while stack:
            node_id, d, branch = stack.pop()
            depth[node_id] = d
            branch_of[node_id] = branch
            for i, child in enumerate(children.get(node_id, ())):
                if i > 0:
                    branch_starts.append(child)
                stack.append((child, d + 1, branch if i == 0 else child))
    lanes = {start: i for i, start in enumerate(branch_starts[:1] + sorted(branch_starts[1:]))}
    place = {node_id: (depth[node_id], lanes[branch_of[node_id]]) for node_id in parents}
    return children, place, len(lanes)


def dag_wire_of(dag: Dag) -> dict[str, Any]:
    """The compact form of a protocol ``Dag`` (as :meth:`DagReader.wire` gives it)."""
    marks: dict[str, dict[str, Any]] = {node["id"]: dict(node) for node in dag["nodes"]}
    order = sorted(marks)
    index = {cid: i for i, cid in enumerate(order)}
    strings: dict[str, int] = {}
    lists: dict[tuple[str, ...], int] = {}

    def listed(names: list[str]) -> int:
        key = tuple(names)
        if key not in lists:
            for name in key:
                _intern(strings, name)
            lists[key] = len(lists)
        return lists[key]

    column = {name: [marks[cid][name] for cid in order] for name in DagNode.__annotations__}
    parents = [-1 if p is None else index.get(p, -1) for p in column["parent"]]
    return {
        "format": DAG_WIRE_FORMAT,
        "thread_id": dag["thread_id"],
        "checkpoint_ns": dag["checkpoint_ns"],
        "count": len(order),
        "depth": dag["depth"],
        "lanes": dag["lanes"],
        "id": order,
        "parent": parents,
        "step": column["step"],
        "source": [_intern(strings, s) for s in column["source"]],
        "next": [listed(n) for n in column["next"]],
        "writers": [listed(n) for n in column["writers"]],
        "node_depth": column["depth"],
        "lane": column["lane"],
        "created_at": column["created_at"],
        "interrupts": _sparse(column["interrupts"]),
        "errors": _sparse(column["errors"]),
        "findings": _sparse(column["findings"]),
        "graph_changed": [i for i, changed in enumerate(column["graph_changed"]) if changed],
        "broken_parent": _sparse(column["broken_parent"]),
        "missing_parent": [
            x
            for i, p in enumerate(column["parent"])
            if p is not None and parents[i] < 0
            for x in (i, p)
        ],
        "strings": list(strings),
        "lists": [[strings[n] for n in key] for key in lists],
    }


def pack_wire(wire: dict[str, Any]) -> dict[str, Any]:
    """``wire`` as the widget's traitlet holds it: ``{format, epoch, start, packed}`` with the
    compact form as UTF-8 JSON bytes, which ipywidgets sends as one binary buffer (it walks
    every list item of a plain value looking for buffers, and the comm encodes each one)."""
    text = json.dumps(wire, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return {
        "format": wire["format"],
        "epoch": wire.get("epoch"),
        "start": wire.get("start", 0),
        "packed": text.encode(),
    }


def unpack_wire(value: dict[str, Any]) -> dict[str, Any]:
    """The compact form from :func:`pack_wire`'s value (anything else as it is)."""
    packed = value.get("packed") if isinstance(value, dict) else None
    if isinstance(packed, (bytes, bytearray, memoryview)):
        return dict(json.loads(bytes(packed)))
    return value


_WIRE_COLUMNS = (
    "id",
    "parent",
    "step",
    "source",
    "next",
    "writers",
    "node_depth",
    "lane",
    "created_at",
)
_WIRE_SPARSE = ("interrupts", "errors", "findings", "broken_parent", "missing_parent")


def merge_wire(wire: dict[str, Any], tail: dict[str, Any] | None) -> dict[str, Any]:
    """``wire`` extended by ``tail`` (:meth:`DagReader.wire` with ``start``): the tail's
    checkpoints replace those from its start on. A tail of another epoch, or one that starts
    past the wire's end, is ignored (it belongs to another wire)."""
    if not tail or tail.get("format") != DAG_WIRE_FORMAT:
        return wire
    start = tail.get("start", 0)
    if tail.get("epoch") != wire.get("epoch") or not 0 <= start <= len(wire.get("id", ())):
        return wire
    merged = dict(tail)
    for key in _WIRE_COLUMNS:
        merged[key] = wire[key][:start] + tail[key]
    for key in _WIRE_SPARSE:
        pairs = wire.get(key, [])
        kept = [x for i in range(0, len(pairs), 2) if pairs[i] < start for x in pairs[i : i + 2]]
        merged[key] = kept + tail.get(key, [])
    merged["graph_changed"] = [i for i in wire["graph_changed"] if i < start] + tail[
        "graph_changed"
    ]
    merged["start"] = 0
    return merged


def dag_from_wire(wire: dict[str, Any], tail: dict[str, Any] | None = None) -> Dag:
    """The protocol's ``Dag`` from its compact form, extended by ``tail`` when given
    (:func:`merge_wire`; what ``js/src/dag-wire.js`` does); a ``Dag`` already plain
    (``{"nodes": [...]}``) is returned as it is."""
    if isinstance(wire, dict) and "format" not in wire and isinstance(wire.get("nodes"), list):
        return wire  # type: ignore[return-value]
    if not isinstance(wire, dict) or wire.get("format") != DAG_WIRE_FORMAT:
        got = wire.get("format") if isinstance(wire, dict) else type(wire).__name__
        raise ValueError(f"Not a DAG in the {DAG_WIRE_FORMAT!r} form (format {got!r}).")
    wire = merge_wire(unpack_wire(wire), unpack_wire(tail) if tail else tail)
    ids, parents, strings = wire["id"], wire["parent"], wire["strings"]
    lists = [[strings[n] for n in names] for names in wire["lists"]]
    has_child = {p for p in parents if p >= 0}
    sparse = {
        key: dict(zip(wire.get(key, [])[::2], wire.get(key, [])[1::2], strict=True))
        for key in _WIRE_SPARSE
    }
    changed = set(wire["graph_changed"])
    last = len(ids) - 1
    nodes = [
        DagNode(
            id=cid,
            parent=ids[parents[i]] if parents[i] >= 0 else sparse["missing_parent"].get(i),
            broken_parent=sparse["broken_parent"].get(i),
            step=wire["step"][i],
            source=strings[wire["source"][i]],
            next=list(lists[wire["next"][i]]),
            writers=list(lists[wire["writers"][i]]),
            interrupts=sparse["interrupts"].get(i, 0),
            errors=sparse["errors"].get(i, 0),
            graph_changed=i in changed,
            findings=sparse["findings"].get(i, 0),
            is_head=i not in has_child,
            is_latest=i == last,
            depth=wire["node_depth"][i],
            lane=wire["lane"][i],
            created_at=wire["created_at"][i],
        )
        for i, cid in enumerate(ids)
    ]
    nodes.sort(key=lambda n: (n["depth"], n["lane"], n["id"]))
    return Dag(
        thread_id=wire["thread_id"],
        checkpoint_ns=wire["checkpoint_ns"],
        nodes=nodes,
        depth=wire["depth"],
        lanes=wire["lanes"],
    )
