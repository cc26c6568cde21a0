"""``durability="async"`` (the default): a step's save may still be on its way while the next
step runs, and nothing observable depends on it before it has landed (``graph/saving.py``).

The saver here is a memory saver whose step queue *lags*: it keeps each step put until the next
step is put or the queue is drained, as PostgreSQL's queue keeps the server's answer. It checks
every write against what has landed: a checkpoint's parent (and, in a subgraph, the enclosing
checkpoints it names) must be saved before it, and a task's writes after the checkpoint they
belong to. So a run that wrote out of order, or let a chunk out before its step was saved,
fails these tests without any timing.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from graph_support import LogState, cfg
from typing_extensions import TypedDict

from durable_debug import START, Command, MemorySaver, StateGraph, StreamWriter, interrupt, once
from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    StepQueue,
    TaskWrites,
    checkpoint_config,
    config_checkpoint_id,
    config_checkpoint_ns,
    config_thread_id,
)


class SaveFailed(RuntimeError):
    """What the lagging saver raises when told to fail a step."""


class LaggingQueue(StepQueue):
    """Keeps each step until the next is put (or the queue is drained), then saves it."""

    saver: LaggingSaver

    def __init__(self, saver: LaggingSaver) -> None:
        super().__init__(saver)
        self.held: list[tuple[Any, ...]] = []
        self.error: BaseException | None = None

    async def put(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self._land()
        self.held.append((config, task_writes, checkpoint, metadata, new_versions))
        return checkpoint_config(
            config_thread_id(config), config_checkpoint_ns(config), checkpoint["id"]
        )

    async def drain(self) -> None:
        try:
            await self._land()
        finally:
            error, self.error = self.error, None
        if error is not None:
            raise error

    async def _land(self) -> None:
        if self.error is not None:
            raise self.error
        while self.held:
            step = self.held.pop(0)
            if step[3]["step"] == self.saver.fail_at_step:
                self.held.clear()  # nothing after a failed step is saved
                self.error = SaveFailed(f"step {step[3]['step']} could not be saved")
                raise self.error
            self.saver.landing = True
            try:
                await self.saver.aput_step(*step)
            finally:
                self.saver.landing = False


class LaggingSaver(MemorySaver):
    """A memory saver whose runs' steps land late, checking that everything lands in order."""

    def __init__(self) -> None:
        super().__init__()
        self.queues: list[LaggingQueue] = []
        self.fail_at_step: int | None = None
        self.landing = False

    def step_queue(self) -> StepQueue:
        queue = LaggingQueue(self)
        self.queues.append(queue)
        return queue

    def held(self) -> int:
        """Steps put and not saved yet, over every run."""
        return sum(len(q.held) for q in self.queues)

    async def _saved(self, config: RunnableConfig, ns: str, checkpoint_id: str) -> bool:
        at = checkpoint_config(config_thread_id(config), ns, checkpoint_id)
        return await MemorySaver.aget_tuple(self, at) is not None

    async def aput_step(self, config, task_writes, checkpoint, metadata, new_versions):
        parent = config_checkpoint_id(config)
        ns = config_checkpoint_ns(config)
        assert parent is None or await self._saved(config, ns, parent), "parent not saved yet"
        for outer, checkpoint_id in (metadata.get("parents") or {}).items():
            assert await self._saved(config, outer, checkpoint_id), "enclosing step not saved"
        return await super().aput_step(config, task_writes, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):
        checkpoint_id = config_checkpoint_id(config)
        assert checkpoint_id is not None
        if not self.landing:  # a task's own write: every step put before it has landed
            assert self.held() == 0, f"{writes[0][0]} written while a step was still held"
        at = config_checkpoint_ns(config)
        assert await self._saved(config, at, checkpoint_id), "writes before their checkpoint"
        await super().aput_writes(config, writes, task_id, task_path)


def chain(saver: MemorySaver, nodes: int = 4) -> Any:
    builder = StateGraph(LogState)
    names = [f"n{i}" for i in range(nodes)]
    for name in names:
        builder.add_node(name, lambda s, name=name: {"log": [name]})
    builder.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        builder.add_edge(a, b)
    return builder.compile(checkpointer=saver)


def assert_no_gaps(saver: MemorySaver, thread: str) -> list[Any]:
    """Every checkpoint of the thread's history has its parent saved; returns the history."""
    history = list(chain(saver).get_state_history(cfg(thread)))
    ids = {s.config["configurable"]["checkpoint_id"] for s in history}
    for snapshot in history:
        if snapshot.parent_config is not None:
            assert snapshot.parent_config["configurable"]["checkpoint_id"] in ids
    return history


