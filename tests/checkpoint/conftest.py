"""Fixtures of the saver tests: a fresh key prefix on the session's Redis server per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[str]:
    """URL of the session's Redis server with a fresh key prefix (``?prefix=test-…``), so every
    test sees an empty store; the prefix's keys are deleted afterwards."""
    import redis

    prefix = f"test-{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in redis_url else "?"
    yield f"{redis_url}{sep}prefix={prefix}"
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
