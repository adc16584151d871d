"""What the server knows about one request, in either era: :class:`RequestContext`.

Handshake-era facts (version, capabilities, log level) live on the session; stateless-era
requests carry them in ``_meta``, read here (:func:`stateless_context`). Both end up here, so
handlers never ask which era they serve.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpkit.context import LOG_LEVELS
from mcpkit.exceptions import InvalidParams, MCPKitError, Unencodable, UnsupportedProtocolVersion
from mcpkit.middleware import Transport
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.headers import Headers
from mcpkit.protocol.request_state import InputRequired
from mcpkit.protocol.versions import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_VERSION,
    STATELESS_VERSIONS,
    negotiate,
    progress_messages,
)
from mcpkit.types import RequestId

__all__ = [
    "ActingFor",
    "Caller",
    "RequestContext",
    "Send",
    "caller_key",
    "checked_meta",
    "current_caller",
    "encoding",
    "handshake_context",
    "log_event",
    "progress_token",
    "request_span",
    "stateless_context",
]

logger = logging.getLogger("mcpkit.server")

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Writes one message to the client (the transport supplies it)."""

Reader = Callable[["RequestContext", str], Awaitable[list[dict[str, Any]]]]
"""Reads one of the app's resources for a running request (``ctx.read_resource``)."""


class Caller:
    """Who sends the request being served, as its transport learned it: the authenticated
    ``principal`` (``None`` without one) and the HTTP request's ``headers`` (lower-case name ->
    values; ``None`` when the transport has no headers)."""

    __slots__ = ("headers", "principal")

    def __init__(self, principal: Any = None, headers: Headers | None = None) -> None:
        self.principal = principal
        self.headers = headers


current_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar(
    "mcpkit_caller",
    default=Caller(),  # noqa: B039 (a Caller is never changed, only replaced)
)
"""The caller of the request being served (set by a transport: HTTP for each request, the test
client for each request, stdio once); each new :class:`RequestContext` picks it up."""


class ActingFor(Caller):
    """A ``with`` block served on behalf of a caller (the :class:`Caller` that
    :data:`current_caller` holds inside it; a plain class, itself the caller: entered on every
    HTTP request, cheaper than a generator-based manager and a second object)."""

    __slots__ = ("token",)

    def __init__(self, principal: Any, headers: Headers | None = None) -> None:
        self.principal = principal
        self.headers = headers
        self.token: contextvars.Token[Caller] | None = None

    def __enter__(self) -> None:
        self.token = current_caller.set(self)

    def __exit__(self, *exc_info: object) -> None:
        if self.token is not None:
            current_caller.reset(self.token)


def caller_key(principal: Any) -> str | None:
    """Who a principal is, for binding state to its caller (an HTTP session, a
    ``requestState``): ``None`` without one; its issuer and subject when it carries a string
    ``sub`` (JWT claims, as keys or attributes), so a refreshed token is the same caller;
    else ``str(principal)``, which must then name the caller (a dataclass's does)."""
    if principal is None:
        return None
    if isinstance(principal, Mapping):
        subject, issuer = principal.get("sub"), principal.get("iss")
    else:
        subject, issuer = getattr(principal, "sub", None), getattr(principal, "iss", None)
    if isinstance(subject, str):
        return json.dumps(["sub", issuer, subject], default=str)
    return str(principal)


request_span: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "mcpkit_request_span", default=None
)
"""The OpenTelemetry SERVER span of the request being served (``None`` without one, the
usual case: :mod:`mcpkit.protocol.spans` sets it); ``ctx.info(...)`` and friends add events to
it."""


def log_event(level: str, data: Any, logger: str | None) -> None:
    """Add a log message to the request's span as an event, whatever the client's log level
    (the operator's copy; the client's follows its level)."""
    span = request_span.get()
    if span is None:
        return
    text = data if isinstance(data, str) else json.dumps(data, default=repr, ensure_ascii=False)
    attributes = {"mcpkit.log.level": level, "mcpkit.log.data": text}
    if logger is not None:
        attributes["mcpkit.log.logger"] = logger
    span.add_event("log", attributes)


