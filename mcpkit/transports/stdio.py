"""The stdio transport: newline-delimited compact JSON on stdin/stdout, framing only.

Nothing but protocol messages reaches stdout: the real stdout is kept for the protocol and
file descriptor 1 (and ``sys.stdout``) is pointed at stderr, so a tool's ``print()`` -- or a C
library's, or a child process's -- lands on stderr. Requests run concurrently; at most
``max_in_flight`` at once (each member of a batch counts). Reading pauses while the requests
waiting for a slot pass a byte budget, or while stdout is full because the client does not read
(backpressure both ways). Closing stdin, SIGTERM or SIGINT cancel what is running and return.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import selectors
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO

from mcpkit import _collector, _eager_tasks

try:
    from mcpkit import _speedups
except ImportError:  # pragma: no cover - deleted: reads take asyncio's own size
    _speedups = None  # type: ignore[assignment]
from mcpkit.app import App
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import Limits
from mcpkit.protocol.server import MAX_IN_FLIGHT, Server
from mcpkit.transports.stdio_out import FileWriter, PipeWriter, writer
from mcpkit.transports.warmup import WarmUp

__all__ = ["protect_stdout", "run_stdio", "serve_stdio"]

logger = logging.getLogger("mcpkit.stdio")

_HELD_BYTES = 64 * 1024  # answers held for one write past this leave at once (see _answer)
_PARK_AFTER = 64 * 1024  # requests waiting past this many bytes wait as lines (see _parked)


def protect_stdout() -> BinaryIO:
    """Keep the real stdout for the protocol; send everything else written to it to stderr."""
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_out


def run_stdio(
    app: App,
    *,
    limits: Limits | None = None,
    max_in_flight: int = MAX_IN_FLIGHT,
    stdout: BinaryIO | None = None,
) -> None:
    """Serve ``app`` on this process's stdin/stdout until stdin closes or a signal arrives.

    ``stdout`` is the protocol stream :func:`protect_stdout` returned, when the caller already
    protected stdout (before importing user code); by default this function protects it.
    """
    out = stdout if stdout is not None else protect_stdout()
    serving = serve_stdio(
        app, sys.stdin.buffer, out, limits=limits, max_in_flight=max_in_flight, owns_process=True
    )
    asyncio.run(serving)


async def serve_stdio(
    app: App | Server,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    limits: Limits | None = None,
    max_in_flight: int = MAX_IN_FLIGHT,
    owns_process: bool = False,
) -> None:
    """Serve ``app`` over the given binary streams (pipes, sockets or files), on behalf of
    ``app.options.stdio_principal`` (set before the reader and its tasks copy the context).
    A ``Server`` the caller built (and may reload, :meth:`Server.replace_app`) keeps its limits.
    ``owns_process``: this process does nothing else (``run_stdio``): the garbage collector is
    paused until the warm-up is done, then what is alive leaves its sight (``gc.freeze``, see
    ``warm_up`` and :mod:`mcpkit._collector`)."""
    server = app if isinstance(app, Server) else Server(app, limits=limits)
    with Server.acting_for(server.app.options.stdio_principal):
        await _serve(server, stdin, stdout, max_in_flight, owns_process)


async def _serve(
    server: Server, stdin: BinaryIO, stdout: BinaryIO, max_in_flight: int, freeze: bool
) -> None:
    if freeze:
        _collector.pause()
    try:
        await _serve_until_closed(server, stdin, stdout, max_in_flight, freeze)
    finally:
        _collector.resume()


async def _serve_until_closed(
    server: Server, stdin: BinaryIO, stdout: BinaryIO, max_in_flight: int, freeze: bool
) -> None:
    loop = asyncio.get_running_loop()
    await server.start()
    out = await writer(loop, stdout)
    done = loop.create_future()
    connection = _Connection(server, out, max_in_flight, on_close=lambda: _set(done))
    connection.warming.freeze = freeze
    out.changed = connection.start_waiting  # stdout filled up, or drained
    reading = await _reader(loop, stdin, connection)
    try:
        with _stop_on_signals(loop, connection.close):
            await done
    finally:  # cancelled from outside, too: start no more tasks, leave none idle
        connection.starter.close()
    await server.end_streams()
    await connection.session.cancel_all()
    await server.stop()
    if reading is not None:
        reading.close()
    await out.close()  # what was written must reach the client before the loop closes


class _Connection(asyncio.Protocol):
    """Splits stdin into messages and answers each request in its own task.

    Requests take slots of ``max_in_flight`` (a batch one per member it runs at once); past it
    they wait in order. Everything else (the client's answers to the server's own questions,
    notifications such as ``notifications/cancelled``) takes effect at once, in the order read,
    so a full house of tools waiting on ``ctx.elicit`` still hears its answers. Reading pauses
    only when the waiting requests pass a byte budget or stdout is full, so end-of-input is
    seen promptly otherwise.
    """

    def __init__(
        self,
        server: Server,
        out: PipeWriter | FileWriter,
        max_in_flight: int,
        on_close: Callable[[], None],
    ) -> None:
        self.server = server
        self.loop = asyncio.get_running_loop()
        self.out = out
        self.write = out.write
        self.session = server.session(self._send, transport="stdio", max_in_flight=max_in_flight)
        self.max_in_flight = max_in_flight
        self.on_close = on_close
        self.transport: asyncio.ReadTransport | None = None
        self.buffer = bytearray()
        self.skipping = False  # inside a line longer than the limit
        self.tasks: dict[asyncio.Task[None], int] = {}  # requests being answered: their slots
        self.used = 0  # slots taken
        # Past the limit: what ``Session.take`` made of each line and the line's size, or the
        # bare line past _PARK_AFTER bytes of them (see _parked).
        self.waiting: deque[tuple[Any, int] | bytes] = deque()
        self.waiting_bytes = 0
        self.paused = False  # reading paused: stdout is full, or too many request bytes wait
        self.starting = False  # starting waiting requests: their answers leave together...
        self.held: list[bytes] = []  # ...at the end of the pass, with no flush scheduled
        self.held_bytes = 0
        self.starter = _eager_tasks.EagerTaskStarter(self.loop)  # first steps run at once
        self.warming = WarmUp()  # compiled after the first answer, validators after the handshake
        self.closed = False

    async def _send(self, message: dict[str, Any]) -> None:
        self.write(jsonrpc.encode(message) + b"\n", False)

    def _reply(self, message: dict[str, Any]) -> None:
        self.write(jsonrpc.encode(message) + b"\n", True)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.starter.prepare()

    def data_received(self, data: bytes) -> None:
        if self.skipping:  # the rest of a line longer than the limit: drop it
            end = data.find(b"\n")
            if end < 0:
                return
            self.skipping = False
            data = data[end + 1 :]
        if not self.buffer and data.find(b"\n") == len(data) - 1:
            # One whole line, nothing held back: what a client waiting for each answer sends.
            if len(data) > 1 and not data.isspace():
                self._route(data[:-1])
        else:
            self.buffer += data
            self._take_lines()
        self.start_waiting()

    def _take_lines(self) -> None:
        end = self.buffer.rfind(b"\n") + 1
        if end:
            lines = bytes(self.buffer[:end]).split(b"\n")
            del self.buffer[:end]  # before any is routed: whatever happens, each line once
            for line in lines:
                if line and not line.isspace():
                    self._route(line)
        if len(self.buffer) > self.server.limits.max_bytes:
            self.buffer.clear()
            self.skipping = True
            self._reply(self.session.too_large())

    def _route(self, line: bytes) -> None:
        """Queue a request, take anything else at once (the session decides which)."""
        taken = self.session.take(line)
        if taken.slots:
            # A flood: past _PARK_AFTER its backlog waits as its bare lines (see _parked).
            self.waiting.append(line if self.waiting_bytes > _PARK_AFTER else (taken, len(line)))
            self.waiting_bytes += len(line)
            return
        if taken.cancels is not None:
            self._forget(taken.cancels)
        if taken.reply is not None:
            self._reply(taken.reply)

    def _forget(self, request_id: Any) -> None:
        """A request cancelled while it still waits for a slot is never started."""
        if not self.waiting:
            return
        kept: deque[Any] = deque()
        for item in self.waiting:
            if isinstance(item, bytes):
                if _names(item, request_id) and self._parked(item)[0].request_id == request_id:
                    self.waiting_bytes -= len(item)
                    continue
            elif item[0].request_id == request_id:
                self.waiting_bytes -= item[1]
                continue
            kept.append(item)
        self.waiting = kept

    def _parked(self, line: bytes) -> tuple[Any, int]:
        """A request that waited as its line (a flood's backlog), taken again: bytes cost the
        garbage collector nothing to walk, and a fraction of the memory of the parsed request
        with its id (~150 bytes a request less than a line kept with its id and size). It
        decoded once, so it decodes again, to the same request."""
        return self.session.take(line), len(line)

    def start_waiting(self) -> None:
        """Start waiting requests while there is room and stdout takes answers; then pause or
        resume reading."""
        if self.closed:
            return
        if self.waiting and self.used < self.max_in_flight and not self.out.full:
            self._start_some()
        self._flow()

    def _start_some(self) -> None:
        """Each request's first step runs at once: a tool that never suspends has answered
        when its task is made. The answers of one pass leave in one write, at its end."""
        workers = self.server.workers
        self.starting = True
        try:
            while self.waiting and not self.out.full:
                item = self.waiting.popleft()
                taken, size = self._parked(item) if isinstance(item, bytes) else item
                # A batch runs as wide as the room there is (at least one member at a time):
                # waiting for all its slots could wait for ever behind a listen stream.
                slots = min(taken.slots, self.max_in_flight - self.used)
                if slots < 1:
                    self.waiting.appendleft((taken, size))
                    break
                self.waiting_bytes -= size
                # More requests to start: a sync tool's result is not waited for in place.
                workers.busy(self.loop, bool(self.waiting))
                task, answered = self.starter.start(self._answer(taken.message, slots))
                if not answered:  # answered in its first step: nothing to track
                    self._track(task, slots)
                elif self.waiting:  # the next one starts at once too: one write for all
                    self.starter.prepare()
        finally:  # even when a first step raises SystemExit: earlier answers still leave
            workers.busy(self.loop, False)
            self.starting = False
            self._release_held()
            self.starter.release()  # what runs on, runs after the answers have left

    def _release_held(self) -> None:
        if self.held:
            self.write(b"".join(self.held), True)
            self.held.clear()
            self.held_bytes = 0

    def _flow(self) -> None:
        if self.transport is None:
            return
        hold = self.out.full or self.waiting_bytes > self.server.limits.max_bytes
        if hold and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        elif self.paused and not hold:
            self.paused = False
            with contextlib.suppress(RuntimeError):
                self.transport.resume_reading()

    def _track(self, task: asyncio.Task[None], slots: int) -> None:
        self.tasks[task] = slots
        self.used += slots
        task.add_done_callback(self._finished)

    async def _answer(self, message: Any, width: int) -> None:
        response = await self.session.handle(message, width=width)
        if response is not None:
            # Alone in flight (a client waiting for this answer): write it now. Under a flood
            # the answers of one loop turn leave together.
            data = jsonrpc.encode(response) + b"\n"
            if self.starting:
                self.held.append(data)
                self.held_bytes += len(data)
                if self.held_bytes > _HELD_BYTES:  # let stdout say whether it is full
                    self._release_held()
            else:
                self.write(data, len(self.tasks) <= 1)
            if not self.warming.done:
                self.warming.answered(self.loop, self.server.app, message, response)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.used -= self.tasks.pop(task, 0)
        if not self.closed:
            if not self.waiting:  # after an answer left: off the next one's path. Not in a
                self.starter.prepare()  # flood of waiting calls: a plain task resumes faster
            self.start_waiting()

    def eof_received(self) -> bool | None:
        self.close()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()

    def close(self) -> None:
        self.closed = True
        self.on_close()  # serve_stdio then closes the starter (it does so when cancelled too)


def _names(line: bytes, request_id: Any) -> bool:
    """Whether ``line`` may carry ``request_id`` (never false when it does): an integer id is
    written with its digits; a string one as its UTF-8 text unless the line has an escape."""
    if isinstance(request_id, str):
        text = request_id.encode("utf-8", "surrogatepass")
        return text in line or b"\\" in line
    return str(request_id).encode() in line


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _reader(
    loop: asyncio.AbstractEventLoop, stream: BinaryIO, connection: _Connection
) -> asyncio.BaseTransport | None:
    """Read with the loop where the stream allows it, else from a thread (regular files,
    ``/dev/null``: what epoll refuses)."""
    try:
        if not _pollable(stream.fileno()):
            _read_in_thread(loop, stream, connection)
            return None
        transport, _ = await loop.connect_read_pipe(lambda: connection, stream)
    except (ValueError, OSError):
        _read_in_thread(loop, stream, connection)
        return None
    if _speedups is not None:  # one read per message costs ~1 us instead of ~18 (see there)
        _speedups.small_reads(transport)
    return transport


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``. ``connect_read_pipe`` takes a character
    device such as ``/dev/null``, but epoll refuses it later, inside a loop callback, and the
    server would wait for input forever."""
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def _read_in_thread(
    loop: asyncio.AbstractEventLoop, stream: BinaryIO, connection: _Connection
) -> None:
    def pump() -> None:
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            loop.call_soon_threadsafe(connection.data_received, chunk)
        loop.call_soon_threadsafe(connection.close)

    threading.Thread(target=pump, name="mcpkit-stdin", daemon=True).start()


@contextlib.contextmanager
def _stop_on_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> Any:
    installed = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
