"""Streamable HTTP with raw requests: status codes, headers, both eras.

Driven in-process (``asgi_support.in_process``: no socket); the few tests about what only a
socket does (a client closing its connection, raw header bytes, chunked framing) use uvicorn."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator, MutableMapping
from typing import Any

import http_app
import pytest
from asgi_support import InProcess, in_process
from http_support import (
    LIST,
    META,
    MODERN,
    initialize,
    modern_call,
    modern_headers,
    post,
    read_until,
    request,
    serve,
)

from mcpkit import App
from mcpkit.exceptions import ClientCapabilityError
from mcpkit.transports.http import HttpApp
from mcpkit.transports.http._exchange import Exchange


@pytest.fixture(scope="module")
def server() -> Iterator[InProcess]:
    with in_process(http_app.app.asgi()) as served:
        yield served


@pytest.fixture(scope="module")
def stateless_server() -> Iterator[InProcess]:
    with in_process(http_app.app.asgi(stateless=True)) as served:
        yield served


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    """A real uvicorn socket, for the tests about what only a socket does (a client closing
    its connection, raw header bytes, chunked framing)."""
    with serve(http_app.app.asgi()) as bound:
        yield bound


def call(request_id: int, name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


# ------------------------------------------------------------------------ handshake era


def test_initialize_mints_a_random_visible_ascii_session_id(server: InProcess) -> None:
    first, second = initialize(server), initialize(server)
    assert first != second
    assert len(first) >= 32
    assert all(0x21 <= ord(ch) <= 0x7E for ch in first)


def test_requests_need_a_live_session(server: InProcess) -> None:
    assert post(server, LIST).status == 400
    unknown = post(server, LIST, {"mcp-session-id": "nope"})
    assert unknown.status == 404
    assert unknown.json["id"] == 1
    session = initialize(server)
    assert post(server, LIST, {"mcp-session-id": session}).status == 200
    assert request(server, "DELETE", headers={"mcp-session-id": session}).status == 204
    assert post(server, LIST, {"mcp-session-id": session}).status == 404
    assert request(server, "DELETE", headers={"mcp-session-id": session}).status == 404


def test_get_and_delete_without_a_session_are_not_allowed(server: InProcess) -> None:
    for method in ("GET", "DELETE"):
        reply = request(server, method, headers={"accept": "text/event-stream"})
        assert reply.status == 405
        assert "POST" in reply.headers["allow"]
    assert request(server, "PUT", {}).status == 405


def test_protocol_version_header_is_validated_not_obeyed(server: InProcess) -> None:
    session = initialize(server)
    for version in ("2025-03-26", "2025-06-18", "2025-11-25"):
        headers = {"mcp-session-id": session, "mcp-protocol-version": version}
        assert post(server, LIST, headers).status == 200
    bad = post(server, LIST, {"mcp-session-id": session, "mcp-protocol-version": "2099-01-01"})
    assert bad.status == 400
    assert bad.json["id"] == 1
    assert post(server, LIST, {"mcp-protocol-version": "nonsense"}).status == 400


def test_a_request_that_emits_notifications_answers_as_sse_with_a_priming_event(
    server: InProcess,
) -> None:
    session = initialize(server)
    headers = {"mcp-session-id": session}
    level = {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}}
    assert post(server, level, headers).status == 200
    reply = post(server, call(2, "chatty", {}, progressToken="tok"), headers)
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.headers["x-accel-buffering"] == "no"
    events = reply.events
    assert events[0][0]  # priming: an id and empty data
    assert events[0][1] == ""
    methods = [m.get("method") for m in reply.messages]
    assert methods == ["notifications/progress"] * 3 + ["notifications/message", None]
    assert reply.messages[-1]["result"]["content"][0]["text"] == "finished"
    assert len({event_id for event_id, _ in events}) == len(events)


def test_no_priming_event_before_2025_11_25(server: InProcess) -> None:
    session = initialize(server, "2025-06-18")
    reply = post(server, call(2, "chatty", {}, progressToken=7), {"mcp-session-id": session})
    assert reply.events[0][1] != ""


def test_a_quiet_request_answers_json_and_notifications_answer_202(server: InProcess) -> None:
    session = initialize(server)
    reply = post(server, call(1, "echo", {"text": "hi"}), {"mcp-session-id": session})
    assert reply.headers["content-type"] == "application/json"
    assert reply.json["result"]["content"][0]["text"] == "hi"
    response = {"jsonrpc": "2.0", "id": "mcpkit-99", "result": {}}
    reply = post(server, response, {"mcp-session-id": session})
    assert (reply.status, reply.body) == (202, b"")


def test_batches_follow_the_sessions_version(server: InProcess) -> None:
    batch = [LIST, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    old = initialize(server, "2025-03-26")
    reply = post(server, batch, {"mcp-session-id": old})
    assert reply.status == 200
    assert sorted(m["id"] for m in reply.json) == [1, 2]
    notes = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    assert post(server, notes, {"mcp-session-id": old}).status == 202
    new = initialize(server)
    rejected = post(server, batch, {"mcp-session-id": new})
    assert rejected.status == 400
    assert rejected.json["error"]["code"] == -32600


def test_notifications_cancelled_cancels_but_a_disconnect_does_not(port: int) -> None:
    session = initialize(port)
    http_app.CANCELLED.clear()
    http_app.FINISHED.clear()
    http_app.STARTED.clear()
    sock = _send_raw(port, call(5, "slow", {"seconds": 0.4}), {"mcp-session-id": session})
    assert http_app.STARTED.wait(5)
    sock.close()  # handshake era: the call goes on
    assert http_app.FINISHED.wait(5)
    assert not http_app.CANCELLED.is_set()

    http_app.STARTED.clear()
    sock = _send_raw(port, call(6, "slow", {"seconds": 30}), {"mcp-session-id": session})
    assert http_app.STARTED.wait(5)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}}
    assert post(port, cancel, {"mcp-session-id": session}).status == 202
    assert http_app.CANCELLED.wait(5)
    sock.close()


def test_get_opens_the_sessions_stream_for_server_messages(port: int) -> None:
    session = initialize(port)
    sock = _send_raw(port, None, {"mcp-session-id": session}, method="GET")
    head = read_until(sock, b"data: \n\n")  # headers, then the priming event
    assert b"200" in head.split(b"\r\n", 1)[0]
    assert b"text/event-stream" in head
    again = request(port, "GET", headers={"mcp-session-id": session, "accept": "text/event-stream"})
    assert again.status == 409
    http_app.app.add_tool(lambda: None, name="temporary", description="Added by a test.")
    try:
        assert b"notifications/tools/list_changed" in read_until(sock, b"list_changed")
    finally:
        http_app.app.remove_tool("temporary")
    assert request(port, "DELETE", headers={"mcp-session-id": session}).status == 204
    read_until(sock, b"0\r\n\r\n")  # DELETE ends the stream: the last chunk arrives
    sock.close()


def test_get_needs_an_event_stream_accept(server: InProcess) -> None:
    session = initialize(server)
    reply = request(
        server, "GET", headers={"mcp-session-id": session, "accept": "application/json"}
    )
    assert reply.status == 406


# ------------------------------------------------------------------------ stateless mode


def test_stateless_mode_serves_handshake_requests_without_sessions(
    stateless_server: InProcess,
) -> None:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    reply = post(stateless_server, init)
    assert reply.status == 200
    assert "mcp-session-id" not in reply.headers
    listed = post(stateless_server, LIST, {"mcp-protocol-version": "2025-11-25"})
    assert [t["name"] for t in listed.json["result"]["tools"]][:2] == ["echo", "pid"]
    assert post(stateless_server, LIST, {"mcp-session-id": "ignored"}).status == 200
    assert request(stateless_server, "GET", headers={"accept": "text/event-stream"}).status == 405
    assert request(stateless_server, "DELETE", headers={"mcp-session-id": "x"}).status == 405


def test_stateless_mode_batches_only_at_2025_03_26(stateless_server: InProcess) -> None:
    batch = [LIST, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    assert len(post(stateless_server, batch).json) == 2  # no header: 2025-03-26
    assert len(post(stateless_server, batch, {"mcp-protocol-version": "2025-03-26"}).json) == 2
    reply = post(stateless_server, batch, {"mcp-protocol-version": "2025-06-18"})
    assert reply.status == 400
    assert reply.json["error"]["code"] == -32600


class Gate:
    """Counts the calls running at once in the server's loop; opened from the test's thread."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.opened: asyncio.Event | None = None
        self.running = 0
        self.peak = 0
        self.changed = threading.Condition()

    async def wait(self) -> None:
        if self.opened is None:
            self.loop, self.opened = asyncio.get_running_loop(), asyncio.Event()
        with self.changed:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.changed.notify_all()
        await self.opened.wait()
        with self.changed:
            self.running -= 1

    def open_when_running(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.running >= count, timeout=10)
        assert self.loop is not None
        assert self.opened is not None
        self.loop.call_soon_threadsafe(self.opened.set)


