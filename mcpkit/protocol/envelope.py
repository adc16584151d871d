"""The stateless era's result envelope: what every 2026-07-28 result carries besides the
method's own fields (``resultType``, ``_meta`` with the ``serverInfo``, and on cacheable
results ``ttlMs`` and ``cacheScope``)."""

from __future__ import annotations

from typing import Any

from mcpkit.app import App
from mcpkit.protocol.methods.spec import MethodSpec
from mcpkit.protocol.versions import META_SERVER_INFO

__all__ = ["stateless_result"]


def stateless_result(
    result: dict[str, Any], name: str, method: MethodSpec, app: App
) -> dict[str, Any]:
    """``result`` of method ``name``, completed as the stateless era requires."""
    result.setdefault("resultType", "complete")
    meta = dict(result.get("_meta") or {})
    meta[META_SERVER_INFO] = app.server_info
    result["_meta"] = meta
    if method.cacheable and result["resultType"] == "complete":
        result["ttlMs"] = app.options.ttl_ms
        result["cacheScope"] = app.options.cache_scope
    return result
