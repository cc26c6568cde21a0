"""Reading a thread reads the store once: one ``alist``, one tuple per checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from durable_debug import SqliteSaver
from durable_debug.cli import demo_graph, main
from durable_debug.inspect import aread_thread
from durable_debug.inspect.stored import SaverView


class Counting:
    """Counts the saver's ``alist`` calls and the tuples they yield."""

    def __init__(self, saver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lists = self.tuples = 0
        original = saver.alist

        async def alist(*args: Any, **kwargs: Any) -> Any:
            self.lists += 1
            async for tup in original(*args, **kwargs):
                self.tuples += 1
                yield tup

        monkeypatch.setattr(saver, "alist", alist)


async def test_a_thread_is_listed_once_for_our_graphs_and_saver_views(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = {"configurable": {"thread_id": "job-1"}}
    async with SqliteSaver(str(tmp_path / "x.db")) as saver:
        graph = demo_graph(saver)
        with pytest.raises(ConnectionError):
            await graph.ainvoke({"topic": "t"}, cfg)
        await graph.ainvoke(None, cfg)
        counting = Counting(saver, monkeypatch)
        thread = await aread_thread(graph, cfg)
        assert (counting.lists, counting.tuples) == (1, len(thread))
        thread = await aread_thread(SaverView(saver), cfg)
        assert (counting.lists, counting.tuples) == (2, 2 * len(thread))


def test_inspect_thread_reads_the_thread_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "x.db"
    cfg = {"configurable": {"thread_id": "job-1"}}
    with SqliteSaver(str(db)) as saver:
        graph = demo_graph(saver)
        with pytest.raises(ConnectionError):
            graph.invoke({"topic": "t"}, cfg)
    lists: list[Any] = []
    original = SqliteSaver.alist

    def alist(self: Any, *args: Any, **kwargs: Any) -> Any:
        lists.append(args)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SqliteSaver, "alist", alist)
    assert main(["inspect", str(db), "--thread", "job-1", "--html", str(tmp_path / "t.html")]) == 0
    assert "thread 'job-1': 3 checkpoints" in capsys.readouterr().out
    assert len(lists) == 1  # was 4: the tree, the table and the page each read it again


def test_inspect_thread_decodes_each_checkpoint_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every read of the store goes through the saver's sessions and every checkpoint is
    rebuilt by ``to_tuple``: count both while ``inspect --thread`` writes the table and page."""
    from durable_debug.checkpoint import _sql

    db = tmp_path / "x.db"
    cfg = {"configurable": {"thread_id": "job-1"}}
    with SqliteSaver(str(db)) as saver:
        graph = demo_graph(saver)
        with pytest.raises(ConnectionError):
            graph.invoke({"topic": "t"}, cfg)
        graph.invoke(None, cfg)
        stored = len(list(saver.list(cfg)))
    built: list[str] = []
    sessions: list[bool] = []
    real_to_tuple, real_session = _sql.to_tuple, SqliteSaver._in_session

    def to_tuple(parsed: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(parsed.checkpoint_id)
        return real_to_tuple(parsed, *args, **kwargs)

    async def in_session(self: Any, fn: Any, write: bool) -> Any:
        sessions.append(write)
        return await real_session(self, fn, write)

    monkeypatch.setattr(_sql, "to_tuple", to_tuple)
    monkeypatch.setattr(SqliteSaver, "_in_session", in_session)
    html = tmp_path / "t.html"
    assert main(["inspect", str(db), "--thread", "job-1", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert f"thread 'job-1': {stored} checkpoints" in out
    assert html.exists()
    assert sorted(built) == sorted(set(built)) and len(built) == stored  # one each
    # one page (the thread is shorter than a page), one read of the checkpoints' debug records
    # (graph versions, findings) and one of the lease rows, which tell a crashed run from a
    # pause (once per view); leases and migrations write nothing
    assert sessions == [False, False, False]
