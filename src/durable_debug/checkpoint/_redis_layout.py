"""How RedisSaver lays checkpoints out in Redis: key names, stored values, and the Lua scripts.

Every key of a thread is named from the thread id and namespace, so a thread is a fixed set of
keys per namespace: it can expire as one unit and be deleted in one script. ``P`` is the
saver's prefix, ``{T}`` the thread id, ``{N}`` the namespace (``""`` for a top-level graph);
in names and fields a ``:`` inside an id, namespace or version is written ``%3A`` and a ``%`` is
written ``%25`` (:func:`key_part`), so ``:`` only ever separates parts.

    keys = Keys("durable_debug")
    keys.of(Source("job-1", ""), "checkpoints")   # ['durable_debug:thread:job-1::checkpoints']
    pack_value(["msgpack"], b"\\xa1x")             # b'["msgpack"]\\n\\xa1x'

==============================  ======  ========================================================
key                             type    holds
==============================  ======  ========================================================
P:schema_version                string  the layout version (:data:`SCHEMA_VERSION`)
P:threads                       zset    thread id → when its keys expire (ms since the epoch;
                                        ``inf`` without a ttl)
P:thread:{T}:namespaces         set     the thread's namespaces, written as in key names
P:thread:{T}:{N}:checkpoints    zset    checkpoint ids, all with score 0, so ordered by id
P:thread:{T}:{N}:checkpoint     hash    checkpoint id → the checkpoint without its values, JSON
P:thread:{T}:{N}:metadata       hash    checkpoint id → metadata, JSON
P:thread:{T}:{N}:parent         hash    checkpoint id → parent checkpoint id
P:thread:{T}:{N}:blobs          hash    ``{channel}:{version}`` → blob value (written once)
P:thread:{T}:{N}:writes         zset    ``{checkpoint id}:{task id}:{idx}`` of each pending write
P:thread:{T}:{N}:write          hash    the same field → write value
P:thread:{T}:{N}:debug          hash    checkpoint id → its debug record, JSON
                                        (:mod:`durable_debug.checkpoint.records`)
==============================  ======  ========================================================

The JSON is the SQL savers' (:mod:`durable_debug.checkpoint._rows`), versions included. A blob
value is a one-line JSON header ``["type"]``, a newline, then the serialized bytes; a write value
the same with the header ``["type", "channel", "task_path"]``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import NamedTuple
from urllib.parse import unquote

from durable_debug.checkpoint._schema import DatabaseSetupError
from durable_debug.checkpoint.lease import LEASE_LOST_MARK
from durable_debug.checkpoint.serde import CorruptPayloadError

__all__ = [
    "DEFAULT_PREFIX",
    "NAMESPACE_KEYS",
    "SCHEMA_VERSION",
    "SCRIPTS",
    "Keys",
    "Source",
    "blob_field",
    "key_part",
    "layout_error",
    "pack_value",
    "parse_write_field",
    "unpack_value",
    "write_field",
]

DEFAULT_PREFIX = "durable_debug"
"""First part of every key name, unless the saver is given another ``prefix``."""

SCHEMA_VERSION = 2
"""Version of the key layout, kept in ``P:schema_version``. 2: a channel without a value is
kept in the checkpoint's ``empty_versions`` and has no ``blobs`` field (as in the SQL savers'
schema 8); keys of layout 1 are read as they are, and the saver records 2 when it opens them,
so an older durable_debug refuses them."""

NAMESPACE_KEYS = (
    "checkpoints",
    "checkpoint",
    "metadata",
    "parent",
    "blobs",
    "writes",
    "write",
    "debug",
)
"""Last parts of the names of the keys that hold one (thread, namespace)."""

_LAYOUT_ERROR = "DURABLE_DEBUG_LAYOUT"


# --- names and values --------------------------------------------------------------------------


class Source(NamedTuple):
    """One (thread, namespace): the unit of storage, and one input of a merged listing."""

    thread_id: str
    checkpoint_ns: str


class Keys:
    """Key names under one prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.schema = f"{prefix}:schema_version"
        """The layout version."""
        self.threads = f"{prefix}:threads"
        """Every thread, scored by when it expires."""

    def thread(self, thread_id: str) -> str:
        """The common start of a thread's key names (ends with ``:``)."""
        return f"{self.prefix}:thread:{key_part(thread_id)}:"

    @property
    def leased(self) -> str:
        """The set of thread ids whose lease was taken and not given back: a member whose lease
        key has expired is a thread whose run died (``alist_abandoned_threads``)."""
        return f"{self.prefix}:leased"

    def lease(self, thread_id: str) -> str:
        """The thread's lease (one writer per thread): ``token\\nholder\\nsince``, set with
        ``SET NX PX`` so it expires when its holder stops renewing it. Outside the thread's
        own keys, so deleting a thread's checkpoints leaves a running holder's lease alone."""
        return f"{self.prefix}:lease:{key_part(thread_id)}"

    def namespaces(self, thread_id: str) -> str:
        """The set of a thread's namespaces."""
        return self.thread(thread_id) + "namespaces"

    def of(self, source: Source, *names: str) -> list[str]:
        """Keys of one (thread, namespace), by their last part (:data:`NAMESPACE_KEYS`)."""
        start = f"{self.thread(source.thread_id)}{key_part(source.checkpoint_ns)}:"
        return [start + name for name in names]


