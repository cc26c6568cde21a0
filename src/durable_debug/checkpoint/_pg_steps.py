"""PostgresSaver's step queue: a run's next step runs while the server writes the previous one.

A step is one statement (``postgres.store_step_sql``) that takes the server about a tenth of a
millisecond, but waiting for its answer costs a round trip (0.4 ms on a local server), during
which the run does nothing. :class:`PgStepQueue` (what ``PostgresSaver.step_queue()`` returns,
used by runs with ``durability="async"``, the default) sends each step's statement when the
step is put and reads the answer when the next step is put, or when the queue is drained:

    queue = saver.step_queue()
    config = await queue.put(config, task_writes, checkpoint, metadata, new_versions)
    ...                                     # the next step runs while the server writes
    await queue.drain()                     # every step put is saved (or its error raised)

One statement at a time is in flight, on the saver's connection for the caller's loop (the one
``PostgresSaver._call`` uses, held from the first put until the drain), and each statement
commits on its own as in ``aput_step``. So steps are saved in order, and a step is sent only
once the one before it is known to be saved: a failure stops the queue, with nothing saved
after it, and is raised by the next put or drain. The statements go through libpq directly
(``psycopg.pq``: send now, read the answer later), each shape prepared once per connection.

When that connection is busy (another run's queue holds it, or a call from another thread
uses it), a step is saved at once through the pool, as ``aput_step`` saves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from durable_debug.checkpoint._libpq import answer, encode, flush, prepared
from durable_debug.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    StepQueue,
    TaskWrites,
    checkpoint_config,
)
from durable_debug.checkpoint.errors import DurableDebugError

if TYPE_CHECKING:
    import psycopg

    from durable_debug.checkpoint.postgres import PostgresSaver

__all__ = ["PgStepQueue"]

StepStatement = Callable[..., "tuple[str, list[Any]] | None"]
"""``postgres.step_statement``: a step's rows → the statement writing them, its parameters."""


class PgStepQueue(StepQueue):
    """One run's steps for a :class:`~durable_debug.checkpoint.postgres.PostgresSaver`: each
    sent when put, its answer read when the next one is put or the queue is drained (see the
    module's docstring)."""

    saver: PostgresSaver

    def __init__(self, saver: PostgresSaver, statement: StepStatement) -> None:
        super().__init__(saver)
        self._statement = statement
        """Builds the statement that writes a step's rows (``postgres.step_statement``)."""
        self._conn: psycopg.AsyncConnection[Any] | None = None
        """The saver's caller-loop connection while this queue holds it (``_direct_lock``)."""
        self._sent: dict[str, str | None] | None = None
        """Thread and checkpoint of the statement in flight, whose answer is not read yet."""
        self._error: BaseException | None = None
        """The failure raised by every call until :meth:`drain` has raised it."""

    @property
    def pending(self) -> bool:
        """Whether a step was sent and its answer not read yet."""
        return self._sent is not None

    async def put(
        self,
        config: RunnableConfig,
        task_writes: Sequence[TaskWrites],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Serialize the step, wait for the previous step's answer, send this one's statement
        and return the new checkpoint's config without waiting for its answer."""
        if self._error is not None:
            raise self._error
        saver = self.saver
        # Serialized now: an unsavable value raises here with nothing sent, and the run may
        # change its values while the statement is on its way.
        rows = saver._step_rows(config, task_writes, checkpoint, metadata, new_versions)
        thread_id, checkpoint_ns, checkpoint_id = rows.row[:3]
        where: dict[str, str | None] = {"thread": thread_id, "checkpoint": checkpoint_id}
        await self._collect()
        conn = self._conn if self._conn is not None else await self._take(where)
        if conn is None:  # the connection is busy elsewhere: saved now, through the pool
            await saver._run(saver._store, *rows, where=where)
        else:
            statement = self._statement(*rows)
            assert statement is not None  # a checkpoint row is always written
            await self._send(conn, *statement, where)
        return checkpoint_config(thread_id, checkpoint_ns, checkpoint_id)

    async def drain(self) -> None:
        """Read the answer of the step in flight, give the connection back, and raise the
        failure of a step that could not be saved (once; the queue is then empty)."""
        try:
            if self._error is None:  # after a failure the connection is not read again
                await self._collect()
        except asyncio.CancelledError:
            raise  # the answer stays unread: _release closes the connection
        except Exception:
            pass  # recorded in _error, raised below
        finally:
            self._release()
        error, self._error = self._error, None
        if error is not None:
            raise error

    # -- the connection ------------------------------------------------------------------------

    async def _take(self, where: dict[str, str | None]) -> psycopg.AsyncConnection[Any] | None:
        """The saver's caller-loop connection, held until the queue is drained; None when it
        is busy (or the saver is not open in this process)."""
        saver = self.saver
        if saver._state != "open" or saver._pid != os.getpid():
            return None
        if not saver._direct_lock.acquire(blocking=False):
            return None
        try:
            self._conn = await saver._direct_connection()
        except BaseException as exc:
            saver._direct_lock.release()
            self._raise(exc, where)
        return self._conn

    def _release(self) -> None:
        """Give the connection back (closed first when its state is unknown)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        saver = self.saver
        from psycopg.pq import TransactionStatus

        idle = conn.pgconn.transaction_status == TransactionStatus.IDLE
        if self._sent is not None or conn.broken or not idle:
            # An answer left unread (a cancelled wait) or a lost server: not reusable.
            self._sent = None
            if saver._direct is conn:
                saver._direct = None
            with contextlib.suppress(Exception):
                conn.pgconn.finish()
        saver._direct_lock.release()
        if saver._state != "open":  # the saver was closed while the queue held it
            direct, saver._direct = saver._direct, None
            if direct is not None:
                with contextlib.suppress(Exception):
                    direct.pgconn.finish()

    def _raise(self, exc: BaseException, where: dict[str, str | None]) -> None:
        """Record ``exc`` as the queue's failure, as ``aput_step`` would raise it, and raise
        it."""
        error: BaseException = exc
        if isinstance(exc, Exception) and not isinstance(exc, DurableDebugError):
            error = self.saver._store_error(exc, where) or exc
            if error is not exc:
                error.__cause__ = exc
        self._error = error
        raise error

    # -- libpq: send now, read the answer later --------------------------------------------------

    async def _send(
        self,
        conn: psycopg.AsyncConnection[Any],
        sql: str,
        params: Sequence[Any],
        where: dict[str, str | None],
    ) -> None:
        try:
            pgconn = conn.pgconn
            values, types, formats = encode(params)
            name = await prepared(conn, sql, types)
            pgconn.send_query_prepared(name, values, formats)
            self._sent = where
            await flush(pgconn)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._raise(exc, where)

    async def _collect(self) -> None:
        """Read the answer of the statement in flight (if any); raise its failure."""
        where = self._sent
        if where is None or self._conn is None:
            return
        try:
            error, _rows = await answer(self._conn)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._sent = None
            self._raise(exc, where)
        self._sent = None
        if error is not None:
            self._raise(error, where)
