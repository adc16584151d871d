"""Cancelling a call when its client disconnects (stateless requests: closing the response
stream is the cancellation)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Coroutine
from typing import Any

from mcpkit.transports.http._exchange import Exchange
from mcpkit.transports.http._loop_local import LoopLocal

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
    task. Watching for the disconnect starts only once the call has run ``_WATCH_AFTER`` to
    twice that many seconds: a quick call needs no watcher task, and meanwhile the loop is free
    to wait for a sync tool's worker thread. A disconnect stays pending in ``receive`` until
    read, so none is missed: one in the call's first moments cancels it at that point.
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
    finally:  # (stop(), inline: once per request)
        watch.http = watch.task = watch.context = None
        if watch.watcher is not None:
            watch.stop()
    if watch.gone:  # our cancellation, delivered (or swallowed by the call)
        if _withdraw_cancel(task):
            raise asyncio.CancelledError  # the task was also cancelled from outside
        return CLOSED
    return result


class _CloseWatch:
    """Cancels ``task`` when the client disconnects, from ``_WATCH_AFTER`` seconds on (when its
    loop's :class:`_Watches` starts it) until :meth:`stop`."""

    __slots__ = ("context", "gone", "http", "task", "watcher")

    def __init__(self, http: Exchange, task: asyncio.Task[Any]) -> None:
        self.http: Exchange | None = http
        self.task: asyncio.Task[Any] | None = task
        self.context: contextvars.Context | None = contextvars.copy_context()  # the request's
        self.gone = False
        self.watcher: asyncio.Task[None] | None = None
        watches = _watches.get(task.get_loop())
        watches.young.append(self)  # (add(), inline: once per request)
        if not watches.armed:
            watches.arm()

    def start(self) -> None:
        """Start the watcher, in the request's context (its receive may read it), unless the
        call is over."""
        if self.http is not None and self.task is not None and self.context is not None:
            watching = self._watch(self.http, self.task)
            self.watcher = self.context.run(asyncio.ensure_future, watching)

    async def _watch(self, http: Exchange, task: asyncio.Task[Any]) -> None:
        try:
            await http.disconnected()
        except Exception:  # a receive that fails counts as a disconnect
            logger.debug("receive failed while a call ran; cancelling it", exc_info=True)
        # Runs only while the call is suspended: ``stop`` cancels this task before the call's
        # task carries on.
        self.gone = True
        task.cancel()

    def stop(self) -> None:
        """The call is over: no watcher from now on (until its sweep, the loop's
        :class:`_Watches` holds this shell, not the request)."""
        self.http = self.task = self.context = None
        watcher, self.watcher = self.watcher, None  # (its frame holds this watch: no cycle)
        if watcher is not None:
            watcher.cancel()


class _Watches:
    """The calls of one event loop whose disconnects are to be watched, and one timer for them
    all: every ``_WATCH_AFTER`` seconds while there are any, the calls added two sweeps ago that
    still run get their watcher. (A timer per call was a handle made, pushed on the loop's heap,
    cancelled and popped again per request; and with most of the heap cancelled, asyncio
    rebuilt it in Python at its next turn.)"""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.young: list[_CloseWatch] = []  # added since the last sweep
        self.aging: list[_CloseWatch] = []  # added before it: started at the next one
        self.armed = False
        self.context = contextvars.Context()  # the sweeps run in no request's context

    def arm(self) -> None:
        """Sweep in ``_WATCH_AFTER`` seconds (watches were added while none was due)."""
        self.armed = True
        self.loop.call_later(_WATCH_AFTER, self._sweep, context=self.context)

    def _sweep(self) -> None:
        due, self.aging, self.young = self.aging, self.young, []
        self.armed = bool(self.aging)
        if self.armed:  # (first: a watcher that fails to start leaves the next sweep armed)
            self.loop.call_later(_WATCH_AFTER, self._sweep, context=self.context)
        for watch in due:
            watch.start()


_watches = LoopLocal(_Watches)  # each loop's; the old ones still sweep on their own timer


def _withdraw_cancel(task: asyncio.Task[Any]) -> bool:
    """Withdraw the watcher's cancellation (Python 3.11+ counts them); ``True`` if the task
    has another one pending."""
    uncancel = getattr(task, "uncancel", None)
    return uncancel is not None and uncancel() > 0
