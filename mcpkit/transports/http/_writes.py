"""One response, one send: the writes uvicorn makes for a response leave the process together.

uvicorn writes a response's head and its body to the socket separately, so a small JSON answer
costs two ``send`` system calls and, on loopback, often two wake-ups of the client (one for
the head, one for the body). :class:`HeldWrites` stands between uvicorn's protocol and the
connection's transport: what the protocol writes is held until its response is complete (then
it leaves at once, in one ``send``) or until the loop's next turn, whichever comes first, so a
streamed response (SSE) is never held back longer than a turn of the loop. The bytes on the
wire are the same; only how many system calls carry them changes.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HeldWrites"]


class HeldWrites:
    """``transport`` as ``protocol`` (uvicorn's) sees it: writes held as described above."""

    def __init__(self, transport: asyncio.WriteTransport, protocol: asyncio.BaseProtocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: list[bytes] = []
        self._loop = asyncio.get_running_loop()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if data:
            if not held:
                self._loop.call_soon(self.flush)  # at the latest at the loop's next turn
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

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)
