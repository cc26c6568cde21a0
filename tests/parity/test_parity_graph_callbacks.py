"""Graph lifecycle callbacks on both libraries: a ``GraphCallbackHandler`` in the run's
callbacks hears ``on_interrupt`` when the graph pauses (a node's ``interrupt()``, or a static
breakpoint) and ``on_resume`` when a run resumes from a saved checkpoint; other handlers do
not; a handler with ``raise_error`` fails the run."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from parity_harness import Api, Trace, acheck_parity, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    answer: str | None


def _callbacks_module(api: Api) -> Any:
    return importlib.import_module(f"{api.name}.callbacks")


def _recorder(api: Api) -> Any:
    base = _callbacks_module(api).GraphCallbackHandler

    class Recorder(base):
        def __init__(self) -> None:
            self.seen: list[tuple[str, Any]] = []

        def on_interrupt(self, event: Any) -> None:
            self.seen.append(("interrupt", event))

        def on_resume(self, event: Any) -> None:
            self.seen.append(("resume", event))

    return Recorder()


def _brief(api: Api, graph: Any, cfg: dict[str, Any], seen: list[tuple[str, Any]]) -> list[Any]:
    """What a user reads of each event; its checkpoint compared with the thread's history."""
    history = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(cfg)]
    out = []
    for kind, event in seen:
        out.append(
            {
                "kind": kind,
                "status": event.status,
                "ns": event.checkpoint_ns,
                "run_id is set": event.run_id is not None,
                "checkpoint age": history.index(event.checkpoint_id),
                "interrupts": [i.value for i in getattr(event, "interrupts", ())],
            }
        )
    return out


def test_interrupt_then_resume_reach_only_graph_handlers():
    def scenario(api: Api, trace: Trace) -> None:
        def ask(state: State) -> dict:
            return {"answer": api.interrupt("your answer?")}

        graph = (
            api.StateGraph(State)
            .add_node("ask", ask)
            .add_edge(api.START, "ask")
            .compile(checkpointer=api.MemorySaver())
        )
        recorder = _recorder(api)
        cfg: dict[str, Any] = {"configurable": {"thread_id": "t"}, "callbacks": [recorder]}
        graph.invoke({"answer": None}, cfg)
        trace.note("resumed", graph.invoke(api.Command(resume="yes"), cfg))
        trace.note(
            "events", _brief(api, graph, {"configurable": {"thread_id": "t"}}, recorder.seen)
        )

    ours = check_parity(scenario)
    assert [e["kind"] for e in ours["events"]] == ["interrupt", "resume"]
    assert ours["events"][0]["interrupts"] == ["your answer?"]


def test_a_static_breakpoint_is_reported_with_its_status():
    def scenario(api: Api, trace: Trace) -> None:
        graph = (
            api.StateGraph(State)
            .add_node("first", lambda s: {"answer": "a"})
            .add_node("second", lambda s: {"answer": "b"})
            .add_edge(api.START, "first")
            .add_edge("first", "second")
            .compile(checkpointer=api.MemorySaver(), interrupt_before=["second"])
        )
        recorder = _recorder(api)
        cfg: dict[str, Any] = {"configurable": {"thread_id": "s"}, "callbacks": [recorder]}
        graph.invoke({"answer": None}, cfg)
        graph.invoke(None, cfg)
        trace.note(
            "events", _brief(api, graph, {"configurable": {"thread_id": "s"}}, recorder.seen)
        )

    ours = check_parity(scenario)
    assert [(e["kind"], e["status"]) for e in ours["events"]] == [
        ("interrupt", "interrupt_before"),
        ("resume", "pending"),
    ]


async def test_a_raising_handler_fails_the_run_only_with_raise_error():
    async def scenario(api: Api, trace: Trace) -> None:
        base = _callbacks_module(api).GraphCallbackHandler

        class Raising(base):
            def __init__(self, raise_error: bool) -> None:
                self.raise_error = raise_error

            async def on_interrupt(self, event: Any) -> None:
                raise ValueError("handler failed")

        def ask(state: State) -> dict:
            return {"answer": api.interrupt("?")}

        graph = (
            api.StateGraph(State)
            .add_node("ask", ask)
            .add_edge(api.START, "ask")
            .compile(checkpointer=api.MemorySaver())
        )
        for raise_error in (False, True):
            cfg: dict[str, Any] = {
                "configurable": {"thread_id": str(raise_error)},
                "callbacks": [Raising(raise_error)],
            }
            try:
                out = await graph.ainvoke({"answer": None}, cfg)
                trace.note(f"raise_error={raise_error}", sorted(out))
            except ValueError as exc:
                trace.note(f"raise_error={raise_error}", str(exc))

    ours = await acheck_parity(scenario)
    assert ours["raise_error=True"] == "handler failed"
