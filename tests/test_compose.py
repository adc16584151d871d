"""Composing apps: ``App.include`` puts another app's definitions under a prefix, in both eras;
clashes, bad prefixes and later changes (with their list_changed notifications)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from features_support import HANDSHAKE, STATELESS, Client, era, rpc_error, run, settle

from mcpkit import App, Context, DefinitionError
from mcpkit._compose import prefixed_uri
from mcpkit.protocol.versions import META_CAPABILITIES, META_SUBSCRIPTION, META_VERSION


def notes_app() -> App:
    @contextlib.asynccontextmanager
    async def store(app: App) -> AsyncIterator[dict[str, str]]:
        yield {"todo": "buy milk"}

    notes = App("notes", "1.0", lifespan=store)

    @notes.tool
    def search(word: str, ctx: Context) -> str:
        """Find a note."""
        return ",".join(t for t, text in ctx.state.items() if word in text)

    @notes.prompt(completions={"title": lambda value, given: ["todo", "tomorrow"]})
    def summarize(title: str) -> str:
        """Summarize a note."""
        return f"Summarize {title}"

    @notes.resource("notes://board")
    def board() -> str:
        return "the board"

    @notes.resource("notes://{title}")
    def note(title: str, ctx: Context) -> str:
        return str(ctx.state[title])

    return notes


def main_app(**include: Any) -> tuple[App, App]:
    @contextlib.asynccontextmanager
    async def own(app: App) -> AsyncIterator[str]:
        yield "main state"

    main = App("main", "1.0", lifespan=own)

    @main.tool
    def whoami(ctx: Context) -> str:
        """The main app's state."""
        return str(ctx.state)

    notes = notes_app()
    main.include(notes, prefix="notes", **include)
    return main, notes


def message(version: str, method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    if version == STATELESS:
        params = {**params, "_meta": {META_VERSION: STATELESS, META_CAPABILITIES: {}}}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


async def answer(client: Client, method: str, params: dict[str, Any]) -> Any:
    return await client.send(message(client.protocol_version, method, params))


CACHEABLE = {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}


def result(version: str, method: str, result: dict[str, Any]) -> dict[str, Any]:
    """The whole response to request 1: ``result`` in the era's envelope."""
    if version == STATELESS:
        info = {"io.modelcontextprotocol/serverInfo": {"name": "main", "version": "1.0"}}
        result = {**result, "resultType": "complete", "_meta": info}
        if method in CACHEABLE or method == "resources/read":
            result.update(ttlMs=0, cacheScope="public")
    return {"jsonrpc": "2.0", "id": 1, "result": result}


SEARCH = {
    "name": "notes_search",
    "description": "Find a note.",
    "inputSchema": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    },
}


@era
def test_lists_show_included_definitions_under_the_prefix(version: str) -> None:
    main, _ = main_app(uri_prefix="team")

    async def scenario() -> None:
        async with Client(main, protocol_version=version) as client:
            tools = await answer(client, "tools/list", {})
            whoami = {
                "name": "whoami",
                "description": "The main app's state.",
                "inputSchema": {"type": "object", "properties": {}},
            }
            assert tools == result(version, "tools/list", {"tools": [whoami, SEARCH]})
            prompts = await answer(client, "prompts/list", {})
            summarize = {
                "name": "notes_summarize",
                "description": "Summarize a note.",
                "arguments": [{"name": "title", "required": True}],
            }
            assert prompts == result(version, "prompts/list", {"prompts": [summarize]})
            board = {"uri": "notes://team/board", "name": "board"}
            resources = await answer(client, "resources/list", {})
            assert resources == result(version, "resources/list", {"resources": [board]})
            note = {"uriTemplate": "notes://team/{title}", "name": "note"}
            templates = await answer(client, "resources/templates/list", {})
            expected = result(version, "resources/templates/list", {"resourceTemplates": [note]})
            assert templates == expected

    run(scenario)


