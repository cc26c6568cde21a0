"""The :class:`~durable_debug.graph.calls.Runtime` a run starts with, as LangGraph builds it.

A run's own runtime holds what it was given (``context=``, the graph's store, its stream
writer); LangGraph then fills what it lacks from the runtime of the node that started it,
when one did (a subgraph, or a graph invoked inside a node function), so a subgraph invoked
without ``context=`` sees its caller's context, store and idle-timeout heartbeat:

    def main_node(state, runtime):            # runtime.context: Context(username="Alice")
        return sub.invoke(state)              # sub's nodes see the same context

and reads ``server_info`` from the config a LangGraph server gives its runs
(``assistant_id``, ``graph_id`` and the authenticated user ``langgraph_auth_user`` in
``configurable``), else from its caller's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from durable_debug.graph.calls import RunControl, Runtime, ServerInfo, current_call

__all__ = ["run_runtime", "server_info_of"]


def run_runtime(
    own: Runtime[Any], config: Mapping[str, Any], control: RunControl | None
) -> Runtime[Any]:
    """The runtime a run starts with: ``own`` (what the run was given), its ``server_info``
    from ``config``, its ``control`` the one given, and the rest it lacks (context, store,
    heartbeat, execution and server info, control) from the runtime of the node running in
    this context, if any, by LangGraph's merge rule (:meth:`Runtime.merge`). The stream writer
    stays the run's own: a nested run's chunks reach its caller's stream through the
    subgraph stream (``subgraph.SubgraphStream``), not through its caller's writer."""
    server_info = server_info_of(config)
    if server_info is not None or control is not None:
        own = own.override(
            server_info=server_info or own.server_info, control=control or own.control
        )
    caller = current_call()
    if caller is not None:
        own = caller.runtime.merge(own).override(stream_writer=own.stream_writer)
    return own if own.control is not None else own.override(control=RunControl())


def server_info_of(config: Mapping[str, Any]) -> ServerInfo | None:
    """The :class:`ServerInfo` a LangGraph server's run config describes: its
    ``configurable`` ``assistant_id`` and ``graph_id`` ("" when absent) and, as ``user``, its
    ``langgraph_auth_user`` when that is a user object (one with an ``identity``, as
    ``langgraph_sdk``'s ``BaseUser`` and the server's proxy of it have); None when the config
    names none of these."""
    configurable = config.get("configurable") or {}
    assistant_id = configurable.get("assistant_id")
    graph_id = configurable.get("graph_id")
    user = configurable.get("langgraph_auth_user")
    if user is not None and not hasattr(user, "identity"):
        user = None
    if assistant_id is None and graph_id is None and user is None:
        return None
    return ServerInfo(
        assistant_id=str(assistant_id) if assistant_id else "",
        graph_id=str(graph_id) if graph_id else "",
        user=user,
    )
