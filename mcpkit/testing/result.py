"""What the test client answers a ``tools/call`` with: the wire dict plus typed views."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["CallToolResult", "is_wrapper_schema"]


_WRAPPER_KEYS = frozenset({"type", "properties", "required", "$defs"})


def is_wrapper_schema(schema: Mapping[str, Any] | None) -> bool:
    """Whether an ``outputSchema`` is the one mcpkit publishes for a non-object return type.

    That schema is exactly ``{"type": "object", "properties": {"result": ...},
    "required": ["result"]}`` (plus ``$defs`` when the type has any): see
    :func:`mcpkit.schema.return_schema`. The wire carries no other mark, so an object type
    whose only field is a required ``result`` publishes the same schema and reads as wrapped.
    """
    if schema is None or not set(schema) <= _WRAPPER_KEYS:
        return False
    properties = schema.get("properties")
    return (
        schema.get("type") == "object"
        and isinstance(properties, Mapping)
        and set(properties) == {"result"}
        and schema.get("required") == ["result"]
    )


class CallToolResult(dict[str, Any]):
    """A ``tools/call`` result as the client received it, with typed views.

    ``data`` is the tool's value as Python sees it: ``structuredContent`` without the
    ``{"result": ...}`` wrapper (when the tool's output schema is the wrapper), or
    ``structuredContent`` itself for object results. Without structured content it is the text
    of a single text block (not parsed: a tool returning ``"42"`` returned a string), ``None``
    when there is no content, else the list of content blocks. On an ``isError`` result it is
    ``None``: read ``text`` for the message.
    """

    __slots__ = ("_wrapped",)

    def __init__(self, message: Mapping[str, Any], *, wrapped: bool = False) -> None:
        super().__init__(message)
        self._wrapped = wrapped

    @property
    def data(self) -> Any:
        """The returned value, wrapper removed (see the class docstring for every case)."""
        if self.is_error:
            return None
        if "structuredContent" in self:
            return self._unwrapped(self["structuredContent"])
        content = self.content
        if not content:
            return None
        if len(content) == 1 and content[0].get("type") == "text":
            return content[0].get("text")
        return content

    def _unwrapped(self, structured: Any) -> Any:
        if self._wrapped and isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]
        return structured

    @property
    def structured(self) -> Any:
        """``structuredContent`` as sent (``None`` when absent)."""
        return self.get("structuredContent")

    @property
    def content(self) -> list[dict[str, Any]]:
        """The content blocks (``[]`` when absent)."""
        blocks: list[dict[str, Any]] = self.get("content") or []
        return blocks

    @property
    def text(self) -> str:
        """The text of every text block, joined with newlines (``""`` when there is none)."""
        return "\n".join(
            str(block.get("text", "")) for block in self.content if block.get("type") == "text"
        )

    @property
    def is_error(self) -> bool:
        """``isError``: the tool failed (its message is in ``text``)."""
        return self.get("isError") is True

    @property
    def raw(self) -> dict[str, Any]:
        """The wire ``CallToolResult`` as a plain ``dict`` (a shallow copy)."""
        return dict(self)