@era
def test_calls_reach_included_definitions_with_their_own_apps_state(version: str) -> None:
    main, _ = main_app(uri_prefix="team")

    async def scenario() -> None:
        async with Client(main, protocol_version=version) as client:
            call = await answer(
                client, "tools/call", {"name": "notes_search", "arguments": {"word": "milk"}}
            )
            text = {"content": [{"type": "text", "text": "todo"}], "isError": False}
            assert call == result(version, "tools/call", text)
            own = await client.call_tool("whoami")
            assert own.data == "main state"
            read = await answer(client, "resources/read", {"uri": "notes://team/todo"})
            contents = {"uri": "notes://team/todo", "mimeType": "text/plain", "text": "buy milk"}
            assert read == result(version, "resources/read", {"contents": [contents]})
            prompt = await answer(
                client, "prompts/get", {"name": "notes_summarize", "arguments": {"title": "x"}}
            )
            asked = {"role": "user", "content": {"type": "text", "text": "Summarize x"}}
            expected = {"messages": [asked], "description": "Summarize a note."}
            assert prompt == result(version, "prompts/get", expected)
            unknown = await answer(client, "tools/call", {"name": "search", "arguments": {}})
            assert unknown["error"] == {"code": -32602, "message": "Unknown tool: search"}
            hidden = await rpc_error(client.read_resource("notes://board"))  # it moved
            assert hidden.data == {"uri": "notes://board"}

    run(scenario)


@era
def test_completions_follow_their_prompts_and_templates(version: str) -> None:
    main, notes = main_app(uri_prefix="team")

    @notes.completion
    def fallback(ref: dict[str, Any], argument: str, value: str, given: Any) -> list[str]:
        return [f"{ref['type']} {ref.get('name', ref.get('uri'))} {argument}"]

    async def scenario() -> None:
        async with Client(main, protocol_version=version) as client:
            ref = {"type": "ref/prompt", "name": "notes_summarize"}
            params = {"ref": ref, "argument": {"name": "title", "value": "to"}}
            done = await answer(client, "completion/complete", params)
            values = {"values": ["todo", "tomorrow"], "total": 2, "hasMore": False}
            assert done == result(version, "completion/complete", {"completion": values})
            ref = {"type": "ref/resource", "uri": "notes://team/{title}"}
            params = {"ref": ref, "argument": {"name": "title", "value": ""}}
            done = await answer(client, "completion/complete", params)
            # the included app's own completer answers, with the reference as it knows it
            values = {
                "values": ["ref/resource notes://{title} title"],
                "total": 1,
                "hasMore": False,
            }
            assert done == result(version, "completion/complete", {"completion": values})

    run(scenario)


# --------------------------------------------------------------------- names and URIs


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        pytest.param("notes://board", "notes://team/board", id="authority"),
        pytest.param("notes://{title}/text", "notes://team/{title}/text", id="template"),
        pytest.param("file:///srv/{+path}", "file:///team/srv/{+path}", id="no-authority"),
        pytest.param("https://example.com/a", "https://team/example.com/a", id="https"),
    ],
)
def test_uri_prefix_keeps_the_scheme(uri: str, expected: str) -> None:
    assert prefixed_uri(uri, "team", "here") == expected


def test_uri_prefix_needs_scheme_uris() -> None:
    main, notes = App("main", "1"), App("notes", "1")
    notes.add_resource("urn:notes:board", lambda: "b")
    with pytest.raises(DefinitionError) as caught:
        main.include(notes, prefix=None, uri_prefix="team")
    assert str(caught.value) == (
        "resource 'urn:notes:board' of app 'notes': uri_prefix needs URIs of the form "
        "scheme://...; 'urn:notes:board' is not (include this app without uri_prefix)"
    )
    with pytest.raises(DefinitionError, match="uri_prefix 'a/b' must be letters"):
        main.include(notes, prefix=None, uri_prefix="a/b")
    main.include(notes, prefix=None)  # without uri_prefix it keeps its URI
    assert list(main.resources) == ["urn:notes:board"]


