"""Start throwaway PostgreSQL and Redis servers for tests and scripts.

Both run on a free localhost port, keep their data in a temporary directory, and are stopped
and deleted on exit. Nothing here depends on pytest:

    with postgres_server() as url:          # "postgresql://postgres@127.0.0.1:PORT/durable_debug"
        ...
    with redis_server() as url:             # "redis://127.0.0.1:PORT/0"
        ...

PostgreSQL comes from Debian's ``postgresql`` package (``initdb``/``pg_ctl`` are found via
``pg_config --bindir`` or under ``/usr/lib/postgresql/*/bin``); ``initdb`` refuses to run as
root, so as root both run as the ``postgres`` system user via ``runuser``. Redis comes from
``redis-server``. When a server cannot be started, :class:`ServerUnavailable` says why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "PostgresServer",
    "ServerUnavailable",
    "free_port",
    "postgres_bindir",
    "postgres_server",
    "postgres_server_control",
    "redis_server",
    "services_required",
]

DATABASE = "durable_debug"
"""Name of the database created in the test PostgreSQL server."""


class ServerUnavailable(RuntimeError):
    """A test server could not be started; the message says what is missing."""


def services_required() -> bool:
    """True when ``CI`` or ``DURABLE_DEBUG_REQUIRE_SERVICES`` is set: a test that needs a
    server must then fail, not skip, when the server cannot be started."""
    flags = (os.environ.get("CI", ""), os.environ.get("DURABLE_DEBUG_REQUIRE_SERVICES", ""))
    return any(flag.strip().lower() not in ("", "0", "false", "no") for flag in flags)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postgres_bindir() -> Path:
    """Return the directory holding ``initdb`` and ``pg_ctl``."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
            candidates.append(Path(out))
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates.extend(versions)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).parent)
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    raise ServerUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's `postgresql` "
        "package (looked in `pg_config --bindir`, /usr/lib/postgresql/*/bin and PATH)"
    )


@dataclasses.dataclass
class PostgresServer:
    """A running test PostgreSQL server that a test may stop and start again (same port, same
    data), as an operator's restart would."""

    url: str
    """URL of the test database."""
    _start: list[str]
    _stop: list[str]
    _log: Path

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop -m fast``: open sessions get ``AdminShutdown``)."""
        _run([*self._stop, "-m", "fast", "stop"], "pg_ctl stop")

    def start(self) -> None:
        """Start the stopped server again and wait until it accepts connections."""
        result = subprocess.run(self._start, capture_output=True, text=True, timeout=90)
        if result.returncode != 0:
            raise ServerUnavailable(f"pg_ctl start failed:\n{_tail(self._log)}")

    def restart(self) -> None:
        """Stop, then start the server."""
        self.stop()
        self.start()


@contextlib.contextmanager
def postgres_server(*, database: str = DATABASE) -> Iterator[str]:
    """Run a PostgreSQL server for the duration of the block; yield a URL to ``database``."""
    with postgres_server_control(database=database) as server:
        yield server.url


@contextlib.contextmanager
def postgres_server_control(*, database: str = DATABASE) -> Iterator[PostgresServer]:
    """Like :func:`postgres_server`, but yield a :class:`PostgresServer` that can be stopped,
    started and restarted (the fixture ``postgres_url`` shares one server; tests that restart
    use their own)."""
    bindir = postgres_bindir()
    as_user: list[str] = []
    root = tempfile.mkdtemp(prefix="dd-postgres-")
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            raise ServerUnavailable(
                "running as root, and initdb refuses root, but there is no `postgres` user "
                "(Debian's postgresql package creates it)"
            ) from None
        if shutil.which("runuser") is None:
            shutil.rmtree(root, ignore_errors=True)
            raise ServerUnavailable("running as root but `runuser` is missing (util-linux)")
        as_user = ["runuser", "-u", "postgres", "--"]
        os.chmod(root, 0o700)
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data = Path(root) / "data"
    sockets = Path(root) / "sockets"
    log = Path(root) / "server.log"
    started = False
    try:
        _run([*as_user, "mkdir", "-p", str(sockets)], "create the socket directory")
        _run(
            [
                *as_user,
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ],
            "initdb",
        )
        port = 0
        start: list[str] = []
        for _attempt in range(3):
            port = free_port()
            options = (
                f"-p {port} -c listen_addresses=127.0.0.1 -k {sockets} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            start = [
                *as_user,
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(log),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ]
            result = subprocess.run(start, capture_output=True, text=True, timeout=90)
            if result.returncode == 0:
                started = True
                break
        if not started:
            raise ServerUnavailable(f"pg_ctl start failed:\n{_tail(log)}")
        _run(
            [
                *as_user,
                str(bindir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                database,
            ],
            "createdb",
        )
        stop = [*as_user, str(bindir / "pg_ctl"), "-D", str(data)]
        yield PostgresServer(f"postgresql://postgres@127.0.0.1:{port}/{database}", start, stop, log)
    finally:
        if started:
            subprocess.run(
                [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Run ``redis-server`` (no persistence) for the duration of the block; yield its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServerUnavailable("redis-server not found: install Debian's `redis-server` package")
    workdir = tempfile.mkdtemp(prefix="dd-redis-")
    try:
        for _attempt in range(3):
            port = free_port()
            proc = subprocess.Popen(
                [
                    binary,
                    "--port",
                    str(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                    "--dir",
                    workdir,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            if _wait_for_redis(port, proc):
                break
            proc.kill()
            proc.wait()
        else:
            output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise ServerUnavailable(f"redis-server did not start:\n{output[-2000:]}")
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout:
                proc.stdout.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_for_redis(port: int, proc: subprocess.Popen[bytes], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def _run(command: list[str], what: str) -> None:
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ServerUnavailable(f"{what} could not run: {exc}") from None
    if result.returncode != 0:
        raise ServerUnavailable(f"{what} failed ({result.returncode}):\n{result.stderr[-2000:]}")


def _tail(path: Path, size: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError as exc:
        return f"(no log: {exc})"
