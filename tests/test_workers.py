"""The worker-thread hand-off for sync tools: results come back at once and never get lost."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import os
import sys
import threading
import time
import weakref
from typing import Any

import pytest

from mcpkit import App, _beside, _speedups, _workers
from mcpkit._workers import Workers
from mcpkit.testing import Client

pytestmark = pytest.mark.usefixtures("speedups")  # each test runs with and without them


def fast() -> str:
    return "fast"


def slow() -> str:
    time.sleep(0.6)
    return "slow"


def test_a_fast_result_never_waits_for_a_slow_job_picked_up_after_it() -> None:
    async def trial(workers: Workers) -> float:
        started = time.perf_counter()
        quick = asyncio.ensure_future(workers.run(fast))
        late = asyncio.ensure_future(workers.run(slow))
        assert await quick == "fast"
        elapsed = time.perf_counter() - started
        assert await late == "slow"
        return elapsed

    async def trials() -> list[float]:
        workers = Workers()
        return [await trial(workers) for _ in range(3)]

    assert max(asyncio.run(trials())) < 0.3


def test_a_sync_tool_raising_stopiteration_is_answered_not_hung() -> None:
    app = App("t", "1")

    @app.tool
    def first(items: list[int]) -> int:
        """The first item."""
        return next(iter(items))

    with Client(app) as client:
        empty = client.call_tool("first", {"items": []})
        assert empty["isError"] is True
        assert "failed with an internal error" in empty["content"][0]["text"]
        assert client.call_tool("first", {"items": [7]})["structuredContent"] == {"result": 7}


# ------------------------------------------------------------------ waiting in place
# When the loop has nothing else to run and a worker is idle, the loop thread waits for a
# quick result in place (no trip through its selector). These tests drive a coroutine by hand:
# ``send(None)`` raising StopIteration means the call finished without suspending.


def _step(coro: Any) -> tuple[bool, Any]:
    """One step of ``coro``: (True, its value) if it finished, else (False, what it awaits)."""
    try:
        return False, coro.send(None)
    except StopIteration as stop:
        return True, stop.value


async def _finish(coro: Any, awaited: Any) -> Any:
    """Drive a coroutine that suspended on the future ``awaited`` to its end, as a task
    would: wait for the future, then resume the coroutine with None."""
    while True:
        await asyncio.wait([awaited])
        finished, value = _step(coro)
        if finished:
            return value
        awaited = value


async def _in_place(coro: Any, speedups: bool) -> Any:
    """The value of a call that finishes in its first step with the speed-ups in use (the
    loop thread waits for it in place), and that suspends without them."""
    finished, value = _step(coro)
    assert finished is speedups
    return value if finished else await _finish(coro, value)


async def _occupy(workers: Workers, gate: threading.Event) -> asyncio.Future[Any]:
    """Start ``gate.wait`` in a worker without the loop waiting in place for it, and return
    once the worker is inside it; the express thread too, when there is one (it takes only
    jobs waited for in place: one that is not ready at once is let go)."""
    loop = asyncio.get_running_loop()
    workers.busy(loop, True)
    try:
        blocked = await _held(workers, gate)
    finally:
        workers.busy(loop, False)
    if workers._express is None:
        return blocked
    # The express thread takes a job only when the loop has nothing ready; the tasks just
    # started may still have a step queued, so the probe is told the loop is idle.
    wait_here, _workers.WAIT_HERE = _workers.WAIT_HERE, 0.0
    idle = _speedups.idle
    _speedups.idle = lambda loop: True
    workers._skips.clear()  # an earlier held() that missed may have had the same id
    try:
        express = await _held(workers, gate)
    finally:
        _workers.WAIT_HERE = wait_here
        _speedups.idle = idle
    return asyncio.ensure_future(_both(blocked, express))


async def _held(workers: Workers, gate: threading.Event) -> asyncio.Future[Any]:
    inside = threading.Event()

    def held() -> bool:
        inside.set()
        return gate.wait()

    coro = workers.run(held)
    finished, awaited = _step(coro)
    assert not finished
    blocked = asyncio.ensure_future(_finish(coro, awaited))
    assert await asyncio.to_thread(inside.wait, 5)
    return blocked


async def _both(first: asyncio.Future[Any], second: asyncio.Future[Any]) -> Any:
    assert await second is True
    return await first


def _boom() -> None:
    raise LookupError("no such thing")


def _stop() -> None:
    raise StopIteration


REQUEST = contextvars.ContextVar("REQUEST", default="none")


def _seen() -> str:
    return REQUEST.get()


@pytest.mark.parametrize("wait_here", [5.0, 0.0], ids=["in-place", "through-outbox"])
def test_values_errors_and_context_come_back_alike_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, wait_here: float, speedups: bool
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", wait_here)

    async def scenario() -> None:
        workers = Workers()
        assert await workers.run(fast) == "fast"  # starts the thread: now one is idle
        # With no time to wait, a result ready before the loop thread looks is still taken in
        # place: the outbox path is the one a loop with more at hand (busy) takes.
        workers.busy(asyncio.get_running_loop(), wait_here == 0)
        REQUEST.set("request-7")
        coro = workers.run(_seen)
        finished, value = _step(coro)
        assert finished is (wait_here > 0 and speedups)  # in place: only with the speed-ups
        assert (value if finished else await _finish(coro, value)) == "request-7"
        with pytest.raises(LookupError, match="no such thing"):
            await workers.run(_boom)
        with pytest.raises(RuntimeError, match="raised StopIteration"):
            await workers.run(_stop)

    asyncio.run(scenario())


class _LaterLoop(asyncio.SelectorEventLoop):
    """Schedules ``call_soon`` callbacks as timers (a pattern of GUI-integrated loops): its
    ready queue stays empty although callbacks are pending."""

    def call_soon(  # type: ignore[override]
        self, callback: Any, *args: Any, context: Any = None
    ) -> Any:
        return self.call_later(0, callback, *args, context=context)

    def call_soon_threadsafe(  # type: ignore[override]
        self, callback: Any, *args: Any, context: Any = None
    ) -> Any:
        handle = self.call_soon(callback, *args, context=context)
        self._write_to_self()  # type: ignore[attr-defined]
        return handle


@pytest.mark.parametrize("kind", ["asyncio", "own-way"])
def test_callbacks_a_sync_function_schedules_run_before_its_caller_resumes(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", 5.0)
    order: list[str] = []

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        workers = Workers()
        await workers.run(fast)

        def notify() -> str:
            loop.call_soon_threadsafe(order.append, "callback")
            return "done"

        assert await workers.run(notify) == "done"
        order.append("caller")  # a callback run after this (or never) fails the test

    loop = asyncio.new_event_loop() if kind == "asyncio" else _LaterLoop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()
    assert order == ["callback", "caller"]


def test_a_sync_function_that_needs_the_loop_is_not_deadlocked(
    monkeypatch: pytest.MonkeyPatch, speedups: bool
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", 0.05)
    waits: list[bool] = []
    original = Workers._wait_here

    async def counted(self: Workers, fn: Any, job: Any, loop: Any, *more: Any) -> Any:
        waits.append(True)
        return await original(self, fn, job, loop, *more)

    monkeypatch.setattr(Workers, "_wait_here", counted)

    wait = [True] if speedups else []  # without the speed-ups, never waited for in place

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        workers = Workers()
        await workers.run(fast)
        waits.clear()

        async def on_the_loop() -> str:
            return "from the loop"

        def ask_the_loop() -> str:
            return asyncio.run_coroutine_threadsafe(on_the_loop(), loop).result(5)

        started = time.perf_counter()
        assert await workers.run(ask_the_loop) == "from the loop"  # waited 50 ms, then let go
        assert time.perf_counter() - started < 3
        assert waits == wait
        for _ in range(_workers.SKIP_AFTER_MISS):  # it missed: not waited for a while
            assert await workers.run(ask_the_loop) == "from the loop"
        assert waits == wait
        assert await workers.run(fast) == "fast"  # other functions still are
        assert waits == wait * 2
        assert await workers.run(ask_the_loop) == "from the loop"  # and it is tried again
        assert waits == wait * 3

    asyncio.run(scenario())


def test_a_job_no_thread_got_to_in_time_does_not_count_against_its_function(
    monkeypatch: pytest.MonkeyPatch, speedups: bool
) -> None:
    """A wait in place that ends before a thread even began the job (a busy machine wakes the
    thread late) says nothing about the function: its next call is waited for in place again.
    (One that ran too long is not, for a while: the test above.)"""
    monkeypatch.setattr(_workers, "WAIT_HERE", 0.05)
    waits: list[bool] = []
    original_wait, original_do = Workers._wait_here, Workers._do
    late = threading.Event()  # set: the next job's thread is held back before it starts it
    go = threading.Event()

    async def counted(self: Workers, fn: Any, job: Any, loop: Any, *more: Any) -> Any:
        waits.append(True)
        return await original_wait(self, fn, job, loop, *more)

    def held_back(self: Workers, job: Any, slot: Any) -> Any:
        if late.is_set():
            late.clear()
            go.wait(5)
        return original_do(self, job, slot)

    monkeypatch.setattr(Workers, "_wait_here", counted)
    monkeypatch.setattr(Workers, "_do", held_back)
    wait = [True] if speedups else []  # without the speed-ups, never waited for in place

    async def scenario() -> None:
        workers = Workers()
        assert await workers.run(fast) == "fast"  # the express thread exists from here on
        waits.clear()
        late.set()
        missed = asyncio.ensure_future(workers.run(fast))
        while not missed.done() and late.is_set():  # the wait in place (50 ms) ran out
            await asyncio.sleep(0.001)
        go.set()
        assert await missed == "fast"
        assert waits == wait
        assert await workers.run(fast) == "fast"
        assert waits == wait * 2  # waited for in place again

    asyncio.run(scenario())


def test_no_waiting_in_place_without_an_idle_worker_or_when_the_loop_is_busy(
    monkeypatch: pytest.MonkeyPatch, speedups: bool
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", 5.0)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=1)
        await workers.run(fast)
        gate = threading.Event()
        blocked = await _occupy(workers, gate)  # the only worker is now inside gate.wait

        started = time.perf_counter()
        coro = workers.run(fast)
        finished, awaited = _step(coro)  # queued behind the blocked job: the loop goes on
        assert not finished
        assert time.perf_counter() - started < 1
        gate.set()
        assert await _finish(coro, awaited) == "fast"
        assert await blocked is True

        workers.busy(loop, True)  # a transport with more requests at hand
        coro = workers.run(fast)
        finished, awaited = _step(coro)
        assert not finished
        assert await _finish(coro, awaited) == "fast"
        workers.busy(loop, False)
        assert await _in_place(workers.run(fast), speedups) == "fast"

    asyncio.run(scenario())


def test_a_pool_that_was_full_once_still_knows_when_no_worker_is_idle(
    monkeypatch: pytest.MonkeyPatch, speedups: bool
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", 5.0)

    async def full_once(workers: Workers) -> None:
        gate = threading.Event()
        blocked = await _occupy(workers, gate)
        queued = asyncio.ensure_future(workers.run(fast))  # waits for the busy worker
        await asyncio.sleep(0)  # a turn of the loop: the call is queued
        gate.set()
        assert (await blocked, await queued) == (True, "fast")

    async def scenario() -> None:
        workers = Workers(max_threads=1)
        await workers.run(fast)
        await full_once(workers)
        await full_once(workers)
        gate = threading.Event()
        blocked = await _occupy(workers, gate)  # the only worker is inside gate.wait again
        release = threading.Timer(2.0, gate.set)
        release.start()
        started = time.perf_counter()
        coro = workers.run(fast)
        finished, awaited = _step(coro)  # no idle worker: the loop must not wait for it
        assert not finished
        assert time.perf_counter() - started < 1
        gate.set()
        release.cancel()
        assert await _finish(coro, awaited) == "fast"
        assert await blocked is True
        # And once the worker is idle, it does.
        assert await _in_place(workers.run(fast), speedups) == "fast"

    asyncio.run(scenario())


class _InterruptedLoop(asyncio.SelectorEventLoop):
    """``create_future`` raises KeyboardInterrupt once when armed, as a SIGINT handler may."""

    armed = False

    def create_future(self) -> asyncio.Future[Any]:
        if self.armed:
            self.armed = False
            raise KeyboardInterrupt
        return super().create_future()


def test_an_interrupt_while_giving_up_the_wait_leaves_the_workers_working(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    workers = Workers(max_threads=1)
    loop = _InterruptedLoop()
    try:
        assert loop.run_until_complete(workers.run(fast)) == "fast"

        gate = threading.Event()

        async def interrupted() -> None:
            coro = workers.run(gate.wait)  # held until the interruption is over: a miss
            loop.armed = True  # the wait misses; making the outbox future is interrupted
            with pytest.raises(KeyboardInterrupt):
                _step(coro)

        loop.run_until_complete(interrupted())
        gate.set()  # the job finishes, then the only worker takes the next one
        answer = loop.run_until_complete(asyncio.wait_for(workers.run(fast), 5))
    finally:
        loop.close()
    assert died == []
    assert answer == "fast"


@pytest.mark.parametrize("wait_here", [5.0, 0.0], ids=["in-place", "through-outbox"])
def test_a_closed_loop_that_ran_sync_calls_is_freed(
    monkeypatch: pytest.MonkeyPatch, wait_here: float
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", wait_here)
    workers = Workers()
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(workers.run(fast)) == "fast"
    assert loop.run_until_complete(workers.run(fast)) == "fast"  # a thread was idle for it
    loop.close()
    gone = weakref.ref(loop)
    del loop
    deadline = time.monotonic() + 5  # a worker may still be leaving the frame that delivered
    while gc.collect() is not None and gone() is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gone() is None
    assert len(workers._outboxes) == 0


def test_no_waiting_in_place_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its lock timeouts are whole milliseconds: a miss would hold the loop 5x too long or more.
    loop = asyncio.new_event_loop()  # made first: only mcpkit is to think it is on Windows
    monkeypatch.setattr(_workers, "WAIT_HERE", 5.0)
    monkeypatch.setattr(sys, "platform", "win32")

    async def scenario() -> None:
        workers = Workers()
        await workers.run(fast)
        coro = workers.run(fast)
        finished, awaited = _step(coro)
        assert not finished
        assert await _finish(coro, awaited) == "fast"

    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()


def _failing_once(delay: float) -> Any:
    """A ``Thread.start`` that fails its first call after ``delay`` seconds."""
    start = threading.Thread.start
    failures = [RuntimeError("can't start new thread")]

    def flaky_start(self: threading.Thread) -> None:
        if failures:
            time.sleep(delay)
            raise failures.pop()
        start(self)

    return flaky_start


def test_a_thread_that_cannot_start_fails_the_call_and_not_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    monkeypatch.setattr(threading.Thread, "start", _failing_once(0.0))

    def record(name: str) -> str:
        ran.append(name)
        return name

    async def scenario() -> None:
        workers = Workers(max_threads=1)
        with pytest.raises(RuntimeError, match="can't start new thread"):
            await workers.run(record, name="first")
        assert await asyncio.wait_for(workers.run(record, name="second"), 5) == "second"
        assert await asyncio.wait_for(workers.run(record, name="third"), 5) == "third"

    asyncio.run(scenario())
    assert ran == ["second", "third"]  # the call that failed never ran behind its caller


def test_a_call_whose_thread_cannot_start_never_runs_even_when_a_worker_frees_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []

    def record(name: str) -> str:
        ran.append(name)
        return name

    async def scenario() -> None:
        workers = Workers(max_threads=2)
        assert await workers.run(record, name="warm") == "warm"
        gate = threading.Event()
        blocked = await _occupy(workers, gate)
        threading.Timer(0.05, gate.set).start()
        # The start fails 0.3 s in: the busy worker frees up meanwhile.
        monkeypatch.setattr(threading.Thread, "start", _failing_once(0.3))
        with pytest.raises(RuntimeError, match="can't start new thread"):
            await workers.run(record, name="reported failed")
        assert await blocked is True
        await asyncio.sleep(0.3)
        assert await asyncio.wait_for(workers.run(record, name="after"), 5) == "after"

    asyncio.run(scenario())
    assert ran == ["warm", "after"]


def test_without_eventfd_jobs_are_handed_over_through_the_token_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    monkeypatch.delattr(os, "eventfd", raising=False)  # as on macOS and Windows
    gate = threading.Event()

    def held(n: int) -> int:
        assert gate.wait(5)
        return n * 2

    async def main() -> list[Any]:
        workers = Workers(max_threads=2)
        calls = [asyncio.ensure_future(workers.run(held, n=n)) for n in range(5)]
        gate.set()
        return [*await asyncio.gather(*calls), await workers.run(fast)]

    assert asyncio.run(main()) == [0, 2, 4, 6, 8, "fast"]


def test_the_most_recently_idle_worker_takes_the_next_job() -> None:
    barrier = threading.Barrier(3)

    def together() -> int:
        barrier.wait(5)  # three calls at once: three pool threads
        return threading.get_ident()

    async def scenario() -> tuple[set[int], list[int]]:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=3)
        workers.busy(loop, True)  # every job through the pool, none waited for in place
        started = await asyncio.gather(*(workers.run(together) for _ in range(3)))
        # One after the other: each finds the thread that ran the last one idle, and a
        # thread goes idle before its result comes back.
        following = [await workers.run(threading.get_ident) for _ in range(10)]
        return set(started), following

    started, following = asyncio.run(scenario())
    assert len(started) == 3
    assert following[0] in started
    assert following == [following[0]] * 10


def test_the_jobs_a_busy_loop_queues_in_one_turn_wake_a_worker_at_its_next_turn() -> None:
    # Jobs the loop will not wait for: no worker runs one while the loop is still in the turn
    # that queued them (here, a task that lets go of the GIL for 50 ms right after); the
    # worker woken at the next turn runs them all, in order.
    ran: list[int] = []

    def job(n: int) -> int:
        ran.append(n)
        return n

    async def scenario() -> tuple[list[int], list[int], list[int]]:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=1)
        workers.busy(loop, True)  # every job through the pool, none waited for in place
        await workers.run(job, n=-1)  # the pool's thread, asleep now
        ran.clear()
        calls = [loop.create_task(workers.run(job, n=n)) for n in range(3)]
        seen: list[int] = []

        async def later_in_the_same_turn() -> None:
            time.sleep(0.05)  # lets go of the GIL: a worker woken now would run a job
            seen.extend(ran)

        await loop.create_task(later_in_the_same_turn())
        return await asyncio.gather(*calls), seen, ran

    results, seen, ran_after = asyncio.run(scenario())
    assert results == [0, 1, 2]
    assert seen == []
    assert ran_after == [0, 1, 2]


def _nap() -> int:
    """A quick job that lets go of the GIL (for 0.2 ms)."""
    time.sleep(0.0002)
    return threading.get_ident()


def test_the_jobs_queued_behind_a_quick_function_run_after_it_on_its_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its last QUICK_RUNS runs were quick: the worker woken for the four jobs of a turn runs
    # them one after the other, and wakes no other thread for them (one that was woken would
    # take a job the moment the first lets go of the GIL).
    monkeypatch.setattr(_workers, "RECHECK", 30.0)  # no second look, even on a slow machine
    monkeypatch.setattr(_workers, "QUICK", 1.0)  # (a loaded machine's 0.2 ms naps stay quick)

    async def scenario() -> list[int]:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=4)
        workers.busy(loop, True)  # every job through the pool, none waited for in place
        for _ in range(_workers.QUICK_RUNS):  # four threads (the first turn), then idle
            await asyncio.gather(*(workers.run(_nap) for _ in range(4)))
        threads: list[int] = await asyncio.gather(*(workers.run(_nap) for _ in range(4)))
        return threads

    assert len(set(asyncio.run(scenario()))) == 1


class _Release:
    """A job that, with ``wait``, blocks until one without it has run (at most 10 s)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def __call__(self, wait: bool) -> str:
        if not wait:
            self.event.set()
            return "set"
        return "released" if self.event.wait(10) else "stuck"