def test_a_batch_runs_at_most_64_members_at_once_and_1000_in_all() -> None:
    gated = App("gated", "1")
    gate = Gate()

    @gated.tool
    async def hold(n: int) -> int:
        """Waits for the gate."""
        await gate.wait()
        return n

    batch = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "hold", "arguments": {"n": i}},
        }
        for i in range(100)
    ]
    with in_process(gated.asgi(stateless=True)) as bound:  # no version header: 2025-03-26
        opener = threading.Thread(target=gate.open_when_running, args=(64,))
        opener.start()
        reply = post(bound, batch)
        opener.join()
        too_many = post(bound, [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(1001)])
    assert reply.status == 200
    assert gate.peak == 64
    assert sorted(answer["result"]["structuredContent"]["result"] for answer in reply.json) == list(
        range(100)
    )
    assert (too_many.status, too_many.json) == (
        400,
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid Request: a batch holds at most 1000 messages (1001 sent)",
            },
        },
    )


def test_stateless_mode_cancels_a_call_whose_client_left() -> None:
    http_app.CANCELLED.clear()
    http_app.STARTED.clear()
    with serve(http_app.app.asgi(stateless=True)) as stateless_port:
        sock = _send_raw(stateless_port, call(1, "slow", {"seconds": 30}), {})
        assert http_app.STARTED.wait(5)
        sock.close()
        assert http_app.CANCELLED.wait(5)


