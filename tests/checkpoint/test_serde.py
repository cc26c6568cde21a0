"""The serializer: every supported type round-trips; nothing else loads or saves."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import typing
import uuid
import zoneinfo
from pathlib import Path

import msgpack
import numpy as np
import pydantic
import pytest
from builders import child_checkpoint, config_for

from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    MsgpackSerializer,
    TypeRegistry,
    UnsupportedValueError,
    with_location,
)
from durable_debug.checkpoint.sqlite import SqliteSaver


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
    with pytest.raises(CorruptPayloadError, match="the blob is a pickle"):
        serde.loads_typed(("pickle", b"cos\nsystem\n"))
    with pytest.raises(CorruptPayloadError, match="unknown blob type tag 'shell'"):
        serde.loads_typed(("shell", b"ls"))
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
    with pytest.raises(TypeError, match="not a dataclass, pydantic model, Enum or namedtuple"):
        registry.register(dict)

    class Other(enum.Enum):
        A = 1

    registry.register(Color, name="color")
    with pytest.raises(ValueError, match="already registered for another class"):
        registry.register(Other, name="color")


CELL = """
import dataclasses, enum
from durable_debug import register_type

@register_type
@dataclasses.dataclass
class RerunCellTicket:
    id: int

@register_type
class RerunCellColor(enum.Enum):
    RED = "red"
