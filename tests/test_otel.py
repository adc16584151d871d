"""OpenTelemetry spans of the in-memory test client's requests, in every era: names and
attributes as the MCP semantic conventions say, parentage from ``_meta``, links, refusals,
``isError``, span events for log messages, and the ``MCPKIT_OTEL`` modes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry import baggage, trace
from otel_support import (
    ADD,
    CALL_ADD,
    CALLER,
    CALLER_SPAN,
    TRACE_ID,
    TRACEPARENT,
    Recorder,
    build,
    hex_ids,
    synchronous,
)

from mcpkit import Context
from mcpkit.protocol.server import Server
from mcpkit.protocol.telemetry import OTEL_ENV
from mcpkit.testing import Client

LOGGED = [
    {"name": "log", "mcpkit.log.level": "info", "mcpkit.log.data": "adding"},
    {
        "name": "log",
        "mcpkit.log.level": "debug",
        "mcpkit.log.data": '{"a": 1, "b": 2}',
        "mcpkit.log.logger": "math",
    },
]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    monkeypatch.delenv(OTEL_ENV, raising=False)
    return Recorder()


@synchronous
async def test_handshake_era_spans(recorder: Recorder) -> None:
    async with Client(build(recorder.provider)) as client:
        await client.request("tools/call", ADD)
        await client.request("tools/call", {"name": "fail", "arguments": {}})
        await client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
        await client.request("resources/read", {"uri": "notes://today"})
        await client.request("tools/list")
    version = {"mcp.protocol.version": "2025-11-25"}
    assert recorder.summaries() == [
        {
            "name": "initialize",
            "kind": "SERVER",
            "attributes": {"mcp.method.name": "initialize", "jsonrpc.request.id": "1", **version},
        },
        {
            "name": "tools/call add",
            "kind": "SERVER",
            "attributes": {**CALL_ADD, "jsonrpc.request.id": "2", **version},
            "events": LOGGED,
        },
        {
            "name": "tools/call fail",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "tools/call",
                "jsonrpc.request.id": "3",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "fail",
                **version,
                "error.type": "tool_error",
            },
            "status": "ERROR",
        },
        {
            "name": "prompts/get greet",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "prompts/get",
                "jsonrpc.request.id": "4",
                "gen_ai.prompt.name": "greet",
                **version,
            },
        },
        {
            "name": "resources/read",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "resources/read",
                "jsonrpc.request.id": "5",
                "mcp.resource.uri": "notes://today",
                **version,
            },
        },
        {
            "name": "tools/list",
            "kind": "SERVER",
            "attributes": {"mcp.method.name": "tools/list", "jsonrpc.request.id": "6", **version},
        },
    ]


@synchronous
async def test_stateless_era_spans_and_refusals(recorder: Recorder) -> None:
    async with Client(build(recorder.provider), protocol_version="2026-07-28") as client:
        await client.request("tools/call", ADD)
        no_capabilities = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
        refused = {"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": no_capabilities}
        await client.send(refused)
        unknown = {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        }
        await client.send({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": unknown})
    assert recorder.summaries() == [
        {
            "name": "tools/call add",
            "kind": "SERVER",
            "attributes": {
                **CALL_ADD,
                "jsonrpc.request.id": "1",
                "mcp.protocol.version": "2026-07-28",
            },
            "events": LOGGED,
        },
        {
            "name": "tools/list",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "tools/list",
                "jsonrpc.request.id": "x",
                "mcp.protocol.version": "2026-07-28",
                "error.type": "-32602",
                "rpc.response.status_code": "-32602",
            },
            "status": "ERROR: Invalid params: _meta must carry "
            "'io.modelcontextprotocol/protocolVersion' (a string) and "
            "'io.modelcontextprotocol/clientCapabilities' (an object)",
        },
        {
            "name": "tools/list",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "tools/list",
                "jsonrpc.request.id": "9",
                "error.type": "-32022",
                "rpc.response.status_code": "-32022",
            },
            "status": "ERROR: Unsupported protocol version",
        },
    ]


@synchronous
async def test_refused_envelopes_get_spans_and_notifications_none(recorder: Recorder) -> None:
    async with Client(build(recorder.provider), initialize=False) as client:
        await client.send({"jsonrpc": "1.0", "id": 7, "method": "tools/list"})
        await client.send({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})  # no session
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await client.send({"jsonrpc": "2.0", "id": 1, "result": {}})  # an answer: no request
        await client.send({"jsonrpc": "2.0", "id": 2, "method": 5})  # nameless: no span
    assert recorder.summaries() == [
        {
            "name": "tools/list",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "tools/list",
                "jsonrpc.request.id": "7",
                "jsonrpc.protocol.version": "1.0",
                "error.type": "-32600",
                "rpc.response.status_code": "-32600",
            },
            "status": "ERROR: Invalid Request",
        },
        {
            "name": "tools/list",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "tools/list",
                "jsonrpc.request.id": "8",
                "error.type": "-32602",
                "rpc.response.status_code": "-32602",
            },
            "status": "ERROR: Invalid params: no session; send 'initialize' first, or carry "
            "_meta 'io.modelcontextprotocol/protocolVersion' and "
            "'io.modelcontextprotocol/clientCapabilities' on every request",
        },
    ]


@synchronous
async def test_batch_members_get_a_span_each(recorder: Recorder) -> None:
    async with Client(build(recorder.provider), protocol_version="2025-03-26") as client:
        answers = await client.send(
            [
                {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": ADD},
                {"jsonrpc": "2.0", "id": 11, "method": "nope"},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
            ]
        )
    assert [answer["id"] for answer in answers] == [10, 11]
    version = {"mcp.protocol.version": "2025-03-26"}
    assert sorted(
        recorder.summaries()[1:], key=lambda s: s["attributes"]["jsonrpc.request.id"]
    ) == [
        {
            "name": "tools/call add",
            "kind": "SERVER",
            "attributes": {**CALL_ADD, "jsonrpc.request.id": "10", **version},
            "events": LOGGED,
        },
        {
            "name": "nope",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "nope",
                "jsonrpc.request.id": "11",
                **version,
                "error.type": "-32601",
                "rpc.response.status_code": "-32601",
            },
            "status": "ERROR: Method not found: nope",
        },
    ]


@synchronous
async def test_an_older_version_is_traced_too(recorder: Recorder) -> None:
    async with Client(build(recorder.provider), protocol_version="2024-11-05") as client:
        await client.request("ping")
    assert recorder.summaries()[-1] == {
        "name": "ping",
        "kind": "SERVER",
        "attributes": {
            "mcp.method.name": "ping",
            "jsonrpc.request.id": "2",
            "mcp.protocol.version": "2024-11-05",
        },
    }


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
@synchronous
async def test_the_meta_trace_context_is_the_parent(recorder: Recorder, version: str) -> None:
    app = build(recorder.provider)
    seen: dict[str, Any] = {}

    @app.tool
    def inside() -> str:
        """What the handler sees of the caller's trace."""
        span = trace.get_current_span().get_span_context()
        seen.update(trace=f"{span.trace_id:032x}", baggage=baggage.get_baggage("user"))
        return "ok"

    async with Client(app, protocol_version=version) as client:
        await client.request("tools/call", {"name": "inside", "_meta": CALLER})
        await client.request("tools/list")  # no _meta context: a new trace
    *_, called, listed = recorder.spans()
    trace_id, _, parent = hex_ids(called)
    assert (trace_id, parent) == (TRACE_ID, CALLER_SPAN)
    assert called.parent is not None
    assert called.parent.is_remote
    context = called.get_span_context()
    assert context is not None
    assert dict(context.trace_state) == {"congo": "t61rcWkgMzE"}
    assert called.links == ()
    assert seen == {"trace": TRACE_ID, "baggage": "alice"}
    assert listed.parent is None
    assert hex_ids(listed)[0] != TRACE_ID