def test_a_quick_function_that_blocks_does_not_hold_up_the_jobs_queued_behind_it() -> None:
    # Quick so far, so the worker that takes its job leaves the next one queued; this time the
    # job blocks until the one behind it has run: the loop's second look (RECHECK seconds
    # later) wakes another worker for it.
    step = _Release()
    release = step.event

    async def scenario() -> tuple[list[str], float]:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=4)
        workers.busy(loop, True)
        for _ in range(_workers.QUICK_RUNS):  # two threads, and the function quick
            await asyncio.gather(*(workers.run(step, wait=False) for _ in range(2)))
        release.clear()
        started = time.perf_counter()
        done = await asyncio.gather(workers.run(step, wait=True), workers.run(step, wait=False))
        return list(done), time.perf_counter() - started

    done, elapsed = asyncio.run(scenario())
    assert done == ["released", "set"]
    assert elapsed < 5


def test_a_function_slow_once_wakes_a_thread_for_the_jobs_behind_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One run over QUICK and the function is no longer quick: the jobs behind its next job get
    # their own threads at once (no waiting for the loop's second look).
    monkeypatch.setattr(_workers, "RECHECK", 30.0)
    barrier = threading.Barrier(2)

    def step(how: str) -> str:
        if how == "together":  # returns only once two threads run it at the same time
            barrier.wait(10)
        elif how == "slow":
            time.sleep(2 * _workers.QUICK)
        return how

    async def scenario() -> list[str]:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=4)
        workers.busy(loop, True)
        for _ in range(_workers.QUICK_RUNS):  # two threads, and the function quick
            await asyncio.gather(*(workers.run(step, how="quick") for _ in range(2)))
        await workers.run(step, how="slow")
        together: list[str] = await asyncio.gather(
            *(workers.run(step, how="together") for _ in range(2))
        )
        return together

    assert asyncio.run(scenario()) == ["together", "together"]