"""


def test_register_type_again_after_rerunning_the_cell_that_defines_the_class() -> None:
    first: dict = {"__name__": "__main__"}
    exec(CELL, first)  # the notebook cell, run once…
    old_ticket = first["RerunCellTicket"](1)
    again: dict = {"__name__": "__main__"}
    exec(CELL, again)  # …and run again: new class objects under the same names
    new_cls = again["RerunCellTicket"]
    assert new_cls is not type(old_ticket)
    serde = MsgpackSerializer()
    loaded = serde.loads_typed(serde.dumps_typed([new_cls(2), old_ticket]))
    assert [type(v) for v in loaded] == [new_cls, new_cls]  # the newest class wins
    assert [v.id for v in loaded] == [2, 1]
    color = serde.loads_typed(serde.dumps_typed(first["RerunCellColor"].RED))
    assert color is again["RerunCellColor"].RED


def test_a_different_class_under_a_taken_name_is_still_refused() -> None:
    registry = TypeRegistry()
    registry.register(Ticket, name="ticket")

    @dataclasses.dataclass
    class Ticket2:
        id: int

    with pytest.raises(ValueError, match="'ticket' is already registered.*test_serde.Ticket;"):
        registry.register(Ticket2, name="ticket")


class Point(typing.NamedTuple):
    x: int
    y: int


def test_types_that_used_to_change_on_a_round_trip_keep_them(tmp_path: Path) -> None:
    registry = TypeRegistry()
    registry.register(Point)
    serde = MsgpackSerializer(registry)
    new_york = zoneinfo.ZoneInfo("America/New_York")
    value = {
        "zoned": dt.datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=new_york),  # the second 1:30
        "buffer": bytearray(b"\x00ab"),
        "ordered": collections.OrderedDict([("z", 1), ("a", collections.OrderedDict(b=2))]),
        "point": Point(1, 2),
    }
    with SqliteSaver(str(tmp_path / "c.db"), serde=serde) as saver:
        cp, versions = child_checkpoint(None, value)
        tup = saver.get_tuple(saver.put(config_for("t"), cp, {}, versions))
    assert tup is not None
    loaded = tup.checkpoint["channel_values"]
    assert loaded == value
    assert loaded["zoned"].tzinfo is new_york and loaded["zoned"].fold == 1
    assert loaded["zoned"].utcoffset() == dt.timedelta(hours=-5)
    assert type(loaded["buffer"]) is bytearray
    assert type(loaded["ordered"]) is collections.OrderedDict
    assert list(loaded["ordered"]) == ["z", "a"]
    assert type(loaded["ordered"]["a"]) is collections.OrderedDict
    assert type(loaded["point"]) is Point and loaded["point"].y == 2


class Shifted(dt.tzinfo):
    def utcoffset(self, when: object) -> dt.timedelta:
        return dt.timedelta(hours=1)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (Point(1, 2), r"namedtuple .*Point is not registered.*register_type\(Point\).*tuple\("),
        (np.float64(1.5), r"numpy.float64 .*x.item\(\)"),
        (np.int64(3), r"numpy.int64 .*x.item\(\)"),
        (np.zeros(2), r"numpy.ndarray .*x.tolist\(\)"),
        (dt.datetime(2026, 1, 1, tzinfo=Shifted()), "time zone .*Shifted.*zoneinfo.ZoneInfo"),
        (dt.time(1, tzinfo=zoneinfo.ZoneInfo("UTC")), "time with the time zone"),
        (memoryview(b"x"), r"memoryview cannot be saved.*bytes\(\.\.\.\)"),
    ],
    ids=["namedtuple", "np.float64", "np.int64", "ndarray", "tzinfo", "zoned-time", "memoryview"],
)
def test_types_that_cannot_be_kept_are_refused_with_what_to_do(value: object, message: str) -> None:
    with pytest.raises(UnsupportedValueError, match=message):
        MsgpackSerializer(TypeRegistry()).dumps_typed({"v": value})


def test_a_stored_namedtuple_or_zone_loads_only_what_is_known() -> None:
    serde = MsgpackSerializer(TypeRegistry())
    point = msgpack.packb(msgpack.ExtType(16, msgpack.packb(["os.system", [1, 2]])))
    with pytest.raises(CorruptPayloadError, match="namedtuple named 'os.system' that is not"):
        serde.loads(point)
    zone = msgpack.packb(msgpack.ExtType(13, msgpack.packb(["2026-01-01T00:00", "../../etc", 0])))
    with pytest.raises(CorruptPayloadError, match="time zone '../../etc'.*does not know"):
        serde.loads(zone)


def test_bytearrays_inside_containers_and_dataclasses_keep_their_type() -> None:
    registry = TypeRegistry()
    registry.register(Ticket)
    serde = MsgpackSerializer(registry)
    value = [{"k": (bytearray(b"a"),)}, Ticket(1, (bytearray(b"b"), b"c"))]
    loaded = serde.loads(serde.dumps(value))
    assert loaded == value
    assert type(loaded[0]["k"][0]) is bytearray and type(loaded[1].tags[0]) is bytearray
    assert type(loaded[1].tags[1]) is bytes
    assert type(value[0]["k"][0]) is bytearray  # the saved value is left as it was


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        (b"\xa5ab", "incomplete input"),  # a 5-byte string cut after 2
        (b"\x01\x02", "extra data"),  # a scalar, then more bytes
        (b"\xd9\x02\xff\xfe", "utf-8"),  # a string that is not UTF-8
        (b"\xcd\x01", "incomplete input"),  # a uint16 cut short
    ],
    ids=["cut-string", "trailing", "not-utf8", "cut-int"],
)
def test_a_damaged_scalar_blob_is_a_clear_error(payload: bytes, detail: str) -> None:
    serde = SqliteSaver().serde
    with pytest.raises(CorruptPayloadError, match=f"(?i)not valid serialized data.*{detail}"):
        serde.loads_typed(("msgpack", payload))


@pytest.mark.parametrize("value", [0, 127, -32, -(2**63), 2**64 - 1, 0.5, "", "é" * 40, None, True])
def test_a_scalar_blob_loads_as_the_value_it_was(value: object) -> None:
    serde = SqliteSaver().serde
    loaded = serde.loads_typed(serde.dumps_typed(value))
    assert loaded == value and type(loaded) is type(value)


_NOT_GIVEN: object = object()


@dataclasses.dataclass(frozen=True)
class WithSentinel:
    name: str
    answer: object = _NOT_GIVEN


def test_a_dataclass_field_left_at_its_sentinel_default_is_not_saved() -> None:
    serde = MsgpackSerializer()
    registry = TypeRegistry()
    registry.register(WithSentinel)
    reading = MsgpackSerializer(registry)
    loaded = reading.loads_typed(serde.dumps_typed(WithSentinel("q")))
    assert loaded == WithSentinel("q")
    assert loaded.answer is _NOT_GIVEN
    assert reading.loads_typed(serde.dumps_typed(WithSentinel("q", 42))) == WithSentinel("q", 42)
    # any other object in the field is still refused, naming its type
    with pytest.raises(UnsupportedValueError, match="builtins.object"):
        serde.dumps_typed(WithSentinel("q", object()))
