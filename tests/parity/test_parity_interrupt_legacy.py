"""``Interrupt`` built with the keywords of LangGraph's pre-0.6 interrupts (``ns``, ``when``,
``resumable``) and ``Interrupt.from_ns``, as LangGraph gives them (the id digits are our
hash's, so the comparison is of what agrees with what)."""

from __future__ import annotations

from typing import Any

import pytest
from parity_harness import Api, Trace, check_parity

pytestmark = pytest.mark.parity


def interrupt_class(api: Api) -> Any:
    if api.name == "langgraph":
        from langgraph.types import Interrupt
    else:
        from durable_debug.types import Interrupt
    return Interrupt


def test_legacy_interrupt_keywords():
    def scenario(api: Api, trace: Trace) -> None:
        interrupt = interrupt_class(api)
        legacy = interrupt(value="abc", resumable=True, when="during", ns=["a:b", "c:d"])
        modern = interrupt.from_ns(value="abc", ns="a:b|c:d")
        other = interrupt.from_ns(value="abc", ns="a:b")
        trace.note(
            "legacy",
            {
                "value": legacy.value,
                "same id as from_ns": legacy.id == modern.id,
                "differs by ns": legacy.id != other.id,
                "32 hex digits": len(legacy.id) == 32 and int(legacy.id, 16) >= 0,
                "has resumable": hasattr(legacy, "resumable"),
                "has ns": hasattr(legacy, "ns"),
                "schema": legacy.response_schema,
            },
        )
        with_id = interrupt("v", "my-id", ns=["x:y"], resumable=False)
        trace.note("an id given wins", with_id.id)
        trace.note("default id", interrupt("v").id)
        schema = {"type": "string"}
        trace.note(
            "from_ns schema", interrupt.from_ns("q", "n:1", response_schema=schema).response_schema
        )

    check_parity(scenario)
