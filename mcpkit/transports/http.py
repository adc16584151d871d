"""Streamable HTTP as a plain ASGI application, for both protocol eras (framing only).

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
answers 401/403 with RFC 9728 metadata at ``/.well-known/oauth-protected-resource``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import functools
import hmac
import inspect
import ipaddress
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    MutableMapping,
)
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

from mcpkit.app import App
from mcpkit.exceptions import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPKitError,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import Limits, Request
from mcpkit.protocol.scope import caller_key, current_principal
from mcpkit.protocol.server import Server, Session
from mcpkit.protocol.versions import (
    ALL_VERSIONS,
    BATCH_VERSION,
    HANDSHAKE_VERSIONS,
    META_CAPABILITIES,
    META_VERSION,
    STATELESS_VERSIONS,
    at_least,
)
from mcpkit.types import RequestId

__all__ = ["BearerAuth", "HttpApp", "static_tokens"]

logger = logging.getLogger("mcpkit.http")

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
ASGISend = Callable[[ASGIMessage], Awaitable[None]]
Verifier = Callable[[str], Any]
"""``verify(token) -> principal | None`` (sync or async); ``None`` rejects the token."""

MiB = 1024 * 1024
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
DEFAULT_VERSION = "2025-03-26"
"""The version of a handshake-era request without a header or a session."""
PRIMING_VERSION = "2025-11-25"
"""From this version on, an SSE stream starts with a priming event (an id, empty data)."""
METADATA_PATH = "/.well-known/oauth-protected-resource"
JSON = "application/json"
SSE = "text/event-stream"

_JSON_ONLY, _JSON_AND_SSE = (JSON,), (JSON, SSE)  # what a POST's Accept must allow
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_STATELESS_METHODS = frozenset({"server/discover", "subscriptions/listen"})
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_B64_PREFIX, _B64_SUFFIX = "=?base64?", "?="
_KEEPALIVE_SECONDS = 15.0
_WATCH_AFTER = 0.01
"""Seconds a call that its client's disconnect cancels runs before that disconnect is watched."""
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


# ------------------------------------------------------------------------------ auth


