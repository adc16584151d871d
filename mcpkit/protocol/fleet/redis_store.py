"""Task records in Redis (``mcpkit[redis]``), shared by every replica of a fleet.

Keys: ``mcpkit:task:<id>`` holds a record's JSON (expiring with the task's ttl),
``mcpkit:lease:<id>`` the lease of the process running it (``lease_s``, renewed every third of
it), and the sorted set ``mcpkit:leases`` when each unsettled task's lease ends (by the clock
of the process renewing it): the sweepers' index. Every saved record is published on
``mcpkit:tasks``.

Every write is one Lua script, a compare-and-set on the record's ``version``: it writes only
over the version the writer read, never over a terminal record, and publishes what it wrote.
A writer that loses re-reads the record and re-applies its change, so two replicas changing one
task at once (the runner's progress, another replica's ``tasks/update``) both land, and the
first terminal state wins everywhere.

A lease that lapsed (its process died) makes the task ``failed`` (:data:`STOPPED`): whoever
reads it first, or the sweeper every replica runs (:meth:`RedisTaskStore.sweep`), writes that
with the same script (which also checks that the lease is still absent), so exactly one replica
finalises it and its watchers everywhere hear it once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import redis.asyncio as aioredis

from mcpkit.protocol.tasks.store import STOPPED, Edit, TaskRecord

__all__ = ["TASKS", "Connection", "RedisTaskStore"]

T = TypeVar("T")

TASKS = "mcpkit:tasks"
LEASES = "mcpkit:leases"
SWEEP_BATCH = 100  # lapsed tasks one sweep finalises at most (the next sweep takes the rest)

# KEYS: the record, its lease, the lease index. ARGV: the new record, the version it replaces,
# the channel, the message, "1" when the lease must be absent (finalising a lapsed task), the
# task id, "1" when the new record is terminal. Returns SAVED, GONE or STALE.
_SAVE = """
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local stored = cjson.decode(current)
if stored['terminal'] or stored['version'] ~= tonumber(ARGV[2]) then return 2 end
if ARGV[5] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
if ARGV[7] == '1' then redis.call('ZREM', KEYS[3], ARGV[6]) end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
"""
SAVED, GONE, STALE = 1, 0, 2


class Connection(Protocol):
    """What the store uses of its fleet (``RedisFleet``)."""

    origin: str  # this process, on the channels
    client: aioredis.Redis

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run a command; Redis away is ``-32603`` naming the store."""


def _task_key(task_id: str) -> str:
    return f"mcpkit:task:{task_id}"


def _lease_key(task_id: str) -> str:
    return f"mcpkit:lease:{task_id}"


