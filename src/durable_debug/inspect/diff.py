"""What changed between two checkpoints, per channel and per nested path.

    diff(c1, c2, graph=graph, config=config)     # checkpoints by id, config or snapshot
    # [{'channel': 'value', 'change': 'changed', 'old': 'A', 'new': 'B', 'changes': [...]},
    #  {'channel': 'log', 'change': 'changed', 'old': ['ran A'], 'new': ['ran A', 'ran B'],
    #   'changes': [{'path': 'log[1]', 'change': 'added', 'old': None, 'new': 'ran B'}]}]
    changes(snap_a, snap_b)                      # flat: merged.x, collected[2], ...

Nested dicts and lists are compared structurally: a channel is ``changed`` only if some value
inside it differs, and ``changes`` says where. Any two checkpoints can be compared, across
branches too (a fork against the branch it left).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from durable_debug._sync import run_sync
from durable_debug.checkpoint.base import RunnableConfig
from durable_debug.inspect.access import GraphLike
from durable_debug.inspect.jsonable import to_jsonable
from durable_debug.inspect.thread import CheckpointRecord, CheckpointRef, aread_checkpoint

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DiffEntry",
    "PathChange",
    "achanges",
    "adiff",
    "adiff_frame",
    "changes",
    "diff",
    "diff_data",
    "diff_frame",
    "diff_values",
    "path_changes",
]


class PathChange(TypedDict):
    """One difference at a nested path (``merged.x``, ``log[2]``)."""

    path: str
    change: str
    """``"added"``, ``"removed"`` or ``"changed"``."""
    old: Any
    new: Any


class DiffEntry(TypedDict):
    """The protocol's ``DiffEntry`` for one channel, plus its path-level ``changes``."""

    channel: str
    change: str
    """``"added"``, ``"removed"`` or ``"changed"``."""
    old: Any
    new: Any
    changes: list[PathChange]


