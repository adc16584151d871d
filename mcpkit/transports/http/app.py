"""``HttpApp``: the Streamable HTTP endpoint as an ASGI application (routing, the lifespan,
and what each request method does; the protocol core decides every MCP rule)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

from mcpkit.app import App
from mcpkit.exceptions import InternalError, InvalidRequest
from mcpkit.protocol.incoming import Incoming, Refused
from mcpkit.protocol.jsonrpc import Limits
from mcpkit.protocol.server import Server, Session
from mcpkit.transports.http._disconnect import CLOSED, unless_closed
from mcpkit.transports.http._exchange import (
    SESSION_HEADER,
    SSE,
    ASGISend,
    ClientGone,
    Exchange,
    HttpError,
    Receive,
    Scope,
    normal_path,
    status_of,
)
from mcpkit.transports.http._guards import Guards, accepts
from mcpkit.transports.http._sessions import HttpSession, Sessions
from mcpkit.transports.http._sse import Responder, SseStream, json_answer, pump
from mcpkit.transports.http.auth import (
    BearerAuth,
    Verifier,
    authenticate,
    insufficient_scope,
    metadata_paths,
    serve_metadata,
)
from mcpkit.transports.warmup import WarmUp

__all__ = ["HttpApp"]

logger = logging.getLogger("mcpkit.http")

MiB = 1024 * 1024


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
    ``session_idle_seconds`` ends when the next one opens. ``owns_process``: this process does
    nothing else (``mcpkit run``): once warmed up, what is alive leaves the garbage collector's
    sight (``gc.freeze``, as ``serve_stdio`` does), so its full collections stop walking the
    modules and definitions (~13 ms each, every ~2,000 requests at 16 busy connections).
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
        owns_process: bool = False,
    ) -> None:
        self.app = app
        self.path = normal_path(path)
        self.stateless = stateless
        self.json_response = json_response
        self.guards = Guards(allowed_origins, allowed_hosts, json_response=json_response)
        self.max_body_bytes = max_body_bytes
        self.auth = auth if isinstance(auth, BearerAuth) or auth is None else BearerAuth(auth)
        self.metadata_paths = metadata_paths(self.path) if self.auth is not None else set()
        self.server = Server(app, limits=Limits(max_bytes=max_body_bytes))
        self.sessions = Sessions(max_sessions, session_idle_seconds)
        self._started = False
        self._starting = asyncio.Lock()
        # Compiled after the first answer, validators after the handshake (then frozen).
        self.warming = WarmUp(freeze=owns_process)

    async def __call__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._lifespan(receive, send)
            return
        http = Exchange(scope, receive, send)
        try:
            await self._route(http)
        except HttpError as error:
            await http.json(error.status, error.response(), error.headers)
        except Refused as refused:  # the core refused the message before running it
            await http.json(400, refused.response())
        except ClientGone:
            pass
        except Exception:
            logger.exception("internal error answering %s %s", http.method, http.path)
            if not http.started:
                await http.json(500, Refused(InternalError()).response())

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

    async def _route(self, http: Exchange) -> None:
        if http.path != self.path:
            await self._elsewhere(http)
            return
        self.guards.check_caller(http)
        if not self._started:
            await self.start()
        principal = None
        if self.auth is not None:
            principal = await authenticate(self.auth, http, self.path)
        with self.server.acting_for(principal, http.headers):
            if http.method == "POST":
                await self._post(http)
            elif http.method == "GET":
                await self._get(http)
            elif http.method == "DELETE":
                await self._delete(http)
            else:
                raise self._not_allowed(http.method)

    async def _elsewhere(self, http: Exchange) -> None:
        """A path other than the endpoint's: the auth metadata, else 404."""
        if http.path in self.metadata_paths:
            assert self.auth is not None
            scopes = {scope for item in self.app.definitions() for scope in item.access.scopes}
            await serve_metadata(self.auth, http, self.path, scopes)
        else:
            await http.respond(404, b"Not Found", content_type="text/plain")

    def _not_allowed(self, method: str) -> HttpError:
        allow = "POST" if self.stateless else "GET, POST, DELETE"
        error = InvalidRequest(f"Method Not Allowed: {method} (this endpoint allows {allow})")
        return HttpError(405, error, headers=[("allow", allow)])

    # ---------------------------------------------------------------------- POST

    async def _post(self, http: Exchange) -> None:
        self.guards.check_post(http)
        body = await http.read_body(self.max_body_bytes)
        incoming = self.server.admit(body, http.headers)
        if incoming.accepted:
            await http.respond(202)  # nothing for a notification to do over HTTP in this era
        elif incoming.stateless or self.stateless:  # a throwaway session: no state outlives it
            session = self.server.sessionless(incoming)
            try:
                await self._answer(http, session, incoming, stateless_era=incoming.stateless)
            finally:  # a batch's members still running if this request was cancelled
                waiting = session.end()
                if waiting is not None:
                    await waiting
        elif incoming.initialize:
            await self._initialize(http, incoming)
        else:
            await self._post_session(http, incoming)
        if not self.warming.done:
            self.warming.answered(asyncio.get_running_loop(), self.server.app, incoming.message)

    async def _post_session(self, http: Exchange, incoming: Incoming) -> None:
        live = self._live(http, incoming.request_id)
        incoming.check_batch(live.session.version)
        self.sessions.use(live)
        try:
            await self._answer(http, live.session, incoming, live=live)
        finally:
            self.sessions.release(live)

    async def _initialize(self, http: Exchange, incoming: Incoming) -> None:
        caller = None if self.auth is None else self.server.caller()
        live = HttpSession(self.server, caller, supports_requests=not self.json_response)
        response = await live.session.handle(incoming.message)
        headers = []
        if isinstance(response, dict) and "result" in response:
            if not await self.sessions.add(live):
                live.session.close()
                raise self.sessions.full(incoming.request_id)
            headers.append((SESSION_HEADER, live.id))
        else:
            live.session.close()
        await http.json(status_of(response, stateless_era=False), response, headers)

    def _live(self, http: Exchange, request_id: Any) -> HttpSession:
        """The session the request names; 404 if it ended or belongs to another caller."""
        owner = Sessions.ANYONE if self.auth is None else self.server.caller()
        return self.sessions.named(http.header(SESSION_HEADER), owner, request_id)

    async def _answer(
        self,
        http: Exchange,
        session: Session,
        incoming: Incoming,
        *,
        stateless_era: bool = False,
        live: HttpSession | None = None,
    ) -> None:
        if self.auth is not None:  # a call the caller may see but lacks scopes for: step up
            scopes = self.server.step_up(incoming, session)
            if scopes is not None:
                raise insufficient_scope(self.auth, http, self.path, scopes, incoming.request_id)
        out = None  # JSON mode outside a session: nothing streams, nor goes anywhere else
        if live is not None or not self.json_response:
            fallback = live.push if live is not None else None
            out = Responder(
                http, sse=not self.json_response, prime=session.primes, fallback=fallback
            )
        call = session.handle(incoming.message, send=None if out is None else out.notify)
        if live is None:  # no session to carry on: closing the stream cancels the call
            response = await unless_closed(http, call)
            if response is CLOSED:
                return  # the client closed the stream: the call was cancelled
        else:
            response = await asyncio.ensure_future(call)
        failed = response is not None and "error" in response  # (else 200: no call to ask)
        status = status_of(response, stateless_era=stateless_era) if failed else 200
        await (json_answer(http, response, status) if out is None else out.finish(response, status))

    # ------------------------------------------------------------------ GET/DELETE

    async def _get(self, http: Exchange) -> None:
        if self.stateless or http.header(SESSION_HEADER) is None:
            raise self._not_allowed("GET without a session")
        live = self._live(http, None)
        if not accepts(http.header("accept"), SSE):
            raise HttpError(406, InvalidRequest("Not Acceptable: the client must accept " + SSE))
        Incoming.version_header(http.headers)
        if live.stream is not None:
            raise HttpError(409, InvalidRequest("Conflict: this session's GET stream is open"))
        await self._stream(http, live)

    async def _stream(self, http: Exchange, live: HttpSession) -> None:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        live.stream = queue
        stream = SseStream(http)
        closed = asyncio.ensure_future(http.disconnected())
        self.sessions.use(live)
        try:
            await http.start_sse([])
            if live.session.primes:
                await stream.prime()
            await pump(http, stream, queue, closed)
        finally:
            closed.cancel()
            if live.stream is queue:
                live.stream = None
            self.sessions.release(live)
            await http.write(b"", more=False)

    async def _delete(self, http: Exchange) -> None:
        session_id = http.header(SESSION_HEADER)
        if self.stateless or session_id is None:
            raise self._not_allowed("DELETE without a session")
        live = self._live(http, None)
        self.sessions.pop(live.id)
        await live.close()
        await http.respond(204)
