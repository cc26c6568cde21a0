"""The widget's compact form of a ``Dag`` (``_dag``): columns in checkpoint id order.

``js/src/dag-wire.js`` is its twin in the browser: a change to one is a change to both.
"""

from __future__ import annotations

import json
from typing import Any

from durable_debug.inspect.dag_shape import Dag, DagNode

__all__ = [
    "DAG_WIRE_FORMAT",
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


def _intern(strings: dict[str, int], name: str) -> int:
    found = strings.get(name)
    if found is None:
        found = strings[name] = len(strings)
    return found


def _sparse(column: list[Any], start: int = 0) -> list[Any]:
    """``[index, value, index, value…]`` of the entries from ``start`` on that are set (not
    0, None)."""
    return [x for i in range(start, len(column)) if (value := column[i]) for x in (i, value)]