def key_part(text: str) -> str:
    """Return ``text`` as it appears in key names and fields (``%`` → ``%25``, ``:`` → ``%3A``)."""
    return text.replace("%", "%25").replace(":", "%3A")


def blob_field(channel: str, stored_version: str) -> str:
    """The field of a blob in ``P:thread:{T}:{N}:blobs``."""
    return f"{channel}:{key_part(stored_version)}"


def write_field(checkpoint_id: str, task_id: str, idx: int) -> str:
    """The field of a pending write in ``P:thread:{T}:{N}:write`` (and member of ``writes``)."""
    return f"{key_part(checkpoint_id)}:{key_part(task_id)}:{idx}"


def parse_write_field(field: bytes) -> tuple[str, int]:
    """(task_id, idx) of a field made by :func:`write_field`."""
    parts = field.decode(errors="replace").split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        return unquote(parts[1]), int(parts[2])
    except ValueError:
        raise CorruptPayloadError(f"the write field {field!r} is not checkpoint:task:idx") from None


def pack_value(header: Sequence[str], payload: bytes) -> bytes:
    """A stored blob or write: a JSON header line, then the serialized bytes."""
    return json.dumps(list(header), separators=(",", ":")).encode() + b"\n" + payload


def unpack_value(raw: bytes, size: int) -> tuple[list[str], bytes]:
    """Split what :func:`pack_value` made; anything else is a :class:`CorruptPayloadError`."""
    head, newline, payload = raw.partition(b"\n")
    try:
        header = json.loads(head) if newline else None
    except ValueError:
        header = None
    if not (
        isinstance(header, list) and len(header) == size and all(type(h) is str for h in header)
    ):
        raise CorruptPayloadError(
            f"the stored value does not start with a header line of {size} string(s) "
            f"(it starts with {bytes(raw[:40])!r})"
        )
    return header, payload


def layout_error(message: str, prefix: str) -> DatabaseSetupError | None:
    """The error for a script that found a key of another type in its way, or None when
    ``message`` (of a Redis error reply) is about something else."""
    if not message.startswith(_LAYOUT_ERROR):
        return None
    _, got, want, key = message.split(" ", 3)
    return DatabaseSetupError(
        f"the Redis key {key!r} holds a {got}, not the {want} durable_debug keeps there: another "
        f"program uses the prefix {prefix!r}. Give the saver another prefix=. Nothing was written."
    )


# --- Lua -------------------------------------------------------------------------------------
# A script runs atomically, but Redis does not roll it back when a command fails: so the writing
# scripts first check that their keys hold the expected types (or nothing), before any write.

