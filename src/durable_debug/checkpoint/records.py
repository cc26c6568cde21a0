"""Debug records: what the debugger keeps about each checkpoint, beside it, never in it.

A checkpoint's *debug record* is a small JSON object the engine writes with the checkpoint:

    {"graph_fingerprint": "3f9a0c1d2e4b5a69",        # every checkpoint (graph/version.py)
     "graph_structure": {"nodes": [...], ...},       # the first checkpoint of a version
     "parent_write_ms": 1.7,                          # how long saving the parent took
     "as_node": "review",                              # an update_state checkpoint
     "findings": [{"code": "unknown-key", "message": "...", "node": "a", "key": "x"}],
     "task_calls": {"<task id>": {"node": "agent", "from": "<id>", "calls": [...]}}}

What the engine hands out never carries it: ``metadata``, ``checkpoint``, writes and stream
chunks are what LangGraph would have stored. Where it lives depends on the saver:

* our four savers store it beside the checkpoint (a ``debug`` column on SQLite and
  PostgreSQL, a hash field on Redis, a dict in memory); the engine hands it over inside the
  metadata dict under :data:`RECORD_KEY`, and the saver takes it out before storing the
  metadata (:func:`split_record`), so a saver never stores it in ``metadata``;
* LangGraph's own savers, through ``checkpoint/foreign.py``, keep it as JSON text in the
  checkpoint's metadata under a reserved key (the only place every one of them stores), and
  hand metadata back without it;
* any other saver (a user's) has nowhere safe to keep it, so the records live in this
  process only, in a registry per saver object (:func:`registry`).

Checkpoints written by older versions of durable_debug carry these keys in ``metadata``;
:func:`record_of` reads them from there when a checkpoint has no record.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.names import DEBUG_METADATA_KEY

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import CheckpointTuple

__all__ = [
    "AS_NODE",
    "FINDINGS",
    "GRAPH_STRUCTURE",
    "GRAPH_VERSION",
    "LEGACY_KEYS",
    "PARENT_WRITE_MS",
    "RECORD_KEY",
    "TASK_CALLS",
    "JSONReady",
    "aadd_findings",
    "aadd_task_calls",
    "aread_record",
    "aread_records",
    "attach_record",
    "known_version",
    "parse_record",
    "record_in_metadata",
    "record_of",
    "record_text",
    "registry",
    "split_record",
    "split_stored_record",
    "stores_records",
    "without_record",
]

GRAPH_VERSION = "graph_fingerprint"
"""Record key: the fingerprint of the structure of the graph that saved the checkpoint."""
GRAPH_STRUCTURE = "graph_structure"
"""Record key: that structure, on the first checkpoint of a version in a thread."""
PARENT_WRITE_MS = "parent_write_ms"
"""Record key: milliseconds that saving the parent checkpoint took, measured by the run."""
AS_NODE = "as_node"
"""Record key: the node an ``update_state`` checkpoint was applied as."""
FINDINGS = "findings"
"""Record key: the checkpoint's findings, ``[{"code", "message", "node", "key"}, ...]``."""
TASK_CALLS = "task_calls"
"""Record key: the model, tool and ``once()`` calls of the tasks whose step saved this
checkpoint (or, for tasks that failed or paused, of the tasks that ran from it), by task id:
``{"<task id>": {"node": ..., "from": <checkpoint the task ran from>, "calls": [...]}}``
(``graph/recording.py``)."""
LEGACY_KEYS = (GRAPH_VERSION, GRAPH_STRUCTURE, PARENT_WRITE_MS, AS_NODE)
"""Record keys that older versions stored in ``metadata`` (read from there as a fallback)."""
RECORD_KEY = "__durable_debug_record__"
"""Key under which the engine hands a record to a saver that stores records, inside the
metadata dict of ``aput`` / ``aput_step``; the saver removes it (:func:`split_record`)."""

Key = tuple[str, str, str]
"""(thread_id, checkpoint_ns, checkpoint_id)."""

