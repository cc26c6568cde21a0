"""Chat messages and other pydantic models in blobs: rebuilt exactly as ``model_construct``
builds them (the common case without its per-field work), in the stored layout of before, and
never sharing anything with the value that was saved or with another load."""

from __future__ import annotations

import datetime as dt
from typing import Any

import msgpack
import pydantic
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from durable_debug.checkpoint.serde import (
    CorruptPayloadError,
    Limits,
    MsgpackSerializer,
    TypeRegistry,
    UnsupportedValueError,
    nesting_depth,
)

PYDANTIC = 12
"""The extension code of a pydantic model (checkpoint/serde/__init__.py)."""


def chat() -> list[Any]:
    named = HumanMessage("hi", id="h1", name="ann")
    extra = AIMessage("with an extra field", id="a2")
    extra.mood = "glad"  # LangChain messages keep extra fields
    return [
        SystemMessage("be brief", id="s0"),
        named,
        AIMessage(
            "",
            id="a1",
            tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}],
            response_metadata={"model": "m", "tokens": [1, 2]},
        ),
        ToolMessage("found", tool_call_id="c1", id="t1"),
        extra,
        AIMessageChunk("part", id="k1"),
        AIMessage("no id"),
    ]


def serde() -> MsgpackSerializer:
    return MsgpackSerializer(TypeRegistry())


def test_messages_load_as_model_construct_builds_them() -> None:
    saved = chat()
    loaded = serde().loads(serde().dumps(saved))
    assert loaded == saved
    for before, after in zip(saved, loaded, strict=True):
        fields = {**before.__dict__, **(before.__pydantic_extra__ or {})}
        expected = type(before).model_construct(**fields)
        assert type(after) is type(before)
        assert after.__dict__ == expected.__dict__
        assert list(after.__dict__) == list(expected.__dict__)
        assert after.__pydantic_fields_set__ == expected.__pydantic_fields_set__
        assert after.__pydantic_extra__ == expected.__pydantic_extra__
        assert after.__pydantic_private__ == expected.__pydantic_private__
    assert loaded[4].mood == "glad"


def test_the_stored_layout_of_a_message_is_unchanged() -> None:
    message = AIMessage("hello", id="a1")
    name = f"{AIMessage.__module__}:{AIMessage.__qualname__}"
    by_hand = msgpack.packb(
        [msgpack.ExtType(PYDANTIC, msgpack.packb([name, message.__dict__], use_bin_type=True))],
        use_bin_type=True,
    )
    assert serde().dumps([message]) == by_hand
    assert serde().loads(by_hand) == [message]


def stored_message(fields: dict[str, Any], cls: type = AIMessage) -> bytes:
    name = f"{cls.__module__}:{cls.__qualname__}"
    return msgpack.packb([msgpack.ExtType(PYDANTIC, msgpack.packb([name, fields]))])


def test_a_message_stored_with_missing_or_more_fields_is_rebuilt_by_model_construct() -> None:
    missing = serde().loads(stored_message({"content": "x", "type": "ai"}))[0]
    assert type(missing) is AIMessage
    assert missing.id is None and missing.tool_calls == []  # defaults, as model_construct fills
    assert missing.__pydantic_fields_set__ == {"content", "type"}
    fields = {**AIMessage("y", id="a").__dict__, "mood": "calm"}
    more = serde().loads(stored_message(fields))[0]
    assert more.content == "y" and more.__pydantic_extra__ == {"mood": "calm"}
    reordered = dict(reversed(list(AIMessage("z", id="b").__dict__.items())))
    again = serde().loads(stored_message(reordered))[0]
    assert again == AIMessage("z", id="b") and list(again.__dict__) == list(AIMessage.model_fields)


def test_a_message_blob_with_fields_that_are_not_a_map_is_a_clear_error() -> None:
    name = f"{AIMessage.__module__}:{AIMessage.__qualname__}"
    for fields in (["content"], 5, {1: "x"}):
        payload = msgpack.packb([msgpack.ExtType(PYDANTIC, msgpack.packb([name, fields]))])
        with pytest.raises(CorruptPayloadError):
            serde().loads(payload)


class Aliased(pydantic.BaseModel):
    value: int = pydantic.Field(alias="v")


class WithPostInit(pydantic.BaseModel):
    value: int
    _seen: list[int] = pydantic.PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any) -> None:
        self._seen.append(self.value)


class OwnConstruct(pydantic.BaseModel):
    value: int

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Any:
        built = super().model_construct(_fields_set, **values)
        object.__setattr__(built, "value", built.value + 1)
        return built


