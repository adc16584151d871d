"""Handlers that may ask the client, in the stateless era: ``InputRequiredResult``.

:func:`with_input` runs such a handler (``tools/call``, ``resources/read``, ``prompts/get``)
with the answers the client sent so far; when it still needs one it answers
``InputRequiredResult`` with the questions and the answers so far in a signed
``requestState`` (the signer and ``InputRequired`` are in :mod:`mcpkit.protocol.request_state`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.protocol.methods.spec import Runtime
from mcpkit.protocol.request import RequestContext, caller_key
from mcpkit.protocol.request_state import InputRequired

__all__ = ["needs_input", "with_input"]


async def with_input(
    runtime: Runtime,
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
        answers.update(runtime.signer.decode(params["requestState"], method, name))
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
            "requestState": runtime.signer.encode(method, name, answers),
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
