"""URL-mode elicitation over real Streamable HTTP (uvicorn, raw bytes): the ``-32042`` answer of
a session, and ``notifications/elicitation/complete`` reaching that session's GET stream when
``app.complete_elicitation`` runs on another thread; other sessions hear nothing."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest
import url_elicitation_app as connect
from http_support import post, read_until, request, serve

COMPLETE = json.dumps(  # the SSE event's data, as the server encodes it
    {
        "jsonrpc": "2.0",
        "method": "notifications/elicitation/complete",
        "params": {"elicitationId": "pay-o1"},
    },
    separators=(",", ":"),
).encode()


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with serve(connect.app.asgi()) as bound:
        yield bound


def open_session(port: int, capabilities: dict[str, object]) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"},
    }
    reply = post(port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    session: str = reply.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(port, note, {"mcp-session-id": session}).status == 202
    return session


def get_stream(port: int, session: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    head = (
        f"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: text/event-stream\r\n"
        f"mcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n\r\n"
    )
    sock.sendall(head.encode())
    read_until(sock, b"data: \n\n")  # the headers, then the priming event: the stream is open
    return sock


def test_the_32042_session_hears_of_the_completion_on_its_get_stream(port: int) -> None:
    asker = open_session(port, {"elicitation": {"url": {}}})
    bystander = open_session(port, {"elicitation": {"url": {}}})
    asker_stream, bystander_stream = get_stream(port, asker), get_stream(port, bystander)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "checkout", "arguments": {"order": "o1"}},
    }
    headers = {"mcp-session-id": asker, "mcp-protocol-version": "2025-11-25"}
    reply = post(port, call, headers)
    assert reply.messages == [{"jsonrpc": "2.0", "id": 1, "error": connect.REFUSED_O1}]
    finisher = threading.Thread(target=connect.app.complete_elicitation, args=("pay-o1",))
    finisher.start()
    finisher.join()
    assert b"data: " + COMPLETE + b"\n" in read_until(asker_stream, COMPLETE)
    # Nothing for the session that did not ask: a later change is the first thing it hears.
    connect.app.notify_list_changed("tools")
    heard = read_until(bystander_stream, b"list_changed")
    assert b"notifications/tools/list_changed" in heard
    assert b"elicitation" not in heard
    for session, sock in ((asker, asker_stream), (bystander, bystander_stream)):
        assert request(port, "DELETE", headers={"mcp-session-id": session}).status == 204
        sock.close()
