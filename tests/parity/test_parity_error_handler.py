"""``add_node(..., error_handler=fn)`` and ``set_node_defaults(error_handler=fn)`` on both
libraries: a node's failure (after its retries) runs its handler in the same step, with the
failed task's input and a ``NodeError``; the handler's writes and ``Command`` replace the
node's, siblings are not cancelled, a failing handler fails the run, an interrupt is not a
failure, and the history records the failed task and the step that goes on."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    foo: str
    log: Annotated[list, operator.add]


def node_error(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.errors import NodeError
    else:
        from durable_debug.errors import NodeError
    return NodeError


def seen(trace: Trace, error: Any) -> dict[str, Any]:
    return {"node": error.node, "error": repr(error.error)}


def test_a_handler_recovers_and_routes_while_a_sibling_finishes() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        NodeError = node_error(api)
        attempts: list[str] = []

        def failing(state: State) -> dict:
            attempts.append("failing")
            raise ValueError("boom")

        def handler(state: State, error: NodeError) -> Any:  # type: ignore[valid-type]
            trace.note("handler saw", {"state": state, **seen(trace, error)})
            return api.Command(update={"foo": "handled", "log": ["h"]}, goto="after")

        retry = api.RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False)
        graph = (
            api.StateGraph(State)
            .add_node("failing", failing, retry_policy=retry, error_handler=handler)
            .add_node("sibling", lambda state: {"log": ["sibling"]})
            .add_node("after", lambda state: {"log": ["after"]})
            .add_edge(api.START, "failing")
            .add_edge(api.START, "sibling")
            .compile(checkpointer=api.MemorySaver())
        )
        handler.__annotations__["error"] = NodeError
        cfg = {"configurable": {"thread_id": "t"}}
        chunks = list(graph.stream({"foo": "", "log": []}, cfg, stream_mode="updates"))
        trace.note("updates", sorted(map(repr, chunks)))
        trace.note("attempts", list(attempts))
        trace.state("state", graph.get_state(cfg))
        trace.history("history", graph.get_state_history(cfg))
        drawing = graph.get_graph()
        trace.note("drawn nodes", sorted(drawing.nodes))
        handler_edges = [e for e in drawing.edges if "__error_handler__failing" in e[:2]]
        trace.note("handler edges", handler_edges)

    check_parity(scenario)


def test_a_failing_handler_fails_the_run_and_an_interrupt_is_not_a_failure() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        def failing(state: State) -> dict:
            raise ValueError("node boom")

        def broken(state: State) -> dict:
            raise RuntimeError("handler boom")

        graph = (
            api.StateGraph(State)
            .add_node("failing", failing, error_handler=broken)
            .add_edge(api.START, "failing")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        trace.call("run", graph.invoke, {"foo": "", "log": []}, cfg)

        def ask(state: State) -> dict:
            return {"foo": api.interrupt("why?")}

        asking = (
            api.StateGraph(State)
            .add_node("ask", ask, error_handler=lambda state: {"foo": "handled"})
            .add_node("other", lambda state: {"log": ["other"]})
            .add_edge(api.START, "ask")
            .add_edge(api.START, "other")
            .compile(checkpointer=api.MemorySaver())
        )
        trace.call("asking", asking.invoke, {"foo": "", "log": []}, cfg)
        trace.state("paused", asking.get_state(cfg))

    check_parity(scenario)


def test_node_defaults_and_a_subgraph_that_fails() -> None:
    def scenario(api: Api, trace: Trace) -> None:
        NodeError = node_error(api)

        def default(state: State, error: Any) -> dict:
            return {"log": [f"default:{error.node}"]}

        def own(state: State, error: Any) -> dict:
            return {"log": [f"own:{error.node}"]}

        default.__annotations__["error"] = NodeError
        own.__annotations__["error"] = NodeError

        def fail(state: State) -> dict:
            raise ValueError("boom")

        sub = api.StateGraph(State).add_node("inner", fail).add_edge(api.START, "inner").compile()
        graph = (
            api.StateGraph(State)
            .set_node_defaults(error_handler=default)
            .add_node("a", fail, error_handler=own)
            .add_node("b", fail)
            .add_node("sub", sub)
            .add_edge(api.START, "a")
            .add_edge(api.START, "b")
            .add_edge(api.START, "sub")
            .compile(checkpointer=api.MemorySaver())
        )
        cfg = {"configurable": {"thread_id": "t"}}
        result = graph.invoke({"foo": "", "log": []}, cfg)
        trace.note("log", sorted(result["log"]))
        trace.call(
            "a user node named like the default handler",
            lambda: (
                api.StateGraph(State)
                .set_node_defaults(error_handler=default)
                .add_node("__default_error_handler__", lambda state: {})
                .add_edge(api.START, "__default_error_handler__")
                .compile()
            ),
            message=False,
        )

    check_parity(scenario)