_PREAMBLE = (
    ("local NAMESPACE_KEYS = {" + ", ".join(f"'{name}'" for name in NAMESPACE_KEYS) + "}\n")
    + f"""
local function check_types(expected)
  for i, want in ipairs(expected) do
    local got = redis.call('TYPE', KEYS[i])['ok']
    if got ~= 'none' and got ~= want then
      return '{_LAYOUT_ERROR} ' .. got .. ' ' .. want .. ' ' .. KEYS[i]
    end
  end
  return nil
end

-- Set the expiry of every key of the thread (PERSIST without a ttl), and record it in
-- P:threads, from which threads whose keys have expired are dropped.
local function refresh(threads, namespaces, thread_id, thread_key, ttl)
  local keys = {{namespaces}}
  for _, ns in ipairs(redis.call('SMEMBERS', namespaces)) do
    for _, name in ipairs(NAMESPACE_KEYS) do keys[#keys + 1] = thread_key .. ns .. ':' .. name end
  end
  for _, key in ipairs(keys) do
    if ttl > 0 then redis.call('PEXPIRE', key, ttl) else redis.call('PERSIST', key) end
  end
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', threads, '-inf', '(' .. now_ms)
  if ttl > 0 then
    redis.call('ZADD', threads, now_ms + ttl, thread_id)
  else
    redis.call('ZADD', threads, '+inf', thread_id)
  end
end
"""
)

_STORE_WRITES = """
local function store_writes(writes, write, from)
  for i = from, #ARGV, 3 do
    if ARGV[i + 2] == '1' then
      redis.call('HSET', write, ARGV[i], ARGV[i + 1])
      redis.call('ZADD', writes, 0, ARGV[i])
    elseif redis.call('HSETNX', write, ARGV[i], ARGV[i + 1]) == 1 then
      redis.call('ZADD', writes, 0, ARGV[i])
    end
  end
end
"""

PUT_SCRIPT = (
    _PREAMBLE
    + _STORE_WRITES
    + """
-- KEYS: threads, namespaces, checkpoints, checkpoint, metadata, parent, blobs, writes, write,
--       debug
-- ARGV: thread_id, thread_key, ns, checkpoint_id, checkpoint, metadata, parent ('' = none),
--       ttl_ms (0 = none), number of blobs, debug record ('' = none), then blob field, blob
--       value, …, then the pending writes of the step's tasks (on the parent): field, value,
--       replace ('1' or '0'), …
local problem = check_types(
  {'zset', 'set', 'zset', 'hash', 'hash', 'hash', 'hash', 'zset', 'hash', 'hash'})
if problem then return redis.error_reply(problem) end
local id = ARGV[4]
local writes_from = 11 + 2 * tonumber(ARGV[9])
for i = 11, writes_from - 1, 2 do redis.call('HSETNX', KEYS[7], ARGV[i], ARGV[i + 1]) end
store_writes(KEYS[8], KEYS[9], writes_from)
redis.call('HSET', KEYS[4], id, ARGV[5])
redis.call('HSET', KEYS[5], id, ARGV[6])
if ARGV[10] == '' then
  redis.call('HDEL', KEYS[10], id)
else
  redis.call('HSET', KEYS[10], id, ARGV[10])
end
if ARGV[7] == '' then
  redis.call('HDEL', KEYS[6], id)
else
  redis.call('HSET', KEYS[6], id, ARGV[7])
end
redis.call('ZADD', KEYS[3], 0, id)
redis.call('SADD', KEYS[2], ARGV[3])
refresh(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[8]))
return 1
"""
)
"""Store one checkpoint — its new blobs (each written once), its record, its place in the
thread — with the pending writes of the step that made it, in one script."""

PUT_WRITES_SCRIPT = (
    _PREAMBLE
    + _STORE_WRITES
    + """
-- KEYS: threads, namespaces, writes, write
-- ARGV: thread_id, thread_key, ns, ttl_ms, then field, value, replace ('1' or '0'), …
local problem = check_types({'zset', 'set', 'zset', 'hash'})
if problem then return redis.error_reply(problem) end
store_writes(KEYS[3], KEYS[4], 5)
redis.call('SADD', KEYS[2], ARGV[3])
refresh(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[4]))
return 1
"""
)
"""Store one task's writes: ordinary ones once, special ones (``replace``) over the previous."""

DELETE_THREAD_SCRIPT = (
    _PREAMBLE
    + """
-- KEYS: threads, namespaces; ARGV: thread_id, thread_key
for _, ns in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  for _, name in ipairs(NAMESPACE_KEYS) do redis.call('UNLINK', ARGV[2] .. ns .. ':' .. name) end
end
redis.call('UNLINK', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
"""
)
"""Delete every key of a thread."""