class OwnNew(pydantic.BaseModel):
    value: int

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        made = super().__new__(cls)
        object.__setattr__(made, "__pydantic_private__", None)
        return made


@pytest.mark.parametrize("cls", [Aliased, WithPostInit, OwnConstruct, OwnNew])
def test_models_with_aliases_post_init_or_their_own_construct_keep_model_construct(
    cls: type[pydantic.BaseModel],
) -> None:
    registry = TypeRegistry()
    registry.register(cls)
    s = MsgpackSerializer(registry)
    saved = cls.model_construct(value=3)
    loaded = s.loads(s.dumps(saved))
    expected = cls.model_construct(**saved.__dict__)
    assert type(loaded) is cls and loaded.__dict__ == expected.__dict__
    assert loaded.__pydantic_private__ == expected.__pydantic_private__
    if cls is WithPostInit:
        assert loaded._seen == [3]  # type: ignore[attr-defined]


def test_loaded_messages_share_nothing_with_the_saved_ones_or_each_other() -> None:
    saved = chat()
    s = serde()
    blob = s.dumps(saved)
    first, second = s.loads(blob), s.loads(blob)
    first[2].tool_calls[0]["args"]["q"] = "changed"
    first[2].response_metadata["tokens"].append(3)
    first[1].content = "changed"
    saved[0].additional_kwargs["later"] = True
    assert second == s.loads(blob)
    assert second[2].tool_calls[0]["args"]["q"] == "x"
    assert second[2].response_metadata["tokens"] == [1, 2] and second[1].content == "hi"
    assert "later" not in second[0].additional_kwargs
    assert first[1].__pydantic_fields_set__ is not second[1].__pydantic_fields_set__


@pytest.mark.parametrize(
    ("value", "depth"),
    [
        ([], 1),
        ([[]], 2),
        ([{}, ()], 2),
        ({"a": [[], {}]}, 3),
        ([[[]], []], 3),
        ([[], [[{}]]], 4),
        ([AIMessage("x")], 3),  # list, message, its empty dicts and lists
        ({"k": [AIMessage("x", additional_kwargs={"a": [1]})]}, 5),
    ],
)
def test_nesting_depth_counts_empty_containers_as_a_level(value: Any, depth: int) -> None:
    serde().dumps(value)  # a model class saved before is walked by its fields
    assert nesting_depth(value, 128) == depth


