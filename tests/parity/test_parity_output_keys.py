"""``output_keys=`` and ``print_mode=`` on ``invoke`` / ``stream``, as LangGraph honours them."""

from __future__ import annotations

from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity
from typing_extensions import TypedDict

pytestmark = pytest.mark.parity


class State(TypedDict, total=False):
    a: int
    b: int


def three_steps(api: Api) -> Any:
    """START → n1 (writes a and b) → n2 (writes nothing) → n3 (writes b)."""
    return (
        api.StateGraph(State)
        .add_node("n1", lambda s: {"a": 1, "b": 2})
        .add_node("n2", lambda s: None)
        .add_node("n3", lambda s: {"b": 3})
        .add_edge(api.START, "n1")
        .add_edge("n1", "n2")
        .add_edge("n2", "n3")
        .compile()
    )


def test_output_keys_select_what_invoke_and_stream_give():
    def scenario(api: Api, trace: Trace) -> None:
        g = three_steps(api)
        trace.note("invoke one key", g.invoke({"a": 0}, output_keys="b"))
        trace.note("invoke a list", g.invoke({"a": 0}, output_keys=["b"]))
        trace.note("updates one key", list(g.stream({"a": 0}, output_keys="b")))
        trace.note("updates a list", list(g.stream({"a": 0}, output_keys=["b"])))
        trace.note("updates other key", list(g.stream({"a": 0}, output_keys="a")))
        trace.note("values", list(g.stream({"a": 0}, stream_mode="values")))
        trace.note(
            "values one key", list(g.stream({"a": 0}, stream_mode="values", output_keys="a"))
        )
        trace.note(
            "values a list", list(g.stream({"a": 0}, stream_mode="values", output_keys=["b"]))
        )
        trace.note("invoke updates", g.invoke({"a": 0}, stream_mode="updates", output_keys="a"))

    ours = check_parity(scenario)
    assert ours["invoke one key"] == 3
    assert ours["values one key"] == [0, 1]


def test_print_mode_prints_chunks_without_yielding_them(capsys):
    def scenario(api: Api, trace: Trace) -> None:
        g = three_steps(api)
        capsys.readouterr()
        trace.note("streamed", list(g.stream({"a": 0}, stream_mode="values", print_mode="updates")))
        trace.note("printed by stream", capsys.readouterr().out)
        trace.note("invoked", g.invoke({"a": 0}, print_mode=["values"]))
        trace.note("printed by invoke", capsys.readouterr().out)

    ours = check_parity(scenario)
    assert "[updates]\x1b[0m {'n1': {'a': 1, 'b': 2}}" in ours["printed by stream"]


def test_unknown_output_key_is_refused():
    def scenario(api: Api, trace: Trace) -> None:
        with pytest.raises(ValueError, match="zz") as caught:
            three_steps(api).invoke({"a": 0}, output_keys="zz")
        trace.note("error type", type(caught.value).__name__)

    check_parity(scenario)
