"""What ``mcpkit docs`` and ``mcpkit inspect`` show of declared access: every definition
(those hidden from an anonymous caller too), with its scopes, tags and visible predicate."""

from __future__ import annotations

import pytest
from test_access import build

from mcpkit.cli.inspect import summary
from mcpkit.cli.snapshot import snapshot
from mcpkit.docgen.markdown import render


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_snapshot_lists_hidden_definitions_and_their_access(version: str) -> None:
    app = build()
    app.disable(name="hello")
    found = snapshot(app, version)
    assert [t["name"] for t in found["tools/list"]] == ["echo", "write_note", "audit"]
    assert [t["uriTemplate"] for t in found["resources/templates/list"]] == ["notes://{number}"]
    assert [p["name"] for p in found["prompts/list"]] == ["draft", "hello"]
    assert found["access"] == {
        "tools/list": {
            "write_note": {"scopes": ["notes:write"], "tags": ["notes"]},
            "audit": {"tags": ["admin"], "visible": True},
        },
        "resources/list": {"notes://all": {"scopes": ["notes:read"]}},
        "resources/templates/list": {"notes://{number}": {"scopes": ["notes:write"]}},
        "prompts/list": {"draft": {"scopes": ["notes:write"]}},
    }


def test_inspect_shows_scopes_and_tags() -> None:
    lines = summary(snapshot(build(), "2025-11-25")).splitlines()
    assert "  write_note(text: string)  [scopes: notes:write; tags: notes]" in lines
    assert "  audit()  [tags: admin; visible per caller]" in lines
    assert "  note: notes://{number}  [scopes: notes:write]" in lines
    assert "  echo(text: string)" in lines


def test_docs_show_scopes_and_tags() -> None:
    text = render(snapshot(build(), "2025-11-25"))
    write_note = text.split("### write\\_note", 1)[1].split("####", 1)[0]
    assert write_note.strip().splitlines() == [
        "- **Required scopes:** `notes:write`",
        "- **Tags:** `notes`",
    ]
    audit = text.split("### audit", 1)[1].split("####", 1)[0]
    assert "- **Visible:** decided per caller" in audit.splitlines()
