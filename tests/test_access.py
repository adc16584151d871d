"""Per-definition access (scopes, visible, tags, enable/disable) in the core, over the
in-memory client and stdio, in both eras: who sees what, and that what is hidden answers
exactly as what does not exist."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from features_support import run, settle
from stdio_support import serve_on_pipes
from test_listen import listen_request

from mcpkit import App, Context, DefinitionError, ServerOptions
from mcpkit._availability import CACHEABLE, scopes_of
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.methods import HANDLERS
from mcpkit.protocol.versions import META_CAPABILITIES, META_VERSION
from mcpkit.testing import Client

MODERN = "2026-07-28"
VERSIONS = ["2025-03-26", "2025-11-25", MODERN]

ALICE = {"sub": "alice", "scope": "notes:read notes:write"}
BOB = {"sub": "bob", "scp": ["notes:read"]}


def alice_only(ctx: Context) -> bool:
    return isinstance(ctx.principal, dict) and ctx.principal.get("sub") == "alice"


def build(**options: Any) -> App:
    """A public tool, a scoped tool, an alice-only tool; scoped and public resources, a scoped
    template, a scoped prompt and a public one."""
    app = App("access", "1.0", options=ServerOptions(**options))

    @app.tool
    def echo(text: str) -> str:
        return text

    @app.tool(scopes=["notes:write"], tags={"notes"})
    def write_note(text: str) -> str:
        return f"saved {text}"

    @app.tool(visible=alice_only, tags={"admin"})
    def audit() -> str:
        return "audited"

    @app.resource("public://readme")
    def readme() -> str:
        return "read me"

    @app.resource("notes://all", scopes=["notes:read"])
    def all_notes() -> str:
        return "every note"

    @app.resource("notes://{number}", scopes=["notes:write"], completions={"number": _numbers})
    def note(number: str) -> str:
        return f"note {number}"

    @app.prompt(scopes=["notes:write"], completions={"topic": _numbers})
    def draft(topic: str) -> str:
        return f"Draft a note about {topic}"

    @app.prompt
    def hello() -> str:
        return "Hello"

    # Capabilities are the server's, not the caller's: keep `completions` offered without the
    # hidden definitions' completers too, so "unknown" is compared with like.
    app.completion(lambda ref, argument, value, given: [])
    return app


def _numbers(value: str) -> list[str]:
    return ["1", "2"]


def without(app: App, *, tools: tuple[str, ...] = (), uris: tuple[str, ...] = ()) -> App:
    for name in tools:
        app.remove_tool(name)
    for uri in uris:
        app.remove_resource(uri)
    return app


def names(client: Any) -> dict[str, list[str]]:
    return names_of_lists(
        {
            "tools": client.list_tools(),
            "resources": client.list_resources(),
            "resourceTemplates": client.list_resource_templates(),
            "prompts": client.list_prompts(),
        }
    )


def names_of_lists(found: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """The four lists' items, by what names each."""
    return {
        "tools": [t["name"] for t in found["tools"]],
        "resources": [r["uri"] for r in found["resources"]],
        "templates": [t["uriTemplate"] for t in found["resourceTemplates"]],
        "prompts": [p["name"] for p in found["prompts"]],
    }


EVERYTHING = {
    "tools": ["echo", "write_note", "audit"],
    "resources": ["public://readme", "notes://all"],
    "templates": ["notes://{number}"],
    "prompts": ["draft", "hello"],
}
READER = {
    "tools": ["echo"],
    "resources": ["public://readme", "notes://all"],
    "templates": [],
    "prompts": ["hello"],
}
ANONYMOUS = {
    "tools": ["echo"],
    "resources": ["public://readme"],
    "templates": [],
    "prompts": ["hello"],
}


@pytest.mark.parametrize("version", VERSIONS)
def test_two_principals_see_different_lists(version: str) -> None:
    app = build()
    with Client(app, protocol_version=version, principal=ALICE) as alice:
        assert names(alice) == EVERYTHING
    with Client(app, protocol_version=version, principal=BOB) as bob:
        assert names(bob) == READER
    with Client(app, protocol_version=version) as nobody:
        assert names(nobody) == ANONYMOUS


