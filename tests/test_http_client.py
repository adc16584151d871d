"""The official ``mcp`` client over real sockets: both eras, JSON and stateless modes,
mounted under Starlette, and bearer-token auth (whose raw-request rules run in-process)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import http_app
import httpx2
import pytest
from asgi_support import InProcess, in_process
from http_support import LIST, initialize, post, request, serve
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpkit import App, Context
from mcpkit.transports.http import BearerAuth, HttpApp, static_tokens

TIMEOUT = 15.0


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve(http_app.app.asgi()) as port:
        yield f"http://127.0.0.1:{port}/mcp"


def text(result: Any) -> str:
    content: str = result.content[0].text
    return content


async def _calls(url: str, mode: Any, **options: Any) -> tuple[str, str, list[float], str]:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(TIMEOUT):
        async with Client(url, mode=mode, cache=None, **options) as client:
            echoed = await client.call_tool("echo", {"text": "héllo"})
            chatty = await client.call_tool("chatty", {}, progress_callback=on_progress)
            return str(client.protocol_version), text(echoed), seen, text(chatty)


def run(coro: Any) -> Any:
    return anyio.run(lambda: coro)


@pytest.mark.parametrize(
    ("mode", "version"),
    [("auto", "2026-07-28"), ("2026-07-28", "2026-07-28"), ("legacy", "2025-11-25")],
)
def test_official_client_in_both_eras(url: str, mode: str, version: str) -> None:
    protocol, echoed, progress, _ = run(_calls(url, mode))
    assert protocol == version
    assert echoed == "héllo"
    assert progress == [1.0, 2.0, 3.0]


def test_official_client_mirrors_x_mcp_headers(url: str) -> None:
    async def go() -> str:
        with anyio.fail_after(TIMEOUT):
            async with Client(url, mode="2026-07-28", cache=None) as client:
                return text(await client.call_tool("located", {"region": "Zürich ", "count": 7}))

    assert run(go()) == "[('count', 7), ('region', 'Zürich ')]"


@pytest.mark.parametrize("options", [{"stateless": True}, {"json_response": True}])
def test_official_client_in_stateless_and_json_modes(options: dict[str, Any]) -> None:
    with serve(http_app.app.asgi(**options)) as port:
        for mode in ("auto", "legacy"):
            _, echoed, progress, _ = run(_calls(f"http://127.0.0.1:{port}/mcp", mode))
            assert echoed == "héllo"
            if options.get("json_response"):
                # JSON mode: progress goes to the session's GET stream (legacy) or nowhere,
                # racing the answer
                assert progress == [1.0, 2.0, 3.0][: len(progress)]
                assert mode == "legacy" or not progress
            else:
                assert progress == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------- mounting


def test_mounted_under_starlette_without_any_wiring() -> None:
    host = Starlette(routes=[Mount("/api", app=http_app.app.asgi())])
    with serve(host) as port:
        protocol, echoed, _, _ = run(_calls(f"http://127.0.0.1:{port}/api/mcp", "legacy"))
        assert (protocol, echoed) == ("2025-11-25", "héllo")
        protocol, _, _, _ = run(_calls(f"http://127.0.0.1:{port}/api/mcp", "auto"))
        assert protocol == "2026-07-28"


def test_mounted_with_the_lifespan_passed_to_the_host() -> None:
    entered: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[dict[str, str]]:
        entered.append("start")
        yield {"db": "ready"}
        entered.append("stop")

    mcp_app = App("with-lifespan", "1", lifespan=lifespan)

    @mcp_app.tool
    def state(ctx: Context) -> str:
        """The lifespan's state."""
        return repr(ctx.state)

    endpoint = HttpApp(mcp_app)
    host = Starlette(routes=[Mount("/", app=endpoint)], lifespan=endpoint.lifespan)
    with serve(host) as port:
        assert entered == ["start"]

        async def go() -> str:
            async with Client(f"http://127.0.0.1:{port}/mcp", cache=None) as client:
                return text(await client.call_tool("state", {}))

        assert run(go()) == "{'db': 'ready'}"
    assert entered == ["start", "stop"]


