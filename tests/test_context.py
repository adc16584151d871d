"""``mcpkit.Context``, what a tool sees of its request and what it can send, on the wire:
progress, logging (and ``logging/setLevel``), the request's facts in both eras.

Elsewhere, next to the feature each belongs to: ``ctx.state`` (``test_lifespan.py``),
``elicit``/``sample``/``list_roots`` per era (``test_elicitation.py``), ``read_resource``
(``test_resources.py``), ``principal`` under HTTP auth (``test_http_client.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import App, Context
from mcpkit.testing import Client

V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LEVEL = "io.modelcontextprotocol/logLevel"
INFO = "io.modelcontextprotocol/clientInfo"
META = {V: "2026-07-28", CAPS: {}}
TIMEOUT = 5.0

app = App("context", "1.0")


@app.tool
async def steps(ctx: Context) -> str:
    """Report progress, some of it not increasing."""
    await ctx.report_progress(1, 4, "one")
    await ctx.report_progress(2, 4)
    await ctx.report_progress(2, 4, "again: dropped")
    await ctx.report_progress(1.5, None, "backwards: dropped")
    await ctx.report_progress(3.5, message="three and a half")
    return "done"


@app.tool
async def chatty(ctx: Context) -> str:
    """Log at four levels."""
    await ctx.debug("d")
    await ctx.info({"step": 1})
    await ctx.warning("w", logger="disk")
    await ctx.error("e")
    return "ok"


@app.tool
async def whoami(ctx: Context) -> dict[str, Any]:
    """What the context knows."""
    return {
        "request_id": ctx.request_id,
        "protocol_version": ctx.protocol_version,
        "client_info": ctx.client_info,
        "client_capabilities": ctx.client_capabilities,
    }


def req(request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def call(request_id: Any, name: str, **params: Any) -> dict[str, Any]:
    return req(request_id, "tools/call", {"name": name, "arguments": {}, **params})


def text(response: dict[str, Any]) -> str:
    value: str = response["result"]["content"][0]["text"]
    return value


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


# --------------------------------------------------------------------------------- progress


def progress(
    token: Any, value: float, total: float | None = None, message: str | None = None
) -> Any:
    params: dict[str, Any] = {"progressToken": token, "progress": value}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


@pytest.mark.parametrize("token", ["tok-1", 42, 0])
def test_progress_with_a_token_is_strictly_increasing(token: Any) -> None:
    async def scenario() -> tuple[Any, list[dict[str, Any]]]:
        async with Client(app, protocol_version="2025-06-18") as client:
            answer = await client.send(call(1, "steps", _meta={"progressToken": token}))
            return answer, client.notifications

    answer, notes = run(scenario())
    assert text(answer) == "done"
    assert notes == [
        progress(token, 1, 4, "one"),
        progress(token, 2, 4),
        progress(token, 3.5, None, "three and a half"),
    ]


def test_progress_message_only_from_2025_03_26() -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with Client(app, protocol_version="2024-11-05") as client:
            await client.send(call(1, "steps", _meta={"progressToken": "t"}))
            return client.notifications

    assert run(scenario()) == [progress("t", 1, 4), progress("t", 2, 4), progress("t", 3.5)]


@pytest.mark.parametrize("meta", [None, {}, {"progressToken": None}, {"progressToken": 1.5}])
def test_no_progress_without_a_valid_token(meta: Any) -> None:
    async def scenario() -> tuple[Any, list[dict[str, Any]]]:
        async with Client(app, protocol_version="2025-06-18") as client:
            extra = {} if meta is None else {"_meta": meta}
            answer = await client.send(call(1, "steps", **extra))
            return answer, client.notifications

    answer, notes = run(scenario())
    assert text(answer) == "done"
    assert notes == []


def test_progress_in_the_stateless_era() -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with Client(app, protocol_version="2026-07-28") as client:
            await client.send(call(1, "steps", _meta={**META, "progressToken": "p"}))
            return client.notifications

    assert run(scenario())[0] == progress("p", 1, 4, "one")


# ---------------------------------------------------------------------------------- logging


def message(level: str, data: Any, logger: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"level": level, "data": data}
    if logger is not None:
        params["logger"] = logger
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


def test_handshake_logging_waits_for_set_level() -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any], Any]:
        async with Client(app, protocol_version="2025-06-18") as client:
            await client.send(call(1, "chatty"))
            before = list(client.notifications)
            assert await client.send(req(2, "logging/setLevel", {"level": "warning"})) == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {},
            }
            await client.send(call(3, "chatty"))
            warned = list(client.notifications)
            client.notifications.clear()
            await client.send(req(4, "logging/setLevel", {"level": "debug"}))
            await client.send(call(5, "chatty"))
            everything = list(client.notifications)
            bad = await client.send(req(6, "logging/setLevel", {"level": "verbose"}))
            return before, warned, everything, bad

    before, warned, everything, bad = run(scenario())
    assert before == []
    assert warned == [message("warning", "w", "disk"), message("error", "e")]
    assert everything == [
        message("debug", "d"),
        message("info", {"step": 1}),
        message("warning", "w", "disk"),
        message("error", "e"),
    ]
    assert bad["error"]["code"] == -32602
    assert bad["error"]["message"].startswith("Invalid params: unknown log level 'verbose'")


@pytest.mark.parametrize("params", [{}, {"level": None}, {"level": "WARNING"}, {"level": 3}])
def test_set_level_with_an_unknown_level_is_invalid_params(params: dict[str, Any]) -> None:
    async def scenario() -> Any:
        async with Client(app, protocol_version="2025-11-25") as client:
            return await client.send(req(1, "logging/setLevel", params))

    assert run(scenario())["error"]["code"] == -32602


def test_stateless_logging_only_with_a_log_level_in_meta() -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any], Any]:
        async with Client(app, protocol_version="2026-07-28") as client:
            await client.send(call(1, "chatty", _meta=META))
            without = list(client.notifications)
            await client.send(call(2, "chatty", _meta={**META, LEVEL: "error"}))
            only_error = list(client.notifications)
            client.notifications.clear()
            await client.send(call(3, "chatty", _meta=META))  # that level was for one request
            after = list(client.notifications)
            bad = await client.send(call(4, "chatty", _meta={**META, LEVEL: "loud"}))
            return without, only_error, after, bad

    without, only_error, after, bad = run(scenario())
    assert without == []
    assert only_error == [message("error", "e")]
    assert after == []
    assert bad == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32602, "message": "Invalid params: unknown log level 'loud'"},
    }


# ---------------------------------------------------------------------------------- context


def test_the_context_knows_the_request_in_both_eras() -> None:
    info = {"name": "probe", "version": "9"}
    caps: dict[str, Any] = {"sampling": {}}

    async def scenario() -> tuple[Any, Any]:
        async with Client(
            app, protocol_version="2025-06-18", client_info=info, capabilities=caps
        ) as client:
            handshake = await client.send(call("r-1", "whoami"))
        async with Client(
            app, protocol_version="2026-07-28", client_info=info, capabilities=caps
        ) as client:
            stateless = await client.send(call(5, "whoami", _meta={**META, CAPS: caps, INFO: info}))
        return handshake["result"]["structuredContent"], stateless["result"]["structuredContent"]

    handshake, stateless = run(scenario())
    expected = {"client_info": info, "client_capabilities": caps}
    assert handshake == {"request_id": "r-1", "protocol_version": "2025-06-18", **expected}
    assert stateless == {"request_id": 5, "protocol_version": "2026-07-28", **expected}


@app.tool
def principal(ctx: Context) -> str:
    """Who the caller is, as text."""
    return repr(ctx.principal)


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_without_http_auth_the_principal_is_none(version: str) -> None:
    async def scenario() -> Any:
        async with Client(app, protocol_version=version) as client:
            return await client.call_tool("principal", {})

    assert run(scenario())["content"] == [{"type": "text", "text": "None"}]
