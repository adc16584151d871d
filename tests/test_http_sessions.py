"""Handshake-era HTTP sessions, in-process over ASGI: the cap and idle expiry, and each session
bound to the principal that opened it (its requests, and its answers to server requests)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

import pytest
from asgi_support import Exchange, request, run

from mcpkit import App, Context
from mcpkit.transports.http import BearerAuth, HttpApp, static_tokens

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
ASK = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}
HOLD = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hold"}}
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
ADA, BOB = {"authorization": "Bearer ada-token"}, {"authorization": "Bearer bob-token"}


class Tools:
    """An App with a tool that asks the client, and one that holds until released."""

    def __init__(self) -> None:
        self.held = asyncio.Event()
        self.release = asyncio.Event()
        self.app = App("sessions-test", version="1.0.0")

        @self.app.tool
        async def ask(ctx: Context) -> str:
            """Ask the user for a name."""
            answer = await ctx.elicit("Name?", FORM)
            return f"{answer.action}: {answer.content}"

        @self.app.tool
        async def hold() -> str:
            """Wait until the test releases it."""
            self.held.set()
            await self.release.wait()
            return "released"


def gone(request_id: Any) -> dict[str, Any]:
    message = "Session not found: it ended; send initialize to start anew"
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": message}}


async def open_session(asgi: HttpApp, headers: Mapping[str, str] | None = None) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    reply = await request(asgi, "POST", body, headers)
    assert reply.status == 200, reply.body
    session_id = reply.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    in_session = {**(headers or {}), "mcp-session-id": session_id}
    assert (await request(asgi, "POST", note, in_session)).status == 202
    return session_id


async def status(asgi: HttpApp, session_id: str, headers: Mapping[str, str] | None = None) -> int:
    """The status of a ``tools/list`` in the session (200 while it lives, 404 once it ended)."""
    reply = await request(asgi, "POST", LIST, {**(headers or {}), "mcp-session-id": session_id})
    return reply.status


# ---------------------------------------------------------------------- cap and expiry


def test_at_the_cap_the_least_recently_used_idle_session_goes_first() -> None:
    async def test() -> None:
        asgi = Tools().app.asgi(max_sessions=2)
        first, second = await open_session(asgi), await open_session(asgi)
        assert await status(asgi, first) == 200  # first is now the more recently used
        third = await open_session(asgi)
        evicted = await request(asgi, "POST", LIST, {"mcp-session-id": second})
        assert (evicted.status, evicted.json) == (404, gone(1))
        assert [await status(asgi, s) for s in (first, third)] == [200, 200]

    run(test)


@pytest.mark.parametrize("busy_with", ["a GET stream", "a request"])
def test_a_busy_session_is_never_evicted_and_a_house_full_of_them_answers_503(
    busy_with: str,
) -> None:
    async def test() -> None:
        tools = Tools()
        asgi = tools.app.asgi(max_sessions=1)
        busy = await open_session(asgi)
        if busy_with == "a GET stream":
            headers = {"mcp-session-id": busy, "accept": "text/event-stream"}
            exchange = Exchange(asgi, "GET", headers=headers)
            while not exchange.received:  # the priming event: the stream is open
                await exchange.arrived.wait()
        else:
            exchange = Exchange(asgi, "POST", HOLD, {"mcp-session-id": busy})
            await tools.held.wait()
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        refused = await request(asgi, "POST", initialize)
        text = "Service Unavailable: all 1 sessions are in use (max_sessions=1); try again later"
        error = {"code": -32603, "message": text}
        assert (refused.status, refused.json) == (503, {"jsonrpc": "2.0", "id": 0, "error": error})
        assert "mcp-session-id" not in refused.headers
        tools.release.set()
        exchange.close()
        assert (await exchange.reply()).status == 200
        newer = await open_session(asgi)  # the busy session is idle now: it makes room
        assert [await status(asgi, s) for s in (busy, newer)] == [404, 200]

    run(test)


def test_idle_sessions_expire_but_busy_ones_do_not() -> None:
    async def test() -> None:
        tools = Tools()
        asgi = tools.app.asgi(session_idle_seconds=0)
        idle, busy = await open_session(asgi), await open_session(asgi)
        holding = Exchange(asgi, "POST", HOLD, {"mcp-session-id": busy})
        await tools.held.wait()
        await open_session(asgi)  # expires every idle session: not the one with a call
        assert await status(asgi, idle) == 404
        tools.release.set()
        answer = (await holding.reply()).json
        assert answer["result"]["content"] == [{"type": "text", "text": "released"}]
        assert await status(asgi, busy) == 200

    run(test)


# ------------------------------------------------------------------------- principals


def with_auth(tools: Tools) -> HttpApp:
    verify = static_tokens({"ada-token": "ada", "bob-token": "bob"})
    return HttpApp(tools.app, auth=BearerAuth(verify))


def test_a_session_serves_only_the_principal_that_opened_it() -> None:
    async def test() -> None:
        asgi = with_auth(Tools())
        session = await open_session(asgi, ADA)
        stolen = {**BOB, "mcp-session-id": session}
        reply = await request(asgi, "POST", LIST, stolen)
        assert (reply.status, reply.json) == (404, gone(1))
        stream = {**stolen, "accept": "text/event-stream"}
        assert (await request(asgi, "GET", headers=stream)).json == gone(None)
        assert (await request(asgi, "DELETE", headers=stolen)).json == gone(None)
        assert await status(asgi, session, ADA) == 200  # still there: bob's DELETE did nothing

    run(test)


def test_a_principal_is_the_same_caller_across_tokens_by_its_subject() -> None:
    claims = {
        "ada-1": {"iss": "https://auth", "sub": "ada", "exp": 1},
        "ada-2": {"iss": "https://auth", "sub": "ada", "exp": 2},
        "ada-elsewhere": {"iss": "https://other", "sub": "ada", "exp": 2},
    }

    async def test() -> None:
        asgi = Tools().app.asgi(auth=claims.get)
        session = await open_session(asgi, {"authorization": "Bearer ada-1"})
        refreshed = {"authorization": "Bearer ada-2"}
        assert await status(asgi, session, refreshed) == 200
        assert await status(asgi, session, {"authorization": "Bearer ada-elsewhere"}) == 404

    run(test)


def test_only_the_sessions_principal_can_answer_its_server_request() -> None:
    async def test() -> None:
        asgi = with_auth(Tools())
        session = await open_session(asgi, ADA)
        call = Exchange(asgi, "POST", ASK, {**ADA, "mcp-session-id": session})
        asked = await call.message()
        assert asked["method"] == "elicitation/create"
        forged = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}}
        forged["result"]["content"] = {"name": "mallory"}
        reply = await request(asgi, "POST", forged, {**BOB, "mcp-session-id": session})
        # a client's answer is never answered with its id (the id is the server's own)
        assert (reply.status, reply.json) == (404, gone(None))
        answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}}
        answer["result"]["content"] = {"name": "ada"}
        reply = await request(asgi, "POST", answer, {**ADA, "mcp-session-id": session})
        assert (reply.status, reply.body) == (202, b"")
        result = await call.message()
        assert result["result"]["content"] == [{"type": "text", "text": "accept: {'name': 'ada'}"}]

    run(test)


def test_server_request_ids_are_unguessable() -> None:
    async def first_request_id(asgi: HttpApp) -> Any:
        session = await open_session(asgi)
        call = Exchange(asgi, "POST", ASK, {"mcp-session-id": session})
        request_id = (await call.message())["id"]
        call.close()
        return request_id

    async def test() -> None:
        asgi = Tools().app.asgi()
        ids = [await first_request_id(asgi) for _ in range(2)]
        assert ids[0] != ids[1]
        for request_id in ids:  # 128 random bits, URL-safe Base64
            assert isinstance(request_id, str)
            assert re.fullmatch(r"[A-Za-z0-9_-]{22}", request_id), request_id

    run(test)
