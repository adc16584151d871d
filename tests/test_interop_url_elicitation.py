"""URL-mode elicitation with the official ``mcp`` 2.3.0 client, against
``tests/url_elicitation_app.py``: over stdio and Streamable HTTP in 2025-11-25 (the
``elicitationId``, the completion notification sent from another thread, ``-32042``), and over
stdio in 2026-07-28 (input requests; the id kept in ``requestState``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp.types as types
import url_elicitation_app as connect
from http_support import serve
from interop_support import run, stdio_params
from mcp import Client, ClientSession, MCPError
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPOS = "ada's repositories: mcpkit, notes"


class Host:
    """What the user does: consent to every URL; what the client hears of completions."""

    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.completed: list[str] = []
        self.done = anyio.Event()

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action="accept")

    async def message(self, message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)
            self.done.set()


def text(result: Any) -> str:
    return str(result.content[0].text)


async def handshake_flow(session: ClientSession, host: Host) -> dict[str, Any]:
    """Ask, consent, finish out of band, hear of it, retry; then the -32042 error."""
    init = await session.initialize()
    waiting = text(await session.call_tool("list_repos", {}))
    [asked] = host.asked
    assert isinstance(asked, types.ElicitRequestURLParams)
    flow = asked.elicitation_id
    assert text(await session.call_tool("oauth_callback", {"flow": flow})) == "connected"
    with anyio.fail_after(10):
        await host.done.wait()
    repos = text(await session.call_tool("list_repos", {}))
    try:
        await session.call_tool("checkout", {"order": "o1"})
    except MCPError as exc:
        refused = (exc.code, exc.data)
    return {
        "version": init.protocol_version,
        "asked": (asked.mode, asked.url == f"https://auth.example.com/connect?flow={flow}"),
        "waiting": waiting == f"Waiting for flow {flow}: finish in your browser, then ask again.",
        "completed": host.completed == [flow],
        "repos": repos,
        "refused": refused,
    }


EXPECTED = {
    "version": "2025-11-25",
    "asked": ("url", True),
    "waiting": True,
    "completed": True,
    "repos": REPOS,
    "refused": (-32042, connect.REFUSED_O1["data"]),
}


def test_handshake_era_over_stdio() -> None:
    async def scenario() -> dict[str, Any]:
        host = Host()
        async with (
            stdio_client(stdio_params("tests/url_elicitation_app.py:app")) as (read, write),
            ClientSession(
                read, write, elicitation_callback=host.elicit, message_handler=host.message
            ) as session,
        ):
            return await handshake_flow(session, host)

    assert run(scenario) == EXPECTED


def test_handshake_era_over_http() -> None:
    async def scenario(url: str) -> dict[str, Any]:
        host = Host()
        with anyio.fail_after(30):
            async with (
                httpx2.AsyncClient(timeout=15) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(
                    read, write, elicitation_callback=host.elicit, message_handler=host.message
                ) as session,
            ):
                return await handshake_flow(session, host)

    connect.WAITING.clear()
    connect.TOKENS.clear()
    try:
        with serve(connect.app.asgi()) as port:
            got = anyio.run(scenario, f"http://127.0.0.1:{port}/mcp")
    finally:
        connect.WAITING.clear()
        connect.TOKENS.clear()
    assert got == EXPECTED


def test_stateless_era_over_stdio() -> None:
    async def scenario() -> tuple[str, str, str, str]:
        host = Host()
        async with Client(
            stdio_params("tests/url_elicitation_app.py:app"),
            mode="auto",
            cache=None,
            elicitation_callback=host.elicit,
        ) as client:
            assert client.protocol_version == "2026-07-28"
            waiting = text(await client.call_tool("list_repos", {}))
            [asked] = host.asked  # one input request, answered; the retry ran the tool again
            flow = parse_qs(urlsplit(asked.url).query)["flow"][0]
            connected = text(await client.call_tool("oauth_callback", {"flow": flow}))
            return (
                asked.mode,
                waiting.replace(flow, "FLOW"),
                connected,
                text(await client.call_tool("list_repos", {})),
            )

    assert run(scenario) == (
        "url",
        "Waiting for flow FLOW: finish in your browser, then ask again.",
        "connected",
        REPOS,
    )
