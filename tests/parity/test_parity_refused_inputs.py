"""Inputs LangGraph refuses or warns about as a graph is built, refused or warned about the
same way: a checkpointer that is no saver, a reducer that does not take ``(a, b)``, a node's
``config`` parameter annotated other than ``RunnableConfig``."""

import operator
import warnings
from typing import Annotated, Any, Optional

import pytest
from langchain_core.runnables import RunnableConfig
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict):
    value: str


class NotASaver:
    pass


def test_a_checkpointer_that_is_no_saver_is_refused():
    def scenario(api: Api, trace: Trace) -> None:
        builder = api.StateGraph(State).add_node("a", lambda s: s).add_edge(api.START, "a")
        trace.call("object", builder.compile, checkpointer=NotASaver())
        trace.call("string", builder.compile, checkpointer="memory")
        for accepted in (None, True, False):
            trace.note(f"{accepted}", type(builder.compile(checkpointer=accepted)).__name__)

    ours = check_parity(scenario)
    assert ours["object"]["raised"] == "TypeError"
    assert "Received NotASaver." in ours["object"]["message"]


def three(a: Any, b: Any, c: Any = None) -> Any:
    return a


def one(a: Any) -> Any:
    return a


def star(*values: Any) -> Any:
    return values[0]


def test_a_reducer_that_does_not_take_two_arguments_is_refused():
    def scenario(api: Api, trace: Trace) -> None:
        for name, reducer in (("one", one), ("three", three), ("star", star)):

            class Bad(TypedDict):
                log: Annotated[list, reducer]

            trace.call(name, api.StateGraph, Bad, message=False)

        class NotLast(TypedDict):  # only the last item is read as the reducer
            log: Annotated[list, operator.add, "a note"]

        graph = api.StateGraph(NotLast).add_node("a", lambda s: {"log": ["x"]})
        graph = graph.add_edge(api.START, "a").compile()
        trace.call("not last", graph.invoke, {"log": ["in"]})

        class Good(TypedDict):
            log: Annotated[list, operator.add]

        graph = api.StateGraph(Good).add_node("a", lambda s: {"log": ["x"]})
        trace.call("good", graph.add_edge(api.START, "a").compile().invoke, {"log": ["in"]})

    ours = check_parity(scenario)
    assert ours["one"] == {"raised": "ValueError"}
    assert ours["not last"] == {"log": ["x"]}
    assert ours["good"] == {"log": ["in", "x"]}


def test_the_message_of_a_refused_reducer_names_the_key():
    from durable_debug import StateGraph

    class Bad(TypedDict):
        log: Annotated[list, one]

    with pytest.raises(ValueError, match=r"Invalid reducer signature.*state key 'log'"):
        StateGraph(Bad)


def test_a_config_parameter_not_typed_runnable_config_is_warned_about():
    def scenario(api: Api, trace: Trace) -> None:
        def typed_dict(state: State, config: dict) -> State:
            return state

        def typed_any(state: State, config: Any) -> State:
            return state

        async def typed_any_async(state: State, config: Any) -> State:
            return state

        def typed_well(state: State, config: RunnableConfig) -> State:
            return state

        def typed_optional(state: State, config: Optional[RunnableConfig]) -> State:  # noqa: UP045
            return state

        def untyped(state: State, config) -> State:  # type: ignore[no-untyped-def]
            return state

        def keyword(state: State, *, config: int) -> State:
            return state

        def route(state: State, config: dict) -> str:
            return "a"

        nodes = (typed_dict, typed_any, typed_any_async, typed_well, typed_optional, untyped)
        for node in (*nodes, keyword):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                api.StateGraph(State).add_node(node)
            trace.note(node.__name__, [str(w.message) for w in caught])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            graph = api.StateGraph(State).add_node("a", lambda s: s)
            graph.add_conditional_edges(api.START, route)
        trace.note("branch", [str(w.message) for w in caught])

    ours = check_parity(scenario)
    assert ours["typed_any"] == [
        "The 'config' parameter should be typed as 'RunnableConfig' or 'RunnableConfig | None', "
        "not 'typing.Any'. "
    ]
    assert ours["typed_well"] == ours["typed_optional"] == ours["untyped"] == []
