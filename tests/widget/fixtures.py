"""Export data for the widget's browser tests and benchmark, shaped as docs/widget-protocol.md says.

Two threads, built without running a graph (the front end only sees data):

- ``small_export()``: a run through ``agent → tools → gate`` that paused on an interrupt, plus a
  fork from step 1 whose next step failed.
- ``large_export(2000, forks=5)``: a long synthetic thread with five forked branches, for speed.

    data = small_export()
    Path("t.html").write_text(render_html(data))
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SMALL", "Checkpoint", "large_export", "small_export", "with_layout"]


@dataclass
class Checkpoint:
    """One checkpoint of a synthetic thread, before layout."""

    id: str
    """checkpoint id (sorts by creation time)"""
    parent: str | None
    """parent checkpoint id"""
    step: int
    """metadata.step"""
    source: str
    """input | loop | update | fork"""
    values: dict[str, Any]
    """the reassembled state"""
    writers: list[str] = field(default_factory=list)
    """nodes whose writes made this checkpoint"""
    next: list[str] = field(default_factory=list)
    """nodes still to run"""
    tasks: list[dict[str, Any]] = field(default_factory=list)
    """the next step's tasks (Task dicts)"""
    writes: list[dict[str, Any]] = field(default_factory=list)
    """pending writes (Write dicts)"""


def checkpoint_id(n: int) -> str:
    """A uuid6-looking id that sorts by ``n``, like real checkpoint ids sort by time."""
    return f"1f0{n:05x}-7a3c-6d2e-8{n % 4096:03x}-{(n * 2654435761) % 16**12:012x}"


def version(counter: int, branch: int = 0) -> str:
    """A channel version as the engine writes it: zero-padded counter, then a branch suffix."""
    return f"{counter:032}.0.{(branch * 7919 + 1234567) % 10**7:07d}"


def with_layout(checkpoints: list[Checkpoint], thread_id: str) -> dict[str, Any]:
    """Export data (dag, details) for checkpoints listed oldest first.

    Depth is the distance from the root; the first child of a checkpoint stays in its parent's
    lane and every later child opens a new lane, so each fork is one lane.
    """
    by_id = {cp.id: cp for cp in checkpoints}
    children: dict[str, list[str]] = {}
    depth: dict[str, int] = {}
    lane: dict[str, int] = {}
    lanes = 0
    for cp in checkpoints:
        if cp.parent is None:
            depth[cp.id], lane[cp.id] = 0, lanes
            lanes += 1
            continue
        siblings = children.setdefault(cp.parent, [])
        depth[cp.id] = depth[cp.parent] + 1
        if siblings:
            lane[cp.id] = lanes
            lanes += 1
        else:
            lane[cp.id] = lane[cp.parent]
        siblings.append(cp.id)

    latest = checkpoints[-1].id
    versions: dict[str, dict[str, str]] = {}
    nodes = []
    details = {}
    for index, cp in enumerate(checkpoints):
        parent_versions = versions.get(cp.parent or "", {})
        mine = _versions(cp, by_id, parent_versions, index)
        versions[cp.id] = mine
        interrupts = [i for task in cp.tasks for i in task.get("interrupts", [])]
        errors = sum(1 for task in cp.tasks if task.get("error"))
        nodes.append(
            {
                "id": cp.id,
                "parent": cp.parent,
                "step": cp.step,
                "source": cp.source,
                "next": cp.next,
                "writers": cp.writers,
                "interrupts": len(interrupts),
                "errors": errors,
                "is_head": cp.id not in children,
                "is_latest": cp.id == latest,
                "depth": depth[cp.id],
                "lane": lane[cp.id],
                "created_at": f"2025-01-01T00:{index // 60 % 60:02d}:{index % 60:02d}+00:00",
            }
        )
        details[cp.id] = {
            "id": cp.id,
            "parent": cp.parent,
            "step": cp.step,
            "source": cp.source,
            "next": cp.next,
            "created_at": nodes[-1]["created_at"],
            "metadata": {"source": cp.source, "step": cp.step, "parents": {}},
            "config": {"configurable": {"thread_id": thread_id, "checkpoint_id": cp.id}},
            "values": copy.deepcopy(cp.values),
            "blobs": [
                {
                    "channel": channel,
                    "version": ver,
                    "status": "shared" if parent_versions.get(channel) == ver else "new",
                    "size": 9 + len(repr(cp.values.get(channel))),
                }
                for channel, ver in sorted(mine.items())
            ],
            "tasks": cp.tasks,
            "writes": cp.writes,
            "interrupts": interrupts,
            "editable": ["messages", "count", "approved"],
            "nodes": ["agent", "tools", "gate"],
        }
    nodes.sort(key=lambda node: (node["depth"], node["lane"]))
    dag = {"thread_id": thread_id, "nodes": nodes, "depth": max(depth.values()) + 1, "lanes": lanes}
    return {"thread_id": thread_id, "dag": dag, "details": details}


def _versions(
    cp: Checkpoint, by_id: dict[str, Checkpoint], parent_versions: dict[str, str], index: int
) -> dict[str, str]:
    """Bump the version of every channel whose value differs from the parent's."""
    parent = by_id.get(cp.parent or "")
    out = {}
    for channel, value in cp.values.items():
        if (
            parent is not None
            and channel in parent_versions
            and parent.values.get(channel) == value
        ):
            out[channel] = parent_versions[channel]
        else:
            counter = int(parent_versions.get(channel, "0").split(".")[0]) + 1
            out[channel] = version(counter, index if cp.source in ("update", "fork") else 0)
    return out