DELETE_CHECKPOINTS_SCRIPT = (
    _PREAMBLE
    + """
-- KEYS: checkpoints, checkpoint, metadata, parent, blobs, writes, write, debug
-- ARGV: the checkpoint ids to delete
local problem = check_types({'zset', 'hash', 'hash', 'hash', 'hash', 'zset', 'hash', 'hash'})
if problem then return redis.error_reply(problem) end
local function quote(text)
  return (string.gsub(string.gsub(text, '%%', '%%25'), ':', '%%3A'))
end
local doomed = {}
for _, id in ipairs(ARGV) do doomed[id] = true end
local gone, kept = {}, {}
local records = redis.call('HGETALL', KEYS[2])
for i = 1, #records, 2 do
  local target = doomed[records[i]] and gone or kept
  local pointers = cjson.decode(records[i + 1])['channel_versions'] or {}
  for version, channels in pairs(pointers) do
    for _, channel in ipairs(channels) do target[channel .. ':' .. quote(version)] = true end
  end
end
for field in pairs(gone) do
  if not kept[field] then redis.call('HDEL', KEYS[5], field) end
end
for _, id in ipairs(ARGV) do
  redis.call('ZREM', KEYS[1], id)
  for k = 2, 4 do redis.call('HDEL', KEYS[k], id) end
  redis.call('HDEL', KEYS[8], id)
  local prefix = quote(id) .. ':'
  local fields = redis.call('ZRANGEBYLEX', KEYS[6], '[' .. prefix, '[' .. prefix .. '\\255')
  for _, field in ipairs(fields) do
    redis.call('ZREM', KEYS[6], field)
    redis.call('HDEL', KEYS[7], field)
  end
end
return 1
"""
)
"""Delete some checkpoints of one (thread, namespace), their writes, and the blobs only they
point at (a blob a remaining checkpoint points at stays)."""

RECORDS_SCRIPT = """
-- KEYS: checkpoints, checkpoint, metadata, parent
-- ARGV: 'page', upper bound ('+' or '(id'), count   |   'id', checkpoint_id
-- Returns id, checkpoint, metadata, parent of each checkpoint, newest first.
local ids
if ARGV[1] == 'id' then
  ids = {}
  if redis.call('ZSCORE', KEYS[1], ARGV[2]) then ids[1] = ARGV[2] end
else
  ids = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], '-', 'LIMIT', 0, tonumber(ARGV[3]))
end
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id)
  out[#out + 1] = redis.call('HGET', KEYS[3], id)
  out[#out + 1] = redis.call('HGET', KEYS[4], id)
end
return out
"""
"""Read the records of a page of a (thread, namespace)'s history, or of one checkpoint."""

DETAILS_SCRIPT = """
-- KEYS: checkpoints, blobs, writes, write
-- ARGV: n, then n checkpoint ids, then the same n ids as in write fields, then blob fields
-- Returns {{1 if the checkpoint still exists else 0, …}, {field, value, … of each checkpoint},
--          {value of each blob field}}: the blobs and writes of checkpoints that exist, read
-- together with their existence (a thread may have expired since its records were read).
local n = tonumber(ARGV[1])
local present, writes = {}, {}
for i = 1, n do
  present[i] = redis.call('ZSCORE', KEYS[1], ARGV[1 + i]) and 1 or 0
  local entry, id = {}, ARGV[1 + n + i]
  for _, field in ipairs(redis.call('ZRANGEBYLEX', KEYS[3], '[' .. id .. ':', '(' .. id .. ';')) do
    entry[#entry + 1] = field
    entry[#entry + 1] = redis.call('HGET', KEYS[4], field)
  end
  writes[i] = entry
end
local blobs = {}
for i = 2 + 2 * n, #ARGV do blobs[#blobs + 1] = redis.call('HGET', KEYS[2], ARGV[i]) end
return {present, writes, blobs}
"""
"""Read, in one step, whether some checkpoints of one (thread, namespace) still exist, their
pending writes, and the blobs they point at."""