class RedisTaskStore:
    """Task records in Redis (see the module's docstring for the layout)."""

    missing = "not found or expired; the store restarted?"

    def __init__(self, fleet: Connection, lease_s: float) -> None:
        self.fleet = fleet
        self.lease_s = lease_s
        self._listeners: list[Callable[[TaskRecord], None]] = []
        self._save = fleet.client.register_script(_SAVE)
        self._running: set[str] = set()  # the tasks this process runs (as last renewed)

    async def create(self, record: TaskRecord) -> None:
        text = json.dumps(record.dump())
        ttl = record.ttl_ms
        lease_ms = int(self.lease_s * 1000)

        async def write() -> None:
            async with self.fleet.client.pipeline(transaction=True) as pipe:
                pipe.set(_task_key(record.task_id), text, px=ttl)
                pipe.set(_lease_key(record.task_id), self.fleet.origin, px=lease_ms)
                pipe.zadd(LEASES, {record.task_id: _ends(lease_ms)})
                await pipe.execute()

        await self.fleet.call(write)
        self._running.add(record.task_id)
        self.tell(record)

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        record = await self._read(task_id)
        return record if record is not None and record.owner == owner else None

    async def _read(self, task_id: str) -> TaskRecord | None:
        """The stored record; ``failed`` (written once, by whoever reads it first) when its
        lease lapsed."""
        keys = (_task_key(task_id), _lease_key(task_id))
        text, lease = await self.fleet.call(lambda: self.fleet.client.mget(keys))
        if text is None:
            return None
        record = TaskRecord.load(json.loads(text))
        if lease is None and not record.terminal:  # its process stopped renewing it
            record.settle("failed", error=dict(STOPPED))
            record.status_message = STOPPED["message"]
            if await self._write(record, lapsed=True) != SAVED:
                return await self._read(task_id)  # renewed or changed meanwhile: read that
        return record

    async def change(self, record: TaskRecord, edit: Edit) -> bool:
        while edit(record):
            outcome = await self._write(record, lapsed=False)
            if outcome != STALE:
                return outcome == SAVED
            stored = await self._read(record.task_id)  # another writer was first
            if stored is None:
                return False
            record.adopt(stored.dump())
        return False

    async def _write(self, record: TaskRecord, *, lapsed: bool) -> int:
        """Store ``record`` over the version it was read at; tell the watchers when saved."""
        read_at = record.version
        dumped = {**record.dump(), "version": read_at + 1}
        message = json.dumps({"origin": self.fleet.origin, "record": dumped})
        keys = [_task_key(record.task_id), _lease_key(record.task_id), LEASES]
        args: list[str | int] = [json.dumps(dumped), read_at, TASKS, message, int(lapsed)]
        args += [record.task_id, int(record.terminal)]
        outcome = int(await self.fleet.call(lambda: self._save(keys=keys, args=args)))
        if outcome == SAVED:
            if record.version == read_at:  # else a newer copy was adopted while we wrote
                record.version = read_at + 1
            self.tell(record)
        return outcome

    async def renew(self, task_ids: list[str]) -> list[str]:
        self._running = set(task_ids)
        lease_ms = int(self.lease_s * 1000)

        async def write() -> list[object]:
            async with self.fleet.client.pipeline(transaction=False) as pipe:
                for task_id in task_ids:
                    pipe.exists(_task_key(task_id))
                    pipe.set(_lease_key(task_id), self.fleet.origin, px=lease_ms)
                if task_ids:  # XX: a task settled (out of the index) stays out
                    ends = _ends(lease_ms)
                    pipe.zadd(LEASES, dict.fromkeys(task_ids, ends), xx=True)
                return list(await pipe.execute())

        held = (await self.fleet.call(write))[: 2 * len(task_ids) : 2]  # the EXISTS replies
        return [task_id for task_id, kept in zip(task_ids, held, strict=True) if not kept]

    async def sweep(self) -> int:
        """Finalise the tasks whose lease lapsed (their process died): each one is written
        ``failed`` and published once, by one replica. Returns how many this call looked at."""
        now = time.time() * 1000
        client = self.fleet.client
        lapsed = await self.fleet.call(
            lambda: client.zrangebyscore(LEASES, "-inf", now, start=0, num=SWEEP_BATCH)
        )
        for task_id in map(str, lapsed):
            record = await self._read(task_id)
            if record is None or record.terminal:  # expired, lost, or settled
                await self.fleet.call(lambda: client.zrem(LEASES, task_id))  # noqa: B023
        return len(lapsed)

    async def resync(self) -> None:
        """Tell the watchers the stored records of the tasks running here (after the
        subscriber reconnects: the saves published while it was away were lost)."""
        ids = sorted(self._running)
        if not ids:
            return
        texts = await self.fleet.call(lambda: self.fleet.client.mget(map(_task_key, ids)))
        for text in texts:
            if text is not None:
                self.tell(TaskRecord.load(json.loads(text)))

    def watch(self, listener: Callable[[TaskRecord], None]) -> Callable[[], None]:
        self._listeners.append(listener)

        def unwatch() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unwatch

    def tell(self, record: TaskRecord) -> None:
        for listener in list(self._listeners):
            listener(record)


def _ends(lease_ms: int) -> float:
    """When a lease renewed now ends (ms since the epoch, this process's clock)."""
    return time.time() * 1000 + lease_ms
