"""A process that only serves stdio (``mcpkit run``) pauses the garbage collector from loading
the app until the warm-up, then moves its warmed-up heap out of the collector's sight
(``gc.freeze``); ``serve_stdio`` in someone else's process does neither."""

from __future__ import annotations

import asyncio
import gc
import json
import os
from typing import Any

from freeze_app import app
from stdio_support import Talk, mcpkit_run, serve_on_pipes

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
}
LIST = {"jsonrpc": "2.0", "id": "list", "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {"name": "frozen"}}
COLLECTING = {
    "jsonrpc": "2.0",
    "id": "gc",
    "method": "tools/call",
    "params": {"name": "collecting"},
}


def answer(value: Any, id: str = "call") -> dict[str, Any]:
    text = json.dumps(
        {"result": value} if isinstance(value, bool) else value, separators=(",", ":")
    )
    result = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"result": value} if isinstance(value, bool) else value,
        "isError": False,
    }
    return {"jsonrpc": "2.0", "id": id, "result": result}


def test_mcpkit_run_freezes_the_heap_once_warmed_up() -> None:
    async def scenario() -> tuple[Any, int]:
        async with mcpkit_run("tests/freeze_app.py:app") as process:
            talk = Talk(process)
            await talk.initialize()
            await talk.request(LIST)  # the first answer past the handshake: warm-up starts
            called = await talk.request(CALL)
            code, _ = await talk.end()
            return called, code

    assert asyncio.run(scenario()) == (answer(True), 0)


def test_mcpkit_run_pauses_the_collector_from_loading_the_app_until_the_warm_up() -> None:
    async def scenario() -> tuple[Any, Any, int]:
        async with mcpkit_run("tests/freeze_app.py:app") as process:
            talk = Talk(process)
            await talk.initialize()
            await talk.request(LIST)  # the first answer past the handshake: warm-up starts
            frozen = await talk.request(CALL)  # a few loop turns: the warm-up is over
            called = await talk.request(COLLECTING)
            code, _ = await talk.end()
            return frozen, called, code

    loaded_and_now = {"loaded": False, "now": True}
    assert asyncio.run(scenario()) == (answer(True), answer(loaded_and_now, "gc"), 0)


def test_a_client_that_never_leaves_the_handshake_gets_the_collector_back_at_64_answers() -> None:
    async def scenario(handshakes: int) -> Any:
        async with mcpkit_run("tests/freeze_app.py:app") as process:
            talk = Talk(process)
            await talk.initialize()  # 1 answer (the initialized notification has none)
            for number in range(handshakes):  # each a refused second initialize
                refused = await talk.request({**INITIALIZE, "id": f"again-{number}"})
                assert "error" in refused
            called = await talk.request(COLLECTING)  # runs before its own answer is written
            await talk.end()
            return called

    assert asyncio.run(scenario(62)) == answer({"loaded": False, "now": False}, "gc")
    assert asyncio.run(scenario(63)) == answer({"loaded": False, "now": True}, "gc")


def test_serve_stdio_leaves_the_heap_of_its_process_alone() -> None:
    async def scenario() -> Any:
        async with serve_on_pipes(app) as (server, in_write, reader):
            with os.fdopen(in_write, "wb", 0) as to_server:
                for message in (INITIALIZE, LIST, CALL):
                    to_server.write(json.dumps(message).encode() + b"\n")
                    answered = json.loads(await asyncio.wait_for(reader.readline(), 10))
            await asyncio.wait_for(server, 10)
            return answered

    assert gc.get_freeze_count() == 0
    assert asyncio.run(scenario()) == answer(False)
    assert gc.get_freeze_count() == 0


def test_serve_stdio_leaves_the_collector_of_its_process_alone() -> None:
    async def scenario() -> Any:
        async with serve_on_pipes(app) as (server, in_write, reader):
            with os.fdopen(in_write, "wb", 0) as to_server:
                for message in (INITIALIZE, COLLECTING):
                    to_server.write(json.dumps(message).encode() + b"\n")
                    answered = json.loads(await asyncio.wait_for(reader.readline(), 10))
            await asyncio.wait_for(server, 10)
            return answered

    assert asyncio.run(scenario()) == answer({"loaded": True, "now": True}, "gc")
    assert gc.isenabled()
