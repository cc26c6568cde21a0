"""Read a durable_debug SQLite file without changing it, for inspecting a store.

:class:`~durable_debug.checkpoint.sqlite.SqliteSaver` is the saver an app writes with: on
first use it creates a missing file, switches it to WAL mode and runs missing schema
migrations. Inspecting must do none of that. :class:`ReadOnlySqliteSaver` reads the same
tables through a connection that refuses every write
(:func:`~durable_debug.checkpoint.langgraph_sqlite.open_read_only`: no file created, no
journal mode switch, no ``-wal`` / ``-shm`` left behind, the file's bytes and modification time
unchanged) and refuses, with a clear error, to save anything::

    view = SaverView(ReadOnlySqliteSaver("prod.db"))    # everything inspect does

(A file LangGraph's ``SqliteSaver`` wrote is read, just as unchanged, by
:class:`~durable_debug.checkpoint.langgraph_sqlite.LangGraphSqliteReader`.)

A file of a schema version older than
:data:`~durable_debug.checkpoint.sqlite.OLDEST_READABLE` (written by an older durable_debug) is
refused rather than migrated: opening it once with ``SqliteSaver`` upgrades it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from durable_debug.checkpoint._schema import (
    DatabaseSetupError,
    newer_schema_error,
    schema_version,
)
from durable_debug.checkpoint._sql import Session
from durable_debug.checkpoint.langgraph_layout import ReadOnlyStoreError
from durable_debug.checkpoint.langgraph_sqlite import open_read_only, sqlite_layout
from durable_debug.checkpoint.sqlite import (
    MIGRATIONS,
    MIGRATIONS_TABLE_EXISTS,
    OLDEST_READABLE,
    SqliteSaver,
)

__all__ = ["ReadOnlySqliteSaver"]

T = TypeVar("T")


class ReadOnlySqliteSaver(SqliteSaver):
    """durable_debug's SQLite layout, read without changing the file (module docstring)."""

    read_only = True
    """Nothing is ever written through this saver."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        conn = open_read_only(os.fspath(path))
        try:
            layout = sqlite_layout(conn)
        except BaseException:
            conn.close()
            raise
        if layout != "durable_debug":
            conn.close()
            raise DatabaseSetupError(f"{os.fspath(path)} has no durable_debug checkpoint tables")
        self._read_conn = conn
        super().__init__(conn)
        self.path = os.fspath(path)

    async def _prepare(self, s: Any) -> None:
        """Check the schema version only: no journal mode switch, no migration."""
        latest = len(MIGRATIONS) - 1
        version = await schema_version(s, MIGRATIONS_TABLE_EXISTS)
        if version > latest:
            raise newer_schema_error(f"the SQLite database {self.path!r}", version, latest)
        if version < OLDEST_READABLE:
            raise DatabaseSetupError(
                f"{self.path!r} was written by an older durable_debug (checkpoint schema "
                f"version {version}; this one reads {OLDEST_READABLE} to {latest}). "
                "Inspecting never changes a "
                "file: open it once with SqliteSaver(path), which upgrades it, then inspect it."
            )

    async def _close(self) -> None:
        try:
            await super()._close()
        finally:
            self._read_conn.close()

    def _refuse(self) -> ReadOnlyStoreError:
        return ReadOnlyStoreError(
            f"{self.path} is open read-only here (for inspecting): nothing is written to it. "
            "Fork, rerun or resume with the app's graph and its own SqliteSaver."
        )

    async def _in_session(self, fn: Callable[[Session], Awaitable[T]], write: bool) -> T:
        """Every write transaction (a checkpoint, writes, a lease, a deletion) is refused
        before it starts; reads run as usual."""
        if write:
            raise self._refuse()
        return await super()._in_session(fn, write)
