"""The core's entry for transports, tested without a transport: ``Server.admit`` (a body and
its HTTP headers: era, parse, ``_meta``, mirrored headers, version header, batches) and
``Session.take`` (one stdio line: run it, answer it now, or drop a waiting request)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest

from mcpkit import App, Header
from mcpkit.protocol.incoming import Refused
from mcpkit.protocol.server import Server

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def make_app() -> App:
    app = App("incoming", "1.0")

    @app.tool()
    def route(region: Annotated[str, Header("Region")], size: int = 1) -> str:
        """Route a call."""
        return region

    return app


@pytest.fixture
def server() -> Server:
    return Server(make_app())


def body(method: str, params: dict[str, Any], request_id: Any = 1) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


def call_headers(**extra: str) -> dict[str, list[str]]:
    headers = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "route",
        "mcp-param-region": "eu",
    }
    headers.update(extra)
    return {name: [value] for name, value in headers.items()}


def refusal(server: Server, data: bytes, headers: dict[str, list[str]]) -> dict[str, Any]:
    with pytest.raises(Refused) as caught:
        server.admit(data, headers)
    return caught.value.response()


def test_a_stateless_call_with_matching_headers_is_admitted_and_answered(server: Server) -> None:
    params = {"name": "route", "arguments": {"region": "eu"}, "_meta": META}
    incoming = server.admit(body("tools/call", params), call_headers())
    assert (incoming.stateless, incoming.accepted, incoming.request_id) == (True, False, 1)

    async def answer() -> Any:
        return await server.sessionless(incoming).handle(incoming.message)

    assert asyncio.run(answer()) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": "eu"}],
            "isError": False,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "incoming", "version": "1.0"}},
        },
    }


def test_a_header_that_disagrees_with_the_body_is_refused_with_the_request_id(
    server: Server,
) -> None:
    params = {"name": "route", "arguments": {"region": "us"}, "_meta": META}
    assert refusal(server, body("tools/call", params, 7), call_headers()) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32020,
            "message": "Header mismatch: Mcp-Param-Region value 'eu' does not match the body",
        },
    }
    # The same tool again: its mirrored headers are found once and reused.
    assert refusal(server, body("tools/call", params, 8), call_headers())["id"] == 8


def test_meta_is_checked_before_the_headers(server: Server) -> None:
    params = {"name": "route", "arguments": {"region": "eu"}, "_meta": {"progressToken": 1}}
    headers = call_headers(**{"mcp-protocol-version": "2026-07-28"})
    assert refusal(server, body("server/discover", params), headers) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32602,
            "message": "Invalid params: _meta must carry "
            "'io.modelcontextprotocol/protocolVersion' (a string) and "
            "'io.modelcontextprotocol/clientCapabilities' (an object)",
        },
    }


def test_an_unknown_version_header_is_refused_in_the_handshake_era(server: Server) -> None:
    response = refusal(server, body("ping", {}, "a"), {"mcp-protocol-version": ["1999-01-01"]})
    assert response["id"] == "a"
    assert response["error"]["message"] == (
        "Bad Request: unsupported MCP-Protocol-Version '1999-01-01'"
    )


def test_a_batch_is_refused_outside_2025_03_26(server: Server) -> None:
    batch = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).encode()
    incoming = server.admit(batch, {"mcp-protocol-version": ["2025-06-18"]})
    incoming.check_batch("2025-03-26")  # allowed there
    with pytest.raises(Refused) as caught:
        incoming.check_batch("2025-06-18")
    assert caught.value.response() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid Request: batches exist only in protocol version 2025-03-26",
        },
    }


def test_a_body_that_is_no_json_is_refused(server: Server) -> None:
    assert refusal(server, b"{", {})["error"]["code"] == -32700


def test_take_tells_a_stream_transport_what_each_line_is() -> None:
    async def take() -> None:
        server = Server(make_app())
        session = server.session(_ignore)
        request = session.take(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
        assert (request.slots, request.request_id, request.reply) == (1, 7, None)
        batch = session.take(
            b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]'
        )
        assert batch.slots == 2
        cancel = session.take(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}'
        )
        assert (cancel.slots, cancel.message, cancel.cancels, cancel.reply) == (0, None, 7, None)
        bad = session.take(b"{nope")
        assert bad.slots == 0
        assert bad.reply is not None
        assert bad.reply["error"]["code"] == -32700
        assert session.too_large() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": f"Invalid Request: message larger than {server.limits.max_bytes} bytes",
            },
        }

    asyncio.run(take())


async def _ignore(message: dict[str, Any]) -> None:
    pass
