"""The thread tree as text (used by ``durable-debug``)."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from durable_debug import START, MemorySaver, StateGraph
from durable_debug.inspect import dag_data
from durable_debug.inspect.text import short_id, tree_text


class S(TypedDict):
    log: Annotated[list, operator.add]


def test_short_id_shows_the_time_ordered_digits_like_the_widget() -> None:
    # the same value js/widget.js's shortId gives (tests/js/helpers.test.mjs)
    assert short_id("1ef4f797-8335-6428-8001-8a1503f9b875") == "78335428"
    assert short_id("5bc2acca-1111-4222-8333-0123456789ab") == "456789ab"


def test_tree_text_groups_branches_and_marks_heads() -> None:
    g = (
        StateGraph(S)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=MemorySaver())
    )
    cfg = {"configurable": {"thread_id": "t"}}
    g.invoke({"log": []}, cfg)
    step1 = next(s.config for s in g.get_state_history(cfg) if s.metadata["step"] == 1)
    g.invoke(None, g.update_state(step1, {"log": ["edited"]}))
    lines = tree_text(dag_data(g, cfg), ascii_only=True).splitlines()
    assert lines[0] == "thread 't': 6 checkpoints, 2 branches"
    assert lines[1] == "branch 0"
    assert lines[6].startswith("branch 1, forked from step 1 (")
    assert [line.split()[:2] for line in lines if line.startswith("  ")] == [
        ["-1", "input"],
        ["0", "loop"],
        ["1", "loop"],
        ["2", "loop"],
        ["2", "update"],
        ["3", "loop"],
    ]
    assert lines[5].endswith("done   * head")
    assert lines[-1].endswith("done   * head  @ latest")
    ids = [line.split()[2] for line in lines if line.startswith("  ")]
    assert len(set(ids)) == len(ids)  # short ids tell checkpoints apart