_FROM_CONTEXT: Any = object()


class RequestContext:
    """One request's facts and the powers behind :class:`mcpkit.Context`.

    A plain slotted class, not a dataclass: one is made per request, and a dataclass would cost
    a millisecond of compiling at import.
    """

    __slots__ = (
        "_asked",
        "_last_progress",
        "becomes_task",
        "cache_hint",
        "client_capabilities",
        "client_info",
        "elicitation_ids",
        "headers",
        "input_responses",
        "log_level",
        "meta",
        "missing_inputs",
        "principal",
        "progress_token",
        "protocol_version",
        "reader",
        "request_id",
        "send",
        "session",
        "settings_spec",
        "state",
        "stateless",
        "task",
        "transport",
    )

    def __init__(
        self,
        *,
        request_id: RequestId | None,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None,
        stateless: bool,
        send: Send,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        state: Any = None,
        session: Any = None,
        principal: Any = _FROM_CONTEXT,
        reader: Reader | None = None,
        meta: dict[str, Any] | None = None,
        transport: Transport = "stdio",
        settings_spec: Any = None,
    ) -> None:
        self.request_id = request_id
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.stateless = stateless
        self.send = send
        self.log_level = log_level
        self.progress_token = progress_token
        self.state = state
        self.settings_spec = settings_spec  # the App's SettingsSpec, else None
        self.session: Any = session  # the handshake-era Session, None for stateless requests
        caller = current_caller.get()
        self.principal: Any = caller.principal if principal is _FROM_CONTEXT else principal
        self.headers = caller.headers
        self.meta = meta
        self.transport = transport
        self.reader = reader
        self.cache_hint: tuple[int | None, str | None] | None = None  # a resource's own hints
        self.input_responses: dict[str, Any] = {}
        self.missing_inputs: dict[str, Any] = {}
        self._last_progress: float | None = None
        self._asked = 0
        self.task: Any = None  # a running task's TaskHandle (protocol.tasks.runner)
        self.becomes_task: Callable[[], Awaitable[None]] | None = None
        self.elicitation_ids: dict[str, str] | None = None  # name -> id, made on first ask

    def elicitation_id(self, name: str) -> str:
        """The URL elicitation id called ``name``: made once per request (in 2026-07-28 once
        per request and its rounds: :func:`~mcpkit.protocol.methods.input_required.with_input`
        restores them from the ``requestState``)."""
        if self.elicitation_ids is None:
            self.elicitation_ids = {}
        found = self.elicitation_ids.get(name)
        if found is None:
            import secrets  # not at import: hmac and hashlib come with it (start-up)

            found = self.elicitation_ids[name] = secrets.token_urlsafe(16)
        return found

    @property
    def settings(self) -> Any:
        """The App's validated settings (read on first use), else ``None``."""
        spec = self.settings_spec
        return None if spec is None else spec.current()

    async def continue_as_task(self) -> None:
        """Answer the request with a task now and run on in the background (only a tool
        that supports tasks, called with the extension declared; otherwise nothing)."""
        begin, self.becomes_task = self.becomes_task, None
        if begin is not None:
            await begin()

    async def ask(self, method: str, params: dict[str, Any], key: str | None) -> Any:
        """Ask the client: a server request (handshake era), an input request (stateless), or
        a running task's input request (it waits in ``input_required``)."""
        if self.task is not None:
            return await self.task.ask(method, params, key)
        self._asked += 1
        key = key or f"{method.split('/')[0]}-{self._asked}"
        if self.stateless:
            answer = self.input_responses.get(key)
            if isinstance(answer, dict):
                return answer
            # Record every missing input before raising, so questions asked together
            # (asyncio.gather) travel in one InputRequiredResult.
            self.missing_inputs[key] = {"method": method, "params": params}
            raise InputRequired(self.missing_inputs)
        if self.session is None or not self.session.supports_requests:
            raise MCPKitError(
                f"cannot send {method} to the client: this transport answers with single JSON "
                "responses (stateless HTTP or JSON-response mode); use a stateful SSE session "
                "or the 2026-07-28 protocol"
            )
        return await self.session.request(method, params, send=self.send)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        if self.reader is None:
            raise MCPKitError("resources cannot be read from this request")
        return await self.reader(self, uri)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.task is not None:  # a task reports progress as its statusMessage
            await self.task.progress(message)
            return
        if self.progress_token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return  # progress MUST increase; a value that does not is dropped
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and progress_messages(self.protocol_version):
            params["message"] = message
        await self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if self.task is not None:
            return  # SEP-2663: no log notifications for tasks
        log_event(level, data, logger)  # whatever the client's level: for the operator
        if self.log_level is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})


