"""``stream_events(version="v3")`` / ``astream_events(version="v3")`` of a compiled graph.

The run's mux registers the built-in transformers (values, messages, lifecycle, subgraphs),
then the graph's ``compile(transformers=...)``, then the call's ``transformers=``; the
run streams ``version="v2"`` parts with ``subgraphs=True`` for exactly the stream modes those
transformers require. ``stream_mode`` and ``subgraphs`` are therefore refused; every other
keyword (``context``, ``durability``, ``interrupt_before``, ``control``…) goes to the run.
The projections are scoped to the caller's checkpoint namespace, so a v3 stream opened inside
a node still sees its own graph's events as its root.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from durable_debug.checkpoint.base import config_checkpoint_ns
from durable_debug.checkpoint.names import MESSAGES_PROTOCOL, NS_SEP
from durable_debug.graph.calls import merge_configs
from durable_debug.graph.v3_channel import StreamTransformer
from durable_debug.graph.v3_mux import StreamMux, TransformerFactory
from durable_debug.graph.v3_run import AsyncGraphRunStream, GraphRunStream
from durable_debug.graph.v3_transformers import (
    LifecycleTransformer,
    MessagesTransformer,
    SubgraphTransformer,
    ValuesTransformer,
)

__all__ = ["astream_events_v3", "factories_of", "stream_events_v3", "with_v3"]

OWNED_KWARGS = ("stream_mode", "subgraphs")
"""Keywords v3 sets itself (the modes come from the transformers, subgraphs are always on)."""

BUILTINS: tuple[TransformerFactory, ...] = (
    ValuesTransformer,
    MessagesTransformer,
    LifecycleTransformer,
    SubgraphTransformer,
)


def _refuse_owned(kwargs: dict[str, Any]) -> None:
    given = [k for k in OWNED_KWARGS if k in kwargs]
    if given:
        raise TypeError(
            "stream_events(version='v3') / astream_events(version='v3') do not accept "
            f"{', '.join(given)}; v3 owns these (stream_mode is built from the transformer "
            "mux, subgraphs is forced True so nested namespaces flow through scoped muxes)."
        )


def factories_of(specs: Sequence[Any] | None) -> list[TransformerFactory]:
    """``specs`` (transformer classes or ``scope -> transformer`` callables) as factories;
    a TypeError for a transformer instance (it cannot be rebuilt for a subgraph's scope) or
    anything not callable."""
    factories: list[TransformerFactory] = []
    for spec in specs or ():
        if isinstance(spec, StreamTransformer):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, "
                f"got pre-built instance {type(spec).__name__}. Pass the transformer class "
                "or a factory like `lambda scope: MyTransformer(scope, ...)`."
            )
        if not callable(spec):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, "
                f"got {type(spec).__name__}."
            )
        factories.append(functools.partial(_build, spec))
    return factories


def _build(spec: Callable[[tuple[str, ...]], StreamTransformer], scope: tuple[str, ...]) -> Any:
    return spec(scope)


def _mux(graph: Any, config: Any, transformers: Sequence[Any] | None, is_async: bool) -> StreamMux:
    merged = merge_configs(graph.config, config)
    ns = config_checkpoint_ns(merged)
    return StreamMux(
        factories=[
            *BUILTINS,
            *factories_of(getattr(graph, "stream_transformers", ())),
            *factories_of(transformers),
        ],
        scope=tuple(ns.split(NS_SEP)) if ns else (),
        is_async=is_async,
    )


def _with_protocol(config: Any) -> dict[str, Any]:
    """``config`` asking the run's chat models for content-block events (what
    ``run.messages`` projects) instead of token chunks."""
    asking: dict[str, Any] = dict(config or {})
    asking["configurable"] = {**asking.get("configurable", {}), MESSAGES_PROTOCOL: True}
    return asking


def _with_defaults(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``interrupt_before`` / ``interrupt_after`` / ``control`` given (None
    unless the caller passed them), as LangGraph's v3 passes them to the run."""
    return {"interrupt_before": None, "interrupt_after": None, "control": None, **kwargs}


def _modes(mux: StreamMux) -> list[str]:
    """The stream modes the transformers require; without LangChain, not ``messages`` (no
    chat model or message can exist, and the mode's tap is a LangChain handler)."""
    modes: set[str] = set()
    for transformer in mux._transformers:
        modes.update(getattr(transformer, "required_stream_modes", ()))
    try:
        import langchain_core  # noqa: F401  # only whether it is installed
    except ImportError:
        modes.discard("messages")
    return sorted(modes)


def stream_events_v3(
    graph: Any,
    input: Any,
    config: Any = None,
    *,
    transformers: Sequence[Any] | None = None,
    **kwargs: Any,
) -> GraphRunStream:
    """The sync run stream of ``graph`` on ``input`` (see the module)."""
    _refuse_owned(kwargs)
    mux = _mux(graph, config, transformers, is_async=False)
    parts = graph.stream(
        input,
        _with_protocol(config),
        stream_mode=_modes(mux),
        subgraphs=True,
        version="v2",
        **_with_defaults(kwargs),
    )
    return GraphRunStream(iter(parts), mux)


async def astream_events_v3(
    graph: Any,
    input: Any,
    config: Any = None,
    *,
    transformers: Sequence[Any] | None = None,
    **kwargs: Any,
) -> AsyncGraphRunStream:
    """The async run stream of ``graph`` on ``input`` (see the module)."""
    mux = _mux(graph, config, transformers, is_async=True)
    parts = graph.astream(
        input,
        _with_protocol(config),
        stream_mode=_modes(mux),
        subgraphs=True,
        version="v2",
        **_with_defaults(kwargs),
    )
    return AsyncGraphRunStream(parts.__aiter__(), mux)


def with_v3(astream_events: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a graph's ``astream_events`` so that ``version="v3"`` returns an awaitable of
    the v3 run stream; other versions call ``astream_events`` itself."""

    @functools.wraps(astream_events)
    def dispatch(
        self: Any,
        input: Any,
        config: Any = None,
        *,
        version: str = "v2",
        transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if version == "v3":
            _refuse_owned(kwargs)
            return astream_events_v3(self, input, config, transformers=transformers, **kwargs)
        return astream_events(self, input, config, version=version, **kwargs)

    return dispatch
