"""Run blocking (sync) tools off the event loop, cheaply.

A thread-pool submission per call costs more than a small ``add`` tool itself. Here jobs go
onto one queue that long-lived worker threads drain, and each result goes into its event
loop's outbox the moment it is ready: the first result wakes the loop, and any that arrive
before the loop gets round to it ride along in the same wake-up (batching without making a
fast result wait for a slow job). Threads are started on demand (none until the first sync
call) up to a bound, and are daemons, so a stuck tool never keeps the process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["Workers", "invoke"]

_Outcome = tuple["asyncio.Future[Any]", bool, Any]
_Job = tuple[Callable[[], Any], "asyncio.Future[Any]", "_Outbox"]


class Workers:
    """A small, lazily grown set of worker threads fed by one queue."""

    def __init__(self, max_threads: int = 32) -> None:
        self._max = max_threads
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Outbox] = (
            weakref.WeakKeyDictionary()
        )

    async def run(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """Call ``fn(**kwargs)`` in a worker thread and wait for its result."""
        loop = asyncio.get_running_loop()
        outbox = self._outboxes.get(loop)
        if outbox is None:
            outbox = self._outboxes[loop] = _Outbox(loop)
        future: asyncio.Future[Any] = loop.create_future()
        ctx = contextvars.copy_context()
        self._jobs.put((lambda: ctx.run(fn, **kwargs), future, outbox))
        self._ensure_thread()
        return await future

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._idle > 0 or self._threads >= self._max:
                self._idle -= 1 if self._idle > 0 else 0
                return
            self._threads += 1
        threading.Thread(target=self._work, name="mcpkit-worker", daemon=True).start()

    def _work(self) -> None:
        while True:
            call, future, outbox = self._jobs.get()
            outcome = _execute(call, future)
            # Idle before the result goes out: the loop may submit the next job the moment
            # it has it, and must then reuse this thread rather than start another.
            with self._lock:
                self._idle += 1
            outbox.put(outcome)


class _Outbox:
    """Results on their way back to one event loop: one wake-up carries all that are ready."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._items: list[_Outcome] = []
        self._scheduled = False

    def put(self, outcome: _Outcome) -> None:
        with self._lock:
            self._items.append(outcome)
            if self._scheduled:
                return
            self._scheduled = True
        # The loop may have closed while the job ran: then nobody waits any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._settle)

    def _settle(self) -> None:
        with self._lock:
            items, self._items = self._items, []
            self._scheduled = False
        for future, ok, value in items:
            _settle_one(future, ok, value)


def _execute(call: Callable[[], Any], future: asyncio.Future[Any]) -> _Outcome:
    try:
        return future, True, call()
    except StopIteration as exc:  # a future cannot carry StopIteration (PEP 479)
        error = RuntimeError("the tool raised StopIteration")
        error.__cause__ = exc
        return future, False, error
    except BaseException as exc:
        return future, False, exc


def _settle_one(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    try:
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
    except (asyncio.InvalidStateError, TypeError) as exc:  # never strand the others
        if not future.done():
            future.set_exception(RuntimeError(f"result could not be delivered: {exc}"))


async def invoke(
    fn: Callable[..., Any], kwargs: dict[str, Any], workers: Workers, *, inline: bool = False
) -> Any:
    """Call a user function: coroutines on the loop, sync ones in a worker (or inline)."""
    if inspect.iscoroutinefunction(fn):
        return await fn(**kwargs)
    if inline:
        return fn(**kwargs)
    return await workers.run(fn, **kwargs)
