"""Tasks whose first step runs at once, in the caller's turn of the event loop.

A request read from stdio used to be answered in a task that the loop stepped a turn later; a
tool that never suspends (most async tools) could have answered at once. :class:`Starter` runs
a task's first step right away, inside a real task: ``asyncio.current_task()``,
``asyncio.timeout()``, ``TaskGroup``, cancellation and context variables behave as in any task,
and only what comes after the first suspension is left to the loop.

- Python 3.12+ has this built in: ``Task(..., eager_start=True)``.
- Python 3.11 does it by hand. Making a task costs more than answering a simple call, so one
  task is made ahead of time, after the previous answer has left (a *spare*: it waits, idle, for
  its request). :meth:`Starter.start` makes the spare the current task, steps the coroutine once
  in the spare's context, and hands the rest to it; :meth:`Starter.release` wakes the spares
  that were handed work, once the caller has written its answers; :meth:`Starter.prepare`
  makes the next spare when the caller has time. The task's identity never changes: what the
  first step saw as the current task is the task that runs the rest.
- Python 3.10 (no ``context`` for ``create_task``) starts tasks the ordinary way.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import types
from asyncio.tasks import _enter_task, _leave_task
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["Starter"]


class _Starter:
    """Starts tasks the ordinary way (Python 3.10); the base of the others."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def start(self, coro: Coroutine[Any, Any, Any]) -> tuple[asyncio.Task[Any], bool]:
        """A task for ``coro``, its first step already run where this Python allows it, and
        whether that step finished the coroutine (the task then only has to take its result,
        after :meth:`release`; nobody needs to wait for it)."""
        return self.loop.create_task(coro), False  # pragma: no cover - Python 3.10 (CI leg)

    def release(self) -> None:
        """Let the tasks started since the last call run on (call it after writing)."""

    def prepare(self) -> None:
        """Get ready to start the next task eagerly (call it when the loop has time)."""

    def close(self) -> None:
        """No more tasks will be started."""


class _NativeStarter(_Starter):
    """Python 3.12+: the event loop's own eager start."""

    def start(  # pragma: no cover - Python 3.12+ only (tested by its CI leg)
        self, coro: Coroutine[Any, Any, Any]
    ) -> tuple[asyncio.Task[Any], bool]:
        if sys.version_info >= (3, 12) and self.loop.get_task_factory() is None:
            task = asyncio.Task(coro, loop=self.loop, eager_start=True)
            return task, task.done()
        return self.loop.create_task(coro), False  # a user's task factory makes the tasks


