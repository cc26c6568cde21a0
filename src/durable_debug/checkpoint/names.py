"""The names the engine gives its own channels and special writes, each with its parser.

Every name and separator of the engine's own is written here and only here (a test,
tests/test_engine_names.py, fails on a literal copy elsewhere in src/, and on one of the
namespace separator or the class key in js/src/). They live in the lowest layer that needs
them: a saver or a stored-layout reader tells the engine's channels from state (to list a
thread without decoding state), the engine writes them, and the inspectors read them back.
LangGraph names its channels the same way, which is what lets the debugger read a thread a
LangGraph app saved.

    branch_channel("b")                   # "branch:to:b": an edge to b ran, b runs next
    join_channel(["a", "b"], "c")         # "join:a+b:c": the barrier c waits on
    parse_trigger("join:a+b:c")           # Trigger(node="c", sources=("a", "b"))
    is_trigger_channel("branch:to:b")     # True: the engine's, not state
    trigger_channel_sql("ch.value")       # the same test in SQLite, for the listing queries
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "BRANCH_PREFIX",
    "CACHE_NS_WRITES",
    "COPY",
    "DEBUG_METADATA_KEY",
    "END",
    "ERROR",
    "ERROR_SOURCE",
    "FAILURES",
    "ID_SEP",
    "INPUT",
    "INPUT_KEYS",
    "INTERRUPT",
    "JOIN_PREFIX",
    "MESSAGES_PROTOCOL",
    "NOT_FINISHING",
    "NO_WRITES",
    "NS_END",
    "NS_SEP",
    "NULL_TASK_ID",
    "ONCE",
    "OVERWRITE",
    "PREVIOUS",
    "PULL",
    "PUSH",
    "RESUME",
    "RETURN",
    "SPECIAL_WRITES",
    "SPECIAL_WRITES_SQL",
    "START",
    "STORED_TIMEOUT_POLICY",
    "STORED_TYPE_NAMES",
    "TASKS",
    "TASK_PATH_SEP",
    "TRIGGER_CHANNELS",
    "TYPE_KEY",
    "UPDATE_PATH",
    "Trigger",
    "branch_channel",
    "is_trigger_channel",
    "is_valued_trigger",
    "join_channel",
    "parse_trigger",
    "trigger_channel_sql",
    "valued_trigger_sql",
]

START = "__start__"
"""The virtual first node, and the channel holding a run's input."""
END: Final = "__end__"
"""The virtual last node: an edge to it ends the run."""
TASKS = "__pregel_tasks"
"""Channel holding the Send packets to run in the next step, as ``[node, arg]`` pairs
(``[node, arg, timeout]`` for a Send that carries a ``TimeoutPolicy``)."""
BRANCH_PREFIX = "branch:to:"
"""Prefix of the trigger channel an edge writes to run a node next."""
JOIN_PREFIX = "join:"
"""Prefix of the barrier channel of a join (several sources, one target)."""

