"""A long listing of the savers that read in pages (SQLite, PostgreSQL, Redis) holds one page
at a time and lets it go before the next is read, so its cost per checkpoint does not grow
with the thread: no page is ever alive when the collector moves the young generations into
the oldest one (from where enough of them would set off collections of the whole heap)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import child_checkpoint, config_for

from durable_debug.checkpoint.base import BaseCheckpointSaver
from support.savers import SAVER_KINDS, open_saver

PAGED = [kind for kind in SAVER_KINDS if kind != "memory"]


@pytest.fixture(params=PAGED)
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCheckpointSaver]:
    with open_saver(request.param, request, tmp_path) as opened:
        yield opened


async def put_thread(saver: BaseCheckpointSaver, thread_id: str, count: int) -> None:
    config: Any = config_for(thread_id)
    parent = None
    for step in range(count):
        cp, versions = child_checkpoint(parent, {"n": step, "note": f"step {step}"})
        config = await saver.aput(config, cp, {"source": "loop", "step": step}, versions)
        parent = cp


def _decoded_rows_in_oldest_generation() -> int:
    """How many decoded checkpoint rows (of a page) the oldest generation holds."""
    return sum(type(obj).__name__ == "ParsedCheckpoint" for obj in gc.get_objects(generation=2))


async def test_no_page_reaches_the_oldest_generation(
    saver: BaseCheckpointSaver,
) -> None:
    # Pages big enough that decoding one sets off a young collection, and enough of them for
    # the collector's own schedule (a middle collection every tenth young one) to come round.
    pages, size = 25, 120
    saver.page_size = size  # type: ignore[attr-defined]
    await put_thread(saver, "long", pages * size)
    seen: list[int] = []

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] >= 1:
            seen.append(_decoded_rows_in_oldest_generation())

    listed = 0
    gc.collect()  # the counts start from nothing, whatever ran before
    before = _decoded_rows_in_oldest_generation()  # rows another test still holds, if any
    gc.callbacks.append(watch)
    try:
        async for tup in saver.alist(config_for("long")):
            assert tup.checkpoint["channel_values"]["n"] == pages * size - 1 - listed
            listed += 1
    finally:
        gc.callbacks.remove(watch)
    assert listed == pages * size
    assert seen, "the middle generation was never collected during the listing"
    assert max(seen) == before, (
        f"decoded rows in the oldest generation after each collection: {seen} "
        f"({before} there before the listing)"
    )


async def test_a_listing_stopped_early_or_limited_still_answers_in_order(
    saver: BaseCheckpointSaver,
) -> None:
    saver.page_size = 3  # type: ignore[attr-defined]
    await put_thread(saver, "t", 10)
    limited = [t.metadata["step"] async for t in saver.alist(config_for("t"), limit=7)]
    assert limited == [9, 8, 7, 6, 5, 4, 3]
    listing = saver.alist(config_for("t"))
    first = [(await anext(listing)).metadata["step"] for _ in range(4)]
    await listing.aclose()
    assert first == [9, 8, 7, 6]
    everything = [t.metadata["step"] async for t in saver.alist(None)]
    assert everything == list(range(9, -1, -1))
