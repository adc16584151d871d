"""Handshake-era sessions over HTTP: each session's GET stream and owner, and the endpoint's
table of them (at most ``max_sessions``; idle ones expire, least recently used first)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.exceptions import InternalError, InvalidRequest
from mcpkit.protocol.server import Server, Session
from mcpkit.transports.http._exchange import HttpError
from mcpkit.types import RequestId

__all__ = ["HttpSession", "Sessions"]

logger = logging.getLogger("mcpkit.http")


class HttpSession:
    """A handshake-era session: the protocol ``Session``, its GET stream if open, the caller
    it belongs to (the caller key of the principal that opened it), and how many requests
    and streams are using it."""

    def __init__(self, server: Server, owner: str | None, *, supports_requests: bool) -> None:
        self.session: Session = server.session(
            _pushing_to(self), transport="http", supports_requests=supports_requests
        )
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


def _pushing_to(live: HttpSession) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """The protocol session's ``send``: ``live.push``, held weakly. (Held strongly, the two
    sessions would be a reference cycle, which only the collector frees: never, once a process
    that only serves has frozen its heap with the session in it.)"""
    push = weakref.WeakMethod(live.push)

    async def send(message: dict[str, Any]) -> None:
        method = push()
        if method is not None:  # (else the session is gone, and so is its client)
            await method(message)

    return send


class Sessions:
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
        self.live: dict[str, HttpSession] = {}
        self.idle: OrderedDict[str, HttpSession] = OrderedDict()

    ANYONE = object()
    """The owner to pass to :meth:`named` when sessions are not bound to callers (no auth)."""

    def named(
        self, session_id: str | None, owner: object, request_id: RequestId | None
    ) -> HttpSession:
        """The session ``session_id`` names: 400 without one, 404 if it ended or belongs to
        another caller than ``owner``."""
        if session_id is None:
            error = InvalidRequest("Bad Request: the Mcp-Session-Id header is required")
            raise HttpError(400, error, request_id)
        live = self.live.get(session_id)
        if live is None or (owner is not Sessions.ANYONE and live.owner != owner):
            error = InvalidRequest("Session not found: it ended; send initialize to start anew")
            raise HttpError(404, error, request_id)
        return live

    def full(self, request_id: RequestId | None) -> HttpError:
        """The 503 refusing a new session while every session is busy."""
        error = InternalError(
            f"Service Unavailable: all {self.limit} sessions are in use "
            f"(max_sessions={self.limit}); try again later"
        )
        return HttpError(503, error, request_id)

    def use(self, live: HttpSession) -> None:
        """A request or the GET stream starts using ``live``."""
        live.busy += 1
        self.idle.pop(live.id, None)

    def release(self, live: HttpSession) -> None:
        """A request or the GET stream is done with ``live``."""
        live.busy -= 1
        if live.busy == 0 and live.id in self.live:
            live.touched = time.monotonic()
            self.idle[live.id] = live

    async def add(self, live: HttpSession) -> bool:
        """Register ``live`` under a new random id, ending idle sessions to make room; ``False``
        when every session is busy."""
        await self._expire()
        if len(self.live) >= self.limit:
            if not self.idle:
                return False
            await self.pop(next(iter(self.idle))).close()
        live.id = live.session.session_id = secrets.token_urlsafe(32)
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

    def pop(self, session_id: str) -> HttpSession:
        self.idle.pop(session_id, None)
        return self.live.pop(session_id)

    def drain(self) -> list[HttpSession]:
        """Forget every session; returns them to close."""
        sessions = list(self.live.values())
        self.live.clear()
        self.idle.clear()
        return sessions
