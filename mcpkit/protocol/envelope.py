"""The stateless era's result envelope: what every 2026-07-28 result carries besides the
method's own fields (``resultType``, ``_meta`` with the ``serverInfo``, and on cacheable
results ``ttlMs`` and ``cacheScope``).

The cache hints, field by field, first found wins: the served resource's own
(``@app.resource(..., ttl_ms=, cache_scope=)``, for ``resources/read``), the method's
(``ServerOptions(cache={method: (ttl_ms, scope)})``), then the App's (``ttl_ms``,
``cache_scope``), except that a result that may differ by caller is never shared-cacheable:
``cacheScope`` is ``"private"`` when the request carries a principal (authentication is
configured) or any definition has ``scopes`` or ``visible``, whatever the App-wide default says.
"""

from __future__ import annotations

from typing import Any

from mcpkit.app import App
from mcpkit.protocol.methods.spec import MethodSpec
from mcpkit.protocol.request import RequestContext
from mcpkit.protocol.versions import META_SERVER_INFO

__all__ = ["cache_hints", "stateless_result"]


def stateless_result(
    result: dict[str, Any],
    name: str,
    method: MethodSpec,
    app: App,
    ctx: RequestContext | None = None,
) -> dict[str, Any]:
    """``result`` of method ``name``, completed as the stateless era requires."""
    result.setdefault("resultType", "complete")
    meta = dict(result.get("_meta") or {})
    meta[META_SERVER_INFO] = app.server_info
    result["_meta"] = meta
    if method.cacheable and result["resultType"] == "complete":
        result["ttlMs"], result["cacheScope"] = cache_hints(name, app, ctx)
    return result


def cache_hints(name: str, app: App, ctx: RequestContext | None) -> tuple[int, str]:
    """``(ttlMs, cacheScope)`` of a cacheable result of method ``name`` (module docstring)."""
    options = app.options
    ttl: int | None = None
    scope: str | None = None
    if ctx is not None and ctx.cache_hint is not None:
        ttl, scope = ctx.cache_hint
    if options.cache is not None and name in options.cache:
        method_ttl, method_scope = options.cache[name]
        ttl = method_ttl if ttl is None else ttl
        scope = scope or method_scope
    if scope is None:
        private = app.switches.guarded or (ctx is not None and ctx.principal is not None)
        scope = "private" if private else options.cache_scope
    return (options.ttl_ms if ttl is None else ttl), scope
