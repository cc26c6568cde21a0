"""once() / aonce(): an effect inside a node happens once across re-runs of the node."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

from durable_debug import (
    END,
    START,
    Command,
    MemorySaver,
    RetryPolicy,
    StateGraph,
    aonce,
    current_task_id,
    interrupt,
    once,
)


class Order(TypedDict):
    receipt: str
    approved: str


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def test_an_effect_before_an_interrupt_runs_once_and_its_result_is_replayed() -> None:
    charges: list[str] = []
    task_ids: list[str] = []

    def charge_customer(amount: int) -> str:
        charges.append(f"charge {amount}")
        return f"receipt-{len(charges)}"

    def charge(state: Order) -> dict[str, Any]:
        task_ids.append(current_task_id())
        receipt = once(charge_customer, 42)
        email = once(lambda: f"mail-{len(charges)}")
        approved = interrupt({"receipt": receipt})
        return {"receipt": f"{receipt}/{email}", "approved": approved}

    graph = (
        StateGraph(Order)
        .add_node("charge", charge)
        .add_edge(START, "charge")
        .add_edge("charge", END)
        .compile(checkpointer=MemorySaver())
    )
    paused = graph.invoke({"receipt": "", "approved": ""}, cfg("o"))
    assert paused["__interrupt__"][0].value == {"receipt": "receipt-1"}
    state = graph.get_state(cfg("o"))
    assert state.next == ("charge",)  # the saved effect does not count as the node's output
    assert state.values == {"receipt": "", "approved": ""}

    done = graph.invoke(Command(resume="yes"), cfg("o"))

    assert done == {"receipt": "receipt-1/mail-1", "approved": "yes"}
    assert charges == ["charge 42"]
    assert len(task_ids) == 2 and task_ids[0] == task_ids[1]


async def test_aonce_survives_a_retry_of_the_node() -> None:
    calls: list[int] = []
    attempts: list[int] = []

    async def send_email() -> str:
        calls.append(1)
        return "sent"

    async def notify(state: Order) -> dict[str, Any]:
        result = await aonce(send_email)
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("flaky service after the e-mail went out")
        return {"receipt": result}

    graph = (
        StateGraph(Order)
        .add_node("notify", notify, retry_policy=RetryPolicy(initial_interval=0.001, jitter=False))
        .add_edge(START, "notify")
        .compile(checkpointer=MemorySaver())
    )
    out = await graph.ainvoke({"receipt": "", "approved": ""}, cfg("n"))
    assert out["receipt"] == "sent"
    assert len(attempts) == 3 and calls == [1]


def test_once_outside_a_node_and_with_an_async_function_are_clear_errors() -> None:
    with pytest.raises(RuntimeError, match="once\\(\\) was called outside a running node"):
        once(print, "x")

    async def fetch() -> str:
        return "x"

    def node(state: Order) -> dict[str, Any]:
        return {"receipt": once(fetch)}

    graph = StateGraph(Order).add_node("n", node).add_edge(START, "n").compile()
    with pytest.raises(TypeError, match="once\\(\\) in node 'n': .*fetch returned an awaitable"):
        graph.invoke({"receipt": "", "approved": ""})


def test_a_replay_from_an_older_checkpoint_makes_its_effects_anew() -> None:
    charges: list[int] = []

    def charge_customer() -> str:
        charges.append(1)
        return f"r{len(charges)}"

    def charge(state: Order) -> dict[str, Any]:
        return {"receipt": once(charge_customer)}

    graph = (
        StateGraph(Order)
        .add_node("charge", charge)
        .add_edge(START, "charge")
        .compile(checkpointer=MemorySaver())
    )
    graph.invoke({"receipt": "", "approved": ""}, cfg("r"))
    first = next(s for s in graph.get_state_history(cfg("r")) if s.next == ("charge",))
    replay = graph.invoke(None, first.config)  # time travel: a new branch, new tasks
    assert charges == [1, 1] and replay["receipt"] == "r2"


def test_only_tasks_that_record_a_call_get_a_tape_kept_in_their_start_order() -> None:
    """A task's tape is made at its first recorded call: a run whose tasks record nothing
    keeps no tape, and the record lists the tasks that did in the order they started, even
    when a later one recorded first."""
    import contextvars

    from durable_debug.graph.recording import RunRecording, current_tape

    recording = RunRecording({"configurable": {"thread_id": "t"}})

    def record(name: str) -> None:
        tape = current_tape()
        assert tape is not None
        tape.open("once", name, "hash-" + name, name)

    first, second, quiet = (contextvars.copy_context() for _ in range(3))
    started_first = first.run(recording.start, "a", "task-a", "ck")
    started_second = second.run(recording.start, "b", "task-b", "ck")
    started_quiet = quiet.run(recording.start, "c", "task-c", "ck")
    quiet.run(recording.stop, started_quiet)
    assert recording.tapes == []  # nothing recorded yet: no tape made
    second.run(record, "b-call")
    first.run(record, "a-call")
    first.run(record, "a-again")
    first.run(recording.stop, started_first)
    second.run(recording.stop, started_second)
    assert current_tape() is None
    taken = recording.take()["task_calls"]
    assert list(taken) == ["task-a", "task-b"]
    assert [c["name"] for c in taken["task-a"]["calls"]] == ["a-call", "a-again"]
    assert taken["task-b"] == {
        "node": "b",
        "from": "ck",
        "calls": [
            {"i": 0, "kind": "once", "name": "b-call", "hash": "hash-b-call", "input": "b-call"}
        ],
    }
    assert recording.take() == {}
