"""Speed-ups that lean on CPython's internals: every use of one in mcpkit is here, and only here.

Deleting this module changes no behaviour, only speed. Its two users import it optionally and
take the public-API path without it; ``tests/conftest.py``'s ``speedups`` fixture runs their
tests both ways. Each speed-up is feature-detected and applies only behind exact-type checks,
so a Python whose internals change loses the speed-up, not correctness.

- :func:`spare_starter`, for ``mcpkit._eager_tasks`` on Python 3.11 (3.12+ has ``eager_start``): a
  task made ahead of time (a *spare*) runs a request's first step at once. It makes the spare
  the current task with ``asyncio.tasks._enter_task``/``_leave_task`` and reads and clears a
  future's ``_asyncio_future_blocking`` flag, as ``asyncio.Task`` does; a new spare's own first
  step is taken off the loop's ready queue (``loop._ready``) and run at once (see
  ``_step_now``). Without it, 3.11 starts tasks the ordinary way, as 3.10 does: a request's
  first step runs a turn later.
- :func:`pydantic_core_extension`, for ``mcpkit._codec``: pydantic_core's compiled module (the
  JSON codec and ``ValidationError``) loaded without the package's ``__init__``, which imports
  ``core_schema`` (with ``fractions`` and ``decimal``: ~10-20 ms of a start-up that needs none of
  it). It leans on pydantic_core's private layout, not CPython's: the extension is
  ``pydantic_core._pydantic_core``, and the package ``__init__`` imports it from there (finding it
  in ``sys.modules``, the same module, so the same classes). Without it the package is imported.
- :func:`plain_loop`, :func:`idle` and :func:`has_ready`, for the worker hand-off in
  ``mcpkit._workers``: whether the loop has nothing to run, read from asyncio's ready queue
  (``loop._ready``) on asyncio's own loops only (``call_soon`` not overridden). Without them a
  sync tool's result always comes back through the loop's selector (as on uvloop).
- :func:`small_reads`, for the stdio transport: asyncio's read pipe asks ``os.read`` for
  256 KiB (``max_size``) per read. A buffer that large is over glibc's ``mmap`` threshold, so
  every read maps, shrinks and unmaps one (three system calls and a page fault: ~18 us per
  message on a slow VM, against ~1 us). Reads of 64 KiB, a pipe's default capacity, come from
  the heap. Without it every message pays that, as any asyncio stdio server does.

How a spare works: making a task costs more than answering a simple call, so one is made
ahead of time, after the previous answer has left; it waits, idle, for its request.
:meth:`SpareStarter.start` makes the spare the current task, steps the coroutine once in the
spare's context, and hands the rest to it; :meth:`SpareStarter.release` wakes the spares that
were handed work, once the caller has written its answers; :meth:`SpareStarter.prepare` makes
the next spare when the caller has time. The task's identity never changes: what the first
step saw as the current task is the task that runs the rest.
"""

from __future__ import annotations

import _imp
import asyncio
import collections
import contextvars
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = [
    "SpareStarter",
    "has_ready",
    "idle",
    "plain_loop",
    "pydantic_core_extension",
    "small_reads",
    "spare_starter",
]

# ----------------------------------------------------------------- eager start (Python 3.11)

_enter_task: Any = getattr(asyncio.tasks, "_enter_task", None)
_leave_task: Any = getattr(asyncio.tasks, "_leave_task", None)
# A task's ``context`` (and ``Task.cancelling``) are new in 3.11.
_CAN_SPARE = sys.version_info >= (3, 11) and callable(_enter_task) and callable(_leave_task)


def spare_starter(loop: asyncio.AbstractEventLoop) -> SpareStarter | None:
    """A starter that runs a task's first step at once, or None where this Python lacks what
    it needs."""
    return SpareStarter(loop) if _CAN_SPARE else None


class SpareStarter:
    """Python 3.11: a task made ahead of time takes the next coroutine, first step run at once.

    Only one spare is kept: a second coroutine started before :meth:`release` gets an
    ordinary task (a flood of pipelined requests needs throughput, not the first answer's
    latency).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.spare: _Spare | None = None
        self.handed: list[_Spare] = []
        self.replace = False  # a spare was used up by a coroutine that has already finished
        self.closed = False

    def start(self, coro: Coroutine[Any, Any, Any]) -> tuple[asyncio.Task[Any], bool]:
        """As ``EagerTaskStarter.start``: the spare's task, first step run, and whether it
        finished."""
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
        """Wake the spares handed work since the last call (call it after writing)."""
        for spare in self.handed:
            spare.wake()
        self.handed.clear()
        if self.replace:  # nothing runs on in a worker thread that needs the GIL now
            self.replace = False
            self._make()  # its first step runs in the next turn, before anything read then

    def prepare(self) -> None:
        """Make the next spare (call it when the loop has time), its first step run at once:
        a caller such as a done callback may share its turn with the next request's read."""
        spare = self._make()
        if spare is not None:
            _step_now(self.loop, spare.task)  # to its wait for a hand-off

    def _make(self) -> _Spare | None:
        # Not always in release(): a sync tool's worker thread needs the GIL right after the
        # first step, and making a task would take it. With a task factory installed, the
        # user's factory makes every task (the ordinary way), as before.
        if self.spare is None and not self.closed and self.loop.get_task_factory() is None:
            self.spare = _Spare(self.loop)
            return self.spare
        return None

    def close(self) -> None:
        """No more tasks will be started: the idle spare is cancelled."""
        self.closed = True
        self.release()
        if self.spare is not None:
            self.spare.task.cancel()
            self.spare = None


