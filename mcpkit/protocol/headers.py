"""The 2026-07-28 mirrored headers: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and
``Mcp-Param-*`` checked against the request body (the rule lives here; HTTP only supplies
the headers).

``headers`` maps each lower-case header name to its values, in order. Every failure raises
:class:`~mcpkit.exceptions.HeaderMismatch` (``-32020``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from mcpkit._param_headers import header_properties
from mcpkit.app import App
from mcpkit.exceptions import HeaderMismatch, MCPKitError
from mcpkit.protocol.versions import META_VERSION

__all__ = ["Headers", "check_headers", "decode_header_value"]

Headers = Mapping[str, Sequence[str]]
"""Lower-case header name -> its values, in the order they came."""

_NAMED = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",  # SEP-2663: the task id routes its requests
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_B64_PREFIX, _B64_SUFFIX = "=?base64?", "?="
_HEADER_CACHE_SIZE = 1024
_headers_of: dict[int, tuple[Mapping[str, Any], list[tuple[tuple[str, ...], str]]]] = {}


def check_headers(headers: Headers, method: str, params: dict[str, Any], app: App) -> None:
    """Check the mirrored headers of a stateless-era request whose ``_meta`` is valid."""
    _expect(headers, "MCP-Protocol-Version", params["_meta"][META_VERSION])
    _expect(headers, "Mcp-Method", method)
    field = _NAMED.get(method)
    if field is not None:
        _expect(headers, "Mcp-Name", params.get(field), encoded=True)
    if method == "tools/call":
        _check_params(headers, params, app)


def _check_params(headers: Headers, params: dict[str, Any], app: App) -> None:
    name = params.get("name")
    tool = app.tools.get(name) if isinstance(name, str) else None
    arguments = params.get("arguments")
    if tool is None or not isinstance(arguments, dict):
        return
    try:
        schema = tool.input_schema
    except MCPKitError:
        return  # the call itself reports a tool that cannot be compiled
    for path, header in _mirrored(schema):
        value = _lookup(arguments, path)
        if value is None:
            continue  # absent or null: the client omits the header, nothing to check
        text = _expect_present(headers, f"Mcp-Param-{header}")
        if not _same_value(text, value):
            _mismatch(f"Mcp-Param-{header} value {text!r} does not match the body")


def _mirrored(schema: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """:func:`header_properties` of a tool's input schema, found once per schema object (a
    compiled tool keeps its schema, so every later call reuses the list)."""
    cached = _headers_of.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    found = header_properties(schema)
    if len(_headers_of) >= _HEADER_CACHE_SIZE:
        _headers_of.clear()
    _headers_of[id(schema)] = (schema, found)  # holds the schema: its id stays its own
    return found


def _single(headers: Headers, name: str) -> str | None:
    values = headers.get(name.lower())
    if not values:
        return None
    if len(values) > 1:
        _mismatch(f"the {name} header appears more than once")
    return values[0].strip(" \t")


def _expect_present(headers: Headers, name: str) -> str:
    value = _single(headers, name)
    if value is None:
        _mismatch(f"the {name} header is required")
    return decode_header_value(value, name)


def _expect(headers: Headers, name: str, body_value: Any, *, encoded: bool = False) -> None:
    value = _single(headers, name)
    if value is None:
        _mismatch(f"the {name} header is required")
    text = decode_header_value(value, name) if encoded else value
    if text != body_value:
        _mismatch(f"{name} header value {value!r} does not match body value {body_value!r}")


def decode_header_value(value: str, name: str) -> str:
    """A header value as text: ``=?base64?...?=`` decoded strictly, others checked for safety."""
    if any(not (" " <= ch <= "~" or ch == "\t") for ch in value):
        _mismatch(f"the {name} header has characters outside visible ASCII")
    if len(value) >= 11 and value.startswith(_B64_PREFIX) and value.endswith(_B64_SUFFIX):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            _mismatch(f"the {name} header is not valid Base64")
    return value


def _mismatch(text: str) -> NoReturn:
    raise HeaderMismatch(f"Header mismatch: {text}")


def _lookup(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _same_value(text: str, value: Any) -> bool:
    """A header's text against the body's value: booleans as ``true``/``false``, numbers
    numerically (``42.0`` equals ``42``), strings exactly."""
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):
        from decimal import Decimal, InvalidOperation  # ~1.5 ms: numeric headers only

        try:
            return Decimal(text) == Decimal(repr(value))
        except InvalidOperation:
            return False
    return isinstance(value, str) and text == value
