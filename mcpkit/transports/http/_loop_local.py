"""One object per event loop, kept for the thread that runs the loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["LoopLocal"]

T = TypeVar("T")


class LoopLocal(Generic[T]):
    """``get(loop)`` is the one ``T`` that ``make(loop)`` made for ``loop``, looked up in the
    calling thread (which runs that loop: a thread runs one loop at a time). A new loop in the
    thread gets a new one; whoever holds the old one keeps it. Until then the thread's slot
    keeps its last loop referenced."""

    def __init__(self, make: Callable[[asyncio.AbstractEventLoop], T]) -> None:
        self._make = make
        self._local = threading.local()

    def get(self, loop: asyncio.AbstractEventLoop) -> T:
        slot: tuple[asyncio.AbstractEventLoop, T] | None = getattr(self._local, "slot", None)
        if slot is None or slot[0] is not loop:
            slot = self._local.slot = (loop, self._make(loop))
        return slot[1]
