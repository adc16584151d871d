"""Tasks started with their first step run at once (``mcpkit._eager_tasks``).

The stdio transport answers each request in such a task. Whatever the Python version does to
get there (3.12's own eager tasks, 3.11's spare task from ``mcpkit._speedups``, an ordinary
task on 3.10 or without that module), code inside must see an ordinary task: the same current
task before and after it suspends, working timeouts and task groups, its own context,
cancellation where it waits, its result or its exception. Each test runs with and without
``mcpkit._speedups``.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

import pytest

from mcpkit._eager_tasks import EagerTaskStarter

T = TypeVar("T")

pytestmark = pytest.mark.usefixtures("speedups")  # each test runs with and without them


@pytest.fixture
def eager(speedups: bool) -> bool:
    """Whether the first step runs before ``start`` returns (from a loop callback, after
    prepare): Python's own eager start (3.12+), or the spare task of ``mcpkit._speedups``."""
    return sys.version_info >= (3, 12) or (speedups and sys.version_info >= (3, 11))


var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")


def run(main: Callable[[asyncio.AbstractEventLoop, EagerTaskStarter], Coroutine[Any, Any, T]]) -> T:
    async def body() -> T:
        loop = asyncio.get_running_loop()
        starter = EagerTaskStarter(loop)
        starter.prepare()
        try:
            return await main(loop, starter)
        finally:
            starter.close()

    return asyncio.run(body())


async def in_callback(fn: Callable[[], T]) -> T:
    """Call ``fn`` from a loop callback, where the transport starts its tasks (no task is
    current there)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def call() -> None:
        try:
            done.set_result(fn())
        except BaseException as exc:
            done.set_exception(exc)

    loop.call_soon(call)
    return await done


def start_and_release(starter: EagerTaskStarter, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    task, _ = starter.start(coro)
    starter.release()
    return task


def test_the_first_step_runs_before_start_returns(eager: bool) -> None:
    steps: list[str] = []

    async def work() -> int:
        steps.append("first")
        await asyncio.sleep(0)
        steps.append("rest")
        return 7

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        def start() -> asyncio.Task[int]:
            task, finished = starter.start(work())
            assert steps == (["first"] if eager else [])
            assert not finished  # it suspended
            starter.release()
            return task

        task = await in_callback(start)
        assert await task == 7
        assert steps == ["first", "rest"]

    run(main)


def test_a_call_that_never_suspends_is_answered_in_the_first_step(eager: bool) -> None:
    answered: list[int] = []

    async def work() -> int:
        answered.append(3)
        return 3

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        def start() -> tuple[asyncio.Task[int], bool, list[int]]:
            task, finished = starter.start(work())
            then = list(answered)  # what had been answered when start returned
            starter.release()
            return task, finished, then

        task, finished, then = await in_callback(start)
        assert then == ([3] if eager else [])
        assert finished == eager
        assert await task == 3  # the task still has the result

    run(main)


def test_the_current_task_is_the_same_task_before_and_after_suspending() -> None:
    seen: list[asyncio.Task[Any] | None] = []

    async def work(later: asyncio.Future[str]) -> str:
        seen.append(asyncio.current_task())
        await asyncio.sleep(0)
        seen.append(asyncio.current_task())
        value = await later
        seen.append(asyncio.current_task())
        return value

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        later: asyncio.Future[str] = loop.create_future()
        task = await in_callback(lambda: start_and_release(starter, work(later)))
        while len(seen) < 2:  # until the task waits for ``later``
            await asyncio.sleep(0)
        later.set_result("done")
        assert await task == "done"
        assert seen == [task, task, task]

    run(main)


def test_a_spare_made_in_a_callback_leaves_nothing_ready_and_still_works(eager: bool) -> None:
    """The transport makes the next spare in a done callback, in the turn that may also read the
    next request: nothing of it may wait in the ready queue, where the worker hand-off would take
    it for work the loop has to do (and not wait in place for that request's sync tool)."""
    seen: list[asyncio.Task[Any] | None] = []

    async def work(later: asyncio.Future[str]) -> str:
        seen.append(asyncio.current_task())
        value = await later
        seen.append(asyncio.current_task())
        return value

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        starter.close()  # the one ``run`` made from inside a task: a fresh starter instead
        fresh = EagerTaskStarter(loop)

        def prepare() -> int:
            fresh.prepare()
            return len(loop._ready)  # type: ignore[attr-defined]

        assert await in_callback(prepare) == 0
        later: asyncio.Future[str] = loop.create_future()

        def start() -> tuple[asyncio.Task[str], bool, list[asyncio.Task[Any] | None]]:
            task, finished = fresh.start(work(later))
            fresh.release()
            return task, finished, list(seen)  # what the first step saw when start returned

        task, finished, then = await in_callback(start)
        assert not finished
        assert then == ([task] if eager else [])
        later.set_result("done")
        assert await task == "done"
        assert seen == [task, task]
        fresh.close()

    run(main)


def test_a_timeout_begun_in_the_first_step_fires() -> None:
    async def work() -> str:
        try:
            await asyncio.wait_for(asyncio.sleep(10), timeout=0.01)
        except asyncio.TimeoutError:
            return "timed out"
        return "slept"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work()))
        assert await task == "timed out"

    run(main)