@pytest.mark.parametrize("durability", [None, "async"])
async def test_an_async_run_saves_every_step_and_returns_once_they_landed(durability):
    saver = LaggingSaver()
    options = {} if durability is None else {"durability": durability}
    out = await chain(saver).ainvoke({"value": "", "log": []}, cfg("t"), **options)
    assert out["log"] == ["n0", "n1", "n2", "n3"]
    assert saver.held() == 0  # returned once everything it put was saved
    assert len(assert_no_gaps(saver, "t")) == 6  # input, START, four nodes: as "sync"
    assert len(saver.queues) == 1


async def test_exit_durability_saves_the_last_checkpoint_once_without_a_queue():
    """As LangGraph: only the checkpoint the run ends on is saved, when it ends, as a root."""
    saver = LaggingSaver()
    out = await chain(saver).ainvoke({"value": "", "log": []}, cfg("t"), durability="exit")
    assert out["log"] == ["n0", "n1", "n2", "n3"]
    assert saver.held() == 0
    (last,) = assert_no_gaps(saver, "t")
    assert (last.metadata["step"], last.next, last.parent_config) == (4, (), None)
    assert saver.queues == []


async def test_sync_durability_awaits_each_step_without_a_queue():
    saver = LaggingSaver()
    await chain(saver).ainvoke({"value": "", "log": []}, cfg("t"), durability="sync")
    assert saver.queues == []
    assert len(assert_no_gaps(saver, "t")) == 6


MODES = ["values", "updates", "checkpoints", "tasks", "debug", "custom"]


@pytest.mark.parametrize("subgraphs", [False, True])
@pytest.mark.parametrize("mode", MODES)
async def test_every_chunk_comes_after_its_step_is_saved(mode, subgraphs):
    saver = LaggingSaver()

    def write(state: LogState, writer: StreamWriter) -> dict:
        writer({"at": len(state["log"])})
        return {"log": ["w"]}

    inner = StateGraph(LogState).add_node("s", write).add_edge(START, "s").compile()
    g = (
        StateGraph(LogState)
        .add_node("a", write)
        .add_node("sub", inner)
        .add_node("b", write)
        .add_edge(START, "a")
        .add_edge("a", "sub")
        .add_edge("sub", "b")
        .compile(checkpointer=saver)
    )
    chunks = 0
    async for _ in g.astream(
        {"value": "", "log": []}, cfg("s"), stream_mode=mode, subgraphs=subgraphs
    ):
        assert saver.held() == 0, "a chunk went out before its step was saved"
        chunks += 1
    assert chunks > 0
    assert_no_gaps(saver, "s")


def test_breaking_out_of_a_stream_after_the_first_chunk_loses_no_step():
    saver = LaggingSaver()
    g = chain(saver)
    for chunk in g.stream({"value": "", "log": []}, cfg("b")):
        assert chunk == {"n0": {"log": ["n0"]}}
        break
    assert saver.held() == 0
    snapshot = g.get_state(cfg("b"))
    assert snapshot.values["log"] == ["n0"]
    assert snapshot.next == ("n1",)
    # the thread was given back: the rest of the run resumes from there
    assert g.invoke(None, cfg("b"))["log"] == ["n0", "n1", "n2", "n3"]
    assert_no_gaps(saver, "b")


@pytest.mark.parametrize("fail_at", [0, 2])
async def test_a_failed_save_surfaces_and_nothing_after_it_is_saved(fail_at):
    saver = LaggingSaver()
    saver.fail_at_step = fail_at
    g = chain(saver)
    with pytest.raises(SaveFailed, match=f"step {fail_at} could not be saved"):
        await g.ainvoke({"value": "", "log": []}, cfg("f"))
    history = assert_no_gaps(saver, "f")
    assert max(s.metadata["step"] for s in history) == fail_at - 1
    assert saver.held() == 0
    saver.fail_at_step = None  # the store works again: the run resumes where the saves stopped
    assert (await g.ainvoke(None, cfg("f")))["log"] == ["n0", "n1", "n2", "n3"]
    assert len(assert_no_gaps(saver, "f")) == 6