def diff_values(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[DiffEntry]:
    """Compare two states channel by channel; unchanged channels are left out."""
    entries: list[DiffEntry] = []
    for channel in [*old, *(k for k in new if k not in old)]:
        if channel not in new:
            entries.append(_entry(channel, "removed", old[channel], None))
        elif channel not in old:
            entries.append(_entry(channel, "added", None, new[channel]))
        elif not _same(old[channel], new[channel]):
            entries.append(_entry(channel, "changed", old[channel], new[channel]))
    return entries


def path_changes(old: Any, new: Any, path: str = "") -> list[PathChange]:
    """Every nested difference between ``old`` and ``new``, as paths below ``path``."""
    found: list[PathChange] = []
    _walk(path, old, new, found)
    return found


async def adiff(
    a: CheckpointRef,
    b: CheckpointRef,
    graph: GraphLike | None = None,
    config: RunnableConfig | None = None,
) -> list[DiffEntry]:
    """Per-channel differences from checkpoint ``a`` to checkpoint ``b``.

    ``a`` and ``b`` are snapshots, records or plain state dicts (no graph needed), or configs
    and checkpoint ids (then ``graph`` is needed, and for ids ``config`` naming the thread).
    """
    old = await _avalues(a, graph, config, "a")
    new = await _avalues(b, graph, config, "b")
    return diff_values(old, new)


def diff(
    a: CheckpointRef,
    b: CheckpointRef,
    graph: GraphLike | None = None,
    config: RunnableConfig | None = None,
) -> list[DiffEntry]:
    """Sync twin of :func:`adiff`."""
    return run_sync(adiff(a, b, graph, config))


async def achanges(
    a: CheckpointRef,
    b: CheckpointRef,
    graph: GraphLike | None = None,
    config: RunnableConfig | None = None,
) -> list[PathChange]:
    """Like :func:`adiff`, flattened to path-level changes (``merged.x``, ``log[1]``)."""
    return [change for entry in await adiff(a, b, graph, config) for change in entry["changes"]]


def changes(
    a: CheckpointRef,
    b: CheckpointRef,
    graph: GraphLike | None = None,
    config: RunnableConfig | None = None,
) -> list[PathChange]:
    """Sync twin of :func:`achanges`."""
    return run_sync(achanges(a, b, graph, config))


async def adiff_frame(
    a: CheckpointRef,
    b: CheckpointRef,
    graph: GraphLike | None = None,
    config: RunnableConfig | None = None,
    *,
    paths: bool = False,
) -> pd.DataFrame:
    """The diff as a table: one row per channel, or per nested path with ``paths=True``."""
    import pandas as pd

    entries = await adiff(a, b, graph, config)
    if paths:
        rows: list[Any] = [c for e in entries for c in e["changes"]]
        return pd.DataFrame(rows, columns=["path", "change", "old", "new"])
    rows = [{k: e[k] for k in ("channel", "change", "old", "new")} for e in entries]
    return pd.DataFrame(rows, columns=["channel", "change", "old", "new"])


def diff_frame(
    a: CheckpointRef,
    b: CheckpointRef,
    graph: GraphLike | None = None,
    config: RunnableConfig | None = None,
    *,
    paths: bool = False,
) -> pd.DataFrame:
    """Sync twin of :func:`adiff_frame`."""
    return run_sync(adiff_frame(a, b, graph, config, paths=paths))


def diff_data(entries: list[DiffEntry]) -> list[dict[str, Any]]:
    """The diff made JSON-ready for the widget (values through ``to_jsonable``)."""
    return [to_jsonable(dict(entry)) for entry in entries]


# --- helpers --------------------------------------------------------------------------------


async def _avalues(
    ref: CheckpointRef, graph: GraphLike | None, config: RunnableConfig | None, name: str
) -> dict[str, Any]:
    if isinstance(ref, CheckpointRecord):
        return ref.values
    if not isinstance(ref, (str, Mapping)) and hasattr(ref, "values") and hasattr(ref, "config"):
        return dict(ref.values or {})  # a StateSnapshot
    if isinstance(ref, Mapping) and "configurable" not in ref:
        return dict(ref)  # already a state
    if graph is None:
        raise ValueError(
            f"diff: checkpoint {name}={ref!r} is a config or an id, so diff needs the graph to "
            "read it: diff(a, b, graph=graph, config=thread_config)."
        )
    if isinstance(ref, str) and config is None:
        raise ValueError(
            f"diff: checkpoint {name}={ref!r} is an id, so diff needs config= naming its "
            'thread, e.g. {"configurable": {"thread_id": "demo-1"}}.'
        )
    base = config if config is not None else ref
    _, record = await aread_checkpoint(graph, base, ref, with_parent=False)
    return record.values


def _entry(channel: str, change: str, old: Any, new: Any) -> DiffEntry:
    if change == "changed":
        details = path_changes(old, new, channel)
    else:
        details = [PathChange(path=channel, change=change, old=old, new=new)]
    return DiffEntry(channel=channel, change=change, old=old, new=new, changes=details)


def _walk(path: str, old: Any, new: Any, found: list[PathChange]) -> None:
    if _same(old, new):
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in old:
            if key not in new:
                found.append(
                    PathChange(path=_key_path(path, key), change="removed", old=old[key], new=None)
                )
            else:
                _walk(_key_path(path, key), old[key], new[key], found)
        for key in new:
            if key not in old:
                found.append(
                    PathChange(path=_key_path(path, key), change="added", old=None, new=new[key])
                )
        return
    if isinstance(old, (list, tuple)) and type(old) is type(new):
        for i in range(min(len(old), len(new))):
            _walk(f"{path}[{i}]", old[i], new[i], found)
        for i in range(len(new), len(old)):
            found.append(PathChange(path=f"{path}[{i}]", change="removed", old=old[i], new=None))
        for i in range(len(old), len(new)):
            found.append(PathChange(path=f"{path}[{i}]", change="added", old=None, new=new[i]))
        return
    found.append(PathChange(path=path, change="changed", old=old, new=new))


def _key_path(path: str, key: Any) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def _same(a: Any, b: Any) -> bool:
    """Structural equality that never raises (numpy arrays, odd ``__eq__``s)."""
    if a is b:
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, bool) is not isinstance(b, bool):
        return False  # True == 1 in Python, but a state that flips 1 to True did change
    try:
        equal = a == b
        if isinstance(equal, bool):
            return equal
        reduce = getattr(equal, "all", None)
        return bool(reduce() if callable(reduce) else equal)
    except Exception:
        return repr(a) == repr(b)