# ------------------------------------------------------------------------ stateless era


def test_stateless_era_call_answers_with_result_type(server: InProcess) -> None:
    body = modern_call(1, "echo", {"text": "hi"})
    reply = post(server, body, modern_headers("tools/call", "echo", **{"mcp-session-id": "x"}))
    assert reply.status == 200
    assert reply.json["result"]["resultType"] == "complete"
    assert "mcp-session-id" not in reply.headers


@pytest.mark.parametrize(
    ("meta", "headers", "status", "code"),
    [
        ({}, {}, 400, -32602),
        (META, {"mcp-protocol-version": "2025-11-25"}, 400, -32020),
        (
            {**META, "io.modelcontextprotocol/protocolVersion": "v9"},
            {"mcp-protocol-version": "v9"},
            400,
            -32022,
        ),
    ],
)
def test_stateless_era_errors_are_400(  # each rule, in order: test_incoming.py
    server: InProcess, meta: dict[str, Any], headers: dict[str, str], status: int, code: int
) -> None:
    body = {"jsonrpc": "2.0", "id": 77, "method": "tools/list", "params": {"_meta": meta}}
    reply = post(server, body, {**modern_headers("tools/list"), **headers})
    assert reply.status == status, reply.body
    assert reply.json["id"] == 77
    assert reply.json["error"]["code"] == code
    if code == -32022:
        assert reply.json["error"]["data"] == {"supported": ["2026-07-28"], "requested": "v9"}


def test_header_names_are_case_insensitive_and_values_trimmed(server: InProcess) -> None:
    body = modern_call(1, "echo", {"text": "x"})
    headers = {"MCP-PROTOCOL-VERSION": MODERN, "MCP-METHOD": "tools/call", "Mcp-Name": "  echo  "}
    assert post(server, body, headers).status == 200


def test_unknown_and_removed_methods_are_404(server: InProcess) -> None:
    for method in ("unknown/method", "initialize", "ping", "logging/setLevel"):
        body = {"jsonrpc": "2.0", "id": 500, "method": method, "params": {"_meta": META}}
        reply = post(server, body, modern_headers(method))
        assert reply.status == 404, method
        assert reply.json["error"]["code"] == -32601
        assert reply.json["id"] == 500


def test_missing_client_capability_is_400() -> None:
    needy = App("needy", "1")

    @needy.tool
    def sample() -> str:
        """Needs sampling."""
        raise ClientCapabilityError({"sampling": {}})

    with in_process(needy.asgi()) as bound:
        reply = post(bound, modern_call(9, "sample", {}), modern_headers("tools/call", "sample"))
    assert reply.status == 400
    assert reply.json["error"]["code"] == -32021
    assert reply.json["id"] == 9


def test_stateless_era_notifications_are_202_and_batches_400(server: InProcess) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/x", "params": {"_meta": META}}
    assert post(server, note, {"mcp-protocol-version": MODERN}).status == 202
    reply = post(server, [modern_call(1, "echo", {"text": "x"})], {"mcp-protocol-version": MODERN})
    assert reply.status == 400
    assert reply.json["error"]["code"] == -32600


