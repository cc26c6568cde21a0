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
    "findings",
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


def test_detail_lists_the_findings_of_the_checkpoint(tmp_path):
    """The detail of a checkpoint lists its findings (here: a write the schema lacks, dropped
    as LangGraph drops it); the DAG marks the checkpoint with their count."""
    import warnings

    from typing_extensions import TypedDict

    from durable_debug import START, SqliteSaver, StateGraph
    from durable_debug.inspect import checkpoint_detail, dag_data

    class S(TypedDict):
        note: str

    with SqliteSaver(str(tmp_path / "f.db")) as saver:
        g = (
            StateGraph(S)
            .add_node("write", lambda s: {"note": "n", "nte": "typo"})
            .add_edge(START, "write")
            .compile(checkpointer=saver)
        )
        cfg = {"configurable": {"thread_id": "f"}}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g.invoke({"note": ""}, cfg)
        detail = checkpoint_detail(g, cfg)
        assert detail["step"] == 1
        assert detail["findings"] == [
            {
                "code": "unknown-key",
                "message": "Node 'write' wrote key 'nte', which the state schema S does not "
                "have (its keys: note): the write was dropped, as LangGraph drops it.",
                "node": "write",
                "key": "nte",
            }
        ]
        assert "nte" not in detail["metadata"] and "findings" not in detail["metadata"]
        counts = {n["step"]: n["findings"] for n in dag_data(g, cfg)["nodes"]}
        assert counts == {-1: 0, 0: 0, 1: 1}
