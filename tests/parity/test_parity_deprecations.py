"""LangGraph's deprecation warnings on both libraries: a deprecated argument, import or
attribute works and gives the same warning (class name and message) on both."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from parity_harness import Api, durable_api, langgraph_api
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    n: int


def module(api: Api, name: str) -> Any:
    """``langgraph.<name>`` or ``durable_debug.<name>``."""
    root = "langgraph" if api.name == "langgraph" else "durable_debug"
    return importlib.import_module(f"{root}.{name}")


def warned(api: Api, use: Callable[[Api], Any]) -> list[tuple[str, str]]:
    """The deprecation warnings ``use(api)`` gives: (class name, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        use(api)
    return [
        (type(w.message).__name__, str(w.message))
        for w in caught
        if issubclass(w.category, DeprecationWarning)
    ]


def uses() -> dict[str, Callable[[Api], Any]]:
    def retry_policy(api: Api) -> Any:
        return api.RetryPolicy()

    return {
        "StateGraph(input=)": lambda api: api.StateGraph(State, input=State),
        "StateGraph(output=)": lambda api: api.StateGraph(State, output=State),
        "StateGraph(config_schema=)": lambda api: api.StateGraph(State, config_schema=State),
        "add_node(retry=)": lambda api: api.StateGraph(State).add_node(
            "a", lambda s: s, retry=retry_policy(api)
        ),
        "add_node(input=)": lambda api: api.StateGraph(State).add_node(
            "a", lambda s: s, input=State
        ),
        "task(retry=)": lambda api: module(api, "func").task(retry=retry_policy(api))(lambda x: x),
        "entrypoint(retry=, config_schema=)": lambda api: module(api, "func").entrypoint(
            retry=retry_policy(api), config_schema=State
        ),
        "Interrupt.interrupt_id": lambda api: api.Interrupt(value="q", id="abc").interrupt_id,
        "NodeInterrupt()": lambda api: module(api, "errors").NodeInterrupt("q"),
        "constants.Send": lambda api: module(api, "constants").Send,
        "constants.Interrupt": lambda api: module(api, "constants").Interrupt,
        "constants.PREVIOUS": lambda api: module(api, "constants").PREVIOUS,
        "config_schema()": lambda api: (
            api.StateGraph(State, context_schema=State)
            .add_node("a", lambda s: s)
            .add_edge(api.START, "a")
            .compile()
            .config_schema()
        ),
        "get_config_jsonschema()": lambda api: (
            api.StateGraph(State).add_node("a", lambda s: s).add_edge(api.START, "a").compile()
        ).get_config_jsonschema(),
    }


@pytest.mark.parametrize("name", list(uses()))
def test_same_deprecation_warning(name: str) -> None:
    use = uses()[name]
    theirs = warned(langgraph_api(), use)
    assert theirs, f"LangGraph gave no deprecation warning for {name}"
    assert warned(durable_api(), use) == theirs


def test_config_schema_reads_the_context_schema() -> None:
    def schema(api: Api) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            graph = api.StateGraph(State, config_schema=State)
            graph.add_node("a", lambda s: s).add_edge(api.START, "a")
            return graph.context_schema, graph.compile().get_config_jsonschema()

    ours, theirs = schema(durable_api()), schema(langgraph_api())
    assert ours[0] is theirs[0] is State
    assert ours[1]["properties"].keys() == theirs[1]["properties"].keys() == {"configurable"}
