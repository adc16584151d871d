"""The tasks extension's methods (2026-07-28, SEP-2663): ``tasks/get``, ``tasks/update``,
``tasks/cancel``, and how ``tools/call`` becomes a task (:func:`call_as_task`).

``tasks/result`` and ``tasks/list`` are not served (SEP-2663 removed them): like any unknown
method they answer ``-32601``. Every ``tasks/*`` request must declare the extension in its
client capabilities (``-32021`` first, before any lookup); an unknown, expired or another
caller's task id is ``-32602``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._extensions import TASKS
from mcpkit.exceptions import ClientCapabilityError, InvalidParams
from mcpkit.protocol.methods.params import string_param
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.request import RequestContext, caller_key
from mcpkit.protocol.tasks.runner import TaskHandle
from mcpkit.protocol.tasks.store import TaskRecord
from mcpkit.tools import Tool

__all__ = ["METHODS", "call_as_task", "declares_tasks", "require_tasks"]

Run = Callable[[], Awaitable[dict[str, Any]]]


def declares_tasks(ctx: RequestContext) -> bool:
    """Whether the request's client capabilities declare the tasks extension."""
    declared = ctx.client_capabilities.get("extensions")
    return isinstance(declared, dict) and isinstance(declared.get(TASKS), dict)


def require_tasks(ctx: RequestContext, what: str) -> None:
    """``-32021`` naming the tasks extension unless the request declares it."""
    if not declares_tasks(ctx):
        raise _missing(what)


def _missing(what: str) -> ClientCapabilityError:
    return ClientCapabilityError(
        {"extensions": {TASKS: {}}},
        f"Missing required client capability: {what} needs the {TASKS} extension "
        "(declare it in the request's client capabilities, protocol 2026-07-28)",
    )


async def call_as_task(
    runtime: Runtime, ctx: RequestContext, tool: Tool, run: Run
) -> dict[str, Any]:
    """A ``tools/call`` of a task-supporting tool: ``CreateTaskResult`` when the request
    declares the extension (at once, or at ``ctx.continue_as_task()``), else ``run()``."""
    if not ctx.stateless or not declares_tasks(ctx):  # no tasks in the handshake era
        if tool.task == "required":
            raise _missing(f"tool {tool.name!r}")
        return await run()
    options = runtime.app.options
    ttl = tool.task_ttl_ms if tool.task_ttl_ms is not None else options.task_ttl_ms
    poll = tool.poll_interval_ms or options.task_poll_interval_ms

    async def create() -> TaskHandle:
        return await runtime.tasks.create(caller_key(ctx.principal), ttl, poll)

    if not tool.continues_as_task:
        handle = await create()
        ctx.task = handle
        runtime.tasks.launch(handle, run)
        return created(handle.record)
    return await _until_task(runtime, ctx, create, run)


async def _until_task(
    runtime: Runtime, ctx: RequestContext, create: Callable[[], Awaitable[TaskHandle]], run: Run
) -> dict[str, Any]:
    """Run the call in the request until it finishes or calls ``ctx.continue_as_task()``."""
    became: asyncio.Future[TaskHandle] = asyncio.get_running_loop().create_future()

    async def begin() -> None:
        handle = await create()
        ctx.task = handle
        runtime.tasks.adopt(handle, working)
        became.set_result(handle)

    async def work() -> dict[str, Any]:
        result = await run()
        if ctx.task is None:
            return result
        return await runtime.tasks.drive(ctx.task, lambda: _value(result))

    ctx.becomes_task = begin
    working = asyncio.ensure_future(_settled_by(runtime, ctx, work))
    try:
        waited: set[asyncio.Future[Any]] = {working, became}
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not became.done():
            became.cancel()
            working.cancel()  # the request was cancelled before the call became a task
    if became.done() and not became.cancelled():
        return created(became.result().record)
    return working.result()


async def _settled_by(runtime: Runtime, ctx: RequestContext, work: Run) -> dict[str, Any]:
    """``work()``; once the call is a task, its failure settles the task instead."""
    try:
        return await work()
    except BaseException as exc:
        if ctx.task is None:
            raise
        await runtime.tasks.settle_failure(ctx.task.record, exc)
        return {}


async def _value(result: dict[str, Any]) -> dict[str, Any]:
    return result


def created(record: TaskRecord) -> dict[str, Any]:
    """The ``CreateTaskResult`` for ``tools/call``: ``content: []`` too, because clients
    (and the conformance suite) read every ``tools/call`` result as a ``CallToolResult``."""
    return {**record.task(), "resultType": "task", "content": []}


async def _record(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any], method: str
) -> TaskRecord:
    require_tasks(ctx, method)
    task_id = string_param(params, "taskId")
    store = runtime.tasks.store
    record = await store.get(task_id, caller_key(ctx.principal))
    if record is None:
        raise InvalidParams(f"Invalid params: unknown task {task_id!r} ({store.missing})")
    return record


async def _get(runtime: Runtime, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    return (await _record(runtime, ctx, params, "tasks/get")).detailed()


async def _update(runtime: Runtime, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    record = await _record(runtime, ctx, params, "tasks/update")
    responses = params.get("inputResponses")
    if not isinstance(responses, dict):
        raise InvalidParams("Invalid params: 'inputResponses' must be an object")
    await runtime.tasks.store.change(record, lambda current: current.answer(responses))
    return {}


async def _cancel(runtime: Runtime, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    await runtime.tasks.cancel(await _record(runtime, ctx, params, "tasks/cancel"))
    return {}


METHODS = {
    "tasks/get": MethodSpec(_get, handshake=False),
    "tasks/update": MethodSpec(_update, handshake=False),
    "tasks/cancel": MethodSpec(_cancel, handshake=False),
}
