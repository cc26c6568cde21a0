"""TimeTravel driven the way its front end drives it: comm messages in, comm messages out.

Each test builds a seed graph, opens the widget on its thread and sends ``msg:custom`` requests
through the widget's comm entry point (``_handle_msg``, exactly what ipywidgets calls when the
front end's ``model.send`` arrives). Replies and trait updates are read from what the widget
sends on its comm. The assertions are about the saver's contents and what the user would see.
"""

from __future__ import annotations

import asyncio
import copy
import operator
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from durable_debug import MemorySaver, StateGraph, TimeTravel, interrupt
from durable_debug.inspect.dag import dag_data_of, unpack_wire
from durable_debug.inspect.thread import aread_thread
from durable_debug.magics import CellOptions, GraphSession
from support.seed_graphs import ENGINES, load

WAIT = 60.0
"""Seconds to wait for a condition: generous, the test machine is small and shared."""


class FrontEnd:
    """Plays the JS side: sends requests on the widget's comm and reads what comes back."""

    def __init__(self, widget: TimeTravel) -> None:
        self.widget = widget
        self.sent: list[dict[str, Any]] = []
        self._count = 0
        widget.comm.send = self._receive  # the wire: every message the browser would get

    def _receive(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.sent.append(data)

    def answers(self) -> dict[str, dict[str, Any]]:
        """Replies to requests, by uuid."""
        return {
            m["content"]["uuid"]: m["content"] for m in self.sent if m.get("method") == "custom"
        }

    def updates(self, trait: str) -> list[Any]:
        """Every value of ``trait`` sent to the browser, in order."""
        return [
            m["state"][trait]
            for m in self.sent
            if m.get("method") == "update" and trait in m.get("state", {})
        ]

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send ``{uuid, kind, ...fields}`` like ``model.send`` does and wait for the reply."""
        self._count += 1
        uuid = f"req-{self._count}"
        content = {"uuid": uuid, "kind": kind, **fields}
        self.widget._handle_msg(
            {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
        )
        await until(lambda: uuid in self.answers(), f"an answer to {kind}")
        return self.answers()[uuid]

    async def result(self, kind: str, **fields: Any) -> Any:
        answer = await self.request(kind, **fields)
        assert "error" not in answer, answer["error"]
        return answer["result"]

    async def select(self, checkpoint_id: str) -> dict[str, Any]:
        """Click a checkpoint: the reply only names it, the detail arrives once as ``_detail``."""
        reply = await self.result("select", checkpoint_id=checkpoint_id)
        assert set(reply) == {"checkpoint_id"}, reply
        detail = self.updates("_detail")[-1]
        assert detail["id"] == reply["checkpoint_id"]
        return detail

    async def error(self, kind: str, **fields: Any) -> str:
        answer = await self.request(kind, **fields)
        assert "result" not in answer, f"expected a refusal, got {answer['result']!r}"
        return str(answer["error"])


async def until(condition: Callable[[], Any], what: str) -> None:
    """Wait (without blocking the loop) until ``condition()`` is true."""
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def open_widget(graph: Any, config: dict[str, Any], **kwargs: Any) -> tuple[Any, FrontEnd]:
    widget = TimeTravel(graph, config, **kwargs)
    front = FrontEnd(widget)
    await widget.aready()
    return widget, front


def ids(widget: TimeTravel) -> list[str]:
    """Checkpoint ids in the widget's DAG, oldest first."""
    return sorted(node["id"] for node in widget.dag["nodes"])


def node(widget: TimeTravel, checkpoint_id: str) -> dict[str, Any]:
    """The DAG node the widget sent for a checkpoint."""
    return next(n for n in widget.dag["nodes"] if n["id"] == checkpoint_id)


async def saved(graph: Any, config: dict[str, Any]) -> dict[str, Any]:
    """Checkpoint id → checkpoint tuple, straight from the saver."""
    return {
        t.config["configurable"]["checkpoint_id"]: t async for t in graph.checkpointer.alist(config)
    }


def store(graph: Any) -> Any:
    """A deep copy of everything the in-memory saver holds (checkpoints, blobs, writes)."""
    saver = graph.checkpointer
    return copy.deepcopy(
        {name: dict(getattr(saver, name)) for name in ("storage", "blobs", "writes")}
    )


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """durable_debug's engine and LangGraph's, each with its own MemorySaver."""
    return str(request.param)


@pytest.fixture
def accumulate(engine: str) -> dict[str, Any]:
    """Notebook 01's graph (a → b) on the current engine, not run yet."""
    return load(engine, "accumulate")


async def ran(ns: dict[str, Any]) -> dict[str, Any]:
    """Run notebook 01 once: checkpoints input, step 0 (next a), after a (next b), after b."""
    await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    return ns


# --- reading -----------------------------------------------------------------------------------


async def test_the_widget_opens_on_the_thread_dag_and_topology(accumulate):
    ns = await ran(accumulate)
    widget, _ = await open_widget(ns["g"], ns["cfg"])
    assert widget._thread_id == "demo-1"
    assert [n["step"] for n in sorted(widget.dag["nodes"], key=lambda n: n["id"])] == [-1, 0, 1, 2]
    assert {n["id"] for n in widget._topology["nodes"]} >= {"a", "b"}
    assert widget._selected == "" and widget._detail is None
    assert widget._readonly is False and widget._running is False
    assert repr(widget) == "<TimeTravel thread 'demo-1': 4 checkpoints>"


async def test_select_sets_selected_and_detail_then_replies(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    after_a = ids(widget)[2]
    detail = await front.select(after_a)
    assert detail["id"] == after_a and detail["values"] == {"value": "A", "log": ["ran A"]}
    assert detail["next"] == ["b"]
    assert widget._selected == after_a and widget._detail == detail
    # The browser got both traits in one update, before the answer.
    update = next(
        i
        for i, m in enumerate(front.sent)
        if m.get("method") == "update" and "_detail" in m["state"] and "_selected" in m["state"]
    )
    reply = next(i for i, m in enumerate(front.sent) if m.get("method") == "custom")
    assert update < reply


async def test_selecting_an_unknown_checkpoint_says_which_thread_lacks_it(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    error = await front.error("select", checkpoint_id="1f0-no-such-checkpoint-0000000000000000")
    assert "'demo-1' has no checkpoint '1f0-no-such-checkpoint" in error
    assert widget._selected == ""


async def test_diff_lists_changed_channels_with_paths(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    after_a, after_b = ids(widget)[2:]
    entries = await front.result("diff", a=after_a, b=after_b)
    by_channel = {e["channel"]: e for e in entries}
    assert by_channel["value"]["old"] == "A" and by_channel["value"]["new"] == "B"
    assert by_channel["log"]["changes"] == [
        {"path": "log[1]", "change": "added", "old": None, "new": "ran B"}
    ]
    assert await front.result("diff", a=after_a, b=after_a) == []


# --- fork --------------------------------------------------------------------------------------


async def test_fork_writes_one_checkpoint_with_the_right_parent_and_values(accumulate):
    ns = await ran(accumulate)
    g, cfg = ns["g"], ns["cfg"]
    widget, front = await open_widget(g, cfg)
    after_a = ids(widget)[2]
    before = await saved(g, cfg)

    result = await front.result(
        "fork", checkpoint_id=after_a, edits={"value": '"edited"'}, as_node="a"
    )

    after = await saved(g, cfg)
    (new_id,) = set(after) - set(before)
    assert result["checkpoint_id"] == new_id
    assert after[new_id].parent_config["configurable"]["checkpoint_id"] == after_a
    state = await g.aget_state(after[new_id].config)
    assert state.values == {"value": "edited", "log": ["ran A"]}
    assert state.next == ("b",)
    # The DAG shows the new branch, and the new checkpoint is selected.
    assert new_id in ids(widget) and node(widget, new_id)["parent"] == after_a
    assert widget.dag["lanes"] == 2
    assert widget._selected == new_id and widget._detail["values"]["value"] == "edited"
    assert widget._code[-1] == {"action": "fork", "code": result["code"]}
    assert result["code"] == (
        "await graph.aupdate_state({'configurable': {'thread_id': 'demo-1', 'checkpoint_ns': '', "
        f"'checkpoint_id': '{after_a}'}}}}, {{'value': 'edited'}}, as_node='a')"
    )


async def test_the_fork_code_replays_the_same_fork(accumulate):
    """What the Code panel shows is real Python: running it makes the same checkpoint."""
    ns = await ran(accumulate)
    g, cfg = ns["g"], ns["cfg"]
    widget, front = await open_widget(g, cfg)
    after_a = ids(widget)[2]
    result = await front.result(
        "fork", checkpoint_id=after_a, edits={"value": '{"nested": [1, true, null]}'}
    )
    replayed = await eval(result["code"].removeprefix("await "), {"graph": g})
    ui = await g.aget_state(
        {"configurable": {**cfg["configurable"], "checkpoint_id": result["checkpoint_id"]}}
    )
    code = await g.aget_state(replayed)
    assert ui.values == code.values == {"value": {"nested": [1, True, None]}, "log": ["ran A"]}
    assert ui.parent_config == code.parent_config and ui.next == code.next


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        ({"value": "'single quotes'"}, "Channel 'value' is not valid JSON"),
        ({"value": "NaN"}, "Channel 'value' is not valid JSON (NaN is not JSON)"),
        ({"value": '"ok"', "log": "[1,"}, "Channel 'log' is not valid JSON"),
        ({"missing": "1"}, "The state schema has no channel 'missing' (its channels: value, log)"),
        ({"value": str(2**70)}, "nothing was written"),  # msgpack cannot hold it
        ({"log": '"not a list"'}, "nothing was written"),  # the list reducer refuses it
        ({}, "Nothing to fork"),
    ],
    ids=[
        "invalid-json",
        "nan",
        "second-channel-invalid",
        "unknown-key",
        "unserializable",
        "reducer-refuses",
        "no-edit",
    ],
)
async def test_a_rejected_fork_writes_nothing(accumulate, edits, message):
    ns = await ran(accumulate)
    g = ns["g"]
    widget, front = await open_widget(g, ns["cfg"])
    after_a = ids(widget)[2]
    await front.select(after_a)
    before, dag = store(g), widget._dag

    error = await front.error("fork", checkpoint_id=after_a, edits=edits, as_node=None)

    assert message in error
    assert "\n" not in error
    assert store(g) == before  # no checkpoint, no blob, no write
    assert widget._dag == dag and widget._selected == after_a and widget._code == []


async def test_a_refused_value_names_the_engines_reason(engine, accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    error = await front.error("fork", checkpoint_id=ids(widget)[2], edits={"value": str(2**70)})
    expected = {
        "durable_debug": "channel 'value': an integer does not fit in 64 bits",
        "langgraph": "Integer exceeds 64-bit range",
    }[engine]
    assert error.startswith("The fork was refused, nothing was written:")
    assert expected in error


async def test_fork_as_an_unknown_node_is_refused(accumulate):
    ns = await ran(accumulate)
    g = ns["g"]
    widget, front = await open_widget(g, ns["cfg"])
    before = store(g)
    error = await front.error(
        "fork", checkpoint_id=ids(widget)[2], edits={"value": '"x"'}, as_node="ghost"
    )
    assert "ghost" in error and store(g) == before


# --- rerun -------------------------------------------------------------------------------------


async def test_rerun_from_a_fork_grows_its_branch(accumulate):
    ns = await ran(accumulate)
    g, cfg = ns["g"], ns["cfg"]
    widget, front = await open_widget(g, cfg)
    after_a = ids(widget)[2]
    fork = (await front.result("fork", checkpoint_id=after_a, edits={"value": '"edited"'}))[
        "checkpoint_id"
    ]
    before = await saved(g, cfg)

    started = await front.result("rerun", checkpoint_id=fork)

    assert started["started"] is True
    assert started["code"] == (
        "await graph.ainvoke(None, {'configurable': {'thread_id': 'demo-1', "
        f"'checkpoint_ns': '', 'checkpoint_id': '{fork}'}}}})"
    )
    await until(lambda: not widget._running, "the rerun to end")
    (new_id,) = set(await saved(g, cfg)) - set(before)
    assert node(widget, new_id)["parent"] == fork and node(widget, new_id)["is_head"]
    new_config = {"configurable": {**cfg["configurable"], "checkpoint_id": new_id}}
    assert (await g.aget_state(new_config)).values == {"value": "B", "log": ["ran A", "ran B"]}
    assert widget._status == "wrote 1 checkpoint from step 2; done" and widget._error == ""
    # Where the run ended is selected, and the browser saw _running go true, then false.
    assert widget._selected == new_id and widget._detail["values"]["log"] == ["ran A", "ran B"]
    assert front.updates("_running") == [True, False]
    assert [entry["action"] for entry in widget._code] == ["fork", "rerun"]
    counts = {n["id"]: n["count"] for n in widget._topology["nodes"]}
    assert counts["b"] == 1  # the widget's own run is counted in the topology


async def test_rerun_does_not_block_the_loop(engine):
    """While a rerun waits inside a node, the kernel's loop keeps answering requests."""
    ns = load(engine, "accumulate")
    release, entered = asyncio.Event(), asyncio.Event()

    async def slow_b(state: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        await release.wait()
        return {"value": "B", "log": ["ran B"]}

    g = _rebuild(engine, ns, slow_b)
    cfg = ns["cfg"]
    release.set()
    await g.ainvoke({"value": "", "log": []}, cfg)
    release.clear()
    entered.clear()
    widget, front = await open_widget(g, cfg)
    after_a = ids(widget)[2]
    fork = await fresh_fork(front, after_a)

    await front.result("rerun", checkpoint_id=fork)
    await asyncio.wait_for(entered.wait(), WAIT)
    assert widget._running is True and widget._status.startswith("rerun: running from step 2")
    detail = await front.select(after_a)  # answered meanwhile
    assert detail["id"] == after_a
    error = await front.error("rerun", checkpoint_id=fork)
    assert "still going" in error
    release.set()
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._status.endswith("done")


async def test_drawing_the_graph_with_dot_leaves_the_event_loop_free(accumulate, monkeypatch):
    """graphviz's ``dot`` runs in a worker thread: while it draws, other coroutines run."""
    import importlib
    import threading

    # (``durable_debug.inspect.topology`` the attribute is the function of that name)
    topology = importlib.import_module("durable_debug.inspect.topology")

    drawing, release = threading.Event(), threading.Event()

    def slow_dot(*_args: Any) -> str:
        drawing.set()
        release.wait(timeout=20)  # a blocked loop would sit here until the timeout
        return "<svg>drawn</svg>"

    monkeypatch.setattr(topology, "_use_graphviz", lambda _renderer: True)
    monkeypatch.setattr(topology, "_graphviz_svg", slow_dot)
    ns = await ran(accumulate)
    widget = TimeTravel(ns["g"], ns["cfg"])
    await asyncio.to_thread(drawing.wait, 60)
    assert not widget._loaded.done()  # still drawing, and this coroutine got to run
    release.set()
    await widget.aready()
    assert widget._topology["svg"] == "<svg>drawn</svg>"


async def test_stop_cancels_the_running_rerun(engine):
    ns = load(engine, "accumulate")
    entered, never = asyncio.Event(), asyncio.Event()
    first = {"run": True}

    async def stuck_b(state: dict[str, Any]) -> dict[str, Any]:
        if not first["run"]:
            entered.set()
            await never.wait()
        return {"value": "B", "log": ["ran B"]}

    g = _rebuild(engine, ns, stuck_b)
    cfg = ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    first["run"] = False
    widget, front = await open_widget(g, cfg)
    fork = await fresh_fork(front, ids(widget)[2])
    count = len(ids(widget))

    await front.result("rerun", checkpoint_id=fork)
    await asyncio.wait_for(entered.wait(), WAIT)
    assert await front.result("stop") == {"stopped": True}
    await until(lambda: not widget._running, "the stop")
    assert widget._status == "wrote 0 checkpoints from step 2; stopped"
    assert len(ids(widget)) == count
    assert await front.result("stop") == {"stopped": False}


async def test_a_failing_node_shows_in_error_and_in_the_dag(engine):
    """Notebook 02: c raises. Rerun from step 0 in the widget: a and b run on a new branch, c fails,
    the error shows, and the checkpoint before c carries it in the DAG."""
    ns = load(engine, "resume")
    g, cfg = ns["g"], ns["cfg"]
    with pytest.raises(RuntimeError, match="c is broken"):
        await g.ainvoke({"log": []}, cfg)
    widget, front = await open_widget(g, cfg)
    step0 = next(n["id"] for n in widget.dag["nodes"] if n["step"] == 0)
    await front.select(step0)

    before = await saved(g, cfg)
    await front.result("rerun", checkpoint_id=step0)
    await until(lambda: not widget._running, "the rerun to fail")

    assert "node 'c' raised RuntimeError: c is broken" in widget._error
    written = len(await saved(g, cfg)) - len(before)
    assert written >= 2  # a and b again (LangGraph first copies step 0 as a fork)
    assert widget._status == f"wrote {written} checkpoints from step 0; failed"
    head = widget._selected
    assert node(widget, head)["errors"] == 1 and node(widget, head)["next"] == ["c"]
    assert widget._detail["tasks"][0]["error"]
    assert head not in {step0} and node(widget, head)["lane"] == 1  # a new branch

    ns["broken"]["c"] = False
    await front.result("rerun", checkpoint_id=head)
    await until(lambda: not widget._running, "the second rerun")
    assert widget._error == "" and widget._status.endswith("done")
    assert widget._detail["values"] == {"log": ["a", "b", "c"]}


async def test_rerun_of_a_finished_checkpoint_is_refused(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    error = await front.error("rerun", checkpoint_id=ids(widget)[-1])
    assert "nothing left to run" in error and widget._running is False


# --- resume ------------------------------------------------------------------------------------


async def test_resume_answers_parallel_interrupts_by_id(engine):
    """Notebook 07 (b): three Send reviews interrupt; one resume answers all three by id."""
    ns = load(engine, "reviews")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"], "approvals": []}, cfg)
    widget, front = await open_widget(g, cfg)
    paused = max(ids(widget))
    assert node(widget, paused)["interrupts"] == 3
    detail = await front.select(paused)
    by_item = {i["value"]["review_item"]: i["id"] for i in detail["interrupts"]}
    assert sorted(by_item) == ["doc-X", "doc-Y", "doc-Z"] and len(set(by_item.values())) == 3
    answers = {i: '"REJECT"' if item == "doc-Y" else '"APPROVE"' for item, i in by_item.items()}

    started = await front.result("resume", checkpoint_id=paused, answers=answers)
    await until(lambda: not widget._running, "the resume to end")

    final = await g.aget_state(cfg)
    assert sorted(final.values["approvals"]) == ["doc-X=APPROVE", "doc-Y=REJECT", "doc-Z=APPROVE"]
    assert widget._detail["values"]["approvals"] == final.values["approvals"]
    assert widget._status.endswith("done") and widget._error == ""
    assert started["code"].startswith("await graph.ainvoke(Command(resume={")
    assert f"{by_item['doc-Y']!r}: 'REJECT'" in started["code"]
    assert widget._code[-1]["action"] == "resume"


async def test_resume_with_an_unknown_or_invalid_answer_writes_nothing(engine):
    ns = load(engine, "reviews")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"items": ["doc-X", "doc-Y"], "approvals": []}, cfg)
    widget, front = await open_widget(g, cfg)
    paused = max(ids(widget))
    pending = [i["id"] for i in (await front.select(paused))["interrupts"]]
    before = store(g)

    error = await front.error("resume", checkpoint_id=paused, answers={"not-an-id": '"yes"'})
    assert "Interrupt 'not-an-id' is not pending" in error
    assert all(i in error for i in pending)  # it lists the ids that are
    error = await front.error("resume", checkpoint_id=paused, answers={pending[0]: "yes"})
    assert f"The answer to interrupt {pending[0]!r} is not valid JSON" in error
    error = await front.error("resume", checkpoint_id=paused, answers={})
    assert "(none given)" in error
    assert store(g) == before and widget._running is False and widget._code == []


async def test_interrupted_run_reports_where_it_paused(engine):
    """Notebook 08: rerun from the input checkpoint stops at gate; the status says so."""
    ns = load(engine, "rerun_rule")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"prep": "", "decision": ""}, cfg)
    widget, front = await open_widget(g, cfg)
    after_prepare = max(ids(widget))
    assert node(widget, after_prepare)["interrupts"] == 1
    before = await saved(g, cfg)
    await front.result("rerun", checkpoint_id=after_prepare)
    await until(lambda: not widget._running, "the rerun")
    written = len(await saved(g, cfg)) - len(before)  # 0; LangGraph copies it first (1)
    plural = "" if written == 1 else "s"
    assert widget._status == (
        f"wrote {written} checkpoint{plural} from step 1; interrupted at gate (1 pending)"
    )
    assert widget._detail["interrupts"][0]["value"] == {"ask": "ok?", "prep": "expensive"}


# --- other requests ----------------------------------------------------------------------------


async def test_refresh_rereads_a_thread_that_ran_elsewhere(accumulate):
    g, cfg = accumulate["g"], accumulate["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    widget, front = await open_widget(g, cfg)
    await front.select(ids(widget)[1])
    await g.ainvoke({"value": "again", "log": []}, cfg)  # in another cell, say
    assert len(ids(widget)) == 4
    assert await front.result("refresh") == {}
    assert len(ids(widget)) == 8


def test_the_protocol_doc_lists_every_request_the_widget_answers() -> None:
    from durable_debug.widget import REQUESTS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "widget-protocol.md").read_text()
    table = doc.split("\n## Requests", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == list(REQUESTS)


async def test_unknown_requests_and_missing_fields_are_refused_in_one_sentence(accumulate):
    ns = await ran(accumulate)
    _, front = await open_widget(ns["g"], ns["cfg"])
    refused = await front.error("teleport")
    assert "Unknown request 'teleport'" in refused
    assert (
        "answers select, value, diff, fork, preview, rerun, resume, stop, refresh, threads"
        in refused
    )
    assert "needs 'checkpoint_id'" in await front.error("select")
    assert "needs 'b'" in await front.error("diff", a="x")


def test_a_widget_in_a_plain_script_answers_on_the_background_loop(accumulate):
    """No event loop runs in this thread: reads and requests go to durable_debug's loop."""
    ns = accumulate
    asyncio.run(ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"]))
    widget = TimeTravel(ns["g"], ns["cfg"])
    front = FrontEnd(widget)
    deadline = time.monotonic() + WAIT
    while len(widget.dag["nodes"]) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(widget.dag["nodes"]) == 4
    content = {"uuid": "u1", "kind": "select", "checkpoint_id": ids(widget)[2]}
    widget._handle_msg(
        {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
    )
    while "u1" not in front.answers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert front.answers()["u1"]["result"] == {"checkpoint_id": ids(widget)[2]}
    assert front.updates("_detail")[-1]["values"] == {"value": "A", "log": ["ran A"]}


def test_importing_durable_debug_leaves_the_widget_stack_unloaded_until_asked():
    """``import durable_debug`` stays light; ``durable_debug.TimeTravel`` loads the widget."""
    script = (
        "import sys, durable_debug\n"
        "heavy = ('anywidget', 'ipywidgets', 'pandas')\n"
        "before = [m for m in heavy if m in sys.modules]\n"
        "widget = durable_debug.TimeTravel\n"
        "print(before, [m for m in heavy if m in sys.modules], widget.__module__)\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert (
        ran.stdout.strip() == "[] ['anywidget', 'ipywidgets'] durable_debug.widget"
    )  # pandas: lazy


def test_a_config_without_a_thread_is_refused_at_once(accumulate):
    with pytest.raises(ValueError, match="needs a config naming the thread"):
        TimeTravel(accumulate["g"], {"configurable": {}})


@asynccontextmanager
async def sqlite_saver(engine: str, path: Path) -> AsyncIterator[Any]:
    """The engine's own SQLite saver on ``path``."""
    if engine == "langgraph":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            yield saver
    else:
        from durable_debug import SqliteSaver

        async with SqliteSaver.from_conn_string(str(path)) as saver:
            yield saver


async def test_on_a_sqlite_file_a_fork_adds_one_row_and_a_refused_one_none(engine, tmp_path):
    """Any saver: each engine's SQLite saver, counted in the database file itself."""
    ns = load(engine, "accumulate")
    database = tmp_path / "threads.db"

    def rows() -> dict[str, int]:
        """Rows per table of the file."""
        with closing(sqlite3.connect(database)) as db:
            tables = [t for (t,) in db.execute("select name from sqlite_master where type='table'")]
            return {t: db.execute(f'select count(*) from "{t}"').fetchone()[0] for t in tables}

    async with sqlite_saver(engine, database) as saver:
        g = _rebuild(engine, ns, ns["step_b"], saver)
        await g.ainvoke({"value": "", "log": []}, ns["cfg"])
        widget, front = await open_widget(g, ns["cfg"])
        after_a = ids(widget)[2]
        before = rows()

        await front.error("fork", checkpoint_id=after_a, edits={"value": str(2**70)})
        await front.error("fork", checkpoint_id=after_a, edits={"nope": "1"})
        assert rows() == before

        fork = await fresh_fork(front, after_a)
        assert rows()["checkpoints"] == before["checkpoints"] + 1
        await front.result("rerun", checkpoint_id=fork)
        await until(lambda: not widget._running, "the rerun")
        assert rows()["checkpoints"] == before["checkpoints"] + 2
        assert widget._status.endswith("done")
        assert widget._detail["values"] == {"value": "B", "log": ["ran A", "ran B"]}


# --- the magics show it --------------------------------------------------------------------------


async def test_a_graph_cell_shows_the_widget_with_its_counts(engine):
    """What ``%%graph`` displays after a cell: the counts, then TimeTravel with those counts."""
    ns = load(engine, "rerun_rule")
    shown: list[Any] = []
    session = GraphSession(ns, shown.append)
    async with session.cell(CellOptions()):
        await ns["g"].ainvoke({"prep": "", "decision": ""}, ns["cfg"])
        await ns["g"].ainvoke(_command(engine)(resume="APPROVED"), ns["cfg"])
    counts, widget = shown
    assert counts.summary.tolist() == ["prepare 1", "gate 2 (re-ran 1×)"]
    assert isinstance(widget, TimeTravel) and widget._thread_id == "hitl-1"
    await widget.aready()
    topology = {n["id"]: (n["count"], n["reruns"]) for n in widget._topology["nodes"]}
    assert topology["prepare"] == (1, 0) and topology["gate"] == (2, 1)
    assert (
        max(ids(widget))
        == (await ns["g"].aget_state(ns["cfg"])).config["configurable"]["checkpoint_id"]
    )


async def fresh_fork(front: FrontEnd, checkpoint_id: str) -> str:
    """A fork of ``checkpoint_id`` through the widget: a checkpoint whose next task has not run
    yet (rerunning a checkpoint whose task already saved writes may reuse them)."""
    fork = await front.result("fork", checkpoint_id=checkpoint_id, edits={"value": '"forked"'})
    return str(fork["checkpoint_id"])


def _command(engine: str) -> Any:
    if engine == "langgraph":
        from langgraph.types import Command
    else:
        from durable_debug import Command
    return Command


def _rebuild(engine: str, ns: dict[str, Any], b: Any, saver: Any = None) -> Any:
    """Notebook 01's graph with node b replaced (same engine; a fresh MemorySaver by default)."""
    builder = ns["StateGraph"](ns["State"])
    builder.add_node("a", ns["step_a"]).add_node("b", b)
    builder.add_edge(ns["START"], "a").add_edge("a", "b").add_edge("b", ns["END"])
    return builder.compile(checkpointer=saver if saver is not None else ns["MemorySaver"]())


# --- how a run ends (hostile names; a run that ended before the widget looked) ----------


async def test_the_update_that_ends_a_run_carries_status_and_running_together(accumulate):
    """The browser never sees a final status while "running" is still on (or the reverse)."""
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    fork = await fresh_fork(front, ids(widget)[2])
    await front.result("rerun", checkpoint_id=fork)
    await until(lambda: not widget._running, "the rerun to end")
    ends = [
        m["state"]
        for m in front.sent
        if m.get("method") == "update" and m["state"].get("_running") is False
    ]
    assert [(end["_running"], end.get("_status")) for end in ends] == [(False, widget._status)]
    assert widget._status == "wrote 1 checkpoint from step 2; done"


async def test_an_error_while_finishing_a_run_still_clears_running(accumulate, monkeypatch):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    fork = await fresh_fork(front, ids(widget)[2])

    async def broken_detail(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError("the saver went away")

    monkeypatch.setattr("durable_debug.widget.acheckpoint_detail", broken_detail)
    await front.result("rerun", checkpoint_id=fork)
    await until(lambda: not widget._running, "the rerun to end")
    assert "running" not in widget._status
    assert widget._status == "run from step 2 done; where it ended could not be read"
    assert widget._error == (
        "The widget could not read where the run ended: OSError: the saver went away"
    )
    assert front.updates("_running") == [True, False]


async def test_a_run_stopped_before_its_first_step_clears_running(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    fork = await fresh_fork(front, ids(widget)[2])
    # No await between the two: the run's task is cancelled before it ever starts.
    await widget._do_rerun({"kind": "rerun", "checkpoint_id": fork})
    assert await widget._do_stop({"kind": "stop"}) == {"stopped": True}
    await until(lambda: not widget._running, "the stopped run to end")
    assert widget._status == "wrote 0 checkpoints from step 2; stopped"
    await front.result("rerun", checkpoint_id=fork)  # and the widget takes a new run
    await until(lambda: not widget._running, "the next rerun to end")
    assert widget._status.endswith("done")


HOSTILE_NODES = (
    '<<TABLE HREF="javascript&#58;alert(1)"><TR><TD>click me</TD></TR></TABLE>>',
    "</script><script>alert(1)</script>",
)


async def test_hostile_node_names_are_drawn_as_text_and_a_rerun_ends(engine):
    """Such names made `dot` fail and left the widget "running" forever."""
    import xml.etree.ElementTree as ET

    from durable_debug.inspect.names import short_name

    ns = load(engine, "accumulate")
    first, second = HOSTILE_NODES
    builder = ns["StateGraph"](ns["State"])
    builder.add_node(first, ns["step_a"]).add_node(second, ns["step_b"])
    builder.add_edge(ns["START"], first).add_edge(first, second).add_edge(second, ns["END"])
    g, cfg = builder.compile(checkpointer=ns["MemorySaver"]()), ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    widget, front = await open_widget(g, cfg)
    fork = await fresh_fork(front, ids(widget)[2])
    await front.result("rerun", checkpoint_id=fork)
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._status == "wrote 1 checkpoint from step 2; done" and widget._error == ""
    assert {n["id"] for n in widget._topology["nodes"]} >= set(HOSTILE_NODES)
    svg = widget._topology["svg"]
    if svg is not None:  # graphviz drew it: each name is one text, nothing else is active
        root = ET.fromstring(svg)
        texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
        # each drawn as its text, a long one cut with an ellipsis (inspect.names.short_name)
        assert short_name(first) in texts and short_name(second) in texts
        assert "<a" not in svg and "script>" not in svg.replace("&lt;/script&gt;", "")


# --- big values travel cut, whole on request ---------------------------------


async def test_a_click_on_a_big_state_sends_it_cut_once_and_show_all_sends_it_whole(engine):
    """A 2 MB string and a 10,000-item list: the click sends well under 64 KB, once."""
    import json

    ns = load(engine, "accumulate")
    big, items = "x" * 2_000_000, [f"item {i}" for i in range(10_000)]
    await ns["g"].ainvoke({"value": big, "log": items}, ns["cfg"])
    widget, front = await open_widget(ns["g"], ns["cfg"])
    last = ids(widget)[1]  # step 0: the input applied, before a and b overwrite value
    before = len(front.sent)
    detail = await front.select(last)
    sent = len(json.dumps(front.sent[before:]))
    assert sent < 64_000, sent
    assert sorted(detail["clipped"]) == ["log", "value"]
    assert detail["values"]["value"].endswith("… (2,000,000 characters)")
    assert len(detail["values"]["log"]) < 200 and detail["values"]["log"][-1].endswith("more items")

    whole = await front.result("value", checkpoint_id=last, channel="value")
    assert whole == {"checkpoint_id": last, "channel": "value", "value": big}
    log = await front.result("value", checkpoint_id=last, channel="log")
    assert log["value"] == items
    error = await front.error("value", checkpoint_id=last, channel="nope")
    assert "has no value for channel 'nope'" in error and "demo-1" in error


# --- live: runs started anywhere show while the widget is shown ---------------


async def test_watch_shows_a_run_from_a_cell_and_one_from_another_process(tmp_path):
    """The front end's periodic ``watch``: nothing read when nothing changed; a run elsewhere
    (a cell on this loop, another process on the same SQLite file) appears without a refresh."""
    from support.seed_graphs import source

    database = tmp_path / "live.db"
    text = "from durable_debug import SqliteSaver\n" + source("durable_debug", "accumulate")
    text = text.replace("MemorySaver()", f"SqliteSaver({str(database)!r})")
    ns: dict[str, Any] = {"__name__": "seed_live"}
    exec(compile(text, "live", "exec", dont_inherit=True), ns)
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"value": "", "log": []}, cfg)
    widget, front = await open_widget(g, cfg)
    assert len(ids(widget)) == 4
    reads = widget._reader.reads
    assert await front.result("watch") == {"changed": False}
    assert widget._reader.reads == reads  # nothing new: the thread is not read again

    base = widget._dag
    await g.ainvoke({"value": "", "log": []}, cfg)  # a cell, not the widget
    assert await front.result("watch") == {"changed": True}
    assert len(ids(widget)) == 8
    # only what was new travels: the tree sent before, and a tail from the newest seen on
    assert widget._dag is base and widget._dag_tail["start"] == 3
    assert unpack_wire(widget._dag_tail)["id"] == sorted(ids(widget))[3:]
    assert isinstance(widget._dag["packed"], bytes)  # one binary buffer on the wire
    assert widget.dag == dag_data_of(await aread_thread(g, cfg))

    script = text + "import asyncio\nasyncio.run(g.ainvoke({'value': '', 'log': []}, cfg))\n"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", script], env=env, check=True, capture_output=True
    )
    assert await front.result("watch") == {"changed": True}
    assert len(ids(widget)) == 12 and widget._reader.last_read < 12  # only what was new
    assert widget._dag is base and widget._dag_tail["start"] == 3  # the tail grows
    assert widget.dag == dag_data_of(await aread_thread(g, cfg))
    await front.result("refresh")  # the Refresh button: the whole tree again, no tail
    assert widget._dag is not base and widget._dag_tail == {}
    assert widget.dag == dag_data_of(await aread_thread(g, cfg))


async def test_watch_on_a_memory_saver_sees_a_cell_run(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    assert await front.result("watch") == {"changed": False}
    await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    assert await front.result("watch") == {"changed": True}
    assert len(ids(widget)) == 8


async def test_a_run_shows_its_checkpoints_while_a_slow_node_still_runs(engine):
    """Rerun from the input: a's checkpoint shows while b is still running, not at the end."""
    ns = load(engine, "accumulate")
    release = asyncio.Event()
    release.set()

    async def slow_b(state: Any) -> Any:
        await release.wait()
        return {"value": "B", "log": ["ran B"]}

    g = _rebuild(engine, ns, slow_b)
    await g.ainvoke({"value": "", "log": []}, ns["cfg"])
    widget, front = await open_widget(g, ns["cfg"])
    old = set(ids(widget))
    first_step = next(n for n in widget.dag["nodes"] if n["step"] == 0)["id"]
    release.clear()
    await front.result("rerun", checkpoint_id=first_step)

    def new() -> list[list[str]]:
        return [n["writers"] for n in widget.dag["nodes"] if n["id"] not in old]

    deadline = time.monotonic() + WAIT
    while ["a"] not in new() and time.monotonic() < deadline:
        await front.result("watch")  # what a shown view sends every 2 s
        await asyncio.sleep(0.01)
    assert ["a"] in new() and ["b"] not in new() and widget._running  # b still runs
    release.set()
    await until(lambda: not widget._running, "the end of the run")
    assert ["b"] in new()


# --- reducer-aware editing ----------------------------------------------------


async def test_a_reducer_channel_says_so_and_the_user_picks_append_or_replace(accumulate):
    """``log`` is an ``operator.add`` list: editing it to ["planned"] appends by default (as
    the engine does), and "replace" writes exactly ["planned"] through ``Overwrite``; the
    preview shows each result before the fork, and the code says which it did."""
    ns = await ran(accumulate)
    g, cfg = ns["g"], ns["cfg"]
    widget, front = await open_widget(g, cfg)
    after_b = ids(widget)[3]
    detail = await front.select(after_b)
    assert detail["reducers"] == {"log": "operator.add"}
    assert detail["values"]["log"] == ["ran A", "ran B"]

    appended = await front.result(
        "preview", checkpoint_id=after_b, channel="log", text='["planned"]', modes={"log": "append"}
    )
    assert appended["value"] == ["ran A", "ran B", "planned"]
    replaced = await front.result(
        "preview",
        checkpoint_id=after_b,
        channel="log",
        text='["planned"]',
        modes={"log": "replace"},
    )
    assert replaced["value"] == ["planned"]

    forked = await front.result(
        "fork", checkpoint_id=after_b, edits={"log": '["planned"]'}, modes={"log": "replace"}
    )
    state = await g.aget_state(
        {"configurable": {**cfg["configurable"], **{"checkpoint_id": forked["checkpoint_id"]}}}
    )
    assert state.values["log"] == ["planned"]
    assert "Overwrite(['planned'])" in forked["code"]
    assert (
        "# 'log' has a reducer (operator.add): the value is replaced (Overwrite)"
        in (forked["code"])
    )

    through = await front.result(
        "fork", checkpoint_id=after_b, edits={"log": '["planned"]'}, modes={"log": "append"}
    )
    state = await g.aget_state(
        {"configurable": {**cfg["configurable"], **{"checkpoint_id": through["checkpoint_id"]}}}
    )
    assert state.values["log"] == ["ran A", "ran B", "planned"]
    assert (
        "appended through it" in through["code"]
        and "Overwrite" not in through["code"].split("\n")[-1]
    )

    error = await front.error(
        "fork", checkpoint_id=after_b, edits={"log": "[]"}, modes={"log": "merge"}
    )
    assert "mode 'merge' is neither" in error and "'log'" in error


async def test_the_replace_code_replays_the_same_state(accumulate, engine):
    """The generated code with ``Overwrite`` is real Python on each engine."""
    ns = await ran(accumulate)
    g, cfg = ns["g"], ns["cfg"]
    widget, front = await open_widget(g, cfg)
    after_b = ids(widget)[3]
    forked = await front.result(
        "fork", checkpoint_id=after_b, edits={"log": '["x"]'}, modes={"log": "replace"}
    )
    if engine == "langgraph":
        from langgraph.types import Overwrite
    else:
        from durable_debug import Overwrite
    namespace = {"graph": g, "Overwrite": Overwrite}
    line = forked["code"].split("\n")[-1]
    exec(compile(f"async def replay():\n    return {line}", "code", "exec"), namespace)
    again = await namespace["replay"]()
    assert (await g.aget_state(again)).values["log"] == ["x"]


async def test_the_code_calls_the_graph_by_the_users_variable_name(engine):
    """Made from a ``%%graph`` cell whose graph is ``support_bot``, the code says so; a
    widget made with ``graph_name`` uses that; made anywhere else, ``graph``."""
    ns = load(engine, "accumulate")
    namespace = {"support_bot": ns["g"], "cfg": ns["cfg"], "_": ns["g"]}
    shown: list[Any] = []
    session = GraphSession(namespace, shown.append)
    async with session.cell(CellOptions()):
        await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    _, widget = shown
    front = FrontEnd(widget)
    await widget.aready()
    after_a = ids(widget)[2]
    forked = await front.result("fork", checkpoint_id=after_a, edits={"value": '"x"'})
    assert forked["code"].startswith("await support_bot.aupdate_state(")
    rerun = await front.result("rerun", checkpoint_id=forked["checkpoint_id"])
    assert rerun["code"].startswith("await support_bot.ainvoke(None, ")
    await until(lambda: not widget._running, "the rerun")
    assert widget.code.count("support_bot.") == 2

    named, _ = await open_widget(ns["g"], ns["cfg"], graph_name="app")
    assert named.graph_name == "app"
    plain, _ = await open_widget(ns["g"], ns["cfg"])
    assert plain.graph_name == "graph"


# --- every thread of a store --------------------------------------------------


async def test_the_thread_list_is_newest_first_and_switching_shows_that_thread(engine, tmp_path):
    ns = load(engine, "accumulate")
    async with sqlite_saver(engine, tmp_path / "threads.db") as saver:
        g = _rebuild(engine, ns, ns["step_b"], saver)
        for thread in ("old", "middle", "new"):
            await g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": thread}})
        await g.aupdate_state({"configurable": {"thread_id": "middle"}}, {"value": "edited"})
        widget, front = await open_widget(g, {"configurable": {"thread_id": "old"}})
        if engine == "langgraph":  # LangGraph's savers have no thread listing
            assert "cannot list its threads" in await front.error("threads")
        else:
            listed = (await front.result("threads"))["threads"]
            assert [t["thread_id"] for t in listed] == ["middle", "new", "old"]  # newest first
            assert [t["current"] for t in listed] == [False, False, True]
            assert listed[1]["checkpoints"] == 4 and listed[1]["status"] == "done"
            assert listed[0]["checkpoints"] == 5

        await front.select(ids(widget)[2])
        assert await front.result("thread", thread_id="middle") == {"thread_id": "middle"}
        assert widget._thread_id == "middle" and len(ids(widget)) == 5
        assert widget._selected == "" and widget._detail is None
        detail = await front.select(max(ids(widget)))
        assert detail["values"]["value"] == "edited"

        error = await front.error("thread", thread_id="nope")
        assert "no thread 'nope'" in error and widget._thread_id == "middle"


async def test_breakpoints_pause_a_rerun_before_and_after_the_chosen_nodes(accumulate):
    """Pause before b: the rerun from the input stops with b next; the code says so."""
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    assert await front.result("breakpoints", before=["b"], after=[]) == {
        "before": ["b"],
        "after": [],
    }
    assert widget._breakpoints == {"before": ["b"], "after": []}
    start = next(n for n in widget.dag["nodes"] if n["step"] == 0)["id"]
    run = await front.result("rerun", checkpoint_id=start)
    assert run["code"].endswith(", interrupt_before=['b'])")
    await until(lambda: not widget._running, "the rerun")
    state = await ns["g"].aget_state(ns["cfg"])
    assert state.next == ("b",) and state.values["value"] == "A"

    await front.result("breakpoints", before=[], after=["a"])
    run = await front.result("rerun", checkpoint_id=start)
    await until(lambda: not widget._running, "the rerun")
    assert (await ns["g"].aget_state(ns["cfg"])).next == ("b",)
    assert run["code"].endswith(", interrupt_after=['a'])")

    error = await front.error("breakpoints", before=["nope"])
    assert "no node 'nope'" in error and "a, b" in error


async def test_a_new_run_from_the_widget_with_a_typed_input(accumulate):
    """The input form: a JSON object of the state's keys starts a new run of the thread."""
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    before = len(ids(widget))
    run = await front.result("run", text='{"value": "", "log": ["again"]}')
    assert run["code"].startswith(
        "await graph.ainvoke({'value': '', 'log': ['again']}, {'configurable': "
        "{'thread_id': 'demo-1', 'checkpoint_ns': ''}})"
    )
    await until(lambda: not widget._running, "the run")
    assert widget._status.endswith("done") and len(ids(widget)) == before + 4
    state = await ns["g"].aget_state(ns["cfg"])
    assert state.values["log"] == ["ran A", "ran B", "again", "ran A", "ran B"]

    assert "no key 'nope'" in await front.error("run", text='{"nope": 1}')
    assert "JSON object" in await front.error("run", text="[1, 2]")
    assert len(ids(widget)) == before + 4


async def test_a_fork_while_a_run_holds_the_thread_is_refused_naming_the_holder():
    """One writer per thread: the widget's fork goes through update_state, so it
    waits for no one and writes nothing while a run holds the thread."""
    import socket
    from typing import TypedDict

    from durable_debug import START, MemorySaver, StateGraph

    class Gate(TypedDict):
        value: str

    entered, release = asyncio.Event(), asyncio.Event()

    async def hold(state: Gate) -> dict[str, str]:
        entered.set()
        await release.wait()
        return {"value": state["value"] + "!"}

    g = StateGraph(Gate).add_node("hold", hold).add_edge(START, "hold")
    graph = g.compile(checkpointer=MemorySaver(), interrupt_before=["hold"])
    cfg = {"configurable": {"thread_id": "w"}}
    await graph.ainvoke({"value": "x"}, cfg)
    widget, front = await open_widget(graph, cfg)
    paused = ids(widget)[-1]
    before = await saved(graph, cfg)

    running = asyncio.ensure_future(graph.ainvoke(None, cfg))
    await entered.wait()
    error = await front.error("fork", checkpoint_id=paused, edits={"value": '"y"'})
    release.set()
    await running

    assert error.startswith(
        "The fork was refused, nothing was written: ThreadBusyError: thread 'w' is busy: "
        f"another run holds it (holder {socket.gethostname()}:{os.getpid()}, since "
    ), error
    after = await saved(graph, cfg)
    assert len(after) == len(before) + 1  # only the run's own checkpoint


# --- the store's health -------------------------------------------------------


async def test_the_health_panel_reports_the_store_without_holding_the_loop(engine, monkeypatch):
    """The front end's `health` request: every table of inspect.health as rows of cells,
    computed in a worker thread (the loop answers meanwhile); a store that cannot list its
    threads (LangGraph's) gets a sentence saying what to do instead."""
    import threading

    health_module = sys.modules["durable_debug.inspect.health"]  # the name is also a function

    ns = load(engine, "reviews")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"items": ["doc-X", "doc-Y"], "approvals": []}, cfg)
    widget, front = await open_widget(g, cfg)
    if engine == "langgraph":
        error = await front.error("health")
        assert "cannot list its threads" in error and "durable-debug health" in error
        return

    entered, released = threading.Event(), threading.Event()
    where: list[threading.Thread] = []
    real = health_module.health

    def held(*args: Any, **kwargs: Any) -> Any:
        where.append(threading.current_thread())
        entered.set()
        released.wait(WAIT)  # on the loop's thread this would hold the test below for WAIT
        return real(*args, **kwargs)

    monkeypatch.setattr(health_module, "health", held)
    asking = asyncio.ensure_future(front.request("health", sla_s=0))
    await until(entered.is_set, "the health report to start")
    assert where[0] is not threading.current_thread()  # not the loop's thread
    refresh = await front.request("refresh")  # the loop answers while health is computed
    assert refresh == {"uuid": refresh["uuid"], "result": {}} and not asking.done()
    released.set()
    reply = (await asking)["result"]

    assert reply["sla_s"] == 0
    tables = {t["name"]: t for t in reply["tables"]}
    assert tuple(tables) == health_module.HEALTH_TABLES  # every table, in the CLI's order
    waiting = tables["waiting"]
    assert waiting["columns"] == ["thread_id", "checkpoint_id", "interrupts", "since", "waiting_s"]
    [row] = waiting["rows"]
    assert row[:3] == [cfg["configurable"]["thread_id"], max(ids(widget)), 2]
    assert isinstance(row[3], str) and row[3][:4].isdigit()  # a time travels as ISO text
    size = dict(zip(tables["size"]["columns"], tables["size"]["rows"][0], strict=True))
    assert size["threads"] == 1 and size["checkpoints"] == len(ids(widget))
    assert size["file_bytes"] is None  # a memory store has no file: null, never NaN
    latency = dict(zip(tables["latency"]["columns"], tables["latency"]["rows"][0], strict=True))
    assert latency["samples"] >= 1 and isinstance(latency["p95_ms"], float)

    error = await front.error("health", sla_s="soon")
    assert "sla_s must be a number of seconds" in error and "'soon'" in error
    assert "from 0 to" in await front.error("health", sla_s=float("inf"))


async def test_the_health_of_a_sqlite_file_counts_its_bytes(engine, tmp_path):
    """On a real SQLite file the size table carries the file's bytes; LangGraph's SQLite saver,
    which cannot list threads, is refused with a sentence and nothing drawn empty."""
    ns = load(engine, "accumulate")
    database = tmp_path / "health.db"
    async with sqlite_saver(engine, database) as saver:
        g = _rebuild(engine, ns, ns["step_b"], saver)
        for thread in ("one", "two"):
            await g.ainvoke({"value": "", "log": []}, {"configurable": {"thread_id": thread}})
        widget, front = await open_widget(g, {"configurable": {"thread_id": "one"}})
        if engine == "langgraph":
            assert "AsyncSqliteSaver) cannot list its threads" in await front.error("health")
            return
        reply = await front.result("health")
        assert reply["sla_s"] == 3600
        tables = {t["name"]: t for t in reply["tables"]}
        size = dict(zip(tables["size"]["columns"], tables["size"]["rows"][0], strict=True))
        assert size["threads"] == 2 and size["checkpoints"] == 2 * len(ids(widget))
        on_disk = sum(p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith("health"))
        assert 0 < size["file_bytes"] <= on_disk
        assert [row[0] for row in tables["largest"]["rows"]] == ["one", "two"]
        assert tables["waiting"]["rows"] == []


# --- subgraph namespaces ------------------------------------------------------------


class Doc(TypedDict):
    """The review graph's state (module level: the schema's hints are resolved by name)."""

    draft: str
    log: Annotated[list, operator.add]


def review_app() -> Any:
    """A parent whose node ``review`` is a subgraph: write, then ask (which interrupts)."""

    def write(state: Doc) -> dict:
        return {"draft": "long draft", "log": ["write"]}

    def ask(state: Doc) -> dict:
        verdict = interrupt({"draft": state["draft"]})
        return {"draft": f"{state['draft']} [{verdict}]", "log": ["ask"]}

    review = StateGraph(Doc).add_node("write", write).add_node("ask", ask)
    review = review.add_edge("__start__", "write").add_edge("write", "ask").compile()
    builder = StateGraph(Doc).add_node("review", review).add_edge("__start__", "review")
    return builder.compile(checkpointer=MemorySaver())


async def test_a_subgraph_namespace_opens_under_its_task_and_forks_and_reruns_inside():
    graph, cfg = review_app(), {"configurable": {"thread_id": "sub-1"}}
    await graph.ainvoke({"draft": "", "log": []}, cfg)  # paused inside the subgraph
    widget, front = await open_widget(graph, cfg, graph_name="app")
    main_ids = set(ids(widget))
    assert all(n.get("checkpoint_ns", "") == "" for n in widget.dag["nodes"])

    listed = (await front.result("subgraphs"))["namespaces"]
    assert len(listed) == 1
    sub = listed[0]
    namespace = sub["checkpoint_ns"]
    assert sub["node"] == "review" and namespace.startswith("review:")
    assert sub["enclosing"] == "" and sub["parent"] in main_ids  # nested under the parent's task

    tree = await front.result("subgraph", checkpoint_ns=namespace)
    inner = sorted(tree["dag"]["nodes"], key=lambda n: n["id"])
    assert tree["checkpoint_ns"] == namespace and not {n["id"] for n in inner} & main_ids
    before_ask = next(n["id"] for n in inner if n["next"] == ["ask"])

    # Selecting one shows its own state, like any checkpoint.
    reply = await front.result("select", checkpoint_id=before_ask, checkpoint_ns=namespace)
    assert reply == {"checkpoint_id": before_ask}
    detail = front.updates("_detail")[-1]
    assert widget._selected == before_ask and widget._selected_ns == namespace
    assert detail["id"] == before_ask and detail["next"] == ["ask"]
    assert detail["values"]["draft"] == "long draft" and detail["blobs"]  # its blob versions
    assert detail["config"]["configurable"]["checkpoint_ns"] == namespace
    value = await front.result(
        "value", checkpoint_id=before_ask, checkpoint_ns=namespace, channel="draft"
    )
    assert value["value"] == "long draft"
    first = inner[0]["id"]
    changed = await front.result("diff", a=first, b=before_ask, checkpoint_ns=namespace)
    assert {entry["channel"] for entry in changed} >= {"draft", "log"}

    # Fork inside the namespace: the write lands there, the code names the namespace.
    fork = await front.result(
        "fork", checkpoint_id=before_ask, checkpoint_ns=namespace, edits={"draft": '"short draft"'}
    )
    assert fork["checkpoint_ns"] == namespace and repr(namespace) in fork["code"]
    assert fork["code"].startswith(
        "await app.aupdate_state({'configurable': {'thread_id': 'sub-1', 'checkpoint_ns': "
    )
    inside = await saved(
        graph, {"configurable": {"thread_id": "sub-1", "checkpoint_ns": namespace}}
    )
    assert fork["checkpoint_id"] in inside and fork["checkpoint_id"] not in set(ids(widget))
    assert widget._selected == fork["checkpoint_id"] and widget._selected_ns == namespace

    # Rerun from the fork runs the subgraph to its interrupt, with the forked draft.
    started = await front.result(
        "rerun", checkpoint_id=fork["checkpoint_id"], checkpoint_ns=namespace
    )
    assert repr(namespace) in started["code"]
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._error == "", widget._error
    assert "interrupted at ask" in widget._status, widget._status
    assert widget._selected_ns == namespace
    paused = widget._detail
    asked = paused["interrupts"]
    assert [item["value"] for item in asked] == [{"draft": "short draft"}]

    # Resume there, inside the namespace: the subgraph ends with the answer; the parent's
    # thread still waits on its own interrupt.
    resumed = await front.result(
        "resume",
        checkpoint_id=paused["id"],
        checkpoint_ns=namespace,
        answers={asked[0]["id"]: '"fine"'},
    )
    assert repr(namespace) in resumed["code"] and "Command(resume=" in resumed["code"]
    await until(lambda: not widget._running, "the resume to end")
    assert widget._error == "", widget._error
    assert widget._status.endswith("done"), widget._status
    assert widget._selected_ns == namespace
    assert widget._detail["values"]["draft"] == "short draft [fine]"
    parent = await graph.aget_state(cfg)
    assert parent.values["draft"] == "" and parent.next == ("review",)


async def test_a_subgraph_request_without_a_known_namespace_is_refused_in_one_sentence():
    graph, cfg = review_app(), {"configurable": {"thread_id": "sub-2"}}
    await graph.ainvoke({"draft": "", "log": []}, cfg)
    _, front = await open_widget(graph, cfg)
    assert "needs 'checkpoint_ns'" in await front.error("subgraph")
    unknown = await front.error("subgraph", checkpoint_ns="nowhere:1")
    assert "Namespace 'nowhere:1': node 'nowhere'" in unknown and "runs no subgraph" in unknown
    empty = await front.error("subgraph", checkpoint_ns="review:no-such-task")
    assert "no checkpoint in namespace 'review:no-such-task'" in empty
    assert "must be a string" in await front.error("select", checkpoint_id="x", checkpoint_ns=3)
