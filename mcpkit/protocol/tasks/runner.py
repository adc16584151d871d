"""Running tasks: one asyncio task per task, parked on input, cancelled on request.

:class:`Tasks` (one per server, in ``Runtime``) creates records in its store and drives each
task's coroutine; :class:`TaskHandle` is what a running task's ``RequestContext`` asks through:
``ctx.elicit`` and friends park the task in ``input_required`` until ``tasks/update`` brings the
answer, and progress messages become the task's ``statusMessage``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.exceptions import InternalError, ProtocolError, Unencodable
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.methods.failures import protocol_error_in
from mcpkit.protocol.tasks.store import MemoryTaskStore, TaskRecord, TaskStore

__all__ = ["TaskHandle", "Tasks"]

logger = logging.getLogger("mcpkit.server")


class TaskHandle:
    """The powers a running task's request context uses in place of the client's stream."""

    __slots__ = ("record", "tasks")

    def __init__(self, tasks: Tasks, record: TaskRecord) -> None:
        self.tasks = tasks
        self.record = record

    async def ask(self, method: str, params: dict[str, Any], key: str | None) -> dict[str, Any]:
        """Park the task in ``input_required`` with this request; resume with its answer. A
        request JSON cannot carry raises :class:`Unencodable` here, to the tool that asked (as
        a request to the client does in the handshake era), never into the task's record."""
        jsonrpc.encode(params)
        record = self.record
        asked: list[str] = []

        def edit(current: TaskRecord) -> bool:
            if current.terminal:
                return False
            asked[:] = [current.ask(key, method, params)]
            return True

        if not await self.tasks.store.change(record, edit):
            raise asyncio.CancelledError  # settled or gone meanwhile: the work stops
        while asked[0] not in record.input_responses:
            await self.tasks.changed(record.task_id)
        return record.input_responses.pop(asked[0])

    async def progress(self, message: str | None) -> None:
        """A progress message is the task's ``statusMessage`` (no notification is sent)."""
        if message is None:
            return

        def edit(current: TaskRecord) -> bool:
            if current.terminal:
                return False
            current.status_message = message
            current.touch()
            return True

        await self.tasks.store.change(self.record, edit)