@pytest.mark.parametrize("path", ["waited for in place", "through the pool"])
def test_the_threads_a_loop_hands_jobs_are_woken_on_its_cpu_and_work_on_their_own(
    monkeypatch: pytest.MonkeyPatch, speedups: bool, path: str
) -> None:
    # With the speed-ups (Linux): the express thread, and a pool worker the loop thread wakes,
    # are woken on the CPU of the loop thread (on a VM a wake-up on an idle CPU takes ~50 us, on
    # the same one ~2 us), following it to another CPU. A job never sees the pin: a process or
    # thread it starts inherits the CPU set the thread was made with, and between jobs the
    # thread has that set too. Without the speed-ups nothing is pinned.
    monkeypatch.setattr(_workers, "WAIT_HERE", 1.0)  # (every call waited for in place)
    allowed = os.sched_getaffinity(0)
    cpus = sorted(allowed)[:2]

    def where() -> tuple[int, int, set[int]]:
        return threading.get_native_id(), _beside._current_cpu(), os.sched_getaffinity(0)

    async def scenario() -> list[tuple[int, set[int], set[int]]]:
        workers = Workers()
        workers.busy(asyncio.get_running_loop(), path == "through the pool")
        await workers.run(where)  # its threads are made with the test's CPU set
        seen = []
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})  # the loop thread moves to this CPU
            await asyncio.sleep(0.01)  # (the thread has gone back to sleep)
            thread, ran_on, working = await workers.run(where)
            await asyncio.sleep(0.01)
            seen.append((ran_on, working, os.sched_getaffinity(thread)))
        return seen

    try:
        seen = asyncio.run(scenario())
    finally:
        os.sched_setaffinity(0, allowed)
    assert [(working, between) for _, working, between in seen] == [(allowed, allowed)] * len(cpus)
    if speedups:
        assert [ran_on for ran_on, _, _ in seen] == cpus


