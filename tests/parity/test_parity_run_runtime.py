"""The ``Runtime`` each node gets, at the top level, in a subgraph node, in a graph invoked
inside a node function and in a ``@task`` call: the run's context and store inherited by a
graph that was given none, ``server_info`` read from a LangGraph server's config, and
``execution_info.checkpoint_ns`` the task's own namespace, as LangGraph gives them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


@dataclass
class Context:
    username: str


class State(TypedDict, total=False):
    log: str


def library(api: Api) -> tuple[Any, Any, Any]:
    """``Runtime``, ``InMemoryStore`` and ``task`` of the library ``api`` names."""
    if api.name == "langgraph":
        from langgraph.func import task
        from langgraph.runtime import Runtime
        from langgraph.store.memory import InMemoryStore
    else:
        from durable_debug.func import task
        from durable_debug.runtime import Runtime
        from durable_debug.store.memory import InMemoryStore
    return Runtime, InMemoryStore, task


class User:
    """A server's authenticated user: LangGraph reads any object with an ``identity``."""

    identity = "alice-id"


def scenario_of(config: dict[str, Any]) -> Any:
    def scenario(api: Api, trace: Trace) -> None:
        runtime_class, store_class, task = library(api)
        store = store_class()

        def seen(where: str, runtime: Any) -> None:
            info, server = runtime.execution_info, runtime.server_info
            trace.note(
                where,
                {
                    "context": runtime.context,
                    "store is the run's": runtime.store is store,
                    "server": server and (server.assistant_id, server.graph_id, server.user),
                    "namespace": trace.namespace(info.checkpoint_ns),
                    "task": trace.label("t", info.task_id),
                    "thread": info.thread_id,
                },
            )

        @task
        def call(x: str) -> str:
            seen("task", current_runtime(api))
            return x

        def inner(state: State, runtime: runtime_class[Context]) -> dict[str, Any]:
            seen(f"inner {state['log']}", runtime)
            return {"log": state["log"] + "+inner"}

        sub = api.StateGraph(State, context_schema=Context).add_node("inner", inner)
        sub = sub.add_edge(api.START, "inner").compile()

        def main(state: State, runtime: runtime_class[Context]) -> dict[str, Any]:
            seen("main", runtime)
            call("x").result()
            return sub.invoke({"log": "called"})

        graph = (
            api.StateGraph(State, context_schema=Context)
            .add_node("main", main)
            .add_node("sub", sub)
            .add_edge(api.START, "main")
            .add_edge("main", "sub")
            .compile(checkpointer=api.MemorySaver(), store=store)
        )
        result = graph.invoke({"log": "in"}, config, context=Context("Alice"))
        trace.note("result", result)

    return scenario


def current_runtime(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.runtime import get_runtime
    else:
        from durable_debug.runtime import get_runtime
    return get_runtime()


def test_nodes_of_a_run_and_of_its_subgraphs_get_the_runs_runtime():
    ours = check_parity(scenario_of({"configurable": {"thread_id": "t"}}))
    assert ours["inner called"]["context"] == {"Context": {"username": "Alice"}}
    assert ours["inner called"]["namespace"].startswith("main:")
    assert ours["inner called+inner"]["namespace"].startswith("sub:")
    assert ours["task"]["namespace"].startswith("main:")
    assert ours["main"]["server"] is None


def test_server_info_comes_from_a_servers_config_at_every_level():
    server = {"assistant_id": "asst", "graph_id": "g", "langgraph_auth_user": User()}
    ours = check_parity(scenario_of({"configurable": {"thread_id": "t", **server}}))
    assert ours["inner called"]["server"][:2] == ("asst", "g")


def test_an_auth_user_without_an_identity_is_no_user():
    config = {"configurable": {"thread_id": "t", "langgraph_auth_user": {"name": "x"}}}
    ours = check_parity(scenario_of(config))
    assert ours["main"]["server"] is None