def _message(version: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if version == MODERN:
        params = {**params, "_meta": {META_VERSION: MODERN, META_CAPABILITIES: {}}}
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def _answer(app: App, version: str, principal: Any, message: dict[str, Any]) -> bytes:
    with Client(app, protocol_version=version, principal=principal) as client:
        return jsonrpc.encode(client.send(message))


HIDDEN_CALLS = [
    pytest.param("tools/call", {"name": "write_note", "arguments": {"text": "x"}}, id="tool"),
    pytest.param("tools/call", {"name": "audit"}, id="invisible-tool"),
    pytest.param("resources/read", {"uri": "notes://all"}, id="resource"),
    pytest.param("resources/read", {"uri": "notes://7"}, id="template"),
    pytest.param("prompts/get", {"name": "draft", "arguments": {"topic": "x"}}, id="prompt"),
    pytest.param(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "draft"},
            "argument": {"name": "topic", "value": ""},
        },
        id="completion-prompt",
    ),
    pytest.param(
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "notes://{number}"},
            "argument": {"name": "number", "value": ""},
        },
        id="completion-template",
    ),
]


def _unknown_app() -> App:
    """The same app without the definitions BOB may not see."""
    app = without(build(), tools=("write_note", "audit"), uris=("notes://all", "notes://{number}"))
    app.remove_prompt("draft")
    return app


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("method", "params"), HIDDEN_CALLS)
def test_a_hidden_definition_answers_byte_for_byte_as_an_unknown_one(
    version: str, method: str, params: dict[str, Any]
) -> None:
    message = _message(version, method, params)
    principal = {"sub": "bob", "scp": []}  # holds nothing
    hidden = _answer(build(), version, principal, message)
    unknown = _answer(_unknown_app(), version, principal, message)
    assert hidden == unknown
    assert b'"error"' in hidden


@pytest.mark.parametrize("version", VERSIONS)
def test_unknown_tool_wire_for_a_hidden_tool(version: str) -> None:
    message = _message(version, "tools/call", {"name": "write_note", "arguments": {"text": "x"}})
    with Client(build(), protocol_version=version, principal=BOB) as bob:
        assert bob.send(message) == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32602, "message": "Unknown tool: write_note"},
        }
    with Client(build(), protocol_version=version, principal=ALICE) as alice:
        assert alice.call_tool("write_note", {"text": "x"}).data == "saved x"
        assert alice.call_tool("audit", {}).data == "audited"
        assert alice.read_resource("notes://7")[0]["text"] == "note 7"
        assert alice.get_prompt("draft", {"topic": "x"})["messages"][0]["content"] == {
            "type": "text",
            "text": "Draft a note about x",
        }


@pytest.mark.parametrize("version", VERSIONS)
def test_a_hidden_template_passes_the_uri_to_the_next_one(version: str) -> None:
    app = build()

    @app.resource("notes://{+path}")
    def public_note(path: str) -> str:
        return f"public {path}"

    with Client(app, protocol_version=version, principal=BOB) as bob:
        assert bob.read_resource("notes://7")[0]["text"] == "public 7"
    with Client(app, protocol_version=version, principal=ALICE) as alice:
        assert alice.read_resource("notes://7")[0]["text"] == "note 7"


def test_a_raising_visible_predicate_hides_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    app = App("access", "1.0")

    def broken(ctx: Context) -> bool:
        raise RuntimeError("no directory")

    @app.tool(visible=broken)
    def secret() -> str:
        return "s"

    with Client(app, principal=ALICE) as client, caplog.at_level(logging.ERROR, "mcpkit"):
        assert client.list_tools() == []
        answer = client.send(_message("2025-11-25", "tools/call", {"name": "secret"}))
    assert answer["error"] == {"code": -32602, "message": "Unknown tool: secret"}
    assert [r.getMessage() for r in caplog.records] == [
        "tool 'secret' is hidden: its visible predicate raised"
    ] * 2


