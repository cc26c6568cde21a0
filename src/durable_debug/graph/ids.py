"""Task ids and interrupt ids, derived as LangGraph 1.2 derives them.

A task id is a UUID-shaped xxh3-128 hash of the checkpoint id's 16 bytes followed by the
task's parts: the namespace of its node (``parent_ns|node``, or ``node`` at the top), the
step, the node's name, then what kind of task it is:

* an edge-triggered node: ``__pregel_pull`` and every trigger channel of the node, sorted;
* a Send: ``__pregel_push`` and the Send's index;
* a ``@task`` call: ``__pregel_push``, the caller's path (:func:`path_key`) and the number of
  calls the caller made before it, its namespace under the caller's (``caller:id|name``);
* a node's error handler: ``__pregel_push``, ``node_error_handler`` and the failed task's id.

An interrupt id is the xxh3-128 hash of its task's namespace (``parent_ns|node:task_id``),
followed by ``|n`` when the task already had n answers. So an engine given the same
checkpoint as LangGraph's finds the pending writes LangGraph saved, and resume maps name the
same interrupts on both.

Threads saved by durable_debug before these ids hashed their parts with BLAKE2b
(:func:`legacy_task_id`, :func:`legacy_interrupt_id`); :func:`legacy_task_ids` and
:func:`adopt_legacy_call` find such writes their task again.
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Collection, Container, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, TypeVar

from xxhash import xxh3_128_hexdigest

from durable_debug.checkpoint.names import (
    BRANCH_PREFIX,
    ID_SEP,
    NS_END,
    NS_SEP,
    PULL,
    PUSH,
    START,
    parse_trigger,
)

__all__ = [
    "ERROR_HANDLER",
    "adopt_legacy_call",
    "call_task_id",
    "checkpoint_key",
    "handler_task_id",
    "interrupt_id",
    "legacy_interrupt_id",
    "legacy_task_id",
    "legacy_task_ids",
    "namespace_interrupt_id",
    "node_namespace",
    "path_key",
    "pull_id",
    "pull_id_tail",
    "pull_task_id",
    "send_task_id",
    "stored_task_id",
    "task_id",
    "task_namespace",
]

ERROR_HANDLER = "node_error_handler"
"""Third element of the path of a node's error-handler task (and a part of its id)."""

_R = TypeVar("_R")


def _checkpoint_bytes(checkpoint_id: str) -> bytes:
    """The 16 bytes of a UUID checkpoint id (the text itself for an id that is not one)."""
    try:
        return binascii.unhexlify(checkpoint_id.replace("-", ""))
    except (binascii.Error, ValueError):
        return checkpoint_id.encode()


