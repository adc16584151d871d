"""Server-sent events: a POST's answer that turns into a stream, and a session's GET stream."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.protocol.jsonrpc import encode
from mcpkit.transports.http._exchange import JSON, Exchange

__all__ = ["Responder", "SseStream", "json_answer", "pump"]

_KEEPALIVE_SECONDS = 15.0


def _sse_event(message: Any, event_id: str | None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    data = b"" if message is None else encode(message)
    return head.encode() + b"event: message\ndata: " + data + b"\n\n"


class SseStream:
    """Numbered SSE events for one stream; ids are unique within the process."""

    def __init__(self, http: Exchange) -> None:
        self.http = http
        self.token = secrets.token_hex(8)
        self.count = 0

    async def event(self, message: Any) -> None:
        self.count += 1
        await self.http.write(_sse_event(message, f"{self.token}-{self.count}"))

    async def prime(self) -> None:
        await self.event(None)


class Responder:
    """One POST's answer: JSON, or an SSE stream once the request emits a message first.

    ``notify`` is the request's ``send``: any message (notification now, a server request
    later) rides the request's own stream. In JSON mode it goes to ``fallback`` (the session's
    GET stream) instead. (A POST outside a session in JSON mode has no stream and nowhere else
    for its messages: it is answered with :func:`json_answer`, no ``Responder``.)
    """

    def __init__(
        self,
        http: Exchange,
        *,
        sse: bool,
        prime: bool,
        fallback: Callable[[dict[str, Any]], Awaitable[None]] | None,
    ) -> None:
        self.http = http
        self.sse = sse
        self.prime = prime
        self.fallback = fallback
        self.stream: SseStream | None = None
        self.lock = asyncio.Lock()

    async def notify(self, message: dict[str, Any]) -> None:
        if not self.sse:
            if self.fallback is not None:
                await self.fallback(message)
            return
        async with self.lock:
            stream = await self._open()
            await stream.event(message)

    async def _open(self) -> SseStream:
        if self.stream is None:
            self.stream = SseStream(self.http)
            await self.http.start_sse([])
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
        else:
            await json_answer(self.http, response, status)


def json_answer(http: Exchange, response: Any, status: int) -> Awaitable[None]:
    """A POST's answer as JSON: ``response`` with ``status``, or 202 when there is none (the
    request was a notification, or every member of a batch was). Awaitable, not a coroutine
    of its own: the answer's write is one layer from its caller."""
    if response is None:
        return http.respond(202)
    return http.respond(status, encode(response), (), JSON)


async def pump(
    http: Exchange,
    stream: SseStream,
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
