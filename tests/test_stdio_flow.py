"""stdio flow control: a full house of requests still hears the client, and shutdown loses
nothing already written (serve_stdio over real pipes, in process)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from stdio_support import serve_on_pipes

from mcpkit import App, Context
from mcpkit.protocol import jsonrpc
from mcpkit.transports.stdio import serve_stdio

pytestmark = pytest.mark.usefixtures("speedups")  # each test runs with and without them

TIMEOUT = 5.0

app = App("flow", "1")


@app.tool
async def ask(ctx: Context) -> str:
    """Waits for the user."""
    answer = await ctx.elicit("ok?", {"type": "object", "properties": {}})
    return answer.action


@app.tool
async def stall() -> str:
    """Never finishes on its own."""
    await asyncio.sleep(3600)
    return "never"


request_value: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "request_value", default=None
)


@app.tool
async def inspect_task(n: int) -> dict[str, Any]:
    """Reports what an async tool sees of its task (its first step runs as the request is read)."""
    before = asyncio.current_task()
    inherited = request_value.get()
    request_value.set(n)
    timeout = getattr(asyncio, "timeout", None)
    task_group = getattr(asyncio, "TaskGroup", None)
    children: list[int] = []
    if timeout is not None and task_group is not None:  # Python 3.11+
        async with timeout(5), task_group() as group:
            tasks = [group.create_task(asyncio.sleep(0, n + k)) for k in (1, 2)]
        children = [t.result() for t in tasks]
    await asyncio.sleep(0)
    return {
        "same task": before is asyncio.current_task() and before is not None,
        "inherited": inherited,
        "kept": request_value.get(),
        "children": children,
    }


@app.tool
async def add(a: int, b: int) -> int:
    """Adds without suspending: answered in its first step."""
    return a + b


@app.tool
def big() -> str:
    """About a megabyte of text."""
    return "x" * 1_000_000


runs: Counter[str] = Counter()


@app.tool
async def tally(tag: str) -> str:
    """Counts its runs per tag, after suspending once (a cancel can land meanwhile)."""
    await asyncio.sleep(0)
    runs[tag] += 1
    return tag


Scenario = Callable[[Callable[[Any], None], Callable[[], Awaitable[Any]]], Awaitable[None]]


async def talk(scenario: Scenario, max_in_flight: int) -> None:
    """Run ``scenario(send, receive)`` against a server on pipes, then close its stdin and
    require it to finish promptly."""
    async with serve_on_pipes(app, reader_limit=4 * 1024 * 1024, max_in_flight=max_in_flight) as (
        server,
        in_write,
        reader,
    ):
        to_server = os.fdopen(in_write, "wb", 0)

        def send(message: Any) -> None:
            """One message, or ``bytes`` written as they are (several lines in one write)."""
            raw = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
            to_server.write(raw)

        async def receive() -> Any:
            return json.loads(await asyncio.wait_for(reader.readline(), TIMEOUT))

        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}},
            }
        )
        assert (await receive())["id"] == 0
        await scenario(send, receive)
        to_server.close()
        await asyncio.wait_for(server, TIMEOUT)


def call(request_id: int, tool: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {}},
    }


def tally_call(request_id: Any, tag: str) -> dict[str, Any]:
    return {**call(request_id, "tally"), "params": {"name": "tally", "arguments": {"tag": tag}}}


def tallied(request_id: Any, tag: str) -> dict[str, Any]:
    """The answer to ``tally_call(request_id, tag)``."""
    result = {"content": [{"type": "text", "text": tag}], "isError": False}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def cancel(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }


def lines(*messages: Any) -> bytes:
    """Messages (or raw ``bytes`` lines) as one write: the server reads them together."""
    return b"".join(
        (m if isinstance(m, bytes) else json.dumps(m).encode()) + b"\n" for m in messages
    )


PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
PONG = {"jsonrpc": "2.0", "id": "ping", "result": {}}


def test_answers_to_server_questions_get_in_when_every_slot_is_taken() -> None:
    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(call(1, "ask"))
        send(call(2, "ask"))
        asked = [await receive(), await receive()]
        assert [m["method"] for m in asked] == ["elicitation/create"] * 2
        for question in asked:
            send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
        answers = {
            m["id"]: m["result"]["content"][0]["text"] for m in (await receive(), await receive())
        }
        assert answers == {1: "decline", 2: "decline"}

    asyncio.run(talk(scenario, max_in_flight=2))


def test_cancellations_and_a_ping_get_in_when_every_slot_is_taken() -> None:
    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(call(1, "stall"))
        send(call(2, "stall"))
        send(call(3, "stall"))  # waits for a slot
        await asyncio.sleep(0.1)
        for request_id in (1, 2, 3):
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id},
                }
            )
        await asyncio.sleep(0.1)
        send(call(4, "stall"))
        send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
        assert await receive() == {"jsonrpc": "2.0", "id": 99, "result": {}}

    asyncio.run(talk(scenario, max_in_flight=2))


def test_a_large_answer_written_just_before_stdin_closes_arrives_whole() -> None:
    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(call(1, "big"))
        answer = await receive()
        assert len(answer["result"]["content"][0]["text"]) == 1_000_000

    asyncio.run(talk(scenario, max_in_flight=4))


def test_an_async_tool_sees_an_ordinary_task_of_its_own() -> None:
    """Its first step runs in the turn that read the request, yet current_task(), timeouts,
    task groups and context variables behave as in any task, and nothing leaks from one
    request into the next."""

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        for n in (10, 20, 30):
            send(
                {
                    **call(n, "inspect_task"),
                    "params": {"name": "inspect_task", "arguments": {"n": n}},
                }
            )
            answer = await receive()
            assert answer["id"] == n
            children = [n + 1, n + 2] if sys.version_info >= (3, 11) else []
            assert answer["result"]["structuredContent"] == {
                "same task": True,
                "inherited": None,
                "kept": n,
                "children": children,
            }

    asyncio.run(talk(scenario, max_in_flight=4))


def test_a_flood_in_one_write_is_answered_once_per_id() -> None:
    """Requests read together: the first runs at once, the rest in ordinary tasks; each id is
    answered exactly once, with its own sum."""
    count = 300

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        requests = [
            {**call(i, "add"), "params": {"name": "add", "arguments": {"a": i, "b": 1}}}
            for i in range(1, count + 1)
        ]
        send(b"".join(json.dumps(r).encode() + b"\n" for r in requests))  # read together
        answers = [await receive() for _ in range(count)]
        sums = {m["id"]: m["result"]["structuredContent"]["result"] for m in answers}
        assert sums == {i: i + 1 for i in range(1, count + 1)}

    asyncio.run(talk(scenario, max_in_flight=16))


def test_serve_stdio_cancelled_from_outside_leaves_no_task_behind() -> None:
    async def main() -> list[asyncio.Task[Any]]:
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        to_server = os.fdopen(in_write, "wb", 0)
        to_server.write(
            json.dumps(
                call(1, "add") | {"params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
            ).encode()
            + b"\n"
        )
        serving = serve_stdio(app, os.fdopen(in_read, "rb", 0), os.fdopen(out_write, "wb", 0))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(serving, 0.2)
        await asyncio.sleep(0.05)
        to_server.close()
        os.close(out_read)
        current = asyncio.current_task()
        return [t for t in asyncio.all_tasks() if t is not current and not t.done()]

    assert asyncio.run(main()) == []


# ----------------------------------------------------------- one read, each message taken once


def test_an_array_and_a_cancel_read_together_are_each_taken_once() -> None:
    """An array line and a cancel in one read used to stop the read half way and leave the
    buffer untrimmed: later reads routed the same lines again (tools re-ran, nothing new was
    answered)."""
    runs.clear()

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(lines(tally_call(1, "a"), [{"jsonrpc": "2.0", "id": 2, "method": "ping"}], cancel(9)))
        first = [await receive(), await receive()]
        send(lines(tally_call(3, "b"), PING))
        then = [await receive(), await receive()]
        assert sorted(first, key=json.dumps) == sorted(
            [
                tallied(1, "a"),
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32600,
                        "message": "Invalid Request: batches exist only in protocol version "
                        "2025-03-26",
                    },
                },
            ],
            key=json.dumps,
        )
        assert sorted(then, key=json.dumps) == sorted([tallied(3, "b"), PONG], key=json.dumps)
        assert runs == {"a": 1, "b": 1}

    asyncio.run(talk(scenario, max_in_flight=4))


def test_a_cancel_without_a_request_id_drops_nothing() -> None:
    """It used to match a waiting request whose id is null, whose -32600 was then never sent."""

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        no_id: dict[str, Any] = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {},
        }
        send(lines({"jsonrpc": "2.0", "id": None, "method": "ping"}, no_id, PING))
        assert [await receive(), await receive()] == [
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
            PONG,
        ]

    asyncio.run(talk(scenario, max_in_flight=4))


def test_a_message_that_fails_to_be_taken_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong taking one line (here: decoding it raises) is contained to that line:
    it gets -32603 with id null, the lines around it are answered once, later reads work."""
    decode = jsonrpc.decode

    def faulty(data: bytes | str, limits: jsonrpc.Limits = jsonrpc.DEFAULT_LIMITS) -> Any:
        if b"boom" in bytes(data if isinstance(data, bytes) else data.encode()):
            raise RuntimeError("boom")
        return decode(data, limits)

    monkeypatch.setattr(jsonrpc, "decode", faulty)
    runs.clear()

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        boom = {"jsonrpc": "2.0", "id": "boom", "method": "ping"}
        send(lines(tally_call(1, "a"), boom, tally_call(2, "b")))
        first = [await receive() for _ in range(3)]
        send(lines(tally_call(3, "c"), PING))
        then = [await receive(), await receive()]
        internal = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32603, "message": "Internal error"},
        }
        assert sorted(first, key=json.dumps) == sorted(
            [tallied(1, "a"), internal, tallied(2, "b")], key=json.dumps
        )
        assert sorted(then, key=json.dumps) == sorted([tallied(3, "c"), PONG], key=json.dumps)
        assert runs == {"a": 1, "b": 1, "c": 1}

    asyncio.run(talk(scenario, max_in_flight=4))


