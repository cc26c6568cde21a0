"""A graph's channels as LangGraph's public channel classes: what ``graph.channels`` (a compiled
graph, LangGraph's ``Pregel.channels``) and ``builder.channels`` (a ``StateGraph``) show.

    graph.channels["log"]   # BinaryOperatorAggregate(..., operator.add)

The engine builds its own channel classes for plain and reducer keys and for its triggers;
this gives each as the public class of its kind (``graph/public_channels.py``), holding the
same value and reducer, for code that inspects a graph's channels. A channel that already is
a public one (given in a key's ``Annotated``) is shown as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from durable_debug.graph import channels as engine
from durable_debug.graph import public_channels as public

__all__ = ["public_channels"]


def _public(name: str, channel: engine.Channel) -> engine.Channel:
    view: engine.Channel
    if isinstance(channel, public._Public):
        return channel
    if isinstance(channel, engine.BinaryOperatorAggregate):
        view = public.BinaryOperatorAggregate(Any, channel.operator, key=name)
    elif type(channel) is engine.LastValue:
        view = public.LastValue(Any, key=name)
    elif type(channel) is engine.NamedBarrierValue:
        view = public.NamedBarrierValue(Any, set(channel.names), key=name)
    elif type(channel) is engine.Topic:
        view = public.Topic(Any, key=name)
    elif type(channel) is engine.EphemeralValue:
        view = public.EphemeralValue(Any, key=name)
    else:  # the engine's deferred triggers, which LangGraph does not export either
        return channel
    view.value = channel.value
    return view


def public_channels(channels: Mapping[str, engine.Channel]) -> dict[str, engine.Channel]:
    """``channels`` by name, each as LangGraph's public class of its kind."""
    return {name: _public(name, channel) for name, channel in channels.items()}
