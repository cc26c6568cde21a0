"""``lease_held``: whether the running context already holds a thread's lease (a run nested in
a task of the run holding it skips taking it again), and the same check of ``wait`` as
``thread_lease``."""

from __future__ import annotations

import asyncio
import os
import socket

import pytest

from durable_debug.checkpoint.errors import InvalidConfigError
from durable_debug.checkpoint.lease import holder_name, lease_held, thread_lease
from durable_debug.checkpoint.memory import MemorySaver


def test_held_inside_the_lease_only_for_its_thread_and_saver() -> None:
    saver, other = MemorySaver(), MemorySaver()

    async def check() -> list[bool]:
        seen = [lease_held(saver, "t")]
        async with thread_lease(saver, "t"):
            seen += [lease_held(saver, "t"), lease_held(saver, "u"), lease_held(other, "t")]
            # a task started inside the run (a node's subgraph) sees it too
            seen.append(await asyncio.create_task(asyncio.sleep(0, lease_held(saver, "t"))))
        seen.append(lease_held(saver, "t"))
        return seen

    assert asyncio.run(check()) == [False, True, False, False, True, False]


@pytest.mark.parametrize("wait", [-1, True, "5", float("nan")])
def test_an_unusable_wait_is_refused_as_thread_lease_refuses_it(wait: object) -> None:
    with pytest.raises(InvalidConfigError, match="wait must be a number of seconds"):
        lease_held(MemorySaver(), "t", wait=wait)  # type: ignore[arg-type]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is POSIX only")
def test_a_forked_child_names_itself_as_holder() -> None:
    """The holder name is worked out once per process: a child forked after it was asked
    for records its own pid, not its parent's."""
    parent = holder_name()
    assert parent == f"{socket.gethostname()}:{os.getpid()}"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its holder name and leave at once
        try:
            os.write(write, holder_name().encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        told = pipe.read().decode()
    os.waitpid(pid, 0)
    assert told == f"{socket.gethostname()}:{pid}" and holder_name() == parent