class _SpareStarter(_Starter):
    """Python 3.11: a task made ahead of time takes the next coroutine, first step run at once.

    Only one spare is kept: a second coroutine started before :meth:`release` gets an
    ordinary task (a flood of pipelined requests needs throughput, not the first answer's
    latency).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.spare: _Spare | None = None
        self.handed: list[_Spare] = []
        self.replace = False  # a spare was used up by a coroutine that has already finished
        self.closed = False

    def start(self, coro: Coroutine[Any, Any, Any]) -> tuple[asyncio.Task[Any], bool]:
        spare, self.spare = self.spare, None
        if spare is None or spare.task.cancelling() or spare.task.done():  # type: ignore[attr-defined]
            # No spare, or one that others cancel (asyncio.all_tasks() lists it; the
            # cancellation may not have landed yet): the ordinary way.
            return self.loop.create_task(coro), False
        if self.loop.get_task_factory() is not None:  # installed since: it makes the tasks
            spare.task.cancel()
            return self.loop.create_task(coro), False
        if asyncio.current_task(self.loop) is not None:  # inside a task: the ordinary way
            self.spare = spare
            return self.loop.create_task(coro), False
        handoff = spare.handoff
        handoff.coro = coro
        _enter_task(self.loop, spare.task)
        try:
            spare.context.run(handoff.step)
        finally:
            _leave_task(self.loop, spare.task)
        waited = handoff.waited
        if not handoff.done and getattr(waited, "_asyncio_future_blocking", False):
            # It waits for a future (a worker thread's result, say): wake the task when that
            # is done, not before. Waking it now would keep the GIL from the worker.
            waited._asyncio_future_blocking = False
            waited.add_done_callback(spare.wake)
            return spare.task, False
        self.handed.append(spare)
        if handoff.done:
            self.replace = True
        return spare.task, handoff.done

    def release(self) -> None:
        for spare in self.handed:
            spare.wake()
        self.handed.clear()
        if self.replace:  # nothing runs on in a worker thread that needs the GIL now
            self.replace = False
            self.prepare()

    def prepare(self) -> None:
        # Not always in release(): a sync tool's worker thread needs the GIL right after the
        # first step, and making a task would take it. With a task factory installed, the
        # user's factory makes every task (the ordinary way), as before.
        if self.spare is None and not self.closed and self.loop.get_task_factory() is None:
            self.spare = _Spare(self.loop)

    def close(self) -> None:
        self.closed = True
        self.release()
        if self.spare is not None:
            self.spare.task.cancel()
            self.spare = None


if sys.version_info >= (3, 12):
    Starter: type[_Starter] = _NativeStarter
elif sys.version_info >= (3, 11):
    Starter = _SpareStarter
else:  # pragma: no cover - Python 3.10
    Starter = _Starter


class _Handoff:
    """A coroutine given to a spare, and the outcome of its first step."""

    __slots__ = ("coro", "done", "error", "result", "waited")

    def __init__(self) -> None:
        self.coro: Coroutine[Any, Any, Any] | None = None
        self.done = False
        self.waited: Any = None  # what the first step yielded: the future it waits for
        self.result: Any = None
        self.error: BaseException | None = None

    def step(self) -> None:
        assert self.coro is not None
        try:
            self.waited = self.coro.send(None)
        except StopIteration as stop:
            self.done, self.result = True, stop.value
        except BaseException as exc:  # the task raises it, as it would have
            self.done, self.error = True, exc


class _Spare:
    """An idle task, waiting for its :class:`_Handoff`."""

    __slots__ = ("context", "handoff", "slot", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.slot: asyncio.Future[None] = loop.create_future()
        self.handoff = _Handoff()
        self.context = contextvars.copy_context()
        body = _spare_body(self.slot, self.handoff)
        body.send(None)  # to its first ``yield``: a throw from the task lands inside it
        # As create_task would (no task factory: prepare() checked), without its wrapper.
        self.task: asyncio.Task[Any] = asyncio.Task(body, loop=loop, context=self.context)  # type: ignore[call-arg]

    def wake(self, _: object = None) -> None:
        if not self.slot.done():  # a cancelled task has woken already
            self.slot.set_result(None)


@types.coroutine
def _spare_body(slot: asyncio.Future[None], handoff: _Handoff) -> Generator[Any, Any, Any]:
    """The spare task's coroutine: wait for the hand-off, then take over from its first step.

    What is thrown in is handled after its ``except`` block, not inside it: the coroutine runs
    on there, and must not see the exception as the one being handled (``sys.exc_info()``,
    the ``__context__`` of what it raises later).
    """
    thrown: BaseException | None = None
    try:
        yield  # primed before the task exists; the task's first step resumes here
        yield from slot
    except BaseException as exc:  # cancelled (or thrown into) before it took over
        if handoff.coro is None or handoff.done:
            raise  # idle (the server is closing), or the coroutine had already ended
        thrown = exc
    if thrown is not None:
        assert handoff.coro is not None
        if isinstance(thrown, asyncio.CancelledError) and _cancel(handoff.waited, thrown):
            # As a task cancels what it waits for: the coroutine wakes to find it cancelled.
            thrown = None
            return (yield from handoff.coro.__await__())
        return (yield from _thrown(handoff.coro, thrown))
    if handoff.error is not None:
        raise handoff.error
    if handoff.done:
        return handoff.result
    assert handoff.coro is not None
    waited = handoff.waited
    if waited is None or (_is_future(waited) and waited.done()):
        return (yield from handoff.coro.__await__())  # woken by what it waited for: go on
    return (yield from _resume(handoff.coro, waited))


def _is_future(waited: Any) -> bool:
    return getattr(waited, "_asyncio_future_blocking", None) is not None


def _cancel(waited: Any, cancelled: asyncio.CancelledError) -> bool:
    """Cancel what the coroutine waits for, with the cancellation's message, as a task does."""
    cancel = getattr(waited, "cancel", None)
    return cancel is not None and bool(cancel(*cancelled.args[:1]))


@types.coroutine
def _resume(coro: Coroutine[Any, Any, Any], waited: Any) -> Generator[Any, Any, Any]:
    """Hand what the coroutine waits for to the task, then let the coroutine run on."""
    try:
        yield waited
    except BaseException as exc:  # passed on below, outside this block (see _spare_body)
        thrown = exc
    else:
        return (yield from coro.__await__())
    return (yield from _thrown(coro, thrown))


@types.coroutine
def _thrown(coro: Coroutine[Any, Any, Any], exc: BaseException) -> Generator[Any, Any, Any]:
    """Throw ``exc`` into the coroutine where it waits, as a task would, and let it run on."""
    try:
        waited = coro.throw(exc)
    except StopIteration as stop:
        return stop.value
    finally:
        del exc  # no reference cycle through the traceback while the coroutine runs on
    return (yield from _resume(coro, waited))
