"""MCP method handlers: ``params`` in, ``result`` out, errors raised as exceptions.

Each handler is ``async (server, ctx, params) -> result``; the server (``protocol.server``)
owns the envelope, the eras and the mapping of exceptions to the wire.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from mcpkit._records import record
from mcpkit.context import LOG_LEVELS, Context
from mcpkit.exceptions import (
    DefinitionError,
    InternalError,
    InvalidArguments,
    InvalidParams,
    ProtocolError,
    ToolError,
    Unencodable,
)
from mcpkit.protocol import features
from mcpkit.protocol.scope import RequestContext
from mcpkit.protocol.versions import ALL_VERSIONS, at_least
from mcpkit.results import error_result

if TYPE_CHECKING:
    from mcpkit.protocol.server import Server
    from mcpkit.tools import Tool

__all__ = [
    "HANDLERS",
    "Handler",
    "Method",
    "cancelled_for_real",
    "capabilities",
    "invalid_arguments_text",
    "protocol_error_in",
]

logger = logging.getLogger("mcpkit.server")

Handler = Callable[["Server", RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]
Instead = Callable[["Server", dict[str, Any], Unencodable], dict[str, Any]]
"""Makes the result that answers in place of one JSON cannot carry, from the request's params."""


@record
class Method:
    """A method's handler, the capability that gates it, and the eras that know it."""

    handler: Handler
    capability: str | None = None
    handshake: bool = True
    stateless: bool = True
    cacheable: bool = False
    unencodable: Instead | None = None  # else a result JSON cannot carry answers -32603


def capabilities(server: Server) -> dict[str, Any]:
    """``ServerCapabilities``: only what the app has (the server caches it)."""
    app = server.app
    caps: dict[str, Any] = {"logging": {}}
    if app.tools:
        caps["tools"] = {"listChanged": True}
    if app.resources or app.resource_templates:
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if app.prompts:
        caps["prompts"] = {"listChanged": True}
    if features.can_complete(server):
        caps["completions"] = {}
    return caps


# ------------------------------------------------------------------------------ basics