_POINTER_FUNCTIONS = """
local function part(text)
  return (string.gsub(string.gsub(text, '%%', '%%25'), ':', '%%3A'))
end
local function each_pointer(record, visit)
  -- visit(channel, version) for each blob a checkpoint record points at; a record that does
  -- not decode names none (the saver reports it when parsing it).
  local ok, decoded = pcall(cjson.decode, record)
  if ok and type(decoded) == 'table' and type(decoded['channel_versions']) == 'table' then
    for key, value in pairs(decoded['channel_versions']) do
      if type(value) == 'table' then
        for _, channel in ipairs(value) do visit(channel, key) end
      else
        visit(key, value)  -- a pointer map written before maps were grouped by version
      end
    end
  end
end
"""
"""Lua functions of the reading scripts: ``part`` (a key part with ``%`` and ``:`` escaped, as
the saver writes blob and write fields) and ``each_pointer`` (the blobs a checkpoint record
points at)."""

GET_SCRIPT = (
    """
-- KEYS: checkpoints, checkpoint, metadata, parent, blobs, writes, write
-- ARGV: 'latest'   |   'id', checkpoint_id
-- Returns {} when there is no such checkpoint, else {id, checkpoint, metadata, parent,
-- {blob field, blob value, …} of the blobs its pointer map names, {write field, value, …}}.
"""
    + _POINTER_FUNCTIONS
    + """
local id
if ARGV[1] == 'id' then
  if redis.call('ZSCORE', KEYS[1], ARGV[2]) then id = ARGV[2] end
else
  id = redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', 0, 1)[1]
end
if not id then return {} end
local record = redis.call('HGET', KEYS[2], id)
local blobs = {}
local function add(channel, version)
  if type(channel) == 'string' and type(version) == 'string' then
    local field = channel .. ':' .. part(version)
    local value = redis.call('HGET', KEYS[5], field)
    if value then
      blobs[#blobs + 1] = field
      blobs[#blobs + 1] = value
    end
  end
end
if record then each_pointer(record, add) end
local writes, wid = {}, part(id)
for _, field in ipairs(redis.call('ZRANGEBYLEX', KEYS[6], '[' .. wid .. ':', '(' .. wid .. ';')) do
  writes[#writes + 1] = field
  writes[#writes + 1] = redis.call('HGET', KEYS[7], field)
end
return {id, record or false, redis.call('HGET', KEYS[3], id) or false,
        redis.call('HGET', KEYS[4], id) or false, blobs, writes}
"""
)
"""Read one checkpoint (by id, or the newest) with the blobs it points at and its pending
writes, in one script."""


