"""OpenTelemetry spans over the real transports: stdio (``mcpkit run`` in a subprocess, the SDK
set up globally as a deployment does) and Streamable HTTP (sessions, stateless requests,
requests refused before any session, and the host framework's HTTP span as a link)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from asgi_support import Request, request
from http_support import META, modern_headers
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
from stdio_support import Talk, mcpkit_run, server_env

from mcpkit.protocol.telemetry import OTEL_ENV

PIPE = {"network.transport": "pipe"}
HTTP = {"network.transport": "tcp", "network.protocol.name": "http"}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    monkeypatch.delenv(OTEL_ENV, raising=False)
    return Recorder()


def _call(request_id: Any, params: dict[str, Any], method: str = "tools/call") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


# --------------------------------------------------------------------------------- stdio


@synchronous
async def test_stdio_spans_in_both_eras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OTEL_ENV, raising=False)
    async with mcpkit_run("tests/otel_stdio_app.py:app") as process:
        talk = Talk(process)
        await talk.initialize()
        await talk.request(_call(1, {**ADD, "_meta": {"traceparent": TRACEPARENT}}))
        modern = {**ADD, "_meta": {**META, **CALLER}}
        await talk.request(_call(2, modern))
        answer = await talk.request(_call(3, {"name": "spans"}))
        code, _ = await talk.end()
    assert code == 0
    recorded = json.loads(answer["result"]["content"][0]["text"])
    ids = [span.pop("ids") for span in recorded]
    version = {"mcp.protocol.version": "2025-11-25"}
    assert recorded == [
        {
            "name": "initialize",
            "kind": "SERVER",
            "attributes": {
                "mcp.method.name": "initialize",
                "jsonrpc.request.id": "init",
                **PIPE,
                **version,
            },
        },
        {
            "name": "tools/call add",
            "kind": "SERVER",
            "attributes": {**CALL_ADD, "jsonrpc.request.id": "1", **PIPE, **version},
            "events": [
                {"name": "log", "mcpkit.log.level": "info", "mcpkit.log.data": "adding"},
                {
                    "name": "log",
                    "mcpkit.log.level": "debug",
                    "mcpkit.log.data": '{"a": 1, "b": 2}',
                    "mcpkit.log.logger": "math",
                },
            ],
        },
        {
            "name": "tools/call add",
            "kind": "SERVER",
            "attributes": {
                **CALL_ADD,
                "jsonrpc.request.id": "2",
                **PIPE,
                "mcp.protocol.version": "2026-07-28",
            },
            "events": [
                {"name": "log", "mcpkit.log.level": "info", "mcpkit.log.data": "adding"},
                {
                    "name": "log",
                    "mcpkit.log.level": "debug",
                    "mcpkit.log.data": '{"a": 1, "b": 2}',
                    "mcpkit.log.logger": "math",
                },
            ],
        },
    ]
    assert [(trace_id, parent) for trace_id, _, parent in ids[1:]] == [
        (TRACE_ID, CALLER_SPAN),
        (TRACE_ID, CALLER_SPAN),
    ]


# ---------------------------------------------------------------------------------- HTTP


@synchronous
async def test_http_session_spans_carry_the_session_id(recorder: Recorder) -> None:
    asgi = build(recorder.provider).asgi(json_response=True)
    opened = await request(asgi, "POST", _call(0, INITIALIZE, "initialize"))
    session = opened.headers["mcp-session-id"]
    headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    await request(asgi, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    called = await request(asgi, "POST", _call(1, {**ADD, "_meta": CALLER}), headers)
    assert called.json["result"]["structuredContent"] == {"result": 3}
    await asgi.aclose()
    version = {"mcp.protocol.version": "2025-11-25"}
    initialize, call = recorder.spans()
    assert (initialize.name, dict(initialize.attributes or {})) == (
        "initialize",
        {"mcp.method.name": "initialize", "jsonrpc.request.id": "0", **HTTP, **version},
    )
    assert (call.name, dict(call.attributes or {})) == (
        "tools/call add",
        {
            **CALL_ADD,
            "jsonrpc.request.id": "1",
            **HTTP,
            **version,
            "mcp.session.id": session,
        },
    )
    assert hex_ids(call)[::2] == (TRACE_ID, CALLER_SPAN)


@synchronous
async def test_http_stateless_spans_and_the_host_span_as_a_link(recorder: Recorder) -> None:
    asgi = build(recorder.provider).asgi(stateless=True, json_response=True)
    host = recorder.provider.get_tracer("host")
    with host.start_as_current_span("POST /mcp") as http_span:
        modern = {**ADD, "_meta": {**META, **CALLER}}
        await request(asgi, "POST", _call(1, modern), modern_headers("tools/call", "add"))
        plain = {**ADD, "_meta": META}
        await request(asgi, "POST", _call(2, plain), modern_headers("tools/call", "add"))
    await asgi.aclose()
    *_, with_meta, without = (s for s in recorder.spans() if s.name == "tools/call add")
    expected = {**CALL_ADD, **HTTP, "mcp.protocol.version": "2026-07-28"}
    assert dict(with_meta.attributes or {}) == {**expected, "jsonrpc.request.id": "1"}
    assert dict(without.attributes or {}) == {**expected, "jsonrpc.request.id": "2"}
    outer = http_span.get_span_context()
    assert hex_ids(with_meta)[::2] == (TRACE_ID, CALLER_SPAN)
    assert [(link.context.trace_id, link.context.span_id) for link in with_meta.links] == [
        (outer.trace_id, outer.span_id)
    ]
    assert without.parent is not None
    assert (without.parent.trace_id, without.parent.span_id) == (outer.trace_id, outer.span_id)
    assert without.links == ()


@synchronous
async def test_http_handshake_era_requests_without_a_session(recorder: Recorder) -> None:
    asgi = build(recorder.provider).asgi(stateless=True, json_response=True)
    answer = await request(asgi, "POST", _call(4, ADD), {"mcp-protocol-version": "2025-06-18"})
    assert answer.json["result"]["structuredContent"] == {"result": 3}
    await asgi.aclose()
    (span,) = recorder.spans()
    expected = {**CALL_ADD, "jsonrpc.request.id": "4", **HTTP, "mcp.protocol.version": "2025-06-18"}
    assert dict(span.attributes or {}) == expected


@synchronous
async def test_a_request_that_also_carries_a_result_is_traced_as_on_stdio(
    recorder: Recorder,
) -> None:
    """A message with a method and a result is run as the request its method names (the
    method is read first), and, as over stdio, where the tracer reads the raw message, it
    gets no span: admission hands it on unparsed, as it does every message that is not
    plainly one request."""
    asgi = build(recorder.provider).asgi(stateless=True, json_response=True)
    both = {**_call(5, ADD), "result": {}}
    answer = await request(asgi, "POST", both, {"mcp-protocol-version": "2025-06-18"})
    assert answer.json["result"]["structuredContent"] == {"result": 3}
    await asgi.aclose()
    assert recorder.spans() == []


@synchronous
async def test_requests_http_refuses_before_a_session_get_spans(recorder: Recorder) -> None:
    asgi = build(recorder.provider).asgi(json_response=True)
    no_capabilities = {
        **ADD,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", **CALLER},
    }
    refused = await request(
        asgi, "POST", _call(5, no_capabilities), modern_headers("tools/call", "add")
    )
    assert refused.status == 400
    mismatch = await request(
        asgi, "POST", _call(6, {**ADD, "_meta": META}), modern_headers("tools/call", "other")
    )
    assert (mismatch.status, mismatch.json["error"]["code"]) == (400, -32020)
    bad_version = await request(
        asgi, "POST", _call(7, {}, "tools/list"), {"mcp-protocol-version": "1999-01-01"}
    )
    assert bad_version.status == 400
    unreadable = Request("POST", raw=b"{not json")  # nothing to name: no span
    await unreadable.serve(asgi)
    assert unreadable.status == 400
    await asgi.aclose()
    spans = recorder.spans()
    said = [(span.name, dict(span.attributes or {}), span.status.description) for span in spans]
    assert said == [
        (
            "tools/call add",
            {
                **CALL_ADD,
                "jsonrpc.request.id": "5",
                **HTTP,
                "mcp.protocol.version": "2026-07-28",
                "error.type": "-32602",
                "rpc.response.status_code": "-32602",
            },
            refused.json["error"]["message"],
        ),
        (
            "tools/call add",
            {
                **CALL_ADD,
                "jsonrpc.request.id": "6",
                **HTTP,
                "mcp.protocol.version": "2026-07-28",
                "error.type": "-32020",
                "rpc.response.status_code": "-32020",
            },
            mismatch.json["error"]["message"],
        ),
        (
            "tools/list",
            {
                "mcp.method.name": "tools/list",
                "jsonrpc.request.id": "7",
                **HTTP,
                "error.type": "-32022",
                "rpc.response.status_code": "-32022",
            },
            "Bad Request: unsupported MCP-Protocol-Version '1999-01-01'",
        ),
    ]
    assert hex_ids(spans[0])[::2] == (TRACE_ID, CALLER_SPAN)  # refused, still in the trace


# ---------------------------------------------------------------- the official mcp client


def test_the_official_client_trace_continues_in_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(OTEL_ENV, raising=False)
    script = Path(__file__).with_name("otel_interop_client.py")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=script.parent,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    spans = json.loads(done.stdout)
    client = {
        name.removeprefix("MCP send "): (trace_id, span)
        for name, trace_id, span, _ in spans["client"]
    }
    server = [(name, trace_id, parent) for name, trace_id, _, parent in spans["server"]]
    assert [name for name, _, _ in server] == ["initialize", "tools/call add", "tools/list"]
    assert server == [(name, *client[name]) for name, _, _ in server]  # each the child of its call
