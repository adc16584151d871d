"""The generated docs of what the page sees, as HTML fragments to show beside each form.

The page sends what it received over ``/mcp`` (the ``initialize`` or ``server/discover``
result and the four lists, the shape of ``mcpkit docs --format json``); :func:`fragments`
renders it with :mod:`mcpkit.docgen`, so the page's docs are ``mcpkit docs``'s, for the era
the page speaks, and the App's lifespan is not entered a second time to make them.
"""

from __future__ import annotations

from typing import Any

from mcpkit.docgen.html import entry_html, intro_html
from mcpkit.docgen.model import build, build_entry

__all__ = ["KINDS", "fragments"]

KINDS = (
    ("tool", "tools/list", "name"),
    ("resource", "resources/list", "uri"),
    ("template", "resources/templates/list", "uriTemplate"),
    ("prompt", "prompts/list", "name"),
)
"""(kind, the list it comes from, the key that names an item)."""


def fragments(snapshot: dict[str, Any]) -> dict[str, Any]:
    """``{"title", "intro", "entries": {"KIND:NAME": html}}`` for a snapshot."""
    anchors: set[str] = set()
    entries: dict[str, str] = {}
    for kind, method, ident in KINDS:
        items = snapshot.get(method)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                entry = build_entry(kind, item, anchors)
                entries[f"{kind}:{item.get(ident)}"] = entry_html(entry)
    doc = build(snapshot)
    return {"title": doc.title, "intro": intro_html(doc), "entries": entries}
