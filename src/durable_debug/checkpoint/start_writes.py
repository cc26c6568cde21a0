"""The saved writes of a START task, as they are stored and as they are read.

A START task's state writes are the values of the run input's keys, which the checkpoint the
writes are saved on already holds (in its ``__start__`` channel). So they are saved as one
:data:`~durable_debug.checkpoint.names.INPUT_KEYS` write naming those keys
(``graph.algo.compact_start_writes``), and :func:`expand_start_writes` turns it back into
the writes it stands for wherever saved writes are read (the engine resuming, the inspect
layer, a saver's delta-channel history).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.names import INPUT_KEYS, START
from durable_debug.checkpoint.serde import CorruptPayloadError

if TYPE_CHECKING:
    from durable_debug.checkpoint.base import Checkpoint, PendingWrite

__all__ = ["NO_INPUT_VALUE", "expand_start_writes", "input_value"]

NO_INPUT_VALUE: Any = object()
"""What :func:`input_value` returns for a key the run input does not have."""


def input_value(run_input: Any, key: str) -> Any:
    """The value the START task writes to ``key`` for this input (see StateSchema.updates_from:
    a mapping's item, or a dataclass / pydantic model's attribute); :data:`NO_INPUT_VALUE` if
    it has none."""
    if isinstance(run_input, Mapping):
        return run_input.get(key, NO_INPUT_VALUE)
    if run_input is None:
        return NO_INPUT_VALUE
    return getattr(run_input, key, NO_INPUT_VALUE)


def expand_start_writes(
    pending_writes: Sequence[PendingWrite], checkpoint: Checkpoint
) -> Sequence[PendingWrite]:
    """``pending_writes`` with each :data:`INPUT_KEYS` write replaced by the state writes it
    stands for, taken from the run input that ``checkpoint`` holds."""
    if not any(channel == INPUT_KEYS for _, channel, _ in pending_writes):
        return pending_writes
    run_input = checkpoint["channel_values"].get(START)
    expanded: list[PendingWrite] = []
    for tid, channel, value in pending_writes:
        if channel != INPUT_KEYS:
            expanded.append((tid, channel, value))
            continue
        for key in value:
            key_value = input_value(run_input, key)
            if key_value is NO_INPUT_VALUE:
                raise CorruptPayloadError(
                    f"the saved writes of task {tid} take key {key!r} from the run input, but "
                    f"checkpoint {checkpoint['id']} holds no input with that key"
                )
            expanded.append((tid, key, key_value))
    return expanded
