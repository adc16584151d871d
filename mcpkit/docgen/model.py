"""A snapshot (what ``mcpkit docs --format json`` writes) -> a document both renderers share.

The document holds plain text only; a cell given as a tuple is a list of code literals (names,
enum values, defaults), which each renderer marks up its own way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcpkit._frozen import frozen
from mcpkit.docgen.fields import Field, allowed_values, constraints, example, fields, type_words

__all__ = ["Cell", "Document", "Entry", "Group", "Table", "access_facts", "build"]

Cell = str | tuple[str, ...]

_FLAGS = {
    ("readOnlyHint", True): "read-only",
    ("readOnlyHint", False): "may modify its environment",
    ("destructiveHint", True): "destructive",
    ("destructiveHint", False): "not destructive",
    ("idempotentHint", True): "idempotent",
    ("idempotentHint", False): "not idempotent",
    ("openWorldHint", True): "open world",
    ("openWorldHint", False): "closed world",
}
_INPUT_COLUMNS = ("name", "type", "required", "default", "allowed values", "constraints")
_OUTPUT_COLUMNS = ("field", "type", "always present", "allowed values", "constraints")


@frozen
class Table:
    title: str
    columns: tuple[str, ...]
    rows: list[tuple[Cell, ...]]
    empty: str


@frozen
class Entry:
    anchor: str
    name: str
    title: str | None
    description: str | None
    facts: list[tuple[str, Cell]]
    tables: list[Table]
    example: str | None = None


@frozen
class Group:
    anchor: str
    heading: str
    entries: list[Entry]


@frozen
class Document:
    title: str
    intro: str | None
    facts: list[tuple[str, Cell]]
    groups: list[Group]


def build(snapshot: dict[str, Any]) -> Document:
    """The document of a snapshot: server facts, then one group per non-empty list."""
    server = snapshot.get("server") or {}
    info = server.get("serverInfo") or {}
    title = str(info.get("title") or info.get("name") or "MCP server")
    facts: list[tuple[str, Cell]] = [
        ("Server", (f"{info.get('name', '?')} {info.get('version', '?')}",)),
        ("Protocol version", (str(server.get("protocolVersion", "?")),)),
        ("Capabilities", tuple(sorted(server.get("capabilities") or {}))),
    ]
    intro = "\n\n".join(t for t in (info.get("description"), server.get("instructions")) if t)
    anchors = {_anchor(heading, set()) for _, heading, _ in _lists(snapshot)}
    access = snapshot.get("access") or {}
    groups = [
        Group(
            _anchor(heading, set()),
            heading,
            [build_entry(kind, i, anchors, access.get(_METHODS[kind])) for i in items],
        )
        for kind, heading, items in _lists(snapshot)
        if items
    ]
    return Document(title, intro or None, facts, groups)


def _lists(snapshot: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    return [
        ("tool", "Tools", snapshot.get("tools/list") or []),
        ("resource", "Resources", snapshot.get("resources/list") or []),
        ("template", "Resource templates", snapshot.get("resources/templates/list") or []),
        ("prompt", "Prompts", snapshot.get("prompts/list") or []),
    ]


_METHODS = {
    "tool": "tools/list",
    "resource": "resources/list",
    "template": "resources/templates/list",
    "prompt": "prompts/list",
}
_IDENTS = {"tool": "name", "resource": "uri", "template": "uriTemplate", "prompt": "name"}


def build_entry(
    kind: str, item: dict[str, Any], anchors: set[str], access: dict[str, Any] | None = None
) -> Entry:
    """One entry; ``access`` is the snapshot's access map of its list (by name, URI or URI
    template)."""
    name = str(item.get("name") or item.get("uri") or item.get("uriTemplate") or "?")
    anchor = _anchor(f"{kind}-{name}", anchors)
    builder = {"tool": _tool, "prompt": _prompt}.get(kind, _resource)
    facts, tables, call = builder(item)
    facts += access_facts((access or {}).get(str(item.get(_IDENTS[kind]))) or {})
    title = item.get("title")
    return Entry(anchor, name, title, item.get("description"), facts, tables, call)


def access_facts(declared: dict[str, Any]) -> list[tuple[str, Cell]]:
    """A definition's declared access (``{"scopes", "tags", "visible"}``) as facts."""
    facts: list[tuple[str, Cell]] = []
    if declared.get("scopes"):
        facts.append(("Required scopes", tuple(str(s) for s in declared["scopes"])))
    if declared.get("tags"):
        facts.append(("Tags", tuple(str(t) for t in declared["tags"])))
    if declared.get("visible"):
        facts.append(("Visible", "decided per caller"))
    return facts


