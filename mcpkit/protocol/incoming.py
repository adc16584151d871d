"""A message as it arrives: decoded, its era decided, and the checks its era makes before any
handler runs, all in one place (transports decide none of them).

:func:`admit` takes the raw body a transport read and what the transport knows (its request
headers) and returns an :class:`Incoming`, or raises :class:`Refused`, the error a transport
answers at its own level (HTTP: status 400) instead of running anything.

Era rule: a message is stateless-era (2026-07-28) when the version header names that era, its
``params._meta`` carries ``io.modelcontextprotocol/protocolVersion``, or its method exists only
in that era; otherwise it belongs to a handshake session.
"""

from __future__ import annotations

from typing import Any

from mcpkit.app import App
from mcpkit.exceptions import InvalidRequest, ProtocolError, UnsupportedProtocolVersion
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.headers import Headers, check_headers
from mcpkit.protocol.jsonrpc import Limits, Notification, Request
from mcpkit.protocol.request import checked_meta
from mcpkit.protocol.versions import (
    ALL_VERSIONS,
    BATCH_VERSION,
    HANDSHAKE_VERSIONS,
    has_batches,
    is_stateless,
    is_stateless_version,
)
from mcpkit.types import RequestId

__all__ = [
    "CANCELLED",
    "VERSION_HEADER",
    "Incoming",
    "Refused",
    "Taken",
    "admit",
    "cancel_target",
    "no_batches",
]

CANCELLED = "notifications/cancelled"

VERSION_HEADER = "mcp-protocol-version"


