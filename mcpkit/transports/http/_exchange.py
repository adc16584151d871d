"""One HTTP exchange over ASGI: the request's headers and body, the ways to answer it, and the
errors that end it early (:class:`HttpError`, :class:`ClientGone`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from mcpkit.exceptions import InvalidRequest, ProtocolError
from mcpkit.protocol.incoming import Refused
from mcpkit.protocol.jsonrpc import encode
from mcpkit.types import RequestId

__all__ = [
    "JSON",
    "SESSION_HEADER",
    "SSE",
    "ASGISend",
    "ClientGone",
    "Exchange",
    "HttpError",
    "Receive",
    "Scope",
    "normal_path",
    "status_of",
]

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
ASGISend = Callable[[ASGIMessage], Awaitable[None]]

JSON = "application/json"
SSE = "text/event-stream"
SESSION_HEADER = "mcp-session-id"
_CONTENT_TYPES = {JSON: (b"content-type", JSON.encode())}  # header lines encoded once
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class HttpError(Refused):
    """An HTTP error answer: a status, the JSON-RPC error of its body, extra headers."""

    def __init__(
        self,
        status: int,
        error: ProtocolError,
        request_id: RequestId | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(error, request_id)
        self.status = status
        self.headers = list(headers)


class ClientGone(Exception):
    """The client went away before its request was complete."""


class Exchange:
    """One HTTP exchange: the request's headers and body, and the ways to answer."""

    def __init__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        self.scope = scope
        self.receive = receive
        self._send = send
        headers: dict[str, list[str]] = {}
        self.headers = headers
        for raw_name, raw_value in scope.get("headers", ()):
            name = _NAMES.get(raw_name) or _name(raw_name)
            if name in headers:
                headers[name].append(raw_value.decode("latin-1"))
            else:
                headers[name] = [raw_value.decode("latin-1")]
        self.method = str(scope.get("method", "GET")).upper()
        path: str = scope.get("path", "/")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        self.path = path if path[:1] == "/" and path[-1:] != "/" else normal_path(path)
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
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers] if headers else []
        if content_type is not None:
            raw.append(_CONTENT_TYPES.get(content_type) or (b"content-type", content_type.encode()))
        raw.append((b"content-length", b"%d" % len(body)))
        self.started = True  # (what send() does, for both messages)
        if self.closed:
            return
        try:
            await self._send({"type": "http.response.start", "status": status, "headers": raw})
            await self._send({"type": "http.response.body", "body": body})
        except OSError:  # the client is gone; nothing more can reach it
            self.closed = True

    def json(
        self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()
    ) -> Awaitable[None]:
        """Answer ``payload`` as JSON (awaitable; no coroutine of its own around ``respond``)."""
        return self.respond(status, encode(payload), headers, JSON)

    async def start_sse(self, headers: Iterable[tuple[str, str]]) -> None:
        raw = _SSE_HEADERS + [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        await self.send({"type": "http.response.start", "status": 200, "headers": raw})

    async def write(self, chunk: bytes, *, more: bool = True) -> None:
        await self.send({"type": "http.response.body", "body": chunk, "more_body": more})

    async def read_body(self, limit: int) -> bytes:
        length = self.headers.get("content-length")
        if length is not None and length[0].isdigit() and int(length[0]) > limit:
            raise _too_large(limit)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                raise ClientGone
            chunk: bytes = message.get("body", b"")
            if not chunks and not message.get("more_body", False) and len(chunk) <= limit:
                return chunk if type(chunk) is bytes else bytes(chunk)  # whole in one message
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


_NAMES: dict[bytes, str] = {}  # header names as sent -> as read (most requests repeat them)


def _name(raw: bytes) -> str:
    name = raw.decode("latin-1").lower()
    if len(raw) <= 64:  # (a long one is read each time)
        if len(_NAMES) >= 256:  # a client making up names: start again, never grow past this
            _NAMES.clear()
        _NAMES[raw] = name
    return name


def _too_large(limit: int) -> HttpError:
    return HttpError(413, InvalidRequest(f"Invalid Request: body larger than {limit} bytes"))


def normal_path(path: str) -> str:
    stripped = path.rstrip("/")
    return stripped if stripped.startswith("/") else "/" + stripped


def _host_of(server: Any) -> str:
    if not server:
        return "localhost"
    host, port = server[0], server[1]
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def status_of(response: Any, *, stateless_era: bool) -> int:
    """The HTTP status of a JSON answer: 200 unless the error is one HTTP spells itself."""
    if not isinstance(response, dict) or "error" not in response:
        return 200
    code = response["error"].get("code")
    if code == -32700 or (code == -32600 and response.get("id") is None):
        return 400
    if stateless_era and code in (-32020, -32021, -32022):
        return 400
    return 404 if stateless_era and code == -32601 else 200
