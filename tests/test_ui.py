"""MCP Apps (``io.modelcontextprotocol/ui``): views, linked tools, the advertised extension and
what a definition may not say, in both eras (in memory)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from features_support import ERAS, Client, era, run, text_of

from mcpkit import App, Context, DefinitionError, ServerOptions

UI = "io.modelcontextprotocol/ui"
HTML = "<!doctype html><html><body><div id=board></div></body></html>"
VIEW_META = {
    "ui": {
        "csp": {"connectDomains": ["https://api.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "domain": "board.example.com",
        "prefersBorder": True,
    }
}


def make_app(options: ServerOptions | None = None) -> App:
    app = App("notes", "1", options=options)

    @app.ui(
        "ui://notes/board",
        title="Notes board",
        csp={"connectDomains": ["https://api.example.com"]},
        permissions=["clipboardWrite"],
        domain="board.example.com",
        prefers_border=True,
    )
    def board() -> str:
        """The notes, as a board."""
        return HTML

    @app.tool(ui="ui://notes/board")
    def show_notes(ctx: Context) -> str:
        """Show the notes."""
        apps = ctx.client_extension(UI)
        return f"2 notes (views: {apps['mimeTypes'] if apps else 'none'})"

    @app.tool(ui="ui://notes/board", ui_visibility=["app"], meta={"com.example/x": 1})
    def move_note(note: int) -> str:
        """Move a note (called by the view)."""
        return f"moved {note}"

    return app


@era
def test_lists_and_reads_are_the_same_for_every_client(version: str) -> None:
    async def scenario() -> list[Any]:
        seen = []
        for capabilities in (
            {},
            {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}},
        ):
            async with Client(make_app(), protocol_version=version, capabilities=capabilities) as c:
                seen.append((await c.list_tools(), await c.list_resources()))
                assert await c.read_resource("ui://notes/board") == [
                    {
                        "uri": "ui://notes/board",
                        "mimeType": "text/html;profile=mcp-app",
                        "text": HTML,
                        "_meta": VIEW_META,
                    }
                ]
        return seen

    plain, apps = run(scenario)
    assert plain == apps
    tools, resources = plain
    assert tools == [
        {
            "name": "show_notes",
            "description": "Show the notes.",
            "inputSchema": {"type": "object", "properties": {}},
            "_meta": {"ui": {"resourceUri": "ui://notes/board"}},
        },
        {
            "name": "move_note",
            "description": "Move a note (called by the view).",
            "inputSchema": {
                "type": "object",
                "properties": {"note": {"type": "integer"}},
                "required": ["note"],
            },
            "_meta": {
                "com.example/x": 1,
                "ui": {"resourceUri": "ui://notes/board", "visibility": ["app"]},
            },
        },
    ]
    assert resources == [
        {
            "uri": "ui://notes/board",
            "name": "board",
            "title": "Notes board",
            "description": "The notes, as a board.",
            "mimeType": "text/html;profile=mcp-app",
            "_meta": VIEW_META,
        }
    ]


@era
def test_the_tool_reads_the_hosts_mime_types_and_answers_text(version: str) -> None:
    declaring = {"extensions": {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}}

    async def scenario() -> list[str]:
        texts = []
        for capabilities in (declaring, {}):
            async with Client(make_app(), protocol_version=version, capabilities=capabilities) as c:
                texts.append(text_of(await c.call_tool("show_notes")))
        return texts

    assert run(scenario) == [
        "2 notes (views: ['text/html;profile=mcp-app'])",
        "2 notes (views: none)",
    ]


def test_the_extension_is_advertised_in_both_eras() -> None:
    async def capabilities(app: App, version: str) -> dict[str, Any]:
        async with Client(app, protocol_version=version) as client:
            if version == ERAS[1]:
                found: dict[str, Any] = (await client.request("server/discover"))["capabilities"]
                return found
            assert client.initialize_result is not None
            return dict(client.initialize_result["capabilities"])

    async def scenario() -> list[Any]:
        settings = ServerOptions(extensions={UI: {"com.example/note": "mine"}})
        return [
            (await capabilities(app, version)).get("extensions")
            for app in (make_app(), make_app(settings), App("plain", "1"))
            for version in ERAS
        ]

    assert run(scenario) == [
        {UI: {}},
        {UI: {}},
        {UI: {"com.example/note": "mine"}},  # the app's own settings win
        {UI: {"com.example/note": "mine"}},
        None,
        None,
    ]


def test_a_view_can_carry_no_ui_meta_and_a_blob() -> None:
    app = App("bare", "1")

    @app.ui("ui://bare/view")
    def view() -> bytes:
        return b"<p>hi</p>"

    with Client(app) as client:
        assert client.list_resources() == [
            {"uri": "ui://bare/view", "name": "view", "mimeType": "text/html;profile=mcp-app"}
        ]
        assert client.read_resource("ui://bare/view") == [
            {
                "uri": "ui://bare/view",
                "mimeType": "text/html;profile=mcp-app",
                "blob": "PHA+aGk8L3A+",
            }
        ]


def _ui(uri: str = "ui://a/v", **options: Any) -> Callable[[App], None]:
    def declare(app: App) -> None:
        app.ui(uri, **options)(lambda: HTML)

    return declare


def _tool(**options: Any) -> Callable[[App], None]:
    def declare(app: App) -> None:
        _ui()(app)
        app.tool(**options)(lambda: "text")

    return declare


REFUSED = [
    (_ui("https://a/v"), "ui 'https://a/v': an MCP Apps view's URI starts with 'ui://'"),
    (
        _ui(mime_type="text/html"),
        "ui 'ui://a/v': mime_type= is not an option of a view (its MIME type is "
        "'text/html;profile=mcp-app' and its URI has no variables)",
    ),
    (
        _ui(csp={"scriptDomains": ["x"]}),
        "ui 'ui://a/v': csp= maps some of ['connectDomains', 'resourceDomains', "
        "'frameDomains', 'baseUriDomains'] to lists of origins",
    ),
    (
        _ui(csp={"connectDomains": "https://x"}),
        "ui 'ui://a/v': csp['connectDomains'] is a list of origin strings",
    ),
    (
        _ui(permissions=["usb"]),
        "ui 'ui://a/v': unknown permission(s) ['usb']; the extension defines "
        "['camera', 'microphone', 'geolocation', 'clipboardWrite']",
    ),
    (_ui(domain=""), "ui 'ui://a/v': domain= is a host name string"),
    (_ui(prefers_border="yes"), "ui 'ui://a/v': prefers_border= is True or False"),
    (
        _ui(meta={"ui": {}}),
        "ui 'ui://a/v': meta= has a 'ui' key; mcpkit writes _meta.ui from the ui options",
    ),
    (
        _tool(name="t", ui="ui://a/other"),
        "tool 't' links ui='ui://a/other', which is not a view of this app; declare "
        "@app.ui('ui://a/other') before the tool (views so far: ['ui://a/v'])",
    ),
    (_tool(name="t", ui="board"), "tool 't': ui= names a view's 'ui://' URI, not 'board'"),
    (
        _tool(name="t", ui="ui://a/v", ui_visibility=["user"]),
        "tool 't': ui_visibility= is a non-empty list of 'model' and 'app', not ['user']",
    ),
    (
        _tool(name="t", ui_visibility=["app"]),
        "tool 't': ui_visibility= needs ui= (the view it applies to)",
    ),
    (
        _tool(name="t", ui="ui://a/v", text_mirror=False),
        "tool 't' links a view, so hosts without MCP Apps show its text: drop "
        "text_mirror=False (or return a ToolResult with text content)",
    ),
]


@pytest.mark.parametrize(("declare", "message"), REFUSED)
def test_definition_errors(declare: Callable[[App], None], message: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        declare(App("bad", "1"))
    assert str(caught.value) == message


def test_a_tool_before_its_view_is_refused_at_decoration() -> None:
    app = App("order", "1")
    with pytest.raises(DefinitionError, match=r"views so far: none\)$"):
        app.tool(name="early", ui="ui://a/v")(lambda: "text")
    assert dict(app.tools) == {}
