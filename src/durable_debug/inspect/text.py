"""A thread's checkpoint tree as plain text, for terminals and logs.

    print(tree_text(dag_data(graph, config)))

    thread 'demo': 9 checkpoints, 2 branches
    branch 0
      -1  input   1f1ee0b1  next __start__
       0  loop    1f1ee0b2  wrote __start__   next plan
       ...
    branch 1, forked from step 1 (1f1ee0b3)
       2  update  1f1ee0c1  wrote plan        next write, write      ◆ head  ★ latest

Each branch is one lane of the widget's layout; a branch's first line says where it left
its parent. Markers: ⏸ pending interrupts, ✗ failed tasks (or a parent link that loops back,
in a damaged store), ◆ the head of a branch, ★ the
thread's latest checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from durable_debug.inspect.dag import Dag, DagNode

__all__ = ["short_id", "tree_text"]


def short_id(checkpoint_id: str, width: int = 8) -> str:
    """The part of a checkpoint id that tells neighbours apart.

    Checkpoint ids are version-6 UUIDs: the first 15 hex digits (skipping the version digit)
    are a timestamp, the last block is fixed per process. Their last ``width`` timestamp
    digits differ between checkpoints; other ids are cut to their last ``width`` digits.
    """
    digits = checkpoint_id.replace("-", "")
    if len(digits) == 32 and digits[12] == "6":
        return (digits[:12] + digits[13:16])[-width:]
    return digits[-width:]


def tree_text(dag: Dag, *, ascii_only: bool = False) -> str:
    """Render the protocol's ``Dag`` as one line per checkpoint, grouped by branch."""
    nodes = dag["nodes"]
    by_id = {n["id"]: n for n in nodes}
    lanes: dict[int, list[DagNode]] = {}
    for node in sorted(nodes, key=lambda n: (n["lane"], n["depth"])):
        lanes.setdefault(node["lane"], []).append(node)
    marks = _marks(ascii_only)
    count = len(nodes)
    plural = "s" if count != 1 else ""
    branches = len(lanes)
    lines = [
        f"thread {dag['thread_id']!r}: {count} checkpoint{plural}, "
        f"{branches} branch{'es' if branches != 1 else ''}"
    ]
    writer_width = max((len(_writers(n["writers"])) for n in nodes), default=0)
    for lane, members in lanes.items():
        first = members[0]
        parent = by_id.get(first["parent"] or "")
        if lane == 0 or parent is None:
            lines.append(f"branch {lane}")
        else:
            lines.append(
                f"branch {lane}, forked from step {parent['step']} ({short_id(parent['id'])})"
            )
        for node in members:
            lines.append("  " + _line(node, writer_width, marks))
    return "\n".join(lines)


def _line(node: DagNode, writer_width: int, marks: dict[str, str]) -> str:
    writers = _writers(node["writers"])
    nxt = "next " + ", ".join(node["next"]) if node["next"] else "done"
    flags = []
    if node["interrupts"]:
        flags.append(
            f"{marks['interrupt']} {node['interrupts']} interrupt" + _s(node["interrupts"])
        )
    if node["errors"]:
        flags.append(f"{marks['error']} {node['errors']} failed")
    if node.get("findings"):
        flags.append(f"{marks['finding']} {node['findings']} finding" + _s(node["findings"]))
    broken = node.get("broken_parent")
    if broken:
        flags.append(f"{marks['error']} parent {short_id(broken)} loops back (link ignored)")
    if node["is_head"]:
        flags.append(f"{marks['head']} head")
    if node["is_latest"]:
        flags.append(f"{marks['latest']} latest")
    text = (
        f"{node['step']:>3}  {node['source']:<6}  {short_id(node['id'])}  "
        f"{writers:<{writer_width}}  {nxt}"
    )
    return (text + ("   " + "  ".join(flags) if flags else "")).rstrip()


def _writers(writers: Sequence[str]) -> str:
    if not writers:
        return ""
    return "wrote " + ", ".join(_grouped(writers))


def _grouped(names: Iterable[str]) -> list[str]:
    """``['write', 'write', 'plan']`` → ``['write×2', 'plan']`` (first-seen order)."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [f"{name}×{n}" if n > 1 else name for name, n in counts.items()]


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _marks(ascii_only: bool) -> dict[str, str]:
    if ascii_only:
        return {"interrupt": "||", "error": "x", "finding": "!", "head": "*", "latest": "@"}
    return {"interrupt": "⏸", "error": "✗", "finding": "⚑", "head": "◆", "latest": "★"}
