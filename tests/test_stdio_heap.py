"""A process that only serves stdio (``mcpkit run``) moves its warmed-up heap out of the
garbage collector's sight (``gc.freeze``); ``serve_stdio`` in someone else's process does not."""

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


def answer(value: bool) -> dict[str, Any]:
    text = json.dumps({"result": value}, separators=(",", ":"))
    result = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"result": value},
        "isError": False,
    }
    return {"jsonrpc": "2.0", "id": "call", "result": result}


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