def test_a_job_waited_for_in_place_behind_a_quick_one_that_blocks_is_not_stuck() -> None:
    # The express thread is busy, so a call the loop waits for in place goes to the pool; the
    # worker woken for the turn's other job (a quick function's) leaves it queued, and that job
    # then blocks until this one has run: the loop's second look wakes another worker for it.
    step = _Release()
    release = step.event
    hold = threading.Event()

    def held() -> str:
        hold.wait(10)
        return "held"

    async def scenario() -> tuple[str, str, float]:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=4)
        busy = asyncio.ensure_future(workers.run(held))  # alone: the express thread, if any
        await asyncio.sleep(0.05)
        workers.busy(loop, True)
        for _ in range(_workers.QUICK_RUNS):  # two pool threads, and the function quick
            await asyncio.gather(*(workers.run(step, wait=False) for _ in range(2)))
        await asyncio.sleep(0.02)  # both asleep again
        release.clear()
        first = asyncio.ensure_future(workers.run(step, wait=True))
        await asyncio.sleep(0)  # its job is queued, a worker to be woken at the next turn
        await asyncio.sleep(0)  # woken; this step is alone in its turn: waited for in place
        workers.busy(loop, False)
        started = time.perf_counter()
        second = await workers.run(step, wait=False)
        done = await first, second, time.perf_counter() - started
        hold.set()
        await busy
        return done

    first, second, elapsed = asyncio.run(scenario())
    assert (first, second) == ("released", "set")
    assert elapsed < 2


