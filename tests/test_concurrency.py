"""Requests run concurrently; cancellation; backpressure (what a tool reports through its
Context, progress and logging, is in ``test_context.py``)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Coroutine
from typing import Any

import pytest

from mcpkit import App
from mcpkit.protocol.connection import discard
from mcpkit.protocol.server import Server, Session
from mcpkit.testing import Client
from mcpkit.transports.stdio import serve_stdio

V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
META = {V: "2026-07-28", CAPS: {}}
TIMEOUT = 5.0


class Gate:
    """What the slow tools wait on, and what they saw."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.running = 0
        self.peak = 0
        self.cancelled: list[str] = []


gate = Gate()
app = App("concurrent", "1.0")


@app.tool
async def slow(tag: str) -> str:
    """Wait until released."""
    gate.running += 1
    gate.peak = max(gate.peak, gate.running)
    gate.started.set()
    try:
        await gate.release.wait()
    except asyncio.CancelledError:
        gate.cancelled.append(tag)
        raise
    finally:
        gate.running -= 1
    return f"slow {tag}"


@app.tool
def fast() -> str:
    """Answer at once."""
    return "fast"


def req(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(request_id: Any, name: str, arguments: Any = None, **params: Any) -> dict[str, Any]:
    return req(request_id, "tools/call", {"name": name, "arguments": arguments or {}, **params})


def cancel(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "user"},
    }


def text(response: dict[str, Any]) -> str:
    value: str = response["result"]["content"][0]["text"]
    return value


def run(coroutine: Any) -> Any:
    global gate
    gate = Gate()
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


# ------------------------------------------------------------------------------ concurrency


def test_a_slow_tool_delays_neither_ping_nor_another_call() -> None:
    async def scenario() -> list[Any]:
        async with Client(app, protocol_version="2025-06-18") as client:
            slow_call = asyncio.create_task(client.send(call(1, "slow", {"tag": "a"})))
            await gate.started.wait()
            pong = await client.send(req(2, "ping"))
            quick = await client.send(call(3, "fast"))
            assert not slow_call.done()
            gate.release.set()
            return [pong, quick, await slow_call]

    pong, quick, slow_answer = run(scenario())
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert text(quick) == "fast"
    assert (slow_answer["id"], text(slow_answer)) == (1, "slow a")


def test_cancellation_really_cancels_and_sends_no_response() -> None:
    async def scenario() -> tuple[Any, Any, list[str]]:
        async with Client(app, protocol_version="2025-11-25") as client:
            slow_call = asyncio.create_task(client.send(call("c-1", "slow", {"tag": "x"})))
            await gate.started.wait()
            assert await client.send(cancel("c-1")) is None
            answer = await slow_call
            after = await client.send(req(2, "ping"))
            return answer, after, gate.cancelled

    answer, after, cancelled = run(scenario())
    assert answer is None  # no response at all for the cancelled request
    assert cancelled == ["x"]  # the tool itself saw CancelledError
    assert after == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_cancellation_in_the_stateless_era() -> None:
    async def scenario() -> tuple[Any, list[str]]:
        async with Client(app, protocol_version="2026-07-28") as client:
            slow_call = asyncio.create_task(client.send(call(7, "slow", {"tag": "s"}, _meta=META)))
            await gate.started.wait()
            await client.send(cancel(7))
            return await slow_call, gate.cancelled

    assert run(scenario()) == (None, ["s"])


@pytest.mark.parametrize("request_id", [999, "nope", None, 1.5, {"x": 1}, True, 1.0, "1"])
def test_unknown_or_invalid_cancel_ids_are_ignored(request_id: Any) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        async with Client(app, protocol_version="2025-06-18") as client:
            slow_call = asyncio.create_task(client.send(call(1, "slow", {"tag": "k"})))
            await gate.started.wait()
            ignored = await client.send(cancel(request_id))
            gate.release.set()
            return ignored, await slow_call, await client.send(call(1, "fast"))

    ignored, answer, again = run(scenario())
    assert ignored is None
    assert text(answer) == "slow k"
    assert text(again) == "fast"


def test_cancelling_a_finished_request_is_ignored() -> None:
    async def scenario() -> tuple[Any, Any]:
        async with Client(app, protocol_version="2025-06-18") as client:
            first = await client.send(call(1, "fast"))
            await client.send(cancel(1))
            return first, await client.send(call(1, "fast"))

    first, second = run(scenario())
    assert text(first) == text(second) == "fast"


# ----------------------------------------------------------------------------- backpressure