@pytest.mark.parametrize("prefix", ["has space", "", "a/b", "ü", "p" * 127])
def test_a_prefix_must_be_tool_name_characters(prefix: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        App("main", "1").include(App("notes", "1"), prefix=prefix)
    assert str(caught.value) == (
        f"include: prefix {prefix!r} must be 1-126 characters of A-Z a-z 0-9 _ - . (the "
        "characters of a tool name, MCP 2025-11-25), or None to keep the names"
    )


def test_a_prefixed_name_past_128_characters_is_refused_now_and_later() -> None:
    main, notes = App("main", "1"), App("notes", "1")
    notes.add_tool(lambda: "x", name="t" * 120)
    with pytest.raises(DefinitionError) as caught:
        main.include(notes, prefix="prefix12")
    assert str(caught.value) == (
        f"tool {'t' * 120!r} of app 'notes' would be named {'prefix12_' + 't' * 120!r} (129 "
        "characters) in app 'main'; a tool name is 1-128 characters of A-Z a-z 0-9 _ - . "
        "(MCP 2025-11-25): choose a shorter prefix"
    )
    assert not main.tools  # nothing changed
    assert not main._includes
    main.include(notes, prefix="p")
    with pytest.raises(DefinitionError, match="would be named"):
        notes.add_tool(lambda: "y", name="u" * 127)
    assert list(notes.tools) == ["t" * 120]  # refused before anything changed


def test_a_clash_names_both_sources_now_and_on_a_later_add() -> None:
    main, notes = App("main", "1"), App("notes", "1")
    main.add_tool(lambda: "main", name="notes_search")
    notes.add_tool(lambda: "notes", name="search")
    with pytest.raises(DefinitionError) as caught:
        main.include(notes, prefix="notes")
    assert str(caught.value) == (
        "tool 'notes_search' is defined twice in app 'main': tool 'notes_search' of app 'main' "
        "and tool 'notes_search' (tool 'search' of app 'notes'); choose another name or prefix"
    )
    main.remove_tool("notes_search")
    main.include(notes, prefix="notes")
    notes.add_tool(lambda: "x", name="other")
    with pytest.raises(DefinitionError) as caught:
        main.add_tool(lambda: "x", name="notes_other")
    assert str(caught.value) == (
        "tool 'notes_other' is defined twice in app 'main': tool 'notes_other' (tool 'other' of "
        "app 'notes') and tool 'notes_other' of app 'main'; choose another name or prefix"
    )
    main.add_resource("notes://board", lambda: "main")
    with pytest.raises(DefinitionError) as caught:
        notes.add_resource("notes://board", lambda: "notes")
    assert str(caught.value) == (
        "resource 'notes://board' is defined twice in app 'main': resource 'notes://board' of "
        "app 'main' and resource 'notes://board' (resource 'notes://board' of app 'notes'); "
        "choose another name or prefix"
    )
    assert "notes://board" not in notes.resources  # the included app did not change either


def test_two_included_apps_that_clash_are_both_named() -> None:
    main, left, right = App("main", "1"), App("left", "1"), App("right", "1")
    left.add_prompt(lambda: "l", name="greet")
    right.add_prompt(lambda: "r", name="greet")
    main.include(left, prefix=None)
    with pytest.raises(DefinitionError) as caught:
        main.include(right, prefix=None)
    assert str(caught.value) == (
        "prompt 'greet' is defined twice in app 'main': prompt 'greet' (prompt 'greet' of app "
        "'left') and prompt 'greet' (prompt 'greet' of app 'right'); choose another name or prefix"
    )
    assert right._includers == []  # refused before anything changed
    main.include(right, prefix="r")
    assert list(main.prompts) == ["greet", "r_greet"]


def test_includes_that_cannot_work_are_refused() -> None:
    a, b, c = App("a", "1"), App("b", "1"), App("c", "1")
    a.include(b, prefix="b")
    b.include(c, prefix="c")
    with pytest.raises(DefinitionError, match=r"^app 'c' cannot include app 'a': it would include"):
        c.include(a, prefix="a")
    with pytest.raises(DefinitionError, match="cannot include app 'a': it would include itself"):
        a.include(a, prefix="a")
    with pytest.raises(DefinitionError, match=r"^app 'b' is already included in app 'a'$"):
        a.include(b, prefix="again")
    b.add_tool(lambda: "x", name="x")
    with pytest.raises(KeyError, match="comes from an included app: remove it there"):
        a.remove_tool("b_x")
    assert list(a.tools) == ["b_x"]


# ------------------------------------------------------------------------ later changes


def test_later_changes_propagate_with_list_changed() -> None:
    main, notes = main_app()

    async def scenario() -> None:
        async with Client(main) as client:
            client.notifications.clear()

            @notes.tool
            def later() -> str:
                """Added after the include."""
                return "later"

            assert (await client.call_tool("notes_later")).data == "later"
            notes.disable(name="search")
            notes.add_prompt(lambda: "p", name="extra")
            notes.remove_tool("later")
            notes.add_resource("notes://more", lambda: "more")
            await settle()
            assert [t["name"] for t in await client.list_tools()] == ["whoami"]
            notes.enable(name="search")
            await settle()
            assert [t["name"] for t in await client.list_tools()] == ["whoami", "notes_search"]
            assert [p["name"] for p in await client.list_prompts()] == [
                "notes_summarize",
                "notes_extra",
            ]
            assert client.notifications == [
                {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}
                for kind in ("tools", "tools", "prompts", "tools", "resources", "tools")
            ]

    run(scenario)


def test_a_listen_stream_hears_an_included_apps_changes() -> None:
    main, notes = main_app(uri_prefix="team")
    sub = META_SUBSCRIPTION

    async def scenario() -> None:
        async with Client(main, protocol_version=STATELESS) as client:
            wanted = {"toolsListChanged": True, "resourceSubscriptions": ["notes://team/board"]}
            listen = message(STATELESS, "subscriptions/listen", {"notifications": wanted}, 9)
            stream = asyncio.ensure_future(client.send(listen))
            await settle()
            notes.add_tool(lambda: "x", name="x")
            notes.notify_resource_updated("notes://board")
            await settle()
            assert client.notifications[1:] == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed",
                    "params": {"_meta": {sub: 9}},
                },
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"_meta": {sub: 9}, "uri": "notes://team/board"},
                },
            ]
            await client.notify("notifications/cancelled", {"requestId": 9})
            assert await asyncio.wait_for(stream, 2) is None

    run(scenario)


