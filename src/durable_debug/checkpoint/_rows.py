"""Rows of the four checkpoint tables, shared by every saver that stores rows (SQLite,
PostgreSQL, Redis) and by the readers of stored threads (``latest``, ``outline``,
``langgraph_sqlite``).

This module turns what a saver is given into table rows (serializing every value *before*
anything is written) and turns rows back into :class:`CheckpointTuple`. It knows nothing about
connections or SQL dialects.

    rows = blob_rows(thread_id, "", checkpoint, new_versions, serde)  # checkpoint_blobs rows
    record = checkpoint_record(thread_id, checkpoint, serde)         # checkpoints.checkpoint
    tup = to_tuple(parse_checkpoint_row(row, serde), blobs, writes, serde)

Two encodings matter to anyone reading the tables in plain SQL:

* ``checkpoints.checkpoint`` and ``checkpoints.metadata`` are JSON, written and read by
  :mod:`durable_debug.checkpoint._json_columns` (a value JSON cannot hold exactly is wrapped
  as ``{"$serde": [tag, base64]}``).
* Channel versions are stored without the engine's 32-digit zero padding: the version
  ``"00000000000000000000000000000007.1f3a…"`` is stored as ``"7.1f3a…"``. A version in any
  other format is stored as ``"!"`` + itself.
* Version maps — the pointer map ``channel_versions`` and each node's ``versions_seen`` — are
  stored grouped by version: ``{"7.1f3a…": ["a", "b"], "9.0c2e…": ["log"]}``. Most channels of
  a checkpoint sit at a few versions (the steps that last wrote them), so a 100-channel pointer
  map holds each version once instead of once per channel. Flat maps (channel → version), as
  stored before, are still read.
* A channel that has a version but no value (a trigger consumed, a value cleared) has no blob
  row: ``channel_versions`` holds the channels with a value, each pointing at its blob, and
  ``empty_versions`` (grouped the same way, left out when there is none) the others. So
  reading a checkpoint looks up only the blobs that hold something. Before schema version 8
  every channel was in ``channel_versions``, an empty one pointing at a row of type
  ``"empty"``; such checkpoints are still read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from durable_debug.checkpoint._json_columns import (
    WRAPPED,
    decode_json,
    dumps_plain,
    encode_json,
    plain_depth,
    storable,
)
from durable_debug.checkpoint.base import (
    INTERRUPT,
    NULL_TASK_ID,
    RESUME,
    SPECIAL_WRITE_IDX,
    ChannelVersions,
    Checkpoint,
    CheckpointNotFoundError,
    CheckpointTuple,
    PendingWrite,
    SerializerProtocol,
    checkpoint_config,
    replace_checkpoint,
)
from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    SerdeError,
    UnsupportedValueError,
    limits_of,
    with_location,
)

__all__ = [
    "EMPTY",
    "EMPTY_VERSIONS",
    "BlobKey",
    "BlobRow",
    "CheckpointRow",
    "ParsedCheckpoint",
    "WriteRow",
    "blob_keys",
    "blob_rows",
    "checkpoint_record",
    "compact_version",
    "full_version",
    "group_versions",
    "metadata_text",
    "missing_blob",
    "not_found",
    "parse_checkpoint_row",
    "parse_checkpoint_rows",
    "stored_pointers",
    "to_tuple",
    "ungroup_versions",
    "write_rows",
]

EMPTY = "empty"
"""Blob type of a channel version that holds no value (the channel was cleared), in the rows
written before schema version 8 (see :data:`EMPTY_VERSIONS`)."""

EMPTY_VERSIONS = "empty_versions"
"""Key of the stored checkpoint's grouped version map of its channels that hold no value, which
have no blob row (left out when there is none; see the module docstring)."""

BlobKey = tuple[str, str, str, str]
"""Key of a ``checkpoint_blobs`` row: (thread_id, checkpoint_ns, channel, stored version)."""

BlobRow = tuple[str, str, str, str, str, "bytes | None"]
"""A ``checkpoint_blobs`` row: the key, then ``type`` and ``blob``."""

WriteRow = tuple[str, str, str, str, int, str, str, bytes, str]
"""A ``checkpoint_writes`` row: thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel,
type, blob, task_path."""


class CheckpointRow(NamedTuple):
    """A ``checkpoints`` row as selected (JSON columns as text)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: str
    """The checkpoint without its channel values, as JSON."""
    metadata: str
    """The metadata, as JSON."""