# ------------------------------------------------------------------------ cancellation matching


def test_a_cancel_names_a_waiting_request_by_type_and_value() -> None:
    """``true`` is not request 1, ``7.0`` and ``"7"`` are not request 7; a cancel naming a
    request read before it (8) still keeps it from ever running."""
    runs.clear()

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(
            lines(
                tally_call(7, "seven"),
                tally_call(1, "one"),
                tally_call(8, "eight"),
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7.0}}',
                cancel(True),
                cancel("7"),
                cancel(8),
            )
        )
        answers = [await receive(), await receive()]
        send(PING)
        assert await receive() == PONG  # nothing for 8
        assert sorted(answers, key=json.dumps) == sorted(
            [tallied(7, "seven"), tallied(1, "one")], key=json.dumps
        )
        assert runs == {"seven": 1, "one": 1}

    asyncio.run(talk(scenario, max_in_flight=1))


def test_a_cancel_read_before_a_request_does_not_cancel_it() -> None:
    """Messages take effect in the order they were read: a cancel naming an id no request has
    yet is ignored, even when that request follows in the same read."""
    runs.clear()

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(lines(cancel(5), tally_call(5, "five")))
        assert await receive() == tallied(5, "five")
        assert runs == {"five": 1}

    asyncio.run(talk(scenario, max_in_flight=4))


