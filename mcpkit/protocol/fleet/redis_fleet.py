"""The Redis fleet (``mcpkit[redis]``): task records and the notification bus in one Redis.

Task records and their leases: :mod:`mcpkit.protocol.fleet.redis_store`. Channels:
``mcpkit:tasks`` (every saved record) and ``mcpkit:changes`` (the App's global changes); a
message carries its publisher's id so each process skips its own (it told its own listeners
when it published). Every replica sweeps for lapsed leases every ``lease_s / 2`` (one sorted
set range query when there are none).

Redis away: a request that needs the store gets ``-32603`` naming the store; the subscriber
reconnects with backoff (0.1 s doubling up to 5 s); commands reconnect on their next use.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from mcpkit.exceptions import ProtocolError
from mcpkit.protocol.fleet import Change
from mcpkit.protocol.fleet.redis_store import TASKS, RedisTaskStore
from mcpkit.protocol.tasks.store import TaskRecord

__all__ = ["RedisBus", "RedisFleet", "RedisTaskStore"]

logger = logging.getLogger("mcpkit.server")

CHANGES = "mcpkit:changes"
T = TypeVar("T")


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
        self._sweeping: asyncio.Task[None] | None = None
        self._closing = False  # the loops end even if a client call swallowed their cancel
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
            self._closing = False
            self._listening = asyncio.ensure_future(self._listen())
            self._sweeping = asyncio.ensure_future(self._sweep())
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), 2.0)

    async def close(self) -> None:
        self._closing = True
        await asyncio.gather(*self._sending, return_exceptions=True)  # changes being published
        for running in (self._listening, self._sweeping):
            if running is not None:
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)
        self._listening = self._sweeping = None
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
        while not self._closing:
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

    async def _sweep(self) -> None:
        """Finalise lapsed tasks, every ``lease_s / 2`` (jittered: replicas started together
        do not sweep together)."""
        period = self.store.lease_s / 2
        while not self._closing:
            await asyncio.sleep(period * random.uniform(0.8, 1.2))
            with contextlib.suppress(ProtocolError):  # the store is away (logged): next round
                await self.store.sweep()

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