async def over_a_pipe(
    data: bytes, lines: int, max_in_flight: int, running: Coroutine[Any, Any, None]
) -> tuple[int, list[bytes]]:
    """serve_stdio over real pipes: write ``data``, wait for ``running``, then note the peak of
    slow calls, release them and read ``lines`` lines. Returns the peak and the lines."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin, stdout = os.fdopen(in_read, "rb", 0), os.fdopen(out_write, "wb", 0)
    server = asyncio.create_task(serve_stdio(app, stdin, stdout, max_in_flight=max_in_flight))
    os.write(in_write, data)
    await running
    held = gate.peak
    gate.release.set()
    reader = os.fdopen(out_read, "rb", 0)
    loop = asyncio.get_running_loop()
    buffer = b""
    while buffer.count(b"\n") < lines:
        buffer += await loop.run_in_executor(None, reader.read, 65536)
    os.close(in_write)
    await server
    reader.close()
    return held, buffer.splitlines()


def test_at_most_max_in_flight_calls_run_and_input_waits() -> None:
    """Over a real pipe: with max_in_flight=2, the third call starts only when one finishes."""

    async def started() -> None:
        await gate.started.wait()
        for _ in range(20):
            await asyncio.sleep(0.01)

    async def scenario() -> tuple[int, int, list[str]]:
        lines = [
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'
        ]
        lines += [
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"tag":"%d"}}}'
            % (i, i)
            for i in range(1, 7)
        ]
        held, out = await over_a_pipe(b"\n".join(lines) + b"\n", 7, 2, started())
        got = sorted(line.decode() for line in out if b'"slow ' in line)
        return held, gate.peak, got

    held, peak, got = run(scenario())
    assert held == 2  # two calls ran; the other four waited for a free slot
    assert peak <= 2
    assert len(got) == 6


def wait_running(count: int) -> Coroutine[Any, Any, None]:
    """Until ``count`` slow calls run at once (loop turns, no clock), then a few turns more, so
    that any call that was going to start alongside them has started."""

    async def waiting() -> None:
        while gate.running < count:
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)

    return waiting()


def test_a_batch_starts_in_whatever_room_there_is_over_stdio() -> None:
    """Found by tests/test_fuzz_stdio.py: a batch waited for all of its slots (two of two here)
    while a long request held one, and everything read after it waited for ever. It runs as
    wide as the room there is instead."""

    async def scenario() -> tuple[int, list[Any]]:
        init = req(0, "initialize", {"protocolVersion": "2025-03-26"})
        first = call(1, "slow", {"tag": "1"})
        batch = [call(i, "slow", {"tag": str(i)}) for i in (2, 3)]
        data = b"".join(json.dumps(m).encode() + b"\n" for m in (init, first, batch))
        held, out = await asyncio.wait_for(over_a_pipe(data, 3, 2, wait_running(2)), 30)
        return held, [json.loads(line) for line in out[1:]]

    held, (one, two) = run(scenario())
    assert (held, gate.peak) == (2, 2)
    batch, single = (one, two) if isinstance(one, list) else (two, one)
    answers = [*batch, single]
    assert sorted((a["id"], text(a)) for a in answers) == [(i, f"slow {i}") for i in (1, 2, 3)]


def test_a_batch_runs_at_most_max_in_flight_members_at_once_in_memory() -> None:
    """Each member counts: a 100-call batch runs 64 at a time (the default), all answered."""

    async def scenario() -> tuple[int, Any]:
        async with Client(app, protocol_version="2025-03-26") as client:
            batch = [call(i, "slow", {"tag": str(i)}) for i in range(100)]
            answering = asyncio.create_task(client.send(batch))
            await wait_running(64)
            held = gate.peak
            gate.release.set()
            return held, await answering

    held, answers = run(scenario())
    assert held == 64
    assert gate.peak == 64
    assert sorted((a["id"], text(a)) for a in answers) == sorted(
        (i, f"slow {i}") for i in range(100)
    )


def test_a_batch_over_stdio_counts_each_member_against_max_in_flight() -> None:
    """Over a real pipe with max_in_flight=2: a 5-call batch and a call after it never run more
    than two at once."""

    async def scenario() -> tuple[int, list[Any]]:
        init = req(0, "initialize", {"protocolVersion": "2025-03-26"})
        batch = [call(i, "slow", {"tag": str(i)}) for i in range(1, 6)]
        after = call(6, "slow", {"tag": "6"})
        data = b"".join(json.dumps(m).encode() + b"\n" for m in (init, batch, after))
        held, out = await over_a_pipe(data, 3, 2, wait_running(2))
        return held, [json.loads(line) for line in out[1:]]

    held, (first, second) = run(scenario())
    assert (held, gate.peak) == (2, 2)
    batch, single = (first, second) if isinstance(first, list) else (second, first)
    answers = [*batch, single]
    assert sorted((a["id"], text(a)) for a in answers) == [(i, f"slow {i}") for i in range(1, 7)]


def test_a_session_used_from_another_loop_cancels_its_own_request_only() -> None:
    """A session made on one loop (thread A) and used on another (thread B) while A runs a task
    of its own: cancelling B's request cancels that request, never A's task."""
    app = App("loops", version="1.0.0")
    started = threading.Event()

    @app.tool
    async def slow() -> str:
        started.set()
        await asyncio.sleep(0.5)
        return "slept"

    server = Server(app)
    loop_a = asyncio.new_event_loop()
    thread = threading.Thread(target=loop_a.run_forever, daemon=True)
    thread.start()

    async def make() -> Session:
        return server.session(discard, transport="memory")

    session = asyncio.run_coroutine_threadsafe(make(), loop_a).result()
    release = threading.Event()

    async def busy() -> None:  # loop A's own task, running while B's request does
        release.wait(5)

    blocker = asyncio.run_coroutine_threadsafe(busy(), loop_a)

    async def on_loop_b() -> Any:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}}
        await session.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        params = {"name": "slow", "arguments": {}}
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
        answering = asyncio.ensure_future(session.handle(call))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        session.cancel(7)  # what notifications/cancelled for request 7 does
        try:
            return await answering
        finally:
            release.set()

    try:
        response = asyncio.run(on_loop_b())
    finally:
        release.set()
        blocker.result(5)  # raises CancelledError if A's task was cancelled instead
        loop_a.call_soon_threadsafe(loop_a.stop)
        thread.join(5)
        loop_a.close()
    assert response is None  # cancelled by the client: no answer