def test_a_timeout_scope_and_a_task_group_work_in_the_first_step() -> None:
    async def child(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    async def work() -> list[int]:
        timeout = getattr(asyncio, "timeout", None)
        task_group = getattr(asyncio, "TaskGroup", None)
        if timeout is None or task_group is None:  # both new in 3.11: gather does the same
            return list(await asyncio.gather(child(1), child(2)))
        async with timeout(5), task_group() as group:
            tasks = [group.create_task(child(n)) for n in (1, 2)]
        return [t.result() for t in tasks]

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work()))
        assert await task == [2, 4]

    run(main)


def test_context_variables_belong_to_the_task() -> None:
    async def work() -> tuple[str, str]:
        before = var.get()
        var.set("inside")
        await asyncio.sleep(0)
        return before, var.get()

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work()))
        assert await task == ("unset", "inside")
        assert var.get() == "unset"  # nothing leaked into the caller's context

    run(main)


def test_two_started_in_one_turn_both_run() -> None:
    async def work(n: int) -> int:
        await asyncio.sleep(0)
        return n

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        def start() -> list[asyncio.Task[int]]:
            tasks = [starter.start(work(1))[0], starter.start(work(2))[0]]
            starter.release()
            return tasks

        tasks = await in_callback(start)
        assert [await t for t in tasks] == [1, 2]
        assert tasks[0] is not tasks[1]

    run(main)


def test_started_inside_a_task_it_still_runs() -> None:
    async def work() -> str:
        await asyncio.sleep(0)
        return "ok"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = start_and_release(starter, work())  # from this task, not a callback
        assert await task == "ok"

    run(main)


def test_a_result_from_a_worker_thread_comes_through() -> None:
    async def work(loop: asyncio.AbstractEventLoop) -> int:
        return await loop.run_in_executor(None, lambda: 6 * 7)

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work(loop)))
        assert await task == 42

    run(main)


def test_an_exception_in_the_first_step_is_the_tasks() -> None:
    async def work() -> None:
        raise ValueError("bad input")

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work()))
        with pytest.raises(ValueError, match="bad input"):
            await task

    run(main)


def test_an_exception_after_suspending_is_the_tasks() -> None:
    async def work() -> None:
        await asyncio.sleep(0)
        raise KeyError("later")

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work()))
        with pytest.raises(KeyError, match="later"):
            await task

    run(main)


def cancellable(
    loop: asyncio.AbstractEventLoop, seen: list[str]
) -> tuple[asyncio.Future[str], Callable[[], Coroutine[Any, Any, str]]]:
    waited: asyncio.Future[str] = loop.create_future()

    async def work() -> str:
        try:
            return await waited
        except asyncio.CancelledError:
            seen.append("cancelled at its await")
            raise

    return waited, work


@pytest.mark.parametrize("when", ["in the same turn", "a turn later"])
def test_cancelling_cancels_what_the_task_waits_for(when: str, eager: bool) -> None:
    seen: list[str] = []

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        waited, work = cancellable(loop, seen)

        def start() -> asyncio.Task[str]:
            task = start_and_release(starter, work())
            if when == "in the same turn":
                assert task.cancel()
            return task

        task = await in_callback(start)
        if when == "a turn later":
            await asyncio.sleep(0)
            assert task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()
        assert waited.cancelled() == started

    # An ordinary task (3.10) cancelled before its first step never runs at all.
    started = eager or when == "a turn later"
    run(main)
    assert seen == (["cancelled at its await"] if started else [])


def test_cancelling_a_task_that_yielded_to_the_loop_reaches_the_coroutine(eager: bool) -> None:
    seen: list[str] = []

    async def work() -> str:
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "not cancelled"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        def start() -> asyncio.Task[str]:
            task = start_and_release(starter, work())
            task.cancel()
            return task

        task = await in_callback(start)
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main)
    assert seen == (["cancelled"] if eager else [])  # 3.10: cancelled before it began


async def cancelled_at_once(
    starter: EagerTaskStarter, coro: Coroutine[Any, Any, str], value: str, eager: bool
) -> None:
    """Start ``coro``, cancel its task in the same turn, and expect ``value`` from it: its
    first step ran, so the coroutine hears of the cancellation and may swallow it. (An
    ordinary task, on 3.10, cancelled before it began never runs at all.)"""

    def start() -> asyncio.Task[str]:
        task = start_and_release(starter, coro)
        task.cancel()
        return task

    task = await in_callback(start)
    if eager:
        assert await task == value
    else:
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.parametrize("waiting_on", ["a future", "the loop"])
def test_a_coroutine_that_swallows_its_cancellation_returns_its_value(
    waiting_on: str, eager: bool
) -> None:
    async def work(waited: asyncio.Future[None]) -> str:
        try:
            await (waited if waiting_on == "a future" else asyncio.sleep(0))
        except asyncio.CancelledError:
            await asyncio.sleep(0)  # and goes on waiting, once more
            return "swallowed"
        return "finished"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        await cancelled_at_once(starter, work(loop.create_future()), "swallowed", eager)

    run(main)


