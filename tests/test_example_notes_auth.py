"""``examples/notes_auth.py``: notes behind JWT bearer tokens, over real Streamable HTTP (served
in process, keys and a JWK Set of the test's own): two scopes, one admin-only tool, the step-up
challenge, and a caller never learning what it may not call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from asgi_support import InProcess, in_process
from http_support import META, Reply, initialize, modern_headers, post, serve
from jwt_support import AUDIENCE, ISSUER, KeyServer, token
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples import notes_auth

READER = {"sub": "bob", "scope": "notes:read"}
WRITER = {"sub": "ada", "scope": "notes:read notes:write"}
ADMIN = {"sub": "root", "scope": "notes:read notes:write", "roles": ["admin"]}
METADATA = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[InProcess]:
    monkeypatch.setattr(notes_auth, "NOTES", {"groceries": "milk"})
    with KeyServer().serving() as keys:
        monkeypatch.setenv("NOTES_ISSUER", ISSUER)
        monkeypatch.setenv("NOTES_AUDIENCE", AUDIENCE)
        monkeypatch.setenv("NOTES_JWKS_URL", keys.url)
        with in_process(notes_auth.make_asgi()) as served:
            yield served


def bearer(claims: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {token(**claims)}"}


def rpc(server: InProcess, who: dict[str, Any], method: str, **params: Any) -> Reply:
    name = params.get("name")
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return post(server, body, {**modern_headers(method, name), **bearer(who)})


def tool_names(server: InProcess, who: dict[str, Any]) -> list[str]:
    reply = rpc(server, who, "tools/list")
    assert reply.status == 200, reply.body
    return [tool["name"] for tool in reply.json["result"]["tools"]]


def text(reply: Reply) -> str:
    assert reply.status == 200, reply.body
    result = reply.json["result"]
    assert not result["isError"], result
    return str(result["content"][0]["text"])


def test_each_caller_lists_what_it_may_call(server: InProcess) -> None:
    """With ``on_missing_scope="challenge"`` a tool that needs more scopes is listed (a call
    asks the client to step up); the admin tool is listed only to admins (``visible``)."""
    writing = ["list_notes", "read_note", "add_note"]
    assert tool_names(server, READER) == writing
    assert tool_names(server, WRITER) == writing
    assert tool_names(server, ADMIN) == [*writing, "delete_all_notes"]


def test_a_reader_reads_and_is_asked_to_step_up_to_write(server: InProcess) -> None:
    read = rpc(server, READER, "tools/call", name="read_note", arguments={"title": "groceries"})
    assert text(read) == "milk"
    write = rpc(
        server, READER, "tools/call", name="add_note", arguments={"title": "t", "text": "x"}
    )
    assert write.status == 403
    assert write.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", scope="notes:read notes:write", '
        f'resource_metadata="{METADATA}"'
    )
    assert notes_auth.NOTES == {"groceries": "milk"}  # nothing was written


def test_the_admin_tool_is_unknown_to_a_writer_without_the_role(server: InProcess) -> None:
    hidden = rpc(server, WRITER, "tools/call", name="delete_all_notes", arguments={})
    unknown = rpc(server, WRITER, "tools/call", name="no_such_tool", arguments={})
    assert hidden.status == unknown.status == 200
    assert hidden.json["error"] == {"code": -32602, "message": "Unknown tool: delete_all_notes"}
    assert unknown.json["error"] == {"code": -32602, "message": "Unknown tool: no_such_tool"}
    done = rpc(server, ADMIN, "tools/call", name="delete_all_notes", arguments={})
    assert done.json["result"]["structuredContent"] == {"result": 1}


def test_a_writer_writes_as_itself(server: InProcess) -> None:
    reply = rpc(
        server, WRITER, "tools/call", name="add_note", arguments={"title": "t", "text": "x"}
    )
    assert text(reply) == "saved 't' for ada"
    assert notes_auth.NOTES == {"groceries": "milk", "t": "x"}


def test_lists_are_private_to_the_caller(server: InProcess) -> None:
    result = rpc(server, READER, "tools/list").json["result"]
    assert (result["cacheScope"], result["ttlMs"]) == ("private", 0)


def test_a_token_for_another_server_or_none_is_refused(server: InProcess) -> None:
    stranger = rpc(server, {**WRITER, "aud": "https://elsewhere.example.com/mcp"}, "tools/list")
    assert stranger.status == 401
    assert stranger.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    anonymous = post(server, body, modern_headers("tools/list"))
    assert anonymous.status == 401


def test_the_metadata_names_every_scope(server: InProcess) -> None:
    reply = server.request("GET", None, {}, path="/.well-known/oauth-protected-resource/mcp")
    assert reply.json == {
        "resource": AUDIENCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["notes:read", "notes:write"],
    }


def test_handshake_sessions_are_served_the_same_way(server: InProcess) -> None:
    session = initialize(server, **bearer(READER))
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    reply = post(server, body, {"mcp-session-id": session, **bearer(READER)})
    names = [tool["name"] for tool in reply.messages[-1]["result"]["tools"]]
    assert names == ["list_notes", "read_note", "add_note"]


# ------------------------------------------------- the official client, over real sockets


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_client_sees_each_callers_tools(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """The official ``mcp`` client, holding each caller's JWT, in both eras."""
    monkeypatch.setattr(notes_auth, "NOTES", {"groceries": "milk"})

    async def names(url: str, who: dict[str, Any]) -> tuple[list[str], str]:
        with anyio.fail_after(15):
            async with (
                httpx2.AsyncClient(headers=bearer(who), timeout=15) as http,
                Client(
                    streamable_http_client(url, http_client=http), mode=mode, cache=None
                ) as client,
            ):
                listed = [tool.name for tool in (await client.list_tools()).tools]
                read = await client.call_tool("read_note", {"title": "groceries"})
                return listed, read.content[0].text  # type: ignore[union-attr]

    with KeyServer().serving() as keys:
        monkeypatch.setenv("NOTES_ISSUER", ISSUER)
        monkeypatch.setenv("NOTES_AUDIENCE", AUDIENCE)
        monkeypatch.setenv("NOTES_JWKS_URL", keys.url)
        with serve(notes_auth.make_asgi()) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            reader = anyio.run(names, url, READER)
            admin = anyio.run(names, url, ADMIN)
    assert reader == (["list_notes", "read_note", "add_note"], "milk")
    assert admin == (["list_notes", "read_note", "add_note", "delete_all_notes"], "milk")