SMALL = {
    "input": checkpoint_id(1),
    "start": checkpoint_id(2),
    "agent": checkpoint_id(3),
    "tools": checkpoint_id(4),
    "fork": checkpoint_id(5),
}
"""The small thread's checkpoint ids, by what made them."""

_GATE_INTERRUPT = {
    "id": "7c1e5a0d9b2f4e8a",
    "value": {"question": "Send the reply?", "draft": "Paris"},
    "node": "gate",
    "task_id": "task-gate-0001",
}


def small_export() -> dict[str, Any]:
    """A thread paused on an interrupt at ``gate``, with a fork from step 1 that then failed."""
    hello = {"role": "user", "content": "What is the capital of France?"}
    thought = {"role": "assistant", "content": "Let me look that up."}
    found = {"role": "tool", "content": "Paris"}
    checkpoints = [
        Checkpoint(SMALL["input"], None, -1, "input", {}, next=["__start__"]),
        Checkpoint(
            SMALL["start"],
            SMALL["input"],
            0,
            "loop",
            {"messages": [hello], "count": 0},
            writers=["__start__"],
            next=["agent"],
        ),
        Checkpoint(
            SMALL["agent"],
            SMALL["start"],
            1,
            "loop",
            {"messages": [hello, thought], "count": 1},
            writers=["agent"],
            next=["tools"],
        ),
        Checkpoint(
            SMALL["tools"],
            SMALL["agent"],
            2,
            "loop",
            {"messages": [hello, thought, found], "count": 2, "approved": None},
            writers=["tools"],
            next=["gate"],
            tasks=[
                {
                    "id": "task-gate-0001",
                    "name": "gate",
                    "error": None,
                    "interrupts": [_GATE_INTERRUPT],
                    "result": None,
                }
            ],
        ),
        Checkpoint(
            SMALL["fork"],
            SMALL["agent"],
            2,
            "update",
            {"messages": [hello, thought], "count": 10},
            writers=["agent"],
            next=["tools"],
            tasks=[
                {
                    "id": "task-tools-0002",
                    "name": "tools",
                    "error": "ValueError: count 10 is over the limit of 5",
                    "interrupts": [],
                    "result": None,
                },
                {
                    "id": "task-audit-0003",
                    "name": "audit",
                    "error": None,
                    "interrupts": [],
                    "result": {"logged": True},
                },
            ],
            writes=[
                {"task_id": "task-audit-0003", "node": "audit", "channel": "count", "value": 11},
            ],
        ),
    ]
    data = with_layout(checkpoints, "demo-thread")
    data["topology"] = {
        "nodes": [
            {"id": "__start__", "x": 60, "y": 20, "count": 1, "reruns": 0},
            {"id": "agent", "x": 60, "y": 70, "count": 2, "reruns": 1},
            {"id": "tools", "x": 60, "y": 120, "count": 1, "reruns": 0},
            {"id": "gate", "x": 60, "y": 170, "count": 1, "reruns": 0},
            {"id": "__end__", "x": 60, "y": 220, "count": 0, "reruns": 0},
        ],
        "edges": [
            {"source": "__start__", "target": "agent", "conditional": False},
            {"source": "agent", "target": "tools", "conditional": True},
            {"source": "tools", "target": "gate", "conditional": False},
            {"source": "gate", "target": "__end__", "conditional": True},
        ],
        "width": 160,
        "height": 240,
        "svg": None,
    }
    return data


def large_export(checkpoints: int = 2000, forks: int = 5) -> dict[str, Any]:
    """A thread of ``checkpoints`` checkpoints: one long run and ``forks`` forked branches.

    Each fork leaves the main run at an evenly spaced checkpoint and runs on for its share of
    the checkpoints; every 50th main checkpoint is paused on an interrupt and every 97th failed.
    """
    branch_length = checkpoints // (forks * 4)
    main_length = checkpoints - forks * branch_length
    made: list[Checkpoint] = []
    counter = iter(range(1, checkpoints + 1))

    def add(parent: Checkpoint | None, step: int, source: str, count: int) -> Checkpoint:
        n = next(counter)
        messages = [f"message {k}" for k in range(max(0, count - 3), count)]
        cp = Checkpoint(
            checkpoint_id(n),
            parent.id if parent else None,
            step,
            source,
            {"messages": messages, "count": count, "doc": {"title": "report", "words": count * 3}},
            writers=[] if source == "input" else ["agent" if step % 2 else "tools"],
            next=["tools" if step % 2 else "agent"],
        )
        if source == "loop" and n % 50 == 0:
            cp.tasks = [
                {
                    "id": f"task-{n}",
                    "name": "gate",
                    "error": None,
                    "interrupts": [
                        {
                            "id": f"int-{n}",
                            "value": f"approve {n}?",
                            "node": "gate",
                            "task_id": f"task-{n}",
                        }
                    ],
                    "result": None,
                }
            ]
        elif source == "loop" and n % 97 == 0:
            cp.tasks = [
                {
                    "id": f"task-{n}",
                    "name": "tools",
                    "error": "TimeoutError",
                    "interrupts": [],
                    "result": None,
                }
            ]
        made.append(cp)
        return cp

    main = [add(None, -1, "input", 0)]
    for step in range(main_length - 1):
        main.append(add(main[-1], step, "loop", step + 1))
    for f in range(forks):
        base = main[(f + 1) * main_length // (forks + 1)]
        tip = add(base, base.step + 1, "fork" if f % 2 else "update", 1000 + f)
        for k in range(branch_length - 1):
            tip = add(tip, tip.step + 1, "loop", 1000 + f + k + 1)
    data = with_layout(made, "large-thread")
    data["topology"] = None
    return data
