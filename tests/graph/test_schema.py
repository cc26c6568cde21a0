"""State schemas (TypedDict, dataclass, pydantic) and what nodes may return."""

from __future__ import annotations

import operator
import warnings
from dataclasses import dataclass, field
from typing import Annotated

import pydantic
import pytest
from graph_support import LogState, cfg, checkpoint_count
from typing_extensions import TypedDict

from durable_debug import START, DurableDebugWarning, InvalidUpdateError, MemorySaver, StateGraph
from durable_debug.inspect import findings


@dataclass
class DcState:
    name: str = "anon"
    visits: Annotated[list, operator.add] = field(default_factory=list)


class PydState(pydantic.BaseModel):
    name: str = "anon"
    visits: Annotated[list, operator.add] = []


@pytest.mark.parametrize("schema", [DcState, PydState])
def test_dataclass_and_pydantic_states_reach_nodes_as_instances(schema: type) -> None:
    seen = []

    def greet(state: DcState | PydState) -> dict:
        seen.append(type(state))
        return {"visits": [f"hello {state.name}"]}

    g = (
        StateGraph(schema)
        .add_node("greet", greet)
        .add_node("again", greet)
        .add_edge(START, "greet")
        .add_edge("greet", "again")
        .compile(checkpointer=MemorySaver())
    )
    out = g.invoke({"name": "ada"}, cfg("s"))
    assert out == {"name": "ada", "visits": ["hello ada", "hello ada"]}
    assert seen == [schema, schema]


def test_node_returning_a_non_dict_names_the_node_and_saves_nothing_new(saver: MemorySaver) -> None:
    def bad(state: dict) -> int:
        return 5

    g = StateGraph(LogState).add_node("bad", bad).add_edge(START, "bad").compile(checkpointer=saver)
    with pytest.raises(
        InvalidUpdateError, match=r"Node 'bad' returned int 5, but a node must return a dict"
    ):
        g.invoke({"value": "x", "log": []}, cfg("t"))
    # the input and the first loop checkpoint exist; no checkpoint after the failing step
    assert [s.metadata["step"] for s in g.get_state_history(cfg("t"))] == [0, -1]
    assert g.get_state(cfg("t")).next == ("bad",)
    assert "InvalidUpdateError" in g.get_state(cfg("t")).tasks[0].error


def test_write_to_a_key_the_schema_lacks_is_dropped_with_a_finding(saver: MemorySaver) -> None:
    """LangGraph drops such a write silently; we drop it too, warn once, and record a finding
    naming node and key; ``strict=True`` raises instead."""

    def typo(state: dict) -> dict:
        return {"vlaue": "oops"}

    def build(strict: bool):  # type: ignore[no-untyped-def]
        return (
            StateGraph(LogState)
            .add_node("typo", typo)
            .add_edge(START, "typo")
            .compile(checkpointer=saver, strict=strict)
        )

    with pytest.raises(
        InvalidUpdateError, match=r"Node 'typo' wrote key 'vlaue'.*its keys: value, log"
    ):
        build(True).invoke({"value": "x", "log": []}, cfg("strict"))
    assert build(True).get_state(cfg("strict")).values == {"value": "x", "log": []}

    g = build(False)
    with pytest.warns(DurableDebugWarning, match=r"Node 'typo' wrote key 'vlaue'"):
        assert g.invoke({"value": "x", "log": []}, cfg("t")) == {"value": "x", "log": []}
    last = g.get_state(cfg("t"))
    assert last.next == ()
    found = findings(g, cfg("t"))
    assert list(found) == [last.config["configurable"]["checkpoint_id"]]
    (finding,) = found[last.config["configurable"]["checkpoint_id"]]
    assert (finding.code, finding.node, finding.key) == ("unknown-key", "typo", "vlaue")
    assert "dropped" in finding.message
    # warned once per graph and site, not once per run
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g.invoke({"value": "y", "log": []}, cfg("t2"))
    assert not [w for w in caught if issubclass(w.category, DurableDebugWarning)]
    assert len(findings(g, cfg("t2"))) == 1


def test_input_with_an_unknown_key_is_dropped_with_a_finding(saver: MemorySaver) -> None:
    """LangGraph drops the key and runs; strict refuses it before anything is saved."""

    def build(strict: bool):  # type: ignore[no-untyped-def]
        return (
            StateGraph(LogState)
            .add_node("a", lambda s: {})
            .add_edge(START, "a")
            .compile(checkpointer=saver, strict=strict)
        )

    with pytest.raises(InvalidUpdateError, match="The graph input wrote key 'zz'"):
        build(True).invoke({"value": "x", "zz": 1}, cfg("t"))
    assert checkpoint_count(saver) == 0

    g = build(False)
    with pytest.warns(DurableDebugWarning, match="The graph input wrote key 'zz'"):
        assert g.invoke({"value": "x", "zz": 1}, cfg("t")) == {"value": "x", "log": []}
    first = list(g.get_state_history(cfg("t")))[-1]
    assert first.metadata["source"] == "input"
    (found,) = findings(g, cfg("t")).items()
    assert found[0] == first.config["configurable"]["checkpoint_id"]
    assert [(f.code, f.node, f.key) for f in found[1]] == [("unknown-key", None, "zz")]


def test_reducer_is_the_last_two_argument_callable_in_annotated() -> None:
    class S(TypedDict):
        total: Annotated[int, "a note", operator.add]

    g = (
        StateGraph(S)
        .add_node("one", lambda s: {"total": 1})
        .add_node("two", lambda s: {"total": 2})
    )
    g.add_edge(START, "one").add_edge(START, "two")
    out = g.compile().invoke({"total": 10})
    assert out == {"total": 13}
