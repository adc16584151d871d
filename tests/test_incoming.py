"""The core's entry for transports, tested without a transport: ``Server.admit`` (a body and
its HTTP headers: era, parse, ``_meta``, mirrored headers, version header, batches) and
``Session.take`` (one stdio line: run it, answer it now, or drop a waiting request)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import http_app
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


def test_a_clients_answer_under_an_unknown_version_header_is_refused_without_its_id(
    server: Server,
) -> None:
    """Found by tests/test_fuzz_http.py: the refusal echoed the id of a client's *response*
    (an id the server chose for its own request), as if the client had asked something."""
    answer = json.dumps({"jsonrpc": "2.0", "id": 16, "error": {"code": 1, "message": "no"}})
    response = refusal(server, answer.encode(), {"mcp-protocol-version": ["1999-01-01"]})
    assert response["id"] is None
    assert response["error"]["code"] == -32022


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
        session = server.session(_ignore, transport="stdio")
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


# ------------------------------------------- the stateless era's rules, at the core's entry

MODERN = "2026-07-28"
V = "io.modelcontextprotocol/protocolVersion"


def answer(server: Server, data: bytes, headers: dict[str, str]) -> dict[str, Any]:
    """The core's answer to ``data``: its refusal at admission, or the handled response."""
    sent = {name.lower(): [value] for name, value in headers.items() if value != ""}
    try:
        incoming = server.admit(data, sent)
    except Refused as refused:
        return refused.response()

    async def handle() -> Any:
        return await server.sessionless(incoming).handle(incoming.message)

    response: dict[str, Any] = asyncio.run(handle())
    return response


@pytest.mark.parametrize(
    ("meta", "headers", "code"),
    [
        pytest.param({}, {}, -32602, id="no-meta"),
        pytest.param({V: MODERN}, {}, -32602, id="meta-without-capabilities"),
        pytest.param(META, {"mcp-protocol-version": ""}, -32020, id="no-version-header"),
        pytest.param(META, {"mcp-protocol-version": "2025-11-25"}, -32020, id="version-mismatch"),
        pytest.param({**META, V: "v9"}, {}, -32020, id="meta-version-not-the-header"),
        pytest.param({**META, V: "v9"}, {"mcp-protocol-version": "v9"}, -32022, id="unsupported"),
        pytest.param(META, {"mcp-method": ""}, -32020, id="no-method-header"),
        pytest.param(META, {"mcp-method": "TOOLS/LIST"}, -32020, id="method-case"),
        pytest.param(META, {"mcp-method": "prompts/list"}, -32020, id="method-mismatch"),
    ],
)
def test_stateless_errors_come_in_the_spec_order(
    server: Server, meta: dict[str, Any], headers: dict[str, str], code: int
) -> None:
    sent = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list", **headers}
    response = answer(server, body("tools/list", {"_meta": meta}, 77), sent)
    assert response["id"] == 77
    assert response["error"]["code"] == code
    if code == -32022:
        assert response["error"]["data"] == {"supported": [MODERN], "requested": "v9"}


# --------------------------------------------------------- Mcp-Param-* (x-mcp-header) rules


def located(arguments: dict[str, Any], **params: str) -> dict[str, Any]:
    """The core's answer to a ``tools/call`` of ``http_app``'s ``located`` with these headers."""
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "located"}
    message = {"name": "located", "arguments": arguments, "_meta": META}
    return answer(Server(http_app.app), body("tools/call", message), {**headers, **params})


@pytest.mark.parametrize(
    ("arguments", "params", "ok"),
    [
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8=?="}, True),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8?="}, False),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVs!!!bG8=?="}, False),
        ({"region": "SGVsbG8="}, {"mcp-param-region": "SGVsbG8="}, True),
        ({"region": "=?base64?SGVsbG8="}, {"mcp-param-region": "=?base64?SGVsbG8="}, True),
        ({"region": "test-value"}, {}, False),
        ({"region": "eu"}, {"Mcp-Param-REGION": "eu"}, True),
        ({"region": "eu"}, {"mcp-param-region": "us"}, False),
        ({"region": None}, {}, True),
        ({"note": "no header"}, {}, True),
        ({"count": 42}, {"mcp-param-count": "42.0"}, True),
        ({"count": 42}, {"mcp-param-count": "042"}, True),
        ({"count": 42}, {"mcp-param-count": "43"}, False),
        ({"count": 42}, {"mcp-param-count": "forty-two"}, False),
        ({"flag": True}, {"mcp-param-flag": "true"}, True),
        ({"flag": False}, {"mcp-param-flag": "False"}, False),
        ({"place": {"zone": "z1"}}, {"mcp-param-zone": "z1"}, True),
        ({"place": {"zone": "z1"}}, {}, False),
        ({"region": "Zürich"}, {"mcp-param-region": "=?base64?WsO8cmljaA==?="}, True),
    ],
)
def test_x_mcp_header_params(arguments: dict[str, Any], params: dict[str, str], ok: bool) -> None:
    response = located(arguments, **params)
    assert response["id"] == 1
    if ok:
        assert "result" in response, response
    else:
        assert response["error"]["code"] == -32020


@pytest.mark.parametrize("value", ["\xe9", " =?base64?w6k=?= \t"])
def test_header_values_are_trimmed_and_raw_non_ascii_refused(value: str) -> None:
    response = located({"region": "é"}, **{"mcp-param-region": value})
    if value.startswith(" "):
        assert "result" in response, response
    else:
        assert response["error"]["code"] == -32020


def test_a_mirrored_header_sent_twice_is_refused() -> None:
    headers = call_headers()
    headers["mcp-param-region"] = ["eu", "eu"]
    params = {"name": "route", "arguments": {"region": "eu"}, "_meta": META}
    assert refusal(Server(make_app()), body("tools/call", params, 3), headers) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32020,
            "message": "Header mismatch: the Mcp-Param-Region header appears more than once",
        },
    }


@pytest.mark.parametrize(
    ("name_header", "ok"),
    [
        ("echo", True),
        ("  echo  ", True),
        ("=?base64?ZWNobw==?=", True),
        ("wrong", False),
        ("", False),
    ],
)
def test_mcp_name_is_required_and_checked(name_header: str, ok: bool) -> None:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name_header}
    message = {"name": "echo", "arguments": {"text": "x"}, "_meta": META}
    response = answer(Server(http_app.app), body("tools/call", message), headers)
    assert ("result" in response) is ok, response
    if not ok:
        assert response["error"]["code"] == -32020


def test_a_stateless_notification_is_accepted_and_a_stateless_batch_refused(
    server: Server,
) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/x", "params": {"_meta": META}}
    headers = {"mcp-protocol-version": [MODERN]}
    incoming = server.admit(json.dumps(note).encode(), headers)
    assert (incoming.stateless, incoming.accepted) == (True, True)
    batch = json.dumps([json.loads(body("tools/list", {"_meta": META}))]).encode()
    assert refusal(server, batch, headers) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid Request: batches exist only in protocol version 2025-03-26",
        },
    }
