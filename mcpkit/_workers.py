"""Run blocking (sync) tools off the event loop, cheaply.

A thread-pool submission per call costs more than a small ``add`` tool itself. Here jobs go
onto one queue that long-lived worker threads drain; a worker that finds more jobs waiting runs
them too and hands all their results back to the loop in one wake-up. Threads are started on
demand (none until the first sync call) up to a bound, and are daemons, so a stuck tool never
keeps the process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Workers", "invoke"]

_FLUSH_AFTER = 0.0005  # seconds a finished result may wait for others to share a wake-up

_Job = tuple[Callable[[], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]
_Outcome = tuple["asyncio.Future[Any]", bool, Any]


class Workers:
    """A small, lazily grown set of worker threads fed by one queue."""

    def __init__(self, max_threads: int = 32) -> None:
        self._max = max_threads
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0

    async def run(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """Call ``fn(**kwargs)`` in a worker thread and wait for its result."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        ctx = contextvars.copy_context()
        self._jobs.put((lambda: ctx.run(fn, **kwargs), future, loop))
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
            job = self._jobs.get()
            done = [_execute(job)]
            started = time.perf_counter()
            while time.perf_counter() - started < _FLUSH_AFTER:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                done.append(_execute(job))
            # Idle before the results go out: the loop may submit the next job the moment
            # it has them, and must then reuse this thread rather than start another.
            with self._lock:
                self._idle += 1
            _deliver(done)


def _execute(job: _Job) -> tuple[asyncio.AbstractEventLoop, _Outcome]:
    call, future, loop = job
    try:
        return loop, (future, True, call())
    except BaseException as exc:
        return loop, (future, False, exc)


def _deliver(done: list[tuple[asyncio.AbstractEventLoop, _Outcome]]) -> None:
    by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for loop, outcome in done:
        by_loop.setdefault(loop, []).append(outcome)
    for loop, outcomes in by_loop.items():
        # The loop may have closed while the job ran: then nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, outcomes)


def _settle(outcomes: list[_Outcome]) -> None:
    for future, ok, value in outcomes:
        if future.cancelled():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


async def invoke(
    fn: Callable[..., Any], kwargs: dict[str, Any], workers: Workers, *, inline: bool = False
) -> Any:
    """Call a user function: coroutines on the loop, sync ones in a worker (or inline)."""
    if inspect.iscoroutinefunction(fn):
        return await fn(**kwargs)
    if inline:
        return fn(**kwargs)
    return await workers.run(fn, **kwargs)
