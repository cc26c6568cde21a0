"""checkpoint_detail: the protocol's Detail for one checkpoint."""

from __future__ import annotations

import contextlib
import json

from durable_debug.inspect import acheckpoint_detail

DETAIL_KEYS = {
    "id",
    "parent",
    "step",
    "source",
    "next",
    "created_at",
    "metadata",
    "config",
    "values",
    "blobs",
    "tasks",
    "writes",
    "interrupts",
    "editable",
    "nodes",
}


async def test_detail_of_a_checkpoint_paused_on_parallel_interrupts(seed):
    """Notebook 07 (b): three pending interrupts, each with its id, node and task."""
    ns = seed("reviews")
    g, cfg = ns["g"], ns["cfg"]
    first = await g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"], "approvals": []}, cfg)
    detail = await acheckpoint_detail(g, cfg)
    json.dumps(detail, allow_nan=False)
    assert set(detail) == DETAIL_KEYS | {"reducers"}  # approvals: Annotated[list, add]
    assert detail["reducers"] == {"approvals": "operator.add"}
    assert detail["next"] == ["review", "review", "review"]
    assert {i["id"] for i in detail["interrupts"]} == {i.id for i in first["__interrupt__"]}
    assert sorted(i["value"]["review_item"] for i in detail["interrupts"]) == [
        "doc-X",
        "doc-Y",
        "doc-Z",
    ]
    assert {i["node"] for i in detail["interrupts"]} == {"review"}
    assert {i["task_id"] for i in detail["interrupts"]} == {t["id"] for t in detail["tasks"]}
    assert detail["editable"] == ["items", "approvals"] and detail["nodes"] == ["review"]

    answers = {i.id: "OK" for i in first["__interrupt__"]}
    await g.ainvoke(ns["Command"](resume=answers), cfg)
    paused = await acheckpoint_detail(g, cfg, detail["id"])  # the same checkpoint, later
    assert paused["interrupts"] == []  # all answered
    assert sorted(t["result"]["approvals"][0] for t in paused["tasks"]) == [
        "doc-X=OK",
        "doc-Y=OK",
        "doc-Z=OK",
    ]


async def test_detail_of_a_failed_step(seed):
    ns = seed("resume")
    with contextlib.suppress(RuntimeError):
        await ns["g"].ainvoke({"log": []}, ns["cfg"])
    detail = await acheckpoint_detail(ns["g"], ns["cfg"])
    assert detail["step"] == 2 and detail["source"] == "loop"
    assert [(t["name"], "c is broken" in t["error"]) for t in detail["tasks"]] == [("c", True)]
    assert [w["channel"] for w in detail["writes"]] == ["__error__"]
    assert [(b["channel"], b["status"]) for b in detail["blobs"]] == [("log", "new")]
    assert detail["values"] == {"log": ["a", "b"]}
    assert detail["parent"] is not None and detail["metadata"]["step"] == 2
