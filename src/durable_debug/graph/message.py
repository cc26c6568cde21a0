"""Chat messages in the state: the ``add_messages`` reducer and ``MessagesState``.

``add_messages`` appends new messages to a list, replaces the message that has the same id,
and deletes the ones a ``RemoveMessage`` names; every message gets an id on the way in:

    class State(TypedDict):
        messages: Annotated[list, add_messages]

    def chatbot(state):
        return {"messages": [{"role": "assistant", "content": "hi"}]}

When langchain-core is installed (LangGraph depends on it) messages are LangChain message
objects, as in LangGraph: dicts, ``("user", "text")`` pairs and strings are converted with
``langchain_core.messages.convert_to_messages``. Without langchain-core the reducer works on
dict messages (``{"role": ..., "content": ..., "id": ...}``): a string is a user message, a
pair is ``(role, content)``, and ``{"type": "remove", "id": ...}`` deletes by id.
langchain-core is imported on the first call, never by ``import durable_debug``.

:func:`push_message` sends a message to the ``messages`` stream from inside a node (and
writes it to the state); :class:`MessageGraph` is LangGraph's deprecated graph whose whole
state is a message list.
"""

from __future__ import annotations

import operator
import sys
import uuid
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import Annotated, Any

from typing_extensions import TypedDict

from durable_debug.graph.calls import get_config
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV10
from durable_debug.graph.interrupts import current_scratchpad
from durable_debug.graph.state import StateGraph

__all__ = ["REMOVE_ALL_MESSAGES", "MessageGraph", "MessagesState", "add_messages", "push_message"]

REMOVE_ALL_MESSAGES = "__remove_all__"
"""Id of a remove message that clears every message before it."""

_MISSING: Any = object()


def _langchain() -> Any:
    """``langchain_core.messages``, or None when langchain-core is not installed."""
    module = sys.modules.get("langchain_core.messages")
    if module is not None:
        return module
    try:
        from langchain_core import messages
    except ImportError:
        return None
    return messages


def add_messages(left: Any = _MISSING, right: Any = _MISSING, *, format: str | None = None) -> Any:
    """Merge the message list ``right`` into ``left`` by id (the reducer of a messages key).

    A message whose id is already in ``left`` replaces it; a remove message deletes it (an
    unknown id is a ``ValueError``); a remove message with id :data:`REMOVE_ALL_MESSAGES`
    drops everything before it. Messages without an id get a new UUID. Called with only
    keyword arguments (``add_messages(format="langchain-openai")``) it returns the reducer
    with those options.
    """
    if left is _MISSING and right is _MISSING:
        return partial(add_messages, format=format)
    if left is _MISSING or right is _MISSING or left is None or right is None:
        given = "left" if right is _MISSING or right is None else "right"
        raise ValueError(
            f"add_messages needs both 'left' and 'right' (non-null); only received {given!r}"
        )
    lc = _langchain()
    left = left if isinstance(left, list) else [left]
    right = right if isinstance(right, list) else [right]
    is_remove: Callable[[Any], bool]
    if lc is not None:
        left, right = _as_lc(lc, left), _as_lc(lc, right)
        ident, is_remove = _lc_id, lambda m: isinstance(m, lc.RemoveMessage)
        set_id: Callable[[Any, str], None] = _set_attr_id
    else:
        left, right = [_as_dict(m) for m in left], [_as_dict(m) for m in right]
        ident, is_remove, set_id = _dict_id, _dict_is_remove, _set_key_id
    if None in map(ident, left):  # one pass in C when every message has its id
        for message in left:
            if ident(message) is None:
                set_id(message, str(uuid.uuid4()))
    cut = None
    removes = False
    for index, message in enumerate(right):
        if ident(message) is None:
            set_id(message, str(uuid.uuid4()))
        if is_remove(message):
            removes = True
            if ident(message) == REMOVE_ALL_MESSAGES:
                cut = index
    if cut is not None:
        return right[cut + 1 :]
    merged = list(left)
    if not removes and _all_new(right, merged, ident):
        merged += right  # the common case: new messages, appended (no id → position map)
        return _formatted(lc, merged, format)
    try:
        position = dict(zip(map(ident, merged), range(len(merged)), strict=True))
    except TypeError:  # an id that is no string (a damaged blob): say which message has it
        raise _unhashable_id(left, "the current messages", ident) from None
    removed: set[Any] = set()
    for message in right:
        if type(ident(message)) is not str and not _hashable(ident(message)):
            raise _unhashable_id(right, "the new messages", ident)
        key = ident(message)
        at = position.get(key)
        if at is not None:
            if is_remove(message):
                removed.add(key)
            else:
                removed.discard(key)
                merged[at] = message
        elif is_remove(message):
            raise ValueError(
                f"Attempting to delete a message with an ID that doesn't exist ({key!r}): "
                "add_messages found no message with that id to remove"
            )
        else:
            position[key] = len(merged)
            merged.append(message)
    if removed:
        merged = [m for m in merged if ident(m) not in removed]
    return _formatted(lc, merged, format)


