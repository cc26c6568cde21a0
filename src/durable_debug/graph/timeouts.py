"""Node timeouts: ``add_node(..., timeout=...)``, ``set_node_defaults(timeout=...)``,
``@task(timeout=...)`` and ``@entrypoint(timeout=...)``.

    builder.add_node("fetch", fetch, timeout=TimeoutPolicy(run_timeout=30, idle_timeout=5))

As in LangGraph 1.2, each attempt of the node runs under its :class:`TimeoutPolicy`:
``run_timeout`` caps the attempt's wall-clock time; ``idle_timeout`` the time it goes without
progress (a call of ``runtime.heartbeat()`` is progress, whatever ``refresh_on`` says). When
one fires the attempt is cancelled and fails with :class:`NodeTimeoutError` (retried like any
error: it is no ``TimeoutError``, so the default ``RetryPolicy`` retries it). Timeouts cancel
through asyncio, so a synchronous node, task or entrypoint with one is refused when it is
declared (compiled, for a node). A node body that raises ``asyncio.CancelledError`` itself
fails its run with :class:`NodeCancelledError` instead of passing for a cancelled sibling.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any, Literal, TypeVar

from durable_debug.graph.types import TimeoutPolicy

__all__ = [
    "AttemptClock",
    "NodeCancelledError",
    "NodeTimeoutError",
    "check_timeout_target",
    "coerce_timeout",
]

T = TypeVar("T")


class NodeTimeoutError(Exception):
    """An attempt of node ``node`` ran past one of its timeouts (``kind``: ``"run"`` or
    ``"idle"``; ``timeout`` the one that fired, ``elapsed`` seconds since the attempt began;
    ``run_timeout`` / ``idle_timeout`` the policy's, None when not set)."""

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: Literal["idle", "run"],
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        if kind == "idle":
            if idle_timeout is None:
                raise ValueError("NodeTimeoutError(kind='idle') needs idle_timeout")
            timeout = idle_timeout
            message = (
                f"Node '{node}' exceeded its idle timeout of {idle_timeout:.3f}s without "
                f"making progress (elapsed: {elapsed:.3f}s)."
            )
        elif kind == "run":
            if run_timeout is None:
                raise ValueError("NodeTimeoutError(kind='run') needs run_timeout")
            timeout = run_timeout
            message = (
                f"Node '{node}' exceeded its run timeout of {run_timeout:.3f}s "
                f"(elapsed: {elapsed:.3f}s)."
            )
        else:
            raise ValueError(f"NodeTimeoutError kind must be 'idle' or 'run', not {kind!r}")
        super().__init__(message)
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout


class NodeCancelledError(Exception):
    """Node ``node``'s own code raised ``asyncio.CancelledError`` (not a cancellation of the
    run): the node failed."""

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


def coerce_timeout(
    value: float | timedelta | TimeoutPolicy | None, where: str
) -> TimeoutPolicy | None:
    """``value`` as a policy in float seconds (see :meth:`TimeoutPolicy.coerce`); the
    ValueError of a timeout not above zero names ``where`` it was declared."""
    try:
        return TimeoutPolicy.coerce(value)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def check_timeout_target(is_async: bool, where: str) -> None:
    """Refuse a timeout on synchronous code: it could not be cancelled."""
    if not is_async:
        raise ValueError(
            f"{where}: timeouts are only supported for async nodes (they cancel the attempt "
            "through asyncio, which cannot stop a synchronous function); make it `async def` "
            "or drop the timeout"
        )


class AttemptClock:
    """Runs one attempt of a node under its :class:`TimeoutPolicy`: :meth:`run` cancels it,
    and fails with :class:`NodeTimeoutError`, when a timeout fires; :meth:`heartbeat` (the
    attempt's ``runtime.heartbeat``, callable from any thread) refreshes the idle timeout."""

    def __init__(self, policy: TimeoutPolicy, node: str) -> None:
        self.node = node
        self.run_timeout = _seconds(policy.run_timeout)
        self.idle_timeout = _seconds(policy.idle_timeout)
        self.last = time.monotonic()
        self.auto = policy.idle_timeout is not None and policy.refresh_on == "auto"
        """Whether the node's own output and callback events count as progress."""

    def heartbeat(self) -> None:
        """The attempt made progress."""
        self.last = time.monotonic()

    def watch_progress(self, config: dict[str, Any], runtime: Any) -> tuple[dict[str, Any], Any]:
        """For ``refresh_on="auto"``: ``config`` with a LangChain handler that counts every
        callback event of the runs under the node (model tokens, tool and chain runs) as
        progress, and ``runtime`` with a stream writer that counts each custom chunk."""
        writer = runtime.stream_writer

        def write(chunk: Any) -> None:
            self.heartbeat()
            writer(chunk)

        runtime = runtime.override(stream_writer=write)
        try:
            from durable_debug.graph.callbacks import with_handler
        except ImportError:  # no LangChain: no callback events to count
            return config, runtime
        handler = _progress_handler(self)
        return {**config, "callbacks": with_handler(config.get("callbacks"), handler)}, runtime

    async def run(self, work: Awaitable[T]) -> T:
        """Await ``work`` (in a task of its own) under the policy."""
        run, idle = self.run_timeout, self.idle_timeout
        started = self.last = time.monotonic()
        attempt = asyncio.ensure_future(work)
        try:
            while True:
                deadlines = [started + run] if run else []
                if idle:
                    deadlines.append(self.last + idle)
                wait = max(0.0, min(deadlines) - time.monotonic())
                done, _ = await asyncio.wait({attempt}, timeout=wait)
                if done:
                    return attempt.result()
                now = time.monotonic()
                kind: Literal["idle", "run"] | None = None
                if run and now >= started + run:
                    kind = "run"
                elif idle and now >= self.last + idle:
                    kind = "idle"
                if kind is None:
                    continue  # a heartbeat moved the idle deadline
                attempt.cancel()
                await asyncio.gather(attempt, return_exceptions=True)
                raise NodeTimeoutError(
                    self.node, now - started, kind=kind, idle_timeout=idle, run_timeout=run
                )
        finally:
            if not attempt.done():  # the run itself was cancelled
                attempt.cancel()
                await asyncio.gather(attempt, return_exceptions=True)


def _progress_handler(clock: AttemptClock) -> Any:
    """A LangChain callback handler calling ``clock.heartbeat()`` on every event."""
    from langchain_core.callbacks import BaseCallbackHandler

    def touch(self: Any, *args: Any, **kwargs: Any) -> None:
        clock.heartbeat()

    events = [
        "on_llm_start",
        "on_chat_model_start",
        "on_llm_new_token",
        "on_llm_end",
        "on_llm_error",
        "on_chain_start",
        "on_chain_end",
        "on_chain_error",
        "on_tool_start",
        "on_tool_end",
        "on_tool_error",
        "on_retriever_start",
        "on_retriever_end",
        "on_retriever_error",
        "on_agent_action",
        "on_agent_finish",
        "on_text",
        "on_retry",
        "on_custom_event",
    ]
    methods: dict[str, Any] = dict.fromkeys(events, touch)
    handler_class = type("NodeProgress", (BaseCallbackHandler,), {"run_inline": True, **methods})
    return handler_class()


def _seconds(value: float | timedelta | None) -> float | None:
    if value is None:
        return None
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