_REGISTRIES: weakref.WeakKeyDictionary[Any, dict[Key, dict[str, Any]]] = weakref.WeakKeyDictionary()
_PINNED: dict[int, tuple[Any, dict[Key, dict[str, Any]]]] = {}
"""Registries of savers that cannot be weakly referenced (kept for the process's life)."""


_VERSIONS: weakref.WeakKeyDictionary[Any, OrderedDict[Key, str]] = weakref.WeakKeyDictionary()
_VERSIONS_LOCK = threading.Lock()
_VERSIONS_KEPT = 4096
"""Graph versions of the checkpoints this process saved, per saver (the newest kept)."""


_LAST_KNOWN: list[Any] = [None, None]
"""The saver :func:`_remember_version` was last given (a weak reference) and its map: a run
saves every step through one saver, which is then not looked up again each step."""


def _remember_version(saver: Any, key: Key, record: Mapping[str, Any]) -> None:
    version = record.get(GRAPH_VERSION)
    if type(version) is not str and not isinstance(version, str):
        return
    with _VERSIONS_LOCK:
        last, known = _LAST_KNOWN
        if last is None or last() is not saver:
            try:
                known = _VERSIONS.setdefault(saver, OrderedDict())
                _LAST_KNOWN[:] = [weakref.ref(saver), known]
            except TypeError:  # not weakly referenceable
                return
        known[key] = version
        while len(known) > _VERSIONS_KEPT:
            known.popitem(last=False)


def known_version(saver: Any, key: Key) -> str | None:
    """The graph version of a checkpoint this process saved through ``saver`` (None when not
    known here). A checkpoint's version never changes once saved, so a run resuming a
    checkpoint its own process wrote need not read the record back to compare versions. A
    saver whose records live in this process (the memory saver) answers from them
    (its ``known_graph_version``): the engine's runs do not remember those here."""
    with _VERSIONS_LOCK:
        try:
            known = _VERSIONS.get(saver)
        except TypeError:
            known = None
        found = None if known is None else known.get(key)
    if found is None and stores_records(saver):  # one keeping them in memory reads its own
        own = getattr(saver, "known_graph_version", None)
        if own is not None:
            found = own(key)
            return found if isinstance(found, str) else None
    return found


def stores_records(saver: Any) -> bool:
    """Whether ``saver`` stores debug records beside its checkpoints (our savers do)."""
    return getattr(saver, "stores_debug_records", False) is True


def registry(saver: Any) -> dict[Key, dict[str, Any]]:
    """The in-process records of a saver that does not store them (created on first use)."""
    try:
        found = _REGISTRIES.get(saver)
        if found is None:
            found = _REGISTRIES[saver] = {}
        return found
    except TypeError:  # not weakly referenceable, or not hashable
        pinned = _PINNED.get(id(saver))
        if pinned is None or pinned[0] is not saver:
            pinned = _PINNED[id(saver)] = (saver, {})
        return pinned[1]


