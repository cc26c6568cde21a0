"""The pytest plugin of the LangGraph suite run: it stands in for LangGraph's conftest.

Loaded with ``-p langgraph_suite.plugin --noconftest`` by ``run.py`` (never by the normal test
run). The environment says what to do:

``LANGGRAPH_SUITE_TARGET``
    ``durable_debug`` (default): ``langgraph.*`` imports resolve to durable_debug
    (:mod:`langgraph_suite.redirect`); ``langgraph``: the installed LangGraph, for the
    reference run.
``LANGGRAPH_SUITE_POSTGRES_URL``
    a PostgreSQL server for the ``postgres`` checkpointer parameters (absent: none).
``LANGGRAPH_SUITE_RESULTS``
    where to write every test's outcome (JSON).
``LANGGRAPH_SUITE_DESELECT`` / ``LANGGRAPH_SUITE_ONLY``
    files of test ids (or files) not to run / the only ones to run.
``LANGGRAPH_SUITE_TIMEOUT``
    seconds a test may take (setup, call and teardown) before it is stopped (default
    ``run.DEFAULT_TIMEOUT``): SIGALRM raises :class:`SuiteTimeout` in it, naming it, after
    the stacks of every thread are written to ``LANGGRAPH_SUITE_STACKS``. A test that does
    not stop then (a hang in C code, or one that swallows the error and hangs again) ends
    the whole pytest process :data:`GRACE` seconds later, with the stacks dumped
    by ``faulthandler``; ``LANGGRAPH_SUITE_RUNNING`` names the test that was running and
    ``LANGGRAPH_SUITE_PROGRESS`` holds the outcomes so far, so ``run.py`` reports that test
    and runs the others.
``LANGGRAPH_SUITE_STACKS`` / ``LANGGRAPH_SUITE_RUNNING`` / ``LANGGRAPH_SUITE_PROGRESS``
    files for the above (absent: stacks go to stderr, nothing else is written). The running
    file holds ``<offset>\t<test id>``: the test's dumps are the stacks file from ``offset``.

The fixtures have LangGraph's names and are built from ``langgraph.*`` names, so the same code
gives our savers (through the redirection) or LangGraph's (reference run): checkpointers
memory, SQLite and (when the server is up) PostgreSQL; the in-memory store and cache.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

TARGET = os.environ.get("LANGGRAPH_SUITE_TARGET", "durable_debug")
if TARGET not in ("durable_debug", "langgraph"):
    raise pytest.UsageError(
        f"LANGGRAPH_SUITE_TARGET must be 'durable_debug' or 'langgraph', got {TARGET!r}"
    )
if TARGET == "durable_debug":
    from langgraph_suite import redirect

    redirect.install()

from langgraph_suite.run import DEFAULT_TIMEOUT  # noqa: E402

POSTGRES_URL = os.environ.get("LANGGRAPH_SUITE_POSTGRES_URL") or None
HARD_STOP_GRACE = 60.0
"""Seconds a timed-out test gets to stop before the process is ended (at most the timeout)."""
TIMEOUT = float(os.environ.get("LANGGRAPH_SUITE_TIMEOUT") or DEFAULT_TIMEOUT)
GRACE = min(HARD_STOP_GRACE, TIMEOUT)

_MARKERS = (
    (re.compile(r"PrivateLangGraphImport: (\S+)"), "private"),
    (re.compile(r"MissingLangGraphAPI: (\S+)"), "missing"),
    (re.compile(r"<private (langgraph[\w.]*)>"), "private"),
    (re.compile(r"<missing (langgraph[\w.]*)>"), "missing"),
)
"""How a failure names the LangGraph API it lacked: the redirection's errors first, then a
placeholder's repr (compared, or used as a key)."""


class SuiteTimeout(BaseException):
    """A test ran longer than ``LANGGRAPH_SUITE_TIMEOUT`` and was stopped. A BaseException,
    so that no ``except Exception`` in the test or the engine turns it into a pass."""


# -- which files run ------------------------------------------------------------------------


