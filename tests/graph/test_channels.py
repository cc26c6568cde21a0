"""Channels: what one step's writes do to a key."""

from __future__ import annotations

import operator

import pytest

from durable_debug import InvalidUpdateError
from durable_debug.graph.channels import (
    MISSING,
    BinaryOperatorAggregate,
    Channel,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Topic,
)


def test_last_value_keeps_one_write_and_refuses_two() -> None:
    ch = LastValue("single")
    assert ch.update(["a"]) and ch.get() == "a"
    with pytest.raises(InvalidUpdateError) as err:
        ch.update(["b", "c"])
    assert str(err.value) == (
        "At key 'single': Can receive only one value per step. "
        "Use an Annotated key to handle multiple values."
    )
    assert ch.get() == "a"


def test_reducer_folds_in_order_from_its_empty_value() -> None:
    ch = BinaryOperatorAggregate("log", operator.add, list)
    assert ch.get() == []
    ch.update([["x"], ["y"]])
    assert ch.get() == ["x", "y"]
    untyped = BinaryOperatorAggregate("anything", operator.add, None)
    assert untyped.get() is MISSING
    untyped.update([1, 2])
    assert untyped.get() == 3


def test_ephemeral_value_lasts_one_step() -> None:
    ch = EphemeralValue("branch:to:a")
    assert ch.update([None]) and ch.is_available()
    assert ch.update([]) and not ch.is_available()
    assert not ch.update([])


def test_barrier_opens_when_every_source_wrote_and_resets_when_consumed() -> None:
    ch = NamedBarrierValue("join:a+b:c", ["a", "b"])
    ch.update(["a"])
    assert not ch.is_available()
    ch.update(["b"])
    assert ch.is_available()
    assert ch.consume() and not ch.is_available()
    with pytest.raises(InvalidUpdateError, match="'x' is not one of the joined nodes"):
        ch.update(["x"])


@pytest.mark.parametrize(
    "channel",
    [
        LastValue("v"),
        BinaryOperatorAggregate("log", operator.add, list),
        EphemeralValue("e"),
        Topic("t"),
        NamedBarrierValue("join", ["a", "b"]),
    ],
    ids=lambda ch: type(ch).__name__,
)
def test_copy_keeps_every_slot_and_shares_the_value(channel: Channel) -> None:
    channel.update(["a"] if not isinstance(channel, BinaryOperatorAggregate) else [["a"]])
    copy = channel.copy()
    assert type(copy) is type(channel)
    slots = {slot for cls in type(channel).__mro__ for slot in getattr(cls, "__slots__", ())}
    assert {s: getattr(copy, s) for s in slots} == {s: getattr(channel, s) for s in slots}
    assert copy.value is channel.value
