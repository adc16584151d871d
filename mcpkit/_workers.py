"""Run blocking (sync) tools off the event loop, cheaply.

A thread-pool submission per call costs more than a small ``add`` tool itself. Here jobs go
onto one queue that long-lived worker threads drain, and each result goes into its event
loop's outbox the moment it is ready: the first result wakes the loop, and any that arrive
before the loop gets round to it ride along in the same wake-up. Threads start on demand (none
before the first sync call) up to a bound, as daemons, so a stuck tool never keeps the process
alive. A job whose caller stopped waiting (cancelled, timed out) runs to its end all the same,
since a thread cannot be stopped; its result is dropped, with a debug line.

A job the loop thread is about to wait for goes to the *express* thread when it is idle, woken
through a Linux ``eventfd``: ``os.eventfd_write`` lets go of the GIL before its system call, so
the express thread finds the GIL free and runs the job at once (a lock released by a thread
holding the GIL wakes one that must then wait for it: three context switches instead of one).
Every other job goes to the pool, where handing the GIL over per job would stall a loop that
has more to do. Without ``os.eventfd`` (not Linux) there is no express thread. The express
thread, and a pool worker the loop thread wakes, are woken on the loop thread's CPU
(:mod:`mcpkit._beside`): the loop thread holds the GIL they need, so on another CPU they bought
only a wake-up across CPUs per hand-over (10-50 us on a VM); a job runs with the thread's own
CPU set, so the kernel moves a long one to another CPU.

In the pool, jobs wait in a first-in first-out queue and idle workers on a stack, each asleep on
its own lock: a job wakes the most recently idle worker, so a few cache-warm threads serve a
stream of calls. A worker goes on the stack before its result goes out and takes the queue's
next job before it sleeps, so a job queued while it is busy costs no wake-up. While one woken
worker has not yet looked at the queue, more jobs wake nobody else: that worker wakes the next
one when it finds more waiting, unless the job it takes is a quick function's (its last
``QUICK_RUNS`` runs each took less than ``QUICK``): then it runs the others itself after it,
sooner than a woken thread would get the GIL from the busy loop, and with no wake-up. Should
such a job block after all, the jobs behind it are not stuck: while jobs wait and a worker
sleeps, the loop looks at the queue again every ``RECHECK`` seconds and wakes one. A job the
loop thread will not wait for wakes a worker at the loop's next turn, not at once: woken at once
it took the GIL at the loop's next system call in the middle of its turn (a response's
``send``), once per job. So the jobs a busy loop queues in one turn cost one wake-up (over HTTP
at 16 connections, 0.77 context switches per request instead of 1.08). The price: such a job
starts a turn later; when the loop thread blocks in that turn (an async tool doing blocking
I/O), the jobs queued before it wait until it is done; and a job queued in the turn that stops
the loop runs only when that loop runs again (or another loop wakes a worker). A job the loop
waits for in place, or one that needs a new thread, starts at once.

When the loop has nothing else to run and a worker is idle, the loop thread waits for the result
in place, for at most ``WAIT_HERE`` seconds (lending its CPU to the express thread first),
instead of going back to its selector and being woken through it. A function whose result did
not come in time is not waited for again for its next ``SKIP_AFTER_MISS`` calls, so a slow tool
costs the loop at most ``WAIT_HERE`` per that many calls. Whether the loop has nothing else to
run is read from asyncio's internals (:mod:`mcpkit._speedups`): only asyncio's own loops (ready
queue and ``call_soon`` untouched) wait in place; others (uvloop...), Windows (whose lock
timeouts count whole milliseconds) and every loop without that module take the outbox path.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from mcpkit._beside import Beside
from mcpkit._outbox import Outbox, settle_one

try:
    from mcpkit import _speedups
except ImportError:  # pragma: no cover - deleted: results always come through the outbox
    _speedups = None  # type: ignore[assignment]

__all__ = ["Workers"]

logger = logging.getLogger("mcpkit.workers")

WAIT_HERE = 0.0002  # seconds the loop thread may wait in place for a worker's result
YIELD_HERE = 0.00005  # seconds it first lends its CPU to the express thread beside it
SKIP_AFTER_MISS = 64  # calls of a function not waited for in place after it missed
QUICK = 0.001  # seconds: a job this short starts the jobs queued behind it soon enough itself
QUICK_RUNS = 16  # runs in a row shorter than QUICK that make a function quick
RECHECK = 0.001  # seconds after which jobs still waiting behind a quick one wake a worker


def _waits_in_place(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the loop thread may wait for results in place: it can tell when ``loop`` has
    nothing to run (see :mod:`mcpkit._speedups`), and lock timeouts are fine-grained."""
    return sys.platform != "win32" and _speedups is not None and _speedups.plain_loop(loop)


