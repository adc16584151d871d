"""``DevServer``: the ASGI application ``mcpkit dev`` serves (the page, ``/mcp``, reloads).

Routes:

- ``GET /``: the page; ``GET /static/NAME``: its CSS and JavaScript (shipped in the package);
- ``/mcp``: the App's Streamable HTTP endpoint, a real :class:`HttpApp` (both eras, sessions,
  SSE), replaced by a new one when the App reloads;
- ``POST /_dev/docs``: what the page received over ``/mcp`` -> the generated docs as HTML
  fragments (:mod:`mcpkit.dev.docs`);
- ``GET /_dev/events``: an event stream of ``{"type": "loaded", "server", "generation",
  "summary"}`` (sent first, and after each reload; ``server`` is new in each process, so a page
  that outlived a restart of ``mcpkit dev`` reconnects too) and ``{"type": "failed",
  "generation", "error": {"file", "line", "message"}}`` when an edit does not load (the last
  good App serves on).

Every route checks ``Host`` (DNS rebinding) and ``Origin`` as the MCP endpoint does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from mcpkit.app import App
from mcpkit.cli.reloading import LoadFailure, changes, load_fresh
from mcpkit.dev.docs import fragments
from mcpkit.exceptions import InvalidRequest
from mcpkit.transports.http import HttpApp
from mcpkit.transports.http._exchange import ASGISend, Exchange, HttpError, Receive, Scope
from mcpkit.transports.http._guards import Guards
from mcpkit.transports.http._sse import SseStream, pump

__all__ = ["MCP_PATH", "DevServer", "Loader", "Watcher"]

logger = logging.getLogger("mcpkit.dev")

MCP_PATH = "/mcp"
STATIC = Path(__file__).parent / "static"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
}
_NO_STORE = [("cache-control", "no-store")]
_MAX_DOCS_BODY = 16 * 1024 * 1024

Loader = Callable[[str], App]
"""Loads a TARGET afresh (``mcpkit.cli.reloading.load_fresh``)."""
Watcher = Callable[[str], AsyncIterator[set[str]]]
"""Yields the changed files under a TARGET's folder (``mcpkit.cli.reloading.changes``)."""


class DevServer:
    """The page, the App's ``/mcp`` endpoint, and reload on save: ``watch`` says when files
    changed (``None``: never; :meth:`reload` still works), ``load`` loads the TARGET afresh.
    ``allowed_origins`` and ``allowed_hosts`` are :class:`HttpApp`'s (default: loopback).
    """

    def __init__(
        self,
        target: str,
        app: App,
        *,
        load: Loader = load_fresh,
        watch: Watcher | None = changes,
        allowed_origins: list[str] | None = None,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        self.target = target
        self.load = load
        self.watch = watch
        self._origins = allowed_origins
        self._hosts = allowed_hosts
        self.guards = Guards(allowed_origins, allowed_hosts, json_response=False)
        self.mcp = self._endpoint(app)
        self.server_id = secrets.token_hex(8)
        self.generation = 1
        self.last_event: dict[str, Any] = self._loaded(app)
        self._listeners: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._watching: asyncio.Task[None] | None = None

    def _endpoint(self, app: App) -> HttpApp:
        return HttpApp(app, MCP_PATH, allowed_origins=self._origins, allowed_hosts=self._hosts)

    def _loaded(self, app: App) -> dict[str, Any]:
        return {
            "type": "loaded",
            "server": self.server_id,
            "generation": self.generation,
            "summary": app.summary,
        }

    # ------------------------------------------------------------------ reloading

    async def reload(self) -> None:
        """Load the TARGET again and serve the new App, or tell the page why it did not load."""
        try:
            app = await asyncio.to_thread(self.load, self.target)
        except LoadFailure as exc:
            error = {"file": exc.file, "line": exc.line, "message": exc.message}
            logger.warning("mcpkit dev: %s did not load: %s", self.target, exc)
            self._publish({"type": "failed", "generation": self.generation, "error": error})
            return
        old, self.mcp = self.mcp, self._endpoint(app)
        try:
            await old.aclose()
        except Exception:  # the new App serves whatever the old one's lifespan does on exit
            logger.exception("mcpkit dev: the previous App's lifespan failed to end")
        self.generation += 1
        self._publish(self._loaded(app))

    async def _watch(self) -> None:
        assert self.watch is not None
        async for changed in self.watch(self.target):
            logger.info("mcpkit dev: %s changed; reloading", ", ".join(sorted(changed)))
            await self.reload()

    def _publish(self, event: dict[str, Any]) -> None:
        self.last_event = event
        for queue in self._listeners:
            queue.put_nowait(event)

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Start the App and the watcher; at exit stop both and end the event streams."""
        await self.mcp.start()
        if self.watch is not None:
            self._watching = asyncio.ensure_future(self._watch())
        try:
            yield
        finally:
            if self._watching is not None:
                self._watching.cancel()
            for queue in self._listeners:
                queue.put_nowait(None)
            await self.mcp.aclose()

    async def _lifespan(self, receive: Receive, send: ASGISend) -> None:
        async with contextlib.AsyncExitStack() as stack:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await stack.enter_async_context(self.running())
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await stack.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    async def _http(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        http = Exchange(scope, receive, send)
        if http.path == MCP_PATH:
            await self.mcp(scope, receive, send)
            return
        try:
            self.guards.check_caller(http)
            await self._route(http)
        except HttpError as error:
            await http.json(error.status, error.response(), error.headers)

    async def _route(self, http: Exchange) -> None:
        route = (http.method, http.path)
        if route == ("GET", "/"):
            await self._static(http, "index.html")
        elif http.method == "GET" and http.path.startswith("/static/"):
            await self._static(http, http.path.removeprefix("/static/"))
        elif route == ("POST", "/_dev/docs"):
            await self._docs(http)
        elif route == ("GET", "/_dev/events"):
            await self._events(http)
        else:
            await http.respond(404, b"Not Found", content_type="text/plain")

    async def _static(self, http: Exchange, name: str) -> None:
        path = STATIC / name
        kind = _TYPES.get(path.suffix)
        if "/" in name or kind is None or not path.is_file():
            await http.respond(404, b"Not Found", content_type="text/plain")
            return
        await http.respond(200, path.read_bytes(), _NO_STORE, kind)

    async def _docs(self, http: Exchange) -> None:
        body = await http.read_body(_MAX_DOCS_BODY)
        try:
            snapshot = json.loads(body)
            if not isinstance(snapshot, dict):
                raise TypeError("the body must be a JSON object")
            answer = fragments(snapshot)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise HttpError(400, InvalidRequest(f"Bad Request: {exc}")) from None
        await http.json(200, answer, _NO_STORE)

    async def _events(self, http: Exchange) -> None:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        queue.put_nowait(self.last_event)
        self._listeners.add(queue)
        closed = asyncio.ensure_future(http.disconnected())
        try:
            await http.start_sse(_NO_STORE)
            await pump(http, SseStream(http), queue, closed)
        finally:
            closed.cancel()
            self._listeners.discard(queue)
            await http.write(b"", more=False)
