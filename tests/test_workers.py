"""The worker-thread hand-off for sync tools: results come back at once and never get lost."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import pytest

from mcpkit import App, _workers
from mcpkit._workers import Workers
from mcpkit.testing import Client


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


def _boom() -> None:
    raise LookupError("no such thing")


def _stop() -> None:
    raise StopIteration


REQUEST = contextvars.ContextVar("REQUEST", default="none")


def _seen() -> str:
    return REQUEST.get()


@pytest.mark.parametrize("wait_here", [5.0, 0.0], ids=["in-place", "through-outbox"])
def test_values_errors_and_context_come_back_alike_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, wait_here: float
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", wait_here)

    async def scenario() -> None:
        workers = Workers()
        assert await workers.run(fast) == "fast"  # starts the thread: now one is idle
        REQUEST.set("request-7")
        coro = workers.run(_seen)
        finished, value = _step(coro)
        assert finished is (wait_here > 0)
        assert (value if finished else await _finish(coro, value)) == "request-7"
        with pytest.raises(LookupError, match="no such thing"):
            await workers.run(_boom)
        with pytest.raises(RuntimeError, match="raised StopIteration"):
            await workers.run(_stop)

    asyncio.run(scenario())


def test_callbacks_a_sync_function_schedules_run_before_its_caller_resumes(
    monkeypatch: pytest.MonkeyPatch,
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
        order.append("caller")

    asyncio.run(scenario())
    assert order == ["callback", "caller"]


def test_a_sync_function_that_needs_the_loop_is_not_deadlocked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", 0.05)
    waits: list[bool] = []
    original = Workers._wait_here

    async def counted(self: Workers, fn: Any, job: Any, loop: Any) -> Any:
        waits.append(True)
        return await original(self, fn, job, loop)

    monkeypatch.setattr(Workers, "_wait_here", counted)

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
        assert waits == [True]
        for _ in range(_workers.SKIP_AFTER_MISS):  # it missed: not waited for a while
            assert await workers.run(ask_the_loop) == "from the loop"
        assert waits == [True]
        assert await workers.run(fast) == "fast"  # other functions still are
        assert waits == [True, True]
        assert await workers.run(ask_the_loop) == "from the loop"  # and it is tried again
        assert waits == [True, True, True]

    asyncio.run(scenario())


def test_no_waiting_in_place_without_an_idle_worker_or_when_the_loop_is_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", 5.0)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        workers = Workers(max_threads=1)
        await workers.run(fast)
        gate = threading.Event()
        blocked = asyncio.ensure_future(workers.run(gate.wait))
        await asyncio.sleep(0.05)  # the only worker is now inside gate.wait

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
        finished, value = _step(workers.run(fast))
        assert (finished, value) == (True, "fast")

    asyncio.run(scenario())
