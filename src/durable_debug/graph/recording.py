"""Recording the model and tool calls a task makes, and answering them again from a recording.

Every task of a run with a checkpointer gets a :class:`Tape`. While its node runs, the tape is
current (a context variable; the tape itself is made at the task's first recorded call).
LangChain's callback managers report every chat model, LLM and tool run inside the node — at
any depth, in worker threads too — onto the current tape: their
``on_chat_model_start`` / ``on_llm_start`` / ``on_tool_start`` and the run managers'
end, error and token methods are wrapped once per process (:func:`_install_recorder`), so
nothing is added to the runs' handlers (LangChain does more work per call as soon as a run
has any handler, even one that ignores most events; a wrapper costs a context variable read
outside a recorded task). ``once()`` effects write onto it too, and so do LangChain embeddings,
which report to no callback: their ``embed_*`` methods are wrapped (:func:`wrap_embeddings`).
A streamed model call keeps its chunks (``"chunks"``). When the step's checkpoint is saved,
the tapes of its tasks go into that checkpoint's debug record (``checkpoint/records.py``,
key :data:`~durable_debug.checkpoint.records.TASK_CALLS`)::

    {"task_calls": {"<task id>": {"node": "agent", "from": "<checkpoint the task ran from>",
                                  "calls": [{"i": 0, "kind": "chat_model", "name": "...",
                                             "hash": "9c1f...", "input": "...", "output": "...",
                                             "value": {...}, "tokens": {...}, "ms": 12.5}]}}}

A :class:`ReplaySource` (made by ``durable_debug.inspect.replaying``) answers calls from a
recording while it is current. Callbacks observe a call but cannot answer it, so: the recorder
looks the call up when the model run starts (``on_chat_model_start``) and keeps the answer
under the LangChain run id; ``BaseChatModel._generate_with_cache`` (the step every
``invoke``/``ainvoke``/``generate`` of a chat model goes through, where LangChain's own LLM
cache answers) returns it instead of calling the model (sending the recorded chunks to the
run's callbacks first); a direct ``stream``/``astream`` is answered by the model class's
``_stream``/``_astream``, a plain LLM's ``generate`` by ``BaseLLM._generate_helper``. A tool's
call is answered in ``BaseTool.run``/``arun``; an embedding in its wrapped method; a
``once()`` effect in ``effects.py``. The model and tool wrappers are installed only while a
source is in use and fall through to LangChain's code for any call the source
does not answer: nothing behaves differently outside a ``replaying`` block. (LangChain's LLM
cache hook was the other way in, but it serializes the whole prompt with ``dumps`` on every
call, 35 ms for a 100-message history.)

    recording = RunRecording()
    tape = recording.start("agent", task_id, checkpoint_id)     # the node runs with it
    recording.stop(tape); recording.take()                      # {"task_calls": {...}}
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import inspect
import itertools
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from durable_debug.checkpoint.records import TASK_CALLS, JSONReady

__all__ = [
    "RECORD_CALLS",
    "ReplayMismatchError",
    "ReplaySource",
    "RunRecording",
    "Tape",
    "call_hash",
    "current_tape",
    "records_calls",
    "use_replay",
]

RECORD_CALLS = "record_calls"
"""``config["configurable"]`` key: ``False`` turns the recording of calls off for a run."""
SUMMARY_CHARS = 200
"""Characters of an input or output kept as its summary."""
MAX_VALUE_CHARS = 1_000_000
"""Largest stored output (as JSON text) of one call; a larger one keeps its summary only and
cannot be replayed (the call goes live)."""

_TAPE: contextvars.ContextVar[Tape | _Pending | None] = contextvars.ContextVar(
    "durable_debug_tape", default=None
)
"""The running task's tape, or what makes it at the task's first recorded call
(:meth:`RunRecording.start`): most tasks make none."""
_REPLAY: contextvars.ContextVar[ReplaySource | None] = contextvars.ContextVar(
    "durable_debug_replay", default=None
)
_RESERVED: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "durable_debug_reserved_call", default=None
)
_STARTED: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "durable_debug_started_model_run", default=None
)
"""The LangChain run id of the model run whose start was just answered from a recording (a
chat model's ``stream`` calls ``_stream`` without its run manager)."""
_IN_EMBEDDING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "durable_debug_in_embedding", default=False
)
_LOG = logging.getLogger(__name__)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class ReplayMismatchError(LookupError):
    """A call inside ``replaying(strict=True)`` (or a recording that cannot answer it) has no
    recorded call with the same input: the message names the thread, task, node and call."""


