"""``mcpkit diff``: every breaking and compatible rule, for inputs and for outputs, both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import BUILD_APP, assert_usage_error, mcpkit

from mcpkit.docgen.changes import INPUT, OUTPUT, Change, compare, render_text, schema_changes

Schema = dict[str, Any]


def obj(required: tuple[str, ...] = ("p",), **properties: Schema) -> Schema:
    return {"type": "object", "properties": properties, "required": list(required)}


INT: Schema = {"type": "integer"}
STR: Schema = {"type": "string"}
B, C = True, False  # breaking, compatible

# (id, old, new, breaking flags seen as input, breaking flags seen as output)
RULES: list[tuple[str, Schema, Schema, list[bool], list[bool]]] = [
    ("removed", obj(p=INT, q=STR), obj(p=INT), [B], [B]),
    ("added-required", obj(p=INT), obj(("p", "q"), p=INT, q=STR), [B], [C]),
    ("added-optional", obj(p=INT), obj(p=INT, q=STR), [C], [C]),
    ("made-required", obj((), p=INT), obj(p=INT), [B], [C]),
    ("made-optional", obj(p=INT), obj((), p=INT), [C], [B]),
    ("type-narrowed", obj(p={"type": ["string", "integer"]}), obj(p=STR), [B], [C]),
    ("type-widened", obj(p=INT), obj(p={"type": "number"}), [C], [B]),
    ("type-widened-anyof", obj(p=INT), obj(p={"anyOf": [INT, STR]}), [C], [B]),
    ("type-changed", obj(p=STR), obj(p=INT), [B], [B]),
    ("enum-value-removed", obj(p={"enum": ["a", "b"]}), obj(p={"enum": ["a"]}), [B], [C]),
    ("enum-value-added", obj(p={"enum": ["a"]}), obj(p={"enum": ["a", "b"]}), [C], [B]),
    ("enum-introduced", obj(p=STR), obj(p={**STR, "enum": ["a"]}), [B], [C]),
    ("enum-dropped", obj(p={**STR, "enum": ["a"]}), obj(p=STR), [C], [B]),
    ("minimum-raised", obj(p={**INT, "minimum": 0}), obj(p={**INT, "minimum": 1}), [B], [C]),
    ("minimum-lowered", obj(p={**INT, "minimum": 1}), obj(p={**INT, "minimum": 0}), [C], [B]),
    ("maximum-lowered", obj(p={**INT, "maximum": 9}), obj(p={**INT, "maximum": 5}), [B], [C]),
    ("maximum-raised", obj(p={**INT, "maximum": 5}), obj(p={**INT, "maximum": 9}), [C], [B]),
    ("max-length-added", obj(p=STR), obj(p={**STR, "maxLength": 5}), [B], [C]),
    ("max-length-removed", obj(p={**STR, "maxLength": 5}), obj(p=STR), [C], [B]),
    ("pattern-changed", obj(p={**STR, "pattern": "a"}), obj(p={**STR, "pattern": "b"}), [B], [B]),
    (
        "closed",
        obj(p={"type": "object", "properties": {"x": INT}}),
        obj(p={"type": "object", "properties": {"x": INT}, "additionalProperties": False}),
        [B],
        [C],
    ),
    (
        "opened",
        obj(p={"type": "object", "properties": {"x": INT}, "additionalProperties": False}),
        obj(p={"type": "object", "properties": {"x": INT}}),
        [C],
        [B],
    ),
    (
        "default-changed",
        obj((), p={**INT, "default": 1}),
        obj((), p={**INT, "default": 2}),
        [B],
        [],
    ),
    ("default-of-required", obj(p={**INT, "default": 1}), obj(p={**INT, "default": 2}), [], []),
    ("description-changed", obj(p={**INT, "description": "x"}), obj(p=INT), [C], [C]),
    (
        "nested-removed",
        obj(p={"type": "object", "properties": {"x": INT, "y": INT}}),
        obj(p={"type": "object", "properties": {"x": INT}}),
        [B],
        [B],
    ),
    (
        "item-enum-value-removed",
        obj(p={"type": "array", "items": {"enum": ["a", "b"]}}),
        obj(p={"type": "array", "items": {"enum": ["a"]}}),
        [B],
        [C],
    ),
    ("unchanged", obj(p=INT), obj(p=INT), [], []),
    # An integer's "> 0" and ">= 1" are one bound (schema_profile="portable" writes the second).
    (
        "integer-bound-rewritten",
        obj(p={**INT, "exclusiveMinimum": 0}),
        obj(p={**INT, "minimum": 1}),
        [],
        [],
    ),
    (
        "integer-upper-rewritten",
        obj(p={**INT, "exclusiveMaximum": 10}),
        obj(p={**INT, "maximum": 9}),
        [],
        [],
    ),
    (
        "number-bound-made-inclusive",
        obj(p={"type": "number", "exclusiveMinimum": 0}),
        obj(p={"type": "number", "minimum": 0}),
        [C, C],
        [B, B],
    ),
    (
        "exclusive-raised",
        obj(p={"type": "number", "minimum": 0}),
        obj(p={"type": "number", "exclusiveMinimum": 0}),
        [B, B],
        [C, C],
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), [r[1:4] for r in RULES], ids=[r[0] for r in RULES]
)
def test_input_rules(old: Schema, new: Schema, expected: list[bool]) -> None:
    assert [breaking for breaking, _ in schema_changes(old, new, INPUT)] == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"), [(r[1], r[2], r[4]) for r in RULES], ids=[r[0] for r in RULES]
)
def test_output_rules(old: Schema, new: Schema, expected: list[bool]) -> None:
    assert [breaking for breaking, _ in schema_changes(old, new, OUTPUT)] == expected


def test_messages_name_the_parameter_and_the_change() -> None:
    old, new = obj(p={"enum": ["a", "b"]}), obj(p={"enum": ["a"]})
    assert list(schema_changes(old, new, INPUT)) == [
        (True, "parameter 'p': enum value \"b\" removed")
    ]
    assert list(schema_changes(obj(p=INT, q=STR), obj(p=INT), OUTPUT)) == [
        (True, "output field 'q' removed")
    ]


def snapshot(tools: list[dict[str, Any]], **lists: list[dict[str, Any]]) -> dict[str, Any]:
    return {"server": {}, "tools/list": tools, **lists}


def tool(name: str = "t", **fields: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": obj(()), **fields}


LIST_RULES: list[tuple[str, dict[str, Any], dict[str, Any], list[Change]]] = [
    (
        "tool-removed",
        snapshot([tool("a"), tool("b")]),
        snapshot([tool("a")]),
        [Change(True, "tool 'b'", "removed (or renamed): clients that use it break")],
    ),
    (
        "tool-added",
        snapshot([tool("a")]),
        snapshot([tool("a"), tool("b")]),
        [Change(False, "tool 'b'", "added")],
    ),
    (
        "output-schema-removed",
        snapshot([tool(outputSchema=obj(()))]),
        snapshot([tool()]),
        [
            Change(
                True, "tool 't'", "output schema removed: structured results are no longer promised"
            )
        ],
    ),
    (
        "output-schema-added",
        snapshot([tool()]),
        snapshot([tool(outputSchema=obj(()))]),
        [Change(False, "tool 't'", "output schema added")],
    ),
    (
        "description-and-title",
        snapshot([tool(description="x")]),
        snapshot([tool(description="y", title="T")]),
        [
            Change(False, "tool 't'", "title changed"),
            Change(False, "tool 't'", "description changed"),
        ],
    ),
    (
        "prompt-argument-required",
        snapshot([], **{"prompts/list": [{"name": "p", "arguments": [{"name": "a"}]}]}),
        snapshot(
            [], **{"prompts/list": [{"name": "p", "arguments": [{"name": "a", "required": True}]}]}
        ),
        [Change(True, "prompt 'p'", "argument 'a' made required")],
    ),
    (
        "prompt-argument-added",
        snapshot([], **{"prompts/list": [{"name": "p"}]}),
        snapshot([], **{"prompts/list": [{"name": "p", "arguments": [{"name": "a"}]}]}),
        [Change(False, "prompt 'p'", "new optional argument 'a'")],
    ),
    (
        "resource-removed",
        snapshot([], **{"resources/list": [{"uri": "file:///a", "name": "a"}]}),
        snapshot([]),
        [Change(True, "resource 'file:///a'", "removed (or renamed): clients that use it break")],
    ),
    (
        "resource-mime-type",
        snapshot(
            [], **{"resources/templates/list": [{"uriTemplate": "x/{id}", "mimeType": "a/b"}]}
        ),
        snapshot(
            [], **{"resources/templates/list": [{"uriTemplate": "x/{id}", "mimeType": "a/c"}]}
        ),
        [Change(True, "resource template 'x/{id}'", 'MIME type changed from "a/b" to "a/c"')],
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), [r[1:] for r in LIST_RULES], ids=[r[0] for r in LIST_RULES]
)
def test_definition_rules(old: dict[str, Any], new: dict[str, Any], expected: list[Change]) -> None:
    assert compare(old, new) == expected


def test_render_text_puts_breaking_first() -> None:
    changes = [Change(False, "tool 'b'", "added"), Change(True, "tool 'a'", "removed")]
    assert render_text(changes) == (
        "breaking    tool 'a': removed\n"
        "compatible  tool 'b': added\n"
        "2 changes: 1 breaking, 1 compatible\n"
    )


def _write(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


@pytest.fixture
def contracts(tmp_path: Path) -> tuple[str, str]:
    old = json.loads(mcpkit("docs", BUILD_APP, "--format", "json").stdout)
    new = json.loads(json.dumps(old))
    arch = new["tools/list"][0]["inputSchema"]["properties"]["arch"]
    arch["enum"] = ["arm64"]
    new["tools/list"][1]["description"] = "Lint the code."
    return _write(tmp_path / "old.json", old), _write(tmp_path / "new.json", new)


def test_cli_text(contracts: tuple[str, str]) -> None:
    result = mcpkit("diff", *contracts)
    assert result.exit_code == 1
    assert result.stdout == (
        "breaking    tool 'build-app': parameter 'arch': enum value \"x86_64\" removed\n"
        "compatible  tool 'lint-check': description changed\n"
        "2 changes: 1 breaking, 1 compatible\n"
    )


def test_cli_markdown(contracts: tuple[str, str]) -> None:
    result = mcpkit("diff", *contracts, "--format", "markdown")
    assert result.exit_code == 1
    assert result.stdout == (
        "## Tool contract changes\n\n**2 changes: 1 breaking, 1 compatible**\n\n"
        "### Breaking\n\n- tool 'build-app': parameter 'arch': enum value \"x86\\_64\" removed\n\n"
        "### Compatible\n\n- tool 'lint-check': description changed\n"
    )


def test_cli_compatible_only_exits_0(contracts: tuple[str, str]) -> None:
    old, new = contracts
    result = mcpkit("diff", new, old)  # reversed: the enum value comes back
    assert result.exit_code == 0
    assert result.stdout.endswith("2 changes: 0 breaking, 2 compatible\n")


def test_cli_no_changes(contracts: tuple[str, str]) -> None:
    old, _ = contracts
    assert (mcpkit("diff", old, old).exit_code, mcpkit("diff", old, old).stdout) == (
        0,
        "no changes\n",
    )


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(None, "cannot read"), ("{not json", "is not JSON: "), ("[1]", "is not a file written by")],
    ids=["missing", "not-json", "not-a-snapshot"],
)
def test_cli_bad_files(tmp_path: Path, content: str | None, fragment: str) -> None:
    path = tmp_path / "old.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    good = _write(tmp_path / "new.json", snapshot([]))
    assert_usage_error(mcpkit("diff", str(path), good), "diff", fragment, str(path))


def _with_access(declared: dict[str, Any] | None) -> dict[str, Any]:
    tool = {"name": "purge", "inputSchema": {"type": "object", "properties": {}}}
    snapshot: dict[str, Any] = {"tools/list": [tool]}
    if declared is not None:
        snapshot["access"] = {"tools/list": {"purge": declared}}
    return snapshot


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            None,
            {"scopes": ["admin"]},
            [
                Change(
                    True,
                    "tool 'purge'",
                    "now requires the scopes admin: callers without them lose it",
                )
            ],
        ),
        (
            {"scopes": ["admin", "notes:write"]},
            {"scopes": ["admin"]},
            [Change(False, "tool 'purge'", "no longer requires the scopes notes:write")],
        ),
        (
            None,
            {"visible": True},
            [Change(True, "tool 'purge'", "now visible per caller: some callers lose it")],
        ),
        (
            {"visible": True},
            None,
            [Change(False, "tool 'purge'", "no longer visible per caller only")],
        ),
        (
            {"tags": ["a"]},
            {"tags": ["a", "b"]},
            [Change(False, "tool 'purge'", "tags changed from a to a, b")],
        ),
        ({"scopes": ["admin"]}, {"scopes": ["admin"]}, []),
    ],
    ids=["scope-added", "scope-removed", "visible-added", "visible-removed", "tags", "same"],
)
def test_access_rules(
    old: dict[str, Any] | None, new: dict[str, Any] | None, expected: list[Change]
) -> None:
    assert compare(_with_access(old), _with_access(new)) == expected
