"""One request and its response on a :class:`~mcpkit.transports.http._h1.LeanHTTP`
connection, as the ASGI app sees them: uvicorn's ``RequestResponseCycle`` semantics (the body
as it comes, ``http.disconnect`` once the client is gone or the answer is complete, a 500 for an
app that fails before answering), with a plain response framed here and any other handed to
uvicorn's own cycle."""

from __future__ import annotations

import asyncio
import http
import logging
from typing import Any, Protocol

from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

__all__ = ["FIELD", "TOKEN", "Cycle", "is_length"]

logger = logging.getLogger("uvicorn.error")  # (uvicorn's, as its protocols log)

TOKEN = b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""The bytes of a header name (RFC 9110 ``tchar``)."""
FIELD = b"\t " + bytes(range(0x21, 0x7F))
"""The bytes of a header value taken as plain: printable ASCII, spaces and tabs."""
_FRAMING = {
    b"content-length",
    b"transfer-encoding",
    b"connection",
    b"host",
}  # (h11 writes a host first)
_PHRASES = {code.value: code.phrase.encode() for code in http.HTTPStatus}  # (as uvicorn's)
_CHUNKED = -1  # Cycle.remaining of a streamed body
_500 = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]


class Owner(Protocol):
    """What a cycle uses of its connection (:class:`~mcpkit.transports.http._h1.LeanHTTP`)."""

    loop: asyncio.AbstractEventLoop
    transport: Any
    flow: Any  # uvicorn's FlowControl
    server_state: Any
    access_log: bool

    def answered(self) -> None:
        """The answer is complete and the connection kept: read on."""


class Cycle:
    """One request on ``owner``'s connection and the answer to it."""

    __slots__ = (
        "body",
        "disconnected",
        "head",
        "keep_alive",
        "more_body",
        "owner",
        "ready",
        "remaining",
        "response_complete",
        "response_started",
        "scope",
        "slow",
        "waiters",
    )

    def __init__(
        self, owner: Owner, scope: dict[str, Any], body: bytes, *, more_body: bool
    ) -> None:
        self.owner = owner
        self.scope = scope
        self.body = body  # received and not yet given to the app
        self.more_body = more_body
        self.ready = bool(body) or not more_body  # receive() returns at once
        self.waiters: list[asyncio.Future[None]] | None = None  # receive() calls waiting
        self.disconnected = False
        self.keep_alive = True
        self.response_started = False
        self.response_complete = False
        self.head = b""  # the response's head, written with its first body bytes
        self.remaining = 0  # body bytes its Content-Length still asks for (_CHUNKED: none)
        self.slow: Any = None  # uvicorn's cycle, for a response not plain enough

    # --------------------------------------------------------------- the connection's side

    def body_in(self, data: bytes, *, done: bool) -> None:
        """More of the request's body (``done``: the last of it)."""
        if self.response_complete:
            return  # answered already: the rest of the body is dropped, as h11 does
        self.body += data
        if done:
            self.more_body = False
        elif len(self.body) > HIGH_WATER_LIMIT:
            self.owner.flow.pause_reading()  # until the app reads it
        self.wake()

    def gone(self) -> None:
        """The client went away."""
        if not self.response_complete:
            self.disconnected = True
            if self.slow is not None:
                self.slow.disconnected = True
        self.wake()

    def close_after(self) -> None:
        """Close the connection once the answer is complete (uvicorn's graceful shutdown)."""
        self.keep_alive = False
        if self.slow is not None:
            self.slow.keep_alive = False

    def wake(self) -> None:
        self.ready = True
        waiters, self.waiters = self.waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    # ---------------------------------------------------------------------- the app's side

    async def run(self, app: Any) -> None:
        """Run the ASGI app for this request (uvicorn's ``run_asgi``)."""
        try:
            result = await app(self.scope, self.receive, self.send)
        except BaseException as exc:
            logger.error("Exception in ASGI application\n", exc_info=exc)
            if not self.response_started:
                await self._error_500()
            else:
                self._close()
        else:
            if result is not None:
                logger.error("ASGI callable should return None, but returned '%s'.", result)
                self._close()
            elif not self.response_started and not self.disconnected:
                logger.error("ASGI callable returned without starting response.")
                await self._error_500()
            elif not self.response_complete and not self.disconnected:
                logger.error("ASGI callable returned without completing response.")
                self._close()

    async def receive(self) -> dict[str, Any]:
        if not self.ready and not self.disconnected and not self.response_complete:
            self.owner.flow.resume_reading()
            waiter: asyncio.Future[None] = self.owner.loop.create_future()
            if self.waiters is None:
                self.waiters = [waiter]
            else:
                self.waiters.append(waiter)
            try:
                await waiter
            finally:  # (cancelled: no longer waiting; another call may be)
                if self.waiters is not None and waiter in self.waiters:
                    self.waiters.remove(waiter)
        self.ready = False
        if self.disconnected or self.response_complete:
            return {"type": "http.disconnect"}
        body, self.body = self.body, b""
        return {"type": "http.request", "body": body, "more_body": self.more_body}

    async def send(self, message: dict[str, Any]) -> None:
        if self.slow is not None:
            await self._send_slow(message)
            return
        flow = self.owner.flow
        if flow.write_paused and not self.disconnected:
            await flow.drain()
        if self.disconnected:
            return
        if not self.response_started:
            await self._start(message)
        elif not self.response_complete:
            self._body(message)
        else:
            raise RuntimeError(
                f"Unexpected ASGI message '{message['type']}' sent, after response already "
                "completed."
            )

    async def _start(self, message: dict[str, Any]) -> None:
        if message["type"] != "http.response.start":
            raise RuntimeError(
                f"Expected ASGI message 'http.response.start', but got '{message['type']}'."
            )
        headers = message.get("headers", ())
        if type(headers) is not list and type(headers) is not tuple:  # (read once, for both)
            message = {**message, "headers": list(headers)}
            headers = message["headers"]
        defaults = self.owner.server_state.default_headers
        head = _plain_head(message["status"], defaults, headers)
        if head is None:  # not plain: uvicorn's own cycle answers it
            self.slow = _slow_cycle(self)
            await self._send_slow(message)
            return
        self.head, self.remaining = head
        self.response_started = True
        if self.owner.access_log:
            _log_access(self.scope, message["status"])
        if self.remaining == _CHUNKED:  # a stream: its head leaves at once (its body may wait)
            self.owner.transport.write(self.head)
            self.head = b""

    def _body(self, message: dict[str, Any]) -> None:
        if message["type"] != "http.response.body":
            raise RuntimeError(
                f"Expected ASGI message 'http.response.body', but got '{message['type']}'."
            )
        body = message.get("body", b"")
        transport = self.owner.transport
        more = message.get("more_body", False)
        if self.remaining == _CHUNKED:
            self._chunk(body, more)
            return
        if len(body) > self.remaining:  # (as h11 says; the connection cannot carry on)
            self._close()
            raise RuntimeError("Too much data for declared Content-Length")
        self.remaining -= len(body)
        if self.head:
            transport.write(self.head + body)  # one write for a whole small answer
            self.head = b""
        elif body:
            transport.write(body)
        if more:
            return
        self.response_complete = True
        self.wake()
        if self.remaining:  # (the client would read the next answer as this one's end)
            transport.close()
            raise RuntimeError("Too little data for declared Content-Length")
        self._complete()

    def _chunk(self, body: bytes, more: bool) -> None:
        """A piece of a streamed body, framed as h11 frames it (an empty one is no chunk)."""
        last = b"" if more else b"0\r\n\r\n"
        if body:
            self.owner.transport.write(b"%x\r\n%s\r\n%s" % (len(body), body, last))
        elif last:
            self.owner.transport.write(last)
        if not more:
            self.response_complete = True
            self.wake()
            self._complete()

    def _complete(self) -> None:
        if not self.keep_alive:
            self.owner.transport.close()
        self.owner.answered()

    async def _send_slow(self, message: dict[str, Any]) -> None:
        slow = self.slow
        try:
            await slow.send(message)
        except BaseException:
            if slow.conn.our_state is _h11_error():  # h11 gave up on the connection
                self.owner.transport.close()
            raise
        finally:  # (its flags are the response's, also when h11 refused a message)
            self.response_started = slow.response_started
            if slow.response_complete and not self.response_complete:
                self.response_complete = True
                self.wake()

    def _close(self) -> None:
        """Close the connection after a failed answer (a head held back goes out first)."""
        if self.head:
            self.owner.transport.write(self.head)
            self.head = b""
        self.owner.transport.close()

    async def _error_500(self) -> None:
        await self.send({"type": "http.response.start", "status": 500, "headers": _500})
        await self.send({"type": "http.response.body", "body": b"Internal Server Error"})


