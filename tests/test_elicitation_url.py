"""URL-mode elicitation (SEP-1036) in memory, exact wire: ``ctx.elicit_url`` and
``notifications/elicitation/complete`` (2025-11-25), input requests with the id kept in
``requestState`` (2026-07-28), ``UrlElicitationRequired`` (``-32042``, or an input request),
and the clients that did not declare ``elicitation.url``."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import url_elicitation_app as connect
from features_support import HANDSHAKE, STATELESS, Client, era, rpc_error, run, text_of

from mcpkit import App, Call, UrlElicitationRequired

URL_MODE: dict[str, Any] = {"elicitation": {"url": {}}}
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "connect", "version": "1.0.0"}}


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connect, "WAITING", {})
    monkeypatch.setattr(connect, "TOKENS", {})
    monkeypatch.setattr(connect, "PAID", set())


def accepting(params: Any) -> dict[str, Any]:
    return {"action": "accept"}


def flow_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["flow"][0]


async def completed(client: Client, count: int) -> list[dict[str, Any]]:
    """The client's notifications once ``count`` arrived (they are sent from another thread)."""
    while len(client.notifications) < count:
        await asyncio.sleep(0.001)
    return client.notifications


def test_handshake_asks_with_an_id_and_completes_the_session_that_asked() -> None:
    async def scenario() -> None:
        async with (
            Client(connect.app, capabilities=URL_MODE, elicitation=accepting) as asker,
            Client(connect.app, capabilities=URL_MODE, elicitation=accepting) as other,
        ):
            waiting = text_of(await asker.call_tool("list_repos"))
            [request] = asker.server_requests
            flow = request["params"]["elicitationId"]
            assert request == {
                "jsonrpc": "2.0",
                "id": request["id"],
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": "Connect your GitHub account.",
                    "url": f"https://auth.example.com/connect?flow={flow}",
                    "elicitationId": flow,
                },
            }
            assert waiting == f"Waiting for flow {flow}: finish in your browser, then ask again."
            assert text_of(await other.call_tool("oauth_callback", {"flow": flow})) == "connected"
            assert await completed(asker, 1) == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/elicitation/complete",
                    "params": {"elicitationId": flow},
                }
            ]
            connect.app.complete_elicitation(flow)  # again: that client is told only once
            connect.app.complete_elicitation("never-asked")
            answer = await asker.call_tool("list_repos")
            assert text_of(answer) == "ada's repositories: mcpkit, notes"
            assert len(asker.notifications) == 1
            assert other.notifications == []  # only the session that asked hears of it

    run(scenario)


@pytest.mark.parametrize("action", ["decline", "cancel"])
@era
def test_a_refusal_reaches_the_tool(version: str, action: str) -> None:
    async def scenario() -> str:
        async with Client(
            connect.app,
            protocol_version=version,
            capabilities=URL_MODE,
            elicitation=lambda params: {"action": action},
        ) as client:
            return text_of(await client.call_tool("list_repos"))

    assert run(scenario) == f"Not connected ({action})."


def test_stateless_asks_with_an_input_request_and_keeps_the_id_in_request_state() -> None:
    async def scenario() -> None:
        async with Client(connect.app, protocol_version=STATELESS, capabilities=URL_MODE) as c:
            first = await c.request("tools/call", {"name": "list_repos", "arguments": {}})
            asked = first["inputRequests"]["elicitation-1"]
            flow = flow_of(asked["params"]["url"])
            assert first == {
                "resultType": "input_required",
                "inputRequests": {
                    "elicitation-1": {
                        "method": "elicitation/create",
                        "params": {  # no elicitationId in 2026-07-28
                            "mode": "url",
                            "message": "Connect your GitHub account.",
                            "url": f"https://auth.example.com/connect?flow={flow}",
                        },
                    }
                },
                "requestState": first["requestState"],
                "_meta": SERVER_INFO,
            }
            forged = {"io.mcpkit/elicitation-ids": {"url": "chosen-by-the-client"}}
            retry = {
                "name": "list_repos",
                "arguments": {},
                "requestState": first["requestState"],
                "inputResponses": {"elicitation-1": {"action": "accept"}, **forged},
            }
            consented = await c.request("tools/call", retry)
            assert text_of(consented) == (
                f"Waiting for flow {flow}: finish in your browser, then ask again."
            )
            assert text_of(await c.call_tool("oauth_callback", {"flow": flow})) == "connected"
            assert text_of(await c.request("tools/call", retry)) == (
                "ada's repositories: mcpkit, notes"
            )
            assert c.notifications == []  # 2026-07-28 has no completion notification

    run(scenario)