def test_visible_sees_the_request_context() -> None:
    seen: list[Any] = []
    app = App("access", "1.0")

    def visible(ctx: Context) -> bool:
        seen.append((ctx.principal, ctx.transport))
        return True

    @app.tool(visible=visible)
    def shown() -> str:
        return "s"

    with Client(app, principal=BOB) as client:
        assert [t["name"] for t in client.list_tools()] == ["shown"]
    assert seen == [(BOB, "memory")]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"visible": True}, "tool 'f': visible must be a function (ctx) -> bool"),
        ({"scopes": "notes:read"}, "tool 'f': scopes must be a list or set of strings"),
        ({"scopes": ["a", 1]}, "tool 'f': every one of scopes must be a non-empty string"),
        ({"scopes": ["a b"]}, "tool 'f': a scope cannot contain a space"),
        ({"tags": "admin"}, "tool 'f': tags must be a list or set of strings"),
        ({"tags": [""]}, "tool 'f': every one of tags must be a non-empty string"),
    ],
)
def test_access_options_are_checked_at_definition(options: dict[str, Any], message: str) -> None:
    app = App("access", "1.0")

    def f() -> str:
        return ""

    with pytest.raises(DefinitionError) as raised:
        app.add_tool(f, **options)
    assert str(raised.value).startswith(message)


def test_an_async_visible_is_refused_on_every_decorator() -> None:
    app = App("access", "1.0")

    async def visible(ctx: Context) -> bool:
        return True

    def f() -> str:
        return ""

    def g(x: str) -> str:
        return x

    with pytest.raises(DefinitionError, match="visible must be a plain"):
        app.add_tool(f, visible=visible)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="visible must be a plain"):
        app.add_prompt(f, visible=visible)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="visible must be a plain"):
        app.add_resource("a://b", f, visible=visible)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="ttl_ms must be an integer"):
        app.add_resource("a://b", f, ttl_ms=-1)
    with pytest.raises(DefinitionError, match='cache_scope must be "public" or "private"'):
        app.add_resource("a://{x}", g, cache_scope="shared")  # type: ignore[arg-type]


def test_scopes_of_reads_scopes_scope_and_scp() -> None:
    class Token:
        scp = "a b"

    assert scopes_of(None) == frozenset()
    assert scopes_of({"scope": "a  b"}) == {"a", "b"}
    assert scopes_of({"scopes": ["a", 3], "scope": "c"}) == {"a"}
    assert scopes_of({"scp": ["x"]}) == {"x"}
    assert scopes_of(Token()) == {"a", "b"}
    assert scopes_of({"scope": {"a": 1}}) == frozenset()


# --------------------------------------------------------------------- enable/disable


def test_disable_and_enable_by_tag_and_name_with_list_changed() -> None:
    app = build()
    with Client(app, principal=ALICE) as alice:
        alice.notifications.clear()
        app.disable(tags={"notes"})
        assert [t["name"] for t in alice.list_tools()] == ["echo", "audit"]
        answer = alice.send(_message("2025-11-25", "tools/call", {"name": "write_note"}))
        assert answer["error"] == {"code": -32602, "message": "Unknown tool: write_note"}
        app.enable(name="write_note")  # the latest rule naming it wins over its tag's
        assert [t["name"] for t in alice.list_tools()] == ["echo", "write_note", "audit"]
        app.disable(tags={"notes"})  # ... and the other way round
        assert [t["name"] for t in alice.list_tools()] == ["echo", "audit"]
        app.disable(name="notes://all")  # a resource by URI
        app.disable(name="hello")
        assert [r["uri"] for r in alice.list_resources()] == ["public://readme"]
        assert [p["name"] for p in alice.list_prompts()] == ["draft"]
        app.disable(name="nothing")  # nothing changes: no notification
    assert [n["method"] for n in alice.notifications] == [
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    ]


