"""The tools feature: ``tools/list`` and ``tools/call``.

A tool's own failure is its result (``isError``), masked unless the App says otherwise;
argument failures are ``isError`` or ``-32602`` per the version (or ``App(invalid_arguments=)``):
the same ``{field, expected, received}`` items either way, in the error's ``data`` or in the
result's ``_meta["mcpkit/invalidArguments"]``.
A tool still running at its timeout is cancelled and answered as its failure.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcpkit import _codec
from mcpkit.context import Context
from mcpkit.exceptions import (
    DefinitionError,
    InternalError,
    InvalidArguments,
    InvalidParams,
    ProtocolError,
    ToolError,
    Unencodable,
)
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.access import usable
from mcpkit.protocol.methods.failures import cancelled_for_real, protocol_error_in
from mcpkit.protocol.methods.input_required import needs_input, with_input
from mcpkit.protocol.methods.pagination import listing
from mcpkit.protocol.methods.params import string_param
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.request import RequestContext
from mcpkit.protocol.versions import arguments_fail_as_results, structured_output
from mcpkit.results import error_result
from mcpkit.tools import Tool

__all__ = [
    "INVALID_ARGUMENTS_META",
    "METHODS",
    "invalid_arguments_result",
    "invalid_arguments_text",
]

INVALID_ARGUMENTS_META = "mcpkit/invalidArguments"
"""The ``_meta`` key of an argument-failure result: its list of ``{field, expected, received}``."""

logger = logging.getLogger("mcpkit.server")


_tools_list = listing("tools", lambda app: app.tools)


def _tools_call(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> Awaitable[dict[str, Any]]:
    # A plain function returning the call's coroutine (its checks raise at once): a call
    # resumes through one layer less.
    name = string_param(params, "name")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidParams("Invalid params: 'arguments' must be an object")
    tool = runtime.app.tools.get(name)
    if tool is None or not usable(tool, ctx, runtime.app):  # hidden: as if unknown
        raise InvalidParams(f"Unknown tool: {name}")
    try:
        tool.compile()
    except DefinitionError as exc:  # the server's own fault, not the tool's run: -32603
        logger.error("%s", exc)
        raise InternalError() from None

    if tool.task == "forbidden" and not ctx.stateless:  # the common call: nothing around it
        return _run_tool(runtime, ctx, tool, arguments)
    # A partial, not a closure: the call awaits _run_tool itself, no coroutine around it.
    call: Callable[[], Awaitable[dict[str, Any]]]
    call = functools.partial(_run_tool, runtime, ctx, tool, arguments)
    if tool.task != "forbidden":  # the tasks extension decides: a task, inline, or -32021
        from mcpkit.protocol.methods.tasks import call_as_task  # loaded by a task tool's call

        carried = functools.partial(_carried, runtime, params, call)
        call = functools.partial(call_as_task, runtime, ctx, tool, carried)
    if not ctx.stateless:  # only 2026-07-28 requests carry input responses
        return call()
    return with_input(runtime, ctx, params, ("tools/call", name), call)


async def _run_tool(
    runtime: Runtime, ctx: RequestContext, tool: Tool, arguments: dict[str, Any]
) -> dict[str, Any]:
    name = tool.name
    limit = tool.timeout if tool.timeout is not None else runtime.app.options.tool_timeout
    try:
        running = tool.run(arguments, Context(ctx), runtime.workers)
        value = await (running if limit is None else _within(limit, running, tool))
        return tool.to_result(value, force_mirror=not structured_output(ctx.protocol_version))
    except InvalidArguments as exc:
        if _arguments_as_protocol_error(runtime, ctx):
            raise
        return invalid_arguments_result(name, exc.detail)
    except ToolError as exc:
        return error_result(exc.message)
    except ProtocolError:
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: this call's failure
        if cancelled_for_real(exc) or needs_input(exc):
            raise
        inner = protocol_error_in(exc)  # e.g. -32021 raised inside the tool's TaskGroup
        if inner is not None:
            raise inner from None
        return error_result(_failure_text(runtime, name, exc))


async def _within(limit: float, running: Awaitable[Any], tool: Tool) -> Any:
    """The tool's value, or past ``limit`` seconds its cancellation and a ``ToolError`` saying
    so. A cancellation from elsewhere (the client's) is not a timeout: it goes on as it was.
    A sync tool's thread cannot be stopped; it runs on and the worker drops its late result."""
    if limit == math.inf:  # the tool opted out of the App's default
        return await running
    if sys.version_info >= (3, 11):
        deadline = asyncio.timeout(limit)
        try:
            async with deadline:
                return await running
        except TimeoutError:
            if not deadline.expired():
                raise  # the tool's own TimeoutError: its failure, as any exception
    else:  # pragma: no cover - Python 3.10 (tested by its CI leg): no asyncio.timeout
        expired: list[bool] = []
        task = asyncio.current_task()
        timer = asyncio.get_running_loop().call_later(limit, _expire, expired, task)
        try:
            return await running
        except asyncio.CancelledError:
            if not expired:
                raise  # (after the client's cancel the server answers nothing either way)
        finally:
            timer.cancel()
    text = f"Tool {tool.name!r} timed out after {_seconds(limit)} s"
    logger.warning("%s%s", text, "" if tool.is_async else "; its thread runs on, result dropped")
    raise ToolError(text)


def _expire(expired: list[bool], task: asyncio.Task[Any] | None) -> None:  # pragma: no cover
    expired.append(True)
    if task is not None:
        task.cancel()


def _seconds(limit: float) -> str:
    """5 -> "5", 0.25 -> "0.25", 1e-05 -> "1e-05"."""
    return str(int(limit)) if float(limit).is_integer() else repr(float(limit))


async def _carried(
    runtime: Runtime, params: dict[str, Any], run: Callable[[], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """``run()``'s result, which a task keeps until ``tasks/get``: one JSON cannot carry is
    replaced now by what the call would have answered (see :func:`_unencodable_result`)."""
    result = await run()
    try:
        jsonrpc.encode({"result": result})
    except Unencodable as exc:
        return _unencodable_result(runtime, params, exc)
    return result


def _unencodable_result(
    runtime: Runtime, params: dict[str, Any], exc: Unencodable
) -> dict[str, Any]:
    """A tool's result JSON cannot carry is the tool's failure, as if it had raised: NaN or
    an infinity says where; anything else is masked like any failure."""
    name = str(params.get("name"))
    exc = Unencodable(exc.what, exc.path[1:], non_finite=exc.non_finite)  # from the result
    if not exc.non_finite:
        return error_result(_failure_text(runtime, name, exc))
    text = f"the tool returned a value JSON cannot carry: {exc}"
    logger.warning("tool %r: %s", name, text)
    return error_result(text)


def _failed_result(runtime: Runtime, params: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """A middleware's failure around a call is the call's failure: a ``ToolError``'s message,
    else masked like a tool's own failure."""
    if isinstance(exc, ToolError):
        return error_result(exc.message)
    return error_result(_failure_text(runtime, str(params.get("name")), exc))


def _arguments_as_protocol_error(runtime: Runtime, ctx: RequestContext) -> bool:
    mode = runtime.app.options.invalid_arguments
    if mode is not None:
        return mode == "protocol"
    return not arguments_fail_as_results(ctx.protocol_version)


def invalid_arguments_result(tool: str, detail: dict[str, Any]) -> dict[str, Any]:
    """The ``isError`` result for argument failures: the text for the model, and for programs
    the ``{field, expected, received}`` items a ``-32602`` error carries in ``data``."""
    result = error_result(invalid_arguments_text(tool, detail))
    result["_meta"] = {INVALID_ARGUMENTS_META: _failures(detail)}
    return result


def _failures(detail: dict[str, Any]) -> list[dict[str, Any]]:
    """Each failure of an :class:`InvalidArguments` ``detail`` (its ``errors``, or itself)."""
    failures: Sequence[dict[str, Any]] = detail.get("errors") or [detail]
    return [
        {key: failure[key] for key in ("field", "expected", "received")} for failure in failures
    ]


def invalid_arguments_text(tool: str, detail: dict[str, Any]) -> str:
    """The ``isError`` text for argument failures: field, expected and received, per failure."""
    lines = [f"Invalid arguments for tool {tool!r}:"]
    for failure in _failures(detail):
        expected = failure["expected"]
        wanted = (
            "one of " + ", ".join(_codec.to_json(v).decode() for v in expected)
            if isinstance(expected, list)
            else str(expected)
        )
        received = _codec.to_json(failure["received"], fallback=repr).decode()
        lines.append(
            f"- {failure['field'] or '(arguments)'}: expected {wanted}; received {received}"
        )
    return "\n".join(lines)


def _failure_text(runtime: Runtime, tool: str, exc: BaseException) -> str:
    import secrets  # not at import: hmac and hashlib come with it (start-up)

    reference = secrets.token_hex(4)
    logger.error("tool %r failed (reference %s)", tool, reference, exc_info=exc)
    if runtime.app.options.mask_errors:
        return f"Tool {tool!r} failed with an internal error (reference {reference})."
    return f"Tool {tool!r} failed: {type(exc).__name__}: {exc} (reference {reference})"


METHODS = {
    "tools/list": MethodSpec(_tools_list, "tools", cacheable=True),
    "tools/call": MethodSpec(
        _tools_call, "tools", unencodable=_unencodable_result, failed=_failed_result
    ),
}
