"""What a run whose node fails streams before it raises, on both libraries: the failed
task's ``tasks`` / ``debug`` result (with its error), and no ``checkpoint`` events from a run
that has no saver."""

from __future__ import annotations

from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    x: int


def outline(mode: str, chunk: dict[str, Any]) -> tuple[Any, ...]:
    payload = chunk.get("payload", chunk) if mode == "debug" else chunk
    error = payload.get("error")
    return (
        mode,
        chunk.get("type") if mode == "debug" else None,
        payload.get("name"),
        repr(error) if error is not None else None,
    )


@pytest.mark.parametrize("saved", [False, True], ids=["no saver", "saver"])
def test_a_lone_failing_task_streams_its_outcome_then_raises(saved: bool) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def bad(state: State) -> dict:
            raise ValueError("boom")

        graph = (
            api.StateGraph(State)
            .add_node("bad", bad)
            .add_edge(api.START, "bad")
            .compile(checkpointer=api.MemorySaver() if saved else None)
        )
        cfg = {"configurable": {"thread_id": "t"}}
        seen = []
        try:
            for mode, chunk in graph.stream({"x": 0}, cfg, stream_mode=["tasks", "debug"]):
                seen.append(outline(mode, chunk))
        except ValueError as exc:
            seen.append(("raised", str(exc)))
        trace.note("stream", seen)

    check_parity(scenario)