# Channels of the special writes a task can leave behind instead of (or besides) its output.
ERROR = "__error__"
"""Write channel holding the exception text of a task that failed."""
INTERRUPT = "__interrupt__"
"""Write channel holding the list of interrupts a task raised."""
RESUME = "__resume__"
"""Write channel holding the resume values a task has received so far."""
FAILURES = "__failures__"
"""Write channel holding every failure of a task on this checkpoint, oldest first
(durable_debug only; see ``durable_debug.graph.failures``)."""
ONCE = "__once__"
"""Write channel holding the results of the ``once()`` effects a task has completed so far,
in call order (durable_debug only; see ``durable_debug.graph.effects``)."""
RETURN = "__return__"
"""Write channel holding what a functional-API ``@task`` call returned (its task's only
write; see ``durable_debug.graph.push``)."""
PREVIOUS = "__previous__"
"""Channel of an ``@entrypoint`` thread holding the value its last run saved (its return
value, or ``entrypoint.final(save=...)``), which the next run gets as ``previous``."""
ERROR_SOURCE = "__error_source_node__"
"""Write channel saved with the error of a task whose failure went to its node's error
handler (the node's name; LangGraph's name): a resumed run runs the handler, not the task."""
INPUT_KEYS = "__input_keys__"
"""Marker write saved by the START task in place of its state writes: the keys it took from
the run input. The checkpoint it is saved on holds that input in its ``__start__`` channel, so
the input is stored once instead of twice."""
DELTA_COUNTERS = "counters_since_delta_snapshot"
"""Metadata key of a checkpoint: per ``DeltaChannel`` key, ``[steps that wrote it, steps]``
since LangGraph last saved its whole value (LangGraph's name; ``graph/delta_counters.py``)."""
NO_WRITES = "__no_writes__"
"""Marker write saved for a task that finished without writing anything."""
NOT_FINISHING = frozenset({ERROR, INTERRUPT, RESUME, FAILURES, ONCE, ERROR_SOURCE})
"""Write channels that do not say a task finished (any other write of a task does)."""
SPECIAL_WRITES = (ERROR, INTERRUPT, RESUME)
"""The write channels whose values say how a task ended (a listing's status needs them)."""
SPECIAL_WRITES_SQL = "(" + ", ".join(f"'{name}'" for name in SPECIAL_WRITES) + ")"
""":data:`SPECIAL_WRITES` as a SQL list, for ``channel IN …`` (SQLite and PostgreSQL)."""

MESSAGES_PROTOCOL = "__messages_protocol__"
"""Configurable key a v3 event stream sets (``graph/v3_events.py``): the run's chat models
stream content-block events to the ``messages`` mode instead of token chunks."""

# Task paths and namespaces.
PULL = "__pregel_pull"
"""First element of the path of a task triggered by an edge: ``(PULL, node)``."""
PUSH = "__pregel_push"
"""First element of the path of a task created by a Send or a ``@task`` call:
``(PUSH, index, False)`` for a Send (its id is made from ``(PUSH, index)``), ``(PUSH,
caller's task id, n)`` for a call; also the trigger such a task reports."""
UPDATE_PATH = "__update__"
"""First element of the path of a task that ``update_state`` made to apply an update as a
node's writes: ``(UPDATE_PATH, node)``."""
TASK_PATH_SEP = "|"
"""Joins the elements of a task's path as savers store it with its writes (``task_path``)."""
NS_SEP = "|"
"""Joins the levels of a nested namespace (``parent:tid|child:tid``)."""
NS_END = ":"
"""Separates a namespace level's node name from its task id."""

ID_SEP = "|"
"""Joins the parts a task id or an interrupt id is hashed from (the ids must stay the same:
saved writes and resume maps name them)."""
# Special values of the API.
COPY = "__copy__"
"""``as_node`` that copies the checkpoint as a sibling (source "fork") instead of updating."""
INPUT = "__input__"
"""``as_node`` that applies the values as new run input (source "input")."""
OVERWRITE = "__overwrite__"
"""Key of the dict form of an ``Overwrite`` write (``{"__overwrite__": value}``)."""

CACHE_NS_WRITES = "__pregel_ns_writes"
"""First element of the namespace a node's (or a ``@task``'s) cached writes are kept under:
``(CACHE_NS_WRITES, function, node)`` (``(CACHE_NS_WRITES, function)`` for a ``@task``), as
LangGraph names it, so one of LangGraph's caches can be shared."""

DEBUG_METADATA_KEY = "__durable_debug__"
"""Metadata key under which the engine keeps a checkpoint's debug record (its JSON text) in the
store of one of LangGraph's own savers, which has no place of its own for it
(``checkpoint/foreign.py``). LangGraph's engine never reads it (it builds each checkpoint's
metadata anew, and drops config keys starting with ``__``) but shows it among the metadata of
such a checkpoint; durable_debug's readers take it out of the metadata they show."""

NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
"""Task id for writes that belong to no task (the resume value given to ``Command``)."""

