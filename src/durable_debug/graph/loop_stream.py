"""What a run reports: the events of its stream modes, and the chunks of running nodes.

:class:`LoopStream` owns the run's outgoing events. The loop *emits* events (``_emit``: a
task's start or result, a checkpoint, the state) into ``outbox``; running nodes and ``@task``
calls write theirs into ``live``, from any thread, and wake the loop (``_wake_up``); ``_drain``
hands both to ``RunLoop._events``, the one place events leave the run. It also builds the
payloads of ``debug`` events (``_debug_event``, ``_debug_checkpoint``). It relies on the shared
state of :class:`~durable_debug.graph.loop_state.LoopState` and on ``streams.Producers``, which
turns events into the requested modes' chunks; it saves and runs nothing.
"""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.base import RunnableConfig, checkpoint_config
from durable_debug.graph.algo import Task, prepare_tasks
from durable_debug.graph.interrupts import current_scratchpad
from durable_debug.graph.loop_state import Event, LoopState
from durable_debug.graph.subgraph import NS_END, NS_SEP
from durable_debug.graph.types import interrupt_payload

if TYPE_CHECKING:
    from durable_debug.graph.subgraph import SubgraphStream

__all__ = ["LoopStream"]


class LoopStream(LoopState):
    """The events a run reports, and the chunks its running nodes write."""

    def _emit(self, kind: str, build: Callable[[], Any]) -> None:
        """Report one event; the requested modes turn it into chunks (see ``streams.py``).
        A run without a saver saves no checkpoint, so it reports none (as LangGraph)."""
        if kind == "checkpoint" and self.saver is None:
            return
        if self.producers.wants(kind):
            self.outbox.extend(self.producers.chunks(kind, build))

    def _reported(self) -> bool:
        """Whether events wait to go out: a step yields only then (``_events`` passes them
        on; yielding with none costs a resumption of every generator up the chain, for
        nothing)."""
        return bool(self.outbox or self.live)

    def _drain(self) -> list[Event]:
        events: list[Event] = []
        while self.live:  # written by a node after the last wake-up
            events.append(self.live.popleft())
        events += self.outbox
        self.outbox = []
        return events

    def _write_custom(self, chunk: Any) -> None:
        """The ``writer`` of a node: a ``"custom"`` chunk, from the loop or a worker thread."""
        self._write_live("custom", chunk)

    def _write_message(self, pair: tuple[Any, dict[str, Any]]) -> None:
        """A ``(message, metadata)`` pair from a running node (see ``chat_stream.py``)."""
        self._write_live("message", pair)

    def _write_callback(self, event: dict[str, Any]) -> None:
        """A callback of a runnable nested in a running node (for ``astream_events``)."""
        self._write_live("callback", event)

    own_modes: frozenset[str] = frozenset()
    """A graph run inside a task of a run streaming subgraphs: the modes its own caller reads
    (``_routed`` yields their chunks)."""
    shared_modes: frozenset[str] = frozenset()
    """The modes whose chunks such a run sends to the stream of the run it is in."""

    def _share_with_sink(
        self, sink: SubgraphStream, modes: frozenset[str]
    ) -> tuple[frozenset[str], bool]:
        """A graph run inside a task of a run streaming subgraphs streams to both: its chunks
        of the enclosing run's modes go there, those of its own modes to its caller (a node
        streaming it), as LangGraph's duplex stream does. Returns the modes to produce and
        whether chat models stream content-block events (a v3 event stream): not when the
        caller streams ``messages`` itself, whose chunks then stay the caller's, as LangGraph
        leaves the outer v3 handler out of a graph streaming messages in v1."""
        shared, protocol = sink.modes, sink.protocol
        if protocol and "messages" in modes:
            shared, protocol = shared - {"messages"}, False
        self.own_modes, self.shared_modes = modes, shared
        return modes | shared, protocol

    @property
    def namespace(self) -> tuple[str, ...]:
        """The namespace of this run's own chunks (``stream(subgraphs=True)``, v2 parts):
        ``()`` for a top-level run, its checkpoint namespace for a graph run in a task."""
        if self.nesting is None or not self.checkpoint_ns:
            return ()
        return tuple(self.checkpoint_ns.split(NS_SEP))

    def _tap_caller_stream(self) -> None:
        """A graph a node runs on a thread of its own (not as its subgraph) while the node's
        run streams subgraphs: the ``messages`` and ``tools`` chunks of its chat models and
        tools go to that stream too, under the namespace ``()`` (the graph's own root), as
        LangGraph's callback handlers of a run streaming subgraphs reach such a graph."""
        if self.nesting is not None:
            return
        scratchpad = current_scratchpad()
        nesting = scratchpad.nesting if scratchpad is not None else None
        outer = nesting.stream if nesting is not None else None
        if outer is None:
            return
        from durable_debug.graph.callbacks import with_handler

        send = outer.send
        if "messages" in outer.modes:
            from durable_debug.graph.chat_stream import make_message_tap

            tap = make_message_tap(
                lambda pair: send((), "messages", pair),
                outer.sent_messages,
                protocol=outer.protocol,
            )
            self.config["callbacks"] = with_handler(self.config.get("callbacks"), tap)
            if self.message_tap is None:  # it also sends the messages the nodes return
                self.message_tap = tap
        if "tools" in outer.modes:
            from durable_debug.graph.tool_stream import make_tool_tap

            tool_tap = make_tool_tap(lambda payload: send((), "tools", payload))
            self.config["callbacks"] = with_handler(self.config.get("callbacks"), tool_tap)

    def _report_pause(self, task: Task) -> None:
        """A task paused on interrupts: its ``__interrupt__`` chunk (``updates``) and the
        state without the step's writes with it (``values``), as the task pauses, one per
        task, as LangGraph streams them."""
        if self.producers.wants("interrupt"):
            self.outbox.extend(
                self.producers.chunks(
                    "interrupt",
                    lambda: {
                        "values": self.graph.read_state(self.channels),
                        "interrupts": task.interrupts,
                    },
                )
            )

    def _report_paused_step(self, tasks: list[Task]) -> None:
        """A step paused on interrupts: the state with the writes of its finished tasks
        (``values``), when they wrote an output key, as LangGraph gives it when it stops."""
        written = {ch for t in tasks if t.status == "done" for ch, _ in t.writes}
        if written:
            self._emit("values", lambda: (self.values, written))

    def report_live(self, kind: str, build: Callable[[], Any]) -> None:
        """Report an event while tasks run (a ``@task`` call's start or result), from the
        loop or a worker thread; ``build()`` makes its payload if a requested mode reads it."""
        self.live.extend(self.producers.chunks(kind, build))
        self._wake_up()

    def _write_live(self, kind: str, payload: Any) -> None:
        """Report an event of a running node, from the loop or a worker thread."""
        self.live.extend(self.producers.chunks(kind, lambda: payload))
        self._wake_up()

    def _wake_up(self) -> None:
        wake, loop = self._wake, self._aio_loop
        if wake is not None and loop is not None:
            if threading.get_ident() == self._loop_thread:
                wake.set()
            else:
                loop.call_soon_threadsafe(wake.set)

    # -- output ------------------------------------------------------------------------------

    def _task_result(self, task: Task) -> dict[str, Any] | None:
        return self.graph.result_of(task.writes)

    def _state_writes(self, task: Task) -> list[tuple[str, Any]]:
        """A finished task's writes of state keys, in order (its ``updates`` chunk)."""
        if task.status != "done":
            return []
        keys = self.graph.schema.key_set
        return [(ch, v) for ch, v in task.writes if ch in keys]

    def _debug_checkpoint(self) -> dict[str, Any]:
        tasks = prepare_tasks(
            self.graph, self.checkpoint, self.channels, self.step, checkpoint_ns=self.checkpoint_ns
        )
        return {
            "step": self.step,
            "timestamp": self.checkpoint["ts"],
            "type": "checkpoint",
            "payload": {
                "config": self._mapped(self.checkpoint_config),
                "parent_config": self._mapped(self.parent_config),
                "values": self.graph.schema.shown(self.graph.read_state(self.channels)),
                "metadata": self.metadata,
                "next": [t.name for t in tasks],
                "tasks": [
                    {
                        "id": t.id,
                        "name": t.name,
                        "interrupts": self._pending_interrupts(t.id),
                        "state": self._task_state(t),
                    }
                    for t in tasks
                ],
            },
        }

    def _mapped(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """A subgraph's checkpoint config with ``checkpoint_map`` (each level's checkpoint),
        as LangGraph reports it."""
        if config is None or not self.parents:
            return config
        configurable = dict(config["configurable"])
        own = configurable.get("checkpoint_id")
        configurable["checkpoint_map"] = {**self.parents, self.checkpoint_ns: own}
        return {**config, "configurable": configurable}

    def _task_state(self, task: Task) -> RunnableConfig | None:
        """The namespace config of a task whose node runs a subgraph (else None)."""
        if self.graph.subgraph_of(task.name) is None:
            return None
        own = f"{task.name}{NS_END}{task.id}"
        namespace = f"{self.checkpoint_ns}{NS_SEP}{own}" if self.checkpoint_ns else own
        return checkpoint_config(self.thread_id or "", namespace, None)

    def _pending_interrupts(self, task_id: str) -> tuple[dict[str, Any], ...]:
        record = self.pending.get(task_id)
        if record is None or record.finished:
            return ()
        return tuple(interrupt_payload(i) for i in record.interrupts)

    def _debug_event(self, kind: str, task: Task) -> dict[str, Any]:
        payload: dict[str, Any] = {"id": task.id, "name": task.name}
        if kind == "task":
            payload.update(input=task.input, triggers=task.listed_triggers)
        else:
            payload.update(
                error=task.error,
                result=(self._task_result(task) or {}) if task.status == "done" else {},
                interrupts=[interrupt_payload(i) for i in task.interrupts],
            )
        return {
            "step": self.step + 1,
            "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(),
            "type": kind,
            "payload": payload,
        }