class ParsedCheckpoint(NamedTuple):
    """A ``checkpoints`` row with its JSON decoded."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    record: dict[str, Any]
    """The checkpoint without ``channel_values``, version maps in the engine's format."""
    pointers: dict[str, tuple[str, ...]]
    """The pointer map as stored: version (as in ``checkpoint_blobs.version``) → channels."""
    metadata: dict[str, Any]
    """The decoded metadata."""

    @property
    def key(self) -> tuple[str, str, str]:
        """``(thread_id, checkpoint_ns, checkpoint_id)``: the checkpoint's primary key."""
        return (self.thread_id, self.checkpoint_ns, self.checkpoint_id)


# --- versions ----------------------------------------------------------------------------------

_PADDED_VERSION = re.compile(r"(\d{32})\.(.+)", re.DOTALL)


@functools.lru_cache(maxsize=1 << 16)  # pointer maps repeat most versions of their parent
def compact_version(version: str) -> str:
    """Return the stored form of a channel version (see the module docstring)."""
    if not isinstance(version, str):
        raise TypeError(f"channel versions must be strings, got {version!r}")
    match = _PADDED_VERSION.fullmatch(version)
    if match is None:
        return "!" + version
    return f"{int(match.group(1))}.{match.group(2)}"


@functools.lru_cache(maxsize=1 << 16)
def full_version(stored: str) -> str:
    """Return the engine's version string for a stored version."""
    if stored.startswith("!"):
        return stored[1:]
    counter, dot, suffix = stored.partition(".")
    if not (dot and counter.isdigit()):
        return stored  # not written by this module; hand it back untouched
    return f"{counter.zfill(32)}.{suffix}"


def group_versions(versions: Mapping[str, str]) -> dict[str, list[str]]:
    """Return a version map (channel → version) as stored: stored version → its channels."""
    if not isinstance(versions, Mapping):
        raise TypeError(f"version maps must be dicts of channel → version, got {versions!r:.80}")
    grouped: dict[str, list[str]] = {}
    for channel, version in versions.items():
        grouped.setdefault(compact_version(version), []).append(channel)
    return grouped


def ungroup_versions(stored: Any) -> dict[str, str]:
    """Return a stored version map as channel → engine version.

    The map is grouped (stored version → channels); a flat one (channel → stored version), as
    written before version maps were grouped, is read too.
    """
    if type(stored) is not dict:
        raise CorruptPayloadError(f"a stored version map is not a JSON object: {stored!r:.80}")
    versions: dict[str, str] = {}
    for key, value in stored.items():
        if type(value) is list:
            full = full_version(key)
            for channel in value:
                if type(channel) is not str:
                    raise CorruptPayloadError(f"a stored version map names channel {channel!r:.80}")
                versions[channel] = full
        elif type(value) is str:
            versions[key] = full_version(value)
        else:
            raise CorruptPayloadError(
                f"a stored version map must list channel names per version, got {value!r:.80}"
            )
    return versions