@synchronous
async def test_a_current_span_is_linked_never_replaced(recorder: Recorder) -> None:
    host = recorder.provider.get_tracer("host")
    async with Client(build(recorder.provider)) as client:
        with host.start_as_current_span("POST /mcp") as http_span:
            await client.request("tools/call", {**ADD, "_meta": {"traceparent": TRACEPARENT}})
            await client.request("tools/list")
    called, listed = (s for s in recorder.spans() if s.name in ("tools/call add", "tools/list"))
    http = http_span.get_span_context()
    assert hex_ids(called)[::2] == (TRACE_ID, CALLER_SPAN)  # the caller's, from _meta
    assert [(link.context.trace_id, link.context.span_id) for link in called.links] == [
        (http.trace_id, http.span_id)
    ]
    assert listed.parent is not None  # without _meta: the current span is the parent
    assert (listed.parent.trace_id, listed.parent.span_id) == (http.trace_id, http.span_id)
    assert listed.links == ()


@synchronous
async def test_a_malformed_traceparent_falls_back_to_the_current_context(
    recorder: Recorder,
) -> None:
    async with Client(build(recorder.provider)) as client:
        await client.request("tools/call", {**ADD, "_meta": {"traceparent": "00-nonsense"}})
    called = recorder.spans()[-1]
    assert called.name == "tools/call add"
    assert called.parent is None
    assert called.links == ()


