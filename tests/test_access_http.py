"""Per-definition access over Streamable HTTP with bearer auth: two principals, hidden calls
answered as unknown ones (byte for byte), the SEP-835 step-up challenge, ``scopes_supported``
and ``cacheScope``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgi_support import InProcess, in_process
from http_support import META, Reply, initialize, modern_headers, post, request
from test_access import ALICE, BOB, READER, build, names_of_lists

from mcpkit import App
from mcpkit.transports.http import BearerAuth, static_tokens

TOKENS = {"alice": ALICE, "bob": BOB, "carol": {"sub": "carol"}}
METADATA = "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"


def auth(required: tuple[str, ...] = ()) -> BearerAuth:
    return BearerAuth(
        static_tokens(TOKENS),
        authorization_servers=("https://auth.example.com",),
        required_scopes=required,
    )


@pytest.fixture
def hiding() -> Iterator[InProcess]:
    with in_process(build().asgi(auth=auth(), json_response=True)) as served:
        yield served


@pytest.fixture
def challenging() -> Iterator[InProcess]:
    app = build(on_missing_scope="challenge")
    with in_process(app.asgi(auth=auth(), json_response=True)) as served:
        yield served


def bearer(token: str, **extra: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}", **extra}


def modern(served: InProcess, token: str, method: str, params: dict[str, Any]) -> Reply:
    body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {**params, "_meta": META}}
    name = params.get("name") or params.get("uri")
    return post(served, body, bearer(token, **modern_headers(method, name)))


def session_call(
    served: InProcess, token: str, method: str, params: dict[str, Any], version: str = "2025-11-25"
) -> Reply:
    session = initialize(served, version, **bearer(token))
    body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}
    return post(served, body, bearer(token, **{"mcp-session-id": session}))


def lists(served: InProcess, token: str) -> dict[str, list[str]]:
    found = {}
    for method, key in (
        ("tools/list", "tools"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ):
        reply = modern(served, token, method, {})
        assert reply.status == 200, reply.body
        found[key] = reply.json["result"][key]
    return names_of_lists(found)


def test_two_principals_see_different_lists_over_http(hiding: InProcess) -> None:
    assert lists(hiding, "alice")["tools"] == ["echo", "write_note", "audit"]
    assert lists(hiding, "bob") == READER
    reply = session_call(hiding, "bob", "tools/list", {})
    assert [t["name"] for t in reply.json["result"]["tools"]] == ["echo"]


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("tools/call", {"name": "write_note", "arguments": {"text": "x"}}),
    ("resources/read", {"uri": "notes://7"}),
    ("prompts/get", {"name": "draft", "arguments": {"topic": "x"}}),
]
COMPLETIONS: list[tuple[str, dict[str, Any]]] = [
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "draft"},
            "argument": {"name": "topic", "value": ""},
        },
    ),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "notes://{number}"},
            "argument": {"name": "number", "value": ""},
        },
    ),
]


@pytest.mark.parametrize(("method", "params"), CALLS, ids=["tool", "template", "prompt"])
def test_a_hidden_call_over_http_is_byte_for_byte_an_unknown_one(
    hiding: InProcess, method: str, params: dict[str, Any]
) -> None:
    bare = build()
    bare.remove_tool("write_note")
    bare.remove_resource("notes://{number}")
    bare.remove_prompt("draft")
    with in_process(bare.asgi(auth=auth(), json_response=True)) as unknown:
        for call in (modern, session_call):
            hidden_reply, unknown_reply = (
                call(hiding, "bob", method, params),
                call(unknown, "bob", method, params),
            )
            assert (hidden_reply.status, hidden_reply.body) == (
                unknown_reply.status,
                unknown_reply.body,
            )
            assert hidden_reply.status == 200
            assert hidden_reply.json["error"]["code"] in (-32602, -32002)  # -32002: not found


STEP_UP = (
    'Bearer error="insufficient_scope", scope="notes:read notes:write", '
    f'resource_metadata="{METADATA}"'
)


@pytest.mark.parametrize(
    ("method", "params"),
    CALLS + COMPLETIONS,
    ids=["tool", "template", "prompt", "complete-prompt", "complete-template"],
)
def test_challenge_mode_answers_a_call_with_the_step_up_challenge(
    challenging: InProcess, method: str, params: dict[str, Any]
) -> None:
    for call in (modern, session_call):
        reply = call(challenging, "bob", method, params)
        assert reply.status == 403
        assert reply.headers["www-authenticate"] == STEP_UP
        assert reply.json == {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32600, "message": "Forbidden: the token lacks a required scope"},
        }


def test_challenge_mode_lists_what_the_caller_lacks_scopes_for(challenging: InProcess) -> None:
    assert lists(challenging, "bob") == {
        "tools": ["echo", "write_note"],  # audit stays invisible: visible is no scope
        "resources": ["public://readme", "notes://all"],
        "templates": ["notes://{number}"],
        "prompts": ["draft", "hello"],
    }
    carol = modern(challenging, "carol", "tools/call", {"name": "write_note", "arguments": {}})
    assert carol.status == 403
    assert carol.headers["www-authenticate"] == (
        f'Bearer error="insufficient_scope", scope="notes:write", resource_metadata="{METADATA}"'
    )


def test_challenge_mode_still_hides_invisible_and_batched_calls(challenging: InProcess) -> None:
    invisible = modern(challenging, "bob", "tools/call", {"name": "audit"})
    assert (invisible.status, invisible.json["error"]) == (
        200,
        {"code": -32602, "message": "Unknown tool: audit"},
    )
    session = initialize(challenging, "2025-03-26", **bearer("bob"))
    call = {"name": "write_note", "arguments": {"text": "x"}}
    batch = [{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}]
    reply = post(challenging, batch, bearer("bob", **{"mcp-session-id": session}))
    assert reply.status == 200
    assert reply.json == [
        {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32602, "message": "Unknown tool: write_note"},
        }
    ]
    allowed = modern(challenging, "alice", "tools/call", call)
    assert allowed.status == 200
    assert allowed.json["result"]["content"] == [{"type": "text", "text": "saved x"}]


def test_challenge_mode_without_auth_hides() -> None:
    app = build(on_missing_scope="challenge")
    with in_process(app.asgi(json_response=True)) as served:
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}
        reply = post(served, body, modern_headers("tools/list"))
        assert [t["name"] for t in reply.json["result"]["tools"]] == ["echo"]


def test_scopes_supported_lists_required_and_definition_scopes() -> None:
    app = build()

    @app.tool(scopes=["admin", "notes:read"])
    def wipe() -> str:
        return "wiped"

    with in_process(app.asgi(auth=auth(("mcp:use", "notes:read")))) as served:
        reply = request(served, "GET", path="/.well-known/oauth-protected-resource/mcp")
    assert reply.json["scopes_supported"] == ["admin", "mcp:use", "notes:read", "notes:write"]


def test_cache_scope_is_private_behind_auth() -> None:
    app = App("plain", "1.0")

    @app.tool
    def echo(text: str) -> str:
        return text

    with in_process(app.asgi(auth=auth(), json_response=True)) as served:
        result = modern(served, "carol", "tools/list", {}).json["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    with in_process(app.asgi(json_response=True)) as served:
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}
        result = post(served, body, modern_headers("tools/list")).json["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (0, "public")


def test_required_scopes_read_the_scp_claim_and_a_scope_attribute() -> None:
    class Token:
        scope = "mcp:use"

    tokens = {"scp": {"sub": "s", "scp": ["mcp:use"]}, "attr": Token(), "none": {"sub": "n"}}
    endpoint = build().asgi(auth=BearerAuth(static_tokens(tokens), required_scopes=("mcp:use",)))
    with in_process(endpoint) as served:
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}
        statuses = {
            token: post(served, body, bearer(token, **modern_headers("tools/list"))).status
            for token in tokens
        }
    assert statuses == {"scp": 200, "attr": 200, "none": 403}


BETA = "com.example/beta"


def test_challenge_mode_asks_visible_with_the_facts_the_call_is_served_with() -> None:
    """The step-up decision asks ``visible`` with the request's own client capabilities, as
    the core does: a tool the caller sees listed is challenged, and one its ``visible`` hides
    from this client is answered as unknown (a challenge would tell the caller it exists)."""
    app = build(on_missing_scope="challenge")

    @app.tool(scopes=["notes:write"], visible=lambda ctx: ctx.client_supports(BETA))
    def beta_only() -> str:
        return "beta"

    @app.tool(scopes=["notes:write"], visible=lambda ctx: not ctx.client_supports(BETA))
    def stable_only() -> str:
        return "stable"

    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {BETA: {}}}}

    def beta_client(method: str, params: dict[str, Any]) -> Reply:
        body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {**params, "_meta": meta}}
        return post(served, body, bearer("bob", **modern_headers(method, params.get("name"))))

    with in_process(app.asgi(auth=auth(), json_response=True)) as served:
        listed = beta_client("tools/list", {}).json["result"]["tools"]
        assert [tool["name"] for tool in listed] == ["echo", "write_note", "beta_only"]
        challenged = beta_client("tools/call", {"name": "beta_only"})
        assert (challenged.status, challenged.headers["www-authenticate"]) == (403, STEP_UP)
        hidden = beta_client("tools/call", {"name": "stable_only"})
        assert (hidden.status, hidden.json) == (
            200,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -32602, "message": "Unknown tool: stable_only"},
            },
        )