def split_record(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``metadata`` without the record the engine put in it, and that record (None if none)."""
    if RECORD_KEY not in metadata:
        return dict(metadata), None
    rest = dict(metadata)
    record = rest.pop(RECORD_KEY)
    return rest, dict(record) if record else None


def split_stored_record(
    metadata: Mapping[str, Any], *, copy: bool = True
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """:func:`split_record`, the record copied as :func:`stored_record` copies it (one copy,
    for a saver that keeps records in memory). ``copy=False``: ``metadata`` is a ``dict``
    the caller hands over, whose record key is taken out in place."""
    rest = dict(metadata) if copy or type(metadata) is not dict else metadata
    record = rest.pop(RECORD_KEY, None)
    if not record:
        return rest, None
    return rest, stored_record(record if type(record) is dict else dict(record))


def record_in_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The debug record a checkpoint's metadata holds under
    :data:`~durable_debug.checkpoint.names.DEBUG_METADATA_KEY` (in a LangGraph saver's store),
    None when it holds none, or a value there that is not a record's JSON text."""
    text = (metadata or {}).get(DEBUG_METADATA_KEY)
    if not isinstance(text, str):
        return None
    try:
        return parse_record(text)
    except ValueError:  # not written by the engine: nothing to show
        return None


def without_record(metadata: Mapping[str, Any]) -> Any:
    """``metadata`` as its user sees it: without the debug record key (the same mapping when
    it has none)."""
    if DEBUG_METADATA_KEY not in metadata:
        return metadata
    return {k: v for k, v in metadata.items() if k != DEBUG_METADATA_KEY}


def record_text(record: Mapping[str, Any] | None) -> str | None:
    """The JSON a saver stores for ``record`` (None for no record)."""
    if not record:
        return None
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
"""The types that come back from a JSON round trip as they went in (exact types only)."""
_STR_KEYS = frozenset({str})
"""The one key type a JSON round trip keeps (exact type only)."""


def stored_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """What :func:`parse_record` gives back for ``record`` once stored by :func:`record_text`
    (keys sorted, values as JSON reads them), for a saver that keeps records in memory.

    A record of plain scalars (most steps: the graph's fingerprint and the write time) is
    copied in key order without the round trip through JSON text; one of exact JSON types
    (dicts with string keys, lists, tuples, strings, numbers, booleans, None: the recorded
    calls) is copied as the round trip would give it back; any other goes through it.
    """
    if _STR_KEYS.issuperset(map(type, record)) and _JSON_SCALARS.issuperset(
        map(type, record.values())
    ):
        return dict(sorted(record.items()))
    try:
        return _json_copy(record)  # type: ignore[no-any-return]  # a dict copies to a dict
    except (_NotPlainJSON, RecursionError, TypeError):  # TypeError: keys that do not sort
        pass
    return json.loads(record_text(record) or "{}")  # type: ignore[no-any-return]  # json.loads returns Any; a record's text is a JSON object


class JSONReady(dict):  # type: ignore[type-arg]  # a record's JSON object: any JSON value
    """A part of a record already as :func:`stored_record` would copy it (keys sorted at every
    level, exact JSON types, finite floats, lists for tuples), and referenced by its record
    alone: :func:`stored_record` takes it as it is (a plain ``dict`` of the same items)
    instead of copying it again. The engine's call recording builds its entries so."""


class _NotPlainJSON(Exception):
    """A value :func:`_json_copy` leaves to the JSON round trip."""


def _json_copy(value: Any) -> Any:
    """``json.loads(record_text(value))`` for a value of exact JSON types only (a float must
    be finite): a copy with each dict's keys sorted and tuples as lists. Anything else raises
    :class:`_NotPlainJSON` (a subclass, a non-string key, NaN: the round trip decides)."""
    kind = type(value)
    leaves = _PLAIN_LEAVES
    if kind is JSONReady:
        return dict(value)
    if kind is dict:
        copied = {}
        for key, inner in sorted(value.items()):  # keys differ: only they are compared
            if type(key) is not str:
                raise _NotPlainJSON(key)
            inner_kind = type(inner)
            if inner_kind in leaves:
                copied[key] = inner
            elif not inner and (inner_kind is dict or inner_kind is list or inner_kind is tuple):
                copied[key] = {} if inner_kind is dict else []
            else:
                copied[key] = _json_copy(inner)
        return copied
    if kind is list or kind is tuple:
        if leaves.issuperset(map(type, value)):  # leaves only (a graph structure's names)
            return list(value)
        return [item if type(item) in leaves else _json_copy(item) for item in value]
    if kind in _PLAIN_LEAVES:
        return value
    if kind is float and value - value == 0:  # finite (NaN and infinities are not)
        return value
    raise _NotPlainJSON(value)


_PLAIN_LEAVES = frozenset({str, int, bool, type(None)})
"""Exact types a JSON round trip gives back equal and of the same type (floats are checked:
``json.dumps`` writes NaN and infinities as bare words)."""


def parse_record(text: str | bytes | None) -> dict[str, Any] | None:
    """A record stored by :func:`record_text` (None for none)."""
    if text is None or text in ("", b""):
        return None
    value = json.loads(text)
    return value if isinstance(value, dict) else None


def attach_record(
    saver: Any, key: Key, metadata: Mapping[str, Any], record: Mapping[str, Any]
) -> dict[str, Any]:
    """The metadata to hand to ``saver`` for a checkpoint whose record is ``record``.

    A saver that stores records gets the record inside the metadata (it takes it out); any
    other saver gets the metadata alone, and the record goes to its in-process registry.
    """
    _remember_version(saver, key, record)
    if stores_records(saver):
        return {**metadata, RECORD_KEY: dict(record)}
    registry(saver)[key] = dict(record)
    return dict(metadata)


def record_from_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The record keys an older version stored in a checkpoint's ``metadata``."""
    return {k: metadata[k] for k in LEGACY_KEYS if metadata and k in metadata}


def record_of(
    records: Mapping[tuple[str, str], Mapping[str, Any]], item: CheckpointTuple
) -> dict[str, Any]:
    """The record of ``item`` among ``records`` (by namespace and id), else the keys an older
    version stored in its metadata; ``{}`` when it has neither."""
    conf = item.config.get("configurable") or {}
    found = records.get((str(conf.get("checkpoint_ns") or ""), str(conf.get("checkpoint_id"))))
    if found is not None:
        return {**record_from_metadata(item.metadata), **found}
    return record_from_metadata(item.metadata)


async def aread_records(
    saver: Any,
    thread_id: str,
    checkpoint_ns: str | None = None,
    checkpoint_ids: Iterable[str] | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The stored records of a thread (every namespace when ``checkpoint_ns`` is None; only
    ``checkpoint_ids`` when given), by ``(checkpoint_ns, checkpoint_id)``. Records of a saver
    that does not store them come from this process's registry."""
    wanted = None if checkpoint_ids is None else set(checkpoint_ids)
    if stores_records(saver):
        found: dict[tuple[str, str], dict[str, Any]] = await saver.aget_debug_records(
            thread_id, checkpoint_ns, None if wanted is None else sorted(wanted)
        )
        return found
    return {
        (ns, cid): dict(record)
        for (tid, ns, cid), record in registry(saver).items()
        if tid == thread_id
        and (checkpoint_ns is None or ns == checkpoint_ns)
        and (wanted is None or cid in wanted)
    }


async def aread_record(
    saver: Any, thread_id: str, checkpoint_ns: str, checkpoint_id: str
) -> dict[str, Any] | None:
    """The stored record of one checkpoint (None when it has none)."""
    found = await aread_records(saver, thread_id, checkpoint_ns, [checkpoint_id])
    return found.get((checkpoint_ns, checkpoint_id))


async def aadd_task_calls(
    saver: Any,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_calls: Mapping[str, Any],
) -> None:
    """Add the calls of tasks that ran from a checkpoint already saved and saved no checkpoint
    of their own (they failed, or paused on an interrupt) to that checkpoint's record."""
    if not task_calls:
        return
    if stores_records(saver):
        record = await aread_record(saver, thread_id, checkpoint_ns, checkpoint_id) or {}
        record[TASK_CALLS] = {**record.get(TASK_CALLS, {}), **task_calls}
        await saver.aset_debug_record(thread_id, checkpoint_ns, checkpoint_id, record)
        return
    kept = registry(saver).setdefault((thread_id, checkpoint_ns, checkpoint_id), {})
    kept[TASK_CALLS] = {**kept.get(TASK_CALLS, {}), **task_calls}


async def aadd_findings(
    saver: Any,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    findings: list[dict[str, Any]],
) -> None:
    """Add ``findings`` to the record of a checkpoint already saved (a run that saved
    nothing, such as a resume with nothing pending, reports on the checkpoint it read)."""
    if not findings:
        return
    if stores_records(saver):
        record = await aread_record(saver, thread_id, checkpoint_ns, checkpoint_id) or {}
        record[FINDINGS] = [*record.get(FINDINGS, []), *findings]
        await saver.aset_debug_record(thread_id, checkpoint_ns, checkpoint_id, record)
        return
    kept = registry(saver).setdefault((thread_id, checkpoint_ns, checkpoint_id), {})
    kept[FINDINGS] = [*kept.get(FINDINGS, []), *findings]
