"""Reading a request's params: the checks every feature shares, with one wording."""

from __future__ import annotations

from typing import Any

from mcpkit.exceptions import InvalidParams

__all__ = ["string_param"]


def string_param(params: dict[str, Any], key: str) -> str:
    """``params[key]``, which must be a string (else ``-32602``)."""
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParams(f"Invalid params: {key!r} must be a string")
    return value