@synchronous
async def test_a_cancelled_request_ends_its_span_as_cancelled(recorder: Recorder) -> None:
    app = build(recorder.provider)
    started = asyncio.Event()

    @app.tool
    async def wait(ctx: Context) -> str:
        """Waits to be cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    async with Client(app) as client:
        message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait"}}
        call = asyncio.ensure_future(client.send(message))
        await started.wait()
        await client.notify("notifications/cancelled", {"requestId": 2})
        assert await call is None  # a cancelled request is not answered
    assert recorder.summaries()[-1] == {
        "name": "tools/call wait",
        "kind": "SERVER",
        "attributes": {
            "mcp.method.name": "tools/call",
            "jsonrpc.request.id": "2",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "wait",
            "mcp.protocol.version": "2025-11-25",
            "error.type": "cancelled",
        },
        "status": "ERROR",
    }


@synchronous
async def test_propagate_mode_emits_no_span_but_joins_the_trace(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OTEL_ENV, "propagate")
    app = build(recorder.provider)
    mine = recorder.provider.get_tracer("user")

    @app.tool
    async def work() -> str:
        """Opens a span of its own."""
        with mine.start_as_current_span("user work"):
            return "done"

    @app.tool
    def threaded() -> str:
        """A sync tool runs in a worker thread: the caller's context goes with it."""
        with mine.start_as_current_span("user thread"):
            return str(baggage.get_baggage("user"))

    async with Client(app) as client:
        await client.request("tools/call", {"name": "work", "_meta": CALLER})
        answer = await client.request("tools/call", {"name": "threaded", "_meta": CALLER})
        await client.request("tools/call", ADD)  # log messages: no span, no event
    assert answer["content"] == [{"type": "text", "text": "alice"}]
    assert [(span.name, *hex_ids(span)[::2]) for span in recorder.spans()] == [
        ("user work", TRACE_ID, CALLER_SPAN),
        ("user thread", TRACE_ID, CALLER_SPAN),
    ]


@synchronous
async def test_off_mode_emits_nothing(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OTEL_ENV, "off")
    app = build(recorder.provider)
    assert Server(app).telemetry is None
    async with Client(app) as client:
        await client.request("tools/call", {**ADD, "_meta": CALLER})
    assert recorder.spans() == []


def test_without_a_tracer_provider_nothing_is_traced(recorder: Recorder) -> None:
    telemetry = Server(build()).telemetry
    assert telemetry is not None
    assert telemetry.spans() is None  # no SDK installed a global provider in this process


def test_an_unknown_mode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OTEL_ENV, "verbose")
    expected = r"^MCPKIT_OTEL must be on, off or propagate, not 'verbose'$"
    with pytest.raises(ValueError, match=expected):
        Server(build())
