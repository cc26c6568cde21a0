"""The throwaway servers of ``tests/servers.py`` start, answer, and clean up after themselves."""

from __future__ import annotations

import socket

import pytest


@pytest.mark.redis
def test_redis_server_answers(redis_url: str):
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        assert client.ping() is True
        client.set("k", "v")
        assert client.get("k") == b"v"
    finally:
        client.close()


@pytest.mark.postgres
def test_postgres_server_answers(postgres_url: str):
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT 1 + 1").fetchone() == (2,)


def test_servers_stop_and_free_their_port():
    from servers import ServerUnavailable, redis_server, services_required

    try:
        with redis_server() as url:
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ServerUnavailable as exc:
        if services_required():
            raise
        pytest.skip(f"redis-server could not be started: {exc}")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
