"""Middleware: code that runs around every request the server answers.

A middleware is ``async def mw(call, call_next)``: ``call`` is the request (a :class:`Call`),
``await call_next(call)`` runs the rest of the chain and the method, and returns its result (a
dict). Register with ``@app.middleware`` or ``App(middleware=[...])``; the first registered is
the outermost::

    @app.middleware
    async def timing(call: Call, call_next: CallNext) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            logger.info("%s took %.1f ms", call.method, (time.perf_counter() - started) * 1e3)

A middleware may return a result of its own instead of calling ``call_next``, raise a
:class:`~mcpkit.ProtocolError` (a JSON-RPC error, any ``code=``) or a
:class:`~mcpkit.ToolError` (inside ``tools/call``: an ``isError`` result), or rewrite the
request with ``call.replace(params=...)``. See ``docs/middleware.md``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcpkit._frozen import frozen, replace
from mcpkit.context import Context

__all__ = ["Call", "CallNext", "Middleware", "Transport"]

Transport = Literal["stdio", "http", "memory"]


@frozen
class Call:
    """One request on its way to its method: what a middleware sees.

    ``params`` is the request's params (``{}`` when it had none; ``_meta`` included);
    ``context`` is the :class:`~mcpkit.Context` the method's handler will see (the caller's
    ``principal``, ``headers``, ``meta``, ...).
    """

    method: str
    params: dict[str, Any]
    context: Context
    protocol_version: str
    transport: Transport

    def replace(self, *, params: dict[str, Any]) -> Call:
        """This call with other params (the method runs with them): a middleware that rewrites
        a request passes ``call_next(call.replace(params=...))``."""
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict, not {type(params).__name__}")
        return replace(self, params=params)


CallNext = Callable[[Call], Awaitable[dict[str, Any]]]
"""Runs the rest of the chain and the method for a :class:`Call`; returns the method's result."""

Middleware = Callable[[Call, CallNext], Awaitable[dict[str, Any]]]
"""``async def mw(call, call_next) -> result``."""