@pytest.mark.parametrize("method", [["ping"], {"name": "ping"}], ids=["array", "object"])
def test_a_method_that_is_no_string_is_an_invalid_request_not_a_500(
    stateless_server: InProcess, method: Any
) -> None:
    """Found by tests/test_fuzz_http.py: an array or object ``method`` once failed the era
    check (unhashable) and answered 500."""
    reply = post(stateless_server, {"jsonrpc": "2.0", "id": 5, "method": method})
    assert (reply.status, reply.json) == (
        200,
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "Invalid Request"}},
    )


def test_stateless_era_progress_streams_without_priming(server: InProcess) -> None:
    meta = {**META, "progressToken": "progress-test-1"}
    body = call(3, "chatty", {}, **meta)
    reply = post(server, body, modern_headers("tools/call", "chatty"))
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert all(data for _, data in reply.events)
    tokens = [m["params"]["progressToken"] for m in reply.messages[:-1]]
    assert tokens == ["progress-test-1"] * 3  # no logLevel in _meta: no log message
    assert reply.messages[-1]["result"]["resultType"] == "complete"


def test_closing_the_stream_cancels_a_stateless_era_call(port: int) -> None:
    http_app.CANCELLED.clear()
    http_app.STARTED.clear()
    sock = _send_raw(
        port, modern_call(1, "slow", {"seconds": 30}), modern_headers("tools/call", "slow")
    )
    assert http_app.STARTED.wait(5)
    sock.close()
    assert http_app.CANCELLED.wait(5)


# -------------------------------------------------------------------------- x-mcp-header


@pytest.mark.parametrize(
    ("arguments", "params", "ok"),
    [
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8=?="}, True),
        ({"region": "eu"}, {"mcp-param-region": "us"}, False),
    ],
)
def test_x_mcp_header_params(
    server: InProcess, arguments: dict[str, Any], params: dict[str, str], ok: bool
) -> None:
    """The header rules themselves are tested at the core (test_incoming.py); here, what a
    refusal is over HTTP."""
    headers = modern_headers("tools/call", "located", **params)
    reply = post(server, modern_call(1, "located", arguments), headers)
    assert reply.status == (200 if ok else 400), reply.body
    if ok:
        assert "result" in reply.json
    else:
        assert reply.json["error"]["code"] == -32020
        assert reply.json["id"] == 1


def test_x_mcp_header_rejects_raw_non_ascii_and_duplicates(port: int) -> None:
    body = json.dumps(modern_call(1, "located", {"region": "é"})).encode()
    base = "".join(f"{k}: {v}\r\n" for k, v in modern_headers("tools/call", "located").items())
    for extra in ("mcp-param-region: \xe9\r\n", "mcp-param-region: a\r\nmcp-param-region: a\r\n"):
        head = (
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\n{base}{extra}"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
        )
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(head.encode("latin-1") + body)
            answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert b"-32020" in answer


# ------------------------------------------------------------ status codes and security


def test_accept_content_type_and_size(server: InProcess) -> None:
    assert post(server, LIST, {"accept": "text/html"}).status == 406
    assert post(server, LIST, {"accept": "application/json"}).status == 406  # SSE mode needs both
    assert post(server, LIST, {"accept": "*/*", "mcp-session-id": "x"}).status == 404  # accepted
    assert post(server, LIST, {"accept": "application/*, text/*"}).status == 400  # accepted
    assert post(server, LIST, {"accept": "application/json;q=0, text/event-stream"}).status == 406
    assert post(server, LIST, {"content-type": "text/plain"}).status == 415
    assert post(server, LIST, {"content-type": ""}).status == 415
    broken = post(server, None, raw=b"{not json")
    assert broken.status == 400
    assert broken.json == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


def test_json_mode_needs_only_json_and_never_streams() -> None:
    with in_process(http_app.app.asgi(json_response=True)) as bound:
        session = initialize(bound, accept="application/json")
        headers = {"mcp-session-id": session, "accept": "application/json"}
        reply = post(bound, call(1, "chatty", {}, progressToken=1), headers)
    assert reply.headers["content-type"] == "application/json"
    assert reply.json["result"]["content"][0]["text"] == "finished"


