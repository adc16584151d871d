"""The completion feature: ``completion/complete`` (whether anything can answer it, which decides
the ``completions`` capability, is ``lifecycle.can_complete``).

Candidates come from the prompt argument's or template variable's own completer, else its
schema's ``enum``, else the App's ``@app.completion`` function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mcpkit._compose import completer_for
from mcpkit.app import App
from mcpkit.exceptions import InvalidParams
from mcpkit.prompts import Prompt
from mcpkit.protocol.access import usable
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.request import RequestContext
from mcpkit.resources import ResourceTemplate

__all__ = ["MAX_COMPLETIONS", "METHODS"]

MAX_COMPLETIONS = 100


async def _complete(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise InvalidParams("Invalid params: 'ref' and 'argument' must be objects")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise InvalidParams("Invalid params: 'argument' needs a string 'name' and 'value'")
    context = params.get("context") or {}
    given = context.get("arguments") or {} if isinstance(context, dict) else {}
    values = await _candidates(runtime.app, ctx, ref, name, value, given)
    return {
        "completion": {
            "values": values[:MAX_COMPLETIONS],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETIONS,
        }
    }


async def _candidates(
    app: App,
    ctx: RequestContext,
    ref: dict[str, Any],
    name: str,
    value: str,
    given: dict[str, Any],
) -> list[str]:
    definition: Prompt | ResourceTemplate | None = None
    if ref.get("type") == "ref/prompt":
        definition = app.prompts.get(str(ref.get("name")))
        if definition is None or not usable(definition, ctx, app):  # hidden: as if unknown
            raise InvalidParams(f"Unknown prompt: {ref.get('name')}")
    elif ref.get("type") == "ref/resource":
        definition = app.resource_templates.get(str(ref.get("uri")))
        if definition is None or not usable(definition, ctx, app):
            raise InvalidParams(f"Unknown resource template: {ref.get('uri')}")
    else:
        raise InvalidParams("Invalid params: ref.type must be 'ref/prompt' or 'ref/resource'")
    completer, schema = definition.completions.get(name), definition.argument_schema(name)
    if completer is not None:
        return await _call(completer, value, given)
    if schema is not None and isinstance(schema.get("enum"), list):
        return [str(v) for v in schema["enum"] if str(v).startswith(value)]
    fallback, ref = completer_for(app, definition, ref)  # an included one's app's, else ours
    if fallback is not None:
        return await _call(fallback, ref, name, value, given)
    return []


async def _call(fn: Callable[..., Any], *args: Any) -> list[str]:
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return [str(v) for v in result]


METHODS = {"completion/complete": MethodSpec(_complete, "completions")}