def stored_pointers(stored: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Return a stored pointer map, checked by :func:`ungroup_versions`, grouped by version.

    The channels of each version are a tuple: a page of history holds the pointer maps of all
    its checkpoints while it is consumed, and tuples of strings are dropped from the garbage
    collector's lists at its first pass, where lists would stay in them (each collection of
    the older generations would walk every one of them again).
    """
    grouped: dict[str, Any] = {}
    for key, value in stored.items():
        if type(value) is list:
            have = grouped.get(key)
            grouped[key] = tuple(value) if have is None else (*have, *value)
        else:
            have = grouped.get(value)
            grouped[value] = (key,) if have is None else (*have, key)
    return grouped


def _pointer_map(stored: Any) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """:func:`ungroup_versions` and :func:`stored_pointers` of a stored pointer map, in one
    pass when it is grouped (as this module writes it)."""
    if type(stored) is not dict:
        raise CorruptPayloadError(f"a stored version map is not a JSON object: {stored!r:.80}")
    versions: dict[str, str] = {}
    pointers: dict[str, tuple[str, ...]] = {}
    for key, value in stored.items():
        if type(value) is not list:  # a flat map, as stored before maps were grouped
            return ungroup_versions(stored), stored_pointers(stored)
        full = full_version(key)
        for channel in value:
            if type(channel) is not str:
                raise CorruptPayloadError(f"a stored version map names channel {channel!r:.80}")
            versions[channel] = full
        pointers[key] = tuple(value)
    return versions, pointers


def _check_channel_name(channel: str) -> None:
    """Refuse a channel name (a state key, or a node's ``branch:to:…`` channel) that the
    stores' text columns cannot keep exactly, before anything is written."""
    if not (type(channel) is str and storable(channel)):
        raise UnsupportedValueError(
            f"the channel name {channel!r:.80} holds a NUL character or a lone surrogate, which "
            "the store cannot keep; rename the node or state key it comes from"
        )


# --- writing -----------------------------------------------------------------------------------


def checkpoint_record(thread_id: str, checkpoint: Checkpoint, serde: SerializerProtocol) -> str:
    """Return the JSON stored in ``checkpoints.checkpoint``: everything but the values."""
    record: dict[str, Any] = {k: v for k, v in checkpoint.items() if k != "channel_values"}
    with with_location(thread=thread_id, checkpoint=checkpoint["id"], field="checkpoint"):
        values, all_versions = checkpoint["channel_values"], checkpoint["channel_versions"]
        if not isinstance(all_versions, Mapping):
            group_versions(all_versions)  # raises, saying what a version map must be
        held: dict[str, str] = {}
        cleared: dict[str, str] = {}
        for channel, version in all_versions.items():
            (held if channel in values else cleared)[channel] = version
        versions = record["channel_versions"] = group_versions(held)
        empty: dict[str, list[str]] = {}
        if cleared:
            empty = record[EMPTY_VERSIONS] = group_versions(cleared)
        seen = record["versions_seen"] = {
            node: group_versions(versions) for node, versions in checkpoint["versions_seen"].items()
        }
        limit = limits_of(serde).max_depth
        if limit >= _VERSION_MAPS_DEPTH and _plain_version_maps(versions, seen, empty):
            # The version maps (most of the record) are checked by shape; the rest by the
            # general scan, which then sees only a few scalars.
            rest = {k: v for k, v in record.items() if k not in _VERSION_MAPS}
            depth = plain_depth(rest, limit)
            if depth is not None and depth <= limit:
                return dumps_plain(record)
        return encode_json(record, serde)


_VERSION_MAPS = frozenset({"channel_versions", EMPTY_VERSIONS, "versions_seen"})
_VERSION_MAPS_DEPTH = 4
"""How deep the grouped version maps nest in a record: versions_seen → node → version → list."""


def _plain_version_maps(
    versions: dict[str, list[str]], seen: dict[Any, Any], empty: dict[str, list[str]]
) -> bool:
    """Whether grouped version maps hold only text JSON keeps exactly (as :func:`plain_depth`
    would find, at a fraction of its cost): string node and channel names, no wrapping marker,
    nothing a text column refuses. Versions are :func:`compact_version`'s strings."""
    if WRAPPED in seen:
        return False
    strings: list[Any] = list(seen)
    for grouped in (versions, empty, *seen.values()):
        strings.extend(grouped)
        for channels in grouped.values():
            strings.extend(channels)
    if not _ONLY_STR(map(type, strings)):
        return False
    return storable("".join(strings))


_ONLY_STR = frozenset((str,)).issuperset


def metadata_text(
    thread_id: str, checkpoint_id: str, metadata: Mapping[str, Any], serde: SerializerProtocol
) -> str:
    """Return the JSON stored in ``checkpoints.metadata``."""
    with with_location(thread=thread_id, checkpoint=checkpoint_id, field="metadata"):
        return encode_json(dict(metadata), serde)


def blob_rows(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
    serde: SerializerProtocol,
) -> list[BlobRow]:
    """Serialize the value of every channel in ``new_versions`` into a blob row.

    A channel with a new version but no value gets no row: the checkpoint's record lists it
    under :data:`EMPTY_VERSIONS` (:func:`checkpoint_record`).
    """
    values = checkpoint["channel_values"]
    rows: list[BlobRow] = []
    channel = ""
    try:  # one handler for the loop: a `with with_location(...)` per value costs too much
        for channel, version in new_versions.items():
            _check_channel_name(channel)
            if channel in values:
                type_, blob = serde.dumps_typed(values[channel])
                rows.append(
                    (thread_id, checkpoint_ns, channel, compact_version(version), type_, blob)
                )
    except SerdeError as exc:
        raise exc.located(thread=thread_id, checkpoint=checkpoint["id"], channel=channel) from None
    return rows


def write_rows(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_id: str,
    task_path: str,
    writes: Sequence[tuple[str, Any]],
    serde: SerializerProtocol,
) -> tuple[list[WriteRow], list[WriteRow]]:
    """Serialize a task's writes into ``(ordinary rows, special rows)``.

    Ordinary writes get ``idx`` 0, 1, 2… by position and are inserted once; special writes get
    their fixed index from :data:`SPECIAL_WRITE_IDX` and replace the previous one.
    """
    ordinary: list[WriteRow] = []
    special: list[WriteRow] = []
    serialized: list[tuple[str, tuple[str, bytes]]] = []
    channel = ""
    try:
        for channel, value in writes:
            _check_channel_name(channel)
            serialized.append((channel, serde.dumps_typed(value)))
    except SerdeError as exc:
        raise exc.located(thread=thread_id, checkpoint=checkpoint_id, channel=channel) from None
    for position, (channel, (type_, blob)) in enumerate(serialized):
        idx = SPECIAL_WRITE_IDX.get(channel, position)
        row = (
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            task_id,
            idx,
            channel,
            type_,
            blob,
            task_path,
        )
        (special if channel in SPECIAL_WRITE_IDX else ordinary).append(row)
    return ordinary, special


# --- reading -----------------------------------------------------------------------------------


def parse_checkpoint_rows(
    rows: Sequence[Sequence[Any]], serde: SerializerProtocol
) -> list[ParsedCheckpoint]:
    """:func:`parse_checkpoint_row` of each of ``rows`` (a page of history).

    Consecutive checkpoints of a thread share most of their ``versions_seen`` (a node's map
    changes only at the steps it runs): a node's stored map equal to the one of the row
    before is not decoded again, its decoded map is copied (each checkpoint has maps of its
    own, which a caller may change).
    """
    limit = limits_of(serde).max_depth
    seen_before: dict[str, tuple[Any, ChannelVersions]] = {}
    return [parse_checkpoint_row(row, serde, limit, seen_before) for row in rows]


def parse_checkpoint_row(
    row: Sequence[Any],
    serde: SerializerProtocol,
    max_depth: int | None = None,
    seen_before: dict[str, tuple[Any, ChannelVersions]] | None = None,
) -> ParsedCheckpoint:
    """Decode the JSON columns of a ``checkpoints`` row (``max_depth``: see
    :func:`decode_json`; ``seen_before``: see :func:`parse_checkpoint_rows`, node → its stored
    and decoded map in the row parsed before)."""
    thread_id, checkpoint_ns, checkpoint_id, parent_id, text, metadata_json = row
    if max_depth is None:
        max_depth = limits_of(serde).max_depth
    field = "checkpoint"
    try:  # one handler for both columns: a `with with_location(...)` per row costs too much
        record = decode_json(text, serde, max_depth)
        if not isinstance(record, dict):
            raise CorruptPayloadError("the stored checkpoint is not a JSON object")
        record["channel_versions"], pointers = _pointer_map(record.get("channel_versions"))
        empty = record.pop(EMPTY_VERSIONS, None)
        if empty is not None:
            _add_empty_versions(record["channel_versions"], empty)
        seen = record.get("versions_seen")
        if type(seen) is not dict:
            raise CorruptPayloadError("the stored versions_seen is not a JSON object")
        if seen_before is None:
            record["versions_seen"] = {node: ungroup_versions(v) for node, v in seen.items()}
        else:
            record["versions_seen"] = _seen_maps(seen, seen_before)
        _check_record(record, checkpoint_id)
        field = "metadata"
        metadata = decode_json(metadata_json, serde, max_depth)
        if not isinstance(metadata, dict):
            raise CorruptPayloadError("the stored metadata is not a JSON object")
        _check_metadata(metadata)
    except SerdeError as exc:
        raise exc.located(thread=thread_id, checkpoint=checkpoint_id, field=field) from None
    return ParsedCheckpoint(
        thread_id, checkpoint_ns, checkpoint_id, parent_id, record, pointers, metadata
    )


def _seen_maps(
    seen: dict[Any, Any], before: dict[str, tuple[Any, ChannelVersions]]
) -> dict[str, ChannelVersions]:
    """:func:`ungroup_versions` of each node's stored map, or a copy of the map decoded for an
    earlier row of the page when the stored map equals that row's (``before`` is updated)."""
    maps: dict[str, ChannelVersions] = {}
    for node, stored in seen.items():
        found = before.get(node)
        if found is not None and found[0] == stored:
            maps[node] = found[1].copy()
        else:
            # Not copied: the page is parsed whole before any of it is handed out, so nothing
            # changes this map before the copies of the rows after are taken.
            decoded = maps[node] = ungroup_versions(stored)
            before[node] = (stored, decoded)
    return maps


def _add_empty_versions(versions: dict[str, str], stored: Any) -> None:
    """Add the versions of a record's :data:`EMPTY_VERSIONS` to its decoded ``versions``; a
    channel in both maps is a CorruptPayloadError (it would have a value and none)."""
    empty = ungroup_versions(stored)
    if not versions.keys().isdisjoint(empty):
        both = sorted(versions.keys() & empty.keys())
        raise CorruptPayloadError(
            f"the stored checkpoint lists channel {both[0]!r:.80} both with a value and empty"
        )
    versions.update(empty)


def _check_record(record: dict[str, Any], checkpoint_id: str) -> None:
    """The fields of a stored checkpoint that the engine and the inspector read."""
    if record.get("id") != checkpoint_id:
        raise CorruptPayloadError(
            f"the stored checkpoint's id is {record.get('id')!r:.80}, not its row's "
            f"{checkpoint_id!r}"
        )
    if type(record.get("ts")) is not str:
        raise CorruptPayloadError(f"the stored checkpoint's ts is {record.get('ts')!r:.80}")


_METADATA_TYPES: Mapping[str, type] = {"step": int, "source": str, "parents": dict}


def _check_metadata(metadata: dict[str, Any]) -> None:
    """The metadata keys the engine and the inspector read, when present, have their type."""
    for key, kind in _METADATA_TYPES.items():
        if key in metadata and type(metadata[key]) is not kind:
            raise CorruptPayloadError(
                f"the stored metadata's {key!r} must be {kind.__name__}, got {metadata[key]!r:.80}"
            )


def blob_keys(checkpoints: Sequence[ParsedCheckpoint]) -> list[BlobKey]:
    """Return the distinct blob keys the pointer maps of ``checkpoints`` refer to."""
    keys: dict[BlobKey, None] = {}
    for c in checkpoints:
        for version, channels in c.pointers.items():
            for channel in channels:
                keys[(c.thread_id, c.checkpoint_ns, channel, version)] = None
    return list(keys)


_IMMUTABLE = (str, int, float, bool, bytes, type(None))
_NOT_LOADED = object()
_SHARED_PAYLOAD = 64
"""Pending writes up to this many bytes are looked up in ``to_tuple``'s ``shared`` cache."""


def to_tuple(
    parsed: ParsedCheckpoint,
    blobs: Mapping[BlobKey, tuple[str, bytes | None]],
    writes: Sequence[tuple[str, str, str, bytes]],
    serde: SerializerProtocol,
    shared: dict[Any, Any] | None = None,
) -> CheckpointTuple:
    """Reassemble a checkpoint from its row, the blobs it points at and its pending writes.

    ``writes`` are ``(task_id, channel, type, blob)`` rows. ``shared`` caches loaded values
    of immutable types between checkpoints of one listing (by blob key, and small pending
    writes by their payload); every mutable value is loaded afresh, so two tuples never share
    a list a caller might mutate.
    """
    thread_id, ns, checkpoint_id = parsed.thread_id, parsed.checkpoint_ns, parsed.checkpoint_id
    shared = {} if shared is None else shared
    values: dict[str, Any] = {}
    pending: list[PendingWrite] = []
    loads = serde.loads_typed
    channel = ""
    try:  # one handler for the loop: a `with with_location(...)` per value costs too much
        for version, channels in parsed.pointers.items():
            for channel in channels:
                key = (thread_id, ns, channel, version)
                value = shared.get(key, _NOT_LOADED)
                if value is _NOT_LOADED:
                    blob = blobs.get(key)
                    if blob is None:
                        raise missing_blob(channel, version)
                    if blob[0] == EMPTY:
                        continue
                    value = loads((blob[0], blob[1] or b""))
                    if type(value) in _IMMUTABLE:
                        shared[key] = value
                values[channel] = value
        for task_id, channel, type_, payload in writes:
            # Small payloads repeat across a listing (a None, a step counter, a route): an
            # immutable value is loaded once per (type, payload).
            small = type(payload) is bytes and len(payload) <= _SHARED_PAYLOAD
            value = shared.get((type_, payload), _NOT_LOADED) if small else _NOT_LOADED
            if value is _NOT_LOADED:
                value = loads((type_, payload))
                if small and type(value) in _IMMUTABLE:
                    shared[(type_, payload)] = value
            if channel in _SPECIAL_SHAPES and task_id != NULL_TASK_ID:
                _check_special_write(task_id, channel, value)
            pending.append((task_id, channel, value))
    except SerdeError as exc:
        raise exc.located(thread=thread_id, checkpoint=checkpoint_id, channel=channel) from None
    checkpoint = replace_checkpoint(parsed.record, channel_values=values)  # type: ignore[arg-type]  # the stored record: a Checkpoint's keys but channel_values
    parent = parsed.parent_checkpoint_id
    return CheckpointTuple(
        config=checkpoint_config(thread_id, ns, checkpoint_id),
        checkpoint=checkpoint,
        metadata=parsed.metadata,  # type: ignore[arg-type]  # the stored metadata dict, a CheckpointMetadata
        parent_config=checkpoint_config(thread_id, ns, parent) if parent else None,
        pending_writes=pending,
    )


def missing_blob(channel: str, stored_version: str) -> CorruptPayloadError:
    """The error for a pointer map entry whose blob is not stored (a deleted or lost row):
    reading on would silently drop the channel from the state."""
    return CorruptPayloadError(
        f"the checkpoint points at version {full_version(stored_version)!r} of channel "
        f"{channel!r}, but no blob of that version is stored (a checkpoint_blobs row, or a "
        "field of the thread's Redis blobs hash, is gone): the store was changed outside "
        "durable_debug or lost data"
    )


def _is_interrupts(value: Any) -> bool:
    return type(value) in (list, tuple) and all(
        type(i) is dict and "id" in i and "value" in i for i in value
    )


_SPECIAL_SHAPES: Mapping[str, tuple[str, Any]] = {
    INTERRUPT: ("a list of {id, value} maps", _is_interrupts),
    RESUME: ("a list", lambda value: type(value) in (list, tuple)),
}
"""Special pending writes of a task that the engine reads by shape: what each must be, and
the check. (The resume value given to ``Command``, under :data:`NULL_TASK_ID`, may be a map
of interrupt ids.)"""


def _check_special_write(task_id: str, channel: str, value: Any) -> None:
    what, check = _SPECIAL_SHAPES[channel]
    if not check(value):
        raise CorruptPayloadError(
            f"the pending {channel} write of task {task_id!r} must be {what}, got {value!r:.80}"
        )


def not_found(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> CheckpointNotFoundError:
    """The error for a config that pins a checkpoint the saver does not hold."""
    return CheckpointNotFoundError(
        f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}"
        + (f" in namespace {checkpoint_ns!r}" if checkpoint_ns else "")
        + "; list the thread's checkpoints with graph.get_state_history(config)."
    )