class Loose(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    name: str


def test_the_extra_fields_of_a_model_count_when_saving() -> None:
    registry = TypeRegistry()
    registry.register(Loose)
    s = MsgpackSerializer(registry, limits=Limits(max_depth=8))
    deep: Any = 1
    for _ in range(10):
        deep = [deep]
    with pytest.raises(UnsupportedValueError, match="deeper than the limit of 8"):
        s.dumps(Loose(name="x", payload=deep))
    buffer = s.loads(s.dumps([Loose(name="y", data=bytearray(b"\x00"))]))[0]
    assert type(buffer.data) is bytearray and buffer.data == bytearray(b"\x00")


class Stamped(pydantic.BaseModel):
    when: Any


def test_a_message_list_is_stored_as_the_general_encoding_stores_it() -> None:
    registry = TypeRegistry()
    registry.register(Stamped)
    s = MsgpackSerializer(registry)
    messages = chat()

    def by_hand(items: list[Any]) -> bytes:
        values = []
        for item in items:
            name = (
                registry.name_of(type(item)) or f"{type(item).__module__}:{type(item).__qualname__}"
            )
            fields = {**item.__dict__, **(item.__pydantic_extra__ or {})}
            payload = msgpack.packb([name, fields], use_bin_type=True)
            values.append(msgpack.ExtType(PYDANTIC, payload))
        return msgpack.packb(values, use_bin_type=True)

    assert s.dumps(messages) == by_hand(messages)
    # a field that is not plain data, or an item that is not a model: the general way
    stamped = [AIMessage("a", id="1"), Stamped(when=dt.date(2026, 12, 2))]
    assert s.loads(s.dumps(stamped)) == stamped
    mixed = [AIMessage("a", id="1"), {"role": "user", "content": "b"}, ("t", 1)]
    assert s.loads(s.dumps(mixed)) == mixed
    tagged = [AIMessage("a", id="1", additional_kwargs={"raw": bytearray(b"\x01")})]
    loaded = s.loads(s.dumps(tagged))
    assert type(loaded[0].additional_kwargs["raw"]) is bytearray


def message_lists() -> list[list[Any]]:
    """Message lists of the shapes loading tells apart when it bounds their depth."""
    plain = [HumanMessage("hi", id="h"), SystemMessage("s", id="s")]
    nested = AIMessage("x", id="n", additional_kwargs={"a": [[{"b": [(1, 2)]}]]})
    return [
        plain,
        [*plain, AIMessage("x", id="a")],
        chat(),
        [*plain, nested],
        [HumanMessage("ü" * 300, id="u"), *plain],  # bytes that look like container headers
        [HumanMessage([{"type": "text", "text": "a list content"}], id="c")],
        [plain[0], {"role": "user", "content": [[["deep"]]]}],
        [[plain[0]], plain[1]],
    ]


@pytest.mark.parametrize("messages", message_lists())
def test_a_loaded_message_list_is_held_to_the_depth_limit_exactly(messages: list[Any]) -> None:
    """Loading a message list may skip walking it for its depth (quicker) only when its bytes
    prove it shallow enough: the limit still holds exactly at the depth the walk finds."""
    saved = serde().dumps(messages)
    depth = nesting_depth(messages, 128)
    at_limit = MsgpackSerializer(TypeRegistry(), limits=Limits(max_depth=depth))
    assert at_limit.loads(saved) == messages
    for room in range(1, 8):  # where the bytes prove it shallow enough, or not yet
        roomy = MsgpackSerializer(TypeRegistry(), limits=Limits(max_depth=depth + room))
        assert roomy.loads(saved) == messages
    below = MsgpackSerializer(TypeRegistry(), limits=Limits(max_depth=depth - 1))
    with pytest.raises(CorruptPayloadError, match=f"deeper than the limit of {depth - 1}"):
        below.loads(saved)


def test_long_message_lists_and_lists_that_only_start_with_a_message_load_exactly() -> None:
    """A list of messages loads in two msgpack calls; anything else in the list (an item that
    is not a message, a field holding an extension value, a name loading does not know) takes
    the general way, with the same result."""
    s = serde()
    long = [HumanMessage(f"turn {i}", id=f"h{i}") for i in range(70_000)]  # an array 32 header
    assert s.loads(s.dumps(long)) == long
    first = HumanMessage("hi", id="h")
    stamped = AIMessage("a", id="a", additional_kwargs={"at": dt.datetime(2026, 12, 5, 10)})
    for value in (
        [first, None],
        [first, [first]],
        [first, "text"],
        [first, stamped],
        [first, ("t", 1)],
        [first, {"role": "user", "content": "b"}],
    ):
        loaded = s.loads(s.dumps(value))
        assert loaded == value and type(loaded[-1]) is type(value[-1])
    ghost = msgpack.ExtType(PYDANTIC, msgpack.packb(["nowhere.module:Ghost", {"content": "x"}]))
    known = msgpack.ExtType(PYDANTIC, msgpack.packb([f"{AIMessage.__module__}:AIMessage", {}]))
    loaded = s.loads(msgpack.packb([known, ghost]))
    assert type(loaded[0]) is AIMessage
    assert loaded[1] == {"__type__": "nowhere.module.Ghost", "content": "x"}


def test_a_message_list_with_a_malformed_item_is_a_clear_error() -> None:
    name = f"{AIMessage.__module__}:{AIMessage.__qualname__}"
    good = msgpack.ExtType(PYDANTIC, msgpack.packb([name, AIMessage("a").__dict__]))
    for bad in ([name], [name, {"content": "x"}, 3], "just a name"):
        payload = msgpack.packb([good, msgpack.ExtType(PYDANTIC, msgpack.packb(bad))])
        with pytest.raises(CorruptPayloadError):
            serde().loads(payload)


def test_a_message_list_without_extra_fields_is_stored_in_the_same_layout() -> None:
    """Messages without extra fields are packed in one pass over the list; the bytes are those
    of the message-by-message layout, and a message built without pydantic's slots is packed
    message by message."""
    messages = [m for m in chat() if not m.__pydantic_extra__]
    name = {type(m): f"{type(m).__module__}:{type(m).__qualname__}" for m in messages}
    by_hand = msgpack.packb(
        [
            msgpack.ExtType(PYDANTIC, msgpack.packb([name[type(m)], m.__dict__], use_bin_type=True))
            for m in messages
        ],
        use_bin_type=True,
    )
    assert serde().dumps(messages) == by_hand
    bare = AIMessage.__new__(AIMessage)
    object.__setattr__(bare, "__dict__", dict(AIMessage("b", id="b").__dict__))
    loaded = serde().loads(serde().dumps([messages[0], bare]))
    assert loaded[0] == messages[0] and type(loaded[1]) is AIMessage
    assert loaded[1].__dict__ == bare.__dict__


OLD_CHAT_BLOB = bytes.fromhex(
    "93c7760c92d92a6c616e67636861696e5f636f72652e6d657373616765732e68756d616e3a48756d616e4d65"
    "737361676586a7636f6e74656e74a26869b16164646974696f6e616c5f6b776172677380b1726573706f6e73"
    "655f6d6574616461746180a474797065a568756d616ea46e616d65c0a26964a26831c7ce0c92d9246c616e67"
    "636861696e5f636f72652e6d657373616765732e61693a41494d65737361676589a7636f6e74656e74a0b161"
    "64646974696f6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746181a56d6f64656ca16d"
    "a474797065a26169a46e616d65c0a26964a26131aa746f6f6c5f63616c6c739184a46e616d65a3616464a461"
    "72677382a16101a16202a26964a26331a474797065a9746f6f6c5f63616c6cb2696e76616c69645f746f6f6c"
    "5f63616c6c7390ae75736167655f6d65746164617461c0c79b0c92d9286c616e67636861696e5f636f72652e"
    "6d657373616765732e746f6f6c3a546f6f6c4d65737361676589a7636f6e74656e74a133b16164646974696f"
    "6e616c5f6b776172677380b1726573706f6e73655f6d6574616461746180a474797065a4746f6f6ca46e616d"
    "65c0a26964a27431ac746f6f6c5f63616c6c5f6964a26331a86172746966616374c0a6737461747573a77375"
    "6363657373"
)
"""Three messages (a user message, an AI message with a tool call and response metadata, the
tool's answer) as the serializer of before the two-call loading saved them."""


def test_a_message_list_saved_before_loads_the_same() -> None:
    """Blobs already stored (SQLite and PostgreSQL files people have) load as they did."""
    loaded = serde().loads(OLD_CHAT_BLOB)
    assert loaded == [
        HumanMessage("hi", id="h1"),
        AIMessage(
            "",
            id="a1",
            tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}],
            response_metadata={"model": "m"},
        ),
        ToolMessage("3", tool_call_id="c1", id="t1"),
    ]
    assert serde().dumps(loaded) == OLD_CHAT_BLOB  # and saves to the same bytes again