@dataclass(frozen=True)
class BearerAuth:
    """Bearer-token auth for the endpoint (MCP's OAuth resource-server role).

    ``verify(token)`` returns the principal (any object: tools read it as
    ``ctx.principal``) or ``None`` for an invalid token; it may be sync or async. A principal's
    scopes are read from its ``scopes`` attribute or key (or a space-separated ``scope``);
    ``required_scopes`` missing from them answer 403. ``authorization_servers`` and ``resource``
    (default: the endpoint's URL) go into the RFC 9728 metadata document.
    """

    verify: Verifier
    authorization_servers: tuple[str, ...] = ()
    required_scopes: tuple[str, ...] = ()
    resource: str | None = None

    def metadata(self, resource: str) -> dict[str, Any]:
        """The RFC 9728 Protected Resource Metadata document."""
        document: dict[str, Any] = {
            "resource": self.resource or resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.required_scopes:
            document["scopes_supported"] = list(self.required_scopes)
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


def _scopes_of(principal: Any) -> set[str]:
    if isinstance(principal, Mapping):
        value = principal.get("scopes", principal.get("scope"))
    else:
        value = getattr(principal, "scopes", None)
    if isinstance(value, str):
        return set(value.split())
    return {str(v) for v in value} if isinstance(value, Iterable) else set()


# --------------------------------------------------------------------------- plumbing


class _Reject(Exception):
    """An HTTP error answer: status, a JSON-RPC error body, extra headers."""

    def __init__(
        self,
        status: int,
        error: ProtocolError,
        request_id: RequestId | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error
        self.request_id = request_id
        self.headers = list(headers)


class _Gone(Exception):
    """The client went away before its request was complete."""


class _Http:
    """One HTTP exchange: the request's headers and body, and the ways to answer."""

    def __init__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        self.scope = scope
        self.receive = receive
        self._send = send
        self.headers: dict[str, list[str]] = {}
        for raw_name, raw_value in scope.get("headers", ()):
            name = raw_name.decode("latin-1").lower()
            values = self.headers.get(name)
            if values is None:
                self.headers[name] = [raw_value.decode("latin-1")]
            else:
                values.append(raw_value.decode("latin-1"))
        self.method = str(scope.get("method", "GET")).upper()
        path: str = scope.get("path", "/")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        self.path = _normal_path(path)
        self.started = False
        self.closed = False

    def header(self, name: str) -> str | None:
        values = self.headers.get(name)
        return values[0] if values else None

    def base_url(self) -> str:
        scheme = self.scope.get("scheme", "http")
        host = self.header("host") or _host_of(self.scope.get("server"))
        return f"{scheme}://{host}"

    async def send(self, message: ASGIMessage) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        if self.closed:
            return
        try:
            await self._send(message)
        except OSError:  # the client is gone; nothing more can reach it
            self.closed = True

    async def respond(
        self,
        status: int,
        body: bytes = b"",
        headers: Iterable[tuple[str, str]] = (),
        content_type: str | None = None,
    ) -> None:
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        if content_type is not None:
            raw.append((b"content-type", content_type.encode()))
        raw.append((b"content-length", str(len(body)).encode()))
        await self.send({"type": "http.response.start", "status": status, "headers": raw})
        await self.send({"type": "http.response.body", "body": body})

    async def json(
        self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()
    ) -> None:
        await self.respond(status, jsonrpc.encode(payload), headers, JSON)

    async def start_sse(self, headers: Iterable[tuple[str, str]]) -> None:
        raw = _SSE_HEADERS + [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        await self.send({"type": "http.response.start", "status": 200, "headers": raw})

    async def write(self, chunk: bytes, *, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": chunk, "more_body": more})

    async def read_body(self, limit: int) -> bytes:
        length = self.header("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            raise _too_large(limit)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise _Gone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def disconnected(self) -> None:
        """Return when the client closes the connection (after the body was read)."""
        while (await self.receive())["type"] != "http.disconnect":
            pass


def _too_large(limit: int) -> _Reject:
    return _Reject(413, InvalidRequest(f"Invalid Request: body larger than {limit} bytes"))


def _normal_path(path: str) -> str:
    stripped = path.rstrip("/")
    return stripped if stripped.startswith("/") else "/" + stripped


def _host_of(server: Any) -> str:
    if not server:
        return "localhost"
    host, port = server[0], server[1]
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _sse_event(message: Any, event_id: str | None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    data = b"" if message is None else jsonrpc.encode(message)
    return head.encode() + b"event: message\ndata: " + data + b"\n\n"


class _Stream:
    """Numbered SSE events for one stream; ids are unique within the process."""

    def __init__(self, http: _Http) -> None:
        self.http = http
        self.token = secrets.token_hex(8)
        self.count = 0

    async def event(self, message: Any) -> None:
        self.count += 1
        await self.http.write(_sse_event(message, f"{self.token}-{self.count}"))

    async def prime(self) -> None:
        await self.event(None)


class _Responder:
    """One POST's answer: JSON, or an SSE stream once the request emits a message first.

    ``notify`` is the request's ``send``: any message (notification now, a server request
    later) rides the request's own stream. In JSON mode it goes to ``fallback`` (the session's
    GET stream) instead, or nowhere for stateless requests.
    """

    def __init__(
        self,
        http: _Http,
        *,
        sse: bool,
        prime: bool,
        headers: list[tuple[str, str]],
        fallback: Callable[[dict[str, Any]], Awaitable[None]] | None,
    ) -> None:
        self.http = http
        self.sse = sse
        self.prime = prime
        self.headers = headers
        self.fallback = fallback
        self.stream: _Stream | None = None
        self.lock = asyncio.Lock()

    async def notify(self, message: dict[str, Any]) -> None:
        if not self.sse:
            if self.fallback is not None:
                await self.fallback(message)
            return
        async with self.lock:
            stream = await self._open()
            await stream.event(message)

    async def _open(self) -> _Stream:
        if self.stream is None:
            self.stream = _Stream(self.http)
            await self.http.start_sse(self.headers)
            if self.prime:
                await self.stream.prime()
        return self.stream

    async def finish(self, response: Any, status: int) -> None:
        if not self.sse:  # JSON mode: no stream, and nothing else writes to this response
            await self._finish(response, status)
            return
        async with self.lock:
            await self._finish(response, status)

    async def _finish(self, response: Any, status: int) -> None:
        if self.stream is not None:
            if response is not None:
                await self.stream.event(response)
            await self.http.write(b"", more=False)
        elif response is None:
            await self.http.respond(202, headers=self.headers)
        else:
            await self.http.json(status, response, self.headers)


class _Live:
    """A handshake-era session: the protocol ``Session``, its GET stream if open, the caller
    it belongs to (:func:`caller_key` of the principal that opened it), and how many requests
    and streams are using it."""

    def __init__(self, server: Server, owner: str | None) -> None:
        self.session: Session = server.session(self.push)
        self.stream: asyncio.Queue[dict[str, Any] | None] | None = None
        self.owner = owner
        self.id = ""
        self.busy = 0
        self.touched = time.monotonic()

    async def push(self, message: dict[str, Any]) -> None:
        """Send a message outside any request: on the GET stream, or dropped if none is open."""
        if self.stream is not None:
            self.stream.put_nowait(message)
        else:
            logger.debug("no GET stream open; dropped %s", message.get("method"))

    async def close(self) -> None:
        if self.stream is not None:
            self.stream.put_nowait(None)
        await self.session.cancel_all()  # also stops the session listening to the App


class _Sessions:
    """An endpoint's handshake-era sessions: at most ``limit``, the idle ones in order of use.

    A session is busy while a request runs on it or its GET stream is open, else idle; ``idle``
    holds the idle ones, least recently used first. Idle sessions expire after ``idle_seconds``
    and, when a new session needs room, the least recently used one ends; both take from the
    front of ``idle``, so no operation scans the sessions. When every session is busy there is
    no room: a new one is refused (the caller answers 503), since ending a session mid-request
    or mid-stream would break a client that is using it.
    """

    def __init__(self, limit: int, idle_seconds: float) -> None:
        self.limit = limit
        self.idle_seconds = idle_seconds
        self.live: dict[str, _Live] = {}
        self.idle: OrderedDict[str, _Live] = OrderedDict()

    def use(self, live: _Live) -> None:
        """A request or the GET stream starts using ``live``."""
        live.busy += 1
        self.idle.pop(live.id, None)

    def release(self, live: _Live) -> None:
        """A request or the GET stream is done with ``live``."""
        live.busy -= 1
        if live.busy == 0 and live.id in self.live:
            live.touched = time.monotonic()
            self.idle[live.id] = live

    async def add(self, live: _Live) -> bool:
        """Register ``live`` under a new random id, ending idle sessions to make room; ``False``
        when every session is busy."""
        await self._expire()
        if len(self.live) >= self.limit:
            if not self.idle:
                return False
            await self.pop(next(iter(self.idle))).close()
        live.id = secrets.token_urlsafe(32)
        self.live[live.id] = live
        self.idle[live.id] = live
        return True

    async def _expire(self) -> None:
        oldest = time.monotonic() - self.idle_seconds
        while self.idle:
            live = next(iter(self.idle.values()))
            if live.touched >= oldest:
                return
            await self.pop(live.id).close()

    def pop(self, session_id: str) -> _Live:
        self.idle.pop(session_id, None)
        return self.live.pop(session_id)

    def drain(self) -> list[_Live]:
        """Forget every session; returns them to close."""
        sessions = list(self.live.values())
        self.live.clear()
        self.idle.clear()
        return sessions


async def _discard(message: dict[str, Any]) -> None:
    """The ``send`` of a stateless request's throwaway session (its POST carries its messages)."""


# ------------------------------------------------------------------------- the app


class HttpApp:
    """The Streamable HTTP endpoint for an :class:`~mcpkit.App`, as an ASGI application.

    ``path`` is the endpoint (relative to a mount point). ``stateless=True`` keeps no
    sessions, so any worker or replica can answer any request. ``json_response=True`` answers
    every request with JSON, never SSE. ``allowed_origins`` (default: loopback origins) and
    ``allowed_hosts`` (default: loopback names, checked only when bound to a loopback
    address) guard against DNS rebinding; ``"*"`` allows any. ``auth`` is a
    :class:`BearerAuth` or a bare verifier callable; with it, a session answers only the
    caller that opened it. At most ``max_sessions`` handshake-era sessions live at once: the
    least recently used idle one ends to make room, and ``initialize`` answers 503 when every
    one is busy (a request running, or its GET stream open). A session idle for
    ``session_idle_seconds`` ends when the next one opens.
    """

    def __init__(
        self,
        app: App,
        path: str = "/mcp",
        *,
        stateless: bool = False,
        json_response: bool = False,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        max_body_bytes: int = 16 * MiB,
        auth: BearerAuth | Verifier | None = None,
        max_sessions: int = 10_000,
        session_idle_seconds: float = 3600.0,
    ) -> None:
        self.app = app
        self.path = _normal_path(path)
        self.stateless = stateless
        self.json_response = json_response
        self.allowed_origins = _lowered(allowed_origins)
        self.allowed_hosts = _lowered(allowed_hosts)
        self.max_body_bytes = max_body_bytes
        self.auth = auth if isinstance(auth, BearerAuth) or auth is None else BearerAuth(auth)
        self.server = Server(app, limits=Limits(max_bytes=max_body_bytes))
        self.sessions = _Sessions(max_sessions, session_idle_seconds)
        self._started = False
        self._starting = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        if scope["type"] == "http":
            await self._http(_Http(scope, receive, send))
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(self, host_app: Any = None) -> AsyncIterator[None]:
        """For a host app's ``lifespan=``: enters the App's lifespan at start-up and leaves it,
        ending every session, at shutdown. Without it the lifespan starts on the first request."""
        await self.start()
        try:
            yield
        finally:
            await self.aclose()

    async def start(self) -> None:
        """Enter the App's lifespan (once per process; also done lazily by the first request)."""
        if self._started:
            return
        async with self._starting:
            if not self._started:
                await self.server.start()
                self._started = True

    async def aclose(self) -> None:
        """End every session (cancel its requests, close its GET stream), leave the lifespan."""
        for live in self.sessions.drain():
            await live.close()
        if self._started:
            self._started = False
            await self.server.stop()

    async def _lifespan(self, receive: Receive, send: ASGISend) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:
                    logger.exception("the App's lifespan failed to start")
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ------------------------------------------------------------------- routing

    async def _http(self, http: _Http) -> None:
        try:
            await self._route(http)
        except _Reject as reject:
            body = jsonrpc.error_response(reject.request_id, reject.error)
            await http.json(reject.status, body, reject.headers)
        except _Gone:
            pass
        except Exception:
            logger.exception("internal error answering %s %s", http.method, http.path)
            if not http.started:
                await http.json(500, jsonrpc.error_response(None, InternalError()))

    async def _route(self, http: _Http) -> None:
        if self.auth is not None and http.path in self._metadata_paths():
            await self._metadata(http, self.auth)
            return
        if http.path != self.path:
            await http.respond(404, b"Not Found", content_type="text/plain")
            return
        self._check_host(http)
        self._check_origin(http)
        if not self._started:
            await self.start()
        principal = None if self.auth is None else await self._authenticate(http)
        token = current_principal.set(principal)
        try:
            await self._endpoint(http)
        finally:
            current_principal.reset(token)

    async def _endpoint(self, http: _Http) -> None:
        if http.method == "POST":
            await self._post(http)
        elif http.method == "GET":
            await self._get(http)
        elif http.method == "DELETE":
            await self._delete(http)
        else:
            raise self._not_allowed(http.method)

    def _not_allowed(self, method: str) -> _Reject:
        allow = "POST" if self.stateless else "GET, POST, DELETE"
        error = InvalidRequest(f"Method Not Allowed: {method} (this endpoint allows {allow})")
        return _Reject(405, error, headers=[("allow", allow)])

    # ------------------------------------------------------------------ security

    def _check_host(self, http: _Http) -> None:
        if self.allowed_hosts is None and not _loopback_bind(http.scope.get("server")):
            return
        host = (http.header("host") or "").lower()
        if self.allowed_hosts is None:
            ok = _hostname(host) in _LOOPBACK_NAMES
        else:
            ok = "*" in self.allowed_hosts or host in self.allowed_hosts
            ok = ok or _hostname(host) in self.allowed_hosts
        if not ok:
            raise _Reject(421, InvalidRequest(f"Misdirected Request: Host {host!r} not allowed"))

    def _check_origin(self, http: _Http) -> None:
        origin = http.header("origin")
        if origin is None:
            return
        if self.allowed_origins is None:
            scheme, _, authority = origin.lower().partition("://")
            ok = scheme in ("http", "https") and _hostname(authority.rstrip("/")) in _LOOPBACK_NAMES
        else:
            ok = "*" in self.allowed_origins or origin.lower().rstrip("/") in self.allowed_origins
        if not ok:
            raise _Reject(403, InvalidRequest(f"Forbidden: Origin {origin!r} not allowed"))

    async def _authenticate(self, http: _Http) -> Any:
        if self.auth is None:
            return None
        scheme, _, token = (http.header("authorization") or "").partition(" ")
        principal = None
        if scheme.lower() == "bearer" and token.strip():
            principal = self.auth.verify(token.strip())
            if inspect.isawaitable(principal):
                principal = await principal
        if principal is None:
            raise self._challenge(http, 401, 'error="invalid_token"' if token else "")
        missing = set(self.auth.required_scopes) - _scopes_of(principal)
        if missing:
            raise self._challenge(http, 403, 'error="insufficient_scope"')
        return principal

    def _challenge(self, http: _Http, status: int, error: str) -> _Reject:
        assert self.auth is not None
        parts = [error] if error else []
        if self.auth.required_scopes:
            parts.append(f'scope="{" ".join(self.auth.required_scopes)}"')
        metadata = http.base_url() + METADATA_PATH + self._endpoint_path(http)
        parts.append(f'resource_metadata="{metadata}"')
        text = "Unauthorized: a valid bearer token is required"
        if status == 403:
            text = "Forbidden: the token lacks a required scope"
        header = ("www-authenticate", "Bearer " + ", ".join(parts))
        return _Reject(status, InvalidRequest(text), headers=[header])

    def _endpoint_path(self, http: _Http) -> str:
        root: str = http.scope.get("root_path", "")
        full = _normal_path(root + self.path)
        return "" if full == "/" else full

    def _metadata_paths(self) -> set[str]:
        return {METADATA_PATH, _normal_path(METADATA_PATH + self.path)}

    async def _metadata(self, http: _Http, auth: BearerAuth) -> None:
        if http.method != "GET":
            raise _Reject(405, InvalidRequest("Method Not Allowed"), headers=[("allow", "GET")])
        resource = http.base_url() + self._endpoint_path(http)
        await http.json(200, auth.metadata(resource or http.base_url()))

    # ---------------------------------------------------------------------- POST

    async def _post(self, http: _Http) -> None:
        self._check_content(http)
        body = await http.read_body(self.max_body_bytes)
        try:
            obj = jsonrpc.decode(body, self.server.limits)
        except ProtocolError as exc:
            raise _Reject(400, exc) from None
        if _is_stateless_era(obj, http.header(VERSION_HEADER)):
            await self._post_stateless_era(http, obj)
        elif self.stateless:
            await self._post_sessionless(http, obj)
        else:
            await self._post_session(http, obj)

    def _check_content(self, http: _Http) -> None:
        content_type = (http.header("content-type") or "").partition(";")[0].strip().lower()
        if content_type != JSON:
            raise _Reject(415, InvalidRequest("Unsupported Media Type: send application/json"))
        accept = http.header("accept")
        needed = _JSON_ONLY if self.json_response else _JSON_AND_SSE
        if not all(_accepts(accept, kind) for kind in needed):
            wanted = " and ".join(needed)
            raise _Reject(406, InvalidRequest(f"Not Acceptable: the client must accept {wanted}"))

    async def _post_stateless_era(self, http: _Http, obj: Any) -> None:
        if isinstance(obj, list):
            raise _batch_rejected()
        try:
            message = jsonrpc.parse(obj)
        except InvalidRequest as exc:
            raise _Reject(400, exc, jsonrpc.readable_id(obj)) from None
        if not isinstance(message, Request):
            await http.respond(202)  # nothing for a notification to do over HTTP in this era
            return
        params = _checked_meta(message)
        self._check_headers(http, message, params)
        await self._answer_once(http, obj, None, stateless_era=True)

    async def _post_sessionless(self, http: _Http, obj: Any) -> None:
        version = _header_version(http, obj) or DEFAULT_VERSION
        if isinstance(obj, list) and version != BATCH_VERSION:
            raise _batch_rejected()
        await self._answer_once(http, obj, None if _is_initialize(obj) else version)

    async def _answer_once(
        self, http: _Http, obj: Any, version: str | None, *, stateless_era: bool = False
    ) -> None:
        """Answer on a throwaway session: no state outlives the request."""
        session = self.server.session(_discard, listen=False)
        session.version = version
        session.supports_requests = False
        try:
            await self._answer(
                http, session, obj, stateless_era=stateless_era, cancel_on_close=True, prime=version
            )
        finally:
            await session.cancel_all()  # cancels the call if the client left; ends the session

    async def _post_session(self, http: _Http, obj: Any) -> None:
        _header_version(http, obj)
        if _is_initialize(obj):
            await self._initialize(http, obj)
            return
        live = self._live(http, obj)
        version = live.session.version
        if isinstance(obj, list) and version != BATCH_VERSION:
            raise _batch_rejected()
        self.sessions.use(live)
        try:
            await self._answer(http, live.session, obj, live=live, prime=version)
        finally:
            self.sessions.release(live)

    async def _initialize(self, http: _Http, obj: Any) -> None:
        live = _Live(self.server, self._caller())
        live.session.supports_requests = not self.json_response
        response = await live.session.handle(obj)
        headers = []
        if isinstance(response, dict) and "result" in response:
            if not await self.sessions.add(live):
                live.session.close()
                raise self._full(obj)
            headers.append((SESSION_HEADER, live.id))
        else:
            live.session.close()
        await http.json(_status(response, stateless_era=False), response, headers)

    def _full(self, obj: Any) -> _Reject:
        limit = self.sessions.limit
        error = InternalError(
            f"Service Unavailable: all {limit} sessions are in use (max_sessions={limit}); "
            "try again later"
        )
        return _Reject(503, error, jsonrpc.readable_id(obj))

    def _caller(self) -> str | None:
        return None if self.auth is None else caller_key(current_principal.get())

    def _live(self, http: _Http, obj: Any) -> _Live:
        """The session the request names; 404 if it ended or belongs to another caller."""
        session_id = http.header(SESSION_HEADER)
        request_id = jsonrpc.readable_id(obj)
        if session_id is None:
            error = InvalidRequest("Bad Request: the Mcp-Session-Id header is required")
            raise _Reject(400, error, request_id)
        live = self.sessions.live.get(session_id)
        if live is None or (self.auth is not None and live.owner != self._caller()):
            error = InvalidRequest("Session not found: it ended; send initialize to start anew")
            raise _Reject(404, error, request_id)
        return live

    async def _answer(
        self,
        http: _Http,
        session: Session,
        obj: Any,
        *,
        stateless_era: bool = False,
        cancel_on_close: bool = False,
        live: _Live | None = None,
        prime: str | None = None,
    ) -> None:
        out = _Responder(
            http,
            sse=not self.json_response,
            prime=prime is not None and at_least(prime, PRIMING_VERSION),
            headers=[],
            fallback=live.push if live is not None else None,
        )
        if cancel_on_close:
            response = await _unless_closed(http, session.handle(obj, send=out.notify))
            if response is _CLOSED:
                return  # the client closed the stream: the call was cancelled
        else:
            response = await asyncio.ensure_future(session.handle(obj, send=out.notify))
        await out.finish(response, _status(response, stateless_era=stateless_era))

    # ---------------------------------------------------------- headers (2026-07-28)

    def _check_headers(self, http: _Http, request: Request, params: dict[str, Any]) -> None:
        _expect(http, "MCP-Protocol-Version", params["_meta"][META_VERSION], request.id)
        _expect(http, "Mcp-Method", request.method, request.id)
        field = _NAMED.get(request.method)
        if field is not None:
            _expect(http, "Mcp-Name", params.get(field), request.id, encoded=True)
        if request.method == "tools/call":
            self._check_params(http, request, params)

    def _check_params(self, http: _Http, request: Request, params: dict[str, Any]) -> None:
        name = params.get("name")
        tool = self.app.tools.get(name) if isinstance(name, str) else None
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return
        try:
            schema = tool.input_schema
        except MCPKitError:
            return  # the call itself reports a tool that cannot be compiled
        for path, header in header_properties(schema):
            value = _lookup(arguments, path)
            if value is None:
                continue  # absent or null: the client omits the header, nothing to check
            text = _expect_present(http, f"Mcp-Param-{header}", request.id)
            if not _same_value(text, value):
                _mismatch(f"Mcp-Param-{header} value {text!r} does not match the body", request.id)

    # ------------------------------------------------------------------ GET/DELETE

    async def _get(self, http: _Http) -> None:
        if self.stateless or http.header(SESSION_HEADER) is None:
            raise self._not_allowed("GET without a session")
        live = self._live(http, None)
        if not _accepts(http.header("accept"), SSE):
            raise _Reject(406, InvalidRequest("Not Acceptable: the client must accept " + SSE))
        _header_version(http, None)
        if live.stream is not None:
            raise _Reject(409, InvalidRequest("Conflict: this session's GET stream is open"))
        await self._stream(http, live)

    async def _stream(self, http: _Http, live: _Live) -> None:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        live.stream = queue
        stream = _Stream(http)
        closed = asyncio.ensure_future(http.disconnected())
        self.sessions.use(live)
        try:
            await http.start_sse([])
            if at_least(live.session.version or DEFAULT_VERSION, PRIMING_VERSION):
                await stream.prime()
            await _pump(http, stream, queue, closed)
        finally:
            closed.cancel()
            if live.stream is queue:
                live.stream = None
            self.sessions.release(live)
            await http.write(b"", more=False)

    async def _delete(self, http: _Http) -> None:
        session_id = http.header(SESSION_HEADER)
        if self.stateless or session_id is None:
            raise self._not_allowed("DELETE without a session")
        live = self._live(http, None)
        self.sessions.pop(live.id)
        await live.close()
        await http.respond(204)


# ------------------------------------------------------------------------- helpers


def _lowered(values: Iterable[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(v.lower().rstrip("/") for v in values)


def _loopback_bind(server: Any) -> bool:
    return bool(server) and _loopback_host(str(server[0]))


@functools.lru_cache(maxsize=64)
def _loopback_host(host: str) -> bool:
    """Whether the server's bound address is a loopback one (parsed once per address)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _hostname(authority: str) -> str | None:
    """``host[:port]`` -> host (``[::1]:8000`` -> ``::1``), or ``None`` if it does not parse
    (``[::1``, ``[::1]x``, ``a:b:c``): such a value is refused like one not allowed."""
    if authority.startswith("["):
        host, bracket, port = authority[1:].partition("]")
        if not bracket or (port and port[0] != ":"):
            return None
        port = port[1:]
    else:
        host, _, port = authority.partition(":")
    return host if host and (not port or port.isdigit()) else None


def _accepts(accept: str | None, wanted: str) -> bool:
    """Whether an ``Accept`` header allows ``wanted`` (no header allows anything)."""
    if accept is None:
        return True
    if len(accept) <= _CACHED_ACCEPT:  # clients send the same few values: parsed once
        return _accept_allows_cached(accept, wanted)
    return _accept_allows(accept, wanted)


def _accept_allows(accept: str, wanted: str) -> bool:
    family = wanted.partition("/")[0] + "/*"
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media.lower() in (wanted, family, "*/*") and not _zero_quality(params):
            return True
    return False


_CACHED_ACCEPT = 256  # characters: the longest Accept value cached (256 of them at most)
_accept_allows_cached = functools.lru_cache(maxsize=256)(_accept_allows)


def _zero_quality(params: list[str]) -> bool:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value) == 0
            except ValueError:
                return False
    return False


def _is_stateless_era(obj: Any, header: str | None) -> bool:
    if header in STATELESS_VERSIONS:
        return True
    if not isinstance(obj, dict):
        return False
    if obj.get("method") in _STATELESS_METHODS:
        return True
    params = obj.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_VERSION in meta


def _is_initialize(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("method") == "initialize" and "id" in obj


def _batch_rejected() -> _Reject:
    error = InvalidRequest(
        f"Invalid Request: batches exist only in protocol version {BATCH_VERSION}"
    )
    return _Reject(400, error)


def _header_version(http: _Http, obj: Any) -> str | None:
    """The handshake-era ``MCP-Protocol-Version`` header: validated, or ``None`` if absent."""
    value = http.header(VERSION_HEADER)
    if value is None or value in HANDSHAKE_VERSIONS:
        return value
    error = UnsupportedProtocolVersion(value, list(ALL_VERSIONS))
    error.message = f"Bad Request: unsupported MCP-Protocol-Version {value!r}"
    raise _Reject(400, error, jsonrpc.readable_id(obj))


def _checked_meta(request: Request) -> dict[str, Any]:
    params = request.params if isinstance(request.params, dict) else {}
    meta = params.get("_meta")
    if (
        not isinstance(meta, dict)
        or not isinstance(meta.get(META_VERSION), str)
        or not isinstance(meta.get(META_CAPABILITIES), dict)
    ):
        error = InvalidParams(
            f"Invalid params: _meta must carry {META_VERSION!r} (a string) "
            f"and {META_CAPABILITIES!r} (an object)"
        )
        raise _Reject(400, error, request.id)
    return params


def _status(response: Any, *, stateless_era: bool) -> int:
    """The HTTP status of a JSON answer: 200 unless the error is one HTTP spells itself."""
    if not isinstance(response, dict) or "error" not in response:
        return 200
    code = response["error"].get("code")
    if code == -32700 or (code == -32600 and response.get("id") is None):
        return 400
    if stateless_era and code in (-32020, -32021, -32022):
        return 400
    return 404 if stateless_era and code == -32601 else 200


_CLOSED: Any = object()
"""What :func:`_unless_closed` returns when the client left before the call was done."""


async def _unless_closed(http: _Http, call: Coroutine[Any, Any, Any]) -> Any:
    """Run ``call`` in this task and return its result, or cancel it and return ``_CLOSED`` if
    the client disconnects first.

    The request's own task runs the call (no task per call), and a disconnect cancels that
    task. Watching for the disconnect starts only once the call has run ``_WATCH_AFTER``
    seconds: a quick call needs no watcher task, and meanwhile the loop is free to wait for a
    sync tool's worker thread. A disconnect stays pending in ``receive`` until read, so none is
    missed: one in the call's first ``_WATCH_AFTER`` seconds cancels it at that point.
    """
    task = asyncio.current_task()
    if task is None:  # not run by a task (an unusual ASGI server): give the call one
        return await asyncio.ensure_future(_unless_closed(http, call))
    watch = _CloseWatch(http, task)
    try:
        result = await call
    except asyncio.CancelledError:
        if not watch.gone:
            raise  # a cancellation from outside (a server shutting down): let it through
        result = _CLOSED
    finally:
        watch.stop()
    if watch.gone:  # our cancellation, delivered (or swallowed by the call)
        if _withdraw_cancel(task):
            raise asyncio.CancelledError  # the task was also cancelled from outside
        return _CLOSED
    return result


class _CloseWatch:
    """Cancels ``task`` when the client disconnects, from ``_WATCH_AFTER`` seconds on until
    :meth:`stop`."""

    def __init__(self, http: _Http, task: asyncio.Task[Any]) -> None:
        self.http = http
        self.task = task
        self.gone = False
        self.watcher: asyncio.Task[None] | None = None
        self.starting: asyncio.TimerHandle | None = task.get_loop().call_later(
            _WATCH_AFTER, self._start
        )

    def _start(self) -> None:
        self.starting = None
        self.watcher = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        try:
            await self.http.disconnected()
        except Exception:  # a receive that fails counts as a disconnect
            logger.debug("receive failed while a call ran; cancelling it", exc_info=True)
        # Runs only while the call is suspended: ``stop`` cancels this task before the call's
        # task carries on.
        self.gone = True
        self.task.cancel()

    def stop(self) -> None:
        if self.starting is not None:
            self.starting.cancel()
        if self.watcher is not None:
            self.watcher.cancel()


def _withdraw_cancel(task: asyncio.Task[Any]) -> bool:
    """Withdraw the watcher's cancellation (Python 3.11+ counts them); ``True`` if the task
    has another one pending."""
    uncancel = getattr(task, "uncancel", None)
    return uncancel is not None and uncancel() > 0


async def _pump(
    http: _Http,
    stream: _Stream,
    queue: asyncio.Queue[dict[str, Any] | None],
    closed: asyncio.Future[None],
) -> None:
    """Copy queued messages to a GET stream until the session ends or the client leaves."""
    while not closed.done():
        get = asyncio.ensure_future(queue.get())
        waiting: set[asyncio.Future[Any]] = {get, closed}
        done, _ = await asyncio.wait(
            waiting, timeout=_KEEPALIVE_SECONDS, return_when=asyncio.FIRST_COMPLETED
        )
        if get not in done:
            get.cancel()
            if not done:
                await http.write(b": keep-alive\n\n")
            continue
        message = get.result()
        if message is None:
            return
        await stream.event(message)


def _single(http: _Http, name: str, request_id: RequestId) -> str | None:
    values = http.headers.get(name.lower())
    if not values:
        return None
    if len(values) > 1:
        _mismatch(f"the {name} header appears more than once", request_id)
    return values[0].strip(" \t")


def _expect_present(http: _Http, name: str, request_id: RequestId) -> str:
    value = _single(http, name, request_id)
    if value is None:
        _mismatch(f"the {name} header is required", request_id)
    return decode_header_value(value, name, request_id)


def _expect(
    http: _Http, name: str, body_value: Any, request_id: RequestId, *, encoded: bool = False
) -> None:
    value = _single(http, name, request_id)
    if value is None:
        _mismatch(f"the {name} header is required", request_id)
    text = decode_header_value(value, name, request_id) if encoded else value
    if text != body_value:
        _mismatch(
            f"{name} header value {value!r} does not match body value {body_value!r}", request_id
        )


def decode_header_value(value: str, name: str, request_id: RequestId) -> str:
    """A header value as text: ``=?base64?...?=`` decoded strictly, others checked for safety."""
    if any(not (" " <= ch <= "~" or ch == "\t") for ch in value):
        _mismatch(f"the {name} header has characters outside visible ASCII", request_id)
    if len(value) >= 11 and value.startswith(_B64_PREFIX) and value.endswith(_B64_SUFFIX):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            _mismatch(f"the {name} header is not valid Base64", request_id)
    return value


def _mismatch(text: str, request_id: RequestId) -> NoReturn:
    raise _Reject(400, HeaderMismatch(f"Header mismatch: {text}"), request_id)


def header_properties(
    schema: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], str]]:
    """``(property path, header name)`` for every ``x-mcp-header`` reachable via ``properties``."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found: list[tuple[tuple[str, ...], str]] = []
    for key, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        name = sub.get("x-mcp-header")
        if isinstance(name, str):
            found.append(((*prefix, key), name))
        found.extend(header_properties(sub, (*prefix, key)))
    return found


def _lookup(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _same_value(text: str, value: Any) -> bool:
    """A header's text against the body's value: booleans as ``true``/``false``, numbers
    numerically (``42.0`` equals ``42``), strings exactly."""
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            return Decimal(text) == Decimal(repr(value))
        except InvalidOperation:
            return False
    return isinstance(value, str) and text == value
