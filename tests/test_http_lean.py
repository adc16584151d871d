"""``LeanHTTP`` (mcpkit's HTTP/1.1 protocol for plain requests) against uvicorn's h11 protocol
under mcpkit's read deadline: for any byte stream a client may send, in any chunking and with
any pauses, the app sees the same (its scope, the request body, a disconnect when the client
goes), the client gets the same bytes back, and the connection is closed (or kept) the same.

Each protocol is driven in process over a fake transport (no sockets) that behaves as asyncio's
socket transport does (reading paused and resumed, ``close`` reported at the next turn, a
protocol switched by ``set_protocol``), on a fresh loop whose clock moves only when the client
pauses, with the same app and the same ``Date``/``Server`` headers. Checked: random streams
(valid MCP requests, and each way a request can be other than plain), what a user sees on the
plain path (one write per small answer, pipelining, ...), and the edges found so far."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import h11
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from mcpkit.cli.run import uvicorn_settings
from mcpkit.transports.http._h1 import LeanHTTP
from mcpkit.transports.http.deadline import ReadDeadline

DEFAULT_HEADERS = [(b"date", b"Thu, 01 Jan 2026 00:00:00 GMT"), (b"server", b"uvicorn")]
EXTRA = {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000), "sslcontext": None}
TURNS = 20  # turns of the loop after each thing the client does: enough for all to settle

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Factory = Callable[[uvicorn.Config, ServerState, dict[str, Any]], asyncio.Protocol]


def reference(
    config: uvicorn.Config, server_state: ServerState, app_state: dict[str, Any]
) -> asyncio.Protocol:
    """uvicorn's own h11 protocol under mcpkit's read deadline: what ``LeanHTTP`` must match."""
    return ReadDeadline(H11Protocol(config, server_state, app_state), config.timeout_keep_alive)


class BodyDeadline(ReadDeadline):
    """:class:`ReadDeadline` holding every body to its rule (each piece restarts the clock), as
    ``LeanHTTP`` does on its own path (see ``STRICTER``): also the body of a request h11 starts
    from bytes already read (pipelined), and a body still coming after an early answer."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        inner: Any = self.inner
        answered = inner.on_response_complete

        def on_response_complete() -> None:
            answered()  # (may start a pipelined request)
            if self._waiting_for() == "body" and self.timer is None:
                self._arm()

        inner.on_response_complete = on_response_complete  # (before any request's cycle)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        inner: Any = self.inner
        cycle = inner.cycle
        if (
            cycle is not None
            and cycle.response_complete
            and inner.conn.their_state is h11.SEND_BODY
        ):
            self._arm()  # a piece of a body after its answer


def stricter(
    config: uvicorn.Config, server_state: ServerState, app_state: dict[str, Any]
) -> asyncio.Protocol:
    inner = H11Protocol(config, server_state, app_state)
    return BodyDeadline(inner, config.timeout_keep_alive)


def lean(
    config: uvicorn.Config, server_state: ServerState, app_state: dict[str, Any]
) -> asyncio.Protocol:
    return LeanHTTP(config, server_state, app_state)


# -- the connection ------------------------------------------------------------------------


class Wire(asyncio.Transport):
    """The connection's transport as asyncio's socket transport behaves: each write call
    recorded (writes after ``close`` are lost, as on a socket), ``close`` reported to the
    protocol of the moment at the loop's next turn, reading paused and resumed."""

    def __init__(self, protocol: asyncio.BaseProtocol) -> None:
        super().__init__()
        self.protocol = protocol
        self.writes: list[bytes] = []
        self.closed = False
        self.reading = True
        self.eof_written = False
        self.errors: list[str] = []  # what the protocol raised into the transport (or loop)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.closed and data:
            self.writes.append(bytes(data))

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        self.write(b"".join(list_of_data))  # one call, one send

    def close(self, exc: BaseException | None = None) -> None:
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().call_soon(self._lost, exc)

    def _lost(self, exc: BaseException | None) -> None:
        self.call("connection_lost", exc)

    def call(self, name: str, *args: Any) -> Any:
        """Call the protocol of the moment as asyncio's transport does: what it raises is a
        fatal error, and the connection is lost (with that error)."""
        try:
            return getattr(self.protocol, name)(*args)
        except Exception as exc:
            self.errors.append(f"{name}: {type(exc).__name__}")
            if name != "connection_lost":
                self.close(exc)
            return None

    def abort(self) -> None:
        self.close()

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return EXTRA.get(name, default)

    def pause_reading(self) -> None:
        self.reading = False

    def resume_reading(self) -> None:
        self.reading = True

    def is_reading(self) -> bool:
        return self.reading and not self.closed

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.protocol

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof_written = True

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (16384, 65536)


# -- the app --------------------------------------------------------------------------------


