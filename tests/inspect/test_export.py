"""export_jsonl for trace diffing (notebook 10), and the data of the standalone HTML page."""

from __future__ import annotations

import contextlib
import difflib
import json
import re

from durable_debug.inspect import aexport_html, aexport_jsonl, ahtml_data
from durable_debug.inspect.dag import adag_data, dag_from_wire
from durable_debug.inspect.html import DATA_ELEMENT_ID


async def test_jsonl_has_one_line_per_checkpoint(seed, tmp_path):
    ns = seed("resume")
    with contextlib.suppress(RuntimeError):
        await ns["g"].ainvoke({"log": []}, ns["cfg"])
    path = await aexport_jsonl(ns["g"], ns["cfg"], tmp_path / "trace.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["step"] for line in lines] == [-1, 0, 1, 2]
    assert [line["next"] for line in lines] == [["__start__"], ["a"], ["b"], ["c"]]
    assert lines[1]["parent_id"] == lines[0]["checkpoint_id"]
    assert lines[3]["values"] == {"log": ["a", "b"]}
    assert [(w["node"], w["channel"]) for w in lines[3]["writes"]] == [("c", "__error__")]
    assert {"thread_id", "created_at", "writers", "source"} <= set(lines[0])


async def test_stable_traces_of_two_runs_differ_only_where_behaviour_did(seed, tmp_path):
    """Run the same graph twice; the second time b writes something else. The stable traces
    differ exactly in the lines that carry b's write."""
    traces = []
    for run, tag in enumerate(["ran B", "ran B (v2)"]):
        ns = seed("accumulate")
        if run:

            async def step_b(state, tag=tag):
                return {"value": "B", "log": [tag]}

            builder = ns["StateGraph"](ns["State"])
            builder.add_node("a", ns["step_a"]).add_node("b", step_b)
            builder.add_edge(ns["START"], "a").add_edge("a", "b").add_edge("b", ns["END"])
            ns["g"] = builder.compile(checkpointer=ns["MemorySaver"]())
        await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
        path = await aexport_jsonl(ns["g"], ns["cfg"], tmp_path / f"run{run}.jsonl", stable=True)
        traces.append(path.read_text().splitlines())
    changed = [line for line in difflib.ndiff(*traces) if line[:1] in "+-"]
    assert len(changed) == 4  # the write on checkpoint #2 and the values of checkpoint #3
    assert all(
        '"checkpoint_id": "#2"' in line or '"checkpoint_id": "#3"' in line for line in changed
    )
    assert all("created_at" not in line and "task_id" not in line for line in traces[0])


async def test_html_data_holds_the_dag_every_detail_and_the_topology(seed):
    ns = seed("accumulate")
    await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    data = await ahtml_data(ns["g"], ns["cfg"], {"a": 1, "b": 1})
    json.dumps(data, allow_nan=False)
    assert data["thread_id"] == "demo-1"
    dag = dag_from_wire(data["dag"])  # the compact form the widget gets as _dag
    assert dag == await adag_data(ns["g"], ns["cfg"])
    assert set(data["details"]) == {n["id"] for n in dag["nodes"]}
    # what every detail shares travels once; the config is rebuilt by the page
    assert data["detail_defaults"] == {"editable": ["value", "log"], "nodes": ["a", "b"]}
    assert not any({"config", "editable", "nodes"} & set(d) for d in data["details"].values())
    assert {n["id"]: n["count"] for n in data["topology"]["nodes"]}["b"] == 1


async def test_export_html_embeds_the_thread_in_one_page(seed, tmp_path):
    ns = seed("rerun_rule")
    await ns["g"].ainvoke({"prep": "", "decision": ""}, ns["cfg"])
    path = await aexport_html(ns["g"], ns["cfg"], tmp_path / "thread.html", {"gate": 1})
    page = path.read_text("utf-8")
    match = re.search(
        rf'<script type="application/json" id="{DATA_ELEMENT_ID}">(.*?)</script>', page, re.S
    )
    assert match is not None
    data = json.loads(match.group(1))
    again = json.loads(json.dumps(await ahtml_data(ns["g"], ns["cfg"], {"gate": 1})))
    # each read of an outline lays its columns out under an epoch of its own (what a live
    # widget's tails are matched against; a page gets none)
    data["dag"].pop("epoch", None)
    again["dag"].pop("epoch", None)
    assert data == again
    paused = [n for n in dag_from_wire(data["dag"])["nodes"] if n["interrupts"]]
    assert [n["next"] for n in paused] == [["gate"]]
    assert "http://" not in page.replace("http://www.w3.org", "")  # no network


async def test_hostile_node_names_cannot_end_the_pages_scripts(engine, tmp_path, monkeypatch):
    """A hostile name: a node named like the end of a script element, exported with a `dot`
    that works and with one that fails (the page then draws the Python layout)."""
    from test_topology import HOSTILE_NAMES, graph_named

    g = graph_named(engine, *HOSTILE_NAMES)
    cfg = {"configurable": {"thread_id": "</script><script>alert(1)</script>"}}
    await g.ainvoke({"value": ""}, cfg)
    pages = [(await aexport_html(g, cfg, tmp_path / "dot.html")).read_text("utf-8")]
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ncat >/dev/null\necho 'Error: syntax error' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    pages.append((await aexport_html(g, cfg, tmp_path / "failed-dot.html")).read_text("utf-8"))
    for page in pages:
        # The page's own three scripts (module source, data, bootstrap) and nothing else.
        assert page.count("<script") == 3 and page.count("</script>") == 3
        match = re.search(
            rf'<script type="application/json" id="{DATA_ELEMENT_ID}">(.*?)</script>', page, re.S
        )
        assert match is not None
        data = json.loads(match.group(1))
        assert data["thread_id"] == cfg["configurable"]["thread_id"]
        assert {n["id"] for n in data["topology"]["nodes"]} >= set(HOSTILE_NAMES)
    assert json.loads(match.group(1))["topology"]["svg"] is None  # the failed dot: Python draws
