"""``mcpkit inspect TARGET``: what a client sees, in one screen (``--json`` for the raw lists)."""

from __future__ import annotations

from typing import Any

import click

from mcpkit.cli._io import load_compiled, protocol_version_option
from mcpkit.cli.snapshot import ACCESS, dumps, snapshot
from mcpkit.docgen.fields import allowed_values, type_words

__all__ = ["inspect", "summary"]


@click.command()
@click.argument("target")
@protocol_version_option
@click.option("--json", "as_json", is_flag=True, help="Print the raw wire lists as JSON.")
def inspect(target: str, protocol_version: str, as_json: bool) -> None:
    """Summarize the App that TARGET names: one line per tool with its parameters."""
    found = snapshot(load_compiled("inspect", target), protocol_version)
    click.echo(dumps(found) if as_json else summary(found), nl=False)


def summary(found: dict[str, Any]) -> str:
    """The terminal summary of a snapshot."""
    server = found["server"]
    info = server.get("serverInfo") or {}
    lines = [
        f"{info.get('name')} {info.get('version')} (protocol {server.get('protocolVersion')})",
        f"capabilities: {', '.join(sorted(server.get('capabilities') or {})) or 'none'}",
    ]
    access = found.get(ACCESS) or {}
    for title, method, ident, line in _SECTIONS:
        items = found.get(method) or []
        lines += _section(title, items, line, ident, access.get(method) or {})
    return "\n".join(lines) + "\n"


def _section(
    title: str, items: list[dict[str, Any]], line: Any, ident: str, access: dict[str, Any]
) -> list[str]:
    if not items:
        return []
    lines = [f"{title} ({len(items)}):"]
    for item in items:
        lines.append(f"  {line(item)}{_access_note(access.get(str(item.get(ident))))}")
        description = str(item.get("description") or "").strip()
        if description:
            lines.append(f"      {description.splitlines()[0]}")
    return lines


def _access_note(declared: dict[str, Any] | None) -> str:
    """``  [scopes: a b; tags: x; visible per caller]`` (empty without declared access)."""
    if not declared:
        return ""
    parts = []
    if declared.get("scopes"):
        parts.append(f"scopes: {' '.join(declared['scopes'])}")
    if declared.get("tags"):
        parts.append(f"tags: {', '.join(declared['tags'])}")
    if declared.get("visible"):
        parts.append("visible per caller")
    return f"  [{'; '.join(parts)}]"


def _tool_line(tool: dict[str, Any]) -> str:
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required") or ())
    params = ", ".join(
        f"{name}{'' if name in required else '?'}: {_short_type(sub)}"
        for name, sub in (schema.get("properties") or {}).items()
    )
    line = f"{tool.get('name')}({params})"
    output = tool.get("outputSchema")
    if isinstance(output, dict) and output.get("properties"):
        line += f" -> {{{', '.join(output['properties'])}}}"
    elif isinstance(output, dict):
        line += f" -> {type_words(output)}"
    return line


def _short_type(schema: Any) -> str:
    values = allowed_values(schema) if isinstance(schema, dict) else ()
    return " | ".join(values) if values and "enum" in schema else type_words(schema)


def _resource_line(item: dict[str, Any]) -> str:
    address = item.get("uri") or item.get("uriTemplate")
    mime = f" ({item['mimeType']})" if item.get("mimeType") else ""
    return f"{item.get('name')}: {address}{mime}"


def _prompt_line(prompt: dict[str, Any]) -> str:
    arguments = ", ".join(
        f"{a.get('name')}{'' if a.get('required') else '?'}" for a in prompt.get("arguments") or []
    )
    return f"{prompt.get('name')}({arguments})"


_SECTIONS = (
    ("tools", "tools/list", "name", _tool_line),
    ("resources", "resources/list", "uri", _resource_line),
    ("resource templates", "resources/templates/list", "uriTemplate", _resource_line),
    ("prompts", "prompts/list", "name", _prompt_line),
)
"""(title, list method, what names an item, how an item reads)."""
