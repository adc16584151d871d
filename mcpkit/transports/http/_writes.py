"""One response, one send: the writes uvicorn makes for a response leave the process together.

uvicorn writes a response's head and its body to the socket separately, so a small JSON answer
costs two ``send`` system calls and, on loopback, often two wake-ups of the client (one for
the head, one for the body). :class:`HeldWrites` stands between uvicorn's protocol and the
connection's transport: what the protocol writes is held until its response is complete (then
it leaves at once, in one ``send``) or until the loop's next turn, whichever comes first, so a
streamed response (SSE) is never held back longer than a turn of the loop. The bytes on the
wire are the same; only how many system calls carry them changes. The next-turn flush is one
callback per loop and turn for every connection holding writes (:class:`_NextTurn`), not one
per response.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import Any

from mcpkit.transports.http._loop_local import LoopLocal

__all__ = ["HeldWrites"]

logger = logging.getLogger("mcpkit.http")


class HeldWrites:
    """``transport`` as ``protocol`` (uvicorn's) sees it: writes held as described above."""

    # The rest of the transport's methods are its own, bound here: no ``__getattr__`` (a class
    # with one makes every attribute read of its instances, uvicorn's included, a slow lookup
    # that the interpreter cannot specialise: ~10,000 instructions a request).
    is_closing: Callable[[], bool]
    get_extra_info: Callable[..., Any]
    set_protocol: Callable[[asyncio.BaseProtocol], None]
    get_protocol: Callable[[], asyncio.BaseProtocol]
    is_reading: Callable[[], bool]
    pause_reading: Callable[[], None]
    resume_reading: Callable[[], None]
    can_write_eof: Callable[[], bool]
    get_write_buffer_size: Callable[[], int]
    get_write_buffer_limits: Callable[[], tuple[int, int]]
    set_write_buffer_limits: Callable[..., None]

    def __init__(self, transport: asyncio.WriteTransport, protocol: asyncio.BaseProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: list[bytes] = []
        self._loop = asyncio.get_running_loop()
        self._next_turn = _next_turns.get(self._loop)
        for name in _OWN:
            method = getattr(transport, name, None)
            if method is not None:
                setattr(self, name, method)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if data:
            if not held:
                self._next_turn.add(self)  # flushed at the latest at the loop's next turn
            held.append(bytes(data))
        cycle = getattr(self._protocol, "cycle", None)
        if held and (cycle is None or cycle.response_complete):
            self.flush()

    def flush(self) -> None:
        """Write what is held, in one piece."""
        held = self._held
        if held:
            self._held = []
            if len(held) == 1:
                self._transport.write(held[0])
            else:  # one send (asyncio joins them; from 3.12 it hands them to sendmsg)
                self._transport.writelines(held)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held = []  # (what abort() means: the buffered data is lost)
        self._transport.abort()


_OWN = (
    "is_closing",
    "get_extra_info",
    "set_protocol",
    "get_protocol",
    "is_reading",
    "pause_reading",
    "resume_reading",
    "can_write_eof",
    "get_write_buffer_size",
    "get_write_buffer_limits",
    "set_write_buffer_limits",
)
"""The transport's methods :class:`HeldWrites` hands on as they are."""


class _NextTurn:
    """The connections of one loop that hold writes, flushed together at its next turn."""

    def __init__(self) -> None:
        self.holding: list[HeldWrites] = []
        self.context = contextvars.Context()  # the flush runs in no request's context

    def add(self, writes: HeldWrites) -> None:
        if not self.holding:
            writes._loop.call_soon(self.flush, context=self.context)
        self.holding.append(writes)

    def flush(self) -> None:
        holding, self.holding = self.holding, []
        for writes in holding:
            try:
                writes.flush()  # (most answered in the turn they began: nothing left)
            except Exception:  # one connection's failure is not the others'
                logger.exception("a held response write failed")


_next_turns = LoopLocal(lambda loop: _NextTurn())  # looked up once per connection
