"""The widget's compact form of a ``Dag`` (``_dag``): columns in checkpoint id order, and
the binary buffer the widget sends it in (:func:`pack_wire`, :func:`unpack_wire`).

``js/src/dag-wire.js`` is its twin in the browser: a change to one is a change to both
(``tests/inspect/test_dag_wire.py`` runs both on the same buffers).
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, cast

from durable_debug.inspect.dag_shape import Dag, DagNode

__all__ = [
    "DAG_WIRE_FORMAT",
    "PACKED_MAGIC",
    "dag_from_wire",
    "dag_wire_of",
    "merge_wire",
    "pack_wire",
    "unpack_wire",
]

DAG_WIRE_FORMAT = "dag-columns-1"
"""The ``format`` of the compact ``_dag`` (docs/widget-protocol.md, "The DAG on the wire"):
one array per field in checkpoint id order, a parent as its index, node names and name lists
interned, rare marks as sparse ``[index, value, …]`` pairs; ``is_head`` and ``is_latest``
follow from the parents and the order. ``js/src/dag-wire.js`` decodes it, as does
:func:`dag_from_wire`."""


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


PACKED_MAGIC = b"DWB1"
"""The first bytes of a packed ``_dag`` (:func:`pack_wire`); ``js/src/dag-wire.js`` checks
them. A buffer without them is the compact form as plain UTF-8 JSON (what older kernels sent)."""

_PACKED_COLUMNS = ("id", "parent", "step", "node_depth", "lane", "created_at")
"""The columns :func:`pack_wire` encodes (the rest of the compact form goes as it is)."""

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MICROSECOND = _dt.timedelta(microseconds=1)


def pack_wire(wire: dict[str, Any]) -> dict[str, Any]:
    """``wire`` as the widget's traitlet holds it: ``{format, epoch, start, packed}``, where
    ``packed`` is one binary buffer (ipywidgets sends it as it is; it walks every list item
    of a plain value looking for buffers, and the comm encodes each one).

    The buffer: :data:`PACKED_MAGIC`, the length of a UTF-8 JSON text (4 bytes, little
    endian), the text, then the ids as 16 bytes each when every id is a canonical lowercase
    UUID (``id_bytes``; else the text holds ``id``). The text holds the compact form with six
    columns made small (``unpack_wire`` and ``js/src/dag-wire.js`` restore them):

    * ``parent_rel``: ``index - parent index``, 0 for none;
    * ``step_rel``, ``depth_rel``, ``lane_rel``: the value minus the parent's when the parent
      comes earlier in the same buffer, else the value itself;
    * ``time0_us`` and ``time_us``: ``created_at`` as microseconds since 1970 (UTC), the first
      relative to ``time0_us`` and each next one to the one before; ``time_text``: sparse
      ``[index, text, …]`` for a time not in the form ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``
      (its ``time_us`` entry is 0).
    """
    start = wire.get("start", 0)
    head = {key: value for key, value in wire.items() if key not in _PACKED_COLUMNS}
    ids, parents = wire["id"], wire["parent"]
    steps, depths, lanes = wire["step"], wire["node_depth"], wire["lane"]
    parent_rel: list[int] = []
    step_rel: list[int] = []
    depth_rel: list[int] = []
    lane_rel: list[int] = []
    for k, p in enumerate(parents):
        at = start + k
        parent_rel.append(0 if p < 0 else at - p)
        if start <= p < at:
            q = p - start
            step_rel.append(steps[k] - steps[q])
            depth_rel.append(depths[k] - depths[q])
            lane_rel.append(lanes[k] - lanes[q])
        else:
            step_rel.append(steps[k])
            depth_rel.append(depths[k])
            lane_rel.append(lanes[k])
    head.update(parent_rel=parent_rel, step_rel=step_rel, depth_rel=depth_rel, lane_rel=lane_rel)
    head.update(_times(wire["created_at"]))
    binary = _uuid_bytes(ids)
    if binary is None:
        head["id"] = ids
    else:
        head["id_bytes"] = len(ids)
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    return {
        "format": wire["format"],
        "epoch": wire.get("epoch"),
        "start": start,
        "packed": b"".join((PACKED_MAGIC, len(text).to_bytes(4, "little"), text, binary or b"")),
    }


def _uuid_bytes(ids: list[str]) -> bytes | None:
    """The ids as 16 bytes each, None unless every one is a canonical lowercase UUID.

    Checked and converted all at once: each id 36 characters long with its four dashes in
    place and no others, the rest lowercase hex (what ``bytes.hex`` gives back)."""
    count = len(ids)
    if any(length != 36 for length in map(len, ids)):
        return None
    text = "".join(ids)
    if any(text[at::36] != "-" * count for at in (8, 13, 18, 23)):
        return None
    plain = text.replace("-", "")
    if len(plain) != 32 * count:
        return None
    try:
        raw = bytes.fromhex(plain)
    except ValueError:
        return None
    if len(raw) != 16 * count or raw.hex() != plain:
        return None
    return raw


def _times(texts: list[str]) -> dict[str, Any]:
    """``created_at`` as ``time0_us``, ``time_us`` and ``time_text`` (see :func:`pack_wire`).

    Each minute is parsed once (a thread's checkpoints share their minutes); a time's seconds
    and fraction are its two-digit and six-digit fields read as one integer."""
    minutes: dict[str, int] = {}
    deltas: list[int] = []
    odd: list[Any] = []
    first = previous = None
    for k, text in enumerate(texts):
        us = None
        if (
            type(text) is str
            and len(text) == 32
            and text[16] == ":"
            and text[19] == "."
            and text[26:] == "+00:00"
            and text.isascii()
        ):
            minute = text[:16]
            base = minutes.get(minute)
            if base is None:
                base = minutes[minute] = _minute_us(minute)
            digits = text[17:19] + text[20:26]
            if base >= 0 and digits.isdigit():
                us = base + int(digits)
        if us is None:
            deltas.append(0)
            odd += (k, text)
        elif previous is None:
            first = previous = us
            deltas.append(0)
        else:
            deltas.append(us - previous)
            previous = us
    return {"time0_us": first or 0, "time_us": deltas, "time_text": odd}


def _minute_us(minute: str) -> int:
    """``YYYY-MM-DDTHH:MM`` (UTC) as microseconds since 1970; -1 when it is not exactly that."""
    try:
        at = _dt.datetime.fromisoformat(f"{minute}:00+00:00")
    except ValueError:
        return -1
    if at.isoformat()[:16] != minute:
        return -1
    return (at - _EPOCH) // _MICROSECOND


def _iso(us: int) -> str:
    """Microseconds since 1970 (UTC) as ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``."""
    return (_EPOCH + us * _MICROSECOND).isoformat(timespec="microseconds")


def unpack_wire(value: dict[str, Any]) -> dict[str, Any]:
    """The compact form from :func:`pack_wire`'s value (anything else as it is)."""
    packed = value.get("packed") if isinstance(value, dict) else None
    if not isinstance(packed, (bytes, bytearray, memoryview)):
        return value
    data = bytes(packed)
    if not data.startswith(PACKED_MAGIC):
        return dict(json.loads(data))
    size = int.from_bytes(data[4:8], "little")
    wire = dict(json.loads(data[8 : 8 + size]))
    start = wire.get("start", 0)
    if "id_bytes" in wire:
        raw = data[8 + size :]
        wire["id"] = [_uuid_text(raw[16 * k : 16 * k + 16]) for k in range(wire.pop("id_bytes"))]
    parents: list[int] = []
    steps: list[int] = []
    depths: list[int] = []
    lanes: list[int] = []
    for k, rel in enumerate(wire.pop("parent_rel")):
        at = start + k
        p = -1 if rel == 0 else at - rel
        parents.append(p)
        step, depth, lane = wire["step_rel"][k], wire["depth_rel"][k], wire["lane_rel"][k]
        if start <= p < at:
            q = p - start
            step, depth, lane = step + steps[q], depth + depths[q], lane + lanes[q]
        steps.append(step)
        depths.append(depth)
        lanes.append(lane)
    for key in ("step_rel", "depth_rel", "lane_rel"):
        del wire[key]
    wire.update(parent=parents, step=steps, node_depth=depths, lane=lanes)
    times: list[str] = []
    odd = dict(zip(wire["time_text"][::2], wire["time_text"][1::2], strict=True))
    now = wire.pop("time0_us")
    for k, delta in enumerate(wire.pop("time_us")):
        if k in odd:
            times.append(odd[k])
        else:
            now += delta
            times.append(_iso(now))
    del wire["time_text"]
    wire["created_at"] = times
    return wire


def _uuid_text(raw: bytes) -> str:
    plain = raw.hex()
    return f"{plain[:8]}-{plain[8:12]}-{plain[12:16]}-{plain[16:20]}-{plain[20:]}"


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
        return cast("Dag", wire)  # a plain Dag, as it is
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


def _intern(strings: dict[str, int], name: str) -> int:
    found = strings.get(name)
    if found is None:
        found = strings[name] = len(strings)
    return found


def _sparse(column: list[Any], start: int = 0) -> list[Any]:
    """``[index, value, index, value…]`` of the entries from ``start`` on that are set (not
    0, None)."""
    return [x for i in range(start, len(column)) if (value := column[i]) for x in (i, value)]
