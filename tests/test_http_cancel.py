"""A stateless request whose client disconnects: the call is cancelled, in-process over ASGI.

The call runs in the request's own task and a disconnect cancels that task; these pin down
what that must keep: the cancellation reaches the tool however early or late the client
leaves, nothing is answered after it, a cancellation from outside still propagates, and no
task or pending cancellation is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import sys
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgi_support import TIMEOUT, Request

from mcpkit import App
from mcpkit.transports.http import HttpApp


class Tools:
    """An App whose tools report, through events, whether they started and were cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.release = threading.Event()
        self.thread_done = threading.Event()
        self.app = App("cancel-test", version="1.0.0")
        tools = self

        @self.app.tool
        async def slow(seconds: float) -> str:
            """Sleep, recording a cancellation."""
            tools.started.set()
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                tools.cancelled.set()
                raise
            return "slept"

        @self.app.tool
        async def stubborn() -> str:
            """Swallow the cancellation and answer anyway."""
            tools.started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                tools.cancelled.set()
            return "ignored the cancellation"

        @self.app.tool
        def blocking() -> str:
            """A sync tool that holds its worker thread until released."""
            tools.started_threadsafe()
            tools.release.wait(TIMEOUT)
            tools.thread_done.set()
            return "released"

        @self.app.tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        self.loop = asyncio.get_running_loop()

    def started_threadsafe(self) -> None:
        self.loop.call_soon_threadsafe(self.started.set)


def call(name: str, arguments: dict[str, Any], request_id: int = 1) -> Request:
    """One ``tools/call`` POST, driven by hand (``close()`` is the client hanging up)."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return Request("POST", message, {"mcp-protocol-version": "2025-11-25"})


def run(test: Callable[[Tools, HttpApp], Awaitable[None]], *, json_response: bool = True) -> None:
    async def main() -> None:
        tools = Tools()
        asgi = tools.app.asgi(stateless=True, json_response=json_response)
        try:
            await asyncio.wait_for(test(tools, asgi), TIMEOUT)
        finally:
            tools.release.set()

    asyncio.run(main())


async def leftovers(before: set[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    """The tasks started since ``before`` (other than this one) still pending a few loop turns
    later."""
    for _ in range(5):
        await asyncio.sleep(0)
    return asyncio.all_tasks() - before - {asyncio.current_task()}


async def cancelling_after(exchange: Request, asgi: HttpApp) -> int:
    """Serve ``exchange`` in this task; its pending cancellations afterwards (3.11+)."""
    await exchange.serve(asgi)
    task = asyncio.current_task()
    assert task is not None
    if sys.version_info >= (3, 11):
        return task.cancelling()
    return 0


@pytest.mark.parametrize("json_response", [True, False])
@pytest.mark.parametrize("watched", [False, True])
def test_a_disconnect_mid_call_cancels_it_and_nothing_is_answered(
    json_response: bool, watched: bool
) -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        before = asyncio.all_tasks()
        exchange = call("slow", {"seconds": 30})
        serving = asyncio.ensure_future(cancelling_after(exchange, asgi))
        await tools.started.wait()
        if watched:  # before and after the disconnect watch starts
            await exchange.watched.wait()
        exchange.close()
        assert await serving == 0  # returns, the request's task not left cancelling
        assert tools.cancelled.is_set()
        assert exchange.sent == []
        assert await leftovers(before) == set()

    run(test, json_response=json_response)


def test_a_client_gone_before_the_call_starts_still_cancels_it() -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        exchange = call("slow", {"seconds": 30})
        exchange.close()  # already gone: a disconnect waits in receive until read
        await exchange.serve(asgi)
        assert tools.started.is_set()
        assert tools.cancelled.is_set()
        assert exchange.sent == []

    run(test)


def test_a_call_that_swallows_the_cancellation_is_still_not_answered() -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        exchange = call("stubborn", {})
        serving = asyncio.ensure_future(cancelling_after(exchange, asgi))
        await tools.started.wait()
        exchange.close()
        assert await serving == 0
        assert tools.cancelled.is_set()
        assert exchange.sent == []

    run(test)


def test_a_disconnect_during_a_sync_call_ends_the_request_without_waiting() -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        exchange = call("blocking", {})
        serving = asyncio.ensure_future(exchange.serve(asgi))
        await tools.started.wait()
        exchange.close()
        await serving  # the worker thread is still held: the request did not wait for it
        assert not tools.thread_done.is_set()
        assert exchange.sent == []
        tools.release.set()
        assert await asyncio.get_running_loop().run_in_executor(
            None, tools.thread_done.wait, TIMEOUT
        )

    run(test)


def test_a_cancellation_from_outside_propagates_and_cancels_the_call() -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        before = asyncio.all_tasks()
        exchange = call("slow", {"seconds": 30})
        serving = asyncio.ensure_future(exchange.serve(asgi))
        await tools.started.wait()
        await exchange.watched.wait()  # the disconnect watch is running too
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        assert tools.cancelled.is_set()
        assert exchange.sent == []
        assert await leftovers(before) == set()

    run(test)


@pytest.mark.parametrize("tool", ["add", "slow"])
def test_answered_calls_leave_no_watcher_behind(tool: str) -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        before = asyncio.all_tasks()
        arguments = {"a": 1, "b": 2} if tool == "add" else {"seconds": 0.05}
        exchange = call(tool, arguments, request_id=7)
        assert await cancelling_after(exchange, asgi) == 0
        assert [m["type"] for m in exchange.sent] == ["http.response.start", "http.response.body"]
        assert exchange.sent[0]["status"] == 200
        answer = json.loads(exchange.sent[1]["body"])
        assert answer["id"] == 7
        if tool == "add":
            assert answer["result"]["structuredContent"] == {"result": 3}
        else:
            assert answer["result"]["content"] == [{"type": "text", "text": "slept"}]
        assert not tools.cancelled.is_set()
        assert await leftovers(before) == set()

    run(test)


def test_an_answered_request_is_freed_at_once_not_at_the_next_disconnect_sweep() -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        exchange = call("add", {"a": 1, "b": 2})
        await exchange.serve(asgi)
        assert exchange.sent[0]["status"] == 200
        served = weakref.ref(exchange)
        del exchange
        assert served() is None  # the disconnect watches hold nothing of a finished request

    run(test)


SERVING: contextvars.ContextVar[str] = contextvars.ContextVar("serving", default="none")


class Recorded(Request):
    """A request whose ``receive`` notes which request's context each read runs in."""

    def __init__(self, name: str, seconds: float) -> None:
        params = {"name": "slow", "arguments": {"seconds": seconds}}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        super().__init__("POST", message, {"mcp-protocol-version": "2025-11-25"})
        self.name = name
        self.contexts: list[str] = []

    async def _receive(self) -> dict[str, Any]:
        self.contexts.append(SERVING.get())
        return await super()._receive()

    async def serve_as_itself(self, asgi: HttpApp) -> None:
        SERVING.set(self.name)  # in this request's own task
        await self.serve(asgi)