class Tasks:
    """The server's tasks: their store and the coroutines running them."""

    def __init__(
        self, store: TaskStore | None = None, *, limit: int = 1_000, per_caller: int = 100
    ) -> None:
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.limit = limit  # tasks running at once (``ServerOptions.max_tasks``)
        self.per_caller = per_caller  # of them, one caller's (``max_tasks_per_caller``)
        self._live: dict[str, str | None] = {}  # running, unsettled tasks -> their owner
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._wakers: dict[str, asyncio.Event] = {}
        self._records: dict[str, TaskRecord] = {}  # the records of the tasks running here
        self._renewing: asyncio.Task[None] | None = None
        self.store.watch(self._saved)  # for the server's life (a stopped server may restart)

    async def create(self, owner: str | None, ttl_ms: int | None, poll_ms: int) -> TaskHandle:
        """A new task record, readable by ``tasks/get`` when this returns; refused (``-32000``)
        while ``limit`` tasks run, or ``per_caller`` of ``owner``'s."""
        self._refuse_beyond_limits(owner)
        record = TaskRecord(owner, ttl_ms, poll_ms)
        await self.store.create(record)
        return TaskHandle(self, record)

    def launch(self, handle: TaskHandle, run: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        """Run ``run()`` in the background as the task's work."""
        self.adopt(handle, asyncio.ensure_future(self.drive(handle, run)))

    def _refuse_beyond_limits(self, owner: str | None) -> None:
        if len(self._live) >= self.limit:
            raise ProtocolError(
                f"Too many tasks running (at most {self.limit}); try again when one has finished",
                {"maxTasks": self.limit},
                code=-32000,
            )
        if sum(1 for each in self._live.values() if each == owner) >= self.per_caller:
            raise ProtocolError(
                f"Too many tasks running for this caller (at most {self.per_caller}); "
                "try again when one has finished",
                {"maxTasksPerCaller": self.per_caller},
                code=-32000,
            )

    def adopt(self, handle: TaskHandle, running: asyncio.Task[Any]) -> None:
        """``running`` is the task's work from now on (cancelled with the task)."""
        task_id = handle.record.task_id
        self._running[task_id] = running
        self._records[task_id] = handle.record
        self._live[task_id] = handle.record.owner
        running.add_done_callback(lambda _: self._ended(task_id))
        lease = self.store.lease_s
        if lease is not None and (self._renewing is None or self._renewing.done()):
            self._renewing = asyncio.ensure_future(self._renew(lease))

    async def _renew(self, lease: float) -> None:
        """Keep the leases of the tasks running here (a shared store) while there are any."""
        while self._running:
            await asyncio.sleep(lease / 3)
            try:
                gone = await self.store.renew(list(self._running))
            except ProtocolError as exc:  # the store is away: try again next round
                logger.warning("could not renew task leases: %s", exc.message)
                continue
            for task_id in gone:  # expired or lost while running: no orphan work
                running = self._running.get(task_id)
                if running is not None:
                    logger.warning("task %s: its record is gone; its work is cancelled", task_id)
                    running.cancel()

    async def drive(
        self, handle: TaskHandle, run: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """Run the work and settle the task with its outcome."""
        try:
            result = await run()
        except BaseException as exc:  # the task's outcome, never the caller's
            await self.settle_failure(handle.record, exc)
            return {}
        await self.store.change(handle.record, lambda r: r.settle("completed", result=result))
        return result

    async def settle_failure(self, record: TaskRecord, exc: BaseException) -> None:
        if isinstance(exc, asyncio.CancelledError):
            await self.cancel(record)
            return
        error = exc if isinstance(exc, ProtocolError) else protocol_error_in(exc)
        if error is None:
            logger.error("task %s failed", record.task_id, exc_info=exc)
            error = InternalError()
        wire = _carried(error.to_error(), record)

        def edit(current: TaskRecord) -> bool:
            if not current.settle("failed", error=wire):
                return False
            current.status_message = error.message
            return True

        await self.store.change(record, edit)

    async def cancel(self, record: TaskRecord) -> None:
        """Settle ``cancelled`` (when still running) and stop its work."""
        await self.store.change(record, lambda r: r.settle("cancelled"))

    async def changed(self, task_id: str) -> None:
        """Wait until the task's record is saved again."""
        waker = self._wakers.setdefault(task_id, asyncio.Event())
        await waker.wait()
        waker.clear()

    def _ended(self, task_id: str) -> None:
        self._running.pop(task_id, None)
        self._records.pop(task_id, None)
        self._live.pop(task_id, None)

    def _saved(self, record: TaskRecord) -> None:
        local = self._records.get(record.task_id)
        if local is not None and local is not record and record.version > local.version:
            local.adopt(record.dump())  # changed by another process
        waker = self._wakers.get(record.task_id)
        if waker is not None:
            waker.set()
        if record.terminal:
            self._live.pop(record.task_id, None)  # settled: no longer counts (may still unwind)
            self._wakers.pop(record.task_id, None)
            running = self._running.get(record.task_id)
            if running is not None and running is not asyncio.current_task():
                running.cancel()  # cancelled or expired while its work runs

    async def close(self) -> None:
        """Cancel every running task (the server is stopping)."""
        running = list(self._running.values())
        if self._renewing is not None:
            running.append(self._renewing)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


def _carried(error: dict[str, Any], record: TaskRecord) -> dict[str, Any]:
    """The task's error as JSON can carry it: without its data when the data cannot be (as
    the same error answering a request is), so ``tasks/get`` keeps answering."""
    try:
        jsonrpc.encode(error)
    except Unencodable as exc:
        logger.warning("task %s: its error lost its data: %s", record.task_id, exc)
        return {"code": error["code"], "message": error["message"]}
    return error
