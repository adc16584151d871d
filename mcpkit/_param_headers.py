"""Parameters mirrored into HTTP headers (2026-07-28 ``x-mcp-header``): marked, published, found.

``Annotated[str, Header("Region")]`` marks a parameter; :func:`mirror_headers` checks the marks
and publishes them as ``"x-mcp-header": "Region"`` on the input schema's properties;
:func:`header_properties` finds them again in any input schema (mcpkit's or one given by hand).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpkit import _typing
from mcpkit._frozen import frozen
from mcpkit._jsonschema import nested_properties
from mcpkit.exceptions import DefinitionError

__all__ = ["Header", "header_properties", "mirror_headers"]


@frozen
class Header:
    """Mirror a parameter into an HTTP header (2026-07-28 ``x-mcp-header``).

    ``region: Annotated[str, Header("Region")]`` publishes ``"x-mcp-header": "Region"``;
    Streamable HTTP clients then also send the value as ``Mcp-Param-Region``, so proxies can
    route on it, and the server checks that header and body agree. Allowed on string,
    integer and boolean parameters; the name is an HTTP token, unique ignoring case. Never
    mark secrets: headers are logged by proxies.
    """

    name: str


_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"  # compiled by its first use (re's cache), not at start-up


def mirror_headers(properties: dict[str, Any], annotations: Mapping[str, Any], owner: str) -> None:
    """Publish each parameter's :class:`Header` on its property (``annotations``: parameter
    name -> annotation, in order), or raise :class:`~mcpkit.DefinitionError` for a bad one."""
    seen: dict[str, str] = {}
    for name, annotation in annotations.items():
        header = _header_of(annotation)
        if header is None:
            continue
        where = f"{owner}: parameter {name!r}"
        if not re.fullmatch(_TOKEN, header.name):
            raise DefinitionError(f"{where}: Header({header.name!r}) is not an HTTP token")
        if header.name.lower() in seen:
            raise DefinitionError(
                f"{where}: Header({header.name!r}) is already used by "
                f"parameter {seen[header.name.lower()]!r} (names ignore case)"
            )
        if properties[name].get("type") not in ("string", "integer", "boolean"):
            raise DefinitionError(
                f"{where}: Header(...) needs a string, integer or boolean parameter"
            )
        seen[header.name.lower()] = name
        properties[name]["x-mcp-header"] = header.name


def _header_of(annotation: Any) -> Header | None:
    if isinstance(annotation, type):  # a class (most are) is no Annotated: cheaper to tell
        return None
    if _typing.get_origin(annotation) is not _typing.Annotated:
        return None
    return next((m for m in annotation.__metadata__ if isinstance(m, Header)), None)


def header_properties(schema: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """``(property path, header name)`` for every ``x-mcp-header`` reachable via ``properties``."""
    return [
        (path, sub["x-mcp-header"])
        for path, sub in nested_properties(schema)
        if isinstance(sub.get("x-mcp-header"), str)
    ]