def test_each_disconnect_watch_reads_in_its_own_requests_context() -> None:
    """The watches share one timer per loop, yet each watcher runs in its request's context
    (what a middleware or tracer set for that request), never the first request's."""

    async def test(tools: Tools, asgi: HttpApp) -> None:
        quick = Recorded("quick", 0)
        watched = Recorded("watched", 30)
        await asyncio.ensure_future(quick.serve_as_itself(asgi))  # arms the loop's sweeps
        serving = asyncio.ensure_future(watched.serve_as_itself(asgi))
        await watched.watched.wait()  # its watcher reads past the body
        watched.close()
        await serving
        assert quick.contexts == ["quick"]
        assert watched.contexts == ["watched", "watched"]  # the body, then the disconnect
        assert tools.cancelled.is_set()

    run(test)


def test_requests_without_a_current_task_are_still_served() -> None:
    async def test(tools: Tools, asgi: HttpApp) -> None:
        exchange = call("add", {"a": 2, "b": 3})
        # a coroutine driven by a bare callback chain rather than a task (no current task),
        # every step in one context as a task would
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        coroutine = exchange.serve(asgi)
        context = contextvars.copy_context()

        def step() -> None:
            assert asyncio.current_task() is None
            try:
                yielded = context.run(coroutine.send, None)
            except StopIteration:
                done.set_result(None)
                return
            yielded._asyncio_future_blocking = False
            yielded.add_done_callback(lambda _: step())

        asyncio.get_running_loop().call_soon(step)
        await done
        assert json.loads(exchange.sent[1]["body"])["result"]["structuredContent"] == {"result": 5}

    run(test)


def test_no_member_of_a_cancelled_stateless_batch_starts_after_its_request_returned() -> None:
    """A 2025-03-26 batch outside a session, 64 members at a time: when the client hangs up,
    members that swallow their cancellation must not go on starting the rest of the batch."""

    async def scenario() -> tuple[int, int, int]:
        app = App("batch-cancel", version="1.0.0")
        started = asyncio.Event()
        counted = 0

        @app.tool
        async def slow() -> str:
            """Cancelled like most calls."""
            started.set()
            await asyncio.sleep(30)
            return "slept"

        @app.tool
        async def stubborn() -> str:
            """Swallows its cancellation."""
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(30)
            return "ignored"

        @app.tool
        async def count() -> int:
            nonlocal counted
            counted += 1
            return counted

        def member(request_id: int, name: str) -> dict[str, Any]:
            params = {"name": name, "arguments": {}}
            return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

        batch = [member(0, "slow")] + [member(i, "stubborn") for i in range(1, 64)]
        batch += [member(i, "count") for i in range(64, 1000)]
        asgi = app.asgi(stateless=True, json_response=True)
        request = Request("POST", batch, {"mcp-protocol-version": "2025-03-26"})
        serving = asyncio.ensure_future(request.serve(asgi))
        await asyncio.wait_for(started.wait(), TIMEOUT)
        await asyncio.sleep(0.05)  # every stubborn member waits; the disconnect is watched
        request.close()  # the client hangs up
        await asyncio.wait_for(serving, TIMEOUT)
        at_return = counted
        await asyncio.sleep(0.2)
        return at_return, counted, len(request.sent)

    at_return, later, sent = asyncio.run(scenario())
    assert sent == 0  # nobody left to answer
    assert later == at_return, f"{later - at_return} members started after the request returned"
