"""Return values -> MCP ``CallToolResult`` objects (pure functions, no I/O)."""

from __future__ import annotations

from typing import Any

from mcpkit import _codec
from mcpkit._frozen import frozen
from mcpkit.content import Content

__all__ = [
    "ToolResult",
    "content_blocks",
    "error_result",
    "structured_result",
    "tool_result",
    "unstructured_result",
]


@frozen
class ToolResult:
    """Full control over a tool's result.

    ``content`` is a ``str``, a content helper or a list of them; ``structured`` becomes
    ``structuredContent`` (its JSON is mirrored as a text block when ``content`` is empty);
    ``is_error`` sets ``isError``; ``meta`` becomes ``_meta``.
    """

    content: Any = None
    structured: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None


def content_blocks(value: Any) -> list[dict[str, Any]]:
    """Content blocks for an unstructured value: text, helpers, lists, anything JSON-able."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, Content):
        return [value.to_block()]
    if isinstance(value, (list, tuple)) and any(isinstance(v, (str, *Content)) for v in value):
        return [block for item in value for block in content_blocks(item)]
    return [_json_text(value)]


def structured_result(structured: Any, *, text_mirror: bool = True) -> dict[str, Any]:
    """``structuredContent`` plus, unless turned off, the same JSON as one text block."""
    content = [_json_text(structured)] if text_mirror else []
    return {"content": content, "structuredContent": structured, "isError": False}


def unstructured_result(value: Any) -> dict[str, Any]:
    return {"content": content_blocks(value), "isError": False}


def error_result(message: str) -> dict[str, Any]:
    """A tool execution error: ``isError: true`` with one text block."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def tool_result(result: ToolResult, *, text_mirror: bool = True) -> dict[str, Any]:
    """The wire form of an explicit :class:`ToolResult`."""
    out: dict[str, Any] = {"content": content_blocks(result.content)}
    if result.structured is not None:
        out["structuredContent"] = result.structured
        if not out["content"] and text_mirror:
            out["content"] = [_json_text(result.structured)]
    out["isError"] = result.is_error
    if result.meta:
        out["_meta"] = result.meta
    return out


def _json_text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": _codec.to_json(value, fallback=str).decode()}
