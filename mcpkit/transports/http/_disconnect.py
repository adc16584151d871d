"""Cancelling a call when its client disconnects (stateless requests: closing the response
stream is the cancellation)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from mcpkit.transports.http._exchange import Exchange

__all__ = ["CLOSED", "unless_closed"]

logger = logging.getLogger("mcpkit.http")

_WATCH_AFTER = 0.01
"""Seconds a call that its client's disconnect cancels runs before that disconnect is watched."""

CLOSED: Any = object()
"""What :func:`unless_closed` returns when the client left before the call was done."""


async def unless_closed(http: Exchange, call: Coroutine[Any, Any, Any]) -> Any:
    """Run ``call`` in this task and return its result, or cancel it and return ``CLOSED`` if
    the client disconnects first.

    The request's own task runs the call (no task per call), and a disconnect cancels that
    task. Watching for the disconnect starts only once the call has run ``_WATCH_AFTER``
    seconds: a quick call needs no watcher task, and meanwhile the loop is free to wait for a
    sync tool's worker thread. A disconnect stays pending in ``receive`` until read, so none is
    missed: one in the call's first ``_WATCH_AFTER`` seconds cancels it at that point.
    """
    task = asyncio.current_task()
    if task is None:  # not run by a task (an unusual ASGI server): give the call one
        return await asyncio.ensure_future(unless_closed(http, call))
    watch = _CloseWatch(http, task)
    try:
        result = await call
    except asyncio.CancelledError:
        if not watch.gone:
            raise  # a cancellation from outside (a server shutting down): let it through
        result = CLOSED
    finally:
        watch.stop()
    if watch.gone:  # our cancellation, delivered (or swallowed by the call)
        if _withdraw_cancel(task):
            raise asyncio.CancelledError  # the task was also cancelled from outside
        return CLOSED
    return result


class _CloseWatch:
    """Cancels ``task`` when the client disconnects, from ``_WATCH_AFTER`` seconds on until
    :meth:`stop`."""

    def __init__(self, http: Exchange, task: asyncio.Task[Any]) -> None:
        self.http = http
        self.task = task
        self.gone = False
        self.watcher: asyncio.Task[None] | None = None
        self.starting: asyncio.TimerHandle | None = task.get_loop().call_later(
            _WATCH_AFTER, self._start
        )

    def _start(self) -> None:
        self.starting = None
        self.watcher = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        try:
            await self.http.disconnected()
        except Exception:  # a receive that fails counts as a disconnect
            logger.debug("receive failed while a call ran; cancelling it", exc_info=True)
        # Runs only while the call is suspended: ``stop`` cancels this task before the call's
        # task carries on.
        self.gone = True
        self.task.cancel()

    def stop(self) -> None:
        if self.starting is not None:
            self.starting.cancel()
        if self.watcher is not None:
            self.watcher.cancel()


def _withdraw_cancel(task: asyncio.Task[Any]) -> bool:
    """Withdraw the watcher's cancellation (Python 3.11+ counts them); ``True`` if the task
    has another one pending."""
    uncancel = getattr(task, "uncancel", None)
    return uncancel is not None and uncancel() > 0
