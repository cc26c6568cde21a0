"""The serializer: every supported type round-trips; nothing else loads or saves."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import uuid

import msgpack
import pydantic
import pytest

from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    TypeRegistry,
    UnsupportedValueError,
    with_location,
)


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Ticket:
    id: int
    tags: tuple


class Model(pydantic.BaseModel):
    name: str
    when: dt.date


@pytest.fixture
def serde() -> MsgpackSerializer:
    registry = TypeRegistry()
    for cls in (Color, Ticket, Model):
        registry.register(cls)
    return MsgpackSerializer(registry)


def test_builtin_and_registered_types_round_trip(serde: MsgpackSerializer) -> None:
    value = {
        "s": "x",
        "i": -(2**63),
        "f": 1.5,
        "b": b"\x00bytes",
        "none": None,
        "list": [1, [2, 3]],
        "tuple": (1, (2, "x")),
        "set": {3, 1},
        "frozen": frozenset({"a"}),
        "dt": dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc),
        "naive": dt.datetime(2026, 1, 2),
        "date": dt.date(2026, 1, 2),
        "time": dt.time(1, 2, 3),
        "td": dt.timedelta(days=1, seconds=2, microseconds=3),
        "uuid": uuid.UUID(int=7),
        "dec": decimal.Decimal("1.10"),
        "enum": Color.RED,
        "dc": Ticket(1, ("a",)),
        "model": Model(name="n", when=dt.date(2026, 5, 1)),
        7: "int key",
    }
    loaded = serde.loads_typed(serde.dumps_typed(value))
    assert loaded == value
    assert type(loaded["tuple"][1]) is tuple and type(loaded["dc"]) is Ticket


def test_unknown_types_are_refused_when_saving() -> None:
    serde = MsgpackSerializer(TypeRegistry())
    with pytest.raises(UnsupportedValueError, match="type builtins.object cannot be saved"):
        serde.dumps_typed({"x": object()})
    with pytest.raises(UnsupportedValueError, match="does not fit in 64 bits"):
        serde.dumps_typed(2**80)


def test_hostile_payload_naming_a_function_executes_nothing(serde: MsgpackSerializer) -> None:
    hostile = msgpack.packb(
        msgpack.ExtType(11, msgpack.packb(["os.system", {"cmd": "touch /tmp/pwned"}]))
    )
    assert serde.loads_typed(("msgpack", hostile)) == {
        "__type__": "os.system",
        "cmd": "touch /tmp/pwned",
    }
    qualified = msgpack.packb(msgpack.ExtType(10, msgpack.packb(["posix:system", "ls"])))
    assert serde.loads_typed(("msgpack", qualified)) == {"__type__": "posix.system", "value": "ls"}
    with pytest.raises(CorruptPayloadError, match="unknown extension type 99"):
        serde.loads_typed(("msgpack", msgpack.packb(msgpack.ExtType(99, b""))))
    with pytest.raises(CorruptPayloadError, match="unknown blob type tag 'pickle'"):
        serde.loads_typed(("pickle", b"cos\nsystem\n"))
    with pytest.raises(CorruptPayloadError, match="not valid serialized data"):
        serde.loads_typed(("msgpack", b"\xc1"))


def test_errors_say_where_they_happened(serde: MsgpackSerializer) -> None:
    with (
        pytest.raises(CorruptPayloadError) as err,
        with_location(thread="t1", checkpoint="c9", channel="log"),
    ):
        serde.loads_typed(("msgpack", b"\xc1"))
    assert str(err.value).startswith("thread 't1', checkpoint 'c9', channel 'log': ")


def test_registration_accepts_only_data_classes() -> None:
    registry = TypeRegistry()
    with pytest.raises(TypeError, match="not a dataclass, pydantic model or Enum"):
        registry.register(dict)

    class Other(enum.Enum):
        A = 1

    registry.register(Color, name="color")
    with pytest.raises(ValueError, match="already registered for another class"):
        registry.register(Other, name="color")
