"""What a client sees of an App, gathered over the real wire path by the in-memory client.

``snapshot(app, version)`` returns the facts of ``initialize`` (or ``server/discover`` for a
stateless version) and the ``tools/list``, ``resources/list``, ``resources/templates/list`` and
``prompts/list`` results, every page followed. ``dumps`` writes it with sorted keys, so the file
``mcpkit docs --format json`` writes diffs cleanly in git.
"""

from __future__ import annotations

import json
from typing import Any

from mcpkit.app import App
from mcpkit.protocol.versions import META_SERVER_INFO, STATELESS_VERSIONS
from mcpkit.testing.client import Client, SyncClient

__all__ = ["LISTS", "dumps", "snapshot"]

LISTS = (
    ("tools/list", "tools", "tools"),
    ("resources/list", "resources", "resources"),
    ("resources/templates/list", "resourceTemplates", "resources"),
    ("prompts/list", "prompts", "prompts"),
)
"""(method, result key, the capability that offers it)."""


def snapshot(app: App, protocol_version: str) -> dict[str, Any]:
    """The server facts and every list, as a client of ``protocol_version`` receives them."""
    with Client(app, protocol_version=protocol_version) as client:
        server = _server(client, protocol_version)
        offered = server["capabilities"]
        result: dict[str, Any] = {"server": server}
        for method, key, capability in LISTS:
            result[method] = _all(client, method, key) if capability in offered else []
        return result


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