def stateless_context(
    request_id: RequestId,
    meta: Any,
    *,
    send: Send,
    state: Any,
    reader: Reader,
    transport: Transport,
    settings_spec: Any = None,
) -> RequestContext:
    """A stateless-era request's context, from its ``_meta``: ``-32602`` when ``_meta`` lacks
    the version or the capabilities or names an unknown log level, ``-32022`` for a version
    this server does not speak."""
    meta = checked_meta(meta)
    if meta[META_VERSION] not in STATELESS_VERSIONS:
        raise UnsupportedProtocolVersion(meta[META_VERSION], list(STATELESS_VERSIONS))
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid params: unknown log level {level!r}")
    info = meta.get(META_CLIENT_INFO)
    return RequestContext(
        request_id=request_id,
        protocol_version=meta[META_VERSION],
        client_capabilities=meta[META_CAPABILITIES],
        client_info=info if isinstance(info, dict) else None,
        stateless=True,
        send=send,
        log_level=level,
        progress_token=progress_token(meta),
        state=state,
        reader=reader,
        meta=meta,
        transport=transport,
        settings_spec=settings_spec,
    )


def handshake_context(
    session: Any, request_id: RequestId, params: dict[str, Any], *, send: Send, reader: Reader
) -> RequestContext:
    """A handshake-era request's context, from its session's facts (``initialize`` included:
    its version is the one the session is about to agree)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        meta = None
    server = session.server
    return RequestContext(
        request_id=request_id,
        protocol_version=session.version or negotiate(params.get("protocolVersion")),
        client_capabilities=session.client_capabilities,
        client_info=session.client_info,
        stateless=False,
        send=send,
        log_level=session.log_level,
        progress_token=None if meta is None else progress_token(meta),
        state=server.state,
        settings_spec=server.app.settings_spec,
        session=session,
        reader=reader,
        meta=meta,
        transport=session.transport,
    )


def checked_meta(meta: Any) -> dict[str, Any]:
    """A stateless-era request's ``_meta``, or ``-32602`` when it lacks the version (a string)
    or the client capabilities (an object)."""
    if (
        not isinstance(meta, dict)
        or not isinstance(meta.get(META_VERSION), str)
        or not isinstance(meta.get(META_CAPABILITIES), dict)
    ):
        raise InvalidParams(
            f"Invalid params: _meta must carry {META_VERSION!r} (a string) "
            f"and {META_CAPABILITIES!r} (an object)"
        )
    return meta


def progress_token(meta: Any) -> str | int | None:
    """The request's ``_meta.progressToken`` when it is a string or an integer."""
    if not isinstance(meta, dict):
        return None
    token = meta.get("progressToken")
    if isinstance(token, str) or (isinstance(token, int) and not isinstance(token, bool)):
        return token
    return None


def encoding(send: Send) -> Send:
    """``send``, each message encoded first (:func:`jsonrpc.encoded`): a notification JSON
    cannot carry (NaN progress, an object in a log message) is dropped with a warning; a
    request to the client raises :class:`Unencodable` to the handler that sent it."""

    async def encoded(message: dict[str, Any]) -> None:
        try:
            message = jsonrpc.encoded(message)
        except Unencodable as exc:
            if "id" in message:
                raise
            logger.warning("dropped %s: %s", message.get("method"), exc)
            return
        await send(message)

    return encoded