def _plain_head(status: Any, defaults: Any, headers: Any) -> tuple[bytes, int] | None:
    """The head of a response, as h11 writes it, and its ``Content-Length`` (``_CHUNKED``
    without one); None for one that h11 frames otherwise (a 204, ``Connection``...) or would
    refuse."""
    if type(status) is not int or not 200 <= status < 600 or status in (204, 304):
        return None
    lines = [b"HTTP/1.1 %d %s\r\n" % (status, _PHRASES.get(status, b""))]
    length = -1
    for pairs in (defaults, headers):
        for name, value in pairs:
            if type(name) is not bytes or type(value) is not bytes:
                return None
            if not name or name.translate(None, TOKEN) or value.translate(None, FIELD):
                return None
            if value[:1] in (b" ", b"\t") or value[-1:] in (b" ", b"\t"):
                return None
            lowered = name.lower()
            if lowered in _FRAMING:
                if lowered != b"content-length" or length >= 0 or not is_length(value):
                    return None
                length = int(value)
            lines.append(b"%s: %s\r\n" % (name, value))
    if length < 0:  # a body of unknown length: chunked (h11 names it so, after the rest)
        lines.append(b"Transfer-Encoding: chunked\r\n")
    lines.append(b"\r\n")
    return b"".join(lines), max(length, _CHUNKED)