TYPE_KEY = "__type__"
"""Key naming the class of an object stored as a dict (``{"__type__": "pkg.mod.Cls", ...}``),
in durable_debug's format and in LangGraph's JSON one alike."""

STORED_TYPE_NAMES: Final = {
    "Send": "durable_debug.Send",
    "Command": "durable_debug.Command",
    "Interrupt": "durable_debug.Interrupt",
}
"""The names the engine's own value classes are registered under for the serializer (a
pending ``Send``, the ``Command`` it may carry, an ``Interrupt``), by class name; LangGraph
names the same classes ``langgraph.types.<class name>``."""

STORED_TIMEOUT_POLICY: Final = "durable_debug.TimeoutPolicy"
"""The name the engine's ``TimeoutPolicy`` is registered under for the serializer (the
timeout a pending ``Send`` carries); LangGraph names it ``langgraph.types.TimeoutPolicy``."""

TRIGGER_CHANNELS = (START, TASKS)
"""The trigger channels with fixed names; edges and joins have a prefix and a node."""


def branch_channel(node: str) -> str:
    """Name of the trigger channel an edge writes to run ``node`` next."""
    return f"{BRANCH_PREFIX}{node}"


def join_channel(sources: Sequence[str], target: str) -> str:
    """Name of the barrier channel of a join ``sources → target``."""
    return f"{JOIN_PREFIX}{'+'.join(sources)}:{target}"


@dataclass(frozen=True)
class Trigger:
    """What a trigger channel's name says: the node it runs, and for a join its sources."""

    node: str
    sources: tuple[str, ...] = ()


@functools.lru_cache(maxsize=4096)
def parse_trigger(channel: str) -> Trigger | None:
    """The node a trigger channel runs (``__start__`` for the input, the target of an edge or
    a join), or None for any other channel (state, Send packets). Cached: a graph has few
    channel names, and a thread list asks about them once per thread."""
    if channel == START:
        return Trigger(START)
    if channel.startswith(BRANCH_PREFIX):
        return Trigger(channel[len(BRANCH_PREFIX) :])
    if channel.startswith(JOIN_PREFIX):
        sources, _, node = channel[len(JOIN_PREFIX) :].partition(":")
        return Trigger(node, tuple(sources.split("+")))
    return None


def is_trigger_channel(name: str) -> bool:
    """True for the channels that decide which nodes run next (the run input, Send packets,
    edges and joins): the engine's own channels, not state."""
    return name in TRIGGER_CHANNELS or name.startswith((BRANCH_PREFIX, JOIN_PREFIX))


def is_valued_trigger(name: str) -> bool:
    """True for the trigger channels whose *value* decides which nodes run (a join's sources
    heard so far, the Send packets); for the others holding a value at all is enough."""
    return name == TASKS or name.startswith(JOIN_PREFIX)


def _prefix_sql(column: str, prefix: str) -> str:
    """``column`` starts with ``prefix``, as a range of SQLite's BINARY collation (exact and
    case-sensitive like :meth:`str.startswith`, which ``LIKE`` is not; no function call per
    row). ``prefix`` ends in ``:``, so its successor ends in ``;``."""
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return f"({column} >= '{prefix}' AND {column} < '{upper}')"


def trigger_channel_sql(column: str) -> str:
    """:func:`is_trigger_channel` as a SQLite condition on ``column``, for the listing
    queries.

    The names are constants of this module: none holds a quote, so they are written into the
    query as literals.
    """
    fixed = ", ".join(f"'{name}'" for name in TRIGGER_CHANNELS)
    prefixes = " OR ".join(_prefix_sql(column, p) for p in (BRANCH_PREFIX, JOIN_PREFIX))
    return f"({column} IN ({fixed}) OR {prefixes})"


def valued_trigger_sql(column: str) -> str:
    """:func:`is_valued_trigger` as a SQLite condition on ``column``: a listing reads only
    these trigger channels' values."""
    return f"({column} = '{TASKS}' OR {_prefix_sql(column, JOIN_PREFIX)})"
