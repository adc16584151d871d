"""One connection's state and bookkeeping: the handshake facts, the requests running on it
(and their cancellation), requests sent to the client and their answers, and the App's
change notifications. :class:`~mcpkit.protocol.server.Session` adds the request path."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._elicitation import require_mode
from mcpkit.exceptions import (
    ClientCapabilityError,
    ClientRequestError,
    ProtocolError,
    UrlElicitationRequired,
)
from mcpkit.middleware import Transport
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.incoming import CANCELLED
from mcpkit.protocol.jsonrpc import Notification, Response
from mcpkit.protocol.request import Send, encoding
from mcpkit.protocol.versions import sse_priming
from mcpkit.types import RequestId

__all__ = ["MAX_IN_FLIGHT", "Connection", "discard"]

_LISTS = frozenset({"tools", "prompts", "resources"})
MAX_IN_FLIGHT = 64
"""Requests a connection runs at once (each member of a batch counts) unless told otherwise."""
_MAX_AWAITED = 1024  # URL elicitations a connection remembers (the oldest is forgotten)


class Connection:
    """One connection's state: the handshake facts and the requests running on it."""

    def __init__(
        self, server: Any, send: Send, *, listen: bool = True, max_in_flight: int = MAX_IN_FLIGHT
    ) -> None:
        # (one __init__ for the Session too: a throwaway one is made per HTTP request)
        self.server = server  # the Server (its Session's request path reads it)
        self.transport: Transport = "stdio"
        self.session_id: str | None = None  # an HTTP session's Mcp-Session-Id
        self.send = _DISCARD if send is discard else encoding(send)
        self.max_in_flight = max_in_flight  # requests running at once, batch members included
        self.version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] | None = None
        self.log_level: str | None = None
        self.initialized = False
        self.supports_requests = True
        # uri -> whether its updates may still be told (access is asked again at each update)
        self.resource_subscriptions: dict[str, Callable[[], bool]] = {}
        self._running: dict[RequestId, asyncio.Task[Any]] = {}
        self._cancelled: set[RequestId] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._pending: dict[RequestId, asyncio.Future[Any]] = {}
        self._awaited: dict[str, None] = {}  # URL elicitation ids this client was sent
        self._closing = False  # cancel_all() was called: start nothing more
        self._loop = asyncio.get_running_loop()
        self._unsubscribe = server.app.subscribe(self._app_changed) if listen else _not_listening

    def _app_changed(self, kind: str, uri: str | None) -> None:
        """Tell this (initialized) client about changes; callable from any thread."""
        if self.version is None:
            return
        if kind == "resource":
            shown = self.resource_subscriptions.get(uri) if uri is not None else None
            if shown is None or not shown():  # a resource hidden since: not a word about it
                return
            message = jsonrpc.notification("notifications/resources/updated", {"uri": uri})
        elif kind == "elicitation":
            if uri is None or self._awaited.pop(uri, False) is False:
                return  # not this client's (or already completed): nothing to tell
            params = {"elicitationId": uri}
            message = jsonrpc.notification("notifications/elicitation/complete", params)
        elif kind in _LISTS:
            message = jsonrpc.notification(f"notifications/{kind}/list_changed")
        else:
            return  # e.g. "capabilities": nothing a client is told about
        with contextlib.suppress(RuntimeError):  # the loop is gone: so is the client
            self._loop.call_soon_threadsafe(lambda: self._spawn(self.send(message)))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def request(self, method: str, params: dict[str, Any], *, send: Send) -> Any:
        """Send a request to the client and wait for its answer (handshake era).

        Its id is 128 random bits: nobody who did not receive the request can answer it (over
        HTTP only the session's own caller can post to the session at all).
        """
        import secrets  # not at import: hmac and hashlib come with it (start-up)

        request_id = secrets.token_urlsafe(16)
        if method == "elicitation/create" and params.get("mode") == "url":
            self.await_completion(params["elicitationId"])
        future: asyncio.Future[Any] = self._loop.create_future()
        self._pending[request_id] = future
        try:
            await send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(request_id, None)

    def await_completion(self, elicitation_id: str) -> None:
        """Remember that this client was sent URL elicitation ``elicitation_id``, so that
        ``App.complete_elicitation`` tells it (and only it) when the flow finishes."""
        self._awaited[elicitation_id] = None
        if len(self._awaited) > _MAX_AWAITED:
            with contextlib.suppress(RuntimeError, StopIteration):  # completed meanwhile
                self._awaited.pop(next(iter(self._awaited)), None)

    def url_elicitation(self, exc: UrlElicitationRequired) -> ProtocolError:
        """What a handler's ``UrlElicitationRequired`` answers on this session: ``-32042``
        (its id remembered for ``App.complete_elicitation``), or ``-32021`` when the client did
        not declare ``elicitation.url`` at 2025-11-25."""
        try:
            require_mode(self.client_capabilities, self.version or "", "url")
        except ClientCapabilityError as missing:
            return missing
        self.await_completion(exc.elicitation_id)
        return exc

    def _answered(self, response: Response) -> None:
        future = self._pending.get(response.id)
        if future is None or future.done():
            return  # unknown or already settled: ignore
        if response.error is not None:
            error = response.error if isinstance(response.error, dict) else {}
            future.set_exception(ClientRequestError(error))
        else:
            future.set_result(response.result)

    @property
    def primes(self) -> bool:
        """Whether this session's SSE streams start with a priming event."""
        return self.version is not None and sse_priming(self.version)

    def close(self) -> None:
        """Stop listening to the App (the connection is gone; once is enough). The unsubscribe
        function holds this connection's listener: dropped, so no cycle outlives the session."""
        unsubscribe, self._unsubscribe = self._unsubscribe, _not_listening
        unsubscribe()

    def notified(self, note: Notification) -> None:
        """The client's notification takes effect: ``initialized``, or a request cancelled."""
        params = note.params if isinstance(note.params, dict) else {}
        if note.method == "notifications/initialized":
            self.initialized = True
        elif note.method == CANCELLED:
            self.cancel(params.get("requestId"))

    def cancel(self, request_id: Any) -> None:
        """Cancel a running request; unknown ids, finished requests and values that are no id
        (``true`` is not request 1, nor ``7.0`` request 7) are ignored."""
        request_id = jsonrpc.as_id(request_id)
        task = self._running.get(request_id) if request_id is not None else None
        if task is not None and not task.done():
            self._cancelled.add(request_id)
            task.cancel()

    def end(self) -> Awaitable[Any] | None:
        """Start nothing more (a batch starts no further member), stop listening to the App and
        cancel every running request; what to await for them, or ``None`` when none ran."""
        if self._unsubscribe is not _not_listening:
            self.close()
        self._closing = True
        tasks = list(self._running.values())
        for request_id, task in list(self._running.items()):
            self._cancelled.add(request_id)
            task.cancel()
        return asyncio.gather(*tasks, return_exceptions=True) if tasks else None

    async def cancel_all(self) -> None:
        """Cancel every running request (the connection is closing) and wait for them."""
        waiting = self.end()
        if waiting is not None:
            await waiting


async def discard(message: dict[str, Any]) -> None:
    """The ``send`` of a throwaway session (its transport carries its messages per request)."""


def _not_listening() -> None:
    """The ``close`` of a session that never listened to the App."""


_DISCARD = encoding(discard)  # (wrapped once: a throwaway session is made per HTTP request)
