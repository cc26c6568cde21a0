"""Open any of durable_debug's savers for a test, by kind.

    with open_saver("sqlite", request, tmp_path) as saver:
        ...

The durable kinds get a store of the test's own: a new file, a fresh PostgreSQL schema
(``postgres_db``) or a fresh Redis key prefix (``redis_db``), so every test starts empty.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.sqlite import SqliteSaver

SAVER_KINDS = [
    "memory",
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
    pytest.param("redis", marks=pytest.mark.redis),
]
"""Every saver once: the ``params`` of a fixture that runs a test on each."""


@contextlib.contextmanager
def open_saver(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A new, empty saver of ``kind`` (``memory``, ``sqlite``, ``sqlite-memory``,
    ``postgres`` or ``redis``), closed afterwards."""
    if kind == "memory":
        yield MemorySaver()
        return
    if kind == "sqlite":
        opened: Any = SqliteSaver(tmp_path / "checkpoints.db")
    elif kind == "sqlite-memory":
        opened = SqliteSaver(":memory:")
    elif kind == "postgres":
        from durable_debug.checkpoint.postgres import PostgresSaver

        opened = PostgresSaver(request.getfixturevalue("postgres_db"))
    elif kind == "redis":
        from durable_debug.checkpoint.redis import RedisSaver

        opened = RedisSaver(request.getfixturevalue("redis_db"))
    else:
        raise ValueError(f"no saver of kind {kind!r}")
    try:
        yield opened
    finally:
        opened.close()
