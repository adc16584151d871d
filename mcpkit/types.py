"""JSON aliases shared by every layer."""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JSONObject", "JSONValue", "RequestId"]

JSONObject: TypeAlias = "dict[str, Any]"
JSONValue: TypeAlias = Any
RequestId: TypeAlias = str | int
