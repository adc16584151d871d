"""What open HTTP connections cost mcpkit: memory per idle handshake-era session and per open
``subscriptions/listen`` stream, and the time to open them, ``count`` of each on loopback.

The server runs in session mode (no ``--stateless``, SSE answers); the sessions are opened one
after the other on one keep-alive connection (``initialize``, then
``notifications/initialized``) and left idle; the listen streams each hold a connection of
their own, open once their acknowledgement has arrived. Memory is the server's resident set
(``VmRSS``, Linux) before and after, divided by ``count``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.driver import PROTOCOL_VERSION
from harness.process import READ_TIMEOUT, BenchError
from harness.scenarios.http import (
    MODERN,
    MODERN_META,
    HttpServer,
    http_response,
    post_bytes,
    response_head,
)
from harness.specs import ServerSpec

_STATELESS_FLAGS = ("--stateless", "--json-response")


@dataclass
class OpenCosts:
    """Per session and per stream: resident memory (KiB) and time to open one (ms)."""

    session_kib: float
    session_ms: float
    stream_kib: float
    stream_ms: float


def open_costs(spec: ServerSpec, count: int) -> OpenCosts:
    """Open ``count`` idle sessions, then ``count`` listen streams, on ``spec``'s HTTP server
    in session mode; what each cost."""
    assert spec.http is not None
    argv = [arg for arg in spec.http if arg not in _STATELESS_FLAGS]
    server = HttpServer(spec, [*argv, "--max-sessions", str(count + 16)])
    try:
        return asyncio.run(_measure(server, count))
    except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as exc:
        raise server.fail(f"opening {count} sessions and streams: {exc!r}") from None
    finally:
        server.stop()
        server.stderr.close()


async def _measure(server: HttpServer, count: int) -> OpenCosts:
    reader, writer = await _ready(server)
    base = rss_kib(server.proc.pid)
    started = time.perf_counter()
    for number in range(count):
        await _open_session(server.port, reader, writer, number)
    session_s = time.perf_counter() - started
    with_sessions = rss_kib(server.proc.pid)
    started = time.perf_counter()
    streams = [await _open_stream(server.port, number) for number in range(count)]
    stream_s = time.perf_counter() - started
    with_streams = rss_kib(server.proc.pid)
    for stream in [writer, *streams]:
        stream.close()
    return OpenCosts(
        (with_sessions - base) / count,
        session_s * 1000 / count,
        (with_streams - with_sessions) / count,
        stream_s * 1000 / count,
    )


async def _ready(server: HttpServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A keep-alive connection to the server once it accepts them (one session opened on it,
    so what the first session costs once is not counted)."""
    deadline = time.monotonic() + READ_TIMEOUT
    while True:
        if server.proc.poll() is not None:
            raise server.fail(f"exited with code {server.proc.returncode}")
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise server.fail("not serving in time") from None
            await asyncio.sleep(0.1)
    await _open_session(server.port, reader, writer, -1)
    return reader, writer


async def _open_session(
    port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int
) -> None:
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    }
    opening = {"jsonrpc": "2.0", "id": number, "method": "initialize", "params": params}
    writer.write(post_bytes(port, _dumps(opening), PROTOCOL_VERSION))
    status, headers = await asyncio.wait_for(response_head(reader), READ_TIMEOUT)
    session = headers.get("mcp-session-id")
    body = await _rest(reader, headers)
    if status != 200 or not session or b'"result"' not in body:
        raise BenchError(f"initialize answered {status}: {body[:300]!r}")
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    writer.write(post_bytes(port, _dumps(note), PROTOCOL_VERSION, session=session))
    status, _ = await asyncio.wait_for(http_response(reader), READ_TIMEOUT)
    if status != 202:
        raise BenchError(f"notifications/initialized answered {status}")


async def _rest(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    """The body of a response whose head was read: by length, or (SSE) its first event."""
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    body = b""
    while b"\n\n" not in body:  # chunked SSE: read up to the first event's end
        size = int((await reader.readline()).split(b";")[0], 16)
        body += await reader.readexactly(size)
        await reader.readexactly(2)
    return body


async def _open_stream(port: int, number: int) -> asyncio.StreamWriter:
    """A ``subscriptions/listen`` stream on its own connection, once acknowledged."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    params = {"notifications": {"toolsListChanged": True}, "_meta": MODERN_META}
    listen = {"jsonrpc": "2.0", "id": number, "method": "subscriptions/listen", "params": params}
    extra = "Mcp-Method: subscriptions/listen\r\n"
    writer.write(post_bytes(port, _dumps(listen), MODERN, extra))
    status, headers = await asyncio.wait_for(response_head(reader), READ_TIMEOUT)
    event = await asyncio.wait_for(_rest(reader, headers), READ_TIMEOUT)
    if status != 200 or b"notifications/subscriptions/acknowledged" not in event:
        raise BenchError(f"subscriptions/listen answered {status}: {event[:300]!r}")
    return writer


def _dumps(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def rss_kib(pid: int) -> float:
    """A process's resident set in KiB (``VmRSS``); 0 where /proc is absent."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1])
    return 0.0