def _step_now(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    """Run now the step asyncio has just scheduled for ``task`` (the ready queue's last
    callback), when no task is running; else leave it to the loop.

    For a new spare's first step (to its wait for a hand-off): made by a done callback (after a
    request that did not answer in its first step), in the turn that also reads the next request
    (a quick client), it would sit in the ready queue behind that read. The worker hand-off's
    probe (:func:`idle`) then sees a loop with work to do and sends that request's sync tool
    through the pool and the selector instead of waiting for it in place, so it too does not
    answer in its first step, and the next spare is again made by a done callback: after one
    such call every later one took the slow path (after a flood: five ``futex`` and four
    ``epoll_wait`` calls per call instead of one and one). The step runs in its task's context,
    as the loop would run it; only its turn changes."""
    ready = getattr(loop, "_ready", None)
    if type(ready) is not collections.deque or not ready:
        return
    handle: Any = ready[-1]
    if type(handle) is not asyncio.Handle or handle.cancelled():
        return
    if getattr(getattr(handle, "_callback", None), "__self__", None) is not task:
        return
    if asyncio.current_task(loop) is not None:  # stepping another task inside one would fail
        return
    ready.pop()
    handle._run()


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


# -------------------------------------------------------------- the worker hand-off's probes

_STOCK = (asyncio.BaseEventLoop.call_soon, asyncio.BaseEventLoop.call_soon_threadsafe)


def plain_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether ``loop`` schedules callbacks as asyncio's own loops do, so that an empty ready
    queue means it has nothing to run and the callbacks a tool schedules show up there."""
    kind = type(loop)
    return (
        isinstance(loop, asyncio.BaseEventLoop)
        and (kind.call_soon, kind.call_soon_threadsafe) == _STOCK
        and type(getattr(loop, "_ready", None)) is collections.deque
    )


def idle(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether a loop :func:`plain_loop` accepted has no callback ready to run."""
    return type(ready := getattr(loop, "_ready", None)) is collections.deque and not ready


def has_ready(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether a loop :func:`plain_loop` accepted has callbacks ready to run."""
    return bool(getattr(loop, "_ready", None))


# ------------------------------------------------------------------- the read size of a pipe

READ_SIZE = 64 * 1024  # a pipe's default capacity, under glibc's mmap threshold (128 KiB)
_READ_PIPE: Any = getattr(getattr(asyncio, "unix_events", None), "_UnixReadPipeTransport", None)


def small_reads(transport: asyncio.BaseTransport) -> bool:
    """Make asyncio's own read-pipe transport read at most :data:`READ_SIZE` bytes at a time;
    whether it applied (not on another loop's transport, nor where ``max_size`` is gone)."""
    if _READ_PIPE is None or type(transport) is not _READ_PIPE:
        return False
    if type(getattr(transport, "max_size", None)) is not int:
        return False
    transport.max_size = min(transport.max_size, READ_SIZE)  # type: ignore[attr-defined]
    return True


# ------------------------------------------------- pydantic_core without its package __init__

_EXTENSION = "pydantic_core._pydantic_core"


def pydantic_core_extension() -> types.ModuleType | None:
    """``pydantic_core._pydantic_core``, loaded without running ``pydantic_core/__init__.py``;
    ``None`` when the package is already imported or is not laid out that way (the caller then
    imports the package). When the package is imported later, its ``__init__`` finds this very
    module in ``sys.modules``, and :class:`_Attach` sets the package's ``_pydantic_core``.

    Loaded on first use (``mcpkit._codec``), so another thread may be importing the package at
    the same time (the warm-up's compile thread, a tool): loading the extension twice would make
    two ``ValidationError`` classes. So the check and the load hold the interpreter's import
    lock, which that thread needs to find the package and its extension; ``datetime``, the one
    module the extension's initialisation imports, is imported first, outside it (else a thread
    importing ``datetime`` meanwhile would hold its module lock and wait for the import lock)."""
    import datetime  # noqa: F401 - see above

    _imp.acquire_lock()
    try:
        return _load_extension()
    finally:
        _imp.release_lock()


def _load_extension() -> types.ModuleType | None:
    if "pydantic_core" in sys.modules or _EXTENSION in sys.modules:
        return None
    package = importlib.util.find_spec("pydantic_core")  # finds it, runs nothing
    places = None if package is None else package.submodule_search_locations
    spec = None if places is None else importlib.machinery.PathFinder.find_spec(_EXTENSION, places)
    if spec is None or type(spec.loader) is not importlib.machinery.ExtensionFileLoader:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_EXTENSION] = module
    try:
        spec.loader.exec_module(module)
    except Exception:  # the package import will raise it again, with its own message
        del sys.modules[_EXTENSION]
        return None
    sys.meta_path.insert(0, _Attach(module))
    return module


class _Attach:
    """A ``sys.meta_path`` finder for the ``pydantic_core`` package alone, once: the spec the
    other finders give, whose loader then sets the package's ``_pydantic_core`` attribute (an
    import that finds a submodule in ``sys.modules`` does not set it)."""

    def __init__(self, extension: types.ModuleType) -> None:
        self.extension = extension

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "pydantic_core":
            return None
        sys.meta_path.remove(self)
        spec: Any = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _Attaching(spec.loader, self.extension)
        return spec


class _Attaching:
    """The package's own loader, that sets ``_pydantic_core`` before running ``__init__`` and
    then puts itself back out of the way (the module's loader is the package's own)."""

    def __init__(self, loader: Any, extension: types.ModuleType) -> None:
        self.loader = loader
        self.extension = extension

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = module.__spec__.loader = self.loader  # type: ignore[union-attr]
        setattr(module, "_pydantic_core", self.extension)  # noqa: B010
        self.loader.exec_module(module)
