"""Streamable HTTP as a plain ASGI application, for both protocol eras (framing only: the
protocol core decides every MCP rule; this package maps its decisions to HTTP).

``HttpApp(app, path="/mcp", ...)`` (or ``app.asgi(...)``) serves one MCP endpoint:

- **Stateless era (2026-07-28)**: one POST per request; ``_meta``, then the mirrored headers
  (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), then version and
  capabilities are checked, each failure a 400 echoing the request id; unknown or removed
  methods are 404 with ``-32601``. Closing the response stream cancels the call.
- **Handshake era (up to 2025-11-25)**: ``initialize`` opens a session (a random
  ``Mcp-Session-Id``, bound to the caller under ``auth``; at most ``max_sessions``); later
  POSTs name it (missing: 400, unknown, ended or another caller's: 404); GET opens the
  session's stream for server-initiated messages; DELETE ends the session. A disconnect is not
  a cancellation; ``notifications/cancelled`` is. With ``stateless=True`` there are no sessions:
  every handshake-era request is served on its own, at the version its header names.

A request's answer is JSON until the request emits a message (progress, a log, later a server
request); then the POST turns into an SSE stream carrying those messages and the response.
Messages a session sends outside any request (``Session.send``) go to its GET stream.

Security: ``Origin`` is checked on every request (403), ``Host`` on loopback binds (421),
``Accept``/``Content-Type``/size give 406/415/413, and optional bearer-token auth (``auth=``)
answers 401/403 with RFC 9728 metadata at ``/.well-known/oauth-protected-resource``;
``JWTVerifier`` (the ``jwt`` extra, loaded on first use) verifies JWT access tokens for it.

Modules: ``app`` (``HttpApp``: routing, lifespan, POST/GET/DELETE), ``_exchange`` (one
request/response), ``_guards`` (Host/Origin/content negotiation), ``auth`` (bearer tokens,
RFC 9728), ``_jwt`` (JWT access tokens) and ``_jwks`` (an authorization server's key set),
``_sessions`` (the session table), ``_sse`` (event streams), ``_disconnect`` (cancelling a call
whose client left).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.transports.http.app import HttpApp
from mcpkit.transports.http.auth import BearerAuth, Verifier, static_tokens

if TYPE_CHECKING:
    from mcpkit.transports.http._jwt import JWTVerifier

__all__ = ["BearerAuth", "HttpApp", "JWTVerifier", "Verifier", "static_tokens"]


def __getattr__(name: str) -> Any:
    """``JWTVerifier`` loads PyJWT (the ``jwt`` extra) when first named, not before."""
    if name == "JWTVerifier":
        from mcpkit.transports.http._jwt import JWTVerifier

        return JWTVerifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
