"""Handlers beyond tools: resources, prompts, completion, subscriptions, and what they share
(pagination, multi round-trip requests).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError, InvalidParams, ResourceNotFound
from mcpkit.protocol.mrtr import InputRequired
from mcpkit.protocol.scope import RequestContext, caller_key
from mcpkit.protocol.versions import META_SUBSCRIPTION

if TYPE_CHECKING:
    from mcpkit.protocol.server import Server

__all__ = [
    "can_complete",
    "complete",
    "get_prompt",
    "list_prompts",
    "list_resources",
    "list_templates",
    "listen",
    "needs_input",
    "paginate",
    "read_resource",
    "subscribe",
    "unsubscribe",
    "with_input",
]

MAX_COMPLETIONS = 100
logger = logging.getLogger("mcpkit.server")


# --------------------------------------------------------------------------- pagination


def paginate(
    items: Sequence[Any], params: dict[str, Any], page_size: int, key: str
) -> dict[str, Any]:
    """One page of ``items`` (their ``definition``) under ``key``, with an opaque cursor."""
    start = _cursor_offset(params.get("cursor"), len(items))
    end = start + page_size
    result: dict[str, Any] = {key: list(_definitions(items[start:end]))}
    if end < len(items):
        result["nextCursor"] = base64.urlsafe_b64encode(f"o:{end}".encode()).decode()
    return result


def _definitions(items: Sequence[Any]) -> Iterator[dict[str, Any]]:
    """The published definitions; one that cannot compile is left out (and logged), so a
    single broken definition does not take the whole list down with it."""
    for item in items:
        try:
            yield item.definition
        except DefinitionError as exc:
            logger.error("left out of the list: %s", exc)


def _cursor_offset(cursor: Any, total: int) -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(str(cursor).encode()).decode()
        offset = int(text.removeprefix("o:")) if text.startswith("o:") else -1
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
    if not 0 <= offset <= total:
        raise InvalidParams("Invalid params: unknown or expired cursor")
    return offset


# -------------------------------------------------------------- multi round-trip input


async def with_input(
    server: Server,
    ctx: RequestContext,
    params: dict[str, Any],
    target: tuple[str, str],
    run: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Run a handler that may ask the client; in the stateless era, answer
    ``InputRequiredResult`` when it needs input, carrying the answers so far, signed."""
    if not ctx.stateless:
        return await run()
    method, name = target
    name = _bound(name, params.get("arguments"), ctx.principal)
    answers: dict[str, Any] = {}
    if "requestState" in params:
        answers.update(server.signer.decode(params["requestState"], method, name))
    responses = params.get("inputResponses")
    if isinstance(responses, dict):
        answers.update(responses)
    ctx.input_responses = answers
    try:
        return await run()
    except BaseException as exc:
        if not needs_input(exc):
            raise
        return {
            "resultType": "input_required",
            "inputRequests": ctx.missing_inputs,
            "requestState": server.signer.encode(method, name, answers),
        }


def _bound(name: str, arguments: Any, principal: Any) -> str:
    """What a requestState is bound to: the name, a digest of the arguments, and the caller,
    so a state cannot be replayed with other arguments or by another principal."""
    seen = json.dumps([arguments, caller_key(principal)], sort_keys=True, default=str)
    return f"{name}#{hashlib.sha256(seen.encode()).hexdigest()[:32]}"


def needs_input(exc: BaseException) -> bool:
    """``InputRequired``, or a task group's exception group made only of them (questions
    asked in an ``asyncio.TaskGroup``); every missing input is already recorded."""
    if isinstance(exc, InputRequired):
        return True
    inner = getattr(exc, "exceptions", None)
    return isinstance(inner, tuple) and bool(inner) and all(needs_input(e) for e in inner)


# ---------------------------------------------------------------------------- resources


