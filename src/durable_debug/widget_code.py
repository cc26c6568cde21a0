"""The Python the widget shows for each action (its Code panel, "Copy code", ``TimeTravel.code``).

``ActionCode("support_bot", awaits=True).rerun(config, {"before": ["review"]})`` is
``await support_bot.ainvoke(None, {'configurable': {...}}, interrupt_before=['review'])``.

The code awaits the async methods when the graph's saver has them (``awaits``), and calls the
sync ones (``graph.update_state(...)``, ``graph.invoke(...)``) for a sync-only saver such as
LangGraph's ``SqliteSaver``, so it runs pasted into a cell of the app it was made for. Values
are written with ``repr``. Nothing here reads a graph or a saver: the widget
(``durable_debug.widget``) decides what an action does and asks this module how to say it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from durable_debug.checkpoint.names import PREVIOUS
from durable_debug.graph.types import END

__all__ = ["ActionCode", "config_code", "entrypoint_return"]

Breakpoints = Mapping[str, Sequence[str]]
"""``{"before": [node, ...], "after": [...]}``: the nodes a run pauses at (empty kinds left
out), written as ``interrupt_before=`` / ``interrupt_after=``."""


@dataclass(frozen=True)
class ActionCode:
    """Writes the code of the widget's actions on a graph the user's cell calls ``graph_name``;
    ``awaits``: the graph's saver has async methods (``inspect.access.has_async_methods``)."""

    graph_name: str
    awaits: bool

    def call(self, method: str, arguments: str) -> str:
        """``await graph.a<method>(arguments)``, or ``graph.<method>(arguments)`` when the
        saver is sync-only."""
        if self.awaits:
            return f"await {self.graph_name}.a{method}({arguments})"
        return f"{self.graph_name}.{method}({arguments})"

    def fork(
        self,
        config: Mapping[str, Any],
        values: Mapping[str, Any],
        *,
        replace: Collection[str] = (),
        reducers: Mapping[str, str] | None = None,
        as_node: str | None = None,
    ) -> str:
        """``update_state`` at the checkpoint of ``config`` with the edited ``values``: a
        channel in ``replace`` wrapped in ``Overwrite(...)``, and before the call a comment
        per edited channel with a reducer (``reducers``: channel → the reducer's name) saying
        whether the value goes through it or replaces it."""
        items = ", ".join(
            f"{channel!r}: Overwrite({value!r})"
            if channel in replace
            else f"{channel!r}: {value!r}"
            for channel, value in values.items()
        )
        notes = "".join(
            f"# {channel!r} has a reducer ({(reducers or {})[channel]}): the value is "
            + ("replaced (Overwrite)" if channel in replace else "appended through it")
            + "\n"
            for channel in values
            if channel in (reducers or {})
        )
        return notes + self._update(config, "{" + items + "}", as_node)

    def fork_entrypoint(
        self,
        config: Mapping[str, Any],
        edits: Mapping[str, Any],
        current: Mapping[str, Any],
        *,
        as_node: str | None = None,
    ) -> str:
        """``update_state`` of an ``@entrypoint`` thread at the checkpoint of ``config``, whose
        channels are its return value (``END``) and its saved ``previous``: the new return
        value (``entrypoint_return``), or ``entrypoint.final(value=..., save=...)`` when
        ``previous`` is edited too."""
        value = entrypoint_return(edits, current)
        if PREVIOUS in edits:
            update = f"entrypoint.final(value={value!r}, save={edits[PREVIOUS]!r})"
        else:
            update = repr(value)
        return self._update(config, update, as_node)

    def rerun(
        self,
        config: Mapping[str, Any],
        breakpoints: Breakpoints,
        *,
        replay_thread: str | None = None,
    ) -> str:
        """``invoke(None, config)``: run on from the checkpoint of ``config``; with
        ``replay_thread``, inside ``durable_debug.replaying(...)`` over that thread's recorded
        model and tool calls."""
        code = self.call("invoke", f"None, {config_code(config)}{_breaks(breakpoints)}")
        if replay_thread is None:
            return code
        thread = {"configurable": {"thread_id": replay_thread}}
        return f"with durable_debug.replaying({self.graph_name}, {thread!r}):\n    {code}"

    def resume(
        self, config: Mapping[str, Any], answers: Mapping[str, Any], breakpoints: Breakpoints
    ) -> str:
        """``invoke(Command(resume=answers), config)``: ``answers`` maps interrupt ids to the
        values they resume with."""
        arguments = f"Command(resume={dict(answers)!r}), {config_code(config)}"
        return self.call("invoke", arguments + _breaks(breakpoints))

    def run(self, thread_id: str, value: Any, breakpoints: Breakpoints) -> str:
        """``invoke(value, config)``: a new run of the thread from its latest checkpoint."""
        thread = repr({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        return self.call("invoke", f"{value!r}, {thread}{_breaks(breakpoints)}")

    def _update(self, config: Mapping[str, Any], update: str, as_node: str | None) -> str:
        node = "" if as_node is None else f", as_node={as_node!r}"
        return self.call("update_state", f"{config_code(config)}, {update}{node}")


def config_code(config: Mapping[str, Any]) -> str:
    """The config naming one checkpoint as Python: its thread, namespace and checkpoint id
    only; ``checkpoint_ns`` stays even when empty, since LangGraph's savers index by it."""
    configurable = dict(config.get("configurable") or {})
    keep = {k: configurable.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id")}
    keep["checkpoint_ns"] = keep["checkpoint_ns"] or ""
    return repr({"configurable": keep})


def entrypoint_return(edits: Mapping[str, Any], current: Mapping[str, Any]) -> Any:
    """The return value a fork of an ``@entrypoint`` thread writes: the edited one, else the
    checkpoint's own (``current``)."""
    return edits.get(END, current.get(END))


def _breaks(breakpoints: Breakpoints) -> str:
    return "".join(f", interrupt_{when}={list(nodes)!r}" for when, nodes in breakpoints.items())
