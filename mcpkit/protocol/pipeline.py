"""The App's middleware around a method's handler: the chain, and what a middleware's
exception means on the wire.

The server calls :func:`through_middleware` only when the App has middleware (none: the handler
is called directly, at no cost). A middleware's :class:`~mcpkit.exceptions.ProtocolError` is
that JSON-RPC error; anything else it raises is the method's failure, as if the handler had
raised it: ``tools/call`` makes an ``isError`` result of it (``MethodSpec.failed``), every
other method answers ``-32603``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpkit.context import Context
from mcpkit.exceptions import ProtocolError
from mcpkit.middleware import Call, CallNext, Middleware
from mcpkit.protocol.methods import MethodSpec, Runtime, cancelled_for_real, protocol_error_in
from mcpkit.protocol.methods.input_required import needs_input
from mcpkit.protocol.request import RequestContext

__all__ = ["through_middleware"]


async def through_middleware(
    middleware: Sequence[Middleware],
    method: str,
    spec: MethodSpec,
    runtime: Runtime,
    ctx: RequestContext,
    params: dict[str, Any],
) -> dict[str, Any]:
    """Run ``spec``'s handler for one request inside ``middleware`` (the first outermost)."""

    async def endpoint(call: Call) -> dict[str, Any]:
        return await spec.handler(runtime, ctx, call.params)

    chain: CallNext = endpoint
    for outer in reversed(middleware):
        chain = _link(outer, chain)
    call = Call(method, params, Context(ctx), ctx.protocol_version, ctx.transport)
    try:
        result: Any = await chain(call)  # a middleware may return anything
    except ProtocolError:
        raise
    except BaseException as exc:
        if cancelled_for_real(exc) or needs_input(exc):
            raise
        inner = protocol_error_in(exc)
        if inner is not None:
            raise inner from None
        if spec.failed is None:
            raise  # the server logs it and answers -32603
        return spec.failed(runtime, params, exc)
    if not isinstance(result, dict):
        returned = type(result).__name__
        fault = TypeError(f"a middleware returned {returned} for {method!r}, not a dict")
        if spec.failed is None:
            raise fault
        return spec.failed(runtime, params, fault)
    return result


def _link(middleware: Middleware, call_next: CallNext) -> CallNext:
    async def step(call: Call) -> dict[str, Any]:
        return await middleware(call, call_next)

    return step
