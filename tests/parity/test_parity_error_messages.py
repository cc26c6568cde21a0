"""Error messages on both libraries: each mistake raises the same exception type on both, and
our message holds LangGraph's (tests matching LangGraph's text, ``pytest.raises(match=...)``,
pass on ours); we may add help after it."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, RemoveMessage
from parity_harness import Api, durable_api, langgraph_api
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def raised(fn: Callable[[], Any]) -> BaseException:
    """The exception ``fn()`` raises (it must raise)."""
    with pytest.raises(Exception) as info:
        fn()
    return info.value


def assert_holds_langgraphs(scenario: Callable[[Api], Any]) -> None:
    """``scenario`` raises on both libraries: the same exception type, and our message holds
    LangGraph's."""
    ours = raised(lambda: scenario(durable_api()))
    theirs = raised(lambda: scenario(langgraph_api()))
    assert type(ours).__name__ == type(theirs).__name__
    expected = str(theirs).splitlines()[0].split(" Docs: ")[0]
    assert expected in str(ours), f"{expected!r} not in {str(ours)!r}"


def add_messages(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.graph import add_messages as fn
    else:
        from durable_debug import add_messages as fn
    return fn


def overwrite(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.types import Overwrite
    else:
        from durable_debug import Overwrite
    return Overwrite


def test_add_messages_unknown_format() -> None:
    assert_holds_langgraphs(lambda api: add_messages(api)([], [], format="invalid"))


def test_add_messages_removing_an_unknown_id() -> None:
    assert_holds_langgraphs(
        lambda api: add_messages(api)([AIMessage("a", id="1")], [RemoveMessage(id="2")])
    )


class Counter(TypedDict):
    n: int
    items: Annotated[list[str], operator.add]


def two_node_graph(api: Api, a: Callable[[Counter], Any], b: Callable[[Counter], Any]) -> Any:
    return (
        api.StateGraph(Counter)
        .add_node("a", a)
        .add_node("b", b)
        .add_edge(api.START, "a")
        .add_edge(api.START, "b")
        .compile(checkpointer=api.MemorySaver())
    )


@pytest.mark.parametrize("supersteps", [[], [[], []]], ids=["no supersteps", "no updates"])
def test_bulk_update_state_with_nothing_to_apply(supersteps: list[Any]) -> None:
    def scenario(api: Api) -> Any:
        graph = two_node_graph(api, lambda s: {"n": 1}, lambda s: {"n": 2})
        return graph.bulk_update_state({"configurable": {"thread_id": "t"}}, supersteps)

    assert_holds_langgraphs(scenario)


def test_two_overwrites_of_one_key_in_one_step() -> None:
    def scenario(api: Api) -> Any:
        over = overwrite(api)
        graph = two_node_graph(
            api, lambda s: {"items": over(["a"])}, lambda s: {"items": over(["b"])}
        )
        return graph.invoke({"n": 0, "items": []}, {"configurable": {"thread_id": "t"}})

    assert_holds_langgraphs(scenario)


def test_one_resume_value_for_several_pending_interrupts() -> None:
    def scenario(api: Api) -> Any:
        def ask(question: str) -> Callable[[Counter], Any]:
            return lambda s: {"items": [api.interrupt(question)]}

        graph = two_node_graph(api, ask("A"), ask("B"))
        config = {"configurable": {"thread_id": "t"}}
        graph.invoke({"n": 0, "items": []}, config)
        return graph.invoke(api.Command(resume="answer"), config)

    assert_holds_langgraphs(scenario)


@pytest.mark.parametrize("method", ["get_state", "update_state", "bulk_update_state"])
def test_state_api_without_a_checkpointer(method: str) -> None:
    def scenario(api: Api) -> Any:
        graph = api.StateGraph(Counter).add_node("a", lambda s: {"n": 1})
        graph = graph.add_edge(api.START, "a").compile()
        config = {"configurable": {"thread_id": "t"}}
        if method == "get_state":
            return graph.get_state(config)
        if method == "update_state":
            return graph.update_state(config, {"n": 2})
        return graph.bulk_update_state(config, [[({"n": 2}, "a")]])

    assert_holds_langgraphs(scenario)


def destinations_graph(api: Api, destinations: Any) -> Any:
    return (
        api.StateGraph(Counter)
        .add_node("a", lambda s: {"n": 1}, destinations=destinations)
        .add_node("b", lambda s: {"n": 2})
        .add_edge(api.START, "a")
        .add_edge("b", api.END)
        .compile()
    )


def test_a_destination_that_names_no_node() -> None:
    assert_holds_langgraphs(lambda api: destinations_graph(api, ("b", "typo")))


def test_a_mapping_of_destinations_names_nodes_by_its_keys() -> None:
    def edges(api: Api) -> list[tuple[Any, ...]]:
        graph = destinations_graph(api, {"b": "to b"})
        return sorted((tuple(e) for e in graph.get_graph().edges), key=str)

    assert edges(durable_api()) == edges(langgraph_api())
