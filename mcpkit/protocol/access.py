"""Who sees what: the one access decision every list and lookup of the core asks.

A definition is *usable* by a request when it is enabled (``App.disable``), its ``visible``
predicate says yes (an exception says no: fail closed, logged) and the request's principal
holds every one of its ``scopes``. Lists show the usable definitions, filtered before they are
paginated; a lookup (``tools/call``, ``resources/read``, ``prompts/get``, a ``completion``
reference) treats any other one exactly as an unknown one, so no answer tells a caller that it
exists. With ``ServerOptions(on_missing_scope="challenge")``, an authenticated HTTP request
also sees the definitions it lacks scopes for listed, and a single call to one is answered by
the transport with an OAuth step-up challenge (:func:`step_up`); inside a batch it stays
hidden (a batch has one HTTP status for all its members).

:func:`scopes_of` (what a principal holds) is defined in ``mcpkit._availability`` and
re-exported here: the HTTP transport's ``BearerAuth`` reads scopes with it too, without one
more name across the core/transport seam.
"""

from __future__ import annotations

import logging
from typing import Any

from mcpkit._availability import scopes_of
from mcpkit.app import App
from mcpkit.context import Context
from mcpkit.exceptions import InvalidRequest, ProtocolError
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.connection import discard
from mcpkit.protocol.incoming import Incoming
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.request import RequestContext, handshake_context, stateless_context

__all__ = ["hidden_uri", "listed", "scopes_of", "step_up", "usable"]

logger = logging.getLogger("mcpkit.server")


def usable(definition: Any, ctx: RequestContext, app: App) -> bool:
    """Whether this request may see and use ``definition`` (else it is unknown to it)."""
    if not app.switches.restricted:
        return True
    return _shown(definition, ctx, app) and _holds(definition, scopes_of(ctx.principal))


def hidden_uri(app: App, ctx: RequestContext, uri: str) -> bool:
    """Whether ``uri`` is served only by definitions hidden from this request: then telling it
    of the resource's updates would tell it that the resource exists."""
    if not app.switches.restricted:
        return False
    found = _targets(app, "resources/read", {"uri": uri})
    return bool(found) and not any(usable(definition, ctx, app) for definition in found)


def listed(items: list[Any], ctx: RequestContext, app: App) -> list[Any]:
    """The definitions a list shows this request, in order (before pagination)."""
    if not app.switches.restricted:
        return items
    held = scopes_of(ctx.principal)
    challenge = _challenges(ctx, app)
    return [item for item in items if _shown(item, ctx, app) and (challenge or _holds(item, held))]


def step_up(app: App, incoming: Incoming, session: Any) -> tuple[str, ...] | None:
    """For a transport that can challenge (HTTP, inside ``Server.acting_for``): the scopes a
    step-up challenge names, when ``incoming`` is a single call (``tools/call``,
    ``resources/read``, ``prompts/get``, or ``completion/complete`` of a prompt's or template's
    argument) to a definition its caller sees listed but lacks scopes for (the scopes it holds
    plus those it needs, sorted); else ``None``, and the request is answered as usual.
    ``session`` is the :class:`~mcpkit.protocol.server.Session` that will answer it: ``visible``
    predicates are asked with the facts the call is then served with."""
    if app.options.on_missing_scope != "challenge" or not app.switches.guarded:
        return None
    message = _request(incoming.message)
    if message is None or not isinstance(message.params, dict):
        return None
    try:
        ctx = _admission_context(incoming, message, session)
    except ProtocolError:  # a bad _meta: the core answers it
        return None
    if not _challenges(ctx, app):
        return None
    for definition in _targets(app, message.method, message.params):
        if _shown(definition, ctx, app):
            held = scopes_of(ctx.principal)
            if _holds(definition, held):
                return None
            return tuple(sorted(held | set(definition.access.scopes)))
    return None


def _request(message: Any) -> Request | None:
    """The single request a message is (a handshake-era one arrives unparsed), else ``None``."""
    if isinstance(message, Request) or not isinstance(message, dict):
        return message if isinstance(message, Request) else None
    try:
        parsed = jsonrpc.parse(message)
    except InvalidRequest:
        return None  # the core answers it
    return parsed if isinstance(parsed, Request) else None


def _targets(app: App, method: str, params: dict[str, Any]) -> list[Any]:
    """The definitions a call names, in the order a lookup tries them."""
    if method == "completion/complete":
        ref = params.get("ref")
        if not isinstance(ref, dict):
            return []
        if ref.get("type") == "ref/prompt":
            method, params = "prompts/get", ref
        elif ref.get("type") == "ref/resource":
            method, params = "ref/resource", ref
    key = params.get("name" if method in ("tools/call", "prompts/get") else "uri")
    if not isinstance(key, str):
        return []
    found: list[Any] = []
    if method == "tools/call":
        found = [app.tools.get(key)]
    elif method == "prompts/get":
        found = [app.prompts.get(key)]
    elif method == "ref/resource":
        found = [app.resource_templates.get(key)]
    elif method == "resources/read" and (app.resources or app.resource_templates):
        from mcpkit.resources import readers  # loaded already: the app has resources

        found = [item for item, _ in readers(app.resources, app.resource_templates, key)]
    return [definition for definition in found if definition is not None]


def _admission_context(incoming: Incoming, message: Request, session: Any) -> RequestContext:
    """The context the session will serve ``message`` with (built as the core builds it, so
    ``visible`` sees the same client capabilities, version, ``_meta`` and session), before it
    runs; a bad ``_meta`` raises the ``ProtocolError`` the core answers."""
    server = session.server
    if incoming.stateless:
        meta = message.params.get("_meta") if isinstance(message.params, dict) else None
        return stateless_context(
            message.id,
            meta,
            send=discard,
            state=server.state,
            settings_spec=server.app.settings_spec,
            reader=server.read_uri,
            transport=session.transport,
        )
    params = message.params if isinstance(message.params, dict) else {}
    return handshake_context(session, message.id, params, send=discard, reader=server.read_uri)


def _challenges(ctx: RequestContext, app: App) -> bool:
    """Whether a missing scope is answered with a challenge: ``"challenge"`` mode, over HTTP,
    for an authenticated caller (stdio and the in-memory client always hide)."""
    return (
        app.options.on_missing_scope == "challenge"
        and ctx.transport == "http"
        and ctx.principal is not None
    )


def _holds(definition: Any, held: frozenset[str]) -> bool:
    scopes = definition.access.scopes
    return not scopes or held.issuperset(scopes)


def _shown(definition: Any, ctx: RequestContext, app: App) -> bool:
    """Enabled, and its ``visible`` predicate (if any) says yes; scopes aside."""
    if definition in app.switches.off:
        return False
    visible = definition.access.visible
    if visible is None:
        return True
    try:
        return visible(Context(ctx)) is True
    except Exception:
        logger.exception("%s is hidden: its visible predicate raised", definition.label)
        return False
