"""Over HTTP, a POST whose tool exits, interrupts or returns what JSON cannot carry gets that
call's own answer, not a plain-text 500 (or one with ``id: null``), and never ``NaN``.

In process over ASGI, without a lifespan (the app starts on its first request), in the three
ways a call is answered: stateless JSON, a session's JSON, a session's SSE stream. The same
faults through the in-memory client: ``test_answers.py``.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
from collections.abc import MutableMapping
from typing import Any

import pytest

from mcpkit import App, Context, ToolResult

TIMEOUT = 5.0
VERSION = "2025-11-25"

app = App("http-faults", "1")


@app.tool
def add(a: int, b: int) -> int:
    return a + b


@app.tool
def leave() -> str:
    sys.exit(3)


@app.tool
async def interrupt(ctx: Context) -> str:
    await ctx.report_progress(1)  # on an SSE stream, the answer follows this event
    raise KeyboardInterrupt


@app.tool
async def opaque(ctx: Context) -> ToolResult:
    await ctx.report_progress(1)
    return ToolResult(structured={"owner": object()})


@app.tool
async def mean(ctx: Context) -> float:
    await ctx.report_progress(1)
    return math.nan


@app.resource("faults://exit")
def exits() -> str:
    sys.exit(4)


def strict_json(text: str | bytes) -> Any:
    """What a strict client reads: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


class Post:
    """One POST to the ASGI app, driven by hand; the client never disconnects."""

    def __init__(self, message: dict[str, Any], headers: dict[str, str]) -> None:
        self.body = json.dumps(message).encode()
        self.headers = {
            "host": "127.0.0.1:8000",
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
            "content-length": str(len(self.body)),
            **headers,
        }
        self.read = False
        self.status = 0
        self.response_headers: dict[str, str] = {}
        self.chunks: list[bytes] = []

    async def receive(self) -> dict[str, Any]:
        if not self.read:
            self.read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await asyncio.Event().wait()  # still connected
        raise AssertionError("unreachable")

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.response_headers = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            self.chunks.append(message.get("body", b""))

    async def to(self, asgi: Any) -> Post:
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "root_path": "",
            "scheme": "http",
            "headers": [(k.encode(), v.encode()) for k, v in self.headers.items()],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        await asyncio.wait_for(asgi(scope, self.receive, self.send), TIMEOUT)
        return self

    def answer(self) -> Any:
        """The JSON-RPC answer: the JSON body, or the last SSE event's data."""
        body = b"".join(self.chunks)
        if self.response_headers.get("content-type") != "text/event-stream":
            return strict_json(body)
        data = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
        return strict_json(data[-1])


MODES = ["stateless", "session-json", "session-sse"]
STREAMING = {"interrupt", "opaque", "mean"}  # they report progress: the answer is streamed


async def connect(mode: str) -> tuple[Any, dict[str, str]]:
    """The ASGI app for ``mode`` and the headers a call carries there."""
    asgi = app.asgi(stateless=mode == "stateless", json_response=mode != "session-sse")
    if mode == "stateless":
        return asgi, {}
    init = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t"}}
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
    opened = await Post(message, {}).to(asgi)
    return asgi, {"mcp-session-id": opened.response_headers["mcp-session-id"]}


def call(request_id: int, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}, "_meta": {"progressToken": "p"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def exchange(mode: str, message: dict[str, Any]) -> tuple[int, Any, Any]:
    """``message``, then ``add``: the first's status and answer, and the second's answer."""

    async def run() -> tuple[int, Any, Any]:
        asgi, headers = await connect(mode)
        first = await Post(message, headers).to(asgi)
        second = await Post(call(9, "add", {"a": 1, "b": 2}), headers).to(asgi)
        streamed = first.response_headers["content-type"] == "text/event-stream"
        assert streamed is (mode == "session-sse" and message["params"].get("name") in STREAMING)
        return first.status, first.answer(), second.answer()

    try:
        return asyncio.run(run())
    except BaseException as exc:  # a regression fails the test, not the test run
        raise AssertionError(f"{type(exc).__name__} escaped the app") from exc


ADDED = {
    "jsonrpc": "2.0",
    "id": 9,
    "result": {
        "content": [{"type": "text", "text": '{"result":3}'}],
        "structuredContent": {"result": 3},
        "isError": False,
    },
}


def masked(answer: Any, tool: str) -> None:
    text = answer["result"]["content"][0]["text"]
    reference = text.rsplit("reference ", 1)[-1].rstrip(").")
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [
                {
                    "type": "text",
                    "text": f"Tool {tool!r} failed with an internal error (reference {reference}).",
                }
            ],
            "isError": True,
        },
    }


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["leave", "interrupt", "opaque"])
def test_a_tool_that_exits_or_returns_what_json_cannot_carry_answers_its_own_error(
    caplog: pytest.LogCaptureFixture, mode: str, tool: str
) -> None:
    caplog.set_level("CRITICAL", logger="mcpkit.server")
    status, answer, after = exchange(mode, call(1, tool))
    assert status == 200
    masked(answer, tool)
    assert after == ADDED


@pytest.mark.parametrize("mode", MODES)
def test_nan_from_a_tool_is_its_error_and_never_reaches_the_wire(
    caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    caplog.set_level("CRITICAL", logger="mcpkit.server")
    status, answer, after = exchange(mode, call(1, "mean"))
    assert status == 200
    text = "the tool returned a value JSON cannot carry: NaN at structuredContent.result"
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": text}], "isError": True},
    }
    assert after == ADDED


@pytest.mark.parametrize("mode", MODES)
def test_a_resource_that_exits_answers_internal_error_for_its_id(
    caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    caplog.set_level("CRITICAL", logger="mcpkit.server")
    read = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {"uri": "faults://exit"},
    }
    status, answer, after = exchange(mode, read)
    assert status == 200
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert after == ADDED
