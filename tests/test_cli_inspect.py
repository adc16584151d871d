"""``mcpkit inspect``: the one-screen summary and the raw lists."""

from __future__ import annotations

import json

from cli_support import BUILD_APP, GOLDEN, app, assert_usage_error, mcpkit

from mcpkit.cli.inspect import summary


def test_build_app_golden() -> None:
    result = mcpkit("inspect", BUILD_APP)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (GOLDEN / "build_app.inspect.txt").read_text(encoding="utf-8")


def test_one_line_per_tool() -> None:
    lines = mcpkit(
        "inspect", app("documented"), "--protocol-version", "2025-03-26"
    ).stdout.splitlines()
    assert lines[0] == "documented <&> app 2.0.0 (protocol 2025-03-26)"
    assert (
        "  resize(window: object, mode?: fit | fill, scale?: number, note?: string)"
        " -> object of integer values" in lines
    )
    assert "  add(a: integer, b?: integer) -> {result}" in lines
    assert "  fail(message: string)" in lines


def test_json_is_the_docs_json() -> None:
    raw = mcpkit("inspect", BUILD_APP, "--json").stdout
    assert raw == mcpkit("docs", BUILD_APP, "--format", "json").stdout
    assert [t["name"] for t in json.loads(raw)["tools/list"]] == ["build-app", "lint-check"]


def test_resources_templates_and_prompts() -> None:
    text = summary(
        {
            "server": {
                "serverInfo": {"name": "s", "version": "1"},
                "protocolVersion": "v",
                "capabilities": {},
            },
            "tools/list": [],
            "resources/list": [
                {"name": "readme", "uri": "file:///README.md", "mimeType": "text/markdown"}
            ],
            "resources/templates/list": [{"name": "user", "uriTemplate": "users://{id}"}],
            "prompts/list": [
                {
                    "name": "review",
                    "description": "Review code.\nMore.",
                    "arguments": [{"name": "code", "required": True}, {"name": "style"}],
                }
            ],
        }
    )
    assert text == (
        "s 1 (protocol v)\n"
        "capabilities: none\n"
        "resources (1):\n"
        "  readme: file:///README.md (text/markdown)\n"
        "resource templates (1):\n"
        "  user: users://{id}\n"
        "prompts (1):\n"
        "  review(code, style?)\n"
        "      Review code.\n"
    )


def test_bad_target() -> None:
    assert_usage_error(mcpkit("inspect", "examples"), "inspect")