def call_hash(*parts: str) -> str:
    """The hash of a call's input (its parts joined), as recorded and compared on replay."""
    text = "\x1f".join(_ADDRESS.sub("", part) if " at 0x" in part else part for part in parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def summary(value: Any) -> str:
    """A short text for a call's input or output (:data:`SUMMARY_CHARS` at most)."""
    text = value if isinstance(value, str) else repr(value)
    cut = len(text) > 4 * SUMMARY_CHARS  # a long text: only its start is looked at
    if cut:
        text = text[: 4 * SUMMARY_CHARS]
    if " at 0x" in text:
        text = _ADDRESS.sub("", text)
    return text if len(text) <= SUMMARY_CHARS and not cut else text[: SUMMARY_CHARS - 1] + "…"


def records_calls(config: Mapping[str, Any] | None) -> bool:
    """Whether a run with ``config`` records its tasks' calls (on unless turned off)."""
    return ((config or {}).get("configurable") or {}).get(RECORD_CALLS) is not False


def current_tape() -> Tape | None:
    """The tape of the task running in this context (None outside a recorded task)."""
    return _current_tape()


_Pending = tuple[Any, str, str, str, Any, int, list[Any]]
"""A task's tape not made yet: the recording, node, task id, checkpoint id, replay source
and start order it gets, and the one-item list that then holds it."""


def _current_tape() -> Tape | None:
    """The running task's tape, made now when this is its first call to record."""
    held = _TAPE.get()
    if not isinstance(held, tuple):
        return held
    made: list[Tape] = held[6]
    if made:
        return made[0]
    recording: RunRecording = held[0]
    return recording.make_tape(held)


@dataclass
class Tape:
    """The calls of one task, in the order they started."""

    node: str
    """The task's node."""
    task_id: str
    """The task's id."""
    checkpoint_id: str
    """The checkpoint the task ran from."""
    thread_id: str = ""
    """The thread (for error messages)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """One entry per call (see the module's docstring)."""
    replay: ReplaySource | None = None
    """What answers the task's calls (None: every call is live)."""
    stash: dict[Any, tuple[dict[str, Any], Any]] = field(default_factory=dict)
    """Chat-model answers (or refusals) found when the model run started, by LangChain run
    id, for the model's ``_generate_with_cache`` to return."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    order: int = 0
    """When its task started, among the run's tasks (their tapes are kept in that order)."""

    def restart(self) -> None:
        """Forget the calls of a failed attempt (the task is retried)."""
        with self._lock:
            self.calls.clear()
            self.stash.clear()

    def open(self, kind: str, name: str, digest: str, shown: Any) -> dict[str, Any]:
        """Add the entry of a call that starts now (its index is the next one)."""
        reserved = _RESERVED.get()
        entry: dict[str, Any] = {
            "i": -1,
            "kind": kind,
            "name": name,
            "hash": digest,
            "input": summary(shown),
        }
        if reserved is not None:  # a live tool call of a replay: its index was kept for it
            self.fill(reserved, entry)
            return entry
        with self._lock:
            entry["i"] = self._next_index()
            self.calls.append(entry)
        return entry

    def reserve(self) -> int:
        """The index of the next call, taken now (its entry is added later)."""
        with self._lock:
            index = self._next_index()
            self.calls.append({"i": index, "kind": "reserved"})
            return index

    def fill(self, index: int, entry: dict[str, Any]) -> None:
        """Put ``entry`` in the place :meth:`reserve` kept for call ``index``."""
        entry["i"] = index
        with self._lock:
            for n, kept in enumerate(self.calls):
                if kept.get("i") == index and kept.get("kind") == "reserved":
                    self.calls[n] = entry
                    return
            self.calls.append(entry)

    def _next_index(self) -> int:
        return len(self.calls)

    def where(self, entry: Mapping[str, Any]) -> str:
        """Thread, task, node and call, for messages."""
        return (
            f"thread {self.thread_id!r}, task {self.task_id} (node {self.node!r}) from "
            f"checkpoint {self.checkpoint_id}, call {entry.get('i')} "
            f"({entry.get('kind')} {entry.get('name')!r})"
        )

    def as_record(self) -> dict[str, Any]:
        """What the checkpoint's record keeps of this tape (each call as the record stores
        it, when it can be built so: see :func:`_ready_entry`)."""
        calls = [_ready_entry(c) for c in self.calls if c.get("kind") != "reserved"]
        return {"node": self.node, "from": self.checkpoint_id, "calls": calls}


def _ready_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A call's entry as its checkpoint's record stores it (a :class:`JSONReady`: sorted
    keys, exact JSON types, the output copied once, when it was kept, by
    :func:`stored_value`), so the saver does not copy it again; a plain copy of the entry
    when a value in it is of another kind (a replayed call's recorded output, streamed
    chunks): the saver copies that as any record."""
    ready = JSONReady()
    for key, value in sorted(entry.items()):
        kind = type(value)
        if kind in _SMALL or kind is str:
            ready[key] = value
        elif kind is _Kept:
            ready[key] = dict(value)
        elif kind is float and value - value == 0:  # finite
            ready[key] = value
        elif kind is dict and key == "tokens" and _SMALL.issuperset(map(type, value.values())):
            ready[key] = dict(sorted(value.items()))
        else:
            return {k: dict(v) if type(v) is _Kept else v for k, v in entry.items()}
    return ready


class RunRecording:
    """The tapes of one run's tasks until the checkpoint they belong to is saved."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.enabled = records_calls(config)
        """False when the run's config turns recording off."""
        self.thread_id = str(((config or {}).get("configurable") or {}).get("thread_id") or "")
        self.tapes: list[Tape] = []
        """The tapes made so far, not taken yet (those of the tasks that recorded a call)."""
        self._lock = threading.Lock()
        self._order = itertools.count()

    def start(self, node: str, task_id: str, checkpoint_id: str) -> tuple[Any, Any] | None:
        """Make ``node``'s task's tape current (until :meth:`stop`); None when not recording.
        The tape itself is made at the task's first recorded call (:meth:`make_tape`)."""
        if not self.enabled:
            return None
        if not _RECORDER_INSTALLED and "langchain_core" in sys.modules:
            _install_recorder()
        if "langchain_core.embeddings" in sys.modules:  # (imported with langchain_core)
            wrap_embeddings()
        pending: _Pending = (
            self,
            node,
            task_id,
            checkpoint_id,
            _REPLAY.get(),
            next(self._order),
            [],
        )
        return pending, _TAPE.set(pending)

    def make_tape(self, pending: _Pending) -> Tape:
        """The tape of a task started by :meth:`start`, made (and kept) once."""
        with self._lock:
            made = pending[6]
            if not made:
                _, node, task_id, checkpoint_id, replay, order, _ = pending
                tape = Tape(node, task_id, checkpoint_id, self.thread_id, replay=replay)
                tape.order = order
                made.append(tape)
                self.tapes.append(tape)
            kept: Tape = made[0]
            return kept

    @staticmethod
    def restart(started: tuple[Any, Any] | None) -> None:
        """Forget the calls a task's failed attempt recorded (the task is retried)."""
        if started is not None and started[0][6]:
            started[0][6][0].restart()

    @staticmethod
    def stop(started: tuple[Any, Any] | None) -> None:
        """Leave the task's tape (the counterpart of :meth:`start`)."""
        if started is not None:
            _TAPE.reset(started[1])

    def take(self) -> dict[str, Any]:
        """The record entry for the tapes that have calls (``{}`` when none has), handed over
        once: the checkpoint being saved keeps them."""
        with self._lock:
            tapes, self.tapes = self.tapes, []
        if _OPEN and tapes:  # runs that never ended (a stream left unfinished): forget them
            _forget_open_runs(tapes)
        kept = {t.task_id: t.as_record() for t in sorted(tapes, key=_started_at) if t.calls}
        return {TASK_CALLS: kept} if kept else {}


def _started_at(tape: Tape) -> int:
    return tape.order


def _forget_open_runs(tapes: list[Tape]) -> None:
    """Drop the open runs of ``tapes`` from :data:`_OPEN` (their tasks are over)."""
    ids = {id(t) for t in tapes}
    for run_id, opened in list(_OPEN.items()):
        if id(opened[0]) in ids:
            _OPEN.pop(run_id, None)


# -- replay ---------------------------------------------------------------------------------


@dataclass
class ReplaySource:
    """Recorded calls that answer the calls of the tasks run while it is current.

    ``by_node`` answers any task of a node from the recorded calls of that node with the same
    call index and input hash; ``by_task`` (a task id's calls) restricts a task to its own
    recording (``replay_check``, ``debug_task``)."""

    by_node: dict[tuple[str, int, str], dict[str, Any]] = field(default_factory=dict)
    by_task: dict[str, list[dict[str, Any]]] | None = None
    strict: bool = False
    """Refuse (``ReplayMismatchError``) a call that has no recorded answer."""
    thread_id: str = ""
    replayed: list[dict[str, Any]] = field(default_factory=list)
    """``{"node", "task_id", "i", "kind", "name"}`` of every call answered from the recording."""
    live: list[dict[str, Any]] = field(default_factory=list)
    """The same for every call that was made for real (with ``"hash"``)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_tasks(cls, tasks: Mapping[str, Mapping[str, Any]], **kwargs: Any) -> ReplaySource:
        """A source answering by node from recorded tasks (task id → ``{"node", "calls"}``);
        a recorded call without its output (too large, not storable, or failed) answers
        nothing."""
        by_node: dict[tuple[str, int, str], dict[str, Any]] = {}
        for recorded in tasks.values():
            for call in recorded.get("calls") or ():
                by_node.setdefault((recorded["node"], call["i"], call["hash"]), call)
        return cls(by_node=by_node, **kwargs)

    def find(self, tape: Tape, index: int, digest: str) -> dict[str, Any] | None:
        """The recorded call answering ``tape``'s call ``index`` with input ``digest``."""
        found = self._recorded(tape, index, digest)
        return found if found is not None and _answers(found) else None

    def _recorded(self, tape: Tape, index: int, digest: str) -> dict[str, Any] | None:
        if self.by_task is not None:
            for call in self.by_task.get(tape.task_id, ()):
                if call.get("i") == index and call.get("hash") == digest:
                    return call
            return None
        return self.by_node.get((tape.node, index, digest))

    def note(self, tape: Tape, entry: Mapping[str, Any], replayed: bool) -> None:
        """Remember that ``entry`` was answered from the recording or went live."""
        item = {
            "node": tape.node,
            "task_id": tape.task_id,
            "i": entry.get("i"),
            "kind": entry.get("kind"),
            "name": entry.get("name"),
            "hash": entry.get("hash"),
            "input": entry.get("input"),
        }
        with self._lock:
            (self.replayed if replayed else self.live).append(item)

    def refuse(self, tape: Tape, entry: Mapping[str, Any]) -> ReplayMismatchError:
        """The error for a call the recording cannot answer under ``strict``."""
        found = self._recorded(tape, int(entry.get("i", -1)), str(entry.get("hash")))
        if found is not None:  # the same call was recorded, but not what it returned
            why = (
                "failed when it was recorded"
                if "error" in found
                else ("was recorded without its output (too large, or not storable)")
            )
            return ReplayMismatchError(
                f"replay: {tape.where(entry)} {why}, so the recording cannot answer it; "
                "run without strict=True to make it live"
            )
        return ReplayMismatchError(
            f"replay: no recorded call matches {tape.where(entry)}: its input "
            f"(hash {entry.get('hash')}) differs from the recording, or the recording has no "
            "such call; run without strict=True to make it live"
        )


def _answers(call: Mapping[str, Any]) -> bool:
    """Whether a recorded call can answer a replayed one: it kept its output, and did not fail."""
    return "value" in call and "error" not in call


_INSTALLED = 0
_INSTALL_LOCK = threading.Lock()
_UNDO: list[Callable[[], None]] = []


@contextlib.contextmanager
def use_replay(source: ReplaySource) -> Iterator[ReplaySource]:
    """Make ``source`` answer the calls of the tasks run in this context until the block ends.

    The model and tool wrappers (see the module's docstring) are installed while at least
    one source is in use anywhere in the process, and removed after the last one."""
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED == 0 and _langchain_importable():
            _install_hooks()
        _INSTALLED += 1
    token = _REPLAY.set(source)
    try:
        yield source
    finally:
        _REPLAY.reset(token)
        with _INSTALL_LOCK:
            _INSTALLED -= 1
            if _INSTALLED == 0:
                while _UNDO:
                    _UNDO.pop()()


def _langchain_importable() -> bool:
    try:
        import langchain_core  # noqa: F401
    except ImportError:
        return False
    return True


def stored_value(value: Any) -> dict[str, Any] | None:
    """A call's output as the record keeps it (``{"message": ...}`` for a LangChain message,
    as ``message_to_dict``; ``{"lc": ...}`` for another LangChain object, as ``dumpd``;
    ``{"json": ...}`` for plain data), or None when it cannot be kept (over
    :data:`MAX_VALUE_CHARS` as JSON, or not JSON): then the call has a summary but no answer
    to replay. A message or plain data is checked by a walk that stops at the limit, not by
    encoding it (the record is encoded once, when its checkpoint is saved)."""
    base = _message_class()
    if base is not None and isinstance(value, base):
        fast = _message_fields(value)
        if fast is not _SLOW:
            return fast
        from langchain_core.messages import message_to_dict

        kept: dict[str, Any] = {"message": message_to_dict(value)}  # type: ignore[arg-type]  # value is a BaseMessage, checked at run time above
        return _checked(kept)
    if base is not None:
        from langchain_core.load.serializable import Serializable

        if isinstance(value, Serializable):
            from langchain_core.load import dumpd

            try:
                kept = {"lc": dumpd(value)}
                text = json.dumps(kept, ensure_ascii=False)
            except (TypeError, ValueError):
                return None
            return kept if len(text) <= MAX_VALUE_CHARS else None
    return _checked({"json": value})


_SLOW: dict[str, Any] = {}
"""What :func:`_message_fields` returns when it cannot tell (compared by identity)."""
_FIELDS_DUMPED: dict[type, bool] = {}
"""Message classes by whether ``model_dump`` gives exactly their fields (see
:func:`_message_fields`)."""


def _fields_of(cls: type) -> dict[str, Any]:
    """A pydantic model class's fields (``{}`` for another class)."""
    fields: dict[str, Any] = getattr(cls, "model_fields", None) or {}
    return fields


def _message_fields(message: Any) -> dict[str, Any] | None:
    """What :func:`stored_value` keeps of ``message``, read from its fields instead of
    ``message_to_dict`` (its ``model_dump``) when that gives the same: the class has no
    serializer, computed or excluded field, the message no extra field, and every value is of
    an exact JSON type (which ``model_dump`` returns as it is, containers copied).
    :data:`_SLOW` when it cannot tell: the caller goes through ``message_to_dict``."""
    cls = type(message)
    plain = _FIELDS_DUMPED.get(cls)
    if plain is None:
        decorators = getattr(cls, "__pydantic_decorators__", None)
        fields = _fields_of(cls)
        plain = _FIELDS_DUMPED[cls] = bool(
            decorators is not None
            and fields
            and not decorators.field_serializers
            and not decorators.model_serializers
            and not getattr(cls, "model_computed_fields", None)
            and not any(f.exclude for f in fields.values())
        )
    values = getattr(message, "__dict__", None)
    if not plain or values is None or getattr(message, "__pydantic_extra__", None):
        return _SLOW
    if len(values) != len(_fields_of(cls)):
        return _SLOW
    try:
        copied = _ready_copy({"message": {"type": message.type, "data": values}}, MAX_VALUE_CHARS)
    except (_NotReady, RecursionError, TypeError):
        return _SLOW
    return _Kept(copied) if copied is not None else None


def _checked(kept: dict[str, Any]) -> dict[str, Any] | None:
    """``kept`` copied as its record will store it (a :class:`_Kept`), None when it takes
    more than :data:`MAX_VALUE_CHARS` as JSON or is not JSON data; a value of JSON types that
    a JSON round trip changes (a subclass of ``str`` or ``dict``, an infinite float) is
    checked by :func:`_json_size` and kept as it is (the saver's copy converts it)."""
    try:
        copied = _ready_copy(kept, MAX_VALUE_CHARS)
    except (_NotReady, RecursionError, TypeError):  # TypeError: keys that do not sort
        return kept if _json_size(kept, MAX_VALUE_CHARS) >= 0 else None
    return _Kept(copied) if copied is not None else None


class _Kept(dict):  # type: ignore[type-arg]  # a JSON object: any JSON value
    """A call's output made by :func:`_ready_copy`: already as its record stores it, and
    referenced by its entry alone."""


class _NotReady(Exception):
    """A value :func:`_ready_copy` leaves to :func:`_json_size` and the saver's copy."""


def _ready_copy(value: dict[str, Any], budget: int) -> dict[str, Any] | None:
    """A copy of ``value`` as a JSON round trip gives it back (keys sorted at every level,
    tuples as lists), counting its size as :func:`_json_size` does: None when that is over
    ``budget``. Exact JSON types only (finite floats); anything else raises
    :class:`_NotReady`."""
    small = _SMALL
    left = budget

    def copy(item: Any) -> Any:
        nonlocal left
        kind = type(item)
        if kind is dict:
            copied = {}
            for key, inner in sorted(item.items()):
                if type(key) is not str:
                    raise _NotReady(key)
                inner_kind = type(inner)
                if inner_kind is str:
                    left -= len(key) + len(inner) + 6
                    copied[key] = inner
                elif inner_kind in small:
                    left -= len(key) + 9
                    copied[key] = inner
                else:
                    left -= len(key) + 4
                    copied[key] = copy(inner)
            return copied
        if kind is list or kind is tuple:
            left -= 2 + len(item)
            return [copy(inner) for inner in item]
        if kind is str:
            left -= len(item) + 2
            return item
        if kind in small or (kind is float and item - item == 0):
            left -= 5
            return item
        raise _NotReady(item)

    copied = copy(value)
    return copied if left >= 0 else None


def _message_class() -> type | None:
    """LangChain's ``BaseMessage`` when LangChain is imported (None: it is not)."""
    module = sys.modules.get("langchain_core.messages.base")
    return getattr(module, "BaseMessage", None) if module is not None else None


_SCALARS = (str, int, float, bool, type(None))
_SMALL = frozenset({int, bool, type(None)})
"""Exact types counted as 5 characters without a look inside (floats are checked for NaN)."""


def _json_size(value: Any, budget: int) -> int:
    """About how many characters ``value`` takes as JSON (a lower bound: quotes and escapes
    left out), or -1 when it is not JSON data (dicts with string keys, lists, tuples, strings,
    numbers, booleans, None) or takes more than ``budget``. The exact built-in types are
    checked by identity first (most of a message's fields); subclasses by ``isinstance``."""
    size = 0
    todo = [value]
    pop, push = todo.pop, todo.append
    small = _SMALL
    while todo:
        item = pop()
        kind = type(item)
        if kind is str:
            size += len(item) + 2
        elif kind is dict:
            for key, inner in item.items():
                if type(key) is not str and not isinstance(key, str):
                    return -1
                size += len(key) + 4
                inner_kind = type(inner)
                if inner_kind is str:
                    size += len(inner) + 2
                elif inner_kind in small:
                    size += 5
                else:
                    push(inner)  # looked at on its own (a float, a subclass, a container)
        elif kind is list or kind is tuple:
            size += 2 + len(item)
            todo.extend(item)
        elif kind in small:
            size += 5
        else:
            size = _json_size_other(item, size, push)
            if size < 0:
                return -1
        if size > budget:
            return -1
    return size


def _json_size_other(item: Any, size: int, push: Callable[[Any], None]) -> int:
    """:func:`_json_size` for a value of no exact built-in JSON type (a float, or a subclass
    of a JSON type): the size so far with it counted, or -1 when it is not JSON data."""
    if isinstance(item, str):
        return size + len(item) + 2
    if isinstance(item, dict):
        for key, inner in item.items():
            if not isinstance(key, str):
                return -1
            size += len(key) + 4
            push(inner)
        return size
    if isinstance(item, list | tuple):
        for inner in item:
            push(inner)
        return size + 2 + len(item)
    if isinstance(item, _SCALARS):
        if isinstance(item, float) and item != item:  # NaN is not JSON
            return -1
        return size + 5
    return -1


def stored_chunks(chunks: list[Any]) -> list[Any] | None:
    """The chunks a streamed model call produced, as the record keeps them (a chat model's:
    its message chunks, each as :func:`stored_value` keeps a message; an LLM's: its texts), or
    None when they cannot be kept (then a replay yields the whole answer as one chunk)."""
    from langchain_core.messages import message_to_dict

    kept: list[Any] = []
    for chunk in chunks:
        message = getattr(chunk, "message", None)
        if message is not None:
            kept.append({"message": message_to_dict(message)})
        else:
            kept.append(getattr(chunk, "text", chunk))
    return kept if _json_size(kept, MAX_VALUE_CHARS) >= 0 else None


def loaded_value(kept: Mapping[str, Any]) -> Any:
    """The output :func:`stored_value` kept."""
    if "message" in kept:
        from langchain_core.messages import messages_from_dict

        return messages_from_dict([kept["message"]])[0]
    if "lc" in kept:
        import warnings

        from langchain_core.load import load

        with warnings.catch_warnings():  # load() is marked beta
            warnings.simplefilter("ignore")
            return load(kept["lc"], allowed_objects="messages")
    return kept.get("json")


def answer_once(fn: Any, args: Any, kwargs: Any) -> tuple[bool, Any, Any]:
    """For ``once(fn, *args, **kwargs)`` in a recorded task: ``(True, value, None)`` when a
    replay answers it, else ``(False, None, finish)`` where ``finish(result, ms)`` records
    the effect's result once it ran (a no-op outside a recorded task)."""
    tape = _current_tape()
    if tape is None:
        return False, None, _nothing
    name = getattr(fn, "__qualname__", None) or repr(fn)
    digest = call_hash(name, repr(args), repr(sorted(kwargs.items())))
    entry = tape.open("once", name, digest, (args, kwargs) if kwargs else args)
    if tape.replay is not None:
        found = tape.replay.find(tape, entry["i"], digest)
        if found is not None:
            entry.update(output=found.get("output"), value=found["value"], ms=0.0, replayed=True)
            tape.replay.note(tape, entry, True)
            return True, loaded_value(found["value"]), None
        if tape.replay.strict:
            raise tape.replay.refuse(tape, entry)
        entry["replayed"] = False
        tape.replay.note(tape, entry, False)
    started = time.perf_counter()

    def finish(result: Any) -> None:
        entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
        entry["output"] = summary(result)
        kept = stored_value(result)
        if kept is not None:
            entry["value"] = kept

    return False, None, finish


def _nothing(result: Any) -> None:
    return None


# -- LangChain: the recorder, the chat model and tool wrappers ---------------------------------

_RECORDER_INSTALLED = False
_RECORDER_LOCK = threading.Lock()
_Opened = tuple[Tape, dict[str, Any], float, list[Any]]
_OPEN: dict[Any, _Opened] = {}
"""The open model and tool runs of recorded tasks, by LangChain run id: the tape, the call's
entry, when it started, and the chunks it streamed so far."""


def _install_recorder() -> None:
    """Wrap LangChain's callback managers (once per process) so that the runs started in a
    recorded task are written onto its tape (see the module's docstring)."""
    global _RECORDER_INSTALLED
    with _RECORDER_LOCK:
        if _RECORDER_INSTALLED:
            return
        from langchain_core.callbacks import manager as lc

        managers: tuple[type, ...] = (lc.CallbackManager, lc.AsyncCallbackManager)
        for manager in managers:
            _wrap_start(manager, "on_chat_model_start", _chat_model_started)
            _wrap_start(manager, "on_llm_start", _llm_started)
            _wrap_start(manager, "on_tool_start", _tool_started)
        for run in (lc.CallbackManagerForLLMRun, lc.AsyncCallbackManagerForLLMRun):
            _wrap_event(run, "on_llm_new_token", _token)
            _wrap_event(run, "on_llm_end", _llm_ended)
            _wrap_event(run, "on_llm_error", _failed)
        for tool_run in (lc.CallbackManagerForToolRun, lc.AsyncCallbackManagerForToolRun):
            _wrap_event(tool_run, "on_tool_end", _tool_ended)
            _wrap_event(tool_run, "on_tool_error", _failed)
        _RECORDER_INSTALLED = True


def _wrap_start(cls: type, name: str, record: Callable[..., None]) -> None:
    """Wrap a callback manager's ``on_*_start``: after it made the run manager(s), the
    current task's tape (if any) gets the call, as ``record(tape, managers, *args, **kwargs)``
    (a failure to record is logged, never raised)."""
    fn = cls.__dict__[name]
    if inspect.iscoroutinefunction(fn):

        async def astart(self: Any, *args: Any, **kwargs: Any) -> Any:
            managers = await fn(self, *args, **kwargs)
            tape = _current_tape()
            if tape is not None:
                _recorded(record, tape, managers, *args, **kwargs)
            return managers

        wrapped: Any = astart
    else:

        def start(self: Any, *args: Any, **kwargs: Any) -> Any:
            managers = fn(self, *args, **kwargs)
            tape = _current_tape()
            if tape is not None:
                _recorded(record, tape, managers, *args, **kwargs)
            return managers

        wrapped = start
    wrapped.__wrapped__ = fn
    wrapped.__doc__ = fn.__doc__
    type.__setattr__(cls, name, wrapped)


def _wrap_event(cls: type, name: str, record: Callable[..., None]) -> None:
    """Wrap a run manager's end, error or token method: ``record(open_run, *args,
    **kwargs)`` first when the run is one of a recorded task's (see :data:`_OPEN`)."""
    fn = cls.__dict__[name]
    if inspect.iscoroutinefunction(fn):

        async def aevent(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _OPEN:
                _ended(record, self.run_id, *args, **kwargs)
            return await fn(self, *args, **kwargs)

        wrapped: Any = aevent
    else:

        def event(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _OPEN:
                _ended(record, self.run_id, *args, **kwargs)
            return fn(self, *args, **kwargs)

        wrapped = event
    wrapped.__wrapped__ = fn
    wrapped.__doc__ = fn.__doc__
    type.__setattr__(cls, name, wrapped)


def _recorded(record: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    try:
        record(*args, **kwargs)
    except Exception:  # recording must never break the call it records
        _LOG.warning("could not record a LangChain call", exc_info=True)


def _ended(record: Callable[..., None], run_id: Any, *args: Any, **kwargs: Any) -> None:
    opened = _OPEN.get(run_id) if record is _token else _OPEN.pop(run_id, None)
    if opened is not None:
        _recorded(record, opened, *args, **kwargs)


def _chat_model_started(
    tape: Tape,
    managers: list[Any],
    serialized: dict[str, Any],
    messages: list[list[Any]],
    run_id: Any = None,
    **kw: Any,
) -> None:
    name = _model_name(serialized, kw)
    params = _params(kw.get("invocation_params"))
    for manager, history in zip(managers, messages, strict=False):
        digest = call_hash(name, messages_text(history), params)
        summary_ = _messages_summary(history)
        _start(tape, "chat_model", name, digest, summary_, manager.run_id, True)


def _llm_started(
    tape: Tape,
    managers: list[Any],
    serialized: dict[str, Any],
    prompts: list[str],
    run_id: Any = None,
    **kw: Any,
) -> None:
    name = _model_name(serialized, kw)
    params = _params(kw.get("invocation_params"))
    for manager, prompt in zip(managers, prompts, strict=False):
        digest = call_hash(name, prompt, params)
        _start(tape, "llm", name, digest, prompt, manager.run_id, True)


def _start(
    tape: Tape, kind: str, name: str, digest: str, shown: Any, run_id: Any, answerable: bool
) -> None:
    entry = tape.open(kind, name, digest, shown)
    _OPEN[run_id] = (tape, entry, time.perf_counter(), [])
    replay = tape.replay
    if replay is None or not answerable:
        return
    found = replay.find(tape, entry["i"], digest)
    answer: Any = found
    if found is None and replay.strict:
        answer = replay.refuse(tape, entry)
    if answer is None:  # the input changed: the call goes live (noted now: it may fail)
        entry["replayed"] = False
        replay.note(tape, entry, False)
        return
    with tape._lock:
        tape.stash[run_id] = (entry, answer)
    _STARTED.set(run_id)  # for a ``stream`` that calls ``_stream`` without its run


def _token(opened: _Opened, token: Any, **kw: Any) -> None:
    if not opened[1].get("replayed"):
        chunk = kw.get("chunk")
        opened[3].append(chunk if chunk is not None else token)


def _llm_ended(opened: _Opened, response: Any, **kw: Any) -> None:
    tape, entry, started, chunks = opened
    if entry.get("replayed"):
        return
    entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
    output = _first_output(response)
    entry["output"] = summary(getattr(output, "content", output))
    tokens = _tokens(output, response)
    if tokens:
        entry["tokens"] = tokens
    kept = stored_value(output)
    if kept is not None:
        entry["value"] = kept
        if chunks:
            streamed = stored_chunks(chunks)
            if streamed is not None:
                entry["chunks"] = streamed
    replay = tape.replay
    if replay is not None and "replayed" not in entry:  # not answered after all
        entry["replayed"] = False
        replay.note(tape, entry, False)


def _failed(opened: _Opened, error: BaseException, **kw: Any) -> None:
    entry, started = opened[1], opened[2]
    entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
    entry["error"] = summary(repr(error))


def _tool_started(
    tape: Tape,
    manager: Any,
    serialized: dict[str, Any],
    input_str: str,
    run_id: Any = None,
    parent_run_id: Any = None,
    inputs: dict[str, Any] | None = None,
    **kw: Any,
) -> None:
    name = str((serialized or {}).get("name") or kw.get("name") or "tool")
    shown = inputs if inputs is not None else input_str
    digest = call_hash(name, tool_input_text(inputs, input_str))
    entry = tape.open("tool", name, digest, shown)
    if _RESERVED.get() is not None:  # the calls inside the tool take their own index
        _RESERVED.set(None)
    _OPEN[manager.run_id] = (tape, entry, time.perf_counter(), [])
    if tape.replay is not None:
        entry["replayed"] = False
        tape.replay.note(tape, entry, False)


def _tool_ended(opened: _Opened, output: Any, **kw: Any) -> None:
    entry, started = opened[1], opened[2]
    entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
    entry["output"] = summary(getattr(output, "content", output))
    kept = stored_value(output)
    if kept is not None:
        entry["value"] = kept


# -- LangChain embeddings (they have no callbacks: their methods are wrapped) ----------------

_EMBEDDING_METHODS = ("embed_query", "embed_documents", "aembed_query", "aembed_documents")
_EMBEDDING_CLASSES: set[type] = set()


def wrap_embeddings() -> None:
    """Wrap ``embed_query`` / ``embed_documents`` (and their async forms) of every LangChain
    ``Embeddings`` class defined so far, once per class, so a recorded task records its
    embedding calls and a replay answers them. Outside a recorded task the wrapper only calls
    the method."""
    from langchain_core.embeddings import Embeddings

    for cls in _subclasses(Embeddings):
        if cls in _EMBEDDING_CLASSES:
            continue
        _EMBEDDING_CLASSES.add(cls)
        for name in _EMBEDDING_METHODS:
            fn = cls.__dict__.get(name)
            if fn is None or not callable(fn) or getattr(fn, "__isabstractmethod__", False):
                continue
            wrapped = _embedding_acall(fn, name) if name.startswith("a") else None
            type.__setattr__(cls, name, wrapped or _embedding_call(fn, name))


def _embedding_open(model: Any, method: str, texts: Any) -> tuple[Tape, dict[str, Any]] | None:
    """The tape and entry of an embedding call of a recorded task (None: not recorded)."""
    tape = _current_tape()
    if tape is None or _IN_EMBEDDING.get():
        return None
    name = f"{type(model).__name__}.{method.removeprefix('a')}"
    text = texts if isinstance(texts, str) else json.dumps(list(texts), ensure_ascii=False)
    digest = call_hash(name, text, repr(model))
    shown = texts if isinstance(texts, str) else f"{len(texts)} texts: {texts[:3]!r}"
    return tape, tape.open("embedding", name, digest, shown)


def _embedding_answer(tape: Tape, entry: dict[str, Any]) -> tuple[bool, Any]:
    """``(True, vectors)`` when the replay answers the call, else ``(False, None)``."""
    replay = tape.replay
    if replay is None:
        return False, None
    found = replay.find(tape, entry["i"], entry["hash"])
    if found is not None:
        entry.update(output=found.get("output"), value=found["value"], ms=0.0, replayed=True)
        replay.note(tape, entry, True)
        return True, loaded_value(found["value"])
    if replay.strict:
        raise replay.refuse(tape, entry)
    entry["replayed"] = False
    replay.note(tape, entry, False)
    return False, None


def _embedding_done(entry: dict[str, Any], started: float, result: Any) -> None:
    entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
    many = bool(result) and isinstance(result[0], list)
    size = len(result[0]) if many else len(result or ())
    entry["output"] = f"{len(result)} vectors of {size}" if many else f"vector of {size}"
    kept = stored_value(result)
    if kept is not None:
        entry["value"] = kept


def _embedding_call(fn: Any, method: str) -> Any:
    def embed(self: Any, texts: Any, *args: Any, **kwargs: Any) -> Any:
        opened = _embedding_open(self, method, texts)
        if opened is None:
            return fn(self, texts, *args, **kwargs)
        tape, entry = opened
        answered, value = _embedding_answer(tape, entry)
        if answered:
            return value
        token = _IN_EMBEDDING.set(True)
        started = time.perf_counter()
        try:
            result = fn(self, texts, *args, **kwargs)
        except BaseException as exc:
            entry["error"] = summary(repr(exc))
            raise
        finally:
            _IN_EMBEDDING.reset(token)
        _embedding_done(entry, started, result)
        return result

    embed.__wrapped__ = fn  # type: ignore[attr-defined]  # functools convention: the method it wraps
    embed.__doc__ = fn.__doc__
    return embed


def _embedding_acall(fn: Any, method: str) -> Any:
    async def aembed(self: Any, texts: Any, *args: Any, **kwargs: Any) -> Any:
        opened = _embedding_open(self, method, texts)
        if opened is None:
            return await fn(self, texts, *args, **kwargs)
        tape, entry = opened
        answered, value = _embedding_answer(tape, entry)
        if answered:
            return value
        token = _IN_EMBEDDING.set(True)
        started = time.perf_counter()
        try:
            result = await fn(self, texts, *args, **kwargs)
        except BaseException as exc:
            entry["error"] = summary(repr(exc))
            raise
        finally:
            _IN_EMBEDDING.reset(token)
        _embedding_done(entry, started, result)
        return result

    aembed.__wrapped__ = fn  # type: ignore[attr-defined]  # functools convention: the method it wraps  # functools convention: the method it wraps
    aembed.__doc__ = fn.__doc__
    return aembed


_TOOL_INPUT_JSON = json.JSONEncoder(sort_keys=True, default=repr, ensure_ascii=False)
"""``json.dumps(..., sort_keys=True, default=repr, ensure_ascii=False)``, made once."""
_MESSAGES_JSON = json.JSONEncoder(default=repr, ensure_ascii=False)
"""``json.dumps(..., default=repr, ensure_ascii=False)``, made once."""


def tool_input_text(inputs: Mapping[str, Any] | None, input_str: str) -> str:
    """A tool call's input as hashed: its arguments as sorted JSON, else its text."""
    if inputs is None:
        return input_str
    return _TOOL_INPUT_JSON.encode(inputs)


def messages_text(messages: list[Any]) -> str:
    """A chat model call's messages as hashed: each message's class, content, name, tool
    calls and tool call id (not its id, which a fresh run gives anew)."""
    kept = []
    for m in messages:
        fields = getattr(m, "__dict__", None) or {}  # a pydantic model's fields: no lookups
        kept.append(
            (
                type(m).__name__,
                fields.get("content", m),
                fields.get("name"),
                fields.get("tool_calls") or (),
                fields.get("tool_call_id"),
            )
        )
    return _MESSAGES_JSON.encode(kept)


def _messages_summary(messages: list[Any]) -> str:
    if not messages:
        return "no messages"
    last = messages[-1]
    content = getattr(last, "content", last)
    if isinstance(content, str) and len(content) > SUMMARY_CHARS:
        content = content[:SUMMARY_CHARS]  # the summary keeps less than this anyway
    return f"{len(messages)} messages, last {type(last).__name__}: {content}"


def _model_name(serialized: Mapping[str, Any] | None, kw: Mapping[str, Any]) -> str:
    ids = (serialized or {}).get("id") or ()
    return str(kw.get("name") or (ids[-1] if ids else None) or "model")


def _params(params: Any) -> str:
    if not isinstance(params, Mapping):
        return ""
    return repr(sorted((str(k), repr(v)) for k, v in params.items()))


def _first_output(response: Any) -> Any:
    generations = getattr(response, "generations", None) or [[]]
    first = generations[0][0] if generations and generations[0] else None
    if first is None:
        return None
    message = getattr(first, "message", None)
    return message if message is not None else getattr(first, "text", None)


def _tokens(output: Any, response: Any) -> dict[str, int] | None:
    usage = getattr(output, "usage_metadata", None)
    if isinstance(usage, Mapping):
        return {
            "input": int(usage.get("input_tokens") or 0),
            "output": int(usage.get("output_tokens") or 0),
            "total": int(usage.get("total_tokens") or 0),
        }
    llm_output = getattr(response, "llm_output", None) or {}
    usage = llm_output.get("token_usage") if isinstance(llm_output, Mapping) else None
    if isinstance(usage, Mapping):
        return {
            "input": int(usage.get("prompt_tokens") or 0),
            "output": int(usage.get("completion_tokens") or 0),
            "total": int(usage.get("total_tokens") or 0),
        }
    return None


def _take_stash(run_id: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The recorded answer to the model run ``run_id`` of the current task (None: it goes
    live), marked replayed in the task's tape; raises the refusal of a ``strict`` replay."""
    tape = _current_tape()
    if tape is None or tape.replay is None:
        return None
    if run_id is None:
        run_id = _STARTED.get()
    if run_id is None:
        return None
    with tape._lock:
        found = tape.stash.pop(run_id, None)
    if found is None:
        return None
    entry, answer = found
    if isinstance(answer, ReplayMismatchError):
        raise answer
    entry.update(output=answer.get("output"), value=answer["value"], ms=0.0, replayed=True)
    if answer.get("tokens"):
        entry["tokens"] = answer["tokens"]
    tape.replay.note(tape, entry, True)
    return entry, answer


def _chat_chunks(answer: Mapping[str, Any]) -> list[Any]:
    """The recorded answer of a chat model as ``ChatGenerationChunk`` s: the chunks it streamed
    when recorded, else its whole message as one chunk."""
    from langchain_core.messages.utils import _msg_to_chunk
    from langchain_core.outputs import ChatGenerationChunk

    kept = answer.get("chunks")
    if kept:
        return [ChatGenerationChunk(message=loaded_value(c)) for c in kept]
    return [ChatGenerationChunk(message=_msg_to_chunk(loaded_value(answer["value"])))]


def _llm_chunks(answer: Mapping[str, Any]) -> list[Any]:
    """The same for a (non-chat) LLM: ``GenerationChunk`` s of its text."""
    from langchain_core.outputs import GenerationChunk

    texts = answer.get("chunks") or [loaded_value(answer["value"])]
    return [GenerationChunk(text=str(t)) for t in texts]


def _chat_result(run_manager: Any) -> Any:
    """The chat model run's recorded ``ChatResult`` (its streamed chunks sent to the run's
    callbacks first, so a replayed run streams tokens too), or None."""
    taken = _take_stash(getattr(run_manager, "run_id", None) if run_manager else None)
    if taken is None:
        return None
    from langchain_core.outputs import ChatGeneration, ChatResult

    _, answer = taken
    return ChatResult(generations=[ChatGeneration(message=loaded_value(answer["value"]))]), (
        _chat_chunks(answer) if answer.get("chunks") else []
    )


def _llm_result(prompts: Any, run_managers: Any) -> Any:
    """A (non-chat) LLM run's recorded answer as the ``LLMResult`` and the chunks to send, or
    None (several prompts at once are not answered: they go live)."""
    if not run_managers or len(prompts) != 1:
        return None
    taken = _take_stash(run_managers[0].run_id)
    if taken is None:
        return None
    from langchain_core.outputs import Generation, LLMResult, RunInfo

    _, answer = taken
    result = LLMResult(generations=[[Generation(text=str(loaded_value(answer["value"])))]])
    result.run = [RunInfo(run_id=m.run_id) for m in run_managers]
    return result, (_llm_chunks(answer) if answer.get("chunks") else [])


def _subclasses(base: type) -> list[type]:
    """``base`` and every class derived from it, as defined now."""
    found: list[type] = [base]
    todo: list[type] = [base]
    while todo:
        subs: list[type] = todo.pop().__subclasses__()
        for sub in subs:
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


def _wrap_streams(base: type, chunks_of: Callable[[Mapping[str, Any]], list[Any]]) -> None:
    """Make every ``_stream`` / ``_astream`` defined by a subclass of ``base`` yield the
    recorded chunks of a replayed run (undone by the last ``use_replay``)."""
    for cls in _subclasses(base):
        for name in ("_stream", "_astream"):
            fn = cls.__dict__.get(name)
            if fn is None or not callable(fn):
                continue
            wrapped = _replayed_astream(fn, chunks_of) if name == "_astream" else None
            wrapped = wrapped or _replayed_stream(fn, chunks_of)
            type.__setattr__(cls, name, wrapped)
            _UNDO.append(_restore(cls, name, fn))


def _restore(cls: type, name: str, fn: Any) -> Callable[[], None]:
    def undo() -> None:
        type.__setattr__(cls, name, fn)

    return undo


def _replayed_stream(fn: Any, chunks_of: Callable[[Mapping[str, Any]], list[Any]]) -> Any:
    def _stream(self: Any, *args: Any, run_manager: Any = None, **kwargs: Any) -> Any:
        taken = _take_stash(getattr(run_manager, "run_id", None))
        if taken is None:
            yield from fn(self, *args, run_manager=run_manager, **kwargs)
            return
        yield from chunks_of(taken[1])

    return _stream


def _replayed_astream(fn: Any, chunks_of: Callable[[Mapping[str, Any]], list[Any]]) -> Any:
    async def _astream(self: Any, *args: Any, run_manager: Any = None, **kwargs: Any) -> Any:
        taken = _take_stash(getattr(run_manager, "run_id", None))
        if taken is None:
            async for chunk in fn(self, *args, run_manager=run_manager, **kwargs):
                yield chunk
            return
        for chunk in chunks_of(taken[1]):
            yield chunk

    return _astream


def _install_hooks() -> None:
    """Wrap the chat models' and the tools' call (undone by the last ``use_replay``)."""
    if not _RECORDER_INSTALLED:
        _install_recorder()
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.tools import BaseTool

    generate, agenerate = BaseChatModel._generate_with_cache, BaseChatModel._agenerate_with_cache

    def replayed_generate(
        self: Any, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        found = _chat_result(run_manager)
        if found is None:
            return generate(self, messages, stop, run_manager, **kwargs)
        for chunk in found[1]:
            run_manager.on_llm_new_token(chunk.message.content, chunk=chunk)
        return found[0]

    async def replayed_agenerate(
        self: Any, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        found = _chat_result(run_manager)
        if found is None:
            return await agenerate(self, messages, stop, run_manager, **kwargs)
        for chunk in found[1]:
            await run_manager.on_llm_new_token(chunk.message.content, chunk=chunk)
        return found[0]

    BaseChatModel._generate_with_cache = replayed_generate  # type: ignore[method-assign]  # patched for the replay; undo_models puts it back
    BaseChatModel._agenerate_with_cache = replayed_agenerate  # type: ignore[method-assign]  # patched for the replay; undo_models puts it back

    def undo_models() -> None:
        BaseChatModel._generate_with_cache = generate  # type: ignore[method-assign]  # langchain-core's own method back
        BaseChatModel._agenerate_with_cache = agenerate  # type: ignore[method-assign]  # langchain-core's own method back

    _UNDO.append(undo_models)
    _wrap_streams(BaseChatModel, _chat_chunks)
    _install_llm_hooks()

    run, arun = BaseTool.run, BaseTool.arun

    def replayed_run(self: Any, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        answered, value, index = _tool_answer(self, tool_input, kwargs)
        if answered:
            return value
        token = _RESERVED.set(index)
        try:
            return run(self, tool_input, *args, **kwargs)
        finally:
            _RESERVED.reset(token)

    async def replayed_arun(self: Any, tool_input: Any, *args: Any, **kwargs: Any) -> Any:
        answered, value, index = _tool_answer(self, tool_input, kwargs)
        if answered:
            return value
        token = _RESERVED.set(index)
        try:
            return await arun(self, tool_input, *args, **kwargs)
        finally:
            _RESERVED.reset(token)

    BaseTool.run, BaseTool.arun = replayed_run, replayed_arun  # type: ignore[method-assign]  # patched for the replay; undo_tools puts them back

    def undo_tools() -> None:
        BaseTool.run, BaseTool.arun = run, arun  # type: ignore[method-assign]  # langchain-core's own methods back

    _UNDO.append(undo_tools)


def _install_llm_hooks() -> None:
    """Wrap the (non-chat) LLMs' generation and streaming the same way."""
    from langchain_core.language_models.llms import BaseLLM

    helper, ahelper = BaseLLM._generate_helper, BaseLLM._agenerate_helper

    def replayed_helper(self: Any, prompts: Any, stop: Any, run_managers: Any, **kw: Any) -> Any:
        found = _llm_result(prompts, run_managers)
        if found is None:
            return helper(self, prompts, stop, run_managers, **kw)
        result, chunks = found
        for chunk in chunks:
            run_managers[0].on_llm_new_token(chunk.text, chunk=chunk)
        for manager, flat in zip(run_managers, result.flatten(), strict=False):
            manager.on_llm_end(flat)
        return result

    async def replayed_ahelper(
        self: Any, prompts: Any, stop: Any, run_managers: Any, **kw: Any
    ) -> Any:
        found = _llm_result(prompts, run_managers)
        if found is None:
            return await ahelper(self, prompts, stop, run_managers, **kw)
        result, chunks = found
        for chunk in chunks:
            await run_managers[0].on_llm_new_token(chunk.text, chunk=chunk)
        for manager, flat in zip(run_managers, result.flatten(), strict=False):
            await manager.on_llm_end(flat)
        return result

    BaseLLM._generate_helper = replayed_helper  # type: ignore[method-assign]  # patched for the replay; undo() below puts it back
    BaseLLM._agenerate_helper = replayed_ahelper  # type: ignore[method-assign]  # patched for the replay; undo() below puts it back

    def undo() -> None:
        BaseLLM._generate_helper = helper  # type: ignore[method-assign]  # langchain-core's own method back
        BaseLLM._agenerate_helper = ahelper  # type: ignore[method-assign]  # langchain-core's own method back

    _UNDO.append(undo)
    _wrap_streams(BaseLLM, _llm_chunks)


def _tool_answer(tool: Any, tool_input: Any, kwargs: Mapping[str, Any]) -> tuple[bool, Any, Any]:
    """``(True, output, None)`` when the replay answers this tool call, else ``(False, None,
    index)``: the call goes live under the call index kept for it (None outside a replay)."""
    tape = _current_tape()
    if tape is None or tape.replay is None or _RESERVED.get() is not None:
        return False, None, None
    inputs = None
    if isinstance(tool_input, dict):
        filtered = getattr(tool, "_filter_injected_args", None)
        inputs = filtered(tool_input) if callable(filtered) else tool_input
    text = tool_input if isinstance(tool_input, str) else str(inputs or tool_input)
    name = str(tool.name)
    digest = call_hash(name, tool_input_text(inputs, text))
    index = tape.reserve()
    found = tape.replay.find(tape, index, digest)
    entry: dict[str, Any] = {
        "kind": "tool",
        "name": name,
        "hash": digest,
        "input": summary(inputs if inputs is not None else text),
    }
    if found is None:
        if tape.replay.strict:
            entry["i"] = index
            tape.fill(index, {**entry, "error": "refused: no recorded call"})
            raise tape.replay.refuse(tape, entry)
        return False, None, index
    value = loaded_value(found["value"])
    call_id = kwargs.get("tool_call_id")
    if call_id is not None and getattr(value, "tool_call_id", call_id) != call_id:
        value = value.model_copy(update={"tool_call_id": call_id})
    entry.update(output=found.get("output"), value=found["value"], ms=0.0, replayed=True)
    tape.fill(index, entry)
    tape.replay.note(tape, entry, True)
    return True, value, None
