"""A view's own connection to the store a graph writes to, and what to say when a store is gone.

A notebook shows a widget for an app, then goes on: a later cell may close the app's SQLite
connection (``conn.close()`` when the app is done with its file), and with it every read the
widget would do through the app's saver. So a view reads through a copy of the graph whose
saver has a connection of its own to the same file (:func:`reading_graph`); the app's own
saver still does the writes (a fork, a rerun), as the code the view shows does.

    reads, close = reading_graph(app)   # app.copy(...) with a saver on its own connection
    ...
    close()                             # when the view is done

When a read fails because a store is closed or gone, :func:`store_gone_message` says so and
what to do, in words a notebook user can act on.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable
from typing import Any

from durable_debug.checkpoint.errors import StoreClosedError
from durable_debug.inspect.access import GraphLike, SaverLike

__all__ = ["reading_graph", "store_gone_message"]

logger = logging.getLogger(__name__)


def _sqlite_file(conn: Any) -> str | None:
    """The file behind a ``sqlite3`` connection, or None (in memory, closed, not SQLite)."""
    if not isinstance(conn, sqlite3.Connection):
        return None
    try:
        rows = conn.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:  # closed, or used from a thread it refuses
        return None
    path = next((str(row[2]) for row in rows if row[1] == "main"), "")
    return path or None


def _is_langgraph_sync_sqlite(saver: SaverLike) -> bool:
    cls = type(saver)
    module = cls.__module__
    return cls.__name__ == "SqliteSaver" and module.startswith("langgraph.checkpoint.sqlite")


def reading_graph(graph: GraphLike) -> tuple[Any, Callable[[], None]]:
    """``graph`` with a saver on a connection of its own, for reads, and the function that
    closes that connection; ``(graph, no-op)`` when the saver is not one the view can reopen.

    Reopened: LangGraph's sync ``SqliteSaver`` on a file (the same class and serializer on a
    new connection to the file; LangGraph's compiled graphs copy themselves with ``copy``).
    Every other saver is read through the graph as it is.
    """
    saver = getattr(graph, "checkpointer", None)
    copy = getattr(graph, "copy", None)
    if saver is None or not callable(copy) or not _is_langgraph_sync_sqlite(saver):
        return graph, lambda: None
    path = _sqlite_file(getattr(saver, "conn", None))
    if path is None:
        return graph, lambda: None
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        own = type(saver)(conn, serde=saver.serde)
        reads = copy(update={"checkpointer": own})
    except Exception:  # a LangGraph that copies differently: read through the app's saver
        logger.debug("cannot give %r a connection of its own", graph, exc_info=True)
        conn.close()
        return graph, lambda: None

    def close() -> None:
        with contextlib.suppress(sqlite3.Error):
            conn.close()

    return reads, close


_GONE_HINTS = (
    "closed database",  # sqlite3: the connection was closed
    "no active connection",  # aiosqlite
    "connection is closed",  # psycopg
    "the connection is closed",
    "unable to open database file",  # the file was removed or moved
    "no such table",  # a file that was emptied or replaced
)


def store_gone_message(error: BaseException, what: str) -> str | None:
    """A plain sentence for ``error`` when it says the store is closed or gone: what happened
    (``what`` names the action, "Cannot read thread 'job-1'") and what to do; else None."""
    text = str(error)
    if not isinstance(error, StoreClosedError) and not any(
        hint in text.lower() for hint in _GONE_HINTS
    ):
        return None
    return (
        f"{what}: the store is closed or gone ({type(error).__name__}: {text}). "
        "Something closed the saver's connection or removed its database after this widget "
        "was made. Re-run the cell that opens the store and builds the app, then the cell "
        "that shows this widget."
    )
