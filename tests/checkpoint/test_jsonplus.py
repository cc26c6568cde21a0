"""``durable_debug.checkpoint.serde.jsonplus.JsonPlusSerializer`` next to LangGraph's own: the
same constructor and tags, durable_debug's format inside, a pickle only on request."""

from __future__ import annotations

import dataclasses
import json
import pickle
import threading
from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as LangGraphSerializer

import durable_debug
from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.serde import CorruptPayloadError, UnsupportedValueError
from durable_debug.checkpoint.serde.jsonplus import JsonPlusSerializer


class Unstorable:
    """No serializer format holds it (not a dataclass, model or Enum)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unstorable) and other.name == self.name

    __hash__ = None  # type: ignore[assignment]  # compared by value, never hashed


@pytest.mark.parametrize("value", [None, b"raw", bytearray(b"buf")])
def test_none_and_raw_bytes_take_langgraphs_tags(value: Any) -> None:
    ours = JsonPlusSerializer().dumps_typed(value)
    theirs = LangGraphSerializer().dumps_typed(value)
    assert (ours[0], bytes(ours[1])) == (theirs[0], bytes(theirs[1]))
    loaded = JsonPlusSerializer().loads_typed(ours)
    assert loaded == value and type(loaded) is type(value)


def test_other_values_round_trip_in_our_format() -> None:
    serde = JsonPlusSerializer()
    value = {"n": 1, "t": (1, 2), "s": {3}, "send": durable_debug.Send("w", {"x": 1})}
    kind, payload = serde.dumps_typed(value)
    assert kind == "msgpack"
    assert serde.loads_typed((kind, payload)) == value


def test_a_value_no_format_holds_is_refused_unless_pickle_fallback_is_on() -> None:
    with pytest.raises(UnsupportedValueError, match="Unstorable"):
        JsonPlusSerializer().dumps_typed(Unstorable("a"))
    ours = JsonPlusSerializer(pickle_fallback=True)
    theirs = LangGraphSerializer(pickle_fallback=True)
    kind, payload = ours.dumps_typed(Unstorable("a"))
    assert (kind, theirs.dumps_typed(Unstorable("a"))[0]) == ("pickle", "pickle")
    assert ours.loads_typed((kind, payload)) == Unstorable("a")
    # a pickle written by LangGraph loads too, when asked for
    assert ours.loads_typed(theirs.dumps_typed(Unstorable("b"))) == Unstorable("b")


def test_a_pickle_is_never_loaded_without_the_opt_in(tmp_path: Any) -> None:
    ran = tmp_path / "ran"
    hostile = pickle.dumps(_Hostile(str(ran)))
    for serde in (JsonPlusSerializer(), LangGraphSerializer()):
        with pytest.raises(NotImplementedError, match="pickle"):
            serde.loads_typed(("pickle", hostile))
    assert not ran.exists()


@dataclasses.dataclass
class _Hostile:
    path: str

    def __reduce__(self) -> Any:
        return (open, (self.path, "w"))


def test_legacy_json_of_langgraphs_own_types_loads_as_ours() -> None:
    def lc2(name: str, **kwargs: Any) -> bytes:
        body = {"lc": 2, "type": "constructor", "id": ["langgraph", "types", name]}
        return json.dumps({**body, "kwargs": kwargs}).encode()

    serde = JsonPlusSerializer()
    assert serde.loads_typed(("json", lc2("Send", node="n", arg={"a": 1}))) == durable_debug.Send(
        "n", {"a": 1}
    )
    command = serde.loads_typed(("json", lc2("Command", goto="n", update={"k": 1})))
    assert command == durable_debug.Command(goto="n", update={"k": 1})
    interrupt = serde.loads_typed(("json", lc2("Interrupt", value="v", id="abc")))
    assert interrupt == durable_debug.Interrupt(value="v", id="abc")


def test_legacy_json_naming_another_class_stays_data_and_imports_nothing() -> None:
    blob = {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": ["echo hi"]}
    serde = JsonPlusSerializer(allowed_json_modules=[("threading", "Thread")])
    assert serde.loads_typed(("json", json.dumps(blob).encode())) == blob
    # an allowed class of a module already imported is built from its arguments
    allowed = {"lc": 2, "type": "constructor", "id": ["threading", "Event"]}
    assert serde.loads_typed(("json", json.dumps(allowed).encode())) == allowed
    built = JsonPlusSerializer(allowed_json_modules=[("threading", "Event")]).loads_typed(
        ("json", json.dumps(allowed).encode())
    )
    assert isinstance(built, threading.Event)
    with pytest.raises(CorruptPayloadError, match="not valid JSON"):
        serde.loads_typed(("json", b"{nope"))


def test_langgraphs_hook_for_its_own_extension_codes_is_refused_with_what_to_do() -> None:
    with pytest.raises(TypeError, match="register_type"):
        JsonPlusSerializer(__unpack_ext_hook__=lambda code, data: None)


def test_a_saver_given_the_serializer_runs_a_graph_with_an_unstorable_value() -> None:
    from typing_extensions import TypedDict

    class State(TypedDict):
        thing: Any

    builder = durable_debug.StateGraph(State)
    builder.add_node("make", lambda s: {"thing": Unstorable("made")})
    builder.add_edge(durable_debug.START, "make")
    config = {"configurable": {"thread_id": "t"}}
    refusing = builder.compile(checkpointer=MemorySaver(serde=JsonPlusSerializer()))
    with pytest.raises(UnsupportedValueError, match="Unstorable"):
        refusing.invoke({"thing": None}, config)
    pickling = builder.compile(
        checkpointer=MemorySaver(serde=JsonPlusSerializer(pickle_fallback=True))
    )
    assert pickling.invoke({"thing": None}, config) == {"thing": Unstorable("made")}
    assert pickling.get_state(config).values == {"thing": Unstorable("made")}


def test_a_sqlite_thread_written_with_it_is_read_back_and_shown(tmp_path: Any) -> None:
    from typing_extensions import TypedDict

    from durable_debug.checkpoint.serde import MsgpackSerializer
    from durable_debug.checkpoint.sqlite import SqliteSaver

    class State(TypedDict):
        thing: Any
        raw: Any

    builder = durable_debug.StateGraph(State)
    builder.add_node("make", lambda s: {"thing": Unstorable("x"), "raw": b"\x00raw"})
    builder.add_node("clear", lambda s: {"raw": None})
    builder.add_edge(durable_debug.START, "make").add_edge("make", "clear")
    path = tmp_path / "threads.db"
    config = {"configurable": {"thread_id": "t"}}
    writing = SqliteSaver(path, serde=JsonPlusSerializer(pickle_fallback=True))
    builder.compile(checkpointer=writing).invoke({"thing": None, "raw": None}, config)
    reading = builder.compile(
        checkpointer=SqliteSaver(path, serde=JsonPlusSerializer(pickle_fallback=True))
    )
    values = [s.values for s in reading.get_state_history(config)]
    assert values[:3] == [
        {"thing": Unstorable("x"), "raw": None},
        {"thing": Unstorable("x"), "raw": b"\x00raw"},
        {"thing": None, "raw": None},
    ]
    # our default serializer reads the "null" and "bytes" blobs, and refuses the pickle
    plain = MsgpackSerializer()
    assert plain.loads_typed(("null", b"")) is None
    assert plain.loads_typed(("bytes", b"\x00raw")) == b"\x00raw"
    with pytest.raises(CorruptPayloadError, match="pickle_fallback=True"):
        plain.loads_typed(JsonPlusSerializer(pickle_fallback=True).dumps_typed(Unstorable("x")))
