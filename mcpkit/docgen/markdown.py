"""Render a :class:`~mcpkit.docgen.model.Document` as GitHub-flavoured Markdown."""

from __future__ import annotations

from typing import Any

from mcpkit.docgen.model import Cell, Document, Entry, Table, build

__all__ = ["render", "render_document"]


def render(snapshot: dict[str, Any]) -> str:
    """The Markdown page of a snapshot."""
    return render_document(build(snapshot))


def render_document(doc: Document) -> str:
    lines = [f"# {_text(doc.title)}", ""]
    if doc.intro:
        lines += [doc.intro, ""]
    lines += [f"- **{label}:** {_cell(value)}" for label, value in doc.facts] + [""]
    if not doc.groups:
        lines += ["This server publishes no tools, resources or prompts.", ""]
    for group in doc.groups:
        lines += [f"## {group.heading}", ""]
        for entry in group.entries:
            lines += _entry(entry)
    return "\n".join(lines).rstrip("\n") + "\n"


def _entry(entry: Entry) -> list[str]:
    lines = [f"### {_text(entry.name)}", ""]
    if entry.title:
        lines += [f"**{_text(entry.title)}**", ""]
    if entry.description:
        lines += [entry.description.strip(), ""]
    if entry.facts:
        lines += [f"- **{label}:** {_cell(value)}" for label, value in entry.facts] + [""]
    for table in entry.tables:
        lines += _table(table)
    if entry.example is not None:
        lines += ["#### Example call", "", "```json", entry.example, "```", ""]
    return lines


def _table(table: Table) -> list[str]:
    lines = [f"#### {table.title}", ""]
    if not table.rows:
        return [*lines, table.empty, ""]
    lines.append("| " + " | ".join(table.columns) + " |")
    lines.append("|" + "---|" * len(table.columns))
    lines += ["| " + " | ".join(_cell(c, in_table=True) for c in row) + " |" for row in table.rows]
    return [*lines, ""]


def _cell(value: Cell, *, in_table: bool = False) -> str:
    text = ", ".join(_code(v) for v in value) if isinstance(value, tuple) else _text(value)
    if in_table:
        text = text.replace("|", "\\|").replace("\n", "<br>")
    return text


def _code(value: str) -> str:
    fence = "``" if "`" in value else "`"
    pad = " " if "`" in value else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _text(value: str) -> str:
    """Plain text where Markdown would read markup: escape the characters that start it."""
    for char in "\\`*_[]<>":
        value = value.replace(char, "\\" + char)
    return value
