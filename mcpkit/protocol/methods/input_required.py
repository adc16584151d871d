"""Handlers that may ask the client, in the stateless era: ``InputRequiredResult``.

:func:`with_input` runs such a handler (``tools/call``, ``resources/read``, ``prompts/get``)
with the answers the client sent so far; when it still needs one it answers
``InputRequiredResult`` with the questions and the answers so far in a signed
``requestState`` (the signer and ``InputRequired`` are in :mod:`mcpkit.protocol.request_state`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._elicitation import require_mode
from mcpkit.exceptions import UrlElicitationRequired
from mcpkit.protocol.methods.spec import Runtime
from mcpkit.protocol.request import RequestContext, caller_key
from mcpkit.protocol.request_state import InputRequired

__all__ = ["needs_input", "url_input_required", "with_input"]

_IDS = "io.mcpkit/elicitation-ids"  # where requestState keeps ctx.elicitation_id()'s ids


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
    bound = _binding(name, params.get("arguments"), ctx.principal)
    answers: dict[str, Any] = {}
    if "requestState" in params:
        answers.update(runtime.signer.decode(params["requestState"], method, bound()))
        ids = answers.pop(_IDS, None)  # only ever from the signed state, never the client
        ctx.elicitation_ids = dict(ids) if isinstance(ids, dict) else None
    responses = params.get("inputResponses")
    if isinstance(responses, dict):
        answers.update(responses)
        answers.pop(_IDS, None)  # a client cannot choose the ids
    ctx.input_responses = answers
    try:
        return await run()
    except BaseException as exc:
        if isinstance(exc, UrlElicitationRequired):
            ctx.missing_inputs.update(_url_request(ctx, exc))
        elif not needs_input(exc):
            raise
        state = {**answers, _IDS: ctx.elicitation_ids} if ctx.elicitation_ids else answers
        return {
            "resultType": "input_required",
            "inputRequests": ctx.missing_inputs,
            "requestState": runtime.signer.encode(method, bound(), state),
        }


def url_input_required(ctx: RequestContext, exc: UrlElicitationRequired) -> dict[str, Any]:
    """A ``UrlElicitationRequired`` raised outside a handler that keeps a ``requestState``
    (a middleware, say), in the 2026-07-28 era: an ``InputRequiredResult`` asking for it."""
    return {"resultType": "input_required", "inputRequests": _url_request(ctx, exc)}


def _url_request(ctx: RequestContext, exc: UrlElicitationRequired) -> dict[str, Any]:
    """The input request a ``UrlElicitationRequired`` stands for (2026-07-28 has no
    ``-32042`` and no ``elicitationId``); ``-32021`` unless the client declared URL mode."""
    require_mode(ctx.client_capabilities, ctx.protocol_version, "url")
    params = {"mode": "url", "message": exc.prompt, "url": exc.url}
    return {f"url-{exc.elicitation_id}": {"method": "elicitation/create", "params": params}}


_SCALARS = frozenset({str, int, float, bool, type(None)})  # JSON values nothing can change


def _binding(name: str, arguments: Any, principal: Any) -> Callable[[], str]:
    """What a requestState is bound to (:func:`_bound`), digested only when asked: most calls
    neither carry a state nor ask for input. The digest is of the arguments as the request
    sent them, which the client's retry sends again: the call may change its arguments in
    place before it asks, so they are copied now (flat ones, cheaply) or digested now (any
    nested list or object)."""
    caller = caller_key(principal)
    if arguments is None or (isinstance(arguments, dict) and _flat(arguments)):
        sent = None if arguments is None else dict(arguments)
        return lambda: _bound(name, sent, caller)
    bound = _bound(name, arguments, caller)
    return lambda: bound


def _flat(arguments: dict[str, Any]) -> bool:
    return all(type(value) in _SCALARS for value in arguments.values())


def _bound(name: str, arguments: Any, caller: str | None) -> str:
    """What a requestState is bound to: the name, a digest of the arguments, and the caller
    (its :func:`~mcpkit.protocol.request.caller_key`), so a state cannot be replayed with
    other arguments or by another principal."""
    seen = json.dumps([arguments, caller], sort_keys=True, default=str)
    import hashlib  # not at import: it loads OpenSSL's hashes (start-up)

    return f"{name}#{hashlib.sha256(seen.encode()).hexdigest()[:32]}"


def needs_input(exc: BaseException) -> bool:
    """``InputRequired``, or a task group's exception group made only of them (questions
    asked in an ``asyncio.TaskGroup``); every missing input is already recorded."""
    if isinstance(exc, InputRequired):
        return True
    inner = getattr(exc, "exceptions", None)
    return isinstance(inner, tuple) and bool(inner) and all(needs_input(e) for e in inner)