def test_a_subscribed_session_hears_an_included_resources_update_at_its_uri() -> None:
    main, notes = main_app(uri_prefix="team")

    async def scenario() -> None:
        async with Client(main) as client:
            await client.request("resources/subscribe", {"uri": "notes://team/board"})
            client.notifications.clear()
            notes.notify_resource_updated("notes://board")
            notes.notify_resource_updated("notes://elsewhere")  # not subscribed
            notes.notify_resource_updated("no-scheme")  # no URI it serves: nothing to say
            await settle()
            assert client.notifications == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": "notes://team/board"},
                }
            ]

    run(scenario)


def test_an_include_while_serving_is_heard_and_its_lifespan_did_not_run() -> None:
    main = App("main", "1")
    notes = notes_app()

    @notes.tool
    def state(ctx: Context) -> str:
        return repr(ctx.state)

    async def scenario() -> None:
        async with Client(main, protocol_version=HANDSHAKE) as client:
            main.include(notes, prefix="notes")
            await settle()
            assert [n["method"] for n in client.notifications] == [
                "notifications/tools/list_changed",
                "notifications/resources/list_changed",
                "notifications/prompts/list_changed",
            ]
            assert (await client.call_tool("notes_state")).data == "None"

    run(scenario)

    async def fresh() -> None:  # a server started after the include enters it
        async with Client(main) as client:
            assert (await client.call_tool("notes_state")).data == "{'todo': 'buy milk'}"

    run(fresh)
