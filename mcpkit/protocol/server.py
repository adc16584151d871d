"""The I/O-free MCP server: decoded messages in, responses out, for both protocol eras.

``Server(app)`` is shared by a process; ``server.session(send)`` opens one connection's state
(a stdio process or an HTTP session). ``await session.handle(obj)`` answers one decoded JSON
value (a message or a 2025-03-26 batch) and returns the response, or ``None`` when there is
nothing to answer; notifications the handler emits meanwhile go through ``send``.

Transports decide no protocol rule: HTTP hands a body and its headers to :meth:`Server.admit`
(era, parse, ``_meta``, mirrored headers, version header: ``Incoming`` or ``Refused``); stdio
hands each line to :meth:`Session.take` (run it with N slots, answer it now, or drop the
request a cancellation names).

Era rule: a request is stateless-era (2026-07-28) when ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` or its method is ``server/discover`` /
``subscriptions/listen``; otherwise it belongs to the handshake session that ``initialize`` opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any

from mcpkit._compose import enter_lifespans
from mcpkit._frozen import replace
from mcpkit._workers import Workers
from mcpkit.app import App
from mcpkit.exceptions import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ProtocolError,
    ResourceNotFound,
    UrlElicitationRequired,
)
from mcpkit.middleware import Transport
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.access import step_up
from mcpkit.protocol.answers import at_once, encoded_answer, internal
from mcpkit.protocol.connection import MAX_IN_FLIGHT, Connection, discard
from mcpkit.protocol.envelope import stateless_result
from mcpkit.protocol.fleet import fleet_for, join, not_joined, tasks_for
from mcpkit.protocol.headers import Headers
from mcpkit.protocol.incoming import Incoming, Taken, admit, cancel_target, no_batches
from mcpkit.protocol.jsonrpc import Limits, Notification, Request, Response
from mcpkit.protocol.methods import (
    HANDLERS,
    MethodSpec,
    Runtime,
    cancelled_for_real,
    capabilities,
    protocol_error_in,
    read_uri,
)
from mcpkit.protocol.request import (
    ActingFor,
    RequestContext,
    Send,
    caller_key,
    current_caller,
    encoding,
    handshake_context,
    stateless_context,
)
from mcpkit.protocol.request_state import StateSigner, state_key
from mcpkit.protocol.telemetry import answered, telemetry_for
from mcpkit.protocol.versions import (
    HTTP_DEFAULT_VERSION,
    META_CAPABILITIES,
    META_VERSION,
    has_batches,
    is_stateless,
    negotiate,
)

__all__ = ["MAX_IN_FLIGHT", "Server", "Session"]

logger = logging.getLogger("mcpkit.server")

_request_send: contextvars.ContextVar[Send | None] = contextvars.ContextVar(
    "mcpkit_request_send", default=None
)

_NO_SESSION = (
    "Invalid params: no session; send 'initialize' first, or carry _meta "
    f"{META_VERSION!r} and {META_CAPABILITIES!r} on every request"
)


class Server:
    """Serves one :class:`~mcpkit.App`; shared by every session of the process."""

    def __init__(self, app: App, *, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.workers = Workers()
        self.streams: set[asyncio.Queue[Any]] = set()  # open subscriptions/listen streams
        signer = StateSigner(state_key(app.options.state_key))
        self.fleet = fleet_for(app.options.store)  # None: tasks and changes stay in this process
        self.tasks = functools.cache(partial(tasks_for, self.fleet, app.options))  # on first use
        self._leave_fleet: Callable[[], Awaitable[None]] = not_joined  # start() joins the fleet
        self.telemetry = telemetry_for(app.options.tracer_provider)  # None: MCPKIT_OTEL=off
        self._serve(Runtime(app, self.workers, signer, self.streams, self.capabilities, self.tasks))
        self.state: Any = None
        self._capabilities: dict[bool, dict[str, Any]] = {}
        self._generation = 0  # bumped by every change that may alter the capabilities
        self._lifespan: contextlib.AsyncExitStack | None = None
        self._unsubscribe = app.subscribe(self._app_changed)

    def _serve(self, runtime: Runtime) -> None:  # the App served, and what is bound to it
        self.app, self.runtime, self.read_uri = runtime.app, runtime, partial(read_uri, runtime)
        self.step_up = partial(step_up, runtime.app)  # (incoming, session) -> scopes to challenge
        # admit(data, headers): incoming.admit() for this App (raises Refused); a partial, not
        # a method (one frame less a request); with telemetry, refusals get their spans.
        admitting = admit if self.telemetry is None else self.telemetry.admit
        self.admit: Callable[[bytes, Headers], Incoming]
        self.admit = partial(admitting, app=runtime.app, limits=self.limits)

    def replace_app(self, app: App) -> None:
        """Serve ``app`` from now on (a reload); running requests finish with the old App."""
        self.app.hand_over(app)  # whoever listened to the old App hears this one
        self._serve(replace(self.runtime, app=app))

    def capabilities(self, stateless: bool = False) -> dict[str, Any]:
        """An era's ``ServerCapabilities`` (computed once, again after the app's lists change)."""
        if (cached := self._capabilities.get(stateless)) is not None:
            return cached
        generation = self._generation
        computed = capabilities(self.app, stateless=stateless)
        if generation == self._generation:  # no change (from another thread) meanwhile
            self._capabilities[stateless] = computed
        return computed

    def _app_changed(self, kind: str, uri: str | None) -> None:
        if kind not in ("resource", "elicitation"):  # neither changes the capabilities
            self._generation += 1
            self._capabilities = {}

    async def start(self) -> None:
        """Enter the App's lifespan (once; later calls do nothing)."""
        if self._lifespan is None:
            self._leave_fleet = await join(self.fleet, self.app)
            self._lifespan = contextlib.AsyncExitStack()
            self.state = await enter_lifespans(self.app, self._lifespan)

    async def end_streams(self) -> None:
        """Answer every open ``subscriptions/listen`` request (a graceful shutdown)."""
        for outbox in list(self.streams):
            outbox.put_nowait(None)
        # Each handler leaves ``streams`` as it returns, and its answer is written in that same
        # step: once the set is empty every answer is out (bounded, in case one is stuck).
        deadline = asyncio.get_running_loop().time() + 1.0
        while self.streams and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0)

    async def stop(self) -> None:
        """Cancel the running tasks, leave the lifespan and stop listening to the App."""
        self._unsubscribe()
        if self.tasks.cache_info().currsize:  # made: some client used tasks
            await self.tasks().close()
        leave, self._leave_fleet = self._leave_fleet, not_joined
        await leave()
        stack, self._lifespan = self._lifespan, None
        if stack is not None:
            await stack.aclose()

    def session(
        self,
        send: Send,
        *,
        transport: Transport,
        listen: bool = True,
        max_in_flight: int = MAX_IN_FLIGHT,
        supports_requests: bool = True,
    ) -> Session:
        """Open a connection's state; ``send`` writes one message to that client, over
        ``transport`` (what handlers read as ``ctx.transport``).

        ``listen=False`` is for a session that answers one request and ends (stateless HTTP):
        it is not told about the App's changes, which it could not pass on anyway.
        ``supports_requests=False``: the connection cannot carry requests to the client.
        """
        session = Session(self, send, listen=listen, max_in_flight=max_in_flight)
        session.transport = transport
        session.supports_requests = supports_requests
        return session

    def sessionless(self, incoming: Incoming) -> Session:
        """A throwaway session that answers one admitted message and ends: stateless era, or
        a handshake-era request outside any session, at the version its header names
        (:data:`~mcpkit.protocol.versions.HTTP_DEFAULT_VERSION` without one). A batch that
        version does not take is refused here (``Refused``)."""
        session = Session(self, discard, listen=False)  # (session(), inline: once per request)
        session.transport, session.supports_requests = "http", False
        if not incoming.stateless and not incoming.initialize:
            session.version = incoming.version or HTTP_DEFAULT_VERSION
        if isinstance(incoming.message, list):  # (check_batch()'s question, asked first)
            incoming.check_batch(session.version)
        return session

    acting_for = ActingFor
    """``acting_for(principal, headers=None)``: serve a ``with`` block on behalf of ``principal``,
    who sent ``headers`` (``ctx.principal``, ``ctx.headers``; :meth:`caller` names it)."""

    @staticmethod
    def caller() -> str | None:
        """The caller key of the principal being served (``None`` without one)."""
        return caller_key(current_caller.get().principal)