def test_disable_rules_apply_to_definitions_added_later() -> None:
    app = App("access", "1.0")
    app.disable(tags={"beta"})

    @app.tool(tags={"beta"})
    def preview() -> str:
        return "p"

    @app.tool
    def stable() -> str:
        return "s"

    with Client(app) as client:
        assert [t["name"] for t in client.list_tools()] == ["stable"]
        app.remove_tool("preview")
        assert [t["name"] for t in client.list_tools()] == ["stable"]
        app.enable(tags={"beta"})
        assert app.switches.off == set()


def test_enable_and_disable_need_a_target() -> None:
    app = App("access", "1.0")
    with pytest.raises(TypeError, match=r"take name=\.\.\. and/or tags=\.\.\."):
        app.disable()
    with pytest.raises(DefinitionError, match="tags must be a list or set of strings"):
        app.enable(tags="beta")


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
def test_lists_are_filtered_before_they_are_paged(version: str) -> None:
    app = App("access", "1.0", options=ServerOptions(page_size=2))
    for number in range(6):
        scopes = ["x"] if number % 2 else None
        app.add_tool(lambda: "", name=f"t{number}", scopes=scopes)
    with Client(app, protocol_version=version) as client:
        first = client.request("tools/list")
        assert [t["name"] for t in first["tools"]] == ["t0", "t2"]
        second = client.request("tools/list", {"cursor": first["nextCursor"]})
        assert [t["name"] for t in second["tools"]] == ["t4"]
        assert "nextCursor" not in second


# ---------------------------------------------------------------------- cache scope


def _hints(app: App, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
    with Client(app, protocol_version=MODERN, **kw) as client:
        result = client.request(method, params)
    return result["ttlMs"], result["cacheScope"]


def test_cache_scope_is_public_without_auth_or_guarded_definitions() -> None:
    app = App("plain", "1.0", options=ServerOptions(ttl_ms=1000))

    @app.tool
    def echo(text: str) -> str:
        return text

    assert _hints(app, "tools/list") == (1000, "public")
    assert _hints(app, "tools/list", principal=BOB) == (1000, "private")


def test_cache_scope_is_private_with_guarded_definitions_unless_set_explicitly() -> None:
    assert _hints(build(ttl_ms=5), "tools/list") == (5, "private")
    assert _hints(build(cache_scope="public"), "prompts/list") == (0, "private")
    explicit = build(cache={"tools/list": (60_000, "public")})
    assert _hints(explicit, "tools/list") == (60_000, "public")
    assert _hints(explicit, "prompts/list") == (0, "private")


def test_a_resource_sets_its_own_read_hints() -> None:
    app = build(ttl_ms=5, cache={"resources/read": (10, "private")})

    @app.resource("public://logo", ttl_ms=3_600_000, cache_scope="public")
    def logo() -> str:
        return "logo"

    @app.resource("public://half", ttl_ms=7)
    def half() -> str:
        return "half"

    assert _hints(app, "resources/read", {"uri": "public://logo"}) == (3_600_000, "public")
    assert _hints(app, "resources/read", {"uri": "public://half"}) == (7, "private")
    assert _hints(app, "resources/read", {"uri": "public://readme"}) == (10, "private")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cache": {"tools/call": (1, "public")}}, "cache: 'tools/call' has no cache hints"),
        ({"cache": {"tools/list": 5}}, "cache['tools/list'] must be a tuple (ttl_ms, cache_scope)"),
        ({"cache": {"tools/list": (-1, "public")}}, "cache['tools/list']: ttl_ms must be"),
        ({"cache": {"tools/list": (1, "shared")}}, "cache['tools/list']: cache_scope must be"),
        ({"cache": [("tools/list", (1, "public"))]}, "cache must map method names"),
        ({"on_missing_scope": "deny"}, 'on_missing_scope must be "hide" or "challenge"'),
    ],
)
def test_server_options_check_the_access_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ServerOptions(**options)


def test_cacheable_names_the_methods_the_core_marks_cacheable() -> None:
    assert {name for name, spec in HANDLERS.items() if spec.cacheable} == CACHEABLE


