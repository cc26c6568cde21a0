"""Reading a thread's tree again and again, as a view that refreshes does: :class:`DagReader`."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from durable_debug._collector import collector_paused
from durable_debug.checkpoint.base import RunnableConfig, config_checkpoint_id
from durable_debug.checkpoint.outline import alatest_mark
from durable_debug.checkpoint.records import AS_NODE, FINDINGS, aread_records
from durable_debug.graph.findings import findings_of
from durable_debug.graph.ids import stored_task_id
from durable_debug.graph.version import GRAPH_VERSION_KEY
from durable_debug.inspect.access import GraphLike, SaverLike
from durable_debug.inspect.dag_shape import Dag, DagNode, placement
from durable_debug.inspect.dag_wire import DAG_WIRE_FORMAT, _intern, _sparse
from durable_debug.inspect.stored import scheduled_tasks, stored_subscribers, subscribers_of
from durable_debug.inspect.thread import (
    CheckpointRecord,
    _thread_of,
    aread_thread,
    checkpointer_of,
    loop_links,
    thread_config,
)

if TYPE_CHECKING:
    import networkx as nx

    from durable_debug.checkpoint.outline import OutlineRow

__all__ = ["DagReader"]

_T = TypeVar("_T")


def _nothing() -> None:
    """What :meth:`DagReader.arefresh` builds after the read: nothing."""


class DagReader:
    """Reads one thread's ``Dag`` again and again, as a view that refreshes does.

    On a saver that gives outlines (:class:`~durable_debug.checkpoint.base.OutlineSaver`:
    durable_debug's SQLite, PostgreSQL, Redis and memory savers) the tree comes from
    checkpoint rows, metadata, trigger channels and the writes' channels only
    (:func:`~durable_debug.checkpoint.outline.aread_outline`: no state value is decoded), and
    each read after the first asks only for the checkpoints
    from the newest one seen on (plus the parents of newer ones, whose writes grew). Any
    other saver is read in full the first time
    (:func:`~durable_debug.inspect.thread.aread_thread`), then from the newest one seen on.
    The tree is kept as one column per field in id order, so checkpoints newer than every
    one read are appended and placed without touching the others, and :meth:`wire` hands
    the columns out as they are. An outline row carries the checkpoint's debug record
    (graph version, findings, the node an update was applied as), read with the row.

        reader = DagReader(graph, {"configurable": {"thread_id": "job-1"}})
        dag = await reader.aread()          # the whole tree
        dag = await reader.aread()          # only what was written since
        wire = reader.wire()                # the same tree in the widget's compact form
    """

    def __init__(self, graph: GraphLike, config: RunnableConfig) -> None:
        self.graph = graph
        self.thread_id, self.checkpoint_ns = _thread_of(config, "DagReader")
        self.reads = 0
        """Reads of the store so far (one per :meth:`aread`)."""
        self.last_read = 0
        """Checkpoints the last read returned (the whole thread, or only the newer ones)."""
        self.outlined = False
        """Whether the last read was an outline (no state decoded), not a full read."""
        self.subscribers = subscribers_of(graph)
        """The channels besides the engine's trigger channels that run the graph's nodes (a
        ``Pregel``'s), with the nodes each runs: the outline reads them as triggers. Without
        the graph (a saver seen as one), those the structure in the first outline's debug
        records lists."""
        self._from_records = not isinstance(getattr(graph, "nodes", None), Mapping)
        """No graph to ask: look for the subscriptions in the first outline read."""
        self.forget()

    async def alatest_mark(self) -> tuple[str, int]:
        """``(newest checkpoint id, its pending writes)``: a cheap mark of the thread's progress
        to watch (one index query, or one script on Redis, on durable_debug's savers; else the
        newest checkpoint read through the saver)."""
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
        return await self.arefresh_then(self.dag)

    async def arefresh(self) -> None:
        """Read what was written since the last read (everything, the first time)."""
        await self.arefresh_then(_nothing)

    async def arefresh_then(self, then: Callable[[], _T]) -> _T:
        """:meth:`arefresh`, then ``then()`` (a view of what was read: :meth:`dag`,
        :meth:`networkx`) in the same pause of the garbage collector as the merge of the rows
        read, with no await inside it; its result.

        The rows read are gone by the end of the pause, so the collection that follows walks
        only what is kept and what ``then`` returned, once.
        """
        from durable_debug.checkpoint.outline import aread_outline_into

        saver = checkpointer_of(self.graph)
        since = self._order[-1] if self._order else None
        self.reads += 1
        done: list[_T] = []
        ns = self.checkpoint_ns

        wanted: list[dict[str, tuple[str, ...]] | None] = [self.subscribers or None]
        look = self._from_records and since is None and wanted[0] is None

        def take(listed: list[OutlineRow]) -> None:
            if look and wanted[0] is None:
                found = stored_subscribers([row.debug for row in listed])
                if found:  # a Pregel's thread: read again, with its subscriptions
                    self.subscribers = wanted[0] = found
                    listed.clear()
                    return
            self.last_read = len(listed)
            marks: dict[int, tuple[Any, ...]] = {}
            subscribers = wanted[0]
            self._take([_row_of_outline(row, ns, row.debug, marks, subscribers) for row in listed])
            listed.clear()  # the rows go before the collector is back on
            done.append(then())

        thread, checkpoint_ns = self.thread_id, self.checkpoint_ns
        self.outlined = await aread_outline_into(
            saver, thread, checkpoint_ns, take, since=since, subscribers=wanted[0]
        )
        if self.outlined and not done:  # the subscriptions were found in the records
            self.outlined = await aread_outline_into(
                saver, thread, checkpoint_ns, take, subscribers=wanted[0]
            )
        if self.outlined:
            if not self._order and checkpoint_ns:
                _check_namespace(self.graph, checkpoint_ns)
            return done[0]
        if self._order:
            read = await self._aread_since(saver, self._order[-1])
        else:
            read = list(
                await aread_thread(self.graph, thread_config(self.thread_id, self.checkpoint_ns))
            )
        self.last_read = len(read)
        with collector_paused():  # many small containers, no cycles: no collection meanwhile
            self._take([_row_of(record) for record in read])
            del read
            return then()

    async def _aread_since(self, saver: SaverLike, newest: str) -> list[CheckpointRecord]:
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
            children, place, self._lanes = placement(parents)
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
        broken = self._broken and (parent in self._broken or cid in self._broken)
        if parent is None or at is None or broken:
            depth, lane = 0, self._lanes
            self._lanes += 1
        else:
            siblings = self._children.get(parent)
            depth, lane = depths[at] + 1, lanes[at]
            if siblings is None:
                self._children[parent] = [cid]
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

    def history_rows(self) -> list[dict[str, Any]]:
        """One row per checkpoint read, oldest first, with the columns of
        :data:`~durable_debug.inspect.frames.HISTORY_COLUMNS` but ``failure`` (which needs the
        failed tasks' errors): the table :func:`~durable_debug.inspect.frames.ahistory_frame`
        builds from an outline."""
        col, rows, children = self._col, self._rows, self._children
        strings, lists = list(self._strings), [tuple(key) for key in self._lists]
        steps, sources, nexts, writers = col["step"], col["source"], col["next"], col["writers"]
        interrupts, errors, found = col["interrupts"], col["errors"], col["findings"]
        depths, lanes, times = col["node_depth"], col["lane"], col["created_at"]
        return [
            {
                "checkpoint_id": cid,
                "parent_id": rows[cid].parent_id,
                "step": steps[i],
                "source": strings[sources[i]],
                "next": lists[nexts[i]],
                "writers": lists[writers[i]],
                "interrupts": interrupts[i],
                "errors": errors[i],
                "depth": depths[i],
                "lane": lanes[i],
                "is_head": cid not in children,
                "created_at": times[i],
                "findings": found[i],
            }
            for i, cid in enumerate(self._order)
        ]

    def ids(self) -> list[str]:
        """Every checkpoint id read, oldest first."""
        return list(self._order)

    def dag(self) -> Dag:
        """The protocol's ``Dag`` of what was read (nodes sorted by depth, lane): what
        :func:`~durable_debug.inspect.dag_wire.dag_from_wire` makes of :meth:`wire`, built
        from the columns directly."""
        col, order = self._col, self._order
        strings = list(self._strings)
        lists = [list(key) for key in self._lists]
        parents, broken, steps, sources = (
            col["parent"],
            col["broken_parent"],
            col["step"],
            col["source"],
        )
        nexts, writers, interrupts, errors = (
            col["next"],
            col["writers"],
            col["interrupts"],
            col["errors"],
        )
        changed, found, depths, lanes = (
            col["graph_changed"],
            col["findings"],
            col["node_depth"],
            col["lane"],
        )
        times = col["created_at"]
        has_child = set(parents)
        last = len(order) - 1
        nodes: list[DagNode] = [
            {
                "id": cid,
                "parent": parents[i],
                "broken_parent": broken[i] or None,
                "step": steps[i],
                "source": strings[sources[i]],
                "next": list(lists[nexts[i]]),
                "writers": list(lists[writers[i]]),
                "interrupts": interrupts[i] or 0,
                "errors": errors[i] or 0,
                "graph_changed": bool(changed[i]),
                "findings": found[i] or 0,
                "is_head": cid not in has_child,
                "is_latest": i == last,
                "depth": depths[i],
                "lane": lanes[i],
                "created_at": times[i],
            }
            for i, cid in enumerate(order)
        ]
        nodes.sort(key=_placed)
        return Dag(
            thread_id=self.thread_id,
            checkpoint_ns=self.checkpoint_ns,
            nodes=nodes,
            depth=1 + max(depths, default=-1),
            lanes=self._lanes,
        )

    def networkx(self) -> nx.DiGraph:
        """What was read as a ``networkx.DiGraph`` (see
        :func:`~durable_debug.inspect.dag.checkpoint_dag`): one node per checkpoint with its
        marks, config and metadata, one edge parent → child (none for a link that loops)."""
        with collector_paused():  # plain dicts, no cycles: no collection meanwhile
            return self._networkx(copy_metadata=True)

    def networkx_handed_over(self) -> nx.DiGraph:
        """:meth:`networkx`, for a caller that lets the reader go at once (:meth:`forget`):
        each node holds the metadata dict read, not a copy, and the reader is left empty."""
        with collector_paused():
            dag = self._networkx(copy_metadata=False)
            self.forget()
            return dag

    def _networkx(self, *, copy_metadata: bool) -> nx.DiGraph:
        import networkx as nx

        col, rows, index, order = self._col, self._rows, self._index, self._order
        strings, lists = list(self._strings), [list(key) for key in self._lists]
        parents, steps, sources = col["parent"], col["step"], col["source"]
        nexts, writers, times = col["next"], col["writers"], col["created_at"]
        interrupts, errors, broken = col["interrupts"], col["errors"], col["broken_parent"]
        thread_id, checkpoint_ns = self.thread_id, self.checkpoint_ns
        dag = nx.DiGraph(thread_id=thread_id, checkpoint_ns=checkpoint_ns)
        # Nodes without attributes take networkx's short path; each node's attribute dict is
        # then put in its place whole, and each edge's (empty) one on both ends, as networkx
        # keeps them (``_node``, ``_succ``, ``_pred``: the structure its docs describe for
        # subclasses). Through add_node / add_edge each costs a copy and updates.
        dag.add_nodes_from(order)
        node_attrs: dict[str, Any] = dag._node
        for i, cid in enumerate(order):
            row = rows[cid]
            config = row.config
            if config is None:
                config = {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": checkpoint_ns,
                        "checkpoint_id": cid,
                    }
                }
            node_attrs[cid] = {
                "id": cid,
                "parent": parents[i],
                "broken_parent": broken[i],
                "step": steps[i],
                "source": strings[sources[i]],
                "next": list(lists[nexts[i]]),
                "writers": list(lists[writers[i]]),
                "interrupts": interrupts[i],
                "errors": errors[i],
                "created_at": times[i],
                "config": config,
                "metadata": dict(row.metadata or {}) if copy_metadata else row.metadata or {},
            }
        succ: dict[str, dict[str, Any]] = dag._succ
        pred: dict[str, dict[str, Any]] = dag._pred
        for i, parent in enumerate(parents):
            if parent in index:
                child = order[i]
                succ[parent][child] = pred[child][parent] = {}
        return dag

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


def _placed(node: DagNode) -> tuple[int, int, str]:
    """The order of a ``Dag``'s nodes: by depth, lane, id."""
    return node["depth"], node["lane"], node["id"]


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


def _reads_history(graph: GraphLike) -> bool:
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
    metadata: Mapping[str, Any] | None = None
    """Its metadata as stored (source, step, parents and any user metadata)."""
    config: Any = None
    """The config a full read gave it; None for an outline row (the plain address)."""


def _with_debug(row: _Row, debug: Mapping[str, Any] | None) -> _Row:
    """``row`` with what the checkpoint's debug record says (``checkpoint/records.py``):
    the node an update was applied as, the graph version, the findings."""
    if not debug:
        return row
    named, version, findings = _debug_marks(debug, row.named, row.version)
    return row._replace(named=named, version=version, findings=findings)


def _debug_marks(
    debug: Mapping[str, Any] | None, named: tuple[str, ...] | None, version: Any
) -> tuple[tuple[str, ...] | None, Any, int]:
    """``(writers named, graph version, findings)`` once a debug record overrides what the
    metadata says: the node an update was applied as, the version, how many findings."""
    if not debug:
        return named, version, 0
    if debug.get(AS_NODE):
        named = (str(debug[AS_NODE]),)
    version = debug.get(GRAPH_VERSION_KEY, version)
    return named, version, len(findings_of(debug)) if debug.get(FINDINGS) else 0


def _named_writers(metadata: dict[str, Any]) -> tuple[str, ...] | None:
    """The nodes a checkpoint's metadata says wrote it (see :meth:`Thread.writers`): an older
    durable_debug stored ``as_node`` there; now the debug record holds it (:func:`_with_debug`)."""
    if metadata.get(AS_NODE):
        return (str(metadata[AS_NODE]),)
    if isinstance(metadata.get("writes"), dict):
        return tuple(str(node) for node in metadata["writes"])
    return None


def _row_of_outline(
    row: Any,
    checkpoint_ns: str,
    debug: Mapping[str, Any] | None,
    marks: dict[int, tuple[Any, ...]] | None = None,
    subscribers: Mapping[str, tuple[str, ...]] | None = None,
) -> _Row:
    """A :class:`_Row` from an outline row and the checkpoint's debug record (if any): the
    tasks are matched to their writes by the ids the engine gives them
    (:func:`~durable_debug.graph.ids.stored_task_id`).

    ``marks``: what each debug record read says, by the record's identity, for the rows of
    one read (rows that store the same record text share one record; it is read once).
    ``subscribers``: the channels besides the engine's that run nodes (a ``Pregel``'s).
    """
    checkpoint_id, parent_id, metadata, ts, triggers, versions, seen, tasks, _ = row
    step = int(metadata.get("step", -1))
    interrupts = errors = 0
    names: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    if triggers:
        scheduled = scheduled_tasks(triggers, versions, seen, subscribers)
        names = tuple([name for name, _ in scheduled])
        if tasks:
            finished: list[str] = []
            failed_done: list[str] = []
            for name, path in scheduled:
                _, saved_as = stored_task_id(
                    checkpoint_id,
                    checkpoint_ns,
                    step + 1,
                    name,
                    path,
                    versions,
                    seen,
                    tasks,
                    subscribers,
                )
                task = tasks.get(saved_as)
                if task is None:
                    continue
                if not task.finished:
                    interrupts += task.interrupts
                if task.failed:
                    errors += 1
                    if task.finished and name not in failed_done:
                        failed_done.append(name)
                elif (task.finished or not task.interrupts) and name not in finished:
                    finished.append(name)
            finished += [name for name in failed_done if name not in finished]
            done = tuple(finished)
    said = None if marks is None or not debug else marks.get(id(debug))
    if said is None and marks is not None and debug:
        as_node = (str(debug[AS_NODE]),) if debug.get(AS_NODE) else None
        findings = len(findings_of(debug)) if debug.get(FINDINGS) else 0
        said = marks[id(debug)] = (debug, as_node, GRAPH_VERSION_KEY in debug, findings)
    if said is None:
        named, version, findings = _debug_marks(
            debug, _named_writers(metadata), metadata.get(GRAPH_VERSION_KEY)
        )
    else:
        record, named, has_version, findings = said
        if named is None:
            named = _named_writers(metadata)
        version = record[GRAPH_VERSION_KEY] if has_version else metadata.get(GRAPH_VERSION_KEY)
    return _Row(
        checkpoint_id,
        parent_id,
        step,
        str(metadata.get("source", "")),
        names,
        interrupts,
        errors,
        done,
        named,
        version,
        ts,
        findings,
        metadata,
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
        metadata=metadata,
        config=record.config,
    )
    return _with_debug(row, record.debug)


def _check_namespace(graph: Any, namespace: str) -> None:
    """Raise, as the full read does, when ``graph`` (durable_debug's) runs no subgraph at an
    empty ``namespace``: a name that cannot be a subgraph's is said to be one, not read as a
    namespace that has no checkpoints yet."""
    from durable_debug.graph.pregel import CompiledStateGraph
    from durable_debug.graph.subgraph import graph_at

    if isinstance(graph, CompiledStateGraph):
        graph_at(graph, namespace)
