"""``stream(..., version="v2")`` and ``invoke(..., version="v2")``: LangGraph's typed output.

    for part in graph.stream(inputs, config, stream_mode=["values", "updates"], version="v2"):
        part["type"], part["ns"], part["data"]          # every mode; "values" adds "interrupts"
    out = graph.invoke(inputs, config, version="v2")  # GraphOutput(value=..., interrupts=(...))

A v2 part is the same chunk the default (``"v1"``) format gives, wrapped in a dict whatever the
stream modes and ``subgraphs=`` (``ns`` is ``()`` for the graph streamed). As in LangGraph:

* a ``values`` part has ``"interrupts"``: the run's pending interrupts taken out of the chunk's
  ``"__interrupt__"`` key (``()`` when none), and its data is made an instance of the graph's
  output schema when that is a pydantic model or dataclass (``output_mapper``);
* the ``values`` of a ``checkpoints`` part, and of a ``debug`` part's checkpoint, are made an
  instance of the state schema likewise (``state_mapper``), except on the run's first
  checkpoint (the one whose ``next`` is ``__start__``, where not every key is set yet);
* the mappers are the graph streamed's, applied to its subgraphs' parts too (LangGraph's
  behaviour: a subgraph whose state the parent's model cannot hold fails the stream);
* ``invoke`` returns :class:`GraphOutput` for ``stream_mode="values"``, else the list of parts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, is_dataclass
from typing import Any, Generic, Literal

from typing_extensions import NotRequired, TypedDict, TypeVar

from durable_debug.checkpoint.base import CheckpointMetadata, RunnableConfig
from durable_debug.checkpoint.names import INTERRUPT, START
from durable_debug.graph.deprecation import LangGraphDeprecatedSinceV11
from durable_debug.graph.types import TAG_HIDDEN, Interrupt

__all__ = [
    "STREAM_VERSIONS",
    "CheckpointPayload",
    "CheckpointStreamPart",
    "CheckpointTask",
    "CustomStreamPart",
    "DebugStreamPart",
    "GraphOutput",
    "Mapper",
    "MessagesStreamPart",
    "TaskPayload",
    "TaskResultPayload",
    "TasksStreamPart",
    "UpdatesStreamPart",
    "ValuesStreamPart",
    "map_debug_tasks",
    "schema_mapper",
    "stream_part",
]

STREAM_VERSIONS = ("v1", "v2")
"""The output formats of ``stream`` / ``invoke`` (``version=``): ``"v1"`` is the default."""

StateT = TypeVar("StateT")
OutputT = TypeVar("OutputT")


_ITEM_ACCESS = (
    "Accessing GraphOutput via `{how}` is deprecated. Use `result.value` to access the output "
    "value directly, or `result.interrupts` for interrupts."
)


@dataclass(frozen=True)
class GraphOutput(Generic[OutputT]):
    """What ``invoke`` / ``ainvoke`` return with ``version="v2"``: the run's output (a dict,
    or an instance of a pydantic / dataclass output schema) and its pending interrupts."""

    value: OutputT
    """The graph's output, as the last ``values`` part showed it."""
    interrupts: tuple[Interrupt[Any], ...] = ()
    """The interrupts the run stopped on (``()`` when it finished)."""

    def __getitem__(self, key: str) -> Any:
        """Deprecated dict access (``result["key"]``, ``result["__interrupt__"]``), warned
        with :class:`LangGraphDeprecatedSinceV11` as in LangGraph."""
        warnings.warn(
            _ITEM_ACCESS.format(how="result[key]"), LangGraphDeprecatedSinceV11, stacklevel=2
        )
        if key == INTERRUPT:
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        """Deprecated ``key in result``, warned like :meth:`__getitem__`."""
        warnings.warn(
            _ITEM_ACCESS.format(how="key in result"), LangGraphDeprecatedSinceV11, stacklevel=2
        )
        if key == INTERRUPT:
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


class TaskPayload(TypedDict):
    """A ``tasks`` part's data when a task starts."""

    id: str
    name: str
    input: Any
    triggers: list[str]
    metadata: NotRequired[dict[str, Any]]
    """The task config's own metadata and tags (not the engine's keys), when it has any."""


ENGINE_METADATA_KEYS = frozenset(
    {
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "langgraph_step",
        "langgraph_node",
        "langgraph_triggers",
        "langgraph_path",
        "langgraph_checkpoint_ns",
    }
)
"""Metadata keys the engine puts in a task's config (left out of a task payload)."""


def map_debug_tasks(tasks: Iterable[Any]) -> Iterator[TaskPayload]:
    """The ``tasks`` payload of each task (anything with ``id``, ``name``, ``input``,
    ``triggers`` and ``config``), as LangGraph builds it: a hidden task is skipped; the
    config's metadata but the engine's keys, with its tags but ``seq:step`` ones, go under
    ``metadata`` when any remain."""
    for task in tasks:
        config = task.config
        if config is not None and TAG_HIDDEN in (config.get("tags") or ()):
            continue
        payload: TaskPayload = {
            "id": task.id,
            "name": task.name,
            "input": task.input,
            "triggers": task.triggers,
        }
        if config is not None:
            metadata = {
                k: v
                for k, v in (config.get("metadata") or {}).items()
                if k not in ENGINE_METADATA_KEYS
            }
            tags = [t for t in config.get("tags") or () if not t.startswith("seq:step")]
            if tags:
                metadata["tags"] = tags
            if metadata:
                payload["metadata"] = metadata
        yield payload


