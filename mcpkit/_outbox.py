"""Results of sync calls on their way back to one event loop (:mod:`mcpkit._workers`): one
wake-up of the loop carries all that are ready, and the loop-thread-only flags that time the
wake-ups of the workers for the jobs it queues."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import weakref
from typing import Any

__all__ = ["Outbox", "Outcome", "settle_one"]

logger = logging.getLogger("mcpkit.workers")

Outcome = tuple["asyncio.Future[Any]", bool, Any]


class Outbox:
    """Results on their way back to one event loop: one wake-up carries all that are ready."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, plain: bool) -> None:
        # Weakly: the outbox is the value of a weak mapping keyed by this very loop.
        self._loop = weakref.ref(loop)
        self.plain = plain  # the loop thread may wait for results in place
        self._lock = threading.Lock()
        self._items: list[Outcome] = []
        self._scheduled = False
        # (loop thread only) a worker is to be woken at the loop's next turn; the queue is to
        # be looked at again soon (jobs waited behind a quick one: see ``Workers._wake_queued``)
        self.wake_due = False
        self.recheck_due = False

    def put(self, outcome: Outcome) -> None:
        with self._lock:
            self._items.append(outcome)
            if self._scheduled:
                return
            self._scheduled = True
        # The loop may have closed (or gone) while the job ran: then nobody waits any more.
        loop = self._loop()
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        with self._lock:
            items, self._items = self._items, []
            self._scheduled = False
        for future, ok, value in items:
            settle_one(future, ok, value)


def settle_one(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    """Settle a job's ``future`` with its outcome, unless nobody waits for it any more."""
    if future.cancelled():  # its call was cancelled or timed out: nobody waits for this
        logger.debug("a worker finished a call nobody waits for any more; result dropped")
        return
    try:
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
    except (asyncio.InvalidStateError, TypeError) as exc:  # never strand the others
        if not future.done():
            future.set_exception(RuntimeError(f"result could not be delivered: {exc}"))