async def list_resources(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    items = list(server.app.resources.values())
    return paginate(items, params, server.app.options.page_size, "resources")


async def list_templates(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    items = list(server.app.resource_templates.values())
    return paginate(items, params, server.app.options.page_size, "resourceTemplates")


async def read_resource(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams("Invalid params: 'uri' must be a string")

    async def run() -> dict[str, Any]:
        return {"contents": await read_uri(server, ctx, uri)}

    return await with_input(server, ctx, params, ("resources/read", uri), run)


async def read_uri(server: Server, ctx: RequestContext, uri: str) -> list[dict[str, Any]]:
    """The contents of one of the app's resources; "not found" per the request's era."""
    try:
        return await _read_uri(server, ctx, uri)
    except ResourceNotFound:
        # raised by us, by directory_reader (a missing file) or by the user's own function:
        # always answered with the URI asked for, in the code of the request's era
        if ctx.stateless:
            raise InvalidParams("Resource not found", {"uri": uri}) from None
        raise ResourceNotFound(data={"uri": uri}) from None


async def _read_uri(server: Server, ctx: RequestContext, uri: str) -> list[dict[str, Any]]:
    app = server.app
    resource = app.resources.get(uri)
    if resource is not None:
        return await resource.read(Context(ctx), server.workers)
    for template in app.resource_templates.values():
        values = template.match(uri)
        if values is not None:
            return await template.read(uri, values, Context(ctx), server.workers)
    raise ResourceNotFound(data={"uri": uri})


async def subscribe(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    ctx.session.resource_subscriptions.add(_uri(params))
    return {}


async def unsubscribe(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    ctx.session.resource_subscriptions.discard(_uri(params))
    return {}


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams("Invalid params: 'uri' must be a string")
    return uri


# ------------------------------------------------------------------------------ prompts


async def list_prompts(
    server: Server, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    return paginate(
        list(server.app.prompts.values()), params, server.app.options.page_size, "prompts"
    )


async def get_prompt(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams("Invalid params: 'name' must be a string")
    prompt = server.app.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise InvalidParams("Invalid params: 'arguments' must be an object of strings")

    async def run() -> dict[str, Any]:
        return await prompt.get(arguments, Context(ctx), server.workers)

    return await with_input(server, ctx, params, ("prompts/get", name), run)


# --------------------------------------------------------------------------- completion


def can_complete(server: Server) -> bool:
    """Whether anything can answer ``completion/complete`` (then ``completions`` is offered)."""
    app = server.app
    if app.completer is not None:
        return True
    for prompt in app.prompts.values():
        if prompt.completions:
            return True
        try:
            arguments = prompt.definition["arguments"]
        except DefinitionError:
            continue  # logged when it is listed or compiled
        if any("enum" in (prompt.argument_schema(a["name"]) or {}) for a in arguments):
            return True
    for template in app.resource_templates.values():
        if template.completions or any(
            "enum" in (template.argument_schema(v) or {}) for v in template.variables
        ):
            return True
    return False


async def complete(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise InvalidParams("Invalid params: 'ref' and 'argument' must be objects")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise InvalidParams("Invalid params: 'argument' needs a string 'name' and 'value'")
    context = params.get("context") or {}
    given = context.get("arguments") or {} if isinstance(context, dict) else {}
    values = await _candidates(server, ref, name, value, given)
    return {
        "completion": {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }
    }


async def _candidates(
    server: Server, ref: dict[str, Any], name: str, value: str, given: dict[str, Any]
) -> list[str]:
    app = server.app
    completer, schema = None, None
    if ref.get("type") == "ref/prompt":
        prompt = app.prompts.get(str(ref.get("name")))
        if prompt is None:
            raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
        completer, schema = prompt.completions.get(name), prompt.argument_schema(name)
    elif ref.get("type") == "ref/resource":
        template = app.resource_templates.get(str(ref.get("uri")))
        if template is None:
            raise InvalidParams(f"Unknown resource template: {ref.get('uri')}")
        completer, schema = template.completions.get(name), template.argument_schema(name)
    else:
        raise InvalidParams("Invalid params: ref.type must be 'ref/prompt' or 'ref/resource'")
    if completer is not None:
        return await _call(completer, value, given)
    if schema is not None and isinstance(schema.get("enum"), list):
        return [str(v) for v in schema["enum"] if str(v).startswith(value)]
    if app.completer is not None:
        return await _call(app.completer, ref, name, value, given)
    return []


async def _call(fn: Callable[..., Any], *args: Any) -> list[str]:
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return [str(v) for v in result]


# ------------------------------------------------------------------------ subscriptions


async def listen(server: Server, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """``subscriptions/listen``: acknowledge, then stream the requested changes until the
    client cancels (stdio: ``notifications/cancelled``; HTTP: it closes the stream), or the
    server shuts down gracefully and answers the listen request itself."""
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise InvalidParams("Invalid params: 'notifications' must be an object")
    honoured = _honoured(server, wanted)
    tag = {META_SUBSCRIPTION: ctx.request_id}
    loop = asyncio.get_running_loop()
    outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def on_change(kind: str, uri: str | None) -> None:
        message = _listen_message(honoured, kind, uri, tag)
        if message is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: so is the stream
                loop.call_soon_threadsafe(outbox.put_nowait, message)

    # Listen before acknowledging: a change right after the ack must not slip through.
    unsubscribe_app = server.app.subscribe(on_change)
    server.streams.add(outbox)
    try:
        await ctx.send(
            _note(
                "notifications/subscriptions/acknowledged",
                {"_meta": tag, "notifications": honoured},
            )
        )
        while (message := await outbox.get()) is not None:
            await ctx.send(message)
        return {"_meta": dict(tag)}  # the server is closing: end the stream with a result
    finally:
        server.streams.discard(outbox)
        unsubscribe_app()


_LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


def _honoured(server: Server, wanted: dict[str, Any]) -> dict[str, Any]:
    offered = server.capabilities()
    honoured: dict[str, Any] = {
        flag: True for kind, flag in _LIST_FLAGS.items() if wanted.get(flag) and kind in offered
    }
    uris = wanted.get("resourceSubscriptions")
    if isinstance(uris, list) and "resources" in offered:
        honoured["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    return honoured


def _listen_message(
    honoured: dict[str, Any], kind: str, uri: str | None, tag: dict[str, Any]
) -> dict[str, Any] | None:
    if kind in _LIST_FLAGS and honoured.get(_LIST_FLAGS[kind]):
        return _note(f"notifications/{kind}/list_changed", {"_meta": tag})
    if kind == "resource" and uri in honoured.get("resourceSubscriptions", ()):
        return _note("notifications/resources/updated", {"_meta": tag, "uri": uri})
    return None


def _note(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}