# What a job's result does once it is ready (changed only under Workers._lock).
_TO_OUTBOX = 0  # settle the job's future through its loop's outbox
_TO_WAITER = 1  # the loop thread is waiting in place: hand the outcome over directly
_HANDED = 2  # handed over


class _Job:
    __slots__ = ("call", "done", "future", "key", "outbox", "outcome", "route", "started")

    def __init__(self, call: Callable[[], Any], outbox: Outbox, key: int) -> None:
        self.call = call
        self.key = key  # id() of the function: how long its earlier runs took
        self.outbox = outbox
        self.route = _TO_OUTBOX
        self.future: asyncio.Future[Any] | None = None
        self.done: Any = None  # a held lock the worker releases, when the loop waits here
        self.outcome: tuple[bool, Any] | None = None
        self.started = False  # a worker began running it


class _Worker:
    """A pool thread's place on the idle stack, and the lock it sleeps on (held while it waits
    for work; released by whoever pops it off the stack for a queued job)."""

    __slots__ = ("beside", "wake")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()
        self.beside = Beside(None)  # its thread's own once it runs, before it is on the stack

    def freed(self, workers: Workers) -> _Job | None:
        """Under the workers' lock, its job done: the next queued job, or None (then it is on
        the idle stack, where the next job finds it before it has even gone to sleep)."""
        workers._idle += 1
        if workers._queued:
            return workers._queued.popleft()
        workers._sleepers.append(self)
        return None


