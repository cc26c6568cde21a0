"""storage_stats: notebook 04's de-duplication in numbers, checked against the saver's own store."""

from __future__ import annotations

from durable_debug.inspect import astorage_stats, blobs_frame


async def test_stats_count_distinct_blobs_like_the_saver_stores_them(seed, engine):
    ns = seed("pointers")
    g, cfg = ns["g"], ns["cfg"]
    await g.ainvoke(ns["first_input"], cfg)
    stats = await astorage_stats(g, cfg)
    assert stats.checkpoints == 5
    # 4 checkpoints hold the 5 state channels (the input checkpoint holds none yet).
    assert stats.pointers == 20
    # query 1, options 1, partial 2, result 2, log 4 versions.
    assert stats.blobs == 10
    frame = blobs_frame(g, cfg)
    distinct = frame.drop_duplicates(["channel", "version"])
    assert stats.blob_bytes == distinct["size"].sum()
    assert stats.naive_bytes == frame["size"].sum() > stats.blob_bytes
    assert 0 < stats.savings < 1 and stats.unmeasured == 0
    if engine == "langgraph":  # LangGraph's InMemorySaver keeps blobs in a dict we can count
        state = {"query", "options", "partial", "result", "log"}
        stored = {
            k
            for k, v in g.checkpointer.blobs.items()
            if k[0] == "pointers-1" and k[2] in state and v[0] != "empty"
        }
        assert len(stored) == stats.blobs


async def test_stats_of_an_empty_thread(seed):
    ns = seed("pointers")
    stats = await astorage_stats(ns["g"], {"configurable": {"thread_id": "nothing"}})
    assert (stats.checkpoints, stats.blobs, stats.blob_bytes, stats.savings) == (0, 0, 0, 0.0)