class TaskResultPayload(TypedDict):
    """A ``tasks`` part's data when a task finishes."""

    id: str
    name: str
    error: str | None
    interrupts: list[dict[str, Any]]
    result: dict[str, Any]


class CheckpointTask(TypedDict):
    """One task of a ``checkpoints`` part."""

    id: str
    name: str
    interrupts: tuple[dict[str, Any], ...]
    state: RunnableConfig | None


class CheckpointPayload(TypedDict, Generic[StateT]):
    """A ``checkpoints`` part's data: the checkpoint saved, as ``get_state`` shows it."""

    config: RunnableConfig
    metadata: CheckpointMetadata
    values: StateT
    next: list[str]
    parent_config: RunnableConfig | None
    tasks: list[CheckpointTask]


class ValuesStreamPart(TypedDict, Generic[OutputT]):
    """A ``values`` part: the state after a step, and the run's pending interrupts."""

    type: Literal["values"]
    ns: tuple[str, ...]
    data: OutputT
    interrupts: tuple[Interrupt[Any], ...]


class UpdatesStreamPart(TypedDict):
    """An ``updates`` part: ``{node: its writes}`` (or ``{"__interrupt__": ...}``)."""

    type: Literal["updates"]
    ns: tuple[str, ...]
    data: dict[str, Any]


class MessagesStreamPart(TypedDict):
    """A ``messages`` part: ``(message chunk, metadata)``."""

    type: Literal["messages"]
    ns: tuple[str, ...]
    data: tuple[Any, dict[str, Any]]


class CustomStreamPart(TypedDict):
    """A ``custom`` part: what a node passed to its ``writer``."""

    type: Literal["custom"]
    ns: tuple[str, ...]
    data: Any


class CheckpointStreamPart(TypedDict, Generic[StateT]):
    """A ``checkpoints`` part."""

    type: Literal["checkpoints"]
    ns: tuple[str, ...]
    data: CheckpointPayload[StateT]


class TasksStreamPart(TypedDict):
    """A ``tasks`` part: a task's start or its result."""

    type: Literal["tasks"]
    ns: tuple[str, ...]
    data: TaskPayload | TaskResultPayload


class DebugStreamPart(TypedDict):
    """A ``debug`` part: ``{"step", "timestamp", "type", "payload"}``."""

    type: Literal["debug"]
    ns: tuple[str, ...]
    data: dict[str, Any]


Mapper = Callable[[dict[str, Any]], Any]


def schema_mapper(schema: Any, kind: str) -> Mapper | None:
    """What makes a state dict an instance of ``schema`` in v2 parts: the class itself for a
    pydantic model or dataclass (``kind`` as ``StateSchema.kind`` names it), else None."""
    if kind not in ("pydantic", "dataclass") or not isinstance(schema, type):
        return None
    if kind == "dataclass" and not is_dataclass(schema):
        return None
    cls = schema

    def mapped(values: dict[str, Any]) -> Any:
        return cls(**values)

    return mapped


def stream_part(
    namespace: tuple[str, ...],
    mode: str,
    chunk: Any,
    output_mapper: Mapper | None,
    state_mapper: Mapper | None,
) -> dict[str, Any]:
    """The v2 part of one chunk of ``mode`` (the chunk itself is not changed)."""
    if mode == "values":
        interrupts: tuple[Interrupt[Any], ...] = ()
        if isinstance(chunk, dict):
            chunk = dict(chunk)
            interrupts = tuple(chunk.pop(INTERRUPT, ()))
            if output_mapper is not None:
                chunk = output_mapper(chunk)
        return {"type": mode, "ns": namespace, "data": chunk, "interrupts": interrupts}
    if state_mapper is not None and mode in ("checkpoints", "debug"):
        chunk = _mapped_checkpoint(chunk, state_mapper)
    return {"type": mode, "ns": namespace, "data": chunk}


def _mapped_checkpoint(chunk: Any, mapper: Mapper) -> Any:
    """A ``checkpoints`` chunk (or a ``debug`` chunk wrapping one) with its values mapped,
    unless it is a run's first checkpoint (``next`` is ``__start__``)."""
    if not isinstance(chunk, dict):
        return chunk
    inner = chunk.get("payload") if chunk.get("type") == "checkpoint" else None
    if isinstance(inner, dict):
        if isinstance(inner.get("values"), dict) and START not in inner.get("next", ()):
            return {**chunk, "payload": {**inner, "values": mapper(inner["values"])}}
        return chunk
    if isinstance(chunk.get("values"), dict) and START not in chunk.get("next", ()):
        return {**chunk, "values": mapper(chunk["values"])}
    return chunk
