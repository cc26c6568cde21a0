"""Messages written to a ``DeltaChannel`` key get ids, on both libraries: a message object
without one, a message dict in a written list (which becomes a message), a message in an
``Overwrite``; each id is the same on every read of the thread, and a message that already
has an id keeps it. Values that are not messages are left alone."""

# No ``from __future__ import annotations``: the state class below is built in the scenario,
# its annotations naming the library's DeltaChannel as an object.
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from parity_harness import Api, durable_api, langgraph_api
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


def _extend(state: list[Any], writes: list[Any]) -> list[Any]:
    out = list(state)
    for write in writes:
        out.extend(write if isinstance(write, list) else [write])
    return out


def _run(api: Api, given: Any) -> list[list[tuple[str, str, bool]]]:
    if api.name == "langgraph":
        from langgraph.channels.delta import DeltaChannel
    else:
        from durable_debug.channels.delta import DeltaChannel

    class State(TypedDict):
        messages: Annotated[list, DeltaChannel(_extend)]

    def agent(state: Any) -> dict:
        return {"messages": [AIMessage("reply", id="ai-1"), HumanMessage("from node"), "text"]}

    graph = (
        api.StateGraph(State)
        .add_node("agent", agent)
        .add_edge(api.START, "agent")
        .compile(checkpointer=api.MemorySaver())
    )
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": given()}, cfg)
    reads = []
    for _ in range(2):
        values = graph.get_state(cfg).values["messages"]
        reads.append(
            [
                (type(m).__name__, m.content, m.id)
                if isinstance(m, BaseMessage)
                else (type(m).__name__, m, None)
                for m in values
            ]
        )
    return reads


@pytest.mark.parametrize(
    ("given", "own_id"),
    [
        (lambda: [HumanMessage("hello")], None),
        (lambda: [{"role": "user", "content": "hello"}], None),
        (lambda: [HumanMessage("hello", id="mine")], "mine"),
    ],
    ids=["message", "dict", "own id"],
)
def test_messages_get_ids_that_stay_the_same(given: Any, own_id: str | None) -> None:
    reads = {api.name: _run(api, given) for api in (durable_api(), langgraph_api())}
    for name, (first, second) in reads.items():
        assert first == second, f"{name}: the ids changed between reads"
        shapes = [(kind, content, bool(ident)) for kind, content, ident in first]
        assert shapes == [
            ("HumanMessage", "hello", True),
            ("AIMessage", "reply", True),
            ("HumanMessage", "from node", True),
            ("str", "text", False),
        ], name
        assert first[1][2] == "ai-1"
        if own_id is not None:
            assert first[0][2] == own_id


def test_a_message_in_an_overwrite_gets_an_id() -> None:
    from durable_debug import START, StateGraph
    from durable_debug.channels.delta import DeltaChannel
    from durable_debug.checkpoint.memory import InMemorySaver
    from durable_debug.types import Overwrite

    class State(TypedDict):
        messages: Annotated[list, DeltaChannel(_extend)]

    graph = (
        StateGraph(State)
        .add_node("agent", lambda state: {"messages": Overwrite((HumanMessage("again"),))})
        .add_edge(START, "agent")
        .compile(checkpointer=InMemorySaver())
    )
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": Overwrite([HumanMessage("hello")])}, cfg)
    first = [m.id for m in graph.get_state(cfg).values["messages"]]
    assert len(first) == 1 and first[0]
    assert [m.id for m in graph.get_state(cfg).values["messages"]] == first
