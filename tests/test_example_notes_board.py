"""``examples/notes_board.py``: an MCP App (one view, two linked tools), in memory in both eras
(exact wire) and over stdio with the official ``mcp`` client declaring the extension."""

from __future__ import annotations

from typing import Any

import pytest
from features_support import era
from interop_support import run, stdio_params
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from examples import notes_board
from mcpkit.testing import Client

UI = "io.modelcontextprotocol/ui"


@pytest.fixture(autouse=True)
def notes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes_board, "NOTES", ["buy milk"])


@era
def test_the_board_in_memory(version: str) -> None:
    with Client(notes_board.app, protocol_version=version) as client:
        tools = client.list_tools()
        assert [(tool["name"], tool["_meta"]) for tool in tools] == [
            ("show_board", {"ui": {"resourceUri": "ui://notes/board"}}),
            ("add_note", {"ui": {"resourceUri": "ui://notes/board", "visibility": ["app"]}}),
        ]
        [view] = client.read_resource("ui://notes/board")
        assert view["mimeType"] == "text/html;profile=mcp-app"
        assert view["_meta"] == {"ui": {"prefersBorder": True}}
        assert view["text"].startswith("<!doctype html>")
        added = client.call_tool("add_note", {"text": "call Ada"})
        assert {key: added.raw[key] for key in ("content", "structuredContent", "isError")} == {
            "content": [{"type": "text", "text": "added 'call Ada'"}],
            "structuredContent": {"notes": ["buy milk", "call Ada"]},
            "isError": False,
        }
        shown = client.call_tool("show_board", {})
        assert shown.raw["content"] == [{"type": "text", "text": "- buy milk\n- call Ada"}]


def test_the_board_over_stdio_with_the_official_client() -> None:
    async def scenario() -> dict[str, Any]:
        async with (
            stdio_client(stdio_params("examples/notes_board.py:app")) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            tools = await session.list_tools()
            resources = await session.list_resources()
            read_view = await session.read_resource("ui://notes/board")
            shown = await session.call_tool("show_board", {})
            return {
                "extensions": init.capabilities.model_dump(exclude_none=True).get("extensions"),
                "links": {tool.name: tool.meta for tool in tools.tools},
                "view": [(str(r.uri), r.mime_type, r.meta) for r in resources.resources],
                "read": (read_view.contents[0].mime_type, read_view.contents[0].meta),
                "text": shown.content[0].text,  # type: ignore[union-attr]
            }

    assert run(scenario) == {
        "extensions": {UI: {}},
        "links": {
            "show_board": {"ui": {"resourceUri": "ui://notes/board"}},
            "add_note": {"ui": {"resourceUri": "ui://notes/board", "visibility": ["app"]}},
        },
        "view": [
            ("ui://notes/board", "text/html;profile=mcp-app", {"ui": {"prefersBorder": True}})
        ],
        "read": ("text/html;profile=mcp-app", {"ui": {"prefersBorder": True}}),
        "text": "- buy milk\n- call Ada",
    }