def _anchor(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower() or "entry"
    anchor, number = base, 1
    while anchor in taken:
        number += 1
        anchor = f"{base}-{number}"
    taken.add(anchor)
    return anchor


Built = tuple[list[tuple[str, Cell]], list[Table], str | None]


def _tool(item: dict[str, Any]) -> Built:
    facts: list[tuple[str, Cell]] = []
    flags = annotation_flags(item.get("annotations") or {})
    if flags:
        facts.append(("Annotations", ", ".join(flags)))
    tables = [input_table(item.get("inputSchema") or {})]
    if isinstance(item.get("outputSchema"), dict):
        tables.append(output_table(item["outputSchema"]))
    call = {"name": item.get("name"), "arguments": example(item.get("inputSchema") or {}) or {}}
    return facts, tables, json.dumps(call, indent=2, ensure_ascii=False)


def annotation_flags(annotations: dict[str, Any]) -> list[str]:
    """``{"readOnlyHint": true}`` -> ``["read-only"]`` (the title hint as ``title: ...``)."""
    flags = [_FLAGS[(k, v)] for k, v in annotations.items() if (k, v) in _FLAGS]
    if annotations.get("title"):
        flags.insert(0, f"title: {annotations['title']}")
    return flags


def input_table(schema: dict[str, Any]) -> Table:
    rows = [_input_row(f) for f in fields(schema)]
    return Table("Parameters", (*_INPUT_COLUMNS, "description"), rows, "No parameters.")


def _input_row(f: Field) -> tuple[Cell, ...]:
    default = (_literal_default(f.schema),) if "default" in f.schema else ""
    return (
        (f.path,),
        type_words(f.schema),
        "yes" if f.required else "no",
        default,
        allowed_values(f.schema),
        ", ".join(constraints(f.schema)),
        str(f.schema.get("description") or ""),
    )


def _literal_default(schema: dict[str, Any]) -> str:
    return json.dumps(schema["default"], ensure_ascii=False)


def output_table(schema: dict[str, Any]) -> Table:
    rows: list[tuple[Cell, ...]] = [
        (
            (f.path,),
            type_words(f.schema),
            "yes" if f.required else "no",
            allowed_values(f.schema),
            ", ".join(constraints(f.schema)),
            str(f.schema.get("description") or ""),
        )
        for f in fields(schema)
    ]
    return Table("Output", (*_OUTPUT_COLUMNS, "description"), rows, f"Type: {type_words(schema)}.")


def _prompt(item: dict[str, Any]) -> Built:
    rows: list[tuple[Cell, ...]] = [
        (
            (str(arg.get("name", "?")),),
            "yes" if arg.get("required") else "no",
            str(arg.get("description") or ""),
        )
        for arg in item.get("arguments") or []
    ]
    table = Table("Arguments", ("name", "required", "description"), rows, "No arguments.")
    return [], [table], None


def _resource(item: dict[str, Any]) -> Built:
    facts: list[tuple[str, Cell]] = []
    for key, label in (("uri", "URI"), ("uriTemplate", "URI template"), ("mimeType", "MIME type")):
        if item.get(key):
            facts.append((label, (str(item[key]),)))
    if isinstance(item.get("size"), int):
        facts.append(("Size", f"{item['size']} bytes"))
    flags = annotation_flags(item.get("annotations") or {})
    if flags:
        facts.append(("Annotations", ", ".join(flags)))
    return facts, [], None