class Workers:
    """A small, lazily grown set of worker threads, the most recently idle one taking each job."""

    def __init__(self, max_threads: int = 32) -> None:
        self._max = max_threads
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0
        self._queued: deque[_Job] = deque()
        self._sleepers: list[_Worker] = []  # idle workers, the most recently idle last
        self._waking = False  # one was popped off the stack and has not looked at the queue
        self._outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox] = (
            weakref.WeakKeyDictionary()
        )
        self._skips: dict[int, int] = {}  # id(fn) -> calls left before it is waited for again
        self._quick: dict[int, int] = {}  # id(fn) -> its latest runs in a row shorter than QUICK
        self._busy: set[asyncio.AbstractEventLoop] = set()
        self._express: _Express | None = None  # made by the first job waited for in place

    def busy(self, loop: asyncio.AbstractEventLoop, busy: bool) -> None:
        """Say whether ``loop`` has more work at hand than its ready queue shows (a transport
        starting the next of several requests it read at once): then it does not wait."""
        if busy:
            self._busy.add(loop)
        else:
            self._busy.discard(loop)

    async def run(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """Call ``fn(**kwargs)`` in a worker thread and wait for its result."""
        loop = asyncio.get_running_loop()
        outbox = self._outboxes.get(loop)
        if outbox is None:
            outbox = self._outboxes[loop] = Outbox(loop, plain=_waits_in_place(loop))
        ctx = contextvars.copy_context()
        job = _Job(lambda: ctx.run(fn, **kwargs), outbox, id(fn))
        here = (
            outbox.plain  # (false without the speed-ups module)
            and _speedups.idle(loop)
            and loop not in self._busy
            and (not self._skips or self._wait_for(fn))  # (no call while nothing is skipped)
        )
        if here:
            job.route = _TO_WAITER
            job.done = threading.Lock()
            job.done.acquire()
            express = self._take_express()
            if express is not None:
                beside = express.give(job)
                return await self._wait_here(fn, job, loop, beside)
        else:
            job.future = loop.create_future()
        # A thread is promised to the job before it is queued: when none can start, the caller
        # hears it and the job never runs; and no other loop can count it idle meanwhile.
        idle = self._submit(job, None if here else loop)
        if not idle and here:
            # No idle worker: the job waits its turn, so do not hold up the loop for it.
            here = not self._to_outbox(job, loop)
        if here:
            return await self._wait_here(fn, job, loop, False)
        assert job.future is not None
        return await job.future

    def _timed(self, key: int, quick: bool) -> None:
        """Under the lock: a run of the function ``key`` took less than ``QUICK`` or not."""
        runs = self._quick.get(key, 0)
        if not quick:
            if runs:
                del self._quick[key]
        elif runs < QUICK_RUNS:
            if len(self._quick) >= 1024:  # functions made per call: keep this bounded
                self._quick.clear()
            self._quick[key] = runs + 1

    def _wait_for(self, fn: Callable[..., Any]) -> bool:
        key = id(fn)  # any callable, hashable or not; a reused id only costs one wait
        left = self._skips.get(key)
        if left is None:
            return True
        if left <= 1:
            self._skips.pop(key, None)
        else:
            self._skips[key] = left - 1
        return False

    async def _wait_here(
        self, fn: Callable[..., Any], job: _Job, loop: asyncio.AbstractEventLoop, yields: bool
    ) -> Any:
        try:
            if yields:  # the express thread is on this CPU: lend it the CPU rather than sleep
                until = time.perf_counter() + YIELD_HERE
                while job.route == _TO_WAITER and time.perf_counter() < until:
                    os.sched_yield()  # (lets go of the GIL)
            job.done.acquire(timeout=WAIT_HERE)
        finally:  # also when a signal handler raised: the outbox then settles the future
            missed = job.route != _HANDED and self._to_outbox(job, loop)  # not in time
        if missed and not job.started:  # no thread got to it in time: the machine is busy,
            assert job.future is not None  # not the function slow; wait for it again next time
            return await job.future
        if missed:
            if len(self._skips) >= 1024:  # functions made per call: keep this bounded
                self._skips.clear()
            self._skips[id(fn)] = SKIP_AFTER_MISS
            assert job.future is not None
            return await job.future
        assert job.outcome is not None
        ok, value = job.outcome
        if _speedups.has_ready(loop):
            # The tool scheduled callbacks onto the loop (a change notification, say): let
            # them run before this answer goes out, as they would have on the outbox path.
            future = loop.create_future()
            loop.call_soon(settle_one, future, ok, value)
            return await future
        if ok:
            return value
        raise value

    def _to_outbox(self, job: _Job, loop: asyncio.AbstractEventLoop) -> bool:
        """Send the result of a job the loop was going to wait for through the outbox instead,
        unless it was already handed over; True if it will come that way."""
        if job.route == _HANDED:  # final once set
            return False
        future = loop.create_future()  # before the route changes: nothing may interrupt that
        with self._lock:
            if job.route != _TO_WAITER:
                return False
            job.future = future
            job.route = _TO_OUTBOX
            return True

    def _submit(self, job: _Job, later: asyncio.AbstractEventLoop | None) -> bool:
        """Queue ``job`` with a thread promised to it; True if that is an idle one (which takes
        it at once, or at the loop's next turn: ``later``).
        Raises (the job never runs) when a thread was needed and could not start.

        ``later``, the caller's loop when it will not wait for the job: a sleeping worker is
        then woken at that loop's next turn, not now, so that the jobs of one turn cost the loop
        thread one wake-up and the woken worker does not take the GIL from it in the middle of
        its turn (at its next system call) once per job.

        ``_idle`` counts idle threads less the queued jobs promised to busy ones, so it goes
        below zero while every thread is busy and jobs wait."""
        with self._lock:
            self._idle -= 1
            queued = self._idle >= 0 or self._threads >= self._max
            if queued:
                self._queued.append(job)
                idle = self._idle >= 0
                if later is not None and not job.outbox.wake_due:
                    job.outbox.wake_due = True
                    later.call_soon(self._wake_queued, job.outbox)
            else:
                self._threads += 1
                self._idle += 1  # the new thread takes this job (or one freed meanwhile does)
        if queued:
            if later is None:  # now, and again while it waits (a woken worker may have left
                self._look(job.outbox, behind=0)  # it behind a quick job that then blocked)
            return idle
        worker = _Worker()
        worker.wake.release()  # it looks at the queue first
        try:
            thread = threading.Thread(target=self._work, args=(worker,), daemon=True)
            thread.name = "mcpkit-worker"
            thread.start()
        except BaseException:  # out of threads, say: count only threads that run, owe nothing
            with self._lock:  # (the new thread's place and the job's promise cancel out)
                self._threads -= 1
            raise
        with self._lock:
            self._queued.append(job)
            self._wake_one(beside=True)
        return False

    def _wake_queued(self, outbox: Outbox) -> None:
        """The turn after jobs were queued for later (see ``_submit``): wake a worker for
        them, unless a worker has taken them already."""
        outbox.wake_due = False
        self._look(outbox, behind=1)

    def _recheck(self, outbox: Outbox) -> None:
        outbox.recheck_due = False
        self._look(outbox, behind=0)

    def _look(self, outbox: Outbox, behind: int) -> None:
        """On the loop thread: wake a worker for queued jobs; and while more than ``behind``
        wait and a worker sleeps, look again in ``RECHECK`` seconds. A worker that takes a
        quick function's job leaves the others queued, to run them itself next; should that
        job block after all, the next look wakes another worker for them."""
        with self._lock:
            if self._queued:
                self._wake_one(beside=True)
            # (with no worker asleep, the busy ones take the queued jobs as they finish: a
            # worker goes to sleep only when the queue is empty)
            waiting = len(self._queued) > behind and bool(self._sleepers)
        if waiting and not outbox.recheck_due:
            outbox.recheck_due = True
            asyncio.get_running_loop().call_later(RECHECK, self._recheck, outbox)

    def _wake_one(self, beside: bool = False) -> None:
        """Under the lock, jobs queued: wake the most recently idle worker for them, unless one
        woken already will look at the queue (it then wakes the next while jobs wait); on the
        calling loop thread's CPU when ``beside``."""
        if self._sleepers and not self._waking:
            self._waking = True
            worker = self._sleepers.pop()
            try:
                if beside:
                    worker.beside.follow()
            finally:  # (whatever is raised there: it was popped, so it must look at the queue)
                worker.wake.release()  # no wake-up when it is not asleep yet

    def _take_express(self) -> _Express | None:
        """The express thread, promised to a job, if it is idle (made on first use); None
        where there is none (not Linux) or it is busy. Raises when it cannot start."""
        with self._lock:
            express = self._express
            if express is not None:
                if not express.idle:
                    return None
                express.idle = False
                return express
            if getattr(os, "eventfd", None) is None:
                return None
            try:  # (under the lock: made once; it takes nothing of it until it has a job)
                self._express = _Express(self)
            except BaseException:  # out of threads or descriptors, say: the caller hears it
                self._express = None
                raise
            return self._express

    def _work(self, me: _Worker) -> None:
        me.beside = Beside(threading.get_native_id() if _speedups is not None else None)
        while True:
            me.wake.acquire()  # returns at once when popped before it went to sleep
            me.beside.working()
            with self._lock:
                self._waking = False
                job = self._queued.popleft() if self._queued else None
                if job is None:  # another thread took it: back on the stack
                    self._sleepers.append(me)
                elif self._queued and self._quick.get(job.key, 0) < QUICK_RUNS:
                    self._wake_one()  # more waiting behind a job that may take long
            while job is not None:
                job = self._do(job, me)  # between jobs, hold nothing of the last one

    def _do(self, job: _Job, slot: _Worker | _Express) -> _Job | None:
        """Run ``job`` and deliver its result; the next job for this thread, if one waits."""
        job.started = True
        began = time.perf_counter()
        outcome = _execute(job.call)
        quick = time.perf_counter() - began < QUICK
        # Idle before the result goes out: the loop's next job reuses this thread, no other.
        with self._lock:
            self._timed(job.key, quick)
            after = slot.freed(self)
            if job.route == _TO_WAITER:
                job.outcome = outcome
                job.route = _HANDED
                job.done.release()
                return after
        assert job.future is not None
        job.outbox.put((job.future, *outcome))
        return after


class _Express:
    """The thread for jobs the loop thread waits for in place: one job at a time, handed
    over with :meth:`give` (see the module's docstring). Made once per :class:`Workers`,
    busy from the start (with the job that made it), and kept while the process lives."""

    def __init__(self, workers: Workers) -> None:
        self.idle = False  # changed under the workers' lock
        self._job: _Job | None = None
        self._fd = os.eventfd(0, os.EFD_CLOEXEC)
        try:
            thread = threading.Thread(target=self._work, args=(workers,), daemon=True)
            thread.name = "mcpkit-worker-express"
            thread.start()
            # (pinned only with the speed-ups, whose absence must change nothing but speed)
            self._beside = Beside(thread.native_id if _speedups is not None else None)
        except BaseException:
            os.close(self._fd)
            raise

    def freed(self, workers: Workers) -> None:
        """Under the workers' lock: idle again (it takes no queued jobs)."""
        self.idle = True

    def give(self, job: _Job) -> bool:
        """Run ``job`` (the thread was promised to it: idle is False); True if the thread waits
        on the caller's CPU (see :mod:`mcpkit._beside`)."""
        self._job = job
        try:
            beside = self._beside.follow()
        finally:  # (whatever is raised there: the thread was promised, so it runs the job)
            os.eventfd_write(self._fd, 1)  # lets go of the GIL: the thread takes it at once
        return beside

    def _work(self, workers: Workers) -> None:
        while True:
            os.eventfd_read(self._fd)
            self._beside.working()  # (a job's processes and threads never inherit the pin)
            job, self._job = self._job, None
            assert job is not None
            workers._do(job, self)  # (never another job: None)
            del job  # between jobs, hold nothing of the last one


def _execute(call: Callable[[], Any]) -> tuple[bool, Any]:
    try:
        return True, call()
    except (StopIteration, GeneratorExit) as exc:
        # A future cannot carry StopIteration (PEP 479); and the task awaiting a future throws
        # what it carries into its coroutine, where GeneratorExit closes the coroutine instead
        # of being raised in it. The caller gets a RuntimeError caused by either.
        error = RuntimeError(f"the tool raised {type(exc).__name__}")
        error.__cause__ = exc
        return False, error
    except BaseException as exc:  # SystemExit, KeyboardInterrupt...: the caller's to handle
        return False, exc