@pytest.mark.parametrize("messages", message_lists())
def test_a_saved_message_list_is_held_to_the_depth_limit_exactly(messages: list[Any]) -> None:
    """Saving a message list may skip walking it for its depth (quicker) only when its bytes
    prove it shallow enough: the bytes are the same under any limit it fits, and the limit
    still holds exactly at the depth the walk finds."""
    expected = serde().dumps(messages)
    depth = nesting_depth(messages, 128)
    for room in range(8):
        roomy = MsgpackSerializer(TypeRegistry(), limits=Limits(max_depth=depth + room))
        assert roomy.dumps(messages) == expected
    below = MsgpackSerializer(TypeRegistry(), limits=Limits(max_depth=depth - 1))
    with pytest.raises(UnsupportedValueError, match=f"deeper than the limit of {depth - 1}"):
        below.dumps(messages)


def test_buffers_in_a_long_message_list_are_found_wherever_they_are() -> None:
    """A bytearray or memoryview in any message of a long list is saved (or refused) as on its
    own, bytes and text whose encoding looks like a bytes header included."""
    s = serde()
    turns = [HumanMessage(f"turn {i} " + "Ą" * (i % 7), id=f"h{i}") for i in range(300)]
    raw = AIMessage("r", id="r", additional_kwargs={"at": [{"raw": bytearray(b"\xc4\x01")}]})
    loaded = s.loads(s.dumps([*turns, raw, *turns[:3]]))
    assert loaded[300] == raw and type(loaded[300].additional_kwargs["at"][0]["raw"]) is bytearray
    plain = AIMessage("p", id="p", additional_kwargs={"raw": b"\xc4\xc5\xc6"})
    assert s.loads(s.dumps([*turns, plain])) == [*turns, plain]
    viewed = AIMessage("v", id="v", response_metadata={"view": memoryview(b"x")})
    with pytest.raises(UnsupportedValueError, match="memoryview"):
        s.dumps([*turns, viewed])
    too_big = MsgpackSerializer(TypeRegistry(), limits=Limits(max_bytes=1000))
    with pytest.raises(UnsupportedValueError, match="more than the limit of 1000"):
        too_big.dumps(turns)


