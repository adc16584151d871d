"""Lifecycle and discovery: ``ping``, ``logging/setLevel``, ``server/discover``, and the
``ServerCapabilities`` that ``initialize`` and ``server/discover`` publish.

``initialize`` itself stays in the session (``protocol.server``): it is what creates the
handshake-era state (negotiated version, client capabilities and info) that the session keeps
and every later request of the connection reads.
"""

from __future__ import annotations

from typing import Any

from mcpkit._compose import declared_extensions, included_apps
from mcpkit._extensions import TASKS, UI
from mcpkit.app import App
from mcpkit.context import LOG_LEVELS
from mcpkit.exceptions import DefinitionError, InvalidParams
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.request import RequestContext
from mcpkit.protocol.versions import ALL_VERSIONS

__all__ = ["METHODS", "can_complete", "capabilities"]


def capabilities(app: App, *, stateless: bool = False) -> dict[str, Any]:
    """``ServerCapabilities``: only what the app has (the server caches it). The tasks
    extension is declared to stateless-era clients only (``server/discover``), when a tool
    supports tasks; MCP Apps to every client, when the app has a view."""
    caps: dict[str, Any] = {"logging": {}}
    if app.tools:
        caps["tools"] = {"listChanged": True}
    if app.resources or app.resource_templates:
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if app.prompts:
        caps["prompts"] = {"listChanged": True}
    if can_complete(app):
        caps["completions"] = {}
    extensions = {key: dict(value) for key, value in declared_extensions(app).items()}
    if stateless and any(tool.task != "forbidden" for tool in app.tools.values()):
        extensions[TASKS] = {}
    if app.resources:
        from mcpkit._ui import has_views  # a feature module: loaded on use (app.py)

        if has_views(app.resources):
            extensions.setdefault(UI, {})
    if extensions:
        caps["extensions"] = extensions
    return caps


def can_complete(app: App) -> bool:
    """Whether anything can answer ``completion/complete`` (then ``completions`` is offered)."""
    if app.completer is not None or any(each.completer for each in included_apps(app)):
        return True
    for prompt in app.prompts.values():
        if prompt.completions:
            return True
        try:
            arguments = prompt.definition["arguments"]
        except DefinitionError:
            continue  # logged when it is listed or compiled
        if any("enum" in (prompt.argument_schema(a["name"]) or {}) for a in arguments):
            return True
    for template in app.resource_templates.values():
        if template.completions or any(
            "enum" in (template.argument_schema(v) or {}) for v in template.variables
        ):
            return True
    return False


async def _ping(runtime: Runtime, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def _set_level(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams(
            f"Invalid params: unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}"
        )
    if ctx.session is not None:
        ctx.session.log_level = level
    return {}


async def _discover(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(ALL_VERSIONS),
        "capabilities": runtime.capabilities(stateless=True),
    }
    if runtime.app.instructions:
        result["instructions"] = runtime.app.instructions
    return result


METHODS = {
    "ping": MethodSpec(_ping, stateless=False),
    "logging/setLevel": MethodSpec(_set_level, stateless=False),
    "server/discover": MethodSpec(_discover, handshake=False, cacheable=True),
}
