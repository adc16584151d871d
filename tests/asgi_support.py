"""Driving an ``HttpApp`` in-process, no socket: each request runs in its own task and what it
sends is collected, so a test can read a streamed answer while the request is still open."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, MutableMapping
from typing import Any

from http_support import ACCEPT_BOTH, Reply, sse_events

from mcpkit.transports.http import HttpApp

TIMEOUT = 5.0
Headers = Mapping[str, str] | None
DEFAULTS = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": ACCEPT_BOTH}


class Request:
    """One HTTP request's side of ASGI, served when the caller chooses: ``serve(asgi)`` is the
    coroutine (a test can run it in its own task, or none). ``receive`` gives the body, then
    waits for ``close()``, the client hanging up; ``sent`` is every message the app sent."""

    def __init__(
        self,
        method: str,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        *,
        path: str = "/mcp",
        raw: bytes | None = None,
    ) -> None:
        self.body = raw if raw is not None else b"" if body is None else json.dumps(body).encode()
        sent = {**DEFAULTS, **(headers or {})}
        if raw is not None or body is not None:
            sent["content-length"] = str(len(self.body))
        sent = {k.lower(): v for k, v in sent.items() if v != ""}  # "" removes a default header
        self.scope = {
            "type": "http",
            "method": method,
            "path": path,
            "root_path": "",
            "scheme": "http",
            "headers": [(k.encode(), v.encode()) for k, v in sent.items()],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        self.read = False
        self.gone = asyncio.Event()
        self.watched = asyncio.Event()  # the app waits for a disconnect (receive after the body)
        self.sent: list[dict[str, Any]] = []
        self.status = 0
        self.headers: dict[str, str] = {}
        self.received = bytearray()
        self.arrived = asyncio.Event()

    def serve(self, asgi: HttpApp) -> Coroutine[Any, Any, None]:
        return asgi(self.scope, self._receive, self._send)

    async def _receive(self) -> dict[str, Any]:
        if not self.read:
            self.read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        self.watched.set()
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(dict(message))
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        else:
            self.received += message.get("body", b"")
        self.arrived.set()

    def close(self) -> None:
        self.gone.set()


class Exchange(Request):
    """One HTTP request served in its own task from the start."""

    def __init__(
        self, asgi: HttpApp, method: str, body: Any = None, headers: Headers = None
    ) -> None:
        super().__init__(method, body, headers)
        self.taken = 0
        self.task = asyncio.ensure_future(self.serve(asgi))

    async def reply(self) -> Reply:
        """The whole answer, once the request is over."""
        await self.task
        return Reply(self.status, self.headers, bytes(self.received))

    async def message(self) -> Any:
        """The next JSON-RPC message on this SSE stream (priming events skipped)."""
        while True:
            complete = bytes(self.received).rpartition(b"\n\n")[0]
            messages = [json.loads(data) for _, data in sse_events(complete) if data]
            if len(messages) > self.taken:
                self.taken += 1
                return messages[self.taken - 1]
            assert not self.task.done(), "the stream ended"
            self.arrived.clear()
            await self.arrived.wait()


async def request(
    asgi: HttpApp, method: str, body: Any = None, headers: Mapping[str, str] | None = None
) -> Reply:
    return await Exchange(asgi, method, body, headers).reply()


def run(test: Callable[[], Awaitable[None]]) -> None:
    """Run one async test on a new loop, bounded by ``TIMEOUT``."""

    async def main() -> None:
        await asyncio.wait_for(test(), TIMEOUT)

    asyncio.run(main())


class InProcess:
    """An ``HttpApp`` served by an event loop in a thread, no socket: what a synchronous test
    hands to ``http_support.request``/``post`` in place of a uvicorn port. The App's lifespan is
    entered before the first request and left on exit, as a server would."""

    port = 8000  # what the Host header names by default (the scope's server address)

    def __init__(self, asgi: HttpApp) -> None:
        self.asgi = asgi
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def request(
        self,
        method: str,
        body: Any,
        headers: Mapping[str, str],
        *,
        path: str = "/mcp",
        raw: bytes | None = None,
    ) -> Reply:
        async def exchange() -> Reply:
            sent = Request(method, body, headers, path=path, raw=raw)
            await sent.serve(self.asgi)
            return Reply(sent.status, sent.headers, bytes(sent.received))

        return asyncio.run_coroutine_threadsafe(exchange(), self.loop).result(TIMEOUT)

    def _call(self, work: Callable[[], Awaitable[None]]) -> None:
        asyncio.run_coroutine_threadsafe(_awaited(work), self.loop).result(TIMEOUT)

    @contextlib.contextmanager
    def serving(self) -> Iterator[InProcess]:
        self.thread.start()
        try:
            self._call(self.asgi.start)
            yield self
            self._call(self.asgi.aclose)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(TIMEOUT)
            self.loop.close()


async def _awaited(work: Callable[[], Awaitable[None]]) -> None:
    await work()


def in_process(asgi: HttpApp) -> contextlib.AbstractContextManager[InProcess]:
    """Serve ``asgi`` in-process for synchronous tests (``with in_process(asgi) as server``)."""
    return InProcess(asgi).serving()
