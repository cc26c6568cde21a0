"""The ``counters_since_delta_snapshot`` metadata of ``DeltaChannel`` keys on both libraries
(``graph/delta_counters.py``): through runs (a key's whole save at its ``snapshot_frequency``
and on an ``Overwrite``), ``update_state`` at the head (as a node, as END, as input, a copy),
an interrupt and its resume, and a fork from an older checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def _append(current: list | None, writes: Sequence[Any]) -> list:
    return [*(current or []), *(item for write in writes for item in write)]


def _library(api: Api) -> tuple[Any, Any]:
    """``DeltaChannel`` and ``Overwrite`` from the library."""
    if api.name == "langgraph":
        from langgraph.channels.delta import DeltaChannel as LangGraphDeltaChannel
        from langgraph.types import Overwrite as LangGraphOverwrite

        return LangGraphDeltaChannel, LangGraphOverwrite
    from durable_debug.channels.delta import DeltaChannel
    from durable_debug.types import Overwrite

    return DeltaChannel, Overwrite


def _graph(api: Api) -> Any:
    delta, overwrite = _library(api)
    state = TypedDict(  # noqa: UP013  # the channels are made at run time, from either library
        "State",
        {
            "often": Annotated[list, delta(_append, snapshot_frequency=3)],
            "rarely": Annotated[list, delta(_append, snapshot_frequency=10_000)],
        },
    )

    def ask(state: dict) -> dict:
        return {"often": [f"asked {api.interrupt('go on?')}"]}

    builder = api.StateGraph(state)
    builder.add_node("a", lambda s: {"often": ["a"]})
    builder.add_node("b", lambda s: {"often": ["b"], "rarely": ["b"]})
    builder.add_node("reset", lambda s: {"often": overwrite(["reset"])})
    builder.add_node("ask", ask)
    builder.add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "reset")
    builder.add_edge("reset", "ask").add_edge("ask", api.END)
    return builder.compile(checkpointer=api.MemorySaver())


def _counters(trace: Trace, label: str, graph: Any, cfg: Any) -> None:
    trace.note(
        label,
        [
            (s.metadata["step"], s.metadata.get("counters_since_delta_snapshot"))
            for s in graph.get_state_history(cfg)
        ],
    )


def test_counters_through_runs_updates_and_a_fork() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        graph = _graph(api)
        cfg = {"configurable": {"thread_id": "counted"}}
        graph.invoke({"often": ["in"], "rarely": ["in"]}, cfg)
        graph.invoke(api.Command(resume="yes"), cfg)
        _counters(trace, "two runs", graph, cfg)
        graph.update_state(cfg, {"rarely": ["edit"]}, as_node="b")
        graph.update_state(cfg, None, as_node="__copy__")
        graph.update_state(cfg, {"often": ["again"]}, as_node="__input__")
        graph.update_state(cfg, None, as_node=api.END)
        _counters(trace, "updates at the head", graph, cfg)
        older = [s for s in graph.get_state_history(cfg) if s.metadata["step"] == 1][-1]
        graph.invoke({"often": ["fork"]}, older.config)
        _counters(trace, "after a fork", graph, cfg)
        graph.update_state(older.config, {"rarely": ["edit"]}, as_node="b")
        _counters(trace, "after an update of an older checkpoint", graph, cfg)

    ours = check_parity(scenario)
    runs = dict(ours["two runs"][::-1])  # step -> counters, oldest first
    assert runs[0] == {"often": [1, 2], "rarely": [1, 2]}
    assert any("often" not in (counters or {}) for counters in runs.values())  # saved whole