def test_a_message_list_of_classes_with_and_without_extra_fields_loads_exactly() -> None:
    """Models rebuilt together from one list each get their own fields, field set and extra
    fields, whether or not their classes keep extra fields."""
    registry = TypeRegistry()
    registry.register(Stamped)
    s = MsgpackSerializer(registry)
    items = [HumanMessage("a", id="a"), Stamped(when="noon"), HumanMessage("b", id="b")]
    loaded = s.loads(s.dumps(items))
    assert loaded == items and [type(m) for m in loaded] == [type(m) for m in items]
    assert loaded[1].__pydantic_extra__ is None and loaded[0].__pydantic_extra__ == {}
    same = s.loads(s.dumps([HumanMessage("a", id="a"), HumanMessage("b", id="b")]))
    same[0].extra_note = "x"
    same[0].__pydantic_fields_set__.add("elsewhere")
    assert same[1].__pydantic_extra__ == {} and "elsewhere" not in same[1].__pydantic_fields_set__
    assert same[0].__dict__ is not same[1].__dict__


def random_field(rng: Any, depth: int) -> Any:
    """A value for a message field: scalars, empty and full containers nested up to
    ``depth``, sets, buffers, tuples, now and then a value shared with another field."""
    kind = rng.randrange(12 if depth > 0 else 7)
    leaves: list[Any] = [0, "", None, False, b"", 7, "x", True, b"\x01", 1.5, [], {}, ()]
    if kind < 4:
        return rng.choice(leaves)
    if kind == 4:
        return rng.choice([set(), frozenset(), bytearray(), bytearray(b"\x02")])
    if kind == 5:
        return rng.choice([[], {}, ()])
    if kind == 6:
        return rng.choice([{1, 2}, frozenset({"a"})])
    inner = [random_field(rng, depth - 1) for _ in range(rng.randrange(1, 3))]
    if kind in (7, 8):
        return inner
    if kind == 9:
        return tuple(inner)
    return {f"k{i}": v for i, v in enumerate(inner)}


@pytest.mark.parametrize("seed", range(60))
def test_a_message_lists_depth_is_what_the_walk_finds(seed: int) -> None:
    """The depth of a message list taken a level at a time (saving a chat's history) is the
    level-by-level walk's, with the same buffer found, for any mix of fields, at any limit."""
    import random

    from durable_debug.checkpoint.serde import _scan, _walk

    rng = random.Random(seed)
    shared = random_field(rng, 3)
    messages: list[Any] = []
    for i in range(rng.randrange(8, 40)):  # the long ones are taken a level at a time
        kwargs = {k: random_field(rng, 4) for k in ("a", "b") if rng.random() < 0.5}
        if rng.random() < 0.2:
            kwargs["shared"] = shared
        metadata = {"m": random_field(rng, 3)} if rng.random() < 0.3 else {}
        cls = rng.choice([HumanMessage, AIMessage, SystemMessage])
        content: Any = rng.choice(["text", "", [{"type": "text", "text": "t"}], []])
        messages.append(
            cls(content, id=f"m{i}", additional_kwargs=kwargs, response_metadata=metadata)
        )
    if rng.random() < 0.2:
        messages[-1].mood = "glad"  # an extra field: the walk takes the list
    serde().dumps([HumanMessage("x"), AIMessage("y"), SystemMessage("z")])  # classes known
    for limit in (1, 2, 3, 4, 5, 6, 8, 128):
        assert _scan(messages, limit) == _walk(messages, limit), limit


class Flat(pydantic.BaseModel):
    name: str
    count: int = 0
    tags: Any = None


@pytest.mark.parametrize(
    "messages",
    [
        [Flat(name=f"f{i}", count=i) for i in range(20)],  # scalars only: two levels
        [HumanMessage(f"h{i}", id=f"h{i}") for i in range(20)],  # empty maps: three
        [AIMessage(f"a{i}", id=f"a{i}", additional_kwargs={"s": set()}) for i in range(20)],
        [Flat(name="f"), *[Flat.model_construct(name=f"f{i}", tags=set()) for i in range(19)]],
        [*[Flat(name=f"f{i}", tags=[]) for i in range(19)], Flat.model_construct(tags=bytearray())],
        [*[AIMessage("a", id=f"a{i}") for i in range(19)], AIMessage("b", response_metadata={})],
    ],
    ids=["scalars", "empty-maps", "set-in-map", "empty-set", "empty-bytearray", "all-empty-again"],
)
def test_a_long_lists_depth_with_only_scalar_or_empty_fields_is_the_walks(
    messages: list[Any],
) -> None:
    from durable_debug.checkpoint.serde import _scan, _walk

    registry = TypeRegistry()
    registry.register(Flat)
    MsgpackSerializer(registry).dumps([Flat(name="x"), HumanMessage("x"), AIMessage("y")])
    for limit in (1, 2, 3, 4, 128):
        assert _scan(messages, limit) == _walk(messages, limit), limit


