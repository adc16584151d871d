"""Golden wire exchanges with the I/O-free server, through the in-memory client.

Every message is a literal: what a client sends, and exactly what it gets back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import App, ServerOptions, ToolError
from mcpkit.protocol import methods
from mcpkit.testing import Client, SyncClient

HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META = {V: "2026-07-28", CAPS: {}}
RESULT_META = {SERVER_INFO: {"name": "builder", "version": "1.0.0"}}
CAPABILITIES = {"logging": {}, "tools": {"listChanged": True}}

app = App("builder", "1.0.0", instructions="Build things.")


@app.tool(name="build-app")
def build_app(project_dir: str, arch: str) -> str:
    """Build the project."""
    if arch not in ("arm64", "x86_64"):
        raise ToolError(f"cannot build for {arch}")
    return f"{project_dir}-{arch}.pkg"


@app.tool
def crash(secret: str) -> str:
    """Fail unexpectedly."""
    raise RuntimeError(f"database password is {secret}")


@app.tool
def count(n: int) -> str:
    """Return n as text."""
    return str(n)


def req(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def ok(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def err(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def stateless_ok(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return ok(request_id, {**result, "resultType": "complete", "_meta": RESULT_META})


@pytest.fixture
def fresh() -> Iterator[SyncClient]:
    """A connection that has sent nothing yet."""
    with Client(app, initialize=False) as client:
        yield client


def connect(version: str, target: App = app) -> Client:
    return Client(target, protocol_version=version)


# ------------------------------------------------------------------------------- handshake


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_echoes_a_known_version(fresh: SyncClient, version: str) -> None:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    assert fresh.send(req(1, "initialize", params)) == ok(
        1,
        {
            "protocolVersion": version,
            "capabilities": CAPABILITIES,
            "serverInfo": {"name": "builder", "version": "1.0.0"},
            "instructions": "Build things.",
        },
    )
    assert fresh.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert fresh.send(req(2, "ping")) == ok(2, {})


@pytest.mark.parametrize("requested", ["2026-07-28", "1999-01-01", "2099-12-31", "latest", 7, None])
def test_initialize_answers_the_latest_handshake_version_otherwise(
    fresh: SyncClient, requested: Any
) -> None:
    answer = fresh.send(req("i", "initialize", {"protocolVersion": requested, "capabilities": {}}))
    assert answer["id"] == "i"
    assert answer["result"]["protocolVersion"] == "2025-11-25"


def test_capabilities_list_only_what_the_app_has(fresh: SyncClient) -> None:
    empty = App("empty", "0.1", title="Nothing", website_url="https://example.com")
    with Client(empty, initialize=False) as client:
        answer = client.send(req(1, "initialize", {"protocolVersion": "2025-06-18"}))
    assert answer == ok(
        1,
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {"logging": {}},
            "serverInfo": {
                "name": "empty",
                "version": "0.1",
                "title": "Nothing",
                "websiteUrl": "https://example.com",
            },
        },
    )


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_methods_of_an_unadvertised_capability_are_not_found(version: str) -> None:
    with connect(version, App("empty", "0.1")) as client:
        answer = client.send(
            req(5, "tools/list", {"_meta": META} if version == "2026-07-28" else None)
        )
    assert answer == err(5, -32601, "Method not found: tools/list")


def test_a_second_initialize_is_invalid_request() -> None:
    with connect("2025-06-18") as client:
        answer = client.send(req(9, "initialize", {"protocolVersion": "2025-06-18"}))
        assert answer == err(9, -32600, "Invalid Request: the session is already initialized")
        assert client.request("ping") == {}


def test_ping_answers_empty_even_before_initialize(fresh: SyncClient) -> None:
    assert fresh.send(req(1, "ping")) == ok(1, {})
    assert fresh.send(req("p", "ping", {})) == ok("p", {})


NO_SESSION = (
    "Invalid params: no session; send 'initialize' first, or carry _meta "
    "'io.modelcontextprotocol/protocolVersion' and "
    "'io.modelcontextprotocol/clientCapabilities' on every request"
)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", None),
        ("tools/call", {"name": "count"}),
        ("logging/setLevel", {"level": "info"}),
    ],
)
def test_a_request_before_initialize_without_meta_is_invalid_params(
    fresh: SyncClient, method: str, params: Any
) -> None:
    assert fresh.send(req(3, method, params)) == err(3, -32602, NO_SESSION)
    # ... and the connection can still initialize afterwards
    assert fresh.send(req(4, "initialize", {"protocolVersion": "2025-06-18"}))["result"]


def test_session_requests_carry_no_meta_version_and_are_not_rejected() -> None:
    with connect("2025-06-18") as client:
        assert client.send(req(1, "tools/call", {"name": "count", "arguments": {"n": 3}})) == ok(
            1, {"content": [{"type": "text", "text": "3"}], "isError": False}
        )
        listed = client.send(req(2, "tools/list"))
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["build-app", "crash", "count"]
    assert "resultType" not in listed["result"]
    assert "ttlMs" not in listed["result"]


def test_unknown_method_in_a_session_is_method_not_found() -> None:
    with connect("2025-11-25") as client:
        assert client.send(req(1, "resources/list")) == err(
            1, -32601, "Method not found: resources/list"
        )
        assert client.send(req(2, "server/discoverx")) == err(
            2, -32601, "Method not found: server/discoverx"
        )


def test_array_params_are_invalid_params() -> None:
    with connect("2025-06-18") as client:
        assert client.send(req(1, "tools/list", [])) == err(
            1, -32602, "Invalid params: MCP params must be an object"
        )


# ------------------------------------------------------------------------------- stateless


def test_server_discover(fresh: SyncClient) -> None:
    assert fresh.send(req("d", "server/discover", {"_meta": META})) == stateless_ok(
        "d",
        {
            "supportedVersions": [*HANDSHAKE_VERSIONS, "2026-07-28"],
            "capabilities": CAPABILITIES,
            "instructions": "Build things.",
            "ttlMs": 0,
            "cacheScope": "public",
        },
    )


def test_cache_hints_come_from_the_app() -> None:
    cached = App("builder", "1.0.0", options=ServerOptions(ttl_ms=60_000, cache_scope="private"))
    cached.add_tool(count)
    with Client(cached, protocol_version="2026-07-28") as client:
        discovered = client.request("server/discover")
        listed = client.send(req(1, "tools/list", {"_meta": META}))
        called = client.send(
            req(2, "tools/call", {"name": "count", "arguments": {"n": 1}, "_meta": META})
        )
    assert (discovered["ttlMs"], discovered["cacheScope"]) == (60_000, "private")
    assert (listed["result"]["ttlMs"], listed["result"]["cacheScope"]) == (60_000, "private")
    assert called == stateless_ok(2, {"content": [{"type": "text", "text": "1"}], "isError": False})


@pytest.mark.parametrize(
    "meta",
    [
        {V: "2026-07-28"},
        {CAPS: {}, "progressToken": 1},
        {V: 20260728, CAPS: {}},
        {V: "2026-07-28", CAPS: []},
        {V: "2026-07-28", CAPS: None},
    ],
    ids=["no-capabilities", "no-version", "version-not-string", "caps-array", "caps-null"],
)
def test_missing_meta_fields_are_invalid_params(fresh: SyncClient, meta: dict[str, Any]) -> None:
    answer = fresh.send(req(1, "server/discover", {"_meta": meta}))
    assert answer == err(
        1,
        -32602,
        "Invalid params: _meta must carry 'io.modelcontextprotocol/protocolVersion' (a string) "
        "and 'io.modelcontextprotocol/clientCapabilities' (an object)",
    )


@pytest.mark.parametrize("method", ["server/discover", "subscriptions/listen"])
def test_stateless_methods_without_meta_are_invalid_params(fresh: SyncClient, method: str) -> None:
    assert fresh.send(req(1, method))["error"]["code"] == -32602
    assert fresh.send(req(2, method, {}))["error"]["code"] == -32602


def test_missing_meta_is_checked_before_the_method(fresh: SyncClient) -> None:
    assert fresh.send(req(1, "no/such", {"_meta": {V: "2026-07-28"}}))["error"]["code"] == -32602


@pytest.mark.parametrize("requested", ["2025-11-25", "2025-06-18", "1900-01-01", "2027-01-01"])
def test_an_unsupported_stateless_version_is_32022(fresh: SyncClient, requested: str) -> None:
    answer = fresh.send(req(1, "tools/list", {"_meta": {V: requested, CAPS: {}}}))
    assert answer == err(
        1,
        -32022,
        "Unsupported protocol version",
        {"supported": ["2026-07-28"], "requested": requested},
    )


def test_the_version_is_checked_before_the_method(fresh: SyncClient) -> None:
    answer = fresh.send(req(1, "ping", {"_meta": {V: "1900-01-01", CAPS: {}}}))
    assert answer["error"]["code"] == -32022


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("initialize", {"protocolVersion": "2026-07-28", "capabilities": {}}),
        ("ping", {}),
        ("logging/setLevel", {"level": "debug"}),
        ("resources/subscribe", {"uri": "file:///x"}),
        ("resources/unsubscribe", {"uri": "file:///x"}),
        ("no/such/method", {}),
    ],
)
def test_removed_methods_are_unknown_in_the_stateless_era(
    fresh: SyncClient, method: str, params: dict[str, Any]
) -> None:
    answer = fresh.send(req(7, method, {**params, "_meta": META}))
    assert answer == err(7, -32601, f"Method not found: {method}")


def test_every_stateless_result_carries_result_type_and_server_info(fresh: SyncClient) -> None:
    meta = {**META, INFO: {"name": "probe", "version": "1"}}
    called = fresh.send(
        req(
            1,
            "tools/call",
            {
                "name": "build-app",
                "arguments": {"project_dir": "a", "arch": "arm64"},
                "_meta": meta,
            },
        )
    )
    assert called == stateless_ok(
        1, {"content": [{"type": "text", "text": "a-arm64.pkg"}], "isError": False}
    )
    failed = fresh.send(
        req(
            2,
            "tools/call",
            {"name": "build-app", "arguments": {"project_dir": "a", "arch": "mips"}, "_meta": meta},
        )
    )
    assert failed == stateless_ok(
        2, {"content": [{"type": "text", "text": "cannot build for mips"}], "isError": True}
    )
    listed = fresh.send(req(3, "tools/list", {"_meta": meta}))["result"]
    assert (listed["resultType"], listed["_meta"], listed["ttlMs"], listed["cacheScope"]) == (
        "complete",
        RESULT_META,
        0,
        "public",
    )


def test_both_eras_on_one_connection() -> None:
    """mcp.Client probes server/discover first, then may fall back to initialize."""
    with Client(app, initialize=False) as client:
        assert client.send(req(1, "server/discover", {"_meta": META}))["result"][
            "supportedVersions"
        ]
        answer = client.send(req(2, "initialize", {"protocolVersion": "2025-11-25"}))
        assert answer["result"]["protocolVersion"] == "2025-11-25"
        assert client.send(req(3, "ping")) == ok(3, {})
        # stateless requests still work inside the handshake session, and vice versa
        assert (
            client.send(req(4, "tools/list", {"_meta": META}))["result"]["resultType"] == "complete"
        )
        assert "resultType" not in client.send(req(5, "tools/list"))["result"]


# ----------------------------------------------------------------------------------- batches


def batch_client() -> Client:
    return connect("2025-03-26")


def test_a_batch_at_2025_03_26_is_answered_with_an_array() -> None:
    with batch_client() as client:
        answer = client.send(
            [
                req(1, "ping"),
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                req(2, "tools/call", {"name": "count", "arguments": {"n": 2}}),
                1,
                req(3, "no/such"),
            ]
        )
    assert answer == [
        ok(1, {}),
        ok(2, {"content": [{"type": "text", "text": "2"}], "isError": False}),
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
        err(3, -32601, "Method not found: no/such"),
    ]


def test_a_cancellation_in_a_batch_cancels_a_request_of_the_same_batch() -> None:
    """Members run in order, each in its own task: by the time the cancellation takes effect
    the request it names is running, so it is cancelled and never answered."""
    waits = App("waits", "1.0.0")

    @waits.tool
    async def slow() -> str:
        await asyncio.sleep(5)
        return "done"

    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    with connect("2025-03-26", waits) as client:
        assert (
            client.send([req(1, "tools/call", {"name": "slow", "arguments": {}}), cancel]) is None
        )
        assert client.send([req(2, "ping"), cancel]) == [ok(2, {})]  # (1 is gone: ignored)


def test_an_empty_batch_is_one_invalid_request() -> None:
    with batch_client() as client:
        assert client.send([]) == err(None, -32600, "Invalid Request")


def test_a_batch_of_notifications_or_responses_gets_no_output() -> None:
    with batch_client() as client:
        assert (
            client.send(
                [
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "method": "no/such"},
                    {"jsonrpc": "2.0", "id": 5, "result": {}},
                ]
            )
            is None
        )
        assert client.send_raw(b'[{"jsonrpc":"2.0","method":"x"}]') is None


def test_initialize_is_never_inside_a_batch() -> None:
    with batch_client() as client:
        answer = client.send(
            [req(1, "initialize", {"protocolVersion": "2025-03-26"}), req(2, "ping")]
        )
    assert answer == [
        err(1, -32600, "Invalid Request: initialize must not be part of a batch"),
        ok(2, {}),
    ]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"])
@pytest.mark.parametrize(
    "batch", [[], [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]], ids=["empty", "ping"]
)
def test_other_versions_answer_an_array_with_one_invalid_request(
    version: str, batch: list[Any]
) -> None:
    with connect(version) as client:
        assert client.send(batch) == err(
            None, -32600, "Invalid Request: batches exist only in protocol version 2025-03-26"
        )


def test_a_batch_holds_at_most_1000_messages() -> None:
    """A larger one is one -32600 (nothing in it runs); 1000 are answered."""
    with batch_client() as client:
        assert client.send([req(i, "ping") for i in range(1001)]) == err(
            None, -32600, "Invalid Request: a batch holds at most 1000 messages (1001 sent)"
        )
        assert client.send([req(i, "ping") for i in range(1000)]) == [
            ok(i, {}) for i in range(1000)
        ]


def test_an_array_before_initialize_is_one_invalid_request(fresh: SyncClient) -> None:
    answer = fresh.send([req(1, "initialize", {"protocolVersion": "2025-03-26"})])
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600


# -------------------------------------------------------------------------------- pagination


def paged_app() -> App:
    paged = App("paged", "1", options=ServerOptions(page_size=2))
    for index in range(5):
        paged.add_tool(count, name=f"tool-{index}")
    return paged


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_tools_list_pages(version: str) -> None:
    with connect(version, paged_app()) as client:
        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            result = client.request("tools/list", {"cursor": cursor} if cursor else None)
            pages.append([tool["name"] for tool in result["tools"]])
            if version == "2026-07-28":
                assert (result["ttlMs"], result["cacheScope"]) == (0, "public")
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            assert isinstance(cursor, str)
        assert pages == [["tool-0", "tool-1"], ["tool-2", "tool-3"], ["tool-4"]]
        # deterministic: the same listing every time, and the client helper follows the cursors
        assert [tool["name"] for tool in client.list_tools()] == [f"tool-{i}" for i in range(5)]
        assert client.list_tools() == client.list_tools()


@pytest.mark.parametrize("cursor", ["garbage!", "", "bzo5OQ==", "bzotMQ==", 17, None])
def test_a_bad_cursor_is_invalid_params(cursor: Any) -> None:
    with connect("2025-06-18", paged_app()) as client:
        answer = client.send(req(1, "tools/list", {"cursor": cursor}))
    if cursor is None:  # an explicit null is "no cursor"
        assert len(answer["result"]["tools"]) == 2
    else:
        assert answer == err(1, -32602, "Invalid params: unknown or expired cursor")


# -------------------------------------------------------------------------------- tools/call


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_unknown_tool(version: str) -> None:
    with connect(version) as client:
        answer = client.send(req(1, "tools/call", {"name": "nope", "arguments": {}}))
    assert answer == err(1, -32602, "Unknown tool: nope")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "Invalid params: 'name' must be a string"),
        ({"name": 5}, "Invalid params: 'name' must be a string"),
        ({"name": None, "arguments": {}}, "Invalid params: 'name' must be a string"),
        ({"name": "count", "arguments": [1]}, "Invalid params: 'arguments' must be an object"),
        ({"name": "count", "arguments": "n=1"}, "Invalid params: 'arguments' must be an object"),
    ],
)
@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_malformed_tools_call_is_invalid_params(
    version: str, params: dict[str, Any], message: str
) -> None:
    with connect(version) as client:
        if version == "2026-07-28":
            params = {**params, "_meta": META}
        assert client.send(req(1, "tools/call", params)) == err(1, -32602, message)


BAD_ARGS = {"name": "count", "arguments": {"n": "three"}}
BAD_ARGS_ERROR = {
    "code": -32602,
    "message": "Invalid params",
    "data": {"field": "n", "expected": "integer", "received": "three"},
}
BAD_ARGS_META = {
    "mcpkit/invalidArguments": [{"field": "n", "expected": "integer", "received": "three"}]
}
BAD_ARGS_RESULT = {
    "content": [
        {
            "type": "text",
            "text": "Invalid arguments for tool 'count':\n"
            '- n: expected integer; received "three"',
        }
    ],
    "isError": True,
    "_meta": BAD_ARGS_META,
}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
def test_argument_failures_are_32602_up_to_2025_06_18(version: str) -> None:
    with connect(version) as client:
        assert client.send(req(1, "tools/call", BAD_ARGS)) == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": BAD_ARGS_ERROR,
        }


def test_argument_failures_are_is_error_results_from_2025_11_25() -> None:
    with connect("2025-11-25") as client:
        assert client.send(req(1, "tools/call", BAD_ARGS)) == ok(1, BAD_ARGS_RESULT)
    with connect("2026-07-28") as client:
        answer = client.send(req(2, "tools/call", {**BAD_ARGS, "_meta": META}))
    assert answer == ok(
        2,
        {
            **BAD_ARGS_RESULT,
            "resultType": "complete",
            "_meta": {**BAD_ARGS_META, **RESULT_META},
        },
    )


def test_missing_arguments_are_an_argument_failure() -> None:
    with connect("2025-06-18") as client:
        answer = client.send(req(1, "tools/call", {"name": "count"}))
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"]["field"] == "n"


def test_every_argument_failure_is_listed_one_per_line() -> None:
    with connect("2025-11-25") as client:
        answer = client.send(req(1, "tools/call", {"name": "count", "arguments": {"m": 1}}))
    assert answer == ok(
        1,
        {
            "content": [
                {
                    "type": "text",
                    "text": "Invalid arguments for tool 'count':\n"
                    "- n: expected required; received null\n"
                    "- m: expected no such argument; received 1",
                }
            ],
            "isError": True,
            "_meta": {
                "mcpkit/invalidArguments": [
                    {"field": "n", "expected": "required", "received": None},
                    {"field": "m", "expected": "no such argument", "received": 1},
                ]
            },
        },
    )


def test_an_argument_failure_result_carries_the_items_the_error_carries() -> None:
    two_wrong = {"name": "count", "arguments": {"m": 1}}
    with connect("2025-06-18") as client:
        data = client.send(req(1, "tools/call", two_wrong))["error"]["data"]
    with connect("2025-11-25") as client:
        result = client.send(req(1, "tools/call", two_wrong))["result"]
    assert result["_meta"] == {"mcpkit/invalidArguments": data["errors"]}
    assert data["errors"] == [
        {"field": "n", "expected": "required", "received": None},
        {"field": "m", "expected": "no such argument", "received": 1},
    ]


@pytest.mark.parametrize(
    ("mode", "version", "as_error"),
    [
        ("result", "2025-06-18", False),
        ("protocol", "2025-11-25", True),
        ("protocol", "2026-07-28", True),
    ],
)
def test_invalid_arguments_override(mode: Any, version: str, as_error: bool) -> None:
    forced = App("builder", "1.0.0", options=ServerOptions(invalid_arguments=mode))
    forced.add_tool(count)
    params = {**BAD_ARGS, "_meta": META} if version == "2026-07-28" else BAD_ARGS
    with connect(version, forced) as client:
        answer = client.send(req(1, "tools/call", params))
    if as_error:
        assert answer == {"jsonrpc": "2.0", "id": 1, "error": BAD_ARGS_ERROR}
    else:
        assert answer == ok(1, BAD_ARGS_RESULT)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_tool_error_is_an_is_error_result(version: str) -> None:
    with connect(version) as client:
        answer = client.send(
            req(
                1,
                "tools/call",
                {"name": "build-app", "arguments": {"project_dir": "a", "arch": "mips"}},
            )
        )
    assert answer == ok(
        1, {"content": [{"type": "text", "text": "cannot build for mips"}], "isError": True}
    )


def test_an_unexpected_exception_is_masked_with_a_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit"), connect("2025-06-18") as client:
        answer = client.send(
            req(1, "tools/call", {"name": "crash", "arguments": {"secret": "hunter2"}})
        )
    result = answer["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "hunter2" not in text
    assert "RuntimeError" not in text
    reference = text.rsplit("reference ", 1)[1].rstrip(").")
    assert text == f"Tool 'crash' failed with an internal error (reference {reference})."
    assert len(reference) == 8
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("mcpkit.server", logging.ERROR, f"tool 'crash' failed (reference {reference})")
    ]
    exc_info = caplog.records[0].exc_info
    assert exc_info is not None
    assert "hunter2" in str(exc_info[1])


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_mask_errors_false_shows_the_exception(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    open_app = App("builder", "1.0.0", options=ServerOptions(mask_errors=False))
    open_app.add_tool(crash)
    with caplog.at_level(logging.CRITICAL, logger="mcpkit"), connect(version, open_app) as client:
        result = client.call_tool("crash", {"secret": "hunter2"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(
        "Tool 'crash' failed: RuntimeError: database password is hunter2 (reference "
    )


def test_a_result_its_output_schema_rejects_is_an_internal_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wrong_app = App("builder", "1.0.0")

    @wrong_app.tool
    def wrong() -> int:
        return "three"  # type: ignore[return-value]

    with caplog.at_level(logging.CRITICAL, logger="mcpkit"), connect("2025-11-25", wrong_app) as c:
        result = c.call_tool("wrong", {})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Tool 'wrong' failed with an internal error")


def test_an_unexpected_failure_outside_a_tool_is_32603(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: Any) -> dict[str, Any]:
        raise KeyError("boom")

    monkeypatch.setitem(methods.HANDLERS, "ping", methods.MethodSpec(broken, stateless=False))
    with caplog.at_level(logging.ERROR, logger="mcpkit"), connect("2025-06-18") as client:
        assert client.send(req(1, "ping")) == err(1, -32603, "Internal error")
        assert client.send(req(2, "tools/list"))["result"]["tools"]
    assert any("ping" in record.getMessage() for record in caplog.records)