MISSING = {
    "code": -32021,
    "message": "Missing required client capability: elicitation (url mode)",
    "data": {"requiredCapabilities": {"elicitation": {"url": {}}}},
}


@pytest.mark.parametrize(
    ("version", "capabilities"),
    [
        (HANDSHAKE, {}),
        (HANDSHAKE, {"elicitation": {}}),  # form mode only
        (HANDSHAKE, {"elicitation": {"form": {}}}),
        ("2025-06-18", URL_MODE),  # URL mode starts at 2025-11-25
        (STATELESS, {"elicitation": {}}),
        (STATELESS, {"elicitation": {"form": {}}}),
    ],
)
@pytest.mark.parametrize("tool", ["list_repos", "checkout"])
def test_clients_without_url_mode_get_32021(
    version: str, capabilities: dict[str, Any], tool: str
) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(
            connect.app, protocol_version=version, capabilities=capabilities
        ) as client:
            arguments = {"order": "o1"} if tool == "checkout" else {}
            error = await rpc_error(client.call_tool(tool, arguments))
            assert client.server_requests == []
            return error.error

    assert run(scenario) == MISSING


def test_raising_answers_32042_and_completes_that_session() -> None:
    async def scenario() -> None:
        async with Client(connect.app, capabilities=URL_MODE) as client:
            error = await rpc_error(client.call_tool("checkout", {"order": "o1"}))
            assert error.error == connect.REFUSED_O1
            connect.PAID.add("o1")
            connect.app.complete_elicitation("pay-o1")
            assert await completed(client, 1) == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/elicitation/complete",
                    "params": {"elicitationId": "pay-o1"},
                }
            ]
            assert text_of(await client.call_tool("checkout", {"order": "o1"})) == (
                "order o1 is paid"
            )

    run(scenario)


def test_raising_in_2026_07_28_answers_an_input_request() -> None:
    async def scenario() -> None:
        async with Client(connect.app, protocol_version=STATELESS, capabilities=URL_MODE) as c:
            call = {"name": "checkout", "arguments": {"order": "o1"}}
            first = await c.request("tools/call", call)
            assert first == {
                "resultType": "input_required",
                "inputRequests": {
                    "url-pay-o1": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "url",
                            "message": "Pay for order o1.",
                            "url": "https://pay.example.com/orders/o1",
                        },
                    }
                },
                "requestState": first["requestState"],
                "_meta": SERVER_INFO,
            }
            connect.PAID.add("o1")
            retry = {
                **call,
                "requestState": first["requestState"],
                "inputResponses": {"url-pay-o1": {"action": "accept"}},
            }
            assert text_of(await c.request("tools/call", retry)) == "order o1 is paid"

    run(scenario)


def test_a_middleware_may_raise_it_too() -> None:
    app = App("gate", "1")

    @app.middleware
    async def connected_first(call: Call, call_next: Any) -> Any:
        if call.method == "tools/call":
            raise UrlElicitationRequired(
                "https://gate.example.com/", "Sign in.", elicitation_id="g"
            )
        return await call_next(call)

    @app.tool
    def hello() -> str:
        return "hello"

    async def scenario() -> tuple[Any, Any]:
        async with Client(app, protocol_version=STATELESS, capabilities=URL_MODE) as modern:
            asked = await modern.request("tools/call", {"name": "hello", "arguments": {}})
        async with Client(app, capabilities=URL_MODE) as handshake:
            refused = await rpc_error(handshake.call_tool("hello"))
        return asked, refused.error

    asked, refused = run(scenario)
    assert asked == {  # no requestState: nothing of the call ran yet
        "resultType": "input_required",
        "inputRequests": {
            "url-g": {
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": "Sign in.",
                    "url": "https://gate.example.com/",
                },
            }
        },
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "gate", "version": "1"}},
    }
    assert refused["code"] == -32042
    assert refused["data"]["elicitations"][0]["elicitationId"] == "g"


def test_the_id_is_fresh_unless_given() -> None:
    first = UrlElicitationRequired("https://a.example/", "A")
    second = UrlElicitationRequired("https://a.example/", "A")
    assert first.elicitation_id != second.elicitation_id
    assert len(first.elicitation_id) == 22  # 128 random bits, URL-safe
    assert first.data == {
        "elicitations": [
            {
                "mode": "url",
                "elicitationId": first.elicitation_id,
                "url": "https://a.example/",
                "message": "A",
            }
        ]
    }