class App:
    """Records what each request showed it and answers in the style its path's first segment
    names (``json`` for any other path)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.quiet = asyncio.Event()  # the client has nothing more to send (or cannot)

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        record: dict[str, Any] = {
            "scope": copy.deepcopy({key: value for key, value in scope.items() if key != "state"}),
            "body": b"",
            "end": None,
        }
        self.seen.append(record)
        style = scope["path"].split("/")[1] if scope["path"].startswith("/") else ""
        await STYLES.get(style, answer_json)(self, record, receive, send)


async def read_body(record: dict[str, Any], receive: Receive) -> bool:
    """Read the request's body into ``record``; whether it came whole (not a disconnect)."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            record["end"] = message["type"]
            return False
        record["body"] += message.get("body", b"")
        if not message.get("more_body", False):
            record["end"] = "complete"
            return True


def summary(record: dict[str, Any]) -> bytes:
    scope = record["scope"]
    seen = {"method": scope["method"], "path": scope["path"], "length": len(record["body"])}
    return json.dumps(seen, separators=(",", ":")).encode()


async def start(send: Send, status: int, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def body(send: Send, data: bytes, more: bool = False) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})


def json_head(data: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]


async def answer_json(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    await read_body(record, receive)
    data = summary(record)
    await start(send, 200, json_head(data))
    await body(send, data)


async def answer_parts(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """A body with its length, in three messages."""
    await read_body(record, receive)
    data = summary(record)
    await start(send, 200, json_head(data))
    third = len(data) // 3
    await body(send, data[:third], more=True)
    await body(send, data[third : 2 * third], more=True)
    await body(send, data[2 * third :])


async def answer_stream(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """A body of unknown length (chunked on the wire), as an SSE stream sends it."""
    await read_body(record, receive)
    await start(send, 200, [(b"content-type", b"text/event-stream")])
    await body(send, b"event: message\r\n", more=True)
    await body(send, b"data: " + summary(record) + b"\r\n\r\n", more=True)
    await body(send, b"")


async def answer_accepted(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    await read_body(record, receive)
    await start(send, 202, [])
    await body(send, b"")


async def answer_custom(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """Another status, header names in capitals, a length among them."""
    await read_body(record, receive)
    data = summary(record)
    headers = [(b"X-Custom", b"a  b"), (b"Content-Length", b"%d" % len(data)), (b"ETag", b"1")]
    await start(send, 201, headers)
    await body(send, data)


async def answer_hosted(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """A response naming a Host among its headers (h11 writes that one first)."""
    await read_body(record, receive)
    data = summary(record)
    await start(send, 200, [*json_head(data), (b"host", b"example")])
    await body(send, data)


async def answer_padded(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """A Content-Length of 21 digits (h11 takes 20 at most: it refuses the head)."""
    await read_body(record, receive)
    await start(send, 200, [(b"content-length", b"000000000000000000005")])
    await body(send, b"hello")


async def answer_nocontent(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    await read_body(record, receive)
    await start(send, 204, [])
    await body(send, b"")


async def answer_short(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """Less body than its length says (h11 refuses to end it)."""
    await read_body(record, receive)
    await start(send, 200, [(b"content-length", b"10")])
    await body(send, b"short")


async def answer_early(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """An answer before the body is read (then the body is read after)."""
    data = summary(record)
    await start(send, 200, json_head(data))
    await body(send, data)
    record["after"] = (await receive())["type"]


async def answer_raise(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    await read_body(record, receive)
    raise RuntimeError("the app failed before answering")  # uvicorn answers 500


async def answer_broken(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    await read_body(record, receive)
    await start(send, 200, [(b"content-length", b"10")])
    raise RuntimeError("the app failed while answering")  # uvicorn closes the connection


async def answer_nothing(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    await read_body(record, receive)  # and returns without answering: uvicorn answers 500


async def answer_probe(app: App, record: dict[str, Any], receive: Receive, send: Send) -> None:
    """After the body, wait for the client to go (``http.disconnect``) or to have nothing more
    to send (``quiet``), then answer."""
    await read_body(record, receive)
    got = asyncio.ensure_future(receive())
    quiet = asyncio.ensure_future(app.quiet.wait())
    await asyncio.wait({got, quiet}, return_when=asyncio.FIRST_COMPLETED)
    quiet.cancel()
    if got.done():
        record["after"] = got.result()["type"]
    else:
        got.cancel()
        record["after"] = "quiet"
    await answer_json(app, record, receive, send)


STYLES: dict[str, Callable[[App, dict[str, Any], Receive, Send], Awaitable[None]]] = {
    "json": answer_json,
    "parts": answer_parts,
    "stream": answer_stream,
    "accepted": answer_accepted,
    "custom": answer_custom,
    "hosted": answer_hosted,
    "nocontent": answer_nocontent,
    "short": answer_short,
    "early": answer_early,
    "raise": answer_raise,
    "broken": answer_broken,
    "nothing": answer_nothing,
    "probe": answer_probe,
    "padded": answer_padded,
}
ODD_APPS = {"hosted", "padded"}
"""Styles only the examples ask for (an app that names a Host or pads a length is rare; the
random streams are about what clients send)."""


# -- the driver -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Stream:
    """What a client sends: chunks (the loop runs between two when ``gaps`` says so), then its
    end of the connection (``eof``) or nothing more."""

    chunks: tuple[bytes, ...]
    gaps: tuple[bool, ...] = ()
    eof: bool = False
    waits: tuple[float, ...] = ()  # seconds the client is silent after each chunk
    before: float = 0.0  # seconds it is silent after connecting, before its first chunk
    linger: float = 0.0  # seconds it is silent after the last, before it goes (or is left)


@dataclass
class Outcome:
    seen: list[dict[str, Any]]
    wire: bytes
    closed: bool
    errors: list[str] = field(compare=False)  # (shown, not compared: no part of the contract)
    writes: list[bytes] = field(compare=False)


class Clock(asyncio.SelectorEventLoop):
    """A loop whose time passes only when the driver says (:func:`elapse`): the deadlines of
    both protocols run on it, and no test waits for them."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def time(self) -> float:
        return self.now


T = TypeVar("T")


def on_clock(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a fresh :class:`Clock`."""
    loop = Clock()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        finally:
            loop.close()


async def settle(turns: int = TURNS) -> None:
    for _ in range(turns):
        await asyncio.sleep(0)


async def elapse(seconds: float) -> None:
    """Let ``seconds`` pass, stopping at each timer due meanwhile (as real time would)."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, Clock)
    await settle()  # (what is ready runs before time passes)
    end = loop.now + seconds
    for _ in range(100):
        timers = getattr(loop, "_scheduled", [])  # (asyncio's heap of timers)
        due = [timer.when() for timer in timers if not timer.cancelled()]
        upcoming = [when for when in due if when <= end]
        if not upcoming:
            break
        loop.now = max(loop.now, min(upcoming))
        await settle()
    loop.now = end
    await settle()


async def readable(wire: Wire, app: App) -> bool:
    """Whether the server reads what the client sends next: not while it has paused reading
    (after the loop settles; if it stays paused, the client waits: ``app.quiet``)."""
    if not wire.is_reading() and not wire.closed:
        await settle()
        if not wire.is_reading() and not wire.closed:
            app.quiet.set()
            await settle()
    return wire.is_reading()


async def send_all(wire: Wire, app: App, stream: Stream) -> None:
    if stream.before:
        await elapse(stream.before)
    for index, chunk in enumerate(stream.chunks):
        if not await readable(wire, app):
            return  # (a closed connection reads nothing; a stalled one nothing more)
        wire.call("data_received", chunk)
        if index >= len(stream.gaps) or stream.gaps[index]:
            await settle()
        if index < len(stream.waits) and stream.waits[index]:
            await elapse(stream.waits[index])
    if stream.linger:
        await elapse(stream.linger)
    if stream.eof and await readable(wire, app) and not wire.call("eof_received"):
        wire.close()  # as asyncio's transport does after the protocol's eof_received


async def drive(factory: Factory, stream: Stream) -> Outcome:
    app = App()
    config = uvicorn.Config(
        app,
        http="h11",
        ws="none",
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=5,
    )
    config.load()
    server_state = ServerState()
    server_state.default_headers = list(DEFAULT_HEADERS)
    protocol = factory(config, server_state, {})
    wire = Wire(protocol)
    asyncio.get_running_loop().set_exception_handler(
        lambda loop, context: wire.errors.append(f"loop: {context['message']}")
    )
    protocol.connection_made(wire)
    await send_all(wire, app, stream)
    await settle()
    app.quiet.set()
    await settle()
    seen = copy.deepcopy(app.seen)
    outcome = Outcome(seen, b"".join(wire.writes), wire.closed, wire.errors, wire.writes)
    wire.close()  # the client goes: the server's tasks end
    await settle()
    return outcome


def run(factory: Factory, stream: Stream) -> Outcome:
    return on_clock(drive(factory, stream))


def both(stream: Stream) -> tuple[Outcome, Outcome]:
    """The stream served by uvicorn's h11 protocol, then by ``LeanHTTP`` (each on its loop)."""
    return run(reference, stream), run(lean, stream)


def assert_same(stream: Stream, *, or_as: Factory | None = None) -> None:
    """``LeanHTTP`` serves ``stream`` as the reference does (or, when it does not, as
    ``or_as`` does)."""
    expected, got = both(stream)
    if or_as is not None and got != expected:
        expected = run(or_as, stream)
    shown = f"\nh11:  {expected}\nlean: {got}"
    assert got.seen == expected.seen, shown
    assert got.wire == expected.wire, shown
    assert got.closed == expected.closed, shown


# -- requests -------------------------------------------------------------------------------

TOKEN = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
VISIBLE = "".join(chr(code) for code in range(0x21, 0x7F))
SEGMENT = "abcxyz019-._~!$&'()*+,;=:@" + "%"
ESCAPES = ["%20", "%2F", "%2f", "%C3%A9", "%ZZ", "%", "%0", "%00", "%25"]


@dataclass(frozen=True)
class Request:
    """One request, as lines (without their ends) and a body."""

    line: bytes
    headers: tuple[bytes, ...]
    body: bytes
    eol: bytes = b"\r\n"
    ends: tuple[tuple[int, bytes], ...] = ()  # (header index, its own line end)

    def render(self) -> bytes:
        ends = dict(self.ends)
        lines = [self.line + self.eol]
        lines += [header + ends.get(index, self.eol) for index, header in enumerate(self.headers)]
        return b"".join(lines) + self.eol + self.body

    def without(self, name: bytes) -> tuple[bytes, ...]:
        return tuple(line for line in self.headers if not line.lower().startswith(name + b":"))

    def with_headers(self, *lines: bytes, at: int | None = None) -> Request:
        headers = list(self.headers)
        at = len(headers) if at is None else min(at, len(headers))
        return replace(self, headers=(*headers[:at], *lines, *headers[at:]))


def cased(name: str) -> st.SearchStrategy[bytes]:
    return st.sampled_from([name, name.title(), name.upper()]).map(str.encode)


def ows() -> st.SearchStrategy[str]:
    return st.sampled_from(["", "", " ", "\t", "  ", " \t "])


@st.composite
def values(draw: st.DrawFn) -> bytes:
    """A valid field value (visible ASCII, inner spaces and tabs), with space around it."""
    words = draw(st.lists(st.text(VISIBLE, min_size=1, max_size=12), max_size=3))
    inner = "".join(draw(st.sampled_from([" ", "\t", "  "])) + word for word in words)[1:]
    return (draw(ows()) + inner + draw(ows())).encode()


KNOWN = {
    "content-type": ["application/json", "application/json; charset=utf-8", "text/plain"],
    "accept": ["application/json, text/event-stream", "*/*", "text/event-stream"],
    "mcp-protocol-version": ["2025-06-18", "2026-07-28"],
    "mcp-session-id": ["0f3a5c1e9b7d4e2a8c6b1d3f5e7a9c0b"],
    "authorization": ["Bearer abc.def.ghi", "Basic dXNlcjpwYXNz"],
    "connection": ["close", "keep-alive", "Close", " close ", "keep-alive, close", "Upgrade"],
    "user-agent": ["python-httpx/0.28.1", "node"],
    "last-event-id": ["42"],
    "x-forwarded-for": ["10.0.0.1", "10.0.0.1, 10.0.0.2"],
    "x-forwarded-proto": ["https", "http"],
}


@st.composite
def headers(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(KNOWN)))
        value = draw(st.sampled_from(KNOWN[name])).encode()
        return draw(cased(name)) + b":" + draw(ows()).encode() + value
    name_text = draw(st.text(TOKEN, min_size=1, max_size=12))
    return name_text.encode() + b":" + draw(values())


@st.composite
def targets(draw: st.DrawFn) -> bytes:
    style = draw(st.sampled_from([*sorted(set(STYLES) - ODD_APPS), "", "other"]))
    pieces = draw(st.lists(st.text(SEGMENT, max_size=6) | st.sampled_from(ESCAPES), max_size=4))
    path = "/" + style + ("/" + "".join(pieces) if pieces else "")
    if draw(st.booleans()):
        query = draw(st.lists(st.text(SEGMENT + "/?=&", max_size=8) | st.sampled_from(ESCAPES)))
        path += "?" + "".join(query)
    return path.encode()


METHODS = ["POST"] * 6 + ["GET"] * 3 + ["DELETE"] * 2 + ["PUT", "HEAD", "OPTIONS", "PATCH"]


@st.composite
def requests(draw: st.DrawFn) -> Request:
    """A request as an MCP client sends one (sometimes with another method)."""
    method = draw(st.sampled_from(METHODS)).encode()
    line = method + b" " + draw(targets()) + b" HTTP/1.1"
    lines = draw(st.lists(headers(), max_size=5))
    lines.append(draw(cased("host")) + b":" + draw(ows()).encode() + b"localhost:8000")
    data = draw(st.binary(max_size=48)) if method not in (b"GET", b"HEAD") else b""
    if data or draw(st.booleans()):
        lines.append(draw(cased("content-length")) + b": %d" % len(data))
    lines = draw(st.permutations(lines))
    return Request(line, tuple(lines), data)


# -- what makes a request not plain ---------------------------------------------------------

Mutation = Callable[[st.DrawFn, Request], Request]


def no_host(draw: st.DrawFn, request: Request) -> Request:
    return replace(request, headers=request.without(b"host"))


def length_again(draw: st.DrawFn, request: Request) -> Request:
    """A second Content-Length: the same, another, or both in one line."""
    size = len(request.body)
    value = draw(st.sampled_from([b"%d" % size, b"%d" % (size + 1), b"%d, %d" % (size, size)]))
    return request.with_headers(b"Content-Length: " + value, at=draw(st.integers(0, 9)))


def length_odd(draw: st.DrawFn, request: Request) -> Request:
    size = len(request.body)
    value = draw(
        st.sampled_from(
            [
                *(b"+%d", b" %d ", b"0%d", b"%da", b"-%d", b"%d.0", b"0x%d", b"", b"%d %d"),
                *(b"99999999999999999999", b"00000000000000000000%d", b"\xd9\xa1", b"\t%d"),
            ]
        )
    )
    odd = value % ((size,) * value.count(b"%d"))
    lines = request.without(b"content-length")
    return replace(request, headers=(*lines, b"Content-Length:" + odd))


def chunked(draw: st.DrawFn, request: Request) -> Request:
    """The body in chunked coding (sometimes with chunk extensions, trailers, a Content-Length
    as well, or another coding named)."""
    data, out, at = request.body, b"", 0
    while at < len(data):
        size = draw(st.integers(1, len(data) - at))
        ext = draw(st.sampled_from([b"", b"", b";x=y", b" ;q"]))
        out += b"%x" % size + ext + b"\r\n" + data[at : at + size] + b"\r\n"
        at += size
    out += b"0\r\n" + draw(st.sampled_from([b"", b"", b"X-Trailer: 1\r\n"])) + b"\r\n"
    coding = draw(st.sampled_from([b"chunked"] * 4 + [b"Chunked", b"gzip, chunked", b"gzip"]))
    lines = request.without(b"content-length")
    if draw(st.integers(0, 4)) == 4:
        lines = request.headers  # both Content-Length and Transfer-Encoding
    headers = (*lines, draw(cased("transfer-encoding")) + b": " + coding)
    return replace(request, headers=headers, body=out)


def expect(draw: st.DrawFn, request: Request) -> Request:
    value = draw(st.sampled_from([b"100-continue", b"100-Continue", b"something"]))
    return request.with_headers(draw(cased("expect")) + b": " + value)


def upgrade(draw: st.DrawFn, request: Request) -> Request:
    protocol = draw(st.sampled_from([b"websocket", b"h2c", b"foo/1"]))
    lines = [b"Upgrade: " + protocol]
    if draw(st.booleans()):
        lines.append(b"Connection: " + draw(st.sampled_from([b"Upgrade", b"keep-alive, upgrade"])))
    return request.with_headers(*lines)


def version(draw: st.DrawFn, request: Request) -> Request:
    other = draw(
        st.sampled_from([b"HTTP/1.0"] * 3 + [b"HTTP/1.2", b"HTTP/2.0", b"http/1.1", b"HTTP/1.1 "])
    )
    return replace(request, line=request.line.rsplit(b" ", 1)[0] + b" " + other)


def request_line(draw: st.DrawFn, request: Request) -> Request:
    """An odd request line: another method's case, spaces, an absolute or odd target."""
    method, target, rest = request.line.split(b" ", 2)
    odd = draw(
        st.sampled_from(
            [
                method.lower() + b" " + target + b" " + rest,
                method + b"  " + target + b" " + rest,
                method + b" http://localhost:8000" + target + b" " + rest,
                method + b" * " + rest,
                method + b" " + target + b"\xc3\xa9 " + rest,
                method + b" " + target + b"\x7f " + rest,
                b"\r\n" + request.line,
                b" " + request.line,
                b"PRI * HTTP/2.0",
            ]
        )
    )
    return replace(request, line=odd)


def obs_fold(draw: st.DrawFn, request: Request) -> Request:
    """A header continued on the next line (obs-fold)."""
    fold = draw(st.sampled_from([b" ", b"\t", b"  "])) + b"continued"
    return request.with_headers(b"X-Folded: a", fold, at=draw(st.integers(0, 9)))


def bare_lf(draw: st.DrawFn, request: Request) -> Request:
    if draw(st.booleans()) or not request.headers:
        return replace(request, eol=b"\n")
    index = draw(st.integers(0, len(request.headers) - 1))
    return replace(request, ends=((index, draw(st.sampled_from([b"\n", b"\r\r\n"]))),))


def odd_value(draw: st.DrawFn, request: Request) -> Request:
    """A header value with a control byte or a non-ASCII one."""
    odd = draw(st.sampled_from([b"\x00", b"\x01", b"\x1f", b"\x7f", b"\x0b", b"\x0c", b"\r"]))
    odd = draw(st.sampled_from([odd, b"\xe9", b"\xc3\xa9", b"\xff"]))
    where = draw(st.sampled_from([b"a%sb", b"%sb", b"a%s", b"%s"]))
    return request.with_headers(b"X-Odd: " + where % odd, at=draw(st.integers(0, 9)))


def odd_name(draw: st.DrawFn, request: Request) -> Request:
    odd = draw(
        st.sampled_from(
            [
                *(b"X Odd: 1", b"X-Odd : 1", b"X-Odd\t: 1", b": 1", b"X-Odd", b"X\xe9: 1"),
                *(b"X\x01: 1", b"(x): 1", b"X/Y: 1", b"X@Y: 1", b" X-Odd: 1"),
            ]
        )
    )
    return request.with_headers(odd, at=draw(st.integers(0, 9)))


def long_headers(draw: st.DrawFn, request: Request) -> Request:
    """A header block near h11's 16 KiB limit for an incomplete request, or past it."""
    size = draw(st.sampled_from([8000, 16300, 16384, 17000, 40000]))
    return request.with_headers(b"X-Long: " + b"v" * size)


def junk(draw: st.DrawFn, request: Request) -> Request:
    """Bytes after the body that start no request: an extra CRLF (as some clients send), a
    space, a TLS handshake's first bytes."""
    extra = draw(st.sampled_from([b"\r\n", b"\n", b" ", b"\x16\x03\x01\x02\x00\x01"]))
    return replace(request, body=request.body + extra)


def big_body(draw: st.DrawFn, request: Request) -> Request:
    """A body past uvicorn's 64 KiB high-water mark (reading pauses until the app reads)."""
    data = draw(st.binary(min_size=1, max_size=4)) * 17000
    lines = (*request.without(b"content-length"), b"Content-Length: %d" % len(data))
    return replace(request, headers=lines, body=data)


def more_hosts(draw: st.DrawFn, request: Request) -> Request:
    value = draw(st.sampled_from([b"localhost:8000", b"other", b""]))
    return request.with_headers(b"Host: " + value)


MUTATIONS: list[Mutation] = [
    no_host,
    length_again,
    length_odd,
    chunked,
    expect,
    upgrade,
    version,
    request_line,
    obs_fold,
    bare_lf,
    odd_value,
    odd_name,
    long_headers,
    more_hosts,
    junk,
    big_body,
]


@st.composite
def any_requests(draw: st.DrawFn) -> bytes:
    """A plain request, or (often) one with what makes it not plain."""
    request = draw(requests())
    count = draw(st.sampled_from([0, 0, 0, 1, 1, 2]))
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), min_size=count, max_size=count)):
        request = mutation(draw, request)
    return request.render()


WAITS = [0.31, 2.23, 4.57, 5.41, 9.77]
"""How long a client may pause (no sum of a few of them is 5 s, the deadline: no ties)."""


def silences() -> st.SearchStrategy[float]:
    return st.sampled_from([0.0] * 8 + WAITS)


def pieces(data: bytes, cuts: list[int]) -> tuple[bytes, ...]:
    """``data`` cut at ``cuts``, in chunks of one byte or more."""
    points = [0, *sorted(cuts), len(data)]
    return tuple(data[a:b] for a, b in itertools.pairwise(points) if b > a)


def timing(draw: st.DrawFn, chunks: tuple[bytes, ...]) -> dict[str, Any]:
    """How long the client is silent after each chunk and after the last."""
    waits = draw(st.lists(silences(), min_size=len(chunks), max_size=len(chunks)))
    linger, before = (draw(st.sampled_from([0.0, 0.0, *WAITS])) for _ in range(2))
    return {"waits": tuple(waits), "linger": linger, "before": before}


@st.composite
def streams(draw: st.DrawFn, timed: bool = False) -> Stream:
    """1 to 3 requests pipelined, perhaps cut short, in chunks; then the client goes or not."""
    data = b"".join(draw(st.lists(any_requests(), min_size=1, max_size=3)))
    if draw(st.integers(0, 5)) == 5:
        data = data[: draw(st.integers(1, len(data)))]  # the rest never comes
    chunks = pieces(data, draw(st.lists(st.integers(1, len(data)), max_size=6, unique=True)))
    gaps = tuple(draw(st.lists(st.booleans(), min_size=len(chunks), max_size=len(chunks))))
    eof = draw(st.booleans())
    return Stream(chunks, gaps, eof, **(timing(draw, chunks) if timed else {}))


@st.composite
def plain_streams(draw: st.DrawFn, timed: bool = False) -> Stream:
    """Plain requests alone (``LeanHTTP``'s own path), pipelined, cut anywhere."""
    requested = draw(st.lists(requests(), min_size=1, max_size=3))
    data = b"".join(request.render() for request in requested)
    chunks = pieces(data, draw(st.lists(st.integers(1, len(data)), max_size=8, unique=True)))
    gaps = tuple(draw(st.lists(st.booleans(), min_size=len(chunks), max_size=len(chunks))))
    eof = draw(st.booleans())
    return Stream(chunks, gaps, eof, **(timing(draw, chunks) if timed else {}))


@settings(
    max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(streams())
def test_lean_http_answers_any_byte_stream_as_h11_does(stream: Stream) -> None:
    assert_same(stream)


@settings(max_examples=200, deadline=None, database=None)
@given(plain_streams())
def test_plain_requests_in_any_chunking_are_answered_as_h11_answers_them(stream: Stream) -> None:
    assert_same(stream)


@settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.one_of(streams(timed=True), plain_streams(timed=True)))
def test_a_slow_client_is_cut_off_as_under_uvicorns_protocol_and_the_read_deadline(
    stream: Stream,
) -> None:
    """The same streams with the client silent for a while between chunks (on a loop whose
    clock the test moves): the connection closes (or not) when uvicorn's keep-alive timeout
    and mcpkit's read deadline would have closed it, or (where ``LeanHTTP`` is stricter on
    purpose, see ``STRICTER``; after a hand-over it is ReadDeadline again) the stricter rule."""
    assert_same(stream, or_as=stricter)


# -- examples -------------------------------------------------------------------------------

HEAD_200 = b"HTTP/1.1 200 OK\r\ndate: Thu, 01 Jan 2026 00:00:00 GMT\r\nserver: uvicorn\r\n"
JSON_POST = (
    b"POST /json HTTP/1.1\r\nHost: localhost:8000\r\ncontent-type: application/json\r\n"
    b"accept: application/json, text/event-stream\r\ncontent-length: 2\r\n\r\n{}"
)


def json_answer(path: str, length: int, extra: bytes = b"") -> bytes:
    data = b'{"method":"POST","path":"%s","length":%d}' % (path.encode(), length)
    head = b"content-type: application/json\r\ncontent-length: %d\r\n" % len(data)
    return HEAD_200 + head + extra + b"\r\n" + data


def test_a_json_post_is_answered_in_one_write_of_head_and_body() -> None:
    got = run(lean, Stream((JSON_POST,)))
    assert got.writes == [json_answer("/json", 2)]
    assert not got.closed
    assert got.seen[0]["scope"] == {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5000),
        "scheme": "http",
        "method": "POST",
        "root_path": "",
        "path": "/json",
        "raw_path": b"/json",
        "query_string": b"",
        "headers": [
            (b"host", b"localhost:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-length", b"2"),
        ],
    }
    assert got.seen[0]["body"] == b"{}"
    assert_same(Stream((JSON_POST,)))


def test_two_pipelined_posts_in_one_read_are_answered_in_order() -> None:
    second = JSON_POST.replace(b"/json", b"/parts").replace(b"2\r\n\r\n{}", b"3\r\n\r\n[1]")
    got = run(lean, Stream((JSON_POST + second,)))
    assert got.wire == json_answer("/json", 2) + json_answer("/parts", 3)
    assert [record["body"] for record in got.seen] == [b"{}", b"[1]"]
    assert_same(Stream((JSON_POST + second,)))


def test_a_body_split_across_three_reads_is_read_whole() -> None:
    post = JSON_POST.replace(b"2\r\n\r\n{}", b'11\r\n\r\n{"a":[1,2]}')
    stream = Stream((post[:-12], post[-12:-5], post[-5:]))
    got = run(lean, stream)
    assert got.wire == json_answer("/json", 11)
    assert got.seen[0]["body"] == b'{"a":[1,2]}'
    assert_same(stream)


def test_a_chunked_request_is_answered_as_h11_answers_it() -> None:
    post = (
        b"POST /json HTTP/1.1\r\nHost: localhost:8000\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"1\r\n{\r\n1\r\n}\r\n0\r\n\r\n"
    )
    got = run(lean, Stream((post,)))
    assert got.wire == json_answer("/json", 2) == run(reference, Stream((post,))).wire
    assert got.seen[0]["body"] == b"{}"
    assert_same(Stream((post,)))
    assert_same(Stream(tuple(post[at : at + 1] for at in range(len(post)))))  # byte by byte


def test_connection_close_is_answered_with_connection_close_and_the_connection_closed() -> None:
    post = JSON_POST.replace(b"Host:", b"Connection: close\r\nHost:")
    got = run(lean, Stream((post,)))
    assert got.wire == json_answer("/json", 2, b"Connection: close\r\n")
    assert got.closed
    assert_same(Stream((post,)))


POST_2 = b"POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
GET = b"GET /json HTTP/1.1\r\nHost: x\r\n\r\n"
EDGES = {
    # What h11 refuses at its first byte (a request line cannot start with a byte below 0x21):
    # a 400 at once, before the rest of the head comes.
    "a space first": Stream((b" ",)),
    "a TLS handshake": Stream((b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",)),
    "a CRLF after a body": Stream((POST_2 + b"\r\n",)),
    "an LF after a body": Stream((POST_2 + b"\n",)),
    # h11 takes a Content-Length of 20 digits at most.
    "a 21-digit Content-Length": Stream((POST_2.replace(b" 2\r", b" 000000000000000000002\r"),)),
    "a 21-digit Content-Length, second": Stream(
        (GET + POST_2.replace(b" 2\r", b" 000000000000000000002\r"),)
    ),
    "20 digits": Stream((POST_2.replace(b" 2\r", b" 00000000000000000002\r"),)),
    # Answers: h11 writes a Host header first; it refuses a 21-digit Content-Length.
    "an answer naming a Host": Stream((GET.replace(b"/json", b"/hosted"),)),
    "an answer with a 21-digit length": Stream((GET.replace(b"/json", b"/padded"),)),
    # The read deadline for a request that came in one read with the one before it: under
    # uvicorn's protocol its clock starts only with the next bytes that come.
    "a pipelined head, finished late": Stream(
        (GET + b"GET /json HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"), waits=(2.23, 4.57, 0.0)
    ),
    # The deadline of a first request's head runs from the connection's opening.
    "a first head begun late, finished late": Stream(
        (b"POST /json HTTP/1.1\r\n", b"Host: x\r\n\r\n"), waits=(4.57, 0.0), before=2.23
    ),
    # And: a 400 after an answer, bytes that end no head, heads about h11's 16 KiB limit.
    "a 400 after an answer": Stream((GET + b"POST /json HTTP/1.1\r\n\r\n",)),
    "a bare CR after a body": Stream((POST_2 + b"\r",)),
    "a head of 16 KiB and more, in two reads": Stream(
        (b"POST /json HTTP/1.1\r\nHost: x\r\nX-Long: " + b"v" * 16400, b"\r\n\r\n")
    ),
    "a head of 16 KiB and more, in one read": Stream(
        (b"POST /json HTTP/1.1\r\nHost: x\r\nX-Long: " + b"v" * 16400 + b"\r\n\r\n",)
    ),
    "a long head after an answer": Stream((GET + b"GET / HTTP/1.1\r\nX: " + b"v" * 16400,)),
    "an idle connection": Stream((GET,), linger=5.41),
    "a slow head": Stream((b"POST /json HTTP/1.1\r\n",), linger=5.41),
    "a slow body": Stream((POST_2[:-1], POST_2[-1:]), waits=(5.41, 0.0)),
}


@pytest.mark.parametrize("stream", EDGES.values(), ids=EDGES.keys())
def test_edges_are_answered_as_h11_answers_them(stream: Stream) -> None:
    assert_same(stream)


# Where the read deadline is stricter than uvicorn's protocol under ReadDeadline, on purpose:
# ReadDeadline sees a request only through data_received, so a request h11 parses from bytes
# already buffered (pipelined) gets no deadline for its body, and a body still coming after an
# early answer only the one its first piece set. The lean protocol holds every body to the
# documented rule: each piece restarts the clock, and a pause longer than the timeout (5 s
# here) closes the connection. Each stream, with what the app hears of its last request,
# whether the connection is closed, and the wire bytes (h11's differ: it keeps waiting).
STRICTER = {
    "a pipelined body that never comes": (
        Stream((GET + POST_2.replace(b"{}", b""),), linger=9.77),
        "http.disconnect",
        True,
    ),
    "a pipelined body, finished late": (
        Stream((GET + POST_2.replace(b"{}", b"{"), b"}"), waits=(5.41, 0.0)),
        "http.disconnect",
        True,
    ),
    "a body trickling in after an early answer, each piece in time": (
        Stream(
            (
                b"POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n[",
                b"1",
                b"2",
                b"]",
                GET,
            ),
            waits=(2.23, 2.23, 2.23, 0.0, 0.0),
        ),
        "complete",
        False,
    ),
}


@pytest.mark.parametrize("case", STRICTER.values(), ids=STRICTER.keys())
def test_every_body_is_held_to_the_read_deadline_pipelined_or_after_an_answer(
    case: tuple[Stream, str, bool],
) -> None:
    stream, end, closed = case
    got = run(lean, stream)
    assert got.seen[-1]["end"] == end
    assert got.closed is closed
    answered = got.wire.count(b"HTTP/1.1 200 OK\r\n")
    assert answered == len(got.seen) - (1 if closed else 0)


@pytest.mark.parametrize("case", STRICTER.values(), ids=STRICTER.keys())
def test_where_stricter_lean_http_serves_as_h11_under_the_stricter_deadline(
    case: tuple[Stream, str, bool],
) -> None:
    """The stricter rule is ReadDeadline's own, applied to every body (``BodyDeadline``): the
    timed property test takes it where the two differ."""
    stream = case[0]
    assert run(lean, stream) == run(stricter, stream) != run(reference, stream)


def test_mcpkit_run_has_uvicorn_serve_each_connection_with_lean_http() -> None:
    async def connection() -> Any:
        config = uvicorn.Config(App(), **uvicorn_settings("warning", 5), log_config=None)
        config.load()
        protocol: Any = config.http_protocol_class  # (typed as a class; here mcpkit's function)
        return protocol(config, ServerState(), {})  # as uvicorn makes each connection's

    assert isinstance(asyncio.run(connection()), LeanHTTP)
