"""The stdio transport's output: a non-blocking writer on a pipe, a blocking one on a file.

Messages written in one turn of the event loop leave in one system call; ``full`` tells the
transport when the client stops reading (backpressure).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import BinaryIO

__all__ = ["FileWriter", "PipeWriter", "writer"]

logger = logging.getLogger("mcpkit.stdio")

_DRAIN_SECONDS = 10.0


async def writer(loop: asyncio.AbstractEventLoop, stream: BinaryIO) -> PipeWriter | FileWriter:
    """A non-blocking writer on a pipe; a plain blocking one on anything else (a file).

    Messages written in one turn of the event loop leave in one system call: under a flood of
    pipelined requests that is one write per batch of answers instead of one per answer.
    """
    writer = PipeWriter(loop)
    try:
        await loop.connect_write_pipe(lambda: writer, stream)
    except (ValueError, OSError):
        return FileWriter(stream)
    return writer


class PipeWriter(asyncio.Protocol):
    """Writes to a pipe without blocking; ``full`` from when the pipe's write buffer passes its
    high-water mark (the client does not read) until it has drained, ``changed`` told both times.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.WriteTransport = None  # type: ignore[assignment]
        self.pending: list[bytes] = []
        self.full = False
        self.changed: Callable[[], None] = lambda: None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def pause_writing(self) -> None:
        self.full = True
        logger.debug("stdout is full (the client is not reading): input paused")
        self.changed()

    def resume_writing(self) -> None:
        self.full = False
        logger.debug("stdout drained: input resumed")
        self.changed()

    def write(self, data: bytes, now: bool = False) -> None:
        if not self.pending and not now:
            self.loop.call_soon(self.flush)
        self.pending.append(data)
        if now:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return  # already written by a write(now=True)
        data, self.pending = b"".join(self.pending), []
        if not self.transport.is_closing():
            self.transport.write(data)

    async def close(self, timeout: float = _DRAIN_SECONDS) -> None:
        """Write out what is pending, wait (bounded) until the pipe has taken it all, close."""
        self.flush()
        deadline = self.loop.time() + timeout
        while self.transport.get_write_buffer_size() and self.loop.time() < deadline:
            if self.transport.is_closing():
                break
            await asyncio.sleep(0.01)
        self.transport.close()


class FileWriter:
    """Writes to a file, blocking: never full (a write returns when its bytes are out)."""

    full = False

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.changed: Callable[[], None] = lambda: None

    def write(self, data: bytes, now: bool = False) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.stream.write(data)
            self.stream.flush()

    async def close(self) -> None:
        """Everything was written when it was asked for; the caller owns the stream."""
