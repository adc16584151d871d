"""The extensions seam (SEP-2133): ``ServerOptions(extensions=...)`` advertised as
``capabilities.extensions``, and ``ctx.client_supports`` / ``ctx.client_extension`` reading what
the request's client declared, in both eras, on the test client, stdio and HTTP."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from asgi_support import in_process
from features_support import ERAS, HANDSHAKE, STATELESS, run
from http_support import META, modern_headers, post
from stdio_support import serve_on_pipes

from mcpkit import App, Context, ServerOptions
from mcpkit.testing import Client

THING = {"io.example/thing": {"level": 2}, "com.example.ui/panels-v2": {}}
UI = {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}


def make_app() -> App:
    app = App("ext", "1", options=ServerOptions(extensions=THING))

    @app.tool
    def probe(ctx: Context) -> dict[str, Any]:
        """Says what the client declared."""
        return {
            "ui": ctx.client_supports("io.modelcontextprotocol/ui"),
            "settings": ctx.client_extension("io.modelcontextprotocol/ui"),
            "other": ctx.client_supports("com.example/other"),
        }

    return app


DECLARED = {
    "ui": True,
    "settings": {"mimeTypes": ["text/html;profile=mcp-app"]},
    "other": False,
}
UNDECLARED = {"ui": False, "settings": None, "other": False}
CAPABILITIES = {
    "logging": {},
    "tools": {"listChanged": True},
    "extensions": {"io.example/thing": {"level": 2}, "com.example.ui/panels-v2": {}},
}


# ------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    "key",
    [
        "thing",
        "/thing",
        "io.example/",
        "io.example/-thing",
        "io.example/thing-",
        "1o.example/thing",
        "io.example-/thing",
        "io..example/thing",
        "io.example/th ing",
        "io.example/a/b",
        7,
    ],
)
def test_an_extension_id_must_have_the_spec_form(key: Any) -> None:
    with pytest.raises(ValueError, match=r"is not of the form 'com\.example/name'"):
        ServerOptions(extensions={key: {}})


@pytest.mark.parametrize(
    "key", ["com.example/x", "io.modelcontextprotocol/ui", "a/b", "x.y-z.w9/n_a.m-e", "c/1"]
)
def test_well_formed_ids_are_accepted(key: str) -> None:
    assert dict(ServerOptions(extensions={key: {"a": 1}}).extensions or {}) == {key: {"a": 1}}


@pytest.mark.parametrize("settings", [None, True, [], "x"])
def test_settings_must_be_a_dict(settings: Any) -> None:
    message = r"extension 'a/b': settings must be a dict \({} for none\)"
    with pytest.raises(ValueError, match=message):
        ServerOptions(extensions={"a/b": settings})


def test_extensions_must_be_a_mapping_and_tasks_is_mcpkits_own() -> None:
    with pytest.raises(ValueError, match="extensions must be a dict"):
        ServerOptions(extensions=["a/b"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="declared by mcpkit itself"):
        ServerOptions(extensions={"io.modelcontextprotocol/tasks": {}})


def test_the_options_keep_their_own_copy() -> None:
    settings = {"level": 1}
    options = ServerOptions(extensions={"a/b": settings})
    settings["level"] = 2
    assert dict(options.extensions or {}) == {"a/b": {"level": 1}}
    with pytest.raises(TypeError):
        options.extensions["c/d"] = {}  # type: ignore[index]


def test_without_extensions_there_is_no_extensions_capability() -> None:
    app = App("plain", "1")

    @app.tool
    def noop() -> None:
        """Nothing."""

    with Client(app) as c:
        assert c.initialize_result is not None
        assert "extensions" not in c.initialize_result["capabilities"]
    with Client(app, protocol_version=STATELESS) as c:
        assert "extensions" not in c.request("server/discover")["capabilities"]


# ---------------------------------------------------------------- the test client


def test_initialize_advertises_the_extensions() -> None:
    with Client(make_app()) as c:
        assert c.initialize_result is not None
        assert c.initialize_result["capabilities"] == CAPABILITIES


def test_server_discover_advertises_the_extensions() -> None:
    with Client(make_app(), protocol_version=STATELESS) as c:
        assert c.request("server/discover")["capabilities"] == CAPABILITIES


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize(
    ("capabilities", "expected"),
    [
        ({"extensions": UI}, DECLARED),
        ({}, UNDECLARED),
        ({"extensions": {"io.modelcontextprotocol/ui": True}}, UNDECLARED),
        ({"extensions": ["io.modelcontextprotocol/ui"]}, UNDECLARED),
    ],
    ids=["declared", "none", "not-an-object", "extensions-not-an-object"],
)
def test_the_context_reads_the_clients_extensions(
    version: str, capabilities: dict[str, Any], expected: dict[str, Any]
) -> None:
    async def scenario() -> Any:
        async with Client(make_app(), protocol_version=version, capabilities=capabilities) as c:
            return (await c.call_tool("probe", {})).data

    assert run(scenario) == expected


# ---------------------------------------------------------------------- stdio and HTTP


def _initialize(request_id: int, capabilities: dict[str, Any]) -> dict[str, Any]:
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _probe(request_id: int, meta: dict[str, Any] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "probe", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


MODERN_UI = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": UI}}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}


def test_stdio_in_both_eras() -> None:
    async def scenario() -> list[Any]:
        async with serve_on_pipes(make_app()) as (server, in_write, reader):
            to_server = os.fdopen(in_write, "wb", 0)
            messages = [
                DISCOVER,
                _probe(2, MODERN_UI),
                _probe(3, META),
                _initialize(4, {"extensions": UI}),
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                _probe(5, None),
            ]
            answers = []
            for message in messages:
                to_server.write(json.dumps(message).encode() + b"\n")
                if "id" in message:
                    answers.append(json.loads(await reader.readline()))
            to_server.close()
            await server
            return answers

    discovered, modern, plain, initialized, handshake = run(scenario)
    assert discovered["result"]["capabilities"] == CAPABILITIES
    assert modern["result"]["structuredContent"] == DECLARED
    assert plain["result"]["structuredContent"] == UNDECLARED
    assert initialized["result"]["capabilities"] == CAPABILITIES
    assert handshake["result"]["structuredContent"] == DECLARED


def test_http_in_both_eras() -> None:
    with in_process(make_app().asgi(json_response=True)) as server:
        discovered = post(server, DISCOVER, modern_headers("server/discover")).json
        headers = modern_headers("tools/call", "probe")
        modern = post(server, _probe(2, MODERN_UI), headers).json
        plain = post(server, _probe(3, META), headers).json
        reply = post(server, _initialize(4, {"extensions": UI}), {})
        session = {"mcp-session-id": reply.headers["mcp-session-id"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert post(server, note, session).status == 202
        handshake = post(server, _probe(5, None), session).json
    assert discovered["result"]["capabilities"] == CAPABILITIES
    assert modern["result"]["structuredContent"] == DECLARED
    assert plain["result"]["structuredContent"] == UNDECLARED
    assert reply.json["result"]["capabilities"] == CAPABILITIES
    assert handshake["result"]["structuredContent"] == DECLARED
