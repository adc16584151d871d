"""A lean HTTP/1.1 protocol for ``mcpkit run``: the plain requests MCP clients send, read and
answered with a few byte operations each; any other request hands the connection to uvicorn's
own protocol.

uvicorn's h11 protocol spends ~60 us of the ~105 us a stateless request costs the bare ASGI floor
(docs/performance.md, eighth pass): h11 runs ~200 Python calls a request to parse and frame what
is, for an MCP client, always the same shape. :class:`LeanHTTP` reads that shape itself: a
request line ``POST|GET|DELETE <target> HTTP/1.1``, header lines whose names are tokens and whose
values are printable ASCII, one ``Host``, a body framed by one ``Content-Length`` (or none), no
``Transfer-Encoding``, ``Expect``, ``Upgrade`` or ``Connection`` other than ``keep-alive``. It
parses nothing else: at the first request that is anything more (or less), it hands the
connection, with the bytes it has not consumed, to uvicorn's protocol under
:class:`~mcpkit.transports.http.deadline.ReadDeadline`, which answers that request and every later
one exactly as it would have from the start (``tests/test_http_lean.py`` holds the two to the
same bytes). A response with one valid ``Content-Length`` and plain headers is written by itself,
head and body in one write; any other (a stream, an error page) goes through uvicorn's own
response cycle, with h11 loaded on first use.

The ASGI app sees what uvicorn's h11 protocol gives it (the scope, the body, ``http.disconnect``);
timing is the same too: the app starts once the headers are in, the body streams to it, a slow
client is held to the read deadline of :class:`ReadDeadline` (one timer per connection, re-armed
only when it fires, instead of one made and cancelled per request).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any
from urllib.parse import unquote

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.utils import get_local_addr, get_remote_addr, is_ssl

from mcpkit.transports.http._h1_cycle import FIELD, TOKEN, Cycle, is_length
from mcpkit.transports.http.deadline import ReadDeadline

__all__ = ["LeanHTTP", "http_protocol", "serves"]

_METHODS = {b"POST": "POST", b"GET": "GET", b"DELETE": "DELETE"}
_VISIBLE = bytes(range(0x21, 0x7F))  # a request target's bytes
_OWN = {b"content-length", b"host", b"connection", b"transfer-encoding", b"expect", b"upgrade"}
_MAX_HEAD = 16 * 1024  # h11's limit on an incomplete head (uvicorn's default)


def http_protocol(
    config: Any, server_state: Any, app_state: dict[str, Any], _loop: Any = None
) -> asyncio.Protocol:
    """The protocol of one connection (uvicorn calls this as it would a protocol class;
    ``mcpkit run --http`` names it, so every worker process imports it from here):
    :class:`LeanHTTP` where it serves the config, else uvicorn's own under a
    :class:`~mcpkit.transports.http.deadline.ReadDeadline` of ``timeout_keep_alive`` seconds."""
    if serves(config):
        return LeanHTTP(config, server_state, app_state, _loop)
    return _uvicorns(config, server_state, app_state, _loop)


def _uvicorns(config: Any, server_state: Any, app_state: dict[str, Any], loop: Any) -> ReadDeadline:
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    inner = AutoHTTPProtocol(  # type: ignore[call-arg]
        config=config, server_state=server_state, app_state=app_state, _loop=loop
    )
    return ReadDeadline(inner, config.timeout_keep_alive)


def serves(config: Any) -> bool:
    """Whether :class:`LeanHTTP` serves what ``config`` asks for (else uvicorn's protocol does):
    no root path, no concurrency limit, h11's default head limit."""
    return (
        not config.root_path
        and config.limit_concurrency is None
        and config.h11_max_incomplete_event_size in (None, _MAX_HEAD)
    )


class LeanHTTP(asyncio.Protocol):
    """One HTTP/1.1 connection, built as uvicorn builds its protocols (see the module)."""

    def __init__(
        self, config: Any, server_state: Any, app_state: dict[str, Any], _loop: Any = None
    ) -> None:
        if not config.loaded:
            config.load()
        self.config = config
        self.app = config.loaded_app
        self.loop: asyncio.AbstractEventLoop = _loop or asyncio.get_event_loop()
        self.server_state = server_state
        self.connections: set[Any] = server_state.connections
        self.tasks: set[asyncio.Task[None]] = server_state.tasks
        self.app_state = app_state
        self.timeout: float = config.timeout_keep_alive
        self.transport: Any = None
        self.flow: Any = None
        self.cycle: Cycle | None = None  # the request being answered (or the last one)
        self._buffer = b""  # received: from ``_at`` on, not yet consumed
        self._at = 0
        self._busy = False  # a request is being answered (till answered(), which reads on)
        self._want = 0  # body bytes of the current request still to come
        self._deadline: float | None = None  # loop time the connection closes at, if waiting
        self._timer: asyncio.TimerHandle | None = None
        self._restart = False  # the next bytes restart the deadline (an answer went out)
        self._fresh = bool(getattr(config, "reset_contextvars", False))
        self.access_log = logging.getLogger("uvicorn.access").hasHandlers()  # (as uvicorn asks)

    # ------------------------------------------------------------------ asyncio's side

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.connections.add(self)
        self.transport = transport
        self.flow = FlowControl(transport)  # type: ignore[arg-type]
        self.server = get_local_addr(transport)  # type: ignore[arg-type]
        self.client = get_remote_addr(transport)  # type: ignore[arg-type]
        self.scheme = "https" if is_ssl(transport) else "http"  # type: ignore[arg-type]
        self._wait(self.timeout)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return  # (TLS hands over what it decrypted while closing: no request starts)
        want = self._want
        if want:  # the current request's body
            cycle = self.cycle
            assert cycle is not None
            if len(data) < want:
                self._want -= len(data)
                self._wait(self.timeout)  # each piece of a body restarts the clock
                cycle.body_in(data, done=False)
                return
            self._want = 0
            cycle.body_in(data[:want], done=True)
            data = data[want:]
            if self._busy:
                self._deadline = None  # the request is in: answered for as long as it takes
            if not data:
                return
        if self._at < len(self._buffer):
            self._buffer = self._buffer[self._at :] + data  # (the rest, copied once a read)
        else:
            self._buffer = data
        self._at = 0
        first, self._restart = self._restart, False
        self._next(first=first)

    def eof_received(self) -> None:
        pass  # (the transport closes: connection_lost follows)

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.cycle is not None:
            self.cycle.gone()
        if self.flow is not None:
            self.flow.resume_writing()
        if exc is None:
            self.transport.close()

    def pause_writing(self) -> None:
        self.flow.pause_writing()

    def resume_writing(self) -> None:
        self.flow.resume_writing()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close now when idle, else once the answer is out."""
        if self.cycle is None or not self._busy:
            self.transport.close()
        else:
            self.cycle.close_after()

    # ----------------------------------------------------------------------- requests

    def _next(self, *, first: bool) -> None:
        """Start the request at the head of the buffer, if the connection is free for it
        (``first``: the first bytes since the last answer just came)."""
        if self._busy:
            self.flow.pause_reading()  # a pipelined request: read on once this one is answered
            return
        buf, at = self._buffer, self._at
        if buf[at] < 0x21:  # no request line starts so (h11 refuses it at once, as it should)
            self._fall_back()
            return
        end = buf.find(b"\n\r\n", at)  # (the blank line ending a head: h11's own test)
        bare = buf.find(b"\n\n", at, len(buf) if end < 0 else end + 1)  # (in this head only)
        if end < 0 and bare < 0:
            if len(buf) - at > _MAX_HEAD:
                self._fall_back()  # (h11 refuses it, as it would have)
            elif first:  # after an answer, a head has this long from its first bytes on
                self._wait(self.timeout)
            return
        if end <= at or buf[end - 1] != 13 or bare >= 0:  # a bare LF: h11's to read
            self._fall_back()
            return
        taken = self._request(buf[at : end - 1])
        if taken is None:
            self._fall_back()
            return
        self._begin(*taken, end + 3)

    def _begin(self, scope: dict[str, Any], length: int, start: int) -> None:
        """Run the app for a request whose body starts at ``start`` in the buffer."""
        buf = self._buffer
        body = buf[start : start + length]
        self._at = start + len(body)
        self._want = length - len(body)
        if self._want:
            self._wait(self.timeout)  # the rest of the body has this long to come
        else:
            self._deadline = None  # the request is in: answered for as long as it takes
        cycle = self.cycle = Cycle(self, scope, body, more_body=self._want > 0)
        if self._fresh:  # uvicorn's reset_contextvars: the app runs in no leftover context
            task = contextvars.Context().run(self.loop.create_task, cycle.run(self.app))
        else:
            task = self.loop.create_task(cycle.run(self.app))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)
        self._busy = True
        if self._at < len(buf):
            self.flow.pause_reading()

    def _request(self, head: bytes) -> tuple[dict[str, Any], int] | None:
        """The ASGI scope and body length of a request head this protocol takes, else None."""
        lines = head.split(b"\r\n")
        if head.count(b"\n") != len(lines) - 1 or head.count(b"\r") != len(lines) - 1:
            return None  # a bare CR or LF inside
        method, _, rest = lines[0].partition(b" ")
        target, _, version = rest.partition(b" ")
        verb = _METHODS.get(method)
        if verb is None or version != b"HTTP/1.1" or not target or target.translate(None, _VISIBLE):
            return None
        fields = _fields(lines)
        if fields is None:
            return None
        headers, length = fields
        raw_path, _, query = target.partition(b"?")
        path = raw_path.decode("ascii")
        scope = {
            "type": "http",
            "asgi": {"version": self.config.asgi_version, "spec_version": "2.3"},
            "http_version": "1.1",
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "method": verb,
            "root_path": "",
            "path": unquote(path) if "%" in path else path,
            "raw_path": raw_path,
            "query_string": query,
            "headers": headers,
            "state": self.app_state.copy(),
        }
        return scope, length

    def answered(self) -> None:
        """The current request's response is complete, the connection kept: read on."""
        self.server_state.total_requests += 1
        self._busy = False
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self._want:
            self._wait(self.timeout)  # the rest of its body, unread (the timer may have gone)
            return
        self._wait(self.timeout)  # idle: closed after this long (uvicorn's keep-alive)
        self._restart = True  # (the next bytes restart it: ReadDeadline's rule)
        if self._at < len(self._buffer):
            self._next(first=False)

    def _fall_back(self) -> None:
        """Hand the connection to uvicorn's protocol (and it the bytes not consumed)."""
        successor = _uvicorns(self.config, self.server_state, self.app_state, self.loop)
        conn = getattr(successor.inner, "conn", None)  # h11's, when uvicorn serves with h11
        if self.cycle is not None and conn is not None:
            conn.their_http_version = b"1.1"  # what the requests before spoke: h11 frames by it
        self.connections.discard(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flow.resume_reading()
        self.flow.resume_writing()  # (a send still waiting on it must not wait for ever)
        data, self._buffer = self._buffer[self._at :], b""
        self._at = 0
        self.transport.set_protocol(successor)
        successor.connection_made(self.transport)
        if data:
            successor.data_received(data)

    # ----------------------------------------------------------------------- deadline

    def _wait(self, seconds: float) -> None:
        """Close the connection if nothing comes in ``seconds`` (it waits for a request)."""
        self._deadline = self.loop.time() + seconds
        if self._timer is None:
            self._timer = self.loop.call_at(self._deadline, self._check)

    def _check(self) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None or self.transport.is_closing():
            return  # answering: the next wait arms the timer again
        if self.loop.time() >= deadline:
            self.transport.close()
        else:
            self._timer = self.loop.call_at(deadline, self._check)


def _fields(lines: list[bytes]) -> tuple[list[tuple[bytes, bytes]], int] | None:
    """The header fields after the request line, as h11 gives them (names lower-cased, values
    stripped), and the body's length; None for a field this protocol leaves to h11: a name that
    is no token, a value not plain ASCII, framing other than one ``Content-Length``, no ``Host``
    or two, an expectation, an upgrade, ``Connection`` other than ``keep-alive``."""
    headers = []
    length = -1
    hosts = 0
    for line in lines[1:]:
        raw_name, colon, value = line.partition(b":")
        value = value.strip(b" \t")
        if not colon or not raw_name or raw_name.translate(None, TOKEN):
            return None
        if value.translate(None, FIELD):
            return None
        name = raw_name.lower()
        if name in _OWN:
            if name == b"host":
                hosts += 1
            elif name == b"content-length" and length < 0 and is_length(value):
                length = int(value)
            elif name != b"connection" or value.lower() != b"keep-alive":
                return None
        headers.append((name, value))
    return (headers, max(length, 0)) if hosts == 1 else None
