"""``mcpkit call``: arguments from --arg and --json, results, exit codes and usage errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_support import BUILD_APP, app, assert_usage_error, mcpkit

from mcpkit.cli.call import parse_arg


def test_build_app_with_args() -> None:
    result = mcpkit(
        "call", BUILD_APP, "build-app", "--arg", "project_dir=/src/demo", "--arg", "arch=arm64"
    )
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == {
        "content": [{"type": "text", "text": '{"exit_code":0,"output":"demo-debug-arm64.pkg"}'}],
        "structuredContent": {"exit_code": 0, "output": "demo-debug-arm64.pkg"},
        "isError": False,
    }


def test_json_with_args_applied_over_it() -> None:
    result = mcpkit("call", app("documented"), "add", "--json", '{"a": 1, "b": 1}', "--arg", "b=5")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["structuredContent"] == {"result": 6}


def test_typed_args() -> None:
    result = mcpkit(
        "call",
        app("documented"),
        "echo",
        "--arg",
        "items=[1,2]",
        "--arg",
        'options={"k":"v"}',
        "--arg",
        "flag=true",
    )
    assert json.loads(result.stdout)["content"][0]["text"] == "[1, 2] {'k': 'v'} True"


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        ("42", {"type": "string"}, "42"),
        ("true", {"type": "string", "enum": ["true"]}, "true"),
        ("3", {"type": "integer"}, 3),
        ("2.5", {"type": "number"}, 2.5),
        ("false", {"type": "boolean"}, False),
        ('["a"]', {"type": "array"}, ["a"]),
        ("null", {"type": ["string", "null"]}, None),
        ("hello", {"type": ["string", "null"]}, "hello"),
        ("7", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 7),
        ("x y", None, "x y"),
        ("[1]", None, [1]),
    ],
    ids=[
        "str",
        "str-enum",
        "int",
        "number",
        "bool",
        "array",
        "null",
        "str-or-null",
        "anyof",
        "unknown",
        "unknown-json",
    ],
)
def test_parse_arg(value: str, schema: Any, expected: Any) -> None:
    assert parse_arg("k", value, schema) == expected


def test_error_result_exits_1() -> None:
    result = mcpkit("call", app("documented"), "fail", "--arg", "message=boom")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "content": [{"type": "text", "text": "boom"}],
        "isError": True,
    }


def test_invalid_arguments_exit_1() -> None:
    result = mcpkit("call", app("documented"), "add", "--arg", "a=1.5")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["isError"] is True


def test_protocol_error_exits_1() -> None:
    result = mcpkit(
        "call",
        app("documented"),
        "add",
        "--arg",
        "a=1",
        "--arg",
        "c=2",
        "--protocol-version",
        "2025-06-18",
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["nope"], "no tool named 'nope' (tools: resize, add, fail, echo)"),
        (["add", "--arg", "a"], "--arg 'a' is not KEY=VALUE"),
        (["add", "--arg", "=1"], "--arg '=1' is not KEY=VALUE"),
        (["add", "--arg", "a=x"], "--arg a=x: expected integer as JSON text"),
        (["add", "--json", "{a: 1}"], "--json is not valid JSON"),
        (["add", "--json", "[1]"], "--json must be a JSON object, not list"),
    ],
    ids=["unknown-tool", "no-equals", "no-key", "not-an-integer", "bad-json", "json-not-object"],
)
def test_usage_errors(args: list[str], fragment: str) -> None:
    assert_usage_error(mcpkit("call", app("documented"), *args), "call", fragment)


def test_bad_target() -> None:
    assert_usage_error(mcpkit("call", "missing.py:app", "x"), "call", "no such file: missing.py")
