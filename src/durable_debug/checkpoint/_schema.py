"""Schema versions of the SQL savers: check them, refuse newer ones, run missing migrations.

Each saver keeps a ``MIGRATIONS`` list whose index is the schema version a statement creates;
``checkpoint_migrations`` records the versions applied.

    version = await schema_version(session, MIGRATIONS_TABLE_EXISTS)   # -1: empty database
    if version > len(MIGRATIONS) - 1:
        raise newer_schema_error("the SQLite database 'x.db'", version, len(MIGRATIONS) - 1)
    await apply_migrations(session, MIGRATIONS, version, INSERT_MIGRATION)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint.errors import DurableDebugError

if TYPE_CHECKING:
    from durable_debug.checkpoint._sql import Session

__all__ = ["DatabaseSetupError", "apply_migrations", "newer_schema_error", "schema_version"]

logger = logging.getLogger(__name__)


class DatabaseSetupError(DurableDebugError, RuntimeError):
    """The database behind a saver cannot be used: not reachable, not a database of the
    expected kind, or holding a schema this version of durable_debug does not know."""


def newer_schema_error(where: str, found: int, known: int) -> DatabaseSetupError:
    """The error for a database whose schema is newer than this code knows."""
    return DatabaseSetupError(
        f"{where} holds checkpoint schema version {found}, but this durable_debug knows versions "
        f"up to {known}: it was created by a newer durable_debug (or by another program that "
        "uses the same table names, such as LangGraph's savers). Upgrade durable_debug, or use "
        "another database. Nothing was changed."
    )


async def schema_version(s: Session, exists_sql: str, exists_params: Sequence[Any] = ()) -> int:
    """Return the highest applied migration (-1 for a database without our tables)."""
    if not await s.fetch(exists_sql, exists_params):
        return -1
    rows = await s.fetch("SELECT max(v) FROM checkpoint_migrations")
    value = rows[0][0] if rows else None
    return -1 if value is None else int(value)


async def apply_migrations(
    s: Session, migrations: Sequence[str], current: int, insert_sql: str
) -> None:
    """Run the migrations after ``current`` and record each one."""
    for v in range(current + 1, len(migrations)):
        await s.execute(migrations[v])
        await s.execute(insert_sql, (v,))
        logger.debug("applied checkpoint schema migration %d", v)
