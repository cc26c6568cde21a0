"""The time-travel widget: a thread's checkpoint DAG in a notebook, to inspect, fork, rerun, resume.

    In [1]: from durable_debug import TimeTravel
    In [2]: tt = TimeTravel(g, {"configurable": {"thread_id": "hitl-1"}})
    In [3]: tt              # click a checkpoint: state, blob versions, pending writes, interrupts
                            # edit a value + Fork, Rerun from here, answer interrupts + Resume
    In [4]: print(tt.code)  # every UI action as Python, to replay the session
    await graph.aupdate_state({'configurable': {'thread_id': 'hitl-1', ...}}, {'prep': 'cheap'})
    await graph.ainvoke(None, {'configurable': {'thread_id': 'hitl-1', ...}})

The code awaits the async methods when the graph's saver has them, and calls the sync ones
for a sync-only saver such as LangGraph's ``SqliteSaver`` (``durable_debug.widget_code``
writes it).

State lives in traitlets (``_dag``, ``_selected``, ``_detail``, ``_running``…); the front end
(``js/widget.js``) sends requests ``{uuid, kind, ...}`` over ``msg:custom`` and gets
``{uuid, result}`` or ``{uuid, error}`` back. docs/widget-protocol.md is the contract. Every
read goes through :mod:`durable_debug.inspect`, so any saver and a LangGraph compiled graph work.
Runs started here are asyncio tasks on the kernel's loop: the kernel stays free meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import importlib.util
import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import anywidget
import traitlets

from durable_debug._sync import run_in_background
from durable_debug.checkpoint.base import config_checkpoint_ns
from durable_debug.checkpoint.names import NS_END, NS_SEP, PREVIOUS
from durable_debug.graph.types import END
from durable_debug.inspect.access import (
    GraphLike,
    RunnableGraphLike,
    astream,
    aupdate_state,
    has_async_methods,
)
from durable_debug.inspect.dag import Dag, DagReader, dag_from_wire, pack_wire
from durable_debug.inspect.detail import (
    Detail,
    acheckpoint_detail,
    clip_detail,
    reducer_name,
    reducers_of,
)
from durable_debug.inspect.diff import adiff
from durable_debug.inspect.diff_view import diff_view
from durable_debug.inspect.html import widget_asset_paths
from durable_debug.inspect.jsonable import clip, to_jsonable
from durable_debug.inspect.live_text import LiveText, add_chunk_listener
from durable_debug.inspect.names import short_name
from durable_debug.inspect.own_store import reading_graph, store_gone_message
from durable_debug.inspect.recorder import NodeCount, Recorder
from durable_debug.inspect.replay import TaskRun, areplay_source, debug_task, use_replay
from durable_debug.inspect.thread import (
    CheckpointRecord,
    Thread,
    aread_checkpoint,
    asubgraph_namespaces,
    checkpointer_of,
    thread_config,
)
from durable_debug.inspect.topology import atopology_data, node_names
from durable_debug.widget_code import ActionCode, address_config, entrypoint_return

__all__ = ["TimeTravel"]

logger = logging.getLogger(__name__)

_ESM, _CSS = widget_asset_paths()
_REFRESH_EVERY = 0.25
"""Seconds between DAG refreshes while a run writes checkpoints (the last one always shows)."""
_LIVE_EVERY = 0.1
"""Seconds between updates of ``_live_text`` while a chat model streams (the last text of a
message always shows)."""
_TAIL_MAX = 2_000
"""Checkpoints a refresh sends as ``_dag_tail`` at most (or a quarter of the tree, if more)
before it sends the whole tree again."""
_PAGE_CHARS = 100_000
"""Characters of a string one "Show all" page holds (Show more asks for the next)."""
_PAGE_ITEMS = 200
"""Items of a list, or keys of a dict, one "Show all" page holds."""
_MAX_SLA_S = 1e9
"""The longest SLA the health panel accepts (about 31 years; a timedelta holds no infinity)."""


def _chunk_listener(
    widget: Callable[[], TimeTravel | None],
) -> Callable[[Any, Mapping[str, Any], bool], None]:
    """A chunk listener (``inspect.live_text.add_chunk_listener``) that hands the chunks of
    the widget's thread to the widget on the loop its watch runs on; ``widget`` is a weak
    reference, so the listener does not keep a widget alive."""

    def listener(message: Any, metadata: Mapping[str, Any], final: bool) -> None:
        shown, thread_id = widget(), metadata.get("thread_id")
        loop = shown._watch_loop if shown is not None else None
        if shown is None or loop is None or thread_id is None or str(thread_id) != shown._thread_id:
            return  # not shown, or a model called outside a run of its thread
        if shown._run_going():  # decided now, while the model runs: a run started here
            return  # shows its own chunks through its stream
        with contextlib.suppress(RuntimeError):  # the loop closed
            loop.call_soon_threadsafe(shown._watched_chunk, message, dict(metadata), final)

    return listener


_HAS_LANGCHAIN = importlib.util.find_spec("langchain_core") is not None
"""Runs started here also stream ``"messages"`` (a chat model's tokens) when LangChain, which
every chat model builds on, is installed."""


class RequestError(Exception):
    """A request the widget refuses; its text is shown to the user as it is."""


class TimeTravel(anywidget.AnyWidget):
    """The checkpoint DAG of one thread of ``graph``, with inspect / fork / rerun / resume.

    ``config`` names the thread (``{"configurable": {"thread_id": ...}}``); ``counts`` are
    execution counts per node (``Recorder.counts(thread_id)``) for the topology view.
    """

    _esm = _ESM
    _css = _CSS
    _thread_id = traitlets.Unicode("").tag(sync=True)
    _dag = traitlets.Dict(default_value={"thread_id": "", "nodes": [], "depth": 0, "lanes": 0}).tag(
        sync=True
    )
    """The thread's tree in the compact form ``inspect.dag.DAG_WIRE_FORMAT``, packed as one
    binary buffer (``inspect.dag.pack_wire``; see :attr:`dag`)."""
    _dag_tail = traitlets.Dict(default_value={}).tag(sync=True)
    """The checkpoints appended (or marked again) since ``_dag`` was sent, from index
    ``start`` on, packed the same way; ``{}`` when none: a refresh during a run sends only
    them."""
    _selected = traitlets.Unicode("").tag(sync=True)
    _selected_ns = traitlets.Unicode("").tag(sync=True)
    _detail = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)
    _topology = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)
    _running = traitlets.Bool(False).tag(sync=True)
    _status = traitlets.Unicode("").tag(sync=True)
    _error = traitlets.Unicode("").tag(sync=True)
    _code: traitlets.List[dict[str, str]] = traitlets.List(default_value=[]).tag(sync=True)
    _readonly = traitlets.Bool(False).tag(sync=True)
    _live_text: traitlets.List[dict[str, Any]] = traitlets.List(default_value=[]).tag(sync=True)
    """The text the chat models of a run are writing (a run started here, or one of this
    thread the shown widget watches, when its model streams), one entry per (node, message id)
    (``inspect.live_text.LiveEntry``); ``[]`` once the step's checkpoint lands or the run
    ends."""
    _breakpoints: traitlets.Dict[str, Any] = traitlets.Dict(
        default_value={"before": [], "after": []}
    ).tag(sync=True)

    def __init__(
        self,
        graph: RunnableGraphLike,
        config: Mapping[str, Any],
        *,
        counts: Any = None,
        graph_name: str | None = None,
    ) -> None:
        configurable = dict((config or {}).get("configurable") or {})
        if not configurable.get("thread_id"):
            raise ValueError(
                "TimeTravel needs a config naming the thread, e.g. "
                'TimeTravel(graph, {"configurable": {"thread_id": "demo-1"}}).'
            )
        super().__init__(_thread_id=str(configurable["thread_id"]))
        self.graph = graph
        self.graph_name = graph_name or _user_name_of(graph) or "graph"
        """What the generated code calls the graph: ``graph_name``, else the notebook variable
        that holds it (when made from a cell), else ``graph``."""
        self.config = thread_config(self._thread_id, str(configurable.get("checkpoint_ns") or ""))
        self._counts = dict(counts or {})
        self._reads, self._close_reads = reading_graph(graph)
        """The graph the widget reads through: ``graph`` with a saver on a connection of its
        own where it can have one (``inspect.own_store``), so the widget goes on reading when
        a later cell closes the app's connection; writes go through ``graph`` itself."""
        weakref.finalize(self, self._close_reads)
        self._reader = DagReader(self._reads, self.config)
        self._tail_start = 0
        self._mark: tuple[str, int] | None = None
        self._recorder = Recorder()
        self._tasks: set[Any] = set()
        self._run_task: asyncio.Task[None] | None = None
        self._select_seq = 0
        self._live = LiveText()
        self._live_sent = 0.0
        self._live_later: asyncio.TimerHandle | None = None
        self._watch_loop: asyncio.AbstractEventLoop | None = None
        """The loop the front end's watch requests come on (None before the first): where
        the chunks of a run started elsewhere are shown."""
        self._watched_done: set[str] = set()
        """Ids of the messages of a watched run whose model has ended."""
        weakref.finalize(self, add_chunk_listener(_chunk_listener(weakref.ref(self))))
        self.on_msg(self._on_custom_msg)
        self._loaded = self._spawn(self._aload())

    # -- public ------------------------------------------------------------------------------

    async def arefresh(self) -> None:
        """Re-read the thread: the DAG, the topology and the selected checkpoint's detail."""
        self._reader.forget()
        await self._refresh_dag()
        self._topology = dict(await atopology_data(self._reads, self._all_counts()))
        if self._selected:
            await self._show(self._selected, self._selected_ns)

    async def _aload(self) -> None:
        """The first read; a failure is shown in the widget (and raised by ``aready``)."""
        try:
            await self.arefresh()
        except Exception as error:
            what = f"Cannot read thread {self._thread_id!r}"
            self._error = store_gone_message(error, what) or (
                f"{what}: {type(error).__name__}: {error}"
            )
            raise

    async def aready(self) -> None:
        """Wait until the thread has been read once (the constructor starts that read)."""
        loaded = self._loaded
        await (loaded if isinstance(loaded, asyncio.Future) else asyncio.wrap_future(loaded))

    @property
    def dag(self) -> Dag:
        """The thread's checkpoint tree as shown: the protocol's ``Dag`` (``_dag`` travels in
        a compact form, see ``inspect.dag.DAG_WIRE_FORMAT``)."""
        return dag_from_wire(self._dag, self._dag_tail)

    @property
    def code(self) -> str:
        """The Python equivalent of every action done in the widget, oldest first."""
        return "\n".join(entry["code"] for entry in self._code)

    def debug(self, checkpoint_id: str, node: str, **kwargs: Any) -> TaskRun:
        """Run the task of ``node`` that runs from ``checkpoint_id`` (an id or unique prefix)
        once more under ``pdb``, with its exact input and its recorded model and tool calls
        (``durable_debug.inspect.debug_task``; ``kwargs`` go to it). Nothing is saved."""
        config = {"configurable": {**self.config.get("configurable", {})}}
        config["configurable"]["checkpoint_id"] = checkpoint_id
        return debug_task(self.graph, config, node, **kwargs)

    def __repr__(self) -> str:
        if not self._loaded.done():  # shown right after construction: the read is under way
            return f"<TimeTravel thread {self._thread_id!r}>"
        return f"<TimeTravel thread {self._thread_id!r}: {len(self._checkpoint_ids())} checkpoints>"

    # -- requests ----------------------------------------------------------------------------

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """Answer one ``msg:custom`` request without blocking the kernel."""
        if isinstance(content, Mapping):
            self._spawn(self._answer(dict(content)))

    async def _answer(self, request: dict[str, Any]) -> None:
        uuid, kind = request.get("uuid"), request.get("kind")
        handler = REQUESTS.get(kind) if isinstance(kind, str) else None
        try:
            if handler is None:
                raise RequestError(
                    f"Unknown request {kind!r}: the widget answers {', '.join(REQUESTS)}; "
                    "reload the page if its front end is older."
                )
            self.send({"uuid": uuid, "result": await handler(self, request)})
        except RequestError as error:
            self.send({"uuid": uuid, "error": str(error)})
        except Exception as error:  # anything the engine or saver raised: say it as it is
            logger.debug("request %s failed", kind, exc_info=True)
            self.send(
                {
                    "uuid": uuid,
                    "error": store_gone_message(error, f"{kind} failed")
                    or f"{kind} failed: {type(error).__name__}: {error}",
                }
            )

    async def _do_select(self, request: Mapping[str, Any]) -> Any:
        detail = await self._show(_field(request, "checkpoint_id"), self._ns_of(request))
        return {"checkpoint_id": detail["id"]}  # the detail itself travels once, as _detail

    # -- subgraphs ------------------------------------------------------------------------

    async def _do_subgraphs(self, _request: Mapping[str, Any]) -> Any:
        """The thread's subgraph namespaces, parents first: each with the node that ran it and
        the checkpoint of the enclosing namespace its task ran from (None if not recorded)."""
        found = await asubgraph_namespaces(self._reads, self._thread_id)
        return {
            "namespaces": [
                {
                    "checkpoint_ns": ns,
                    "enclosing": ns.rpartition(NS_SEP)[0],
                    "node": ns.rpartition(NS_SEP)[2].partition(NS_END)[0],
                    "parent": parent,
                }
                for ns, parent in found.items()
            ]
        }

    async def _do_subgraph(self, request: Mapping[str, Any]) -> Any:
        """One subgraph namespace's own checkpoint DAG (collapsed under its task until asked)."""
        namespace = self._ns_of(request)
        if not namespace:
            raise RequestError(
                "The 'subgraph' request needs 'checkpoint_ns' (a subgraph namespace, "
                '"node:task_id").'
            )
        dag = await DagReader(self._reads, self._ns_config(namespace)).aread()
        if not dag["nodes"]:
            raise RequestError(
                f"Thread {self._thread_id!r} has no checkpoint in namespace {namespace!r}."
            )
        return {"checkpoint_ns": namespace, "dag": dict(dag)}

    def _ns_of(self, request: Mapping[str, Any]) -> str:
        """The namespace a request names (``checkpoint_ns``), else the widget's own."""
        namespace = request.get("checkpoint_ns")
        if namespace is None:
            return str(self.config["configurable"].get("checkpoint_ns") or "")
        if not isinstance(namespace, str):
            raise RequestError(
                f'\'checkpoint_ns\' must be a string ("" or "node:task_id"), not {namespace!r}.'
            )
        return namespace

    def _ns_config(self, namespace: str) -> dict[str, Any]:
        return dict(thread_config(self._thread_id, namespace))

    async def _ids_in(self, namespace: str) -> set[str]:
        """The checkpoint ids of one namespace of the thread (the widget's own: its DAG)."""
        if namespace == str(self.config["configurable"].get("checkpoint_ns") or ""):
            return self._checkpoint_ids()
        dag = await DagReader(self._reads, self._ns_config(namespace)).aread()
        return {str(node["id"]) for node in dag["nodes"]}

    async def _do_value(self, request: Mapping[str, Any]) -> Any:
        """One channel's whole value ("show all" on a value the detail shows cut)."""
        _, record = await self._checkpoint(_field(request, "checkpoint_id"), self._ns_of(request))
        channel = request.get("channel")
        values = record.values
        if not isinstance(channel, str) or channel not in values:
            raise RequestError(
                f"Checkpoint {record.id} of thread {self._thread_id!r} has no value for channel "
                f"{channel!r} (its channels: {', '.join(values) or 'none'})."
            )
        value = to_jsonable(values[channel])
        if "page" not in request:  # the whole value (Edit of a value the detail shows cut)
            return {"checkpoint_id": record.id, "channel": channel, "value": value}
        offset = request.get("page")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise RequestError(
                f"The 'value' request's page is the offset to read from, a whole number from 0 "
                f"(got {offset!r})."
            )
        return {"checkpoint_id": record.id, "channel": channel, **_page(value, offset)}

    async def _do_diff(self, request: Mapping[str, Any]) -> Any:
        a, b = _field(request, "a"), _field(request, "b")
        config = self._ns_config(self._ns_of(request))
        return diff_view(await adiff(a, b, self._reads, config))

    async def _do_fork(self, request: Mapping[str, Any]) -> Any:
        namespace = self._ns_of(request)
        thread, record = await self._checkpoint(_field(request, "checkpoint_id"), namespace)
        edits = request.get("edits") or {}
        as_node = request.get("as_node") or None
        if not edits and as_node is None:
            raise RequestError("Nothing to fork: edit a channel's value or choose a node.")
        values = {channel: _parse(text, f"Channel {channel!r}") for channel, text in edits.items()}
        channels = thread.state_channels()
        unknown = [channel for channel in values if channel not in channels]
        if unknown:
            raise RequestError(
                f"The state schema has no channel {unknown[0]!r} (its channels: "
                f"{', '.join(channels)}); nothing was written."
            )
        replace = self._replaced(request, values)
        update = {
            channel: _overwrite_class(self.graph)(value) if channel in replace else value
            for channel, value in values.items()
        }
        entrypoint = set(channels) == {END, PREVIOUS}  # an @entrypoint thread: return, previous
        if entrypoint:
            update = _entrypoint_update(self.graph, update, record.values)
        try:
            written = await aupdate_state(self.graph, record.config, update, as_node)
        except Exception as error:
            what = "The fork was refused, nothing was written"
            raise RequestError(
                store_gone_message(error, what) or f"{what}: {type(error).__name__}: {error}"
            ) from error
        new_id = str(written["configurable"]["checkpoint_id"])
        if entrypoint:
            code = self._writer().fork_entrypoint(
                record.config, values, record.values, as_node=as_node
            )
        else:
            code = self._writer().fork(
                record.config, values, replace=replace, reducers=self._reducers(), as_node=as_node
            )
        self._add_code("fork", code)
        await self._refresh_dag()
        await self._show(new_id, self._ns_of(request))
        return {"checkpoint_id": new_id, "checkpoint_ns": self._ns_of(request), "code": code}

    async def _do_preview(self, request: Mapping[str, Any]) -> Any:
        """The value a channel would have after the fork: through its reducer, or replaced."""
        _, record = await self._checkpoint(_field(request, "checkpoint_id"), self._ns_of(request))
        channel = request.get("channel")
        if not isinstance(channel, str) or not channel:
            raise RequestError("The 'preview' request needs 'channel' (a state channel's name).")
        value = _parse(request.get("text"), f"Channel {channel!r}")
        reducer = reducers_of(self.graph).get(channel)
        replace = channel in self._replaced(request, {channel: value})
        if reducer is None or replace:
            result = value
        else:
            current = record.values.get(channel)
            try:
                result = value if current is None else reducer(current, value)
            except Exception as error:
                raise RequestError(
                    f"The reducer of channel {channel!r} ({reducer_name(reducer)}) refused "
                    f"this value: {type(error).__name__}: {error}. Nothing was written."
                ) from error
        shown, cut = clip(to_jsonable(result))
        return {"channel": channel, "value": shown, "clipped": cut}

    def _reducers(self) -> dict[str, str]:
        return {channel: reducer_name(fn) for channel, fn in reducers_of(self.graph).items()}

    def _replaced(self, request: Mapping[str, Any], values: Mapping[str, Any]) -> set[str]:
        """The edited reducer channels the user chose to replace (``modes``: channel →
        "append" or "replace"; a reducer channel without a mode goes through its reducer)."""
        modes = request.get("modes") or {}
        if not isinstance(modes, Mapping):
            raise RequestError('\'modes\' must map a channel to "append" or "replace".')
        reducers = self._reducers()
        replace: set[str] = set()
        for channel, mode in modes.items():
            if channel not in values:
                continue
            if mode not in ("append", "replace"):
                raise RequestError(
                    f'Channel {channel!r}: mode {mode!r} is neither "append" (through the '
                    'reducer) nor "replace"; nothing was written.'
                )
            if mode == "replace" and channel in reducers:
                replace.add(channel)
        return replace

    async def _do_rerun(self, request: Mapping[str, Any]) -> Any:
        _, record = await self._checkpoint(_field(request, "checkpoint_id"), self._ns_of(request))
        if not record.next:
            raise RequestError(
                f"Checkpoint {record.id} has nothing left to run (its next is empty): pick an "
                "earlier checkpoint, or fork this one with edited values."
            )
        replay = bool(request.get("replay"))  # model and tool calls from the recording
        code = self._writer().rerun(
            record.config, self._breaks(), replay_thread=self._thread_id if replay else None
        )
        return self._start(None, record, "rerun", code, replay=replay)

    async def _do_resume(self, request: Mapping[str, Any]) -> Any:
        _, record = await self._checkpoint(_field(request, "checkpoint_id"), self._ns_of(request))
        answers = request.get("answers") or {}
        pending = [str(interrupt.id) for _, interrupt in record.pending_interrupts()]
        unknown = [i for i in answers if i not in pending]
        if unknown or not answers:
            raise RequestError(
                f"Interrupt {', '.join(map(repr, unknown)) or '(none given)'} is not pending at "
                f"checkpoint {record.id} (pending: {', '.join(map(repr, pending)) or 'none'}); "
                "nothing was written."
            )
        resume = {i: _parse(text, f"The answer to interrupt {i!r}") for i, text in answers.items()}
        command = _command_class(self.graph)(resume=resume)
        code = self._writer().resume(record.config, resume, self._breaks())
        return self._start(command, record, "resume", code)

    async def _do_run(self, request: Mapping[str, Any]) -> Any:
        """Start a new run of the thread with an input typed in the widget (a JSON object of
        the state schema's keys), from its latest checkpoint, as ``ainvoke(input, config)``."""
        value = _parse(request.get("text"), "The run's input")
        thread, record = await aread_checkpoint(self._reads, self.config, with_parent=False)
        channels = thread.state_channels()
        if not isinstance(value, dict):
            raise RequestError(
                "The run's input is a JSON object of the state's keys, e.g. "
                f'{{"{channels[0] if channels else "key"}": ...}}; nothing was run.'
            )
        unknown = [key for key in value if key not in channels]
        if unknown:
            raise RequestError(
                f"The state schema has no key {unknown[0]!r} (its keys: {', '.join(channels)}); "
                "nothing was run."
            )
        code = self._writer().run(self._thread_id, value, self._breaks())
        return self._start(value, record, "run", code)

    async def _do_input_form(self, _request: Mapping[str, Any]) -> Any:
        """The fields of the New run form: one per key of the graph's input schema, with its
        type and default (``inspect.input_form``); the thread's state keys when the graph has
        no schema to read."""
        from durable_debug.inspect.input_form import input_fields

        channels: list[str] = []
        if _input_schema_missing(self.graph):
            thread, _ = await aread_checkpoint(self._reads, self.config, with_parent=False)
            channels = list(thread.state_channels())
        fields = input_fields(self.graph, channels)
        return {"fields": [{**f, "default": to_jsonable(f["default"])} for f in fields]}

    async def _do_breakpoints(self, request: Mapping[str, Any]) -> Any:
        """Set the nodes a run started here pauses before / after (``interrupt_before`` and
        ``interrupt_after`` of the reruns and resumes that follow)."""
        nodes = node_names(self.graph)
        chosen: dict[str, list[str]] = {}
        for when in ("before", "after"):
            names = request.get(when) or []
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise RequestError(f"'{when}' must be a list of node names.")
            unknown = [n for n in names if n not in nodes]
            if unknown:
                raise RequestError(
                    f"The graph has no node {unknown[0]!r} to pause {when} (its nodes: "
                    f"{', '.join(nodes)})."
                )
            chosen[when] = [n for n in nodes if n in names]
        self._breakpoints = chosen
        return chosen

    def _breaks(self) -> dict[str, list[str]]:
        """The breakpoints set, only the kinds with nodes."""
        return {when: list(names) for when, names in self._breakpoints.items() if names}

    def _writer(self) -> ActionCode:
        """The code of this widget's actions: awaited for a saver with async methods, sync
        calls for a sync-only one (LangGraph's ``SqliteSaver``, whose async methods raise)."""
        saver = getattr(self.graph, "checkpointer", None)
        return ActionCode(self.graph_name, awaits=has_async_methods(saver))

    async def _do_stop(self, _request: Mapping[str, Any]) -> Any:
        task = self._run_task
        stopped = task is not None and not task.done() and task.cancel()
        return {"stopped": bool(stopped)}

    async def _do_watch(self, _request: Mapping[str, Any]) -> Any:
        """The front end's periodic look while the widget is shown: read the thread again only
        if its newest checkpoint (or that checkpoint's writes) changed since the last read, as
        when a run started in a cell or another process writes to it."""
        self._watch_loop = asyncio.get_running_loop()
        mark = await self._reader.alatest_mark()
        if mark == self._mark:
            return {"changed": False}
        if self._mark is not None and mark[0] != self._mark[0] and not self._run_going():
            # a new checkpoint: the messages whose model ended are in the state now
            done, self._watched_done = self._watched_done, set()
            self._show_live(self._live.clear(done), now=True)
        await self._refresh_dag()
        if self._selected and self._selected == mark[0]:
            # its writes changed: an error or an interrupt
            await self._show(self._selected, self._selected_ns)
        return {"changed": True}

    async def _do_threads(self, _request: Mapping[str, Any]) -> Any:
        """Every thread of the graph's store, newest first, with its checkpoint count, latest
        step and status (one listing query where the store allows it)."""
        from durable_debug.inspect.listing import athread_listing, status_kind

        saver = checkpointer_of(self._reads)
        try:
            rows = await athread_listing(saver)
        except (AttributeError, NotImplementedError) as error:
            raise RequestError(
                f"This store ({type(saver).__name__}) cannot list its threads ({error}); show "
                "another thread with TimeTravel(graph, {'configurable': {'thread_id': ...}}), "
                "or list them with durable-debug inspect on the database."
            ) from error
        rows = sorted(rows, key=lambda row: row.latest_id, reverse=True)
        return {
            "threads": [
                {
                    "thread_id": row.thread_id,
                    "checkpoints": row.checkpoints,
                    "step": row.step,
                    "status": row.status,
                    "kind": status_kind(row.status),
                    "current": row.thread_id == self._thread_id,
                }
                for row in rows
            ]
        }

    async def _do_thread(self, request: Mapping[str, Any]) -> Any:
        """Show another thread of the same store."""
        thread_id = request.get("thread_id")
        if not isinstance(thread_id, str) or not thread_id:
            raise RequestError("The 'thread' request needs 'thread_id' (a thread of this store).")
        if self._run_task is not None and not self._run_task.done():
            raise RequestError(
                f"A run on thread {self._thread_id!r} is still going: wait for it, or press "
                "Stop, before switching threads."
            )
        namespace = str(self.config["configurable"].get("checkpoint_ns") or "")
        config = thread_config(thread_id, namespace)
        reader = DagReader(self._reads, config)
        packed = await reader.arefresh_then(lambda: pack_wire(reader.wire()))
        if not reader.ids():
            raise RequestError(f"The store has no thread {thread_id!r}; nothing changed.")
        with self.hold_sync():
            self._thread_id, self.config, self._reader = thread_id, config, reader
            self._send_dag(reader, packed)
            self._selected, self._status, self._error = "", "", ""
            self._selected_ns = namespace
            self._live.clear()
            self._watched_done = set()
            self._show_live(now=True)
            self.set_trait("_detail", None)
        self._mark = None
        return {"thread_id": thread_id}

    async def _do_health(self, request: Mapping[str, Any]) -> Any:
        """The store's health (``inspect.health``), computed in a worker thread so the kernel's
        loop stays free; ``sla_s``: seconds an interrupt may wait before its thread is listed."""
        from durable_debug.inspect.health import DEFAULT_SLA, health, health_data

        sla_s = request.get("sla_s", DEFAULT_SLA.total_seconds())
        number = isinstance(sla_s, (int, float)) and not isinstance(sla_s, bool)
        if not number or not 0 <= sla_s < _MAX_SLA_S:
            raise RequestError(
                f"The 'health' request's sla_s must be a number of seconds from 0 to "
                f"{_MAX_SLA_S:.0f} (got {sla_s!r})."
            )
        saver = checkpointer_of(self._reads)
        if not callable(getattr(saver, "alist_threads", None)):
            raise RequestError(
                f"This store ({type(saver).__name__}) cannot list its threads, so the widget "
                "cannot report its health: run durable-debug health on its database instead."
            )
        sla = datetime.timedelta(seconds=float(sla_s))
        try:
            report = await asyncio.to_thread(health, saver, sla=sla)
        except NotImplementedError as error:
            raise RequestError(
                f"This store ({type(saver).__name__}) cannot report its health ({error}): run "
                "durable-debug health on its database instead."
            ) from error
        return {"sla_s": sla_s, "tables": health_data(report)}

    async def _do_refresh(self, _request: Mapping[str, Any]) -> Any:
        await self.arefresh()
        return {}

    # -- runs --------------------------------------------------------------------------------

    def _start(
        self, command: Any, record: CheckpointRecord, action: str, code: str, replay: bool = False
    ) -> Any:
        if self._run_task is not None and not self._run_task.done():
            raise RequestError(
                "A run started here is still going: wait for it, or press Stop first."
            )
        self._add_code(action, code)
        with self.hold_sync():
            self._running, self._error = True, ""
            self._status = f"{action}: running from step {record.step}…"
        breaks = {f"interrupt_{when}": list(nodes) for when, nodes in self._breaks().items()}
        task = asyncio.get_running_loop().create_task(self._run(command, record, breaks, replay))
        task.add_done_callback(lambda done: self._cancelled_before_start(done, record))
        self._run_task = task
        return {"started": True, "code": code}

    async def _run(
        self,
        command: Any,
        start: CheckpointRecord,
        breaks: Mapping[str, Any] | None = None,
        replay: bool = False,
    ) -> None:
        """Stream the run, then say how it ended. However it ends (done, failed, stopped, or an
        error while reading where it ended) ``_end_run`` clears "running" with the status.
        ``replay``: the run's model and tool calls are answered from the thread's recording
        (``inspect.replay``)."""
        namespace = config_checkpoint_ns(start.config)
        before = await self._ids_in(namespace)
        # The first checkpoint shows at once; later ones at most every _REFRESH_EVERY seconds,
        # and one skipped so is shown by the front end's next watch, not the step after it.
        outcome, error_text, last_refresh = "done", "", 0.0
        # A chat model's tokens ("messages") only when LangChain is there to make any.
        modes = ["debug", "messages"] if _HAS_LANGCHAIN else ["debug"]
        status, error = f"run from step {start.step} ended", ""
        try:
            try:
                async with self._recorder, contextlib.AsyncExitStack() as replayed:
                    if replay:
                        thread = {"configurable": {"thread_id": self._thread_id}}
                        replayed.enter_context(use_replay(await areplay_source(self.graph, thread)))
                    stream = astream(
                        self.graph,
                        command,
                        address_config(start.config),
                        stream_mode=modes,
                        **(breaks or {}),
                    )
                    async for mode, event in stream:
                        if mode == "messages":
                            self._show_live(self._live.add(*event))
                            continue
                        kind = event.get("type") if isinstance(event, Mapping) else None
                        if kind == "task_result":  # a node ended: its text as it ended
                            self._show_live(now=True)
                        is_checkpoint = kind == "checkpoint"
                        if is_checkpoint and self._live.clear():  # the text is in the state now
                            self._show_live(now=True)
                        if is_checkpoint and time.monotonic() - last_refresh > _REFRESH_EVERY:
                            await self._refresh_dag()
                            last_refresh = time.monotonic()
            except asyncio.CancelledError:
                outcome = "stopped"
            except Exception as failure:
                outcome = "failed"
                error_text = store_gone_message(failure, "The run failed") or (
                    f"{type(failure).__name__}: {failure}"
                )
            status, error = f"run from step {start.step} {outcome}", error_text
            await self._refresh_dag()
            self._topology = dict(await atopology_data(self._reads, self._all_counts()))
            written = sorted(await self._ids_in(namespace) - before)
            status, error = await self._finish(start, written, outcome, error_text)
        except (Exception, asyncio.CancelledError) as failure:
            logger.debug("reading where the run ended failed", exc_info=True)
            reason = f"{type(failure).__name__}: {failure}".rstrip(": ")
            status = f"{status}; where it ended could not be read"
            error = "; ".join(
                filter(None, [error, f"The widget could not read where the run ended: {reason}"])
            )
        finally:
            self._end_run(status, error)

    def _end_run(self, status: str, error: str) -> None:
        """The one place a run stops being "running": status, error and flag in one update."""
        self._live.clear()
        with self.hold_sync():
            self._show_live(now=True)
            self._running = False
            self._status = status
            self._error = error

    def _run_going(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    def _watched_chunk(self, message: Any, metadata: Mapping[str, Any], final: bool) -> None:
        """A chunk (or, ``final``, the whole message) of a chat model in a run of this thread
        started elsewhere; a run started here shows its own through its stream."""
        if self._run_going():
            return
        if final:
            self._watched_done.add(str(getattr(message, "id", None) or ""))
        self._show_live(self._live.add(message, metadata), now=final)

    def _show_live(self, changed: bool = True, now: bool = False) -> None:
        """Send the chat models' text as ``_live_text``: at once when ``now``; after a
        ``changed`` one at most every ``_LIVE_EVERY`` seconds (a change held back is sent when
        that time is up)."""
        if now:
            if self._live_later is not None:
                self._live_later.cancel()
            self._send_live()
            return
        if not changed or self._live_later is not None:
            return
        wait = self._live_sent + _LIVE_EVERY - time.monotonic()
        if wait > 0:
            self._live_later = asyncio.get_running_loop().call_later(wait, self._send_live)
        else:
            self._send_live()

    def _send_live(self) -> None:
        self._live_later = None
        self._live_sent = time.monotonic()
        entries = [dict(entry) for entry in self._live.entries()]
        if entries != self._live_text:
            self._live_text = entries

    def _cancelled_before_start(self, task: asyncio.Task[None], start: CheckpointRecord) -> None:
        """A run stopped before its first step never enters ``_run``: end it here."""
        if task is self._run_task and self._running:
            self._end_run(f"wrote 0 checkpoints from step {start.step}; stopped", "")

    async def _finish(
        self, start: CheckpointRecord, written: list[str], outcome: str, error_text: str
    ) -> tuple[str, str]:
        """The status line and error for a run from ``start`` that wrote ``written``; shows
        where it ended if the user still looks at where it started."""
        last = written[-1] if written else start.id
        namespace = config_checkpoint_ns(start.config)
        detail = await acheckpoint_detail(self._reads, self._ns_config(namespace), last)
        count = len(written)
        ran = f"wrote {count} checkpoint{'' if count == 1 else 's'} from step {start.step}"
        error = ""
        if outcome == "failed":
            failed = [task["name"] for task in detail["tasks"] if task["error"]]
            where = f"node {failed[0]!r} raised " if failed else ""
            error = (
                f"The run from step {start.step} failed at step {detail['step'] + 1}: "
                f"{where}{error_text}. Checkpoint {last} keeps the error: fix the cause, then "
                "press Rerun there."
            )
            status = f"{ran}; failed"
        elif outcome == "stopped":
            status = f"{ran}; stopped"
        elif detail["interrupts"]:
            nodes = ", ".join(sorted({short_name(item["node"]) for item in detail["interrupts"]}))
            status = f"{ran}; interrupted at {nodes} ({len(detail['interrupts'])} pending)"
        else:
            left = ", ".join(short_name(name) for name in detail["next"])
            status = f"{ran}; " + (f"next: {left}" if left else "done")
        if self._selected in ("", start.id):
            self._select_seq += 1
            self._set_selected(last, detail, namespace)
        elif self._selected:
            await self._show(self._selected, self._selected_ns)
        return status, error

    # -- helpers -----------------------------------------------------------------------------

    async def _refresh_dag(self) -> None:
        """Read what the thread holds now (after the first read, only the newer checkpoints)."""
        reader = self._reader
        mark = await reader.alatest_mark()  # before the read: a later change shows next
        epoch = self._dag.get("epoch")

        def packed() -> tuple[int, dict[str, Any]]:
            """The tail to send (its start), else the whole tree (-1): packed in the read's
            pause of the collector, so the rows read and the wire are walked by no
            collection."""
            count = len(reader.ids())
            start = min(self._tail_start, reader.low)
            if epoch == reader.epoch and count - start <= max(_TAIL_MAX, count // 4):
                return start, pack_wire(reader.wire(start))
            return -1, pack_wire(reader.wire())  # a new layout, or too much changed

        start, value = await reader.arefresh_then(packed)
        if start >= 0:
            self._tail_start = start
            self._dag_tail = value
        else:
            self._send_dag(reader, value)
        self._mark = mark

    def _send_dag(self, reader: DagReader, packed: dict[str, Any] | None = None) -> None:
        """Send the whole tree of ``reader`` as ``_dag`` (no tail); ``packed``: its
        ``pack_wire(reader.wire())`` when already made."""
        with self.hold_sync():
            self._dag = pack_wire(reader.wire()) if packed is None else packed
            self._dag_tail = {}
        self._tail_start = len(reader.ids())

    async def _show(self, checkpoint_id: str, namespace: str | None = None) -> Any:
        """Select a checkpoint (of ``namespace``, default the widget's own): set ``_selected``,
        ``_selected_ns`` and ``_detail`` (unless a newer select came in meanwhile), then return
        the detail."""
        self._select_seq += 1
        ticket = self._select_seq
        if namespace is None:
            namespace = str(self.config["configurable"].get("checkpoint_ns") or "")
        detail = await acheckpoint_detail(self._reads, self._ns_config(namespace), checkpoint_id)
        if ticket == self._select_seq:
            self._set_selected(detail["id"], clip_detail(detail), namespace)
        return detail

    def _set_selected(self, checkpoint_id: str, detail: Detail, namespace: str = "") -> None:
        with self.hold_sync():
            self._selected = checkpoint_id
            self._selected_ns = namespace
            self._detail = dict(detail)

    def _checkpoint_ids(self) -> set[str]:
        return set(self._reader.ids())

    async def _checkpoint(
        self, checkpoint_id: str, namespace: str | None = None
    ) -> tuple[Thread, CheckpointRecord]:
        config = self.config if namespace is None else self._ns_config(namespace)
        return await aread_checkpoint(self._reads, config, checkpoint_id, with_parent=False)

    def _add_code(self, action: str, code: str) -> None:
        self._code = [*self._code, {"action": action, "code": code}]

    def _all_counts(self) -> dict[str, Any]:
        """The counts given to the constructor plus the executions of runs started here."""
        merged = {node: _as_count(count) for node, count in self._counts.items()}
        for node, count in self._recorder.counts(self._thread_id).items():
            base = merged.get(node, NodeCount(0, 0, 0, 0))
            merged[node] = NodeCount(*(a + b for a, b in zip(base, count, strict=True)))
        return merged

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on the kernel's loop when there is one, else on the background loop."""
        try:
            task: Any = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:  # a plain script: no loop runs in this thread
            task = run_in_background(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


REQUESTS: dict[str, Callable[[TimeTravel, Mapping[str, Any]], Awaitable[Any]]] = {
    "select": TimeTravel._do_select,
    "value": TimeTravel._do_value,
    "diff": TimeTravel._do_diff,
    "fork": TimeTravel._do_fork,
    "preview": TimeTravel._do_preview,
    "rerun": TimeTravel._do_rerun,
    "resume": TimeTravel._do_resume,
    "stop": TimeTravel._do_stop,
    "refresh": TimeTravel._do_refresh,
    "threads": TimeTravel._do_threads,
    "thread": TimeTravel._do_thread,
    "run": TimeTravel._do_run,
    "input_form": TimeTravel._do_input_form,
    "breakpoints": TimeTravel._do_breakpoints,
    "health": TimeTravel._do_health,
    "subgraphs": TimeTravel._do_subgraphs,
    "subgraph": TimeTravel._do_subgraph,
    "watch": TimeTravel._do_watch,
}
"""The requests the front end sends (``kind``, see docs/widget-protocol.md) and their handlers."""


def _field(request: Mapping[str, Any], name: str) -> str:
    value = request.get(name)
    if not isinstance(value, str) or not value:
        raise RequestError(f"The {request.get('kind')!r} request needs {name!r} (a checkpoint id).")
    return value


def _parse(text: Any, what: str) -> Any:
    """Parse strict JSON (no NaN / Infinity), or refuse naming ``what`` was wrong."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        return json.loads(str(text), parse_constant=refuse)
    except json.JSONDecodeError as error:
        reason = f"{error.msg}: line {error.lineno}, column {error.colno}"
    except ValueError as error:
        reason = str(error)
    raise RequestError(
        f'{what} is not valid JSON ({reason}); write e.g. "text", 3, [1, 2] or '
        '{"key": true}. Nothing was written.'
    )


def _page(value: Any, offset: int) -> dict[str, Any]:
    """One page of a JSON-ready value from ``offset`` ("Show all", a page at a time): a string
    by characters, a list by items, a dict by keys, each item cut like a detail; ``next`` is
    the offset of the next page, None after the last."""
    if isinstance(value, str):
        part: Any = value[offset : offset + _PAGE_CHARS]
        kind, total, end = "text", len(value), offset + _PAGE_CHARS
    elif isinstance(value, list):
        part = [clip(item)[0] for item in value[offset : offset + _PAGE_ITEMS]]
        kind, total, end = "items", len(value), offset + _PAGE_ITEMS
    elif isinstance(value, dict):
        keys = list(value)[offset : offset + _PAGE_ITEMS]
        part = {key: clip(value[key])[0] for key in keys}
        kind, total, end = "entries", len(value), offset + _PAGE_ITEMS
    else:
        return {"kind": "value", "value": value, "offset": 0, "total": 1, "next": None}
    return {
        "kind": kind,
        "value": part,
        "offset": offset,
        "total": total,
        "next": end if end < total else None,
    }


def _input_schema_missing(graph: GraphLike) -> bool:
    """True when the graph names no input schema the form can read (a saver seen as a graph)."""
    return getattr(getattr(graph, "builder", None), "input_schema", None) is None


def _user_name_of(graph: GraphLike) -> str | None:
    """The notebook variable bound to ``graph`` (the one defined last if several), or None
    outside IPython or when no plain variable holds it."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    namespace = getattr(shell, "user_ns", None)
    if not isinstance(namespace, Mapping):
        return None
    names = [
        name
        for name, value in list(namespace.items())
        if value is graph and name.isidentifier() and not name.startswith("_")
    ]
    return names[-1] if names else None


def _overwrite_class(graph: GraphLike) -> Any:
    """The ``Overwrite`` type the graph's engine understands."""
    if type(graph).__module__.startswith("langgraph"):
        from langgraph.types import Overwrite as LangGraphOverwrite

        return LangGraphOverwrite
    from durable_debug.graph import Overwrite

    return Overwrite


def _entrypoint_update(
    graph: GraphLike, edits: Mapping[str, Any], current: Mapping[str, Any]
) -> Any:
    """The ``update_state`` value of a fork of an ``@entrypoint`` thread: its new return
    value, or ``entrypoint.final(value=..., save=...)`` when the saved ``previous`` is edited
    too."""
    value = entrypoint_return(edits, current)
    if PREVIOUS not in edits:
        return value
    final: Any
    if type(graph).__module__.startswith("langgraph"):
        from langgraph.func import entrypoint as theirs

        final = theirs.final
    else:
        from durable_debug.func import entrypoint

        final = entrypoint.final
    return final(value=value, save=edits[PREVIOUS])


def _command_class(graph: GraphLike) -> Any:
    """The ``Command`` type the graph's engine understands (LangGraph's for a LangGraph graph)."""
    if type(graph).__module__.startswith("langgraph"):
        from langgraph.types import Command as LangGraphCommand

        return LangGraphCommand
    from durable_debug.graph import Command

    return Command


def _as_count(count: Any) -> NodeCount:
    if isinstance(count, int):
        return NodeCount(count, 0, 0, 0)
    return NodeCount(count.executions, count.reruns, count.errors, count.interrupts)
