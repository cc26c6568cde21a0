"""saver_from_url: choose where checkpoints live by configuration, not by code (notebook 09).

    saver = saver_from_url()                       # $DURABLE_DEBUG_DB, else memory://
    saver = saver_from_url("sqlite:///runs.db")    # ./runs.db
    saver = saver_from_url("postgresql://user@db.internal/app")
    saver = saver_from_url("redis://cache.internal:6379/0?ttl=86400")

Accepted URLs:

* ``memory://`` — :class:`MemorySaver`, gone when the process exits;
* ``sqlite:///relative/path.db`` (three slashes: relative to the working directory),
  ``sqlite:////absolute/path.db`` (four slashes), and ``sqlite://:memory:`` (also written
  ``sqlite:///:memory:`` or ``sqlite://``) — :class:`SqliteSaver`;
* ``postgresql://…`` or ``postgres://…`` — :class:`PostgresSaver`, given the URL unchanged;
* ``redis://host:port/db``, ``rediss://…`` (TLS) or ``unix:///path/to/redis.sock`` —
  :class:`RedisSaver`; the query may add ``prefix=`` (of every key name) and ``ttl=`` (seconds
  after its last write that a thread expires).
"""

from __future__ import annotations

import os
from urllib.parse import unquote

from durable_debug.checkpoint.base import BaseCheckpointSaver, SerializerProtocol

__all__ = ["ENV_VAR", "saver_from_url", "sqlite_url_path"]

ENV_VAR = "DURABLE_DEBUG_DB"
"""Environment variable read by :func:`saver_from_url` when no URL is given."""

_ACCEPTED = (
    "memory://, sqlite:///relative.db, sqlite:////absolute/path.db, sqlite://:memory:, "
    "postgresql://user:password@host:port/dbname (or postgres://…), "
    "redis://host:port/db (or rediss://…, unix:///path/to/redis.sock; options ?prefix=…&ttl=…)"
)


def saver_from_url(
    url: str | None = None, *, serde: SerializerProtocol | None = None
) -> BaseCheckpointSaver:
    """Return a saver for ``url``; without one, for ``$DURABLE_DEBUG_DB``, else memory://.

    The database is opened on first use (or by ``setup()``); close a SQL or Redis saver when
    done, or use it as a context manager.
    """
    source = "URL"
    if url is None:
        url = os.environ.get(ENV_VAR, "").strip() or "memory://"
        source = f"${ENV_VAR}"
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if not sep:
        raise ValueError(f"{source} {url!r} is not a saver URL; use one of: {_ACCEPTED}")
    if scheme == "memory":
        if rest:
            raise ValueError(f"{source} {url!r}: memory:// takes nothing after the scheme")
        from durable_debug.checkpoint.memory import MemorySaver

        return MemorySaver(serde=serde)
    if scheme == "sqlite":
        from durable_debug.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(_sqlite_path(url, rest, source), serde=serde)
    if scheme in ("postgresql", "postgres"):
        from durable_debug.checkpoint.postgres import PostgresSaver

        return PostgresSaver(url, serde=serde)
    if scheme in ("redis", "rediss", "unix"):
        from durable_debug.checkpoint.redis import RedisSaver

        return RedisSaver(url, serde=serde)
    raise ValueError(f"{source} {url!r} has an unknown scheme {scheme!r}; use one of: {_ACCEPTED}")


def sqlite_url_path(url: str) -> str:
    """The file path a ``sqlite://`` URL names (``":memory:"`` for an in-memory database)."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() != "sqlite":
        raise ValueError(f"URL {url!r} is not a sqlite:// URL")
    return _sqlite_path(url, rest, "URL")


def _sqlite_path(url: str, rest: str, source: str) -> str:
    """Return the file path of a sqlite URL (the part after ``sqlite://``)."""
    if "?" in rest or "#" in rest:
        raise ValueError(f"{source} {url!r}: sqlite URLs take no query string or fragment")
    if rest in ("", ":memory:", "/:memory:"):
        return ":memory:"
    if not rest.startswith("/"):
        raise ValueError(
            f"{source} {url!r} names a host; a sqlite URL is sqlite:///relative.db (three "
            "slashes) or sqlite:////absolute/path.db (four)"
        )
    path = unquote(rest[1:])
    if not path:
        raise ValueError(f"{source} {url!r} names no file; use one of: {_ACCEPTED}")
    return path