def test_a_second_cancellation_reaches_the_coroutine_too(eager: bool) -> None:
    seen: list[str] = []

    async def work() -> str:
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            seen.append("first")
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            seen.append("second")
        return "survived both"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        await cancelled_at_once(starter, work(), "survived both", eager)

    run(main)
    assert seen == (["first", "second"] if eager else [])


def test_a_bad_yield_fails_the_task_as_asyncio_does() -> None:
    @types.coroutine
    def bad() -> Generator[Any, Any, None]:
        yield 42  # not a future

    async def work() -> str:
        try:
            await bad()
        except RuntimeError as exc:
            return str(exc)
        return "no error"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        task = await in_callback(lambda: start_and_release(starter, work()))
        assert "bad yield" in await task

    run(main)


def _cancel_all_but(current: asyncio.Task[Any] | None) -> None:
    """What careless shutdown code does: cancel every task it can list but its own."""
    for task in asyncio.all_tasks():
        if task is not current:
            task.cancel()


@pytest.mark.parametrize("landed", [True, False], ids=["landed", "not yet landed"])
def test_a_spare_cancelled_by_others_is_not_handed_work(landed: bool, eager: bool) -> None:
    """Code that cancels every task (``asyncio.all_tasks()`` lists the idle spare) must not
    leave the next request without a task to finish it, whether the cancellation has reached
    the spare yet or not."""

    async def work() -> str:
        await asyncio.sleep(0)
        return "answered"

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        current = asyncio.current_task()
        await asyncio.sleep(0)  # the spare (3.11) waits, idle

        def cancel_all_then_start() -> asyncio.Task[str]:
            _cancel_all_but(current)
            return start_and_release(starter, work())

        if landed:
            _cancel_all_but(current)
            await asyncio.sleep(0)
            task = await in_callback(lambda: start_and_release(starter, work()))
        else:
            task = await in_callback(cancel_all_then_start)
        assert await task == "answered"
        starter.prepare()  # and a new spare serves the next one at once
        steps: list[str] = []

        async def next_one() -> str:
            steps.append("first")
            await asyncio.sleep(0)
            return "next"

        def start() -> asyncio.Task[str]:
            task = start_and_release(starter, next_one())
            assert steps == (["first"] if eager else [])
            return task

        assert await (await in_callback(start)) == "next"

    run(main)


@pytest.mark.parametrize("style", ["(loop, coro)", "(loop, coro, **kwargs)"])
def test_a_task_factory_makes_every_task(style: str) -> None:
    """A task factory the user installs (for tracing, say) makes the tasks, as before."""
    made: list[asyncio.Task[Any]] = []

    def old_style(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop)
        made.append(task)
        return task

    def new_style(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        made.append(task)
        return task

    async def work() -> bool:
        await asyncio.sleep(0)
        return asyncio.current_task() in made

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        loop.set_task_factory(old_style if style == "(loop, coro)" else new_style)
        try:
            starter.prepare()
            for _ in range(3):
                task = await in_callback(lambda: start_and_release(starter, work()))
                assert await task is True
                starter.prepare()
        finally:
            loop.set_task_factory(None)

    run(main)


def test_the_rest_of_a_coroutine_is_not_run_inside_an_except_block(eager: bool) -> None:
    """After a cancellation or a timeout is handled, nothing is "being handled" any more: no
    ``sys.exc_info()``, no ``__context__`` on what the coroutine raises next."""

    async def work(waited: asyncio.Future[None]) -> tuple[Any, Any, Any]:
        try:
            await waited
        except asyncio.CancelledError as exc:
            message = exc.args
        await asyncio.sleep(0)
        handling = sys.exc_info()[0]
        try:
            raise ValueError("later")
        except ValueError as exc:
            context = exc.__context__
        return message, handling, context

    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> None:
        waited: asyncio.Future[None] = loop.create_future()

        def start() -> asyncio.Task[tuple[Any, Any, Any]]:
            task = start_and_release(starter, work(waited))
            task.cancel("why")
            return task

        task = await in_callback(start)
        if eager:
            assert await task == (("why",), None, None)
        else:  # an ordinary task cancelled before it began never runs
            with pytest.raises(asyncio.CancelledError):
                await task

    run(main)


def test_close_leaves_no_task_pending() -> None:
    async def main(loop: asyncio.AbstractEventLoop, starter: EagerTaskStarter) -> set[str]:
        starter.prepare()
        starter.close()
        starter.prepare()  # closed: makes nothing
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        current = asyncio.current_task()
        return {repr(t) for t in asyncio.all_tasks() if t is not current and not t.done()}

    assert run(main) == set()
