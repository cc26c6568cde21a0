"""TimeTravel driven the way its front end drives it: comm messages in, comm messages out.

Each test builds a seed graph, opens the widget on its thread and sends ``msg:custom`` requests
through the widget's comm entry point (``_handle_msg``, exactly what ipywidgets calls when the
front end's ``model.send`` arrives). Replies and trait updates are read from what the widget
sends on its comm. The assertions are about the saver's contents and what the user would see.
"""

from __future__ import annotations

import asyncio
import copy
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "inspect"))

from seed_graphs import ENGINES, load

from durable_debug import TimeTravel
from durable_debug.magics import CellOptions, GraphSession

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
    return sorted(node["id"] for node in widget._dag["nodes"])


def node(widget: TimeTravel, checkpoint_id: str) -> dict[str, Any]:
    """The DAG node the widget sent for a checkpoint."""
    return next(n for n in widget._dag["nodes"] if n["id"] == checkpoint_id)


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
    """Seed §1's graph (a → b) on the current engine, not run yet."""
    return load(engine, "accumulate")


async def ran(ns: dict[str, Any]) -> dict[str, Any]:
    """Run seed §1 once: checkpoints input, step 0 (next a), after a (next b), after b."""
    await ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"])
    return ns


# --- reading -----------------------------------------------------------------------------------


async def test_the_widget_opens_on_the_thread_dag_and_topology(accumulate):
    ns = await ran(accumulate)
    widget, _ = await open_widget(ns["g"], ns["cfg"])
    assert widget._thread_id == "demo-1"
    assert [n["step"] for n in sorted(widget._dag["nodes"], key=lambda n: n["id"])] == [-1, 0, 1, 2]
    assert {n["id"] for n in widget._topology["nodes"]} >= {"a", "b"}
    assert widget._selected == "" and widget._detail is None
    assert widget._readonly is False and widget._running is False
    assert repr(widget) == "<TimeTravel thread 'demo-1': 4 checkpoints>"


async def test_select_sets_selected_and_detail_then_replies(accumulate):
    ns = await ran(accumulate)
    widget, front = await open_widget(ns["g"], ns["cfg"])
    after_a = ids(widget)[2]
    detail = await front.result("select", checkpoint_id=after_a)
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
    assert widget._dag["lanes"] == 2
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
    await front.result("select", checkpoint_id=after_a)
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
    detail = await front.result("select", checkpoint_id=after_a)  # answered meanwhile
    assert detail["id"] == after_a
    error = await front.error("rerun", checkpoint_id=fork)
    assert "still going" in error
    release.set()
    await until(lambda: not widget._running, "the rerun to end")
    assert widget._status.endswith("done")


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
    """Seed §2: c raises. Rerun from step 0 in the widget: a and b run on a new branch, c fails,
    the error shows, and the checkpoint before c carries it in the DAG."""
    ns = load(engine, "resume")
    g, cfg = ns["g"], ns["cfg"]
    with pytest.raises(RuntimeError, match="c is broken"):
        await g.ainvoke({"log": []}, cfg)
    widget, front = await open_widget(g, cfg)
    step0 = next(n["id"] for n in widget._dag["nodes"] if n["step"] == 0)
    await front.result("select", checkpoint_id=step0)

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
    """Seed §7 (b): three Send reviews interrupt; one resume answers all three by id."""
    ns = load(engine, "reviews")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke({"items": ["doc-X", "doc-Y", "doc-Z"], "approvals": []}, cfg)
    widget, front = await open_widget(g, cfg)
    paused = max(ids(widget))
    assert node(widget, paused)["interrupts"] == 3
    detail = await front.result("select", checkpoint_id=paused)
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
    pending = [i["id"] for i in (await front.result("select", checkpoint_id=paused))["interrupts"]]
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
    """Seed §8: rerun from the input checkpoint stops at gate; the status says so."""
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
    await front.result("select", checkpoint_id=ids(widget)[1])
    await g.ainvoke({"value": "again", "log": []}, cfg)  # in another cell, say
    assert len(ids(widget)) == 4
    assert await front.result("refresh") == {}
    assert len(ids(widget)) == 8


async def test_unknown_requests_and_missing_fields_are_refused_in_one_sentence(accumulate):
    ns = await ran(accumulate)
    _, front = await open_widget(ns["g"], ns["cfg"])
    assert "Unknown request 'teleport'" in await front.error("teleport")
    assert "needs 'checkpoint_id'" in await front.error("select")
    assert "needs 'b'" in await front.error("diff", a="x")


def test_a_widget_in_a_plain_script_answers_on_the_background_loop(accumulate):
    """No event loop runs in this thread: reads and requests go to durable_debug's loop."""
    ns = accumulate
    asyncio.run(ns["g"].ainvoke({"value": "", "log": []}, ns["cfg"]))
    widget = TimeTravel(ns["g"], ns["cfg"])
    front = FrontEnd(widget)
    deadline = time.monotonic() + WAIT
    while len(widget._dag["nodes"]) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(widget._dag["nodes"]) == 4
    content = {"uuid": "u1", "kind": "select", "checkpoint_id": ids(widget)[2]}
    widget._handle_msg(
        {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
    )
    while "u1" not in front.answers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert front.answers()["u1"]["result"]["values"] == {"value": "A", "log": ["ran A"]}


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
    assert ran.stdout.strip() == "[] ['anywidget', 'ipywidgets', 'pandas'] durable_debug.widget"


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
    """Seed §1's graph with node b replaced (same engine; a fresh MemorySaver by default)."""
    builder = ns["StateGraph"](ns["State"])
    builder.add_node("a", ns["step_a"]).add_node("b", b)
    builder.add_edge(ns["START"], "a").add_edge("a", "b").add_edge("b", ns["END"])
    return builder.compile(checkpointer=saver if saver is not None else ns["MemorySaver"]())


async def test_a_fork_while_a_run_holds_the_thread_is_refused_naming_the_holder():
    """One writer per thread (issue 13): the widget's fork goes through update_state, so it
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
