"""Messages, runners and waits shared by the fault suites (``tests/test_faults*.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import faults_app
import pytest
from asgi_support import request
from http_support import sse_events
from stdio_support import Talk
from strict_json import parse_strict

from mcpkit.transports.http import HttpApp

TARGET = "tests/faults_app.py:app"
TIMEOUT = 10.0
VERSION = "2025-11-25"


def message(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    sent: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        sent["params"] = params
    return sent


def call(request_id: Any, tool: str, **params: Any) -> dict[str, Any]:
    params = {"name": tool, "arguments": params.pop("arguments", {}), **params}
    return message(request_id, "tools/call", params)


def ping(request_id: Any) -> dict[str, Any]:
    return message(request_id, "ping")


def cancel(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "test"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    """Run an async scenario; a fault that escapes and ends the loop fails the test (it must not
    reach pytest, which would stop the whole run on a KeyboardInterrupt)."""
    try:
        return asyncio.run(asyncio.wait_for(scenario(), TIMEOUT * 2))
    except (KeyboardInterrupt, SystemExit, GeneratorExit, faults_app.Custom) as exc:
        pytest.fail(f"{exc!r} escaped the server and ended the event loop")
    except asyncio.CancelledError:
        pytest.fail("a CancelledError escaped the server and ended the event loop")


async def open_session(asgi: HttpApp, version: str = VERSION) -> dict[str, str]:
    """``initialize`` an HTTP session; the headers its requests carry."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t"}}
    reply = await request(asgi, "POST", message(0, "initialize", params))
    headers = {"mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": version}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await request(asgi, "POST", note, headers)).status == 202
    return headers


def answers_in(body: bytes, content_type: str) -> list[Any]:
    """Every JSON-RPC message of a reply (JSON body or SSE events), parsed strictly."""
    if content_type.startswith("text/event-stream"):
        return [parse_strict(data) for _, data in sse_events(body) if data]
    return [parse_strict(body)] if body else []


async def started(ask: Callable[[Any], Awaitable[Any]], tool: str) -> Any:
    """Ask ``seen`` until ``tool`` has started (each question is a real request)."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    for n in range(100_000):
        seen = (await ask(call(f"seen-{tool}-{n}", "seen")))["result"]["structuredContent"]
        if tool in seen["started"]:
            return seen
        assert asyncio.get_running_loop().time() < deadline, f"{tool} never started"
        await asyncio.sleep(0)
    raise AssertionError(f"{tool} never started")


async def stdio_started(talk: Talk, tool: str) -> Any:
    return await started(talk.request, tool)


async def http_started(asgi: HttpApp, headers: dict[str, str], tool: str) -> Any:
    async def ask(sent: Any) -> Any:
        return (await request(asgi, "POST", sent, headers)).json

    return await started(ask, tool)