def test_body_limit_is_413() -> None:
    with in_process(http_app.app.asgi(max_body_bytes=100)) as bound:
        big = {"jsonrpc": "2.0", "id": 1, "method": "x" * 200}
        assert post(bound, big).status == 413
        assert post(bound, None, raw=b"").status == 400  # an empty body is not JSON


@pytest.mark.parametrize("pieces", [1, 3])
def test_a_body_without_a_length_is_held_to_the_limit(pieces: int) -> None:
    """No ``content-length`` to refuse early: the body read is the check, whether it arrives
    in one ASGI message or in several."""
    asgi = http_app.app.asgi(max_body_bytes=100)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "x" * 200}).encode()
    size = -(-len(body) // pieces)
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
    headers.append((b"accept", b"application/json, text/event-stream"))
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/mcp"}
    scope.update(headers=headers, server=("127.0.0.1", 8000))
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    asyncio.run(asgi(scope, receive, send))
    assert sent[0]["status"] == 413
    error = json.loads(sent[1]["body"])["error"]
    assert error == {"code": -32600, "message": "Invalid Request: body larger than 100 bytes"}


def test_origin_is_checked_on_every_request(server: InProcess) -> None:
    evil = post(server, LIST, {"origin": "http://evil.example.com"})
    assert evil.status == 403
    assert evil.json["error"]["code"] == -32600
    passed = post(server, LIST, {"origin": "http://localhost:3000"})
    assert passed.status == 400  # passed the check: no session
    assert post(server, LIST, {"origin": "http://[::1]:3000"}).status == 400
    assert request(server, "GET", headers={"origin": "null"}).status == 403


def test_host_is_checked_on_loopback_binds(server: InProcess) -> None:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    rebound = {"host": "evil.example.com", "origin": "http://evil.example.com"}
    assert post(server, init, rebound).status == 421
    local = {"host": f"localhost:{server.port}", "origin": f"http://localhost:{server.port}"}
    assert post(server, init, local).status == 200


def test_explicit_allow_lists() -> None:
    asgi = http_app.app.asgi(
        allowed_origins=["https://app.example.com"], allowed_hosts=["mcp.example.com"]
    )
    with in_process(asgi) as bound:
        ok = {"host": "mcp.example.com", "origin": "https://app.example.com"}
        assert post(bound, LIST, ok).status == 400  # through both checks: no session
        assert post(bound, LIST, {**ok, "origin": "http://localhost"}).status == 403
        assert post(bound, LIST, {**ok, "host": "localhost"}).status == 421
    with in_process(http_app.app.asgi(allowed_origins=["*"], allowed_hosts=["*"])) as bound:
        assert post(bound, LIST, {"host": "any", "origin": "https://any"}).status == 400


def test_other_paths_are_plain_404(server: InProcess) -> None:
    assert request(server, "GET", path="/elsewhere").status == 404
    assert request(server, "GET", path="/.well-known/oauth-protected-resource").status == 404


def test_errors_never_leak(server: InProcess) -> None:
    def explode(token: str) -> None:
        raise RuntimeError("secret detail")

    with in_process(HttpApp(http_app.app, auth=explode)) as bound:
        reply = post(bound, LIST, {"authorization": "Bearer t"})
    assert reply.status == 500
    assert b"secret" not in reply.body
    assert reply.json["error"] == {"code": -32603, "message": "Internal error"}


# ------------------------------------------------------------------------------- helpers


def _send_raw(
    port: int, body: Any, headers: dict[str, str], *, method: str = "POST"
) -> socket.socket:
    data = b"" if body is None else json.dumps(body).encode()
    lines = {
        "host": f"127.0.0.1:{port}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "content-length": str(len(data)),
        **headers,
    }
    head = f"{method} /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in lines.items())
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(head.encode() + b"\r\n" + data)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_header_names_are_read_in_any_case_however_many_names_clients_make_up() -> None:
    """What handlers read as ``ctx.headers``: names in lower case, repeated ones in order,
    also past the few names kept once read (made up per request here)."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        pass

    long_name = b"X-" + b"Long" * 20
    for number in range(300):
        made_up = b"X-Made-Up-%d" % number
        raw = [(made_up, b"a"), (b"CONTENT-TYPE", b"text/plain"), (made_up.lower(), b"b")]
        raw.append((long_name, b"%d" % number))
        exchange = Exchange({"type": "http", "headers": raw}, receive, send)
        assert exchange.headers == {
            made_up.decode().lower(): ["a", "b"],
            "content-type": ["text/plain"],
            long_name.decode().lower(): [str(number)],
        }