def _all_new(right: list[Any], left: list[Any], ident: Callable[[Any], Any]) -> bool:
    """Whether the messages ``right`` have distinct ids, none of them an id of ``left`` (each
    message then goes at the end, in order); False when an id cannot be hashed (the general
    way says which)."""
    try:
        ids = set(map(ident, right))
        return len(ids) == len(right) and ids.isdisjoint(map(ident, left))
    except TypeError:
        return False


def _formatted(lc: Any, merged: list[Any], format: str | None) -> list[Any]:
    """``merged`` in the ``format`` :func:`add_messages` was given."""
    if format == "langchain-openai" and lc is not None:
        return _openai_format(lc, merged)
    if format is not None and format != "langchain-openai":
        raise ValueError(
            f"Unrecognized format={format!r}. Expected one of 'langchain-openai', None."
        )
    return merged


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _unhashable_id(messages: list[Any], which: str, ident: Callable[[Any], Any]) -> TypeError:
    """The error for a message of ``messages`` whose id cannot be looked up (not a string and
    not hashable: a message rebuilt from a damaged or crafted checkpoint, say)."""
    for index, message in enumerate(messages):
        key = ident(message)
        if not _hashable(key):
            return TypeError(
                f"add_messages: message {index} of {which} ({type(message).__name__}) has the "
                f"id {key!r:.80}, a {type(key).__name__}; a message id must be a string"
            )
    return TypeError(f"add_messages: a message of {which} has an id that is not a string")


_WHOLE_MESSAGE_CLASSES: set[type] = set()
"""Classes found to be LangChain messages that are no chunks (they pass unchanged)."""


def _as_lc(lc: Any, messages: list[Any]) -> list[Any]:
    """LangChain messages (chunks become whole messages); plain messages pass unchanged."""
    kinds = set(map(type, messages))
    if kinds <= _WHOLE_MESSAGE_CLASSES:
        return messages
    if all(issubclass(k, lc.BaseMessage) and not issubclass(k, lc.BaseMessageChunk) for k in kinds):
        _WHOLE_MESSAGE_CLASSES.update(kinds)
        return messages
    if kinds == _PAIRS:  # ("user", text) input: the common case, converted directly
        users = [_user_message(lc, m) for m in messages]
        if all(m is not None for m in users):
            return users
    return [lc.message_chunk_to_message(m) for m in lc.convert_to_messages(messages)]


_PAIRS = {tuple}
_USER_ROLES = frozenset({"user", "human"})