def _uuid_of(checkpoint_id: str, parts: Iterable[str]) -> str:
    h = xxh3_128_hexdigest(_checkpoint_bytes(checkpoint_id) + "".join(parts).encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def checkpoint_key(checkpoint_id: str) -> bytes:
    """What a task id's hash starts with for checkpoint ``checkpoint_id`` (for :func:`pull_id`:
    worked out once for all the tasks a checkpoint schedules)."""
    return _checkpoint_bytes(checkpoint_id)


def pull_id_tail(name: str, triggers: Iterable[str]) -> str:
    """The part of a pull task id's hashed text after the step: the node's name,
    ``__pregel_pull`` and its trigger channels, sorted (the same for every step)."""
    return name + PULL + "".join(sorted(triggers))


def pull_id(key: bytes, namespace: str, step: int, tail: str) -> str:
    """:func:`pull_task_id` from parts worked out ahead: ``key`` (:func:`checkpoint_key`),
    the node's ``namespace`` (:func:`node_namespace`) and ``tail`` (:func:`pull_id_tail`)."""
    h = xxh3_128_hexdigest(key + f"{namespace}{step}{tail}".encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def node_namespace(checkpoint_ns: str, name: str) -> str:
    """The namespace of node ``name`` in a graph running under ``checkpoint_ns``."""
    return f"{checkpoint_ns}{NS_SEP}{name}" if checkpoint_ns else name


def task_namespace(checkpoint_ns: str, name: str, task_id: str) -> str:
    """The namespace of task ``task_id`` of node ``name`` (``parent_ns|node:task_id``)."""
    return f"{node_namespace(checkpoint_ns, name)}{NS_END}{task_id}"


def path_key(path: Any) -> str:
    """A task path as LangGraph writes it into a call's id: a tuple is ``~`` and its items
    joined by ``", "``, an int ten digits with leading zeros, anything else ``str()``."""
    if isinstance(path, (tuple, list)):
        return "~" + ", ".join([path_key(p) for p in path])
    if isinstance(path, int):
        return f"{path:010d}"
    return str(path)


def pull_task_id(
    checkpoint_id: str, checkpoint_ns: str, step: int, name: str, triggers: Iterable[str]
) -> str:
    """Id of the task of node ``name`` (whose trigger channels are ``triggers``) that the
    checkpoint ``checkpoint_id`` schedules for ``step``."""
    return pull_id(
        _checkpoint_bytes(checkpoint_id),
        node_namespace(checkpoint_ns, name),
        step,
        pull_id_tail(name, triggers),
    )


def send_task_id(checkpoint_id: str, checkpoint_ns: str, step: int, name: str, index: int) -> str:
    """Id of the task of the ``index``-th Send (to node ``name``) pending on the checkpoint."""
    return _uuid_of(
        checkpoint_id, (node_namespace(checkpoint_ns, name), str(step), name, PUSH, str(index))
    )


def call_task_id(
    checkpoint_id: str,
    caller_ns: str,
    step: int,
    name: str,
    caller_path: tuple[Any, ...],
    index: int,
) -> str:
    """Id of the ``index``-th ``@task`` call (of function ``name``) made by the task whose
    namespace is ``caller_ns`` and path ``caller_path``."""
    return _uuid_of(
        checkpoint_id,
        (node_namespace(caller_ns, name), str(step), name, PUSH, path_key(caller_path), str(index)),
    )


def handler_task_id(
    checkpoint_id: str, checkpoint_ns: str, step: int, name: str, failed_id: str
) -> str:
    """Id of the task of error handler ``name`` that takes the failure of task ``failed_id``."""
    return _uuid_of(
        checkpoint_id,
        (node_namespace(checkpoint_ns, name), str(step), name, PUSH, ERROR_HANDLER, failed_id),
    )


def task_id(
    checkpoint_id: str,
    checkpoint_ns: str,
    step: int,
    name: str,
    path: tuple[Any, ...],
    triggers: Iterable[str] = (),
) -> str:
    """Id of the task at ``path``: an edge-triggered node's (``(PULL, node)``, its trigger
    channels given) or a Send's (``(PUSH, index)``); any other path is hashed as its parts."""
    if path[0] == PULL:
        return pull_task_id(checkpoint_id, checkpoint_ns, step, name, triggers)
    if path[0] == PUSH and isinstance(path[1], int):
        return send_task_id(checkpoint_id, checkpoint_ns, step, name, path[1])
    return _uuid_of(
        checkpoint_id,
        (node_namespace(checkpoint_ns, name), str(step), name, *[path_key(p) for p in path]),
    )


def interrupt_id(task_ns: str, answered: int) -> str:
    """Id of the interrupt a task (namespace ``task_ns``, see :func:`task_namespace`) raises
    when it already has ``answered`` answers: 32 hex digits."""
    return xxh3_128_hexdigest((f"{task_ns}{NS_SEP}{answered}" if answered else task_ns).encode())


def namespace_interrupt_id(ns: str) -> str:
    """Id of an interrupt known by its namespace only (``Interrupt.from_ns``, pre-0.6
    interrupts)."""
    return interrupt_id(ns, 0)


# Ids of threads saved by durable_debug before its ids were LangGraph's.


def _legacy_uuid(text: str) -> str:
    h = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def legacy_task_id(
    checkpoint_id: str, checkpoint_ns: str, step: int, name: str, path: tuple[Any, ...]
) -> str:
    """The id durable_debug's older versions gave a task (BLAKE2b of the checkpoint id,
    graph namespace, step, node and path): what their saved pending writes are keyed by."""
    return _legacy_uuid(ID_SEP.join((checkpoint_id, checkpoint_ns, str(step), name, repr(path))))


def legacy_interrupt_id(task_id: str, index: int) -> str:
    """The id durable_debug's older versions gave the ``index``-th interrupt of a task."""
    return hashlib.blake2b(f"{task_id}{ID_SEP}{index}".encode(), digest_size=16).hexdigest()


def legacy_task_ids(
    saved_ids: Collection[str],
    tasks: Sequence[tuple[str, str, tuple[Any, ...]]],
    checkpoint_id: str,
    checkpoint_ns: str,
    step: int,
) -> dict[str, str]:
    """Task id → older id, when pending writes were saved under an older version's task ids.

    ``saved_ids`` are the task ids the checkpoint's pending writes name, ``tasks`` the
    ``(id, name, path)`` of the tasks the checkpoint schedules for ``step``. When a saved id
    is none of theirs, each task's older id is worked out; if writes name one of those, the
    map of every task is returned (the ``@task`` calls they make are keyed by the older
    caller id), else an empty one. The usual case costs one set lookup per saved id.
    """
    ids = {t[0] for t in tasks}
    if all(tid in ids for tid in saved_ids):
        return {}
    older: dict[str, str] = {}
    for tid, name, path in tasks:
        # The older ids of a Send were made from (PUSH, index), without the trailing False.
        old_path = path[:2] if path[0] == PUSH else path
        older[tid] = legacy_task_id(checkpoint_id, checkpoint_ns, step, name, old_path)
    if not any(old in saved_ids for old in older.values()):
        return {}
    return older


def adopt_legacy_call(
    records: MutableMapping[str, _R],
    legacy_ids: dict[str, str],
    tid: str,
    caller: str,
    checkpoint_id: str,
    checkpoint_ns: str,
    step: int,
    name: str,
    index: int,
) -> _R | None:
    """The saved record of the ``index``-th ``@task`` call (id ``tid``, function ``name``) of
    task ``caller``, whose writes an older version saved under its own ids (``legacy_ids``:
    see :func:`legacy_task_ids`): moved to ``tid`` and returned, None when none."""
    path = (PUSH, legacy_ids[caller], index)
    old = legacy_task_id(checkpoint_id, checkpoint_ns, step, name, path)
    legacy_ids[tid] = old
    record = records.pop(old, None)
    if record is not None:
        records[tid] = record
    return record


def stored_task_id(
    checkpoint_id: str,
    checkpoint_ns: str,
    step: int,
    name: str,
    path: tuple[Any, ...],
    versions: Mapping[str, Any],
    seen_by: Mapping[str, Mapping[str, Any]],
    saved_ids: Container[str],
    subscribers: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, str]:
    """The id of a task a stored checkpoint schedules, worked out without its graph (the
    debugger reading a store): an edge-triggered node's trigger channels are taken to be its
    edge channel (every node of a ``StateGraph`` has one, written or not) and the trigger
    channels of that node the checkpoint names (in ``versions``, or seen by the node). The id
    an older version gave the task when its writes (``saved_ids``) use that.

    ``subscribers`` (channel → the nodes it runs: a ``Pregel``'s subscriptions): a node
    subscribed to channels of the user's names has those as its trigger channels, and no
    edge channel.

    Returns ``(task id, id its saved writes are under)``: the two differ for a thread an older
    version saved."""
    if path[0] == PULL:
        triggers = {
            ch
            for ch in (*versions, *seen_by.get(name, ()))
            if (t := parse_trigger(ch)) is not None and t.node == name
        }
        subscribed = {ch for ch, nodes in (subscribers or {}).items() if name in nodes}
        if subscribed:
            triggers |= subscribed
        elif name != START:
            triggers.add(BRANCH_PREFIX + name)
        tid = pull_task_id(checkpoint_id, checkpoint_ns, step, name, triggers)
    else:
        tid = task_id(checkpoint_id, checkpoint_ns, step, name, path)
    if tid in saved_ids:
        return tid, tid
    old = legacy_task_id(checkpoint_id, checkpoint_ns, step, name, path)
    return tid, old if old in saved_ids else tid
