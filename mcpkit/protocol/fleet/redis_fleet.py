"""The Redis fleet (``mcpkit[redis]``): task records and the notification bus in one Redis.

Keys: ``mcpkit:task:<id>`` holds a record's JSON (expiring with the task's ttl), and
``mcpkit:lease:<id>`` the lease of the process running it (``lease_s``, renewed every third of
it). Channels: ``mcpkit:tasks`` (every saved record) and ``mcpkit:changes`` (the App's global
changes); a message carries its publisher's id so each process skips its own (it told its own
listeners when it published). A save never overwrites a terminal record (one Lua script: read,
check, write, publish), so the first terminal state wins on every replica.

Redis away: a request that needs the store gets ``-32603`` naming the store; the subscriber
reconnects with backoff (0.1 s doubling up to 5 s); commands reconnect on their next use.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from mcpkit.exceptions import ProtocolError
from mcpkit.protocol.fleet import Change
from mcpkit.protocol.tasks.store import STOPPED, TaskRecord

__all__ = ["RedisBus", "RedisFleet", "RedisTaskStore"]

logger = logging.getLogger("mcpkit.server")

TASKS = "mcpkit:tasks"
CHANGES = "mcpkit:changes"
T = TypeVar("T")

# KEYS[1]: the record; ARGV: the new record, the channel, the message. 0: not saved (gone or
# already terminal).
_SAVE = """
local current = redis.call('GET', KEYS[1])
if not current or cjson.decode(current)['terminal'] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
"""


def _task_key(task_id: str) -> str:
    return f"mcpkit:task:{task_id}"


def _lease_key(task_id: str) -> str:
    return f"mcpkit:lease:{task_id}"


class RedisFleet:
    """One Redis connection pool and one subscriber, shared by the store and the bus."""

    def __init__(self, url: str, *, lease_s: float) -> None:
        self.url = url
        self.origin = secrets.token_hex(8)  # this process, on the channels
        self.client = aioredis.from_url(
            url, decode_responses=True, socket_connect_timeout=1.0, socket_timeout=5.0
        )
        self.store = RedisTaskStore(self, lease_s)
        self.bus = RedisBus(self)
        self._listening: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sending: set[asyncio.Future[Any]] = set()

    @property
    def name(self) -> str:
        """The store as the errors name it (no credentials)."""
        kwargs = self.client.connection_pool.connection_kwargs
        where = kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}"
        return f"the task store (redis at {where})"

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        if self._listening is None:
            self._listening = asyncio.ensure_future(self._listen())
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), 2.0)

    async def close(self) -> None:
        await asyncio.gather(*self._sending, return_exceptions=True)  # changes being published
        if self._listening is not None:
            self._listening.cancel()
            await asyncio.gather(self._listening, return_exceptions=True)
            self._listening = None
        await self.client.aclose()

    async def call(self, command: Callable[[], Awaitable[T]]) -> T:
        """Run a command; Redis away is ``-32603`` naming the store (details in the log). A
        connection Redis closed (it restarted) fails once: the retry takes a fresh one."""
        try:
            return await command()
        except (RedisConnectionError, OSError):
            pass  # a pooled connection from before a restart: once more on a new one
        except RedisError as exc:
            raise self._unavailable(exc) from None
        try:
            return await command()
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from None

    def _unavailable(self, exc: Exception) -> ProtocolError:
        logger.warning("%s: %s", self.name, exc)
        return ProtocolError(f"Internal error: {self.name} is unavailable")

    def spawn(self, coroutine: Awaitable[Any]) -> None:
        """Run ``coroutine`` on the fleet's loop (from any thread), after those spawned
        before it (changes reach the other replicas in the order they were published)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._keep, coroutine)

    def _keep(self, coroutine: Awaitable[Any]) -> None:
        future = asyncio.ensure_future(_after(list(self._sending), coroutine))
        self._sending.add(future)
        future.add_done_callback(self._sending.discard)

    async def _listen(self) -> None:
        delay = 0.1
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(TASKS, CHANGES)
                if self._subscribed.is_set():  # again: what was published meanwhile is lost
                    await self.store.resync()
                self._subscribed.set()
                delay = 0.1
                async for message in pubsub.listen():
                    self._dispatch(message)
            except (RedisError, OSError, ProtocolError) as exc:
                logger.warning("%s: %s; reconnecting in %.1f s", self.name, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    def _dispatch(self, message: dict[str, Any]) -> None:
        try:
            body = json.loads(message["data"])
        except (TypeError, ValueError):
            return
        if body.get("origin") == self.origin:
            return
        if message.get("channel") == TASKS:
            self.store.tell(TaskRecord.load(body["record"]))
        else:
            self.bus.tell(body["kind"], body.get("uri"))


async def _after(earlier: list[asyncio.Future[Any]], coroutine: Awaitable[Any]) -> None:
    await asyncio.gather(*earlier, return_exceptions=True)
    await coroutine


class RedisTaskStore:
    """Task records in Redis (see the module's docstring for the layout)."""

    missing = "not found or expired; the store restarted?"

    def __init__(self, fleet: RedisFleet, lease_s: float) -> None:
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
                await pipe.execute()

        await self.fleet.call(write)
        self._running.add(record.task_id)
        self.tell(record)

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        keys = (_task_key(task_id), _lease_key(task_id))
        text, lease = await self.fleet.call(lambda: self.fleet.client.mget(keys))
        if text is None:
            return None
        record = TaskRecord.load(json.loads(text))
        if record.owner != owner:
            return None
        if lease is None and not record.terminal:  # its process stopped renewing it
            record.settle("failed", error=dict(STOPPED))
            record.status_message = STOPPED["message"]
            if not await self._saved(record):
                return await self.get(task_id, owner)  # settled meanwhile: read that
        return record

    async def save(self, record: TaskRecord) -> None:
        if await self._saved(record):
            self.tell(record)

    async def _saved(self, record: TaskRecord) -> bool:
        dumped = record.dump()
        message = json.dumps({"origin": self.fleet.origin, "record": dumped})
        args = [json.dumps(dumped), TASKS, message]
        keys = [_task_key(record.task_id)]
        return bool(await self.fleet.call(lambda: self._save(keys=keys, args=args)))

    async def renew(self, task_ids: list[str]) -> None:
        self._running = set(task_ids)
        lease_ms = int(self.lease_s * 1000)

        async def write() -> None:
            async with self.fleet.client.pipeline(transaction=False) as pipe:
                for task_id in task_ids:
                    pipe.set(_lease_key(task_id), self.fleet.origin, px=lease_ms)
                await pipe.execute()

        await self.fleet.call(write)

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


class RedisBus:
    """The App's global changes on ``mcpkit:changes``: told here at once, published to the
    other replicas in the background (a Redis that is away loses them, logged)."""

    def __init__(self, fleet: RedisFleet) -> None:
        self.fleet = fleet
        self._listeners: list[Change] = []

    def publish(self, kind: str, uri: str | None) -> None:
        self.tell(kind, uri)
        message = json.dumps({"origin": self.fleet.origin, "kind": kind, "uri": uri})
        self.fleet.spawn(self._send(message))

    async def _send(self, message: str) -> None:
        try:
            await self.fleet.call(lambda: self.fleet.client.publish(CHANGES, message))
        except ProtocolError:
            logger.warning("a change was not published to the other replicas: %s", message)

    def subscribe(self, listener: Change) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def tell(self, kind: str, uri: str | None) -> None:
        for listener in list(self._listeners):
            listener(kind, uri)
