"""A ``Send`` whose argument is the state, holding an ``UntrackedValue`` key (an object no
serializer can store, such as one holding a lock), on both libraries: the run saves the Send
without that key (in the step's writes and in the checkpoint's pending Sends), the node it
runs still reads the object, and the run's result, state and history match."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

import durable_debug
from durable_debug.graph.public_channels import UntrackedValue as OurUntrackedValue

pytestmark = pytest.mark.parity


class Resource:
    """Cannot be saved: not a registered class, and it holds a lock."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()


def untracked(api: Api) -> Any:
    if api.StateGraph is durable_debug.StateGraph:
        return OurUntrackedValue
    from langgraph.channels import UntrackedValue

    return UntrackedValue


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_a_send_of_the_state_saves_it_without_its_untracked_key(durability: str) -> None:
    def scenario(api: Api, trace: Trace) -> None:
        State = TypedDict(  # noqa: UP013  # the channel is known only at run time
            "State",
            {
                "log": Annotated[list[str], operator.add],
                "resource": Annotated[Resource, untracked(api)],
            },
        )

        def setup(state: State) -> dict:
            return {"log": ["setup"], "resource": Resource("first")}

        def tool(state: State) -> dict:
            trace.note("tool reads", state["resource"].name)
            return {"log": [f"tool {state['resource'].name}"], "resource": Resource("second")}

        builder = api.StateGraph(State).add_node("setup", setup).add_node("tool", tool)
        builder.add_edge(api.START, "setup")
        builder.add_conditional_edges("setup", lambda s: [api.Send("tool", s)])
        g = builder.compile(checkpointer=api.MemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        out = g.invoke({"log": []}, config, durability=durability)
        trace.note("result", {"log": out["log"], "resource": out["resource"].name})
        trace.history("history", g.get_state_history(config))

    ours = check_parity(scenario)
    assert ours["result"] == {"log": ["setup", "tool first"], "resource": "second"}
