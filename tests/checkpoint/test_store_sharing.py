"""A store shared by people and processes: reads that never write, reads that never see a
half-pruned thread, and store-wide commands that survive one bad thread.

* Another user's read-only ``inspect``/``health`` of a store leaves no file beside it and the
  owner's next write succeeds (users made for the test: it runs as root, as CI does).
* Writers, a reader, sweep, prune, delete and recover side by side: no error anywhere, and the
  store is whole afterwards (``bench/lease_experiments.py soak`` runs it for 60 s).
* One damaged thread (SQLite, PostgreSQL): ``health`` and ``sweep`` report every other
  thread, ``check`` names it.
* An empty file and a permission problem are one-line errors naming the path (and the user).
"""

from __future__ import annotations

import json
import operator
import os
import pwd
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from stall_workers import HERE, SRC, wait_until

from durable_debug import START, SqliteSaver, StateGraph
from durable_debug.cli import main


class Log(TypedDict):
    items: Annotated[list, operator.add]


def _graph(saver: Any) -> Any:
    builder = StateGraph(Log)
    builder.add_node("a", lambda s: {"items": ["a"]})
    builder.add_node("b", lambda s: {"items": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile(checkpointer=saver)


@pytest.fixture
def owner() -> Iterator[str]:
    """A Unix user made for the test (removed afterwards)."""
    name = f"dd{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
    )
    try:
        require_python_for(name)
        yield name
    finally:
        subprocess.run(["userdel", name], check=False)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory every user may write (under /tmp: pytest's own is root's only)."""
    folder = Path(tempfile.mkdtemp(prefix="dd-shared-", dir="/tmp"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def require_python_for(user: str) -> None:
    """Skip, saying why, when ``user`` cannot start the Python under test at all (one built
    with its shared library in root's home): those tests need another user's process."""
    code, _, err = done(as_user(user, "-c", "pass"))
    if code != 0:
        pytest.skip(f"user {user!r} cannot run this Python ({sys.executable}): {err.strip()[:200]}")


def as_user(user: str, *args: str, stdin: str | None = None) -> subprocess.Popen[str]:
    entry = pwd.getpwnam(user)
    return subprocess.Popen(
        [
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--clear-groups",
            sys.executable,
            *args,
        ],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)]), "HOME": "/tmp"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",  # nothing there shadows a standard module (-m puts the cwd first on sys.path)
    )


def done(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=180)
    return proc.returncode, out, err


OWNER_SCRIPT = textwrap.dedent(
    """
    import operator, sys, time
    from pathlib import Path
    from typing import Annotated, TypedDict
    from durable_debug import START, SqliteSaver, StateGraph

    class Log(TypedDict):
        items: Annotated[list, operator.add]

    db, threads = sys.argv[1], sys.argv[2].split(",")
    ready = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    go = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    b = StateGraph(Log)
    b.add_node("a", lambda s: {"items": ["a"]})
    b.add_edge(START, "a")
    with SqliteSaver(db) as saver:
        g = b.compile(checkpointer=saver)
        g.invoke({"items": [threads[0]]}, {"configurable": {"thread_id": threads[0]}})
        if ready is not None:
            ready.touch()
            while not go.exists():
                time.sleep(0.01)
        for t in threads[1:]:
            g.invoke({"items": [t]}, {"configurable": {"thread_id": t}})
    print("written", ",".join(threads))
    """
)

READER_COMMANDS = (["inspect"], ["inspect", "--thread", "t1"], ["health"])


def _files(folder: Path) -> dict[str, str]:
    return {p.name: pwd.getpwuid(p.stat().st_uid).pw_name for p in folder.iterdir()}


def test_another_users_read_leaves_no_file_and_never_locks_the_owner_out(
    owner: str, shared: Path
) -> None:
    db = shared / "runs.db"
    code, out, err = done(as_user(owner, "-c", OWNER_SCRIPT, str(db), "t1"))
    assert code == 0, err
    assert _files(shared) == {"runs.db": owner}
    db.chmod(0o644)

    for command in READER_COMMANDS:  # the owner's store is closed: nothing beside it
        code, out, err = done(as_user("nobody", "-m", "durable_debug.cli", *command, str(db)))
        assert code == 0, err
        assert "t1" in out or command == ["health"]
        assert _files(shared) == {"runs.db": owner}, command

    code, out, err = done(as_user(owner, "-c", OWNER_SCRIPT, str(db), "t2,t3"))
    assert code == 0, err
    assert out.strip() == "written t2,t3"


def test_another_users_read_while_the_owner_writes_creates_nothing(
    owner: str, shared: Path
) -> None:
    db, ready, go = shared / "runs.db", shared / "ready", shared / "go"
    writer = as_user(owner, "-c", OWNER_SCRIPT, str(db), "t1,t2", str(ready), str(go))
    try:
        wait_until(lambda: ready.exists() or writer.poll() is not None, "the owner's first run")
        before = _files(shared)
        assert before["runs.db-wal"] == owner  # the owner has the store open
        for command in READER_COMMANDS:
            code, out, err = done(as_user("nobody", "-m", "durable_debug.cli", *command, str(db)))
            assert code == 0, err
            assert _files(shared) == before, command
    finally:
        go.touch()
    code, out, err = done(writer)
    assert code == 0, err
    assert out.strip() == "written t1,t2"


def test_writers_sweep_prune_delete_and_recover_side_by_side_never_fail(
    url: str, tmp_path: Path
) -> None:
    from durable_debug.checkpoint.url import saver_from_url
    from durable_debug.inspect.health import check_store

    seconds = "6"
    roles = [
        ("writer", 0),
        ("writer", 1),
        ("writer", 2),
        ("asker", 0),
        ("reader", 0),
        ("sweeper", 0),
        ("pruner", 0),
        ("deleter", 0),
        ("recoverer", 0),
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE / "soak_workers.py"), role, url, seconds, str(i)],
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)])},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role, i in roles
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["errors"] for r in results] == [[] for _ in results], results
    assert all(r["ops"] > 0 for r in results), results
    saver = saver_from_url(url)
    try:
        report = check_store(saver)
    finally:
        saver.close()
    assert report.damaged == [] and report.file_problems == []


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    return str(request.getfixturevalue("postgres_db"))


def _damaged_store(path: Path) -> None:
    with SqliteSaver(str(path)) as saver:
        graph = _graph(saver)
        for thread_id in ("t1", "t2", "t3"):
            graph.invoke({"items": [thread_id]}, {"configurable": {"thread_id": thread_id}})
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "UPDATE checkpoint_blobs SET blob = x'c1c1c1' WHERE thread_id = 't2' AND rowid = "
            "(SELECT min(rowid) FROM checkpoint_blobs WHERE thread_id = 't2')"
        )
    conn.close()


def _damaged_thread_reported(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``health``, ``sweep`` and ``check`` on ``store``, whose thread t2 is damaged: each
    reports t1 and t3 (or prunes them) and names t2, and exits 2."""
    assert main(["health", store]) == 2
    out, err = capsys.readouterr()
    largest = out.split("== largest ==")[1].split("==")[0]
    assert "t1" in largest and "t3" in largest
    damaged = out.split("== damaged ==")[1]
    assert "t2" in damaged and "CorruptPayloadError" in damaged
    assert "1 thread(s) could not be read" in err

    assert main(["sweep", store, "--keep-last", "1"]) == 2
    out, err = capsys.readouterr()
    pruned = [line.split()[0] for line in out.splitlines()[2:] if line.split()]
    assert {"t1", "t3"} <= set(pruned)
    assert any(line.split()[:1] == ["t2"] and "damaged:" in line for line in out.splitlines())

    assert main(["check", store]) == 2
    out, err = capsys.readouterr()
    assert [line.split(":")[0] for line in out.splitlines()] == ["t2"]
    assert "1 damaged thread(s)" in err


def test_one_damaged_thread_does_not_stop_health_sweep_or_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "damaged.db"
    _damaged_store(db)

    _damaged_thread_reported(str(db), capsys)


@pytest.mark.postgres
def test_one_damaged_thread_on_postgres_does_not_stop_health_sweep_or_check(
    postgres_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    from durable_debug import PostgresSaver

    with PostgresSaver(postgres_db) as saver:
        graph = _graph(saver)
        for thread_id in ("t1", "t2", "t3"):
            graph.invoke({"items": [thread_id]}, {"configurable": {"thread_id": thread_id}})
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        conn.execute("UPDATE checkpoint_blobs SET blob = '\\xc1c1c1' WHERE thread_id = 't2'")

    _damaged_thread_reported(postgres_db, capsys)


def test_an_empty_file_and_a_permission_problem_are_one_line_errors(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    assert main(["health", str(empty)]) == 2
    _, err = capsys.readouterr()
    assert (
        err.strip()
        == f"durable-debug: error: {empty} is an empty file (0 bytes): it holds no checkpoints"
    )

    require_python_for("nobody")
    locked = shared / "locked.db"
    _damaged_store(locked)
    locked.chmod(0o000)
    code, _, err = done(as_user("nobody", "-m", "durable_debug.cli", "health", str(locked)))
    assert code == 2
    uid = pwd.getpwnam("nobody").pw_uid
    assert err.strip() == (
        f"durable-debug: error: permission denied: user 'nobody' (uid {uid}) cannot read "
        f"{locked} (mode 000, owner root)"
    )

    locked.chmod(0o644)
    shared.chmod(0o755)  # a directory the user may not create -wal / -shm files in
    for suffix in ("-wal", "-shm"):
        Path(f"{locked}{suffix}").unlink(missing_ok=True)
    script = f"from durable_debug import SqliteSaver; SqliteSaver({str(locked)!r}).setup()"
    code, _, err = done(as_user("nobody", "-c", script))
    assert code != 0
    assert "permission denied: user 'nobody'" in err
    assert "not a SQLite database" not in err and "new file name" not in err
