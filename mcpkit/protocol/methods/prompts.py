"""The prompts feature: ``prompts/list`` and ``prompts/get``."""

from __future__ import annotations

from typing import Any

from mcpkit.context import Context
from mcpkit.exceptions import InvalidParams
from mcpkit.protocol.access import usable
from mcpkit.protocol.methods.input_required import with_input
from mcpkit.protocol.methods.pagination import listing
from mcpkit.protocol.methods.params import string_param
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.request import RequestContext

__all__ = ["METHODS"]


_list_prompts = listing("prompts", lambda app: app.prompts)


async def _get_prompt(
    runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
) -> dict[str, Any]:
    name = string_param(params, "name")
    prompt = runtime.app.prompts.get(name)
    if prompt is None or not usable(prompt, ctx, runtime.app):  # hidden: as if unknown
        raise InvalidParams(f"Unknown prompt: {name}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise InvalidParams("Invalid params: 'arguments' must be an object of strings")

    async def run() -> dict[str, Any]:
        return await prompt.get(arguments, Context(ctx), runtime.workers)

    return await with_input(runtime, ctx, params, ("prompts/get", name), run)


METHODS = {
    "prompts/list": MethodSpec(_list_prompts, "prompts", cacheable=True),
    "prompts/get": MethodSpec(_get_prompt, "prompts"),
}