def _read_ids(variable: str) -> set[str] | None:
    path = os.environ.get(variable)
    if not path:
        return None
    return {line.strip() for line in Path(path).read_text().splitlines() if line.strip()}


_DESELECT = _read_ids("LANGGRAPH_SUITE_DESELECT") or set()
_ONLY = _read_ids("LANGGRAPH_SUITE_ONLY")


def _relative(config: pytest.Config, path: Path) -> str:
    return path.relative_to(config.rootpath).as_posix()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out the deselected test files (and the files LANGGRAPH_SUITE_ONLY lacks)."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    rel = _relative(config, collection_path)
    if rel in _DESELECT:
        return True
    if _ONLY is not None and not any(i == rel or i.startswith(rel + "::") for i in _ONLY):
        return True
    return None


def _wanted(nodeid: str) -> bool:
    """Whether LANGGRAPH_SUITE_ONLY names the test, its file, its class or its function."""
    assert _ONLY is not None
    parts = nodeid.split("::")
    prefixes = {"::".join(parts[:n]) for n in range(1, len(parts) + 1)}
    prefixes.add(nodeid.split("[", 1)[0])
    return not _ONLY.isdisjoint(prefixes)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop the deselected test ids (and keep only LANGGRAPH_SUITE_ONLY's when given)."""
    keep, drop = [], []
    for item in items:
        nodeid = item.nodeid
        out = nodeid in _DESELECT or (_ONLY is not None and not _wanted(nodeid))
        (drop if out else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# -- outcomes --------------------------------------------------------------------------------

_results: dict[str, dict[str, Any]] = {}


def _hint(text: str) -> str | None:
    for pattern, kind in _MARKERS:
        match = pattern.search(text)
        if match:
            return f"{kind}: {match.group(1)}"
    if "SuiteTimeout" in text:
        return "timeout"
    return None


def _summary(report: pytest.TestReport | pytest.CollectReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash is not None else str(report.longrepr)
    lines = [line for line in message.splitlines() if line.strip()]
    return (lines[0] if lines else message)[:300]


def _failed(nodeid: str, report: pytest.TestReport | pytest.CollectReport) -> None:
    entry = _results.setdefault(nodeid, {})
    if entry.get("outcome") == "failed":
        return  # keep the first failure (setup before call before teardown)
    text = report.longreprtext
    crash = getattr(report.longrepr, "reprcrash", None)
    entry.update(
        outcome="failed",
        summary=_summary(report),
        detail=(crash.message if crash is not None else text)[:3000],
        hint=_hint(text),
        when=report.when,
    )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Record each test's outcome: passed, failed (any phase) or skipped; once its teardown
    is over, append it to the progress file (what ``run.py`` keeps if the process dies)."""
    entry = _results.setdefault(report.nodeid, {})
    entry["seconds"] = round(entry.get("seconds", 0.0) + report.duration, 3)
    if report.failed:
        _failed(report.nodeid, report)
    elif report.skipped and entry.get("outcome") != "failed":
        entry["outcome"] = "skipped"
    elif report.when == "call" and report.passed and "outcome" not in entry:
        entry["outcome"] = "passed"
    progress = os.environ.get("LANGGRAPH_SUITE_PROGRESS")
    if progress and report.when == "teardown":
        with open(progress, "a", encoding="utf-8") as out:
            out.write(json.dumps({report.nodeid: entry}) + "\n")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A file that fails to import fails as a whole, under its path."""
    if report.failed:
        report.when = "collect"  # type: ignore[misc]
        _failed(report.nodeid, report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the outcomes (and the files left out) where the runner reads them."""
    path = os.environ.get("LANGGRAPH_SUITE_RESULTS")
    if not path:
        return
    data = {"target": TARGET, "tests": _results}
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=True))


# -- the per-test timeout --------------------------------------------------------------------


def _stacks_file() -> Any:
    """Where stack dumps go: ``LANGGRAPH_SUITE_STACKS`` (appended to), else stderr."""
    path = os.environ.get("LANGGRAPH_SUITE_STACKS")
    if not path:
        return sys.__stderr__
    return open(path, "a", encoding="utf-8")  # open for the whole run


_STACKS = _stacks_file()
_RUNNING = os.environ.get("LANGGRAPH_SUITE_RUNNING")


def _dump_stacks(nodeid: str, what: str) -> None:
    """Write every thread's stack, under a line naming the test."""
    _STACKS.write(f"=== {nodeid}: {what}\n")
    _STACKS.flush()
    faulthandler.dump_traceback(file=_STACKS, all_threads=True)
    _STACKS.flush()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Stop a test that hangs: SIGALRM dumps the stacks and raises SuiteTimeout (naming the
    test) in the main thread; should the test not stop, faulthandler ends the process
    :data:`GRACE` seconds later, dumping the stacks (the running file names the test)."""
    nodeid = item.nodeid

    def on_alarm(signum: int, frame: Any) -> None:
        message = f"ran longer than {TIMEOUT:g} s"
        _dump_stacks(nodeid, message)
        raise SuiteTimeout(message)

    if _RUNNING:  # where this test's dumps start in the stacks file, and its id
        _STACKS.flush()
        offset = os.fstat(_STACKS.fileno()).st_size
        Path(_RUNNING).write_text(f"{offset}\t{nodeid}", encoding="utf-8")
    faulthandler.dump_traceback_later(TIMEOUT + GRACE, exit=True, file=_STACKS)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()


# -- LangGraph's fixture names ----------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    """LangGraph's async tests run on asyncio."""
    return "asyncio"


@pytest.fixture
def deterministic_uuids(mocker: Any) -> Any:
    """``uuid.uuid4`` gives 00000000-0000-4000-8000-000000000000, …01, … in turn."""
    side_effect = (uuid.UUID(f"00000000-0000-4000-8000-{i:012}", version=4) for i in range(10000))
    return mocker.patch("uuid.uuid4", side_effect=side_effect)


@pytest.fixture(params=["sync", "async", "exit"])
def durability(request: pytest.FixtureRequest) -> str:
    """Each durability mode in turn."""
    return str(request.param)


@pytest.fixture
def cache() -> Any:
    """The in-memory node cache (``langgraph.cache.memory.InMemoryCache``)."""
    from langgraph.cache.memory import InMemoryCache

    return InMemoryCache()


@pytest.fixture(params=["in_memory"])
def sync_store() -> Iterator[Any]:
    """The in-memory store (``langgraph.store.memory.InMemoryStore``)."""
    from langgraph.store.memory import InMemoryStore

    yield InMemoryStore()


@pytest.fixture(params=["in_memory"])
async def async_store() -> AsyncIterator[Any]:
    """The in-memory store, for the async tests."""
    from langgraph.store.memory import InMemoryStore

    yield InMemoryStore()


@contextlib.contextmanager
def _schema(url: str) -> Iterator[str]:
    """A fresh schema first on ``search_path``: every test gets empty tables."""
    import psycopg

    schema = f"lgsuite_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


_SYNC_SAVERS = ["memory", "sqlite"] + (["postgres"] if POSTGRES_URL else [])
_ASYNC_SAVERS = ["memory", "sqlite_aio"] + (["postgres_aio"] if POSTGRES_URL else [])


@pytest.fixture(params=_SYNC_SAVERS)
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The memory, SQLite (``:memory:``) and PostgreSQL checkpointers in turn."""
    name = request.param
    if name == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif name == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(":memory:") as saver:
            yield saver
    else:
        from langgraph.checkpoint.postgres import PostgresSaver

        assert POSTGRES_URL is not None
        with _schema(POSTGRES_URL) as url, PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver


@pytest.fixture(params=_ASYNC_SAVERS)
async def async_checkpointer(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """The memory, SQLite and PostgreSQL checkpointers in turn, for the async tests."""
    name = request.param
    if name == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif name == "sqlite_aio":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
            yield saver
    else:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        assert POSTGRES_URL is not None
        with _schema(POSTGRES_URL) as url:
            async with AsyncPostgresSaver.from_conn_string(url) as saver:
                if TARGET == "langgraph":
                    await saver.setup()  # ours sets itself up on entry
                yield saver