class Session(Connection):
    """One connection: answers its messages (the request path; its state and bookkeeping are
    :class:`~mcpkit.protocol.connection.Connection`'s)."""

    server: Server  # (Connection's __init__ sets it: one frame a session)

    # ------------------------------------------------------------------------- entry

    async def receive(self, data: bytes | str, *, send: Send | None = None) -> Any:
        """Decode raw bytes and answer them (``-32700``/``-32600`` for bad input)."""
        try:
            obj = jsonrpc.decode(data, self.server.limits)
        except ProtocolError as exc:
            return jsonrpc.error_response(None, exc)
        return await self.handle(obj, send=send)

    def handle(
        self, obj: Any, *, send: Send | None = None, width: int | None = None
    ) -> Coroutine[Any, Any, Any]:
        """Answer one decoded JSON value (a message, or a batch where the version has them), or
        a request :func:`~mcpkit.protocol.incoming.admit` already parsed (not parsed again):
        the coroutine to await (a plain function: a call resumes through one layer less).

        ``send`` overrides the session's writer for the notifications this message's requests
        emit (HTTP answers each POST on its own stream). ``width`` runs a batch's members at most
        that many at once (default: as many as :meth:`slots` says).
        """
        if send is not None or _request_send.get() is not None:  # else nothing to override
            return self._handle_sending(obj, None if send is None else encoding(send), width)
        if not isinstance(obj, list):  # (_answer(), inline: once per request)
            return answered(self.server.telemetry, self._one, self, obj, in_batch=False)
        return self._batch(obj, width)

    async def _handle_sending(self, obj: Any, sending: Send | None, width: int | None) -> Any:
        token = _request_send.set(sending)
        try:
            return await self._answer(obj, width)
        finally:
            _request_send.reset(token)

    def _answer(self, obj: Any, width: int | None) -> Coroutine[Any, Any, Any]:
        if isinstance(obj, list):
            return self._batch(obj, width)
        return answered(self.server.telemetry, self._one, self, obj, in_batch=False)

    def take(self, line: bytes | str) -> Taken:
        """What a transport reading a stream does with one line, decided here: a request (or
        a batch) waits for ``taken.slots`` of ``max_in_flight`` and then goes to :meth:`handle`;
        anything else takes effect now. ``taken.reply`` is written at once (an error);
        ``taken.cancels`` names a request the line cancels (dropped if not started yet)."""
        try:
            obj = jsonrpc.decode(line, self.server.limits)
            slots = self.slots(obj)
            if slots:
                return Taken(obj, slots)
            cancels = cancel_target(obj)
            return Taken(None, 0, reply=self.settle(obj), cancels=cancels)
        except ProtocolError as exc:
            return Taken(None, 0, reply=jsonrpc.error_response(None, exc))
        except Exception:  # a bug: logged, and the client hears of it; the next line is read
            logger.exception("a message could not be taken")
            return Taken(None, 0, reply=jsonrpc.error_response(None, InternalError()))

    def too_large(self) -> dict[str, Any]:
        """The answer to a message over the size limit (a transport skips the rest of it)."""
        limit = self.server.limits.max_bytes
        error = InvalidRequest(f"Invalid Request: message larger than {limit} bytes")
        return jsonrpc.error_response(None, error)

    def slots(self, obj: Any) -> int:
        """How many of ``max_in_flight`` slots answering ``obj`` takes: a request one, a batch
        one per member it runs at once (:meth:`handle` runs no more), anything else none (a
        transport reading a stream hands that to :meth:`settle` as it reads it)."""
        if isinstance(obj, dict):
            return 1 if "method" in obj and "id" in obj else 0
        return max(1, min(len(obj), self.max_in_flight)) if isinstance(obj, list) else 0

    def settle(self, obj: Any) -> dict[str, Any] | None:
        """Take what needs no slot now: a notification or answer takes effect; the rest -32600."""
        taken = self._take(obj)
        if isinstance(taken, Request):
            raise ValueError(f"{taken.method!r} is a request: it takes a slot, and handle()")
        return taken

    async def _batch(self, items: list[Any], width: int | None = None) -> Any:
        if not has_batches(self.version):
            return jsonrpc.error_response(None, no_batches())
        error = jsonrpc.batch_error(items, self.server.limits)
        if error is not None:
            return jsonrpc.error_response(None, error)
        one = functools.partial(answered, self.server.telemetry, self._member, self, in_batch=True)
        width = width or self.slots(items)
        answers = await jsonrpc.answer_batch(items, one, width, lambda: self._closing)
        responses = [answer for answer in answers if answer is not None]
        return None if self._closing else responses or None  # closing: no answers at all

    async def _member(self, obj: Any, *, in_batch: bool) -> dict[str, Any] | None:
        # A batch member is taken in its own task, in order (a cancellation names a running
        # request); _one() takes a message when called, which is before the task runs.
        return await self._one(obj, in_batch=in_batch)

    def _take(self, obj: Any) -> Request | dict[str, Any] | None:
        """Parse one message. A request comes back, to be run; a notification or the client's
        answer takes effect now (``None``); what is no message comes back as its -32600."""
        try:
            message = jsonrpc.parse(obj)
        except InvalidRequest as exc:
            return jsonrpc.error_response(jsonrpc.readable_id(obj), exc)
        if isinstance(message, Notification):
            self.notified(message)
        elif isinstance(message, Response):
            self._answered(message)
        else:
            return message
        return None

    def _one(self, obj: Any, *, in_batch: bool) -> Coroutine[Any, Any, dict[str, Any] | None]:
        message = obj if type(obj) is Request else self._take(obj)  # admitted: parsed once
        if isinstance(message, Request) and not (in_batch and message.method == "initialize"):
            return self._request(message)  # (a plain function: no coroutine around it)
        return at_once(message)

    # -------------------------------------------------------------------- requests

    async def _request(self, request: Request) -> dict[str, Any] | None:
        task = asyncio.current_task()
        if task is not None:
            self._running[request.id] = task
        try:
            params = request.params if request.params is not None else {}
            if not isinstance(params, dict):
                raise InvalidParams("Invalid params: MCP params must be an object")
            if is_stateless(request.method, params):
                result = await self._stateless(request, params)
            else:
                result = await self._handshake(request, params)
            if request.id in self._cancelled:
                return None  # the handler swallowed its cancellation: still no answer
            response = jsonrpc.result_response(request.id, result)
        except ProtocolError as exc:
            if isinstance(exc, UrlElicitationRequired):
                exc = self.url_elicitation(exc)
            response = jsonrpc.error_response(request.id, exc)
        except BaseException as exc:  # whatever a handler raises, its request is answered once
            if request.id in self._cancelled:
                return None  # cancelled by the client: no response at all
            if cancelled_for_real(exc):
                raise
            error = protocol_error_in(exc) or internal(request.method, exc)
            response = jsonrpc.error_response(request.id, error)
        finally:
            self._running.pop(request.id, None)
            self._cancelled.discard(request.id)
        return encoded_answer(self.server.runtime, request, response)

    async def _stateless(self, request: Request, params: dict[str, Any]) -> dict[str, Any]:
        ctx = stateless_context(
            request.id,
            params.get("_meta"),
            send=_request_send.get() or self.send,
            state=self.server.state,
            settings_spec=self.server.app.settings_spec,
            reader=self.server.read_uri,
            transport=self.transport,
        )
        method = HANDLERS.get(request.method)
        if method is None or not method.stateless or not self._offers(method):
            raise MethodNotFound(f"Method not found: {request.method}")
        try:
            result = await self._run(request.method, method, ctx, params)
        except ResourceNotFound as exc:  # retired in 2026-07-28: -32602 with the same data
            raise InvalidParams(exc.message, exc.data) from None
        except UrlElicitationRequired as exc:  # so is -32042 (from a middleware, say)
            from mcpkit.protocol.methods.input_required import url_input_required

            result = url_input_required(ctx, exc)
        return stateless_result(result, request.method, method, self.server.app, ctx)

    # _handshake and _run are plain functions returning the handler's coroutine (raising what
    # they refuse at once): awaited in _request, a call resumes through two layers less.

    def _handshake(self, request: Request, params: dict[str, Any]) -> Awaitable[dict[str, Any]]:
        if request.method == "initialize":
            method: MethodSpec | None = MethodSpec(self._initialize)
        else:
            try:  # (HANDLERS.get without its frame: a loaded method is a dict lookup)
                method = HANDLERS[request.method]
            except KeyError:  # (no such method)
                method = None
            if self.version is None and request.method != "ping":
                raise InvalidParams(_NO_SESSION)
        if method is None or not method.handshake or not self._offers(method):
            raise MethodNotFound(f"Method not found: {request.method}")
        send = _request_send.get() or self.send
        ctx = handshake_context(self, request.id, params, send=send, reader=self.server.read_uri)
        return self._run(request.method, method, ctx, params)

    def _run(
        self, name: str, method: MethodSpec, ctx: RequestContext, params: dict[str, Any]
    ) -> Awaitable[dict[str, Any]]:
        """The method's handler, inside the App's middleware when it has any."""
        middleware = self.server.app.middleware_chain
        if not middleware:
            return method.handler(self.server.runtime, ctx, params)
        from mcpkit.protocol.pipeline import through_middleware  # loaded by the first use

        return through_middleware(middleware, name, method, self.server.runtime, ctx, params)

    def _offers(self, method: MethodSpec) -> bool:
        return method.capability is None or method.capability in self.server.capabilities()

    async def _initialize(
        self, runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
    ) -> dict[str, Any]:
        if self.version is not None:
            raise InvalidRequest("Invalid Request: the session is already initialized")
        self.version = negotiate(params.get("protocolVersion"))
        caps = params.get("capabilities")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else None
        app = self.server.app
        result: dict[str, Any] = {
            "protocolVersion": self.version,
            "capabilities": self.server.capabilities(),
            "serverInfo": app.server_info,
        }
        if app.instructions:
            result["instructions"] = app.instructions
        return result
