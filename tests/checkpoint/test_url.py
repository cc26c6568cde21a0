"""saver_from_url (``checkpoint/url.py``): one URL, or $DURABLE_DEBUG_DB, picks the saver."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import child_checkpoint, config_for

from durable_debug.checkpoint.memory import MemorySaver
from durable_debug.checkpoint.postgres import PostgresSaver
from durable_debug.checkpoint.redis import DEFAULT_PREFIX, RedisSaver
from durable_debug.checkpoint.sqlite import SqliteSaver
from durable_debug.checkpoint.url import ENV_VAR, saver_from_url


def test_no_url_and_no_environment_gives_memory(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert isinstance(saver_from_url(), MemorySaver)
    monkeypatch.setenv(ENV_VAR, "  ")
    assert isinstance(saver_from_url(), MemorySaver)


def test_memory_url():
    assert isinstance(saver_from_url("memory://"), MemorySaver)


@pytest.mark.parametrize("url", ["sqlite://:memory:", "sqlite:///:memory:", "sqlite://"])
def test_sqlite_in_memory_urls(url: str):
    saver = saver_from_url(url)
    assert isinstance(saver, SqliteSaver) and saver.path == ":memory:"
    saver.close()


def test_sqlite_relative_path_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    saver = saver_from_url("sqlite:///runs/my%20runs.db")
    assert isinstance(saver, SqliteSaver) and saver.path == "runs/my runs.db"
    (tmp_path / "runs").mkdir()
    cp, versions = child_checkpoint(None, {"a": 1})
    saver.put(config_for("t"), cp, {}, versions)
    saver.close()
    assert (tmp_path / "runs" / "my runs.db").is_file()


def test_sqlite_absolute_path(tmp_path: Path):
    saver = saver_from_url(f"sqlite:///{tmp_path}/abs.db")  # tmp_path starts with "/"
    assert isinstance(saver, SqliteSaver) and saver.path == f"{tmp_path}/abs.db"
    saver.setup()
    saver.close()
    assert (tmp_path / "abs.db").is_file()


def test_environment_variable_chooses_the_saver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{tmp_path}/env.db")
    saver = saver_from_url()
    assert isinstance(saver, SqliteSaver) and saver.path == f"{tmp_path}/env.db"
    saver.close()


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_postgres_urls_are_passed_through(scheme: str):
    url = f"{scheme}://ana@db.internal:5433/app?sslmode=require"
    saver = saver_from_url(url)
    assert isinstance(saver, PostgresSaver) and saver.conn_string == url
    saver.close()  # never opened: nothing to connect to


@pytest.mark.postgres
def test_postgres_url_reaches_the_server(postgres_db: str):
    saver = saver_from_url(postgres_db)
    cp, versions = child_checkpoint(None, {"a": 1})
    saver.put(config_for("t"), cp, {}, versions)
    assert saver.get_tuple(config_for("t")) is not None
    saver.close()


@pytest.mark.parametrize(
    "url", ["redis://cache.internal:6380/2", "rediss://:pw@cache.internal/0", "unix:///tmp/r.sock"]
)
def test_redis_urls_give_a_redis_saver(url: str):
    saver = saver_from_url(url)
    assert isinstance(saver, RedisSaver)
    assert saver.url == url and saver.prefix == DEFAULT_PREFIX and saver.ttl is None
    saver.close()  # never opened: nothing to connect to


def test_redis_url_options_set_prefix_and_ttl_and_are_not_given_to_redis():
    saver = saver_from_url("redis://cache.internal:6379/3?prefix=app%3Aagents&ttl=3600&db=3")
    assert isinstance(saver, RedisSaver)
    assert saver.prefix == "app:agents" and saver.ttl == 3600.0
    assert saver.url == "redis://cache.internal:6379/3?db=3"
    saver.close()


@pytest.mark.parametrize("ttl", ["soon", "0", "-5"])
def test_redis_url_with_a_bad_ttl_is_a_clear_error(ttl: str):
    with pytest.raises(ValueError, match="ttl"):
        saver_from_url(f"redis://localhost/0?ttl={ttl}")


@pytest.mark.redis
def test_redis_url_reaches_the_server(redis_db: str):
    saver = saver_from_url(redis_db)
    cp, versions = child_checkpoint(None, {"a": 1})
    saver.put(config_for("t"), cp, {}, versions)
    assert saver.get_tuple(config_for("t")) is not None
    saver.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://localhost/app", "unknown scheme 'mysql'"),
        ("checkpoints.db", "not a saver URL"),
        ("sqlite://host/app.db", "names a host"),
        ("sqlite:///app.db?mode=ro", "no query string"),
        ("memory://something", "takes nothing"),
    ],
)
def test_bad_urls_are_clear_errors_listing_the_accepted_forms(url: str, message: str):
    with pytest.raises(ValueError, match=message) as info:
        saver_from_url(url)
    assert repr(url) in str(info.value)


def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENV_VAR, "redis-ish://x")
    with pytest.raises(ValueError, match=ENV_VAR) as info:
        saver_from_url()
    message = str(info.value)
    assert "sqlite:///relative.db" in message and "postgresql://" in message
    assert "redis://host:port/db" in message