OUTLINE_SCRIPT = (
    """
-- KEYS: checkpoints, checkpoint, metadata, parent, debug, blobs, writes, write
-- ARGV: since ('' for every checkpoint), then n and n write channels whose value is read,
--       then n and n trigger channel names, then n and n trigger name prefixes, then the
--       subscribed channels (triggers too, whose value is not read)
-- Returns {{id, checkpoint, metadata, parent, debug, … of each checkpoint},
--          {id, field, value, … of each pending write: the header line alone unless the
--           write's channel is one whose value is read},
--          {channel, version, value, … of each trigger blob the checkpoints point at: the
--           header line alone for a subscribed channel}}: a thread's tree, no state value.
"""
    + _POINTER_FUNCTIONS
    + """
local function names(at)
  local n, set, list = tonumber(ARGV[at]), {}, {}
  for i = 1, n do set[ARGV[at + i]] = true; list[i] = ARGV[at + i] end
  return set, list, at + n + 1
end
local valued, _, at = names(2)
local fixed, _, at2 = names(at)
local _, prefixes, at3 = names(at2)
local subscribed = {}
for i = at3, #ARGV do subscribed[ARGV[i]] = true end
local function trigger(channel)
  if fixed[channel] then return true end
  for _, prefix in ipairs(prefixes) do
    if string.sub(channel, 1, #prefix) == prefix then return true end
  end
  return false
end
local function header_only(value)
  local nl = string.find(value, '\\n', 1, true)
  if nl then return string.sub(value, 1, nl) end
  return value
end
local since, ids = ARGV[1], nil
if since == '' then
  ids = redis.call('ZRANGEBYLEX', KEYS[1], '-', '+')
else  -- the checkpoints from since on, and the parents of the newer ones
  ids = redis.call('ZRANGEBYLEX', KEYS[1], '[' .. since, '+')
  local have, n = {}, #ids
  for i = 1, n do have[ids[i]] = true end
  for i = 1, n do
    if ids[i] ~= since then
      local parent = redis.call('HGET', KEYS[4], ids[i])
      if parent and not have[parent] and redis.call('ZSCORE', KEYS[1], parent) then
        have[parent] = true
        ids[#ids + 1] = parent
      end
    end
  end
end
local rows, writes, blobs, seen = {}, {}, {}, {}
local function add_blob(channel, version)
  if type(channel) ~= 'string' or type(version) ~= 'string' then return end
  local named = trigger(channel)
  if not (named or subscribed[channel]) then return end
  local field = channel .. ':' .. part(version)
  if seen[field] then return end
  seen[field] = true
  local value = redis.call('HGET', KEYS[6], field)
  if value then
    blobs[#blobs + 1] = channel
    blobs[#blobs + 1] = version
    blobs[#blobs + 1] = named and value or header_only(value)
  end
end
for _, id in ipairs(ids) do
  local record = redis.call('HGET', KEYS[2], id)
  rows[#rows + 1] = id
  rows[#rows + 1] = record or false
  rows[#rows + 1] = redis.call('HGET', KEYS[3], id) or false
  rows[#rows + 1] = redis.call('HGET', KEYS[4], id) or false
  rows[#rows + 1] = redis.call('HGET', KEYS[5], id) or false
  if record then each_pointer(record, add_blob) end
  local wid = part(id)
  local fields = redis.call('ZRANGEBYLEX', KEYS[7], '[' .. wid .. ':', '(' .. wid .. ';')
  for _, field in ipairs(fields) do
    local value = redis.call('HGET', KEYS[8], field)
    if value then
      local head = header_only(value)
      local ok, h = pcall(cjson.decode, string.sub(head, 1, #head - 1))
      if not (ok and type(h) == 'table' and valued[h[2]]) then value = head end
      writes[#writes + 1] = id
      writes[#writes + 1] = field
      writes[#writes + 1] = value
    end
  end
end
return {rows, writes, blobs}
"""
)
"""Read a (thread, namespace)'s tree in one script: its checkpoints' records, metadata,
parents and debug records, their pending writes without the values a tree does not read, and
the blobs of their trigger channels (:mod:`durable_debug.checkpoint.outline`); no state blob
leaves the server."""

LATEST_MARK_SCRIPT = """
-- KEYS: checkpoints, writes
-- Returns {newest checkpoint id, how many pending writes it has}, or {} for no checkpoint.
local id = redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', 0, 1)[1]
if not id then return {} end
local wid = (string.gsub(string.gsub(id, '%%', '%%25'), ':', '%%3A'))
return {id, redis.call('ZLEXCOUNT', KEYS[2], '[' .. wid .. ':', '(' .. wid .. ';')}
"""
"""A (thread, namespace)'s newest checkpoint id and the count of its pending writes."""


FENCE_PREAMBLE = f"""
-- Fenced: the last key is the thread's lease, the last argument the run's token. Nothing is
-- written unless that token still holds the lease.
local fence_key = table.remove(KEYS)
local fence_token = table.remove(ARGV)
local fence_value = redis.call('GET', fence_key)
if not fence_value or string.sub(fence_value, 1, #fence_token + 1) ~= fence_token .. '\\n' then
  return redis.error_reply('{LEASE_LOST_MARK}')
end
"""
"""What a fenced variant of a writing script runs first (see :data:`FENCED`)."""

FENCED = ("put", "put_writes", "delete_thread", "delete_checkpoints")
"""The writing scripts; each has a variant ``<name>_fenced`` taking the thread's lease key as
its last key and the run's lease token as its last argument."""

SCRIPTS = {
    "put": PUT_SCRIPT,
    "get": GET_SCRIPT,
    "put_writes": PUT_WRITES_SCRIPT,
    "delete_thread": DELETE_THREAD_SCRIPT,
    "delete_checkpoints": DELETE_CHECKPOINTS_SCRIPT,
    "records": RECORDS_SCRIPT,
    "details": DETAILS_SCRIPT,
    "outline": OUTLINE_SCRIPT,
    "latest_mark": LATEST_MARK_SCRIPT,
}
SCRIPTS.update({f"{name}_fenced": FENCE_PREAMBLE + SCRIPTS[name] for name in FENCED})
"""Every script, by the name the saver calls it."""
