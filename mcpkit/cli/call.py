"""``mcpkit call TARGET TOOL``: call a tool in-process, through the real protocol path.

``--arg key=value`` values are read per the parameter's published type: a ``string`` parameter
takes the text as it is; integers, numbers, booleans, arrays and objects are JSON text
(``--arg count=3``, ``--arg tags='["a","b"]'``). ``--json`` gives the arguments as one object;
``--arg`` values are applied over it.
"""

from __future__ import annotations

import json
from typing import Any

import click

from mcpkit.cli._io import fail, load_compiled, protocol_version_option
from mcpkit.cli.serve import configure
from mcpkit.cli.snapshot import dumps
from mcpkit.docgen.changes import type_set
from mcpkit.testing.client import Client, RPCError

__all__ = ["call", "parse_arg"]


@click.command()
@click.argument("target")
@click.argument("tool")
@click.option(
    "--arg",
    "args",
    multiple=True,
    metavar="KEY=VALUE",
    help="One argument; the value is read per the parameter's type. Repeatable.",
)
@click.option("--json", "json_text", metavar="OBJECT", help="All arguments as a JSON object.")
@protocol_version_option
def call(
    target: str, tool: str, args: tuple[str, ...], json_text: str | None, protocol_version: str
) -> None:
    """Call TOOL of the App that TARGET names and print the result as JSON.

    Exit code 1 when the result is an error (isError, or a JSON-RPC error), 2 for usage errors.
    """
    app = load_compiled("call", target)
    if not configure(app, command="call"):  # the tools read them: every problem, before a call
        raise click.exceptions.Exit(2)
    with Client(app, protocol_version=protocol_version) as client:
        tools = {t["name"]: t for t in client.list_tools()}
        if tool not in tools:
            known = ", ".join(tools) or "none"
            fail("call", f"no tool named {tool!r} (tools: {known})")
        arguments = _arguments(json_text, args, tools[tool].get("inputSchema") or {})
        try:
            result = client.call_tool(tool, arguments)
        except RPCError as exc:
            click.echo(dumps({"error": exc.error}), nl=False)
            raise click.exceptions.Exit(1) from None
    click.echo(dumps(result), nl=False)
    if result.get("isError"):
        raise click.exceptions.Exit(1)


def _arguments(json_text: str | None, args: tuple[str, ...], schema: dict[str, Any]) -> Any:
    arguments = _json_object(json_text) if json_text is not None else {}
    properties = schema.get("properties") or {}
    for item in args:
        key, value = _split(item)
        arguments[key] = parse_arg(key, value, properties.get(key))
    return arguments


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        fail("call", f"--json is not valid JSON: {exc.msg} (column {exc.colno})")
    if not isinstance(value, dict):
        fail("call", f"--json must be a JSON object, not {type(value).__name__}")
    return value


def _split(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        fail("call", f"--arg {item!r} is not KEY=VALUE")
    return key, value


def parse_arg(key: str, value: str, schema: Any) -> Any:
    """A ``--arg`` value as the parameter's type wants it (strings stay strings)."""
    types = type_set(schema) if isinstance(schema, dict) else frozenset({"any"})
    if types == {"string"}:
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        if "string" in types or "any" in types:
            return value
        wanted = " or ".join(sorted(types))
        fail("call", f"--arg {key}={value}: expected {wanted} as JSON text (e.g. 3, true, [1])")
