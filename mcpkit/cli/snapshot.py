"""What a client sees of an App, gathered over the real wire path by the in-memory client.

``snapshot(app, version)`` returns the facts of ``initialize`` (or ``server/discover`` for a
stateless version) and the ``tools/list``, ``resources/list``, ``resources/templates/list`` and
``prompts/list`` results, every page followed. The lists are what a caller without a
principal sees, completed (in registration order) with what is hidden from it: definitions
with ``scopes`` or ``visible``, and disabled ones; ``access`` then says, per list and item,
its ``scopes``, ``tags`` and whether a ``visible`` predicate decides per caller (the key is
absent when no definition declares any). ``dumps`` writes it with sorted keys, so the file
``mcpkit docs --format json`` writes diffs cleanly in git.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.app import App
from mcpkit.exceptions import DefinitionError
from mcpkit.protocol.versions import META_SERVER_INFO, STATELESS_VERSIONS
from mcpkit.testing.client import Client, SyncClient

__all__ = ["ACCESS", "LISTS", "dumps", "snapshot"]

LISTS = (
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resourceTemplates", "resources"),
    ("prompts/list", "prompts", "prompts"),
)
"""(method, result key, the capability that offers it)."""

ACCESS = "access"
"""The snapshot's key for the declared access of the listed items (see the module docstring)."""

_REGISTRIES: dict[str, tuple[str, Callable[[App], Mapping[str, Any]]]] = {
    "tools/list": ("name", lambda app: app.tools),
    "resources/list": ("uri", lambda app: app.resources),
    "resources/templates/list": ("uriTemplate", lambda app: app.resource_templates),
    "prompts/list": ("name", lambda app: app.prompts),
}


def snapshot(app: App, protocol_version: str) -> dict[str, Any]:
    """The server facts and every list, as a client of ``protocol_version`` receives them."""
    with Client(app, protocol_version=protocol_version) as client:
        server = _server(client, protocol_version)
        offered = server["capabilities"]
        result: dict[str, Any] = {"server": server}
        for method, key, capability in LISTS:
            if capability in offered:
                result[method] = _with_hidden(app, method, _all(client, method, key))
            else:
                result[method] = []
        access = {method: _declared(app, method) for method in _REGISTRIES}
        access = {method: found for method, found in access.items() if found}
        if access:
            result[ACCESS] = access
        return result


def _with_hidden(app: App, method: str, items: list[Any]) -> list[Any]:
    """``items`` (a list as the caller saw it) completed with the definitions hidden from it,
    in the registry's order."""
    if not app.switches.restricted:
        return items
    ident, registry = _REGISTRIES[method]
    seen = {item.get(ident): item for item in items if isinstance(item, dict)}
    complete = []
    for key, definition in registry(app).items():
        if key in seen:
            complete.append(seen[key])
            continue
        try:
            complete.append(definition.definition)
        except DefinitionError:
            continue  # left out, as the wire list leaves it out
    return complete


def _declared(app: App, method: str) -> dict[str, Any]:
    """Per item of a list (by its name, URI or URI template): its declared access."""
    found: dict[str, Any] = {}
    for key, definition in _REGISTRIES[method][1](app).items():
        access = definition.access
        declared: dict[str, Any] = {}
        if access.scopes:
            declared["scopes"] = list(access.scopes)
        if access.tags:
            declared["tags"] = sorted(access.tags)
        if access.visible is not None:
            declared["visible"] = True
        if declared:
            found[key] = declared
    return found


def _server(client: SyncClient, protocol_version: str) -> dict[str, Any]:
    if protocol_version in STATELESS_VERSIONS:
        found = client.request("server/discover")
        info = found["_meta"][META_SERVER_INFO]
        found = {**found, "protocolVersion": protocol_version, "serverInfo": info}
    else:
        found = client.initialize_result or {}
    keys = ("protocolVersion", "serverInfo", "capabilities", "instructions")
    return {key: found[key] for key in keys if key in found}


def _all(client: SyncClient, method: str, key: str) -> list[Any]:
    items: list[Any] = []
    params: dict[str, Any] = {}
    while True:
        page = client.request(method, params or None)
        items.extend(page.get(key) or [])
        if not page.get("nextCursor"):
            return items
        params = {"cursor": page["nextCursor"]}


def dumps(value: Any) -> str:
    """Stable JSON: sorted keys, two-space indent, UTF-8 text, a final newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