def test_a_helper_whose_cpu_cannot_be_read_is_never_pinned_nor_lent_a_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where sched_getcpu answers -1, nothing is pinned, and the loop thread is told so (it then
    # sleeps on the job's lock rather than yield its CPU for nothing).
    monkeypatch.setattr(_beside, "_getcpu", lambda: -1)
    before = os.sched_getaffinity(0)
    beside = _beside.Beside(threading.get_native_id())
    assert [beside.follow(), beside.follow()] == [False, False]
    assert os.sched_getaffinity(0) == before


def test_a_worker_woken_while_its_pin_fails_still_takes_the_jobs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pinning a worker beside the loop thread raising (it catches the errors it expects; this
    # is any other): the worker, already off the idle stack, is woken all the same, so the
    # pool does not stop waking workers and the jobs are answered.
    failures: list[str] = []
    follow = _beside.Beside.follow

    def failing(self: _beside.Beside) -> bool:
        if not failures:
            failures.append("raised")
            raise RuntimeError("the pin failed")
        return follow(self)

    async def scenario() -> list[str]:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: failures.append(context["message"]))
        workers = Workers(max_threads=1)
        workers.busy(loop, True)  # every job through the pool, woken at the loop's next turn
        await workers.run(fast)  # the pool's thread, asleep now
        monkeypatch.setattr(_beside.Beside, "follow", failing)
        done = await asyncio.wait_for(asyncio.gather(*(workers.run(fast) for _ in range(3))), 5)
        return list(done)

    assert asyncio.run(scenario()) == ["fast"] * 3
    assert failures[0] == "raised"


def test_a_pin_interrupted_after_it_was_set_still_comes_off_when_the_helper_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A signal handler raising just after the pin (the system call done): the helper, woken
    # all the same, must not run its job pinned. Here the helper is the test's own thread.
    allowed = os.sched_getaffinity(0)
    setaffinity = os.sched_setaffinity

    def interrupted(pid: int, cpus: Any) -> None:
        setaffinity(pid, cpus)
        raise KeyboardInterrupt

    beside = _beside.Beside(threading.get_native_id())
    monkeypatch.setattr(os, "sched_setaffinity", interrupted)
    with pytest.raises(KeyboardInterrupt):
        beside.follow()
    monkeypatch.setattr(os, "sched_setaffinity", setaffinity)
    try:
        beside.working()
        assert os.sched_getaffinity(0) == allowed
    finally:
        os.sched_setaffinity(0, allowed)


def test_a_helper_works_with_the_cpu_set_it_has_now_not_the_one_it_had_first() -> None:
    # The process narrowed after the helper was first pinned (taskset -a -p, a cgroup): its
    # jobs keep to the narrower set (the set is read at each pin, while it is its own).
    allowed = os.sched_getaffinity(0)
    beside = _beside.Beside(threading.get_native_id())  # (the helper: the test's own thread)
    try:
        assert beside.follow() is (_beside._current_cpu() >= 0)
        beside.working()
        narrower = {_beside._current_cpu()} if beside.cpu != _beside._OFF else allowed
        os.sched_setaffinity(0, narrower)
        beside.follow()
        beside.working()
        assert os.sched_getaffinity(0) == narrower
    finally:
        os.sched_setaffinity(0, allowed)


def test_threads_reading_their_cpu_while_the_reader_loads_all_get_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first read loads libc's sched_getcpu (an import that lets other threads run): a
    # second thread reading meanwhile waits for it rather than hear "no CPU" (its helper would
    # then never be pinned).
    import ctypes

    real = ctypes.CDLL

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(_beside, "_getcpu", None)
    monkeypatch.setattr(ctypes, "CDLL", slow)
    cpus: list[int] = []
    threads = [threading.Thread(target=lambda: cpus.append(_beside._current_cpu())) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(cpus) == 2
    assert min(cpus) >= 0
