"""Render a :class:`~mcpkit.docgen.model.Document` as one self-contained HTML page.

No scripts and no external assets; a viewport meta and a little CSS make it readable on a phone.
The markup is also well-formed XML (every element closed), and every string from the snapshot is
escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mcpkit.docgen.model import Cell, Document, Entry, Group, Table, build

__all__ = ["entry_html", "intro_html", "render", "render_document"]

_CSS = """
body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem;
  color: #1f2328; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
code { background: #f3f4f6; padding: 0 0.2em; border-radius: 3px; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
section.entry { border-top: 1px solid #d0d7de; margin-top: 1.5rem; }
nav ul { padding-left: 1.2rem; }
@media (max-width: 40rem) { body { padding: 0.5rem; font-size: 15px; } }
""".strip()


def render(snapshot: dict[str, Any]) -> str:
    """The HTML page of a snapshot."""
    return render_document(build(snapshot))


def render_document(doc: Document) -> str:
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8" />',
        '<meta name="viewport" content="width=device-width, initial-scale=1" />',
        f"<title>{escape(doc.title)}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{escape(doc.title)}</h1>",
    ]
    body = _intro(doc) + _contents(doc) + [line for g in doc.groups for line in _group(g)]
    return "\n".join([*head, *body, "</body>", "</html>"]) + "\n"


def intro_html(doc: Document) -> str:
    """The server's introduction and facts, as an HTML fragment (``mcpkit dev``'s page)."""
    return "\n".join(_intro(doc))


def entry_html(entry: Entry) -> str:
    """One tool, resource, template or prompt, as an HTML fragment (``mcpkit dev``'s page)."""
    return "\n".join(_entry(entry))


def _intro(doc: Document) -> list[str]:
    lines = [_paragraphs(doc.intro)] if doc.intro else []
    lines.append(_facts(doc.facts))
    if not doc.groups:
        lines.append("<p>This server publishes no tools, resources or prompts.</p>")
    return lines


def _contents(doc: Document) -> list[str]:
    if not doc.groups:
        return []
    lines = ["<nav>", "<h2>Contents</h2>", "<ul>"]
    for group in doc.groups:
        links = "".join(
            f'<li><a href="#{e.anchor}">{escape(e.name)}</a></li>' for e in group.entries
        )
        lines.append(
            f'<li><a href="#{group.anchor}">{escape(group.heading)}</a><ul>{links}</ul></li>'
        )
    return [*lines, "</ul>", "</nav>"]


def _group(group: Group) -> list[str]:
    lines = [f'<h2 id="{group.anchor}">{escape(group.heading)}</h2>']
    for entry in group.entries:
        lines += _entry(entry)
    return lines


def _entry(entry: Entry) -> list[str]:
    lines = ['<section class="entry">', f'<h3 id="{entry.anchor}">{escape(entry.name)}</h3>']
    if entry.title:
        lines.append(f"<p><strong>{escape(entry.title)}</strong></p>")
    if entry.description:
        lines.append(_paragraphs(entry.description))
    if entry.facts:
        lines.append(_facts(entry.facts))
    for table in entry.tables:
        lines += _table(table)
    if entry.example is not None:
        lines += ["<h4>Example call</h4>", f"<pre><code>{escape(entry.example)}</code></pre>"]
    return [*lines, "</section>"]


def _table(table: Table) -> list[str]:
    lines = [f"<h4>{escape(table.title)}</h4>"]
    if not table.rows:
        return [*lines, f"<p>{escape(table.empty)}</p>"]
    header = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    lines += ['<div class="scroll"><table>', f"<thead><tr>{header}</tr></thead>", "<tbody>"]
    lines += ["<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in table.rows]
    return [*lines, "</tbody>", "</table></div>"]


def _facts(facts: list[tuple[str, Cell]]) -> str:
    items = "".join(f"<li><strong>{escape(k)}:</strong> {_cell(v)}</li>" for k, v in facts)
    return f"<ul>{items}</ul>"


def _cell(value: Cell) -> str:
    if isinstance(value, tuple):
        return ", ".join(f"<code>{escape(v)}</code>" for v in value)
    return escape(value).replace("\n", "<br />")


def _paragraphs(text: str) -> str:
    parts = [p.strip() for p in text.split("\n\n") if p.strip()]
    return "\n".join(f"<p>{escape(p).replace(chr(10), '<br />')}</p>" for p in parts)
