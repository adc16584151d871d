"""Bearer-token auth for the endpoint (MCP's OAuth resource-server role): :class:`BearerAuth`,
:func:`static_tokens`, the 401/403 challenges and the RFC 9728 metadata document."""

from __future__ import annotations

import hmac
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcpkit._availability import scopes_of
from mcpkit._frozen import frozen
from mcpkit.exceptions import InvalidRequest
from mcpkit.transports.http._exchange import Exchange, HttpError, normal_path

__all__ = [
    "METADATA_PATH",
    "BearerAuth",
    "Verifier",
    "authenticate",
    "insufficient_scope",
    "metadata_paths",
    "serve_metadata",
    "static_tokens",
]

Verifier = Callable[[str], Any]
"""``verify(token) -> principal | None`` (sync or async); ``None`` rejects the token."""

METADATA_PATH = "/.well-known/oauth-protected-resource"


@frozen
class BearerAuth:
    """Bearer-token auth for the endpoint (MCP's OAuth resource-server role).

    ``verify(token)`` returns the principal (any object: tools read it as
    ``ctx.principal``) or ``None`` for an invalid token; it may be sync or async. A principal's
    scopes are its ``scopes``, ``scope`` or ``scp`` claim (key or attribute; a space-separated
    string or a list); ``required_scopes`` missing from them answer 403.
    ``authorization_servers`` and ``resource`` (default: the endpoint's URL) go into the RFC
    9728 metadata document.
    """

    verify: Verifier
    authorization_servers: tuple[str, ...] = ()
    required_scopes: tuple[str, ...] = ()
    resource: str | None = None

    def metadata(self, resource: str, scopes: Iterable[str] = ()) -> dict[str, Any]:
        """The RFC 9728 Protected Resource Metadata document; ``scopes_supported`` lists the
        ``required_scopes`` and ``scopes`` (the App's definitions' own), sorted, once each."""
        document: dict[str, Any] = {
            "resource": self.resource or resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        supported = sorted({*self.required_scopes, *scopes})
        if supported:
            document["scopes_supported"] = supported
        return document


def static_tokens(tokens: Mapping[str, Any]) -> Verifier:
    """A verifier for fixed tokens: ``{token: principal}``, compared in constant time."""
    items = [(token.encode(), principal) for token, principal in tokens.items()]

    def verify(token: str) -> Any:
        found = None
        for known, principal in items:  # no early exit: every token is compared
            if hmac.compare_digest(known, token.encode()):
                found = principal
        return found

    return verify


async def authenticate(auth: BearerAuth, http: Exchange, path: str) -> Any:
    """The principal of the request's bearer token, else a 401 (or 403 for missing scopes)
    challenge naming the metadata of the endpoint at ``path``."""
    scheme, _, token = (http.header("authorization") or "").partition(" ")
    principal = None
    if scheme.lower() == "bearer" and token.strip():
        principal = auth.verify(token.strip())
        if inspect.isawaitable(principal):
            principal = await principal
    if principal is None:
        raise _challenge(auth, http, path, 401, 'error="invalid_token"' if token else "")
    if set(auth.required_scopes) - scopes_of(principal):
        raise _challenge(auth, http, path, 403, 'error="insufficient_scope"')
    return principal


def insufficient_scope(
    auth: BearerAuth, http: Exchange, path: str, scopes: Iterable[str], request_id: Any
) -> HttpError:
    """The 403 step-up challenge (SEP-835) answering request ``request_id``, a call that
    needs ``scopes`` (those the token holds plus those the call needs)."""
    error = _challenge(auth, http, path, 403, 'error="insufficient_scope"', scopes)
    error.request_id = request_id
    return error


def _challenge(
    auth: BearerAuth,
    http: Exchange,
    path: str,
    status: int,
    error: str,
    scopes: Iterable[str] | None = None,
) -> HttpError:
    parts = [error] if error else []
    named = " ".join(auth.required_scopes if scopes is None else scopes)
    if named:
        parts.append(f'scope="{named}"')
    metadata = http.base_url() + METADATA_PATH + _endpoint_path(http, path)
    parts.append(f'resource_metadata="{metadata}"')
    text = "Unauthorized: a valid bearer token is required"
    if status == 403:
        text = "Forbidden: the token lacks a required scope"
    header = ("www-authenticate", "Bearer " + ", ".join(parts))
    return HttpError(status, InvalidRequest(text), headers=[header])


def _endpoint_path(http: Exchange, path: str) -> str:
    root: str = http.scope.get("root_path", "")
    full = normal_path(root + path)
    return "" if full == "/" else full


def metadata_paths(path: str) -> set[str]:
    """Where the metadata of the endpoint at ``path`` is served."""
    return {METADATA_PATH, normal_path(METADATA_PATH + path)}


async def serve_metadata(
    auth: BearerAuth, http: Exchange, path: str, scopes: Iterable[str] = ()
) -> None:
    """Answer a request for the RFC 9728 metadata document (GET only); ``scopes``: the App's
    definitions' own, listed in ``scopes_supported``."""
    if http.method != "GET":
        raise HttpError(405, InvalidRequest("Method Not Allowed"), headers=[("allow", "GET")])
    resource = http.base_url() + _endpoint_path(http, path)
    await http.json(200, auth.metadata(resource or http.base_url(), scopes))
