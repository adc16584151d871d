"""The resources feature: list, templates, read, and the session's subscriptions to updates.

``resources/subscribe`` lives here, not with ``subscriptions/listen``: it is the resources
capability's own method (``resources.subscribe``) and only records a URI on the session, which
then tells its client of that resource's updates.
"""

from __future__ import annotations

from typing import Any

from mcpkit.context import Context
from mcpkit.exceptions import ResourceNotFound
from mcpkit.protocol.access import hidden_uri, usable
from mcpkit.protocol.methods.input_required import with_input
from mcpkit.protocol.methods.pagination import listing
from mcpkit.protocol.methods.params import string_param
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.request import RequestContext
from mcpkit.resources import Resource, ResourceTemplate, readers

__all__ = ["METHODS", "read_uri"]


_list_resources = listing("resources", lambda app: app.resources)
_list_templates = listing("resourceTemplates", lambda app: app.resource_templates)


async def _read_resource(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    uri = string_param(params, "uri")

    async def run() -> dict[str, Any]:
        served, contents = await _read(runtime, ctx, uri)
        if served.ttl_ms is not None or served.cache_scope is not None:
            ctx.cache_hint = (served.ttl_ms, served.cache_scope)  # for the stateless envelope
        return {"contents": contents}

    return await with_input(runtime, ctx, params, ("resources/read", uri), run)


async def read_uri(runtime: Runtime, ctx: RequestContext, uri: str) -> list[dict[str, Any]]:
    """The contents of one of the app's resources, else :class:`ResourceNotFound` naming
    ``uri`` (which the server answers in the code of the request's era).

    Also what ``Context.read_resource`` reads through (the server binds it into each request).
    """
    return (await _read(runtime, ctx, uri))[1]


async def _read(
    runtime: Runtime, ctx: RequestContext, uri: str
) -> tuple[Resource | ResourceTemplate, list[dict[str, Any]]]:
    """The definition that serves ``uri`` to this request, and its contents."""
    try:
        return await _read_uri(runtime, ctx, uri)
    except ResourceNotFound:
        # raised by us, by directory_reader (a missing file) or by the user's own function:
        # always answered with the URI asked for
        raise ResourceNotFound(data={"uri": uri}) from None


async def _read_uri(
    runtime: Runtime, ctx: RequestContext, uri: str
) -> tuple[Resource | ResourceTemplate, list[dict[str, Any]]]:
    """A hidden resource or template is passed over, as if it were not there."""
    app = runtime.app
    for definition, values in readers(app.resources, app.resource_templates, uri):
        if not usable(definition, ctx, app):
            continue
        if isinstance(definition, Resource):
            return definition, await definition.read(Context(ctx), runtime.workers)
        assert values is not None  # a template that matched
        return definition, await definition.read(uri, values, Context(ctx), runtime.workers)
    raise ResourceNotFound(data={"uri": uri})


async def _subscribe(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    uri = string_param(params, "uri")
    if not hidden_uri(runtime.app, ctx, uri):  # else its updates would reveal it: answered alike
        # and asked again at each update: disabled or hidden since, it is not told either
        ctx.session.resource_subscriptions[uri] = lambda: not hidden_uri(runtime.app, ctx, uri)
    return {}


async def _unsubscribe(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    ctx.session.resource_subscriptions.pop(string_param(params, "uri"), None)
    return {}


METHODS = {
    "resources/list": MethodSpec(_list_resources, "resources", cacheable=True),
    "resources/templates/list": MethodSpec(_list_templates, "resources", cacheable=True),
    "resources/read": MethodSpec(_read_resource, "resources", cacheable=True),
    "resources/subscribe": MethodSpec(_subscribe, "resources", stateless=False),
    "resources/unsubscribe": MethodSpec(_unsubscribe, "resources", stateless=False),
}
