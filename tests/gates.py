"""A gate the blocking tools of the fuzz and fault apps wait behind until a test opens it."""

from __future__ import annotations

import asyncio
import threading

GATE_SECONDS = 30.0
"""How long a sync tool waits at most (a safety net: its worker thread cannot be cancelled)."""


class Gate:
    """Async tools wait on the event loop, sync tools in their worker threads."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.waiting: set[asyncio.Event] = set()

    async def wait(self) -> None:
        # A plain wait, no timeout: asyncio.wait_for (3.11) may swallow a cancellation that
        # arrives as the gate opens, and the tests need to see every cancellation.
        event = asyncio.Event()
        self.waiting.add(event)
        try:
            if not self.opened.is_set():
                await event.wait()
        finally:
            self.waiting.discard(event)

    def wait_here(self) -> None:
        """Wait in this (worker) thread."""
        self.opened.wait(GATE_SECONDS)

    def open(self) -> None:
        """Let every waiting tool go (call it on the loop the async tools wait on)."""
        self.opened.set()
        for event in list(self.waiting):
            event.set()
