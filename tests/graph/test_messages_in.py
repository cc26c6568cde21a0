"""Which messages stream mode "messages" finds in what a node takes or returns: a message, a
list, a dict's values, a dataclass's or pydantic model's fields, a Command's update, a list of
Commands — and nothing in anything else."""

from __future__ import annotations

import dataclasses

import pydantic
from langchain_core.messages import AIMessage, HumanMessage

from durable_debug import Command
from durable_debug.graph.chat_stream import messages_in

HI, YO = HumanMessage("hi", id="h"), AIMessage("yo", id="a")


@dataclasses.dataclass
class Turn:
    messages: list
    note: str = ""


class Model(pydantic.BaseModel):
    last: AIMessage
    count: int = 0


def ids(value: object) -> list[str | None]:
    return [m.id for m in messages_in(value)]


def test_messages_are_found_wherever_a_node_puts_them() -> None:
    assert ids(YO) == ["a"]
    assert ids([HI, "text", YO]) == ["h", "a"]
    assert ids({"messages": [HI, YO], "last": YO, "n": 1}) == ["h", "a", "a"]
    assert ids(Turn([HI, YO], note="x")) == ["h", "a"]
    assert ids(Model(last=YO)) == ["a"]
    assert ids(Command(update={"messages": [YO]})) == ["a"]
    assert ids([Command(update={"messages": [HI]}), Command(update={"last": YO})]) == ["h", "a"]


def test_nothing_is_found_in_other_values() -> None:
    assert ids("a string of text") == []
    assert ids(42) == []
    assert ids(None) == []