def is_length(value: bytes) -> bool:
    """Whether ``value`` is a ``Content-Length`` h11 takes: digits, at most 20 of them."""
    return value.isdigit() and len(value) <= 20


def _log_access(scope: dict[str, Any], status: int) -> None:
    """uvicorn's access log line for a response."""
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d',
        get_client_addr(scope),  # type: ignore[arg-type]
        scope["method"],
        get_path_with_query_string(scope),  # type: ignore[arg-type]
        scope["http_version"],
        status,
    )


def _h11_error() -> Any:
    import h11  # (loaded with the first response through uvicorn's cycle)

    return h11.ERROR


def _slow_cycle(cycle: Cycle) -> Any:
    """uvicorn's response cycle for ``cycle``'s answer, over an h11 connection that has read a
    request of the same method (what h11's framing of an answer depends on)."""
    import h11
    from uvicorn.protocols.http.h11_impl import RequestResponseCycle

    owner = cycle.owner
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"%s / HTTP/1.1\r\nhost: h\r\n\r\n" % cycle.scope["method"].encode())
    while conn.their_state is not h11.DONE:
        conn.next_event()

    def done() -> None:
        cycle.response_started = cycle.response_complete = True  # (before reading on)
        cycle.wake()
        owner.answered()

    slow = RequestResponseCycle(
        scope=cycle.scope,  # type: ignore[arg-type]
        conn=conn,
        transport=owner.transport,
        flow=owner.flow,
        logger=logger,
        access_logger=logging.getLogger("uvicorn.access"),
        access_log=owner.access_log,
        default_headers=owner.server_state.default_headers,
        message_event=asyncio.Event(),
        on_response=done,
    )
    slow.keep_alive = cycle.keep_alive
    return slow