async def test_a_failed_save_is_raised_rather_than_the_node_error_after_it():
    saver = LaggingSaver()
    saver.fail_at_step = 1

    def boom(state: LogState) -> dict:
        raise ValueError("boom")

    g = (
        StateGraph(LogState)
        .add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", boom)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )
    # step 1 (after "a") fails to save while "b" runs: b's error belongs on that checkpoint,
    # so it is not saved, and the save error is what the run raises
    with pytest.raises(SaveFailed):
        await g.ainvoke({"value": "", "log": []}, cfg("e"))
    history = assert_no_gaps(saver, "e")
    assert max(s.metadata["step"] for s in history) == 0
    assert all(not task.error for s in history for task in s.tasks)


class Approval(TypedDict):
    log: Annotated[list, operator.add]
    answer: str


async def test_interrupts_errors_once_and_resume_writes_follow_their_checkpoint():
    saver = LaggingSaver()
    effects: list[str] = []
    failures = {"flaky": 1}

    def effect(name: str) -> str:
        effects.append(name)
        return name

    def paid(state: Approval) -> dict:
        return {"log": [once(effect, "paid")]}

    def ask(state: Approval) -> dict:
        return {"answer": interrupt("ok?"), "log": ["asked"]}

    def flaky(state: Approval) -> dict:
        if failures["flaky"]:
            failures["flaky"] -= 1
            raise RuntimeError("transient")
        return {"log": ["flaky"]}

    g = (
        StateGraph(Approval)
        .add_node("start", lambda s: {"log": ["start"]})
        .add_node("paid", paid)
        .add_node("ask", ask)
        .add_node("flaky", flaky)
        .add_edge(START, "start")
        .add_edge("start", "paid")
        .add_edge("paid", "ask")
        .add_edge("ask", "flaky")
        .compile(checkpointer=saver)
    )
    first = await g.ainvoke({"log": [], "answer": ""}, cfg("i"))
    assert first["__interrupt__"][0].value == "ok?"
    assert saver.held() == 0
    with pytest.raises(RuntimeError, match="transient"):
        await g.ainvoke(Command(resume="yes"), cfg("i"))
    done = await g.ainvoke(None, cfg("i"))
    assert done == {"log": ["start", "paid", "asked", "flaky"], "answer": "yes"}
    assert effects == ["paid"]
    assert_no_gaps(saver, "i")


@pytest.mark.parametrize("called", [False, True])
async def test_a_subgraph_starts_after_its_enclosing_step_is_saved(called):
    saver = LaggingSaver()
    inner = (
        StateGraph(LogState)
        .add_node("s1", lambda s: {"log": ["s1"]})
        .add_node("s2", lambda s: {"log": ["s2"]})
        .add_edge(START, "s1")
        .add_edge("s1", "s2")
        .compile()
    )

    def call(state: LogState) -> dict:
        return {"log": inner.invoke({"value": "", "log": []})["log"]}

    g = (
        StateGraph(LogState)
        .add_node("before", lambda s: {"log": ["before"]})
        .add_node("sub", call if called else inner)
        .add_edge(START, "before")
        .add_edge("before", "sub")
        .compile(checkpointer=saver)
    )
    out = await g.ainvoke({"value": "", "log": []}, cfg("n"))
    assert out["log"][-2:] == ["s1", "s2"]
    assert saver.held() == 0
    # the subgraph's runs saved through queues of their own, after the enclosing step
    assert len(saver.queues) == 2


@pytest.mark.parametrize("kind", ["once", "aonce"])
async def test_an_effect_runs_only_once_the_step_it_belongs_to_is_saved(kind):
    """An effect made before the checkpoint its task runs on had landed would be made again
    if the process died then: the resume would re-run the step before it, under new task ids,
    with no saved result to reuse. ``once``/``aonce`` wait for the run's saves first."""
    from durable_debug import aonce

    saver = LaggingSaver()
    held_at_effect: list[int] = []

    def effect() -> str:
        held_at_effect.append(saver.held())
        return "paid"

    def pay_sync(state: LogState) -> dict:
        return {"log": [once(effect)]}

    async def pay_async(state: LogState) -> dict:
        return {"log": [await aonce(effect)]}

    g = (
        StateGraph(LogState)
        .add_node("before", lambda s: {"log": ["before"]})
        .add_node("pay", pay_sync if kind == "once" else pay_async)
        .add_edge(START, "before")
        .add_edge("before", "pay")
        .compile(checkpointer=saver)
    )
    out = await g.ainvoke({"value": "", "log": []}, cfg(f"effect-{kind}"))
    assert out["log"] == ["before", "paid"]
    assert held_at_effect == [0]  # "before"'s checkpoint had landed when the effect ran
