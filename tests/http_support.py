"""Helpers for the HTTP tests: a uvicorn server in a thread, raw requests, SSE parsing; each
request helper takes a uvicorn port or a server driven in-process (``asgi_support.in_process``)."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import uvicorn

TIMEOUT = 10.0
LEAN = "mcpkit.transports.http._h1:http_protocol"  # what `mcpkit run` serves with
ACCEPT_BOTH = "application/json, text/event-stream"
MODERN = "2026-07-28"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@contextlib.contextmanager
def serve(asgi: Any, host: str = "127.0.0.1", *, http: str = LEAN) -> Iterator[int]:
    """Run ``asgi`` on uvicorn in a thread on a free port; yields the port. ``http`` is the
    protocol: by default mcpkit's (as ``mcpkit run`` serves), ``"h11"`` uvicorn's own."""
    config = uvicorn.Config(
        asgi,
        host=host,
        port=0,
        log_level="warning",
        ws="none",
        timeout_graceful_shutdown=1,
        http=http,
        access_log=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + TIMEOUT
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        assert time.monotonic() < deadline, "uvicorn did not start in time"
        time.sleep(0.01)
    port: int = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def events(self) -> list[tuple[str | None, str]]:
        return sse_events(self.body)

    @property
    def messages(self) -> list[Any]:
        """The JSON body, or the SSE events' data (priming events left out), as a list."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            return [json.loads(data) for _, data in self.events if data]
        return [self.json]


class Served(Protocol):
    """A server driven without a socket (``asgi_support.InProcess``)."""

    port: int

    def request(
        self,
        method: str,
        body: Any,
        headers: Mapping[str, str],
        *,
        path: str = ...,
        raw: bytes | None = ...,
    ) -> Reply: ...


Target = int | Served  # a uvicorn port, or a server driven in-process


def request(
    port: Target,
    method: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    *,
    path: str = "/mcp",
    raw: bytes | None = None,
) -> Reply:
    """One HTTP request with the usual MCP headers (``headers`` override them)."""
    if not isinstance(port, int):
        return port.request(method, body, headers or {}, path=path, raw=raw)
    sent = {"content-type": "application/json", "accept": ACCEPT_BOTH}
    sent.update(headers or {})
    sent = {k: v for k, v in sent.items() if v != ""}  # "" removes a default header
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request(method, path, data, sent)
        response = conn.getresponse()
        return Reply(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        conn.close()


def post(port: Target, body: Any, headers: Mapping[str, str] | None = None, **kw: Any) -> Reply:
    return request(port, "POST", body, headers, **kw)


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    headers.update(extra)
    return headers


def modern_call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": META}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def initialize(port: Target, version: str = "2025-11-25", **headers: str) -> str:
    """Open a handshake-era session; returns its id."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "v": 1}}
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    reply = post(port, body, headers)
    assert reply.status == 200, reply.body
    session_id = reply.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(port, note, {**headers, "mcp-session-id": session_id}).status == 202
    return session_id


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    """Bytes from a raw socket until ``marker`` has arrived (fails after 5 seconds)."""
    data = b""
    deadline = time.monotonic() + 5
    while marker not in data:
        assert time.monotonic() < deadline, data
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    return data


def sse_events(body: bytes) -> list[tuple[str | None, str]]:
    """``(id, data)`` per SSE event (comments skipped)."""
    events = []
    for block in body.decode().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
        if "data" in fields:
            events.append((fields.get("id"), fields["data"]))
    return events
