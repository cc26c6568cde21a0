"""Fixtures for the whole suite: real PostgreSQL and Redis servers, started by the tests.

``postgres_url`` / ``redis_url`` (session) start a throwaway server (see ``tests/servers.py``);
``postgres_db`` (per test) gives a URL whose ``search_path`` is a fresh, empty schema, and
``redis_db`` one with a fresh key prefix, so every test sees an empty store; ``every_saver``
runs a test once on each saver (``support/savers.py``). Point
``DURABLE_DEBUG_TEST_POSTGRES_URL`` / ``DURABLE_DEBUG_TEST_REDIS_URL`` at existing servers to use
those instead.

When a server cannot be started, its tests fail if ``CI`` or ``DURABLE_DEBUG_REQUIRE_SERVICES``
is set, and are skipped otherwise — with the reason repeated at the end of the run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from servers import (
    PostgresServer,
    ServerUnavailable,
    postgres_server,
    postgres_server_control,
    redis_server,
    services_required,
)
from support.savers import SAVER_KINDS, open_saver

T = TypeVar("T")

_unavailable: list[str] = []


@contextlib.contextmanager
def _started(name: str, start: Callable[[], AbstractContextManager[T]]) -> Iterator[T]:
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(start())
        except ServerUnavailable as exc:
            problem = f"{name} test server could not be started: {exc}"
        else:
            yield url
            return
    _unavailable.append(problem)
    if services_required():
        required = "(required: CI or DURABLE_DEBUG_REQUIRE_SERVICES is set)"
        pytest.fail(f"{problem}\n{required}", pytrace=False)
    pytest.skip(f"{problem} — set DURABLE_DEBUG_REQUIRE_SERVICES=1 to make this an error")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a PostgreSQL database on a server started for this test session."""
    external = os.environ.get("DURABLE_DEBUG_TEST_POSTGRES_URL")
    if external:
        yield external
        return
    with _started("PostgreSQL", postgres_server) as url:
        yield url


@pytest.fixture
def postgres_control() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, which the test may stop, start and restart
    (:class:`servers.PostgresServer`)."""
    with _started("PostgreSQL", postgres_server_control) as server:
        yield server


@pytest.fixture
def own_redis_url() -> Iterator[str]:
    """URL of a Redis server of this test's own, which the test may shut down."""
    with _started("Redis", redis_server) as url:
        yield url


@pytest.fixture
def postgres_db(postgres_url: str) -> Iterator[str]:
    """URL of the session's PostgreSQL database with a fresh schema first on search_path."""
    import psycopg

    schema = f"test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in postgres_url else "?"
    yield f"{postgres_url}{sep}options=-csearch_path%3D{schema}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of a Redis server started for this test session (no persistence)."""
    external = os.environ.get("DURABLE_DEBUG_TEST_REDIS_URL")
    if external:
        yield external
        return
    with _started("Redis", redis_server) as url:
        yield url


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


@pytest.fixture(params=SAVER_KINDS)
def every_saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Each of durable_debug's savers in turn, new and empty (memory, SQLite, PostgreSQL,
    Redis)."""
    with open_saver(request.param, request, tmp_path) as saver:
        yield saver


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Repeat, at the very end, which servers were missing (so a skip is not overlooked)."""
    for message in dict.fromkeys(_unavailable):
        terminalreporter.write_line(f"NOTE: {message}", red=True, bold=True)


_LANGGRAPH_BEFORE_311 = (
    "LangGraph cannot run this on Python {version}: its interrupt() and get_config() in an "
    "async run need Python 3.11 (LangGraph's own limit, said in langgraph/config.py: the "
    "config travels in a context variable, which asyncio passes to tasks from 3.11 on)"
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Before Python 3.11, a differential test whose LangGraph half stops on LangGraph's own
    "Called get_config outside of a runnable context" is reported as skipped with that reason
    (durable_debug's half runs on every Python); any other failure stays a failure."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    excinfo = call.excinfo
    if sys.version_info >= (3, 11) or excinfo is None or report.passed:
        return
    if not excinfo.errisinstance(RuntimeError) or "outside of a runnable context" not in str(
        excinfo.value
    ):
        return
    if not any("/langgraph/" in str(entry.path) for entry in excinfo.traceback):
        return
    version = ".".join(map(str, sys.version_info[:2]))
    report.outcome = "skipped"
    report.longrepr = (
        str(item.path),
        item.location[1] or 0,
        _LANGGRAPH_BEFORE_311.format(version=version),
    )
