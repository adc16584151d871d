"""``mcpkit check``: errors, warnings, --strict, and the lint rules one by one."""

from __future__ import annotations

from typing import Any

import pytest
from cli_support import BUILD_APP, app, assert_usage_error, mcpkit

from mcpkit.docgen import lint as lint_module
from mcpkit.docgen.lint import Finding, lint

LONG = "a" * 70


def test_build_app_warns_about_undocumented_parameters() -> None:
    result = mcpkit("check", BUILD_APP)
    assert result.exit_code == 0
    assert (
        result.stdout
        == "".join(
            f"warning: tool 'build-app': parameter {p!r} has no description; add one to the "
            "docstring's Args\n"
            for p in ("project_dir", "arch", "configuration")
        )
        + "checked 2 definitions: 0 errors, 3 warnings\n"
    )


def test_strict_fails_on_warnings() -> None:
    assert mcpkit("check", BUILD_APP, "--strict").exit_code == 1
    assert mcpkit("check", app("warned"), "--strict").exit_code == 1
    assert mcpkit("check", app("warned")).exit_code == 0


def test_errors() -> None:
    result = mcpkit("check", app("flawed"))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("error: tool 'broken': does not compile: pydantic cannot build")
    assert lines[1] == (
        "error: tool 'undocumented': no description (clients and the conformance suite need "
        "one); add a docstring"
    )
    assert (
        f"warning: tool {LONG!r}: the name has 70 characters; some clients cut names at 64" in lines
    )
    assert lines[-1] == "checked 3 definitions: 2 errors, 3 warnings"


def test_client_tripping_shapes() -> None:
    assert mcpkit("check", app("warned")).stdout == (
        "warning: tool 'loose': parameter 'value' is a union (anyOf); some clients only read a "
        "plain 'type'\n"
        "warning: tool 'loose': parameter 'blob' is an open-ended object (any keys); give it a "
        "typed model\n"
        "checked 1 definition: 0 errors, 2 warnings\n"
    )


def test_clean_app() -> None:
    result = mcpkit("check", app("empty"))
    assert (result.exit_code, result.stdout) == (0, "checked 0 definitions: 0 errors, 0 warnings\n")


def test_bad_target() -> None:
    assert_usage_error(mcpkit("check", "nope.py"), "check", "no such file: nope.py")


def tool(name: str = "t", **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", "inputSchema": {"type": "object"}, **fields}


LINT_CASES: list[tuple[str, dict[str, list[dict[str, Any]]], list[Finding]]] = [
    ("clean", {"tool": [tool()]}, []),
    (
        "duplicate-title",
        {"tool": [tool("a", title="T"), tool("b", title="T")]},
        [Finding(True, "tool 'T'", "2 tools share the title 'T'")],
    ),
    (
        "duplicate-name",
        {"prompt": [{"name": "p", "description": "d"}, {"name": "p", "description": "d"}]},
        [Finding(True, "prompt 'p'", "2 prompts share the name 'p'")],
    ),
    (
        "bad-name",
        {"prompt": [{"name": "two words", "description": "d"}]},
        [
            Finding(
                True, "prompt 'two words'", "the name must be 1-128 characters of A-Z a-z 0-9 _ - ."
            )
        ],
    ),
    (
        "prompt-without-description",
        {"prompt": [{"name": "p", "arguments": [{"name": "x", "description": "y"}]}]},
        [
            Finding(
                True,
                "prompt 'p'",
                "no description (clients and the conformance suite need one); add a docstring",
            )
        ],
    ),
    (
        "prompt-argument-without-description",
        {"prompt": [{"name": "p", "description": "d", "arguments": [{"name": "x"}]}]},
        [Finding(False, "prompt 'p'", "argument 'x' has no description")],
    ),
    (
        "remaining-ref",
        {
            "tool": [
                tool(outputSchema={"type": "object", "properties": {"n": {"$ref": "#/$defs/Node"}}})
            ]
        },
        [
            Finding(
                False,
                "tool 't'",
                "the output field schema keeps a $ref (a recursive type); some clients fail on it",
            )
        ],
    ),
    (
        "remaining-ref-in-older-draft-keywords",
        {
            "tool": [
                tool(
                    inputSchema={
                        "type": "object",
                        "properties": {
                            "pair": {
                                "type": "array",
                                "description": "d",
                                "items": [{"$ref": "#/definitions/A"}],
                            }
                        },
                    }
                ),
                tool(
                    "u",
                    inputSchema={
                        "type": "object",
                        "definitions": {"A": {"$ref": "#/definitions/A"}},
                    },
                ),
            ]
        },
        [
            Finding(
                False,
                f"tool {name!r}",
                "the parameter schema keeps a $ref (a recursive type); some clients fail on it",
            )
            for name in ("t", "u")
        ],
    ),
    (
        # Schemas are read by keyword: a property named "$ref" and a default value holding a
        # "$ref" key are data, not a reference left in the schema.
        "ref-as-a-name-or-a-value",
        {
            "tool": [
                tool(
                    inputSchema={
                        "type": "object",
                        "properties": {
                            "$ref": {"type": "string", "description": "d"},
                            "pointer": {
                                "type": "object",
                                "description": "d",
                                "properties": {"$ref": {"type": "string"}},
                                "default": {"$ref": "#/$defs/Node"},
                            },
                        },
                    }
                )
            ]
        },
        [],
    ),
    (
        "oneof-in-nested-field",
        {
            "tool": [
                tool(
                    inputSchema={
                        "type": "object",
                        "properties": {
                            "o": {
                                "description": "d",
                                "type": "object",
                                "properties": {"u": {"oneOf": []}},
                            }
                        },
                    }
                )
            ]
        },
        [
            Finding(
                False,
                "tool 't'",
                "parameter 'o.u' is a union (oneOf); some clients only read a plain 'type'",
            )
        ],
    ),
    ("resource-long-name", {"resource": [{"uri": "x:" + LONG, "name": "r"}]}, []),
]


@pytest.mark.parametrize(
    ("definitions", "expected"), [c[1:] for c in LINT_CASES], ids=[c[0] for c in LINT_CASES]
)
def test_lint_rules(definitions: dict[str, list[dict[str, Any]]], expected: list[Finding]) -> None:
    assert lint(definitions) == expected


def test_token_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint_module, "TOKEN_BUDGET", 10)
    findings = lint({"tool": [tool(description="x" * 100)]})
    assert findings == [
        Finding(
            False,
            "server",
            "the definitions take about 43 tokens of every model's context (over 10); "
            "shorten descriptions or split the server",
        )
    ]
    assert str(findings[0]).startswith("warning: server: the definitions take about 43 tokens")
