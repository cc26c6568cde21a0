"""The lean paths of a step's bookkeeping give what the general ones give."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict
from xxhash import xxh3_128_hexdigest

from durable_debug import START, StateGraph
from durable_debug.checkpoint.base import new_checkpoint_id
from durable_debug.graph.algo import Task, apply_writes, prepare_tasks, restore_channels
from durable_debug.graph.ids import (
    checkpoint_key,
    node_namespace,
    pull_id,
    pull_id_tail,
    pull_task_id,
)
from durable_debug.graph.schema import StateSchema
from durable_debug.graph.types import InvalidUpdateError


class State(TypedDict):
    value: int
    trail: Annotated[list[str], operator.add]


def _graph() -> Any:
    def a(state: State) -> dict[str, Any]:
        return {}

    return (
        StateGraph(State)
        .add_node("a", a)
        .add_node("b", a)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
    )


@pytest.mark.parametrize("namespace", ["", "outer:1234|inner"])
def test_a_pull_id_from_its_parts_is_langgraphs(namespace: str) -> None:
    checkpoint_id = new_checkpoint_id()
    triggers = ["branch:to:b", "a"]
    # LangGraph's: xxh3-128 of the id's 16 bytes then its parts, shaped as a UUID
    parts = (node_namespace(namespace, "n"), "7", "n", "__pregel_pull", "a", "branch:to:b")
    h = xxh3_128_hexdigest(bytes.fromhex(checkpoint_id.replace("-", "")) + "".join(parts).encode())
    expected = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    key = checkpoint_key(checkpoint_id)
    tail = pull_id_tail("n", triggers)
    assert pull_id(key, node_namespace(namespace, "n"), 7, tail) == expected
    assert pull_task_id(checkpoint_id, namespace, 7, "n", triggers) == expected


def test_take_input_hands_over_the_dict_to_input_would_copy() -> None:
    schema = StateSchema(State)
    values = {"value": 1, "trail": []}
    assert schema.take_input(values) is values
    mixed = {"value": 1, "other": 2}  # a key of another schema: filtered, as to_input does
    assert schema.take_input(mixed) == schema.to_input(mixed) == {"value": 1}


def test_tasks_reading_the_state_get_inputs_of_their_own() -> None:
    graph = _graph()
    channels = restore_channels(graph, {"channel_values": {}})  # type: ignore[typeddict-item]
    channels["value"].value = 3
    channels["branch:to:a"].value = channels["branch:to:b"].value = None
    checkpoint = {
        "id": new_checkpoint_id(),
        "channel_versions": {"branch:to:a": "1", "branch:to:b": "1", "value": "1"},
        "versions_seen": {},
    }
    first, second = prepare_tasks(graph, checkpoint, channels, 0, for_execution=True)  # type: ignore[arg-type]
    assert first.input == second.input == {"value": 3, "trail": []}
    assert first.input is not second.input
    first.input["value"] = 99  # a node changing its input changes no other task's
    assert second.input["value"] == 3


def _lone_step(writes: list[tuple[str, Any]]) -> tuple[dict[str, Any], set[str]]:
    graph = _graph()
    channels = restore_channels(graph, {"channel_values": {}})  # type: ignore[typeddict-item]
    channels["branch:to:a"].value = None
    checkpoint = {
        "id": new_checkpoint_id(),
        "channel_versions": {"branch:to:a": "00000000000000000000000000000001.aa"},
        "versions_seen": {},
    }
    task = Task("t", "a", ("__pregel_pull", "a"), graph.nodes["a"], ("branch:to:a",))
    task.writes = writes
    _, _, updated = apply_writes(graph, checkpoint, channels, [task], new_checkpoint_id())  # type: ignore[arg-type]
    return graph.read_state(channels), updated


def test_a_lone_task_writing_a_reducer_key_twice_folds_both_in_one_update() -> None:
    state, updated = _lone_step([("trail", ["x"]), ("value", 1), ("trail", ["y"])])
    assert state == {"value": 1, "trail": ["x", "y"]}
    assert updated == {"trail", "value", "branch:to:a"}


def test_a_lone_task_writing_a_plain_key_twice_fails_as_langgraph() -> None:
    with pytest.raises(InvalidUpdateError, match="Can receive only one value per step"):
        _lone_step([("value", 1), ("value", 2)])


def test_a_lone_tasks_write_to_an_unknown_channel_is_left_out() -> None:
    state, updated = _lone_step([("value", 1), ("nowhere", 2), ("branch:to:b", None)])
    assert state == {"value": 1, "trail": []}
    assert updated == {"value", "branch:to:a", "branch:to:b"}