def _user_message(lc: Any, message: tuple[Any, ...]) -> Any:
    """A ``("user", text)`` or ``("human", text)`` pair as ``convert_to_messages`` converts
    it (a ``HumanMessage`` with that content and nothing else), without its general dispatch;
    None for any other pair."""
    if (
        len(message) == 2
        and type(message[0]) is str
        and type(message[1]) is str
        and message[0] in _USER_ROLES
    ):
        return lc.HumanMessage(content=message[1])
    return None


_lc_id: Callable[[Any], Any] = operator.attrgetter("id")
"""A LangChain message's id (an attribute getter: no Python call per message)."""


def _set_attr_id(message: Any, value: str) -> None:
    message.id = value


def _openai_format(lc: Any, messages: list[Any]) -> list[Any]:
    from langchain_core.messages import convert_to_openai_messages

    return list(lc.convert_to_messages(convert_to_openai_messages(messages)))


_ROLES = {"human": "user", "ai": "assistant"}


def _as_dict(message: Any) -> dict[str, Any]:
    """A dict message (without langchain-core): strings and (role, content) pairs too."""
    if isinstance(message, str):
        return {"role": "user", "content": message}
    if isinstance(message, tuple) and len(message) == 2:
        role, content = message
        return {"role": _ROLES.get(role, role), "content": content}
    if isinstance(message, Mapping):
        return dict(message)
    raise TypeError(
        f"add_messages got {type(message).__name__} {message!r:.80}; without langchain-core "
        "a message is a dict ({'role': ..., 'content': ...}), a (role, content) pair or a string"
    )


def _dict_id(message: dict[str, Any]) -> Any:
    return message.get("id")


def _set_key_id(message: dict[str, Any], value: str) -> None:
    message["id"] = value


def _dict_is_remove(message: dict[str, Any]) -> bool:
    return message.get("type") == "remove" or message.get("role") == "remove"


class MessagesState(TypedDict):
    """A state with one key, ``messages``, merged by :func:`add_messages`."""

    messages: Annotated[list[Any], add_messages]


class MessageGraph(StateGraph[Any, Any, Any, Any]):
    """A graph whose whole state is one message list merged by :func:`add_messages`: each
    node gets the list and returns a message or a list of them. Deprecated in LangGraph 1.0
    (use a ``StateGraph`` with a ``messages`` key, :class:`MessagesState`); building one gives
    LangGraph's ``LangGraphDeprecatedSinceV10`` warning."""

    def __init__(self) -> None:
        warnings.warn(
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. Please "
            "use StateGraph with a `messages` key instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__(Annotated[list[Any], add_messages])


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """Send ``message`` to stream mode ``"messages"`` from inside a running node, as if a chat
    model the node called had produced it, and write it to the state key ``state_key`` (not
    written when ``state_key`` is None); returns the message (a LangChain message: a dict, a
    ``(role, content)`` pair or a string is converted).

    The message must have an id (``ValueError`` otherwise): a message a node later returns
    with that id is not streamed again. Called outside a running node it raises
    ``RuntimeError``. The write joins the node's own writes (before those of its return value)
    when the node finishes, as a write of LangGraph's ``push_message`` does.
    """
    config = get_config()
    from langchain_core.messages import convert_to_messages

    message = convert_to_messages([message])[0]
    if message.id is None:
        raise ValueError("Message ID is required (push_message needs a message with an id)")
    for tap in _message_taps(config.get("callbacks")):
        tap.send(message, dict(config.get("metadata") or {}), once=False)
    if state_key:
        scratchpad = current_scratchpad()
        if scratchpad is None:  # pragma: no cover - get_config() found a running node
            raise RuntimeError("push_message() was called outside a running node")
        scratchpad.pushed.append((state_key, message))
    return message


def _message_taps(callbacks: Any) -> list[Any]:
    """The ``messages`` stream taps (``chat_stream.py``) among a node's callback handlers."""
    handlers = getattr(callbacks, "handlers", callbacks)
    if not isinstance(handlers, (list, tuple)):
        return []
    return [h for h in handlers if getattr(h, "durable_debug_message_tap", False)]
