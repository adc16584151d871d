"""A read deadline for uvicorn's HTTP connections (slow clients), around uvicorn's own protocol
where :func:`~mcpkit.transports.http._h1.http_protocol` hands a connection to it."""

from __future__ import annotations

import asyncio

from mcpkit.transports.http._writes import HeldWrites

__all__ = ["ReadDeadline"]


class ReadDeadline(asyncio.Protocol):
    """An HTTP connection (uvicorn's protocol) with a deadline on reading each request.

    uvicorn closes a connection left idle after a response (``timeout_keep_alive``), but not
    one that never completes a request: no timer runs before the first request, and any byte
    stops the keep-alive one, so a client that sends half a request holds its connection for
    ever (slowloris). Here the connection closes when a request's headers are not all in
    ``timeout`` seconds after the connection opened (or after the request's first byte), or
    when its body pauses longer than that. Once a request is in, its answer may take as long
    as it needs: a long call or a GET stream is not cut.
    """

    def __init__(self, inner: asyncio.Protocol, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.transport: asyncio.BaseTransport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        held = HeldWrites(transport, self.inner)  # type: ignore[arg-type]
        self.inner.connection_made(held)  # type: ignore[arg-type]
        self._arm()

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)
        cycle = getattr(self.inner, "cycle", None)  # (_waiting_for, inline: every request's)
        if cycle is not None and not cycle.response_complete and not cycle.more_body:
            if self.timer is not None:  # a request is in: no deadline while it is answered
                self._disarm()
            return
        waiting = self._waiting_for()
        if waiting == "body" or (waiting == "headers" and self.timer is None):
            self._arm()  # a body's every piece restarts the clock; headers' first byte starts it

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def _waiting_for(self) -> str | None:
        """``"headers"`` (of a new request), ``"body"``, or ``None`` once a request is in."""
        cycle = getattr(self.inner, "cycle", None)  # the request uvicorn is serving, if any
        if cycle is None or cycle.response_complete:
            return "headers"
        return "body" if cycle.more_body else None

    def _arm(self) -> None:
        self._disarm()
        self.timer = asyncio.get_running_loop().call_later(self.timeout, self._expired)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expired(self) -> None:
        self.timer = None
        if self.transport is not None and self._waiting_for() is not None:
            self.transport.close()
