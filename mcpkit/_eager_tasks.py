"""Tasks whose first step runs at once, in the caller's turn of the event loop.

A request read from stdio used to be answered in a task that the loop stepped a turn later; a
tool that never suspends (most async tools) could have answered at once.
:class:`EagerTaskStarter` runs a task's first step right away, inside a real task:
``asyncio.current_task()``, ``asyncio.timeout()``, ``TaskGroup``, cancellation and context
variables behave as in any task, and only what comes after the first suspension is left to the
loop.

- Python 3.12+ has this built in: ``Task(..., eager_start=True)``.
- Python 3.11 does it by hand, with a task made ahead of time: that needs interpreter
  internals, so it lives in :mod:`mcpkit._speedups`. Without that module, 3.11 starts tasks
  the ordinary way, as 3.10 does; only the first answer's latency changes.
- Python 3.10 (no ``context`` for ``create_task``) starts tasks the ordinary way.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

try:
    from mcpkit import _speedups
except ImportError:  # pragma: no cover - deleted: the public API starts every task
    _speedups = None  # type: ignore[assignment]

__all__ = ["EagerTaskStarter"]


class EagerTaskStarter:
    """Starts the tasks of one event loop, their first step run at once where this Python
    allows it (:mod:`mcpkit._speedups`' spare task on 3.11, when present)."""

    __slots__ = ("close", "prepare", "release", "start")

    start: Callable[[Coroutine[Any, Any, Any]], tuple[asyncio.Task[Any], bool]]
    """A task for the coroutine, its first step already run where this Python allows it, and
    whether that step finished the coroutine (the task then only has to take its result, after
    :meth:`release`; nobody needs to wait for it)."""
    release: Callable[[], None]
    """Let the tasks started since the last call run on (call it after writing)."""
    prepare: Callable[[], None]
    """Get ready to start the next task eagerly (call it when the loop has time)."""
    close: Callable[[], None]
    """No more tasks will be started."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        way: _Public | _speedups.SpareStarter | None = None
        if sys.version_info < (3, 12) and _speedups is not None:
            way = _speedups.spare_starter(loop)
        if way is None:
            way = _Public(loop)
        # The chosen way's own methods: no call in between on the per-request path.
        self.start, self.release, self.prepare = way.start, way.release, way.prepare
        self.close = way.close


class _Public:
    """Through the public API: Python 3.12's own eager start; before it, an ordinary task."""

    __slots__ = ("loop",)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def start(self, coro: Coroutine[Any, Any, Any]) -> tuple[asyncio.Task[Any], bool]:
        if sys.version_info >= (3, 12) and self.loop.get_task_factory() is None:
            task = asyncio.Task(coro, loop=self.loop, eager_start=True)  # pragma: no cover
            return task, task.done()  # pragma: no cover - Python 3.12+ (tested by its CI leg)
        return self.loop.create_task(coro), False  # a user's task factory makes the tasks

    def release(self) -> None:
        pass

    def prepare(self) -> None:
        pass

    def close(self) -> None:
        pass