class Refused(Exception):
    """The core refuses a message before running it: ``error`` answers it, echoing
    ``request_id`` when the message had a readable one; ``message`` is the decoded message
    (``None`` when it could not be decoded)."""

    def __init__(self, error: ProtocolError, request_id: RequestId | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.request_id = request_id
        self.message: Any = None

    def response(self) -> dict[str, Any]:
        """The JSON-RPC error message that answers the refused message."""
        return jsonrpc.error_response(self.request_id, self.error)


class Incoming:
    """A decoded message the core admitted, and what its era says about it.

    ``message`` is what to hand to ``Session.handle`` (a stateless-era request comes parsed,
    so it is not parsed again); ``stateless`` is the era; ``version`` the handshake-era
    version header (validated) or ``None``; ``initialize`` whether it opens a session;
    ``accepted`` whether there is nothing to run (a stateless-era notification or answer).
    """

    __slots__ = ("accepted", "initialize", "message", "stateless", "version")

    def __init__(
        self,
        message: Any,
        *,
        stateless: bool,
        version: str | None = None,
        initialize: bool = False,
        accepted: bool = False,
    ) -> None:
        self.message = message
        self.stateless = stateless
        self.version = version
        self.initialize = initialize
        self.accepted = accepted

    def check_batch(self, version: str | None) -> None:
        """Refuse a batch unless ``version`` (the session's or the request's) has batches."""
        if isinstance(self.message, list) and not has_batches(version):
            raise Refused(no_batches())

    @staticmethod
    def version_header(headers: Headers) -> str | None:
        """The handshake-era version header of a request without a body: validated (else
        refused), or ``None`` when absent."""
        return _handshake_version(_first(headers, VERSION_HEADER), None)

    @property
    def request_id(self) -> RequestId | None:
        """The id a refusal of this message echoes (see :func:`asking_id`)."""
        if isinstance(self.message, Request):
            return self.message.id
        return asking_id(self.message)


class Taken:
    """What a stream transport does with one line (``Session.take``): ``message`` to run once
    ``slots`` are free (``None``: nothing to run), ``reply`` to write now, ``cancels`` the
    request a cancellation names (a transport drops it if it has not started it)."""

    __slots__ = ("cancels", "message", "reply", "slots")

    def __init__(
        self,
        message: Any,
        slots: int,
        *,
        reply: dict[str, Any] | None = None,
        cancels: RequestId | None = None,
    ) -> None:
        self.message = message
        self.slots = slots
        self.reply = reply
        self.cancels = cancels

    @property
    def request_id(self) -> RequestId | None:
        """The id of the request (or ``None``) this line carries."""
        return jsonrpc.readable_id(self.message)


def cancel_target(obj: Any) -> RequestId | None:
    """The request a ``notifications/cancelled`` message names, matched as
    ``Session.cancel`` matches it, else ``None``: for a transport that holds requests it
    has not started yet (they are dropped, never answered)."""
    try:
        message = jsonrpc.parse(obj)
    except InvalidRequest:
        return None
    if not isinstance(message, Notification) or message.method != CANCELLED:
        return None
    params = message.params
    return jsonrpc.as_id(params.get("requestId")) if isinstance(params, dict) else None


def no_batches() -> InvalidRequest:
    """The error answering a batch in a version without batches."""
    return InvalidRequest(
        f"Invalid Request: batches exist only in protocol version {BATCH_VERSION}"
    )


def admit(data: bytes, headers: Headers, app: App, limits: Limits) -> Incoming:
    """Decode ``data`` and decide its era; a stateless-era message is parsed and its ``_meta``
    and mirrored headers checked here, a handshake-era one's version header validated."""
    try:
        obj = jsonrpc.decode(data, limits)
    except ProtocolError as exc:
        raise Refused(exc) from None
    try:
        return _era(obj, headers, app)
    except Refused as refused:
        refused.message = obj
        raise


def _era(obj: Any, headers: Headers, app: App) -> Incoming:
    values = headers.get(VERSION_HEADER)  # (_first, inline: every request's)
    header = values[0] if values else None
    request = _single_request(obj)  # parsed once, for the era and then for the session
    if request is not None:
        params = request.params if isinstance(request.params, dict) else {}
        if is_stateless_version(header) or is_stateless(request.method, params):
            return _stateless_request(request, params, headers, app)
        known = header is None or header in HANDSHAKE_VERSIONS  # (else the call refuses it)
        version = header if known else _handshake_version(header, obj)
        initialize = request.method == "initialize"
        return Incoming(request, stateless=False, version=version, initialize=initialize)
    if is_stateless_version(header) or _stateless_message(obj):
        return _stateless(obj, headers, app)
    return Incoming(
        obj,
        stateless=False,
        version=_handshake_version(header, obj),
        initialize=isinstance(obj, dict) and obj.get("method") == "initialize" and "id" in obj,
    )


def _single_request(obj: Any) -> Request | None:
    """``obj`` parsed when it is one valid request, else ``None`` (the rest is decided on the
    raw value: batches, notifications, answers and what is no message)."""
    if type(obj) is not dict or "id" not in obj or "method" not in obj:
        return None
    if "result" in obj or "error" in obj:  # (what tries to be an answer too: decided raw)
        return None
    try:
        message = jsonrpc.parse(obj)
    except InvalidRequest:
        return None
    return message if type(message) is Request else None


def _stateless(obj: Any, headers: Headers, app: App) -> Incoming:
    if isinstance(obj, list):
        raise Refused(no_batches())
    try:
        message = jsonrpc.parse(obj)
    except InvalidRequest as exc:
        raise Refused(exc, jsonrpc.readable_id(obj)) from None
    if not isinstance(message, Request):
        return Incoming(message, stateless=True, accepted=True)
    params = message.params if isinstance(message.params, dict) else {}
    return _stateless_request(message, params, headers, app)


def _stateless_request(
    message: Request, params: dict[str, Any], headers: Headers, app: App
) -> Incoming:
    try:
        checked_meta(params.get("_meta"))
        check_headers(headers, message.method, params, app)
    except ProtocolError as exc:
        raise Refused(exc, message.id) from None
    return Incoming(message, stateless=True)


def _stateless_message(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    method = obj.get("method")
    params = obj.get("params")
    return is_stateless(
        method if isinstance(method, str) else "", params if isinstance(params, dict) else {}
    )


def _handshake_version(value: str | None, obj: Any) -> str | None:
    if value is None or value in HANDSHAKE_VERSIONS:
        return value
    error = UnsupportedProtocolVersion(value, list(ALL_VERSIONS))
    error.message = f"Bad Request: unsupported MCP-Protocol-Version {value!r}"
    raise Refused(error, asking_id(obj))


def asking_id(obj: Any) -> RequestId | None:
    """The id a refusal of ``obj`` echoes: a request's (or what tries to be one), never the id
    of a client's response, which the server chose for its own request."""
    try:
        answering = isinstance(jsonrpc.parse(obj), jsonrpc.Response)
    except InvalidRequest:
        answering = False  # an invalid message's readable id is echoed, as JSON-RPC says
    return None if answering else jsonrpc.readable_id(obj)


def _first(headers: Headers, name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None