def plain_field(rng: Any, depth: int) -> Any:
    """A message field of plain data (what a chat holds): scalars, lists and maps nested up
    to ``depth``."""
    kind = rng.randrange(6 if depth > 0 else 3)
    if kind < 3:
        return rng.choice([0, "", None, False, 7, "x", "ü" * 40, 1.5, [], {}])
    inner = [plain_field(rng, depth - 1) for _ in range(rng.randrange(1, 3))]
    return inner if kind == 3 else {f"k{i}": v for i, v in enumerate(inner)}


@pytest.mark.parametrize("seed", range(40))
def test_a_message_list_just_saved_loads_as_the_general_way_loads_it(seed: int) -> None:
    """A long message list a serializer saved lately loads from the models' payloads it kept
    (one msgpack call): the same value, of the same classes, as a serializer that never saw it
    loads from the bytes, fresh at every load, and held to the depth limit of the time."""
    import random

    rng = random.Random(seed)
    messages: list[Any] = []
    for i in range(rng.randrange(16, 40)):
        kwargs = {k: plain_field(rng, 4) for k in ("a", "b") if rng.random() < 0.3}
        if rng.random() < 0.02:
            kwargs["c"] = random_field(rng, 3)  # now and then, a list saved the general way
        cls = rng.choice([HumanMessage, AIMessage, SystemMessage])
        content: Any = rng.choice([f"text {i}", "", [{"type": "text", "text": "t"}]])
        messages.append(cls(content, id=f"m{i}", additional_kwargs=kwargs))
    s = serde()
    s.dumps([HumanMessage("x"), AIMessage("y"), SystemMessage("z")])  # classes known
    try:
        blob = s.dumps(messages)
    except UnsupportedValueError:  # (a random field msgpack cannot key a map with)
        return
    general = serde().loads(blob)
    for payload in (blob, bytes(bytearray(blob))):  # the saved bytes, or read back elsewhere
        loaded = s.loads(payload)
        assert loaded == general == messages
        assert [type(m) for m in loaded] == [type(m) for m in general]
        assert [m.__pydantic_fields_set__ for m in loaded] == [
            m.__pydantic_fields_set__ for m in general
        ]
        loaded[0].content = "changed"  # the next load does not see it
        loaded[0].additional_kwargs["new"] = 1
    again = s.loads(blob)
    assert again == messages and again[0] is not loaded[0]
    depth = nesting_depth(messages, 128)
    s.limits = Limits(max_depth=depth)
    assert s.loads(blob) == messages
    s.limits = Limits(max_depth=depth - 1)
    with pytest.raises(CorruptPayloadError, match=f"deeper than the limit of {depth - 1}"):
        s.loads(blob)


def test_a_serializer_keeps_the_last_few_long_message_lists_it_saved() -> None:
    """Only long message lists are kept, and only the last few (the memory stays bounded)."""
    from durable_debug.checkpoint.serde import _PACKED

    s = serde()
    s.dumps([HumanMessage("x")])  # the class known
    s.dumps([HumanMessage("short", id="s")])
    assert not s._packed
    blobs = [s.dumps([HumanMessage("x" * n, id=f"{i}") for i in range(20)]) for n in range(9)]
    assert [kept[0] for kept in s._packed.values()] == blobs[-_PACKED:]
    assert all(s.loads(blob)[0].content == "x" * n for n, blob in enumerate(blobs))
    # Two blobs of one size: the later is kept, both load as they should.
    first = s.dumps([HumanMessage(f"a{i % 10}", id=f"{i}") for i in range(20)])
    second = s.dumps([HumanMessage(f"b{i % 10}", id=f"{i}") for i in range(20)])
    assert len(first) == len(second) and s._packed[len(first)][0] == second
    assert s.loads(first)[0].content == "a0" and s.loads(second)[0].content == "b0"