async def _ping(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def _set_level(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams(
            f"Invalid params: unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}"
        )
    if ctx.session is not None:
        ctx.session.log_level = level
    return {}


async def _discover(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(ALL_VERSIONS),
        "capabilities": server.capabilities(),
    }
    if server.app.instructions:
        result["instructions"] = server.app.instructions
    return result


# ------------------------------------------------------------------------------- tools


async def _tools_list(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    tools = list(server.app.tools.values())
    return features.paginate(tools, params, server.app.options.page_size, "tools")


async def _tools_call(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams("Invalid params: 'name' must be a string")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidParams("Invalid params: 'arguments' must be an object")
    tool = server.app.tools.get(name)
    if tool is None:
        raise InvalidParams(f"Unknown tool: {name}")
    try:
        tool.compile()
    except DefinitionError as exc:  # the server's own fault, not the tool's run: -32603
        logger.error("%s", exc)
        raise InternalError() from None

    if not ctx.stateless:  # only 2026-07-28 requests carry input responses
        return await _run_tool(server, ctx, tool, arguments)

    async def run() -> dict[str, Any]:
        return await _run_tool(server, ctx, tool, arguments)

    return await features.with_input(server, ctx, params, ("tools/call", name), run)


async def _run_tool(
    server: Server, ctx: RequestContext, tool: Tool, arguments: dict[str, Any]
) -> dict[str, Any]:
    name = tool.name
    try:
        value = await tool.run(arguments, Context(ctx), server.workers)
        return tool.to_result(value, force_mirror=not at_least(ctx.protocol_version, "2025-06-18"))
    except InvalidArguments as exc:
        if _arguments_as_protocol_error(server, ctx):
            raise
        return error_result(invalid_arguments_text(name, exc.detail))
    except ToolError as exc:
        return error_result(exc.message)
    except ProtocolError:
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: this call's failure
        if cancelled_for_real(exc) or features.needs_input(exc):
            raise
        inner = protocol_error_in(exc)  # e.g. -32021 raised inside the tool's TaskGroup
        if inner is not None:
            raise inner from None
        return error_result(_failure_text(server, name, exc))


def _unencodable_result(server: Server, params: dict[str, Any], exc: Unencodable) -> dict[str, Any]:
    """A tool's result JSON cannot carry is the tool's failure, as if it had raised: NaN or
    an infinity says where; anything else is masked like any failure."""
    name = str(params.get("name"))
    exc = Unencodable(exc.what, exc.path[1:], non_finite=exc.non_finite)  # from the result
    if not exc.non_finite:
        return error_result(_failure_text(server, name, exc))
    text = f"the tool returned a value JSON cannot carry: {exc}"
    logger.warning("tool %r: %s", name, text)
    return error_result(text)


def cancelled_for_real(exc: BaseException) -> bool:
    """Whether ``exc`` is the running task's own cancellation (someone called its ``cancel()``)
    rather than a ``CancelledError`` a handler raised or let out of something else. Python 3.10
    cannot tell them apart: there, every ``CancelledError`` counts as a cancellation."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is None or bool(cancelling())


def _arguments_as_protocol_error(server: Server, ctx: RequestContext) -> bool:
    mode = server.app.options.invalid_arguments
    if mode is not None:
        return mode == "protocol"
    return not at_least(ctx.protocol_version, "2025-11-25")


def invalid_arguments_text(tool: str, detail: dict[str, Any]) -> str:
    """The ``isError`` text for argument failures: field, expected and received, per failure."""
    failures: Sequence[dict[str, Any]] = detail.get("errors") or [detail]
    lines = [f"Invalid arguments for tool {tool!r}:"]
    for failure in failures:
        expected = failure["expected"]
        wanted = (
            "one of " + ", ".join(to_json(v).decode() for v in expected)
            if isinstance(expected, list)
            else str(expected)
        )
        received = to_json(failure["received"], fallback=repr).decode()
        lines.append(
            f"- {failure['field'] or '(arguments)'}: expected {wanted}; received {received}"
        )
    return "\n".join(lines)


def _failure_text(server: Server, tool: str, exc: BaseException) -> str:
    reference = secrets.token_hex(4)
    logger.error("tool %r failed (reference %s)", tool, reference, exc_info=exc)
    if server.app.options.mask_errors:
        return f"Tool {tool!r} failed with an internal error (reference {reference})."
    return f"Tool {tool!r} failed: {type(exc).__name__}: {exc} (reference {reference})"


def protocol_error_in(exc: BaseException) -> ProtocolError | None:
    """The first protocol error inside an exception group (a tool's TaskGroup), if any."""
    for inner in getattr(exc, "exceptions", ()):
        if isinstance(inner, ProtocolError):
            return inner
        found = protocol_error_in(inner)
        if found is not None:
            return found
    return None


HANDLERS: dict[str, Method] = {
    "ping": Method(_ping, stateless=False),
    "logging/setLevel": Method(_set_level, stateless=False),
    "server/discover": Method(_discover, handshake=False, cacheable=True),
    "tools/list": Method(_tools_list, "tools", cacheable=True),
    "tools/call": Method(_tools_call, "tools", unencodable=_unencodable_result),
    "resources/list": Method(features.list_resources, "resources", cacheable=True),
    "resources/templates/list": Method(features.list_templates, "resources", cacheable=True),
    "resources/read": Method(features.read_resource, "resources", cacheable=True),
    "resources/subscribe": Method(features.subscribe, "resources", stateless=False),
    "resources/unsubscribe": Method(features.unsubscribe, "resources", stateless=False),
    "prompts/list": Method(features.list_prompts, "prompts", cacheable=True),
    "prompts/get": Method(features.get_prompt, "prompts"),
    "completion/complete": Method(features.complete, "completions"),
    "subscriptions/listen": Method(features.listen, handshake=False),
}
"""Every MCP method mcpkit serves (``initialize`` is the session's own business)."""