def test_lifespan_starts_lazily_once_when_mounted_without_it() -> None:
    starts: list[int] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        starts.append(1)
        yield

    lazy = App("lazy", "1", lifespan=lifespan)
    host = Starlette(routes=[Mount("/", app=lazy.asgi(stateless=True))])
    with serve(host) as port:
        assert starts == []
        for _ in range(3):
            assert post(port, LIST).status == 200
    assert starts == [1]


# -------------------------------------------------------------------------------- auth


class Principal:
    def __init__(self, subject: str, scopes: set[str]) -> None:
        self.subject = subject
        self.scopes = scopes

    def __repr__(self) -> str:
        return f"Principal({self.subject!r})"


def auth_endpoint() -> HttpApp:
    tokens = {
        "good": Principal("ada", {"mcp:use"}),
        "weak": Principal("bob", set()),
    }
    auth = BearerAuth(
        static_tokens(tokens),
        authorization_servers=("https://auth.example.com",),
        required_scopes=("mcp:use",),
    )
    return http_app.app.asgi(auth=auth, stateless=True)


@pytest.fixture(scope="module")
def auth_server() -> Iterator[InProcess]:
    """The bearer-token rules over raw requests, in-process (no socket)."""
    with in_process(auth_endpoint()) as served:
        yield served


@pytest.fixture(scope="module")
def auth_port() -> Iterator[int]:
    with serve(auth_endpoint()) as port:
        yield port


def test_auth_401_names_the_resource_metadata(auth_server: InProcess) -> None:
    missing = post(auth_server, LIST)
    assert missing.status == 401
    challenge = missing.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    metadata = f"http://127.0.0.1:{auth_server.port}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{metadata}"' in challenge
    assert 'scope="mcp:use"' in challenge
    bad = post(auth_server, LIST, {"authorization": "Bearer nope"})
    assert bad.status == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert post(auth_server, LIST, {"authorization": "Basic good"}).status == 401


def test_auth_403_for_insufficient_scope(auth_server: InProcess) -> None:
    weak = post(auth_server, LIST, {"authorization": "Bearer weak"})
    assert weak.status == 403
    assert 'error="insufficient_scope"' in weak.headers["www-authenticate"]


def test_auth_metadata_documents(auth_server: InProcess) -> None:
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        reply = request(auth_server, "GET", path=path)
        assert reply.status == 200
        assert reply.json == {
            "resource": f"http://127.0.0.1:{auth_server.port}/mcp",
            "authorization_servers": ["https://auth.example.com"],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:use"],
        }
    assert (
        request(auth_server, "POST", {}, path="/.well-known/oauth-protected-resource").status == 405
    )


def test_the_principal_reaches_tools(auth_port: int) -> None:
    async def go() -> str:
        headers = {"authorization": "Bearer good"}
        url = f"http://127.0.0.1:{auth_port}/mcp"
        with anyio.fail_after(TIMEOUT):
            async with (
                httpx2.AsyncClient(headers=headers, timeout=TIMEOUT) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return text(await session.call_tool("whoami", {}))

    assert run(go()) == "Principal('ada')"


def test_async_verifiers_and_dict_principals() -> None:
    async def verify(token: str) -> dict[str, Any] | None:
        return {"sub": token, "scope": "a b"} if token.startswith("ok") else None

    endpoint = HttpApp(http_app.app, auth=BearerAuth(verify, required_scopes=("b",)))
    with in_process(endpoint) as server:
        session = initialize(server, authorization="Bearer ok-1")
        headers = {"mcp-session-id": session, "authorization": "Bearer ok-1"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami"}}
        reply = post(server, body, headers)
        assert "'sub': 'ok-1'" in reply.json["result"]["content"][0]["text"]
        assert post(server, LIST, {"authorization": "Bearer no"}).status == 401