def test_the_memory_client_always_hides_even_in_challenge_mode() -> None:
    with Client(build(on_missing_scope="challenge"), principal=BOB) as bob:
        assert names(bob) == READER


# ---------------------------------------------------------------------------- stdio


async def _stdio(app: App, messages: list[dict[str, Any]]) -> list[Any]:
    async with serve_on_pipes(app) as (server, stdin, stdout):
        answers = []
        for message in messages:
            os.write(stdin, json.dumps(message).encode() + b"\n")
            answers.append(json.loads(await asyncio.wait_for(stdout.readline(), 10)))
        os.close(stdin)
        await asyncio.wait_for(server, 10)
    return answers


def _stdio_lists(app: App) -> Iterator[list[str]]:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    answers = asyncio.run(
        _stdio(
            app,
            [
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
                _message("2025-11-25", "tools/list", {}),
                _message(MODERN, "tools/list", {}),
            ],
        )
    )
    for answer in answers[1:]:
        yield [t["name"] for t in answer["result"]["tools"]]


def test_stdio_hides_scoped_definitions_without_a_stdio_principal() -> None:
    assert list(_stdio_lists(build(on_missing_scope="challenge"))) == [["echo"], ["echo"]]


def test_stdio_serves_as_the_stdio_principal() -> None:
    everything = ["echo", "write_note", "audit"]
    assert list(_stdio_lists(build(stdio_principal=ALICE))) == [everything, everything]


# --------------------------------------------------------------------- subscriptions


def _updated(notes: list[dict[str, Any]]) -> list[str]:
    return [n["params"]["uri"] for n in notes if n["method"] == "notifications/resources/updated"]


def test_a_session_hears_no_updates_of_a_resource_hidden_from_it() -> None:
    app = build()
    uris = ["notes://all", "notes://7", "memo://unknown", "public://readme"]

    async def scenario() -> dict[str, list[str]]:
        heard = {}
        for who, principal in (("alice", ALICE), ("bob", {"sub": "bob", "scp": []})):
            async with Client(app, principal=principal) as client:
                for uri in uris:
                    assert await client.request("resources/subscribe", {"uri": uri}) == {}
                for uri in uris:
                    app.notify_resource_updated(uri)
                await settle()
                heard[who] = _updated(client.notifications)
        return heard

    assert run(scenario) == {
        "alice": uris,
        "bob": ["memo://unknown", "public://readme"],  # an unknown URI is heard of, as before
    }


def test_a_session_hears_no_updates_of_a_resource_disabled_after_it_subscribed() -> None:
    app = build()
    uris = ["notes://all", "public://readme"]

    reader = {"sub": "carol", "scp": ["notes:read"]}  # not notes:write: the template is hidden

    async def scenario() -> list[str]:
        async with Client(app, principal=reader) as carol:
            for uri in uris:
                assert await carol.request("resources/subscribe", {"uri": uri}) == {}
            app.disable(name="notes://all")
            for uri in uris:
                app.notify_resource_updated(uri)
            await settle()
            app.enable(name="notes://all")
            app.notify_resource_updated("notes://all")
            await settle()
            return _updated(carol.notifications)

    assert run(scenario) == ["public://readme", "notes://all"]  # told again once shown again


def test_a_listen_stream_hears_no_updates_of_a_resource_hidden_from_it() -> None:
    app = build()
    wanted = {"resourceSubscriptions": ["notes://all", "public://readme"]}

    async def scenario() -> tuple[dict[str, Any], list[str]]:
        async with Client(app, protocol_version=MODERN, principal=BOB) as bob:
            stream = asyncio.ensure_future(bob.send(listen_request("listen-1", wanted)))
            await settle()
            app.disable(name="notes://all")
            app.notify_resource_updated("notes://all")
            app.notify_resource_updated("public://readme")
            await settle()
            stream.cancel()
            return bob.notifications[0]["params"]["notifications"], _updated(bob.notifications)

    acknowledged, heard = run(scenario)
    assert acknowledged == wanted  # the acknowledgement names every URI asked for, as before
    assert heard == ["public://readme"]
