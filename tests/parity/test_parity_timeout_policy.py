"""``TimeoutPolicy`` (its fields, ``coerce`` and the errors it gives) and ``DEFAULT_RUNTIME``
(the runtime outside a task), as LangGraph gives them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity

pytestmark = pytest.mark.parity


def modules(api: Api) -> tuple[Any, Any]:
    if api.name == "langgraph":
        import langgraph.runtime as runtime
        import langgraph.types as types
    else:
        import durable_debug.runtime as runtime
        import durable_debug.types as types
    return types, runtime


def test_timeout_policy_coerce():
    def scenario(api: Api, trace: Trace) -> None:
        types, _ = modules(api)
        policy = types.TimeoutPolicy

        def show(label: str, value: Any) -> None:
            try:
                coerced = policy.coerce(value)
            except ValueError as error:
                trace.note(label, f"ValueError: {error}")
                return
            if coerced is None:
                trace.note(label, None)
                return
            trace.note(
                label,
                {
                    "run": coerced.run_timeout,
                    "idle": coerced.idle_timeout,
                    "refresh_on": coerced.refresh_on,
                    "float run": isinstance(coerced.run_timeout, float),
                    "same object": coerced is value,
                },
            )

        show("none", None)
        show("number", 3)
        show("timedelta", timedelta(milliseconds=250))
        show("policy of timedeltas", policy(idle_timeout=timedelta(seconds=2), run_timeout=5))
        show("empty policy", policy())
        show("heartbeat", policy(idle_timeout=0.5, refresh_on="heartbeat"))
        coerced = policy.coerce(policy(run_timeout=1.5))
        show("already coerced", coerced)
        show("zero", 0)
        show("negative idle", policy(idle_timeout=-1))
        show("bad refresh_on", policy(run_timeout=1, refresh_on="never"))
        trace.note("defaults", repr(policy()).replace("durable_debug", "langgraph"))
        trace.note("equal", policy(run_timeout=1.0) == policy(run_timeout=1.0))
        try:
            policy(1.0)  # type: ignore[misc]  # positional: keyword-only, as LangGraph's
        except TypeError:
            trace.note("positional", "TypeError")
        try:
            policy(run_timeout=1.0).run_timeout = 2.0  # type: ignore[misc]  # frozen
        except AttributeError as error:
            trace.note("frozen", type(error).__name__)

    check_parity(scenario)


def test_default_runtime():
    def scenario(api: Api, trace: Trace) -> None:
        _, runtime = modules(api)
        default = runtime.DEFAULT_RUNTIME
        trace.note(
            "fields",
            {
                "context": default.context,
                "store": default.store,
                "previous": default.previous,
                "execution_info": default.execution_info,
                "control": default.control,
                "heartbeat": default.heartbeat(),
                "writer": default.stream_writer({"chunk": 1}),
            },
        )
        beats: list[str] = []
        merged = default.merge(runtime.Runtime(heartbeat=lambda: beats.append("beat")))
        merged.heartbeat()
        default.merge(runtime.Runtime()).heartbeat()
        trace.note("merged heartbeat", beats)

    check_parity(scenario)