def test_a_backlog_past_64_kib_is_answered_once_per_id_and_cancellable() -> None:
    """Requests waiting past 64 KiB wait as their lines (decoded again when they start): each
    is still answered exactly once, and a cancel still keeps one from ever running."""
    runs.clear()
    count, cancelled = 1200, {7, 700, 1199}
    flood = [tally_call(i, f"tag-{i:04}-" + "x" * 60) for i in range(1, count + 1)]

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(call(0, "ask"))  # takes the only slot until the question is answered
        question = await receive()
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
        # Read in this order: the flood waits, the cancels drop theirs, then the answer frees
        # the slot. More than a pipe holds: written from a thread.
        blob = lines(*flood, *(cancel(i) for i in sorted(cancelled)), answer)
        assert len(blob) > 2 * 64 * 1024
        await asyncio.to_thread(send, blob)
        answers = [await receive() for _ in range(1 + count - len(cancelled))]
        send(PING)
        assert await receive() == PONG  # nothing for the cancelled ones
        by_id = Counter(answer["id"] for answer in answers)
        assert by_id == Counter([0, *(i for i in range(1, count + 1) if i not in cancelled)])
        expected = [tallied(i, flood[i - 1]["params"]["arguments"]["tag"]) for i in by_id if i]
        assert sorted([a for a in answers if a["id"]], key=lambda a: a["id"]) == expected
        assert sum(runs.values()) == count - len(cancelled)

    asyncio.run(talk(scenario, max_in_flight=1))


def test_a_cancel_finds_a_backlogged_request_by_a_string_id_escaped_or_not() -> None:
    """Past 64 KiB a waiting request keeps only its line: a cancel naming a string id finds it
    whether the line writes the id as plain text or with escapes (``"\\u0061-500"`` is
    ``"a-500"``), and never a request whose id only looks alike (``"a-5000"``, ``5``)."""
    runs.clear()
    count = 1200
    flood = [tally_call(f"a-{i}", f"tag-{i:04}-" + "x" * 60) for i in range(1, count + 1)]
    escaped = json.dumps(tally_call("a-500", "escaped")).encode().replace(b'"a-', b'"\\u0061-')
    lookalike = tally_call(5, "five")

    async def scenario(send: Callable[[Any], None], receive: Callable[[], Awaitable[Any]]) -> None:
        send(call(0, "ask"))  # takes the only slot until the question is answered
        question = await receive()
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
        blob = lines(*flood, escaped, lookalike, cancel("a-7"), cancel("a-500"), answer)
        assert len(blob) > 2 * 64 * 1024
        await asyncio.to_thread(send, blob)
        # ask, the flood but a-7 and a-500 (both lines of it), the lookalike
        answers = [await receive() for _ in range(1 + count - 2 + 1)]
        send(PING)
        assert await receive() == PONG  # nothing for the cancelled ones
        by_id = Counter(answer["id"] for answer in answers)
        kept = [f"a-{i}" for i in range(1, count + 1) if i not in (7, 500)]
        assert by_id == Counter([0, *kept, 5])
        assert runs["five"] == 1
        assert "escaped" not in runs
        assert "tag-0007-" + "x" * 60 not in runs

    asyncio.run(talk(scenario, max_in_flight=1))
