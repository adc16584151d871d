"""The worker-thread hand-off for sync tools: results come back at once and never get lost."""

from __future__ import annotations

import asyncio
import time

from mcpkit import App
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
