"""What replicas of one server share: a task store and a notification bus.

A process alone needs neither: tasks live in its memory (:class:`MemoryTaskStore`) and the
App tells its own listeners. With ``ServerOptions(store="redis://...")`` (or ``MCPKIT_STORE``)
the server opens a :class:`Fleet` on that URL: task records live in Redis (readable, answerable
and cancellable through any replica) and ``notify_resource_updated``, broadcast list changes
and task status reach the listeners of every replica. The ``redis`` client is imported only
then (the ``redis`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from mcpkit._announcer import Announcer

if TYPE_CHECKING:
    from mcpkit.options import ServerOptions
    from mcpkit.protocol.tasks.runner import Tasks
    from mcpkit.protocol.tasks.store import TaskStore

__all__ = [
    "LEASE_ENV",
    "STORE_ENV",
    "Bus",
    "Change",
    "Fleet",
    "MemoryBus",
    "fleet_for",
    "join",
    "not_joined",
    "tasks_for",
]

STORE_ENV = "MCPKIT_STORE"
LEASE_ENV = "MCPKIT_TASK_LEASE_S"
DEFAULT_LEASE_S = 15.0

Change = Callable[[str, "str | None"], None]  # (kind, uri): as the App's listeners


class Bus(Protocol):
    """Publish/subscribe for the App's global changes (resource updates, broadcast list
    changes): what one member publishes reaches the subscribers of every member, its own
    included."""

    def publish(self, kind: str, uri: str | None) -> None:
        """Send a change (callable from any thread; never blocks, never raises)."""

    def subscribe(self, listener: Change) -> Callable[[], None]:
        """Call ``listener(kind, uri)`` for every change published; returns the undo."""


class MemoryBus:
    """A bus with one member: this process."""

    def __init__(self) -> None:
        self._listeners: list[Change] = []

    def publish(self, kind: str, uri: str | None) -> None:
        for listener in list(self._listeners):
            listener(kind, uri)

    def subscribe(self, listener: Change) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)


class Fleet(Protocol):
    """A shared store: its task store, its bus, and its connection's life."""

    @property
    def store(self) -> TaskStore:
        """Where task records live."""

    @property
    def bus(self) -> Bus:
        """How global changes reach every replica."""

    async def start(self) -> None:
        """Connect and subscribe (a store that is away is retried in the background)."""

    async def close(self) -> None:
        """Stop listening and disconnect."""


def fleet_for(url: str | None) -> Fleet | None:
    """The fleet ``url`` (else ``MCPKIT_STORE``) names; ``None`` for this process's memory."""
    url = url or os.environ.get(STORE_ENV) or None
    if url is None or url == "memory":
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"{STORE_ENV}: not a redis:// URL nor 'memory': {url!r}")
    try:
        from mcpkit.protocol.fleet.redis_fleet import RedisFleet
    except ImportError as exc:  # pragma: no cover - the core-only leg of .ci/run checks it
        raise ImportError(
            f'a redis store needs the redis client: pip install "mcpkit[redis]" ({exc})'
        ) from exc
    return RedisFleet(url, lease_s=lease_seconds())


def tasks_for(fleet: Fleet | None, options: ServerOptions) -> Tasks:
    """The server's tasks, their records in ``fleet``'s store (else this process's memory).
    The server makes them on first use (``Runtime.tasks``): a server none of whose clients
    uses tasks never loads the runner and the store."""
    from mcpkit.protocol.tasks.runner import Tasks

    store = fleet.store if fleet is not None else None
    return Tasks(store, limit=options.max_tasks, per_caller=options.max_tasks_per_caller)


async def join(fleet: Fleet | None, app: Announcer) -> Callable[[], Awaitable[None]]:
    """Connect ``fleet`` (none: nothing to do) and let its bus carry ``app``'s global changes
    both ways; returns what leaves it again (stop carrying them, disconnect)."""
    if fleet is None:
        return not_joined
    await fleet.start()
    undo = [fleet.bus.subscribe(app.relay), app.broadcast_to(fleet.bus.publish)]

    async def leave() -> None:
        for each in undo:
            each()
        await fleet.close()

    return leave


async def not_joined() -> None:
    """What leaves no fleet (a server that has not joined one, or has left it)."""


def lease_seconds() -> float:
    """``MCPKIT_TASK_LEASE_S`` (a positive number of seconds), else 15."""
    text = os.environ.get(LEASE_ENV)
    if not text:
        return DEFAULT_LEASE_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise ValueError(f"{LEASE_ENV} must be a positive number of seconds, not {text!r}")
    return value
