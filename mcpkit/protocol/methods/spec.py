"""The contract between the server and its method handlers.

A handler is ``async (runtime, ctx, params) -> result``: :class:`Runtime` is what it may use of
the server (built once by ``Server``), ``ctx`` the request's facts in either era
(:class:`~mcpkit.protocol.request.RequestContext`), ``params`` the request's params. It raises
protocol errors as exceptions; the server owns the envelope, the eras and the mapping to the
wire. :class:`MethodSpec` registers a handler in the one table, ``methods.HANDLERS``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit._frozen import frozen
from mcpkit._workers import Workers
from mcpkit.app import App
from mcpkit.exceptions import Unencodable
from mcpkit.protocol.request import RequestContext
from mcpkit.protocol.request_state import StateSigner

if TYPE_CHECKING:
    from mcpkit.protocol.tasks.runner import Tasks

__all__ = ["Failed", "Handler", "Instead", "MethodSpec", "Runtime"]


@frozen
class Runtime:
    """What a handler may use of the server, and nothing more (no sessions, no lifespan)."""

    app: App
    workers: Workers  # runs the App's sync functions off the event loop
    signer: StateSigner  # signs and verifies ``requestState`` (multi round-trip requests)
    streams: set[asyncio.Queue[Any]]  # the open ``subscriptions/listen`` streams
    capabilities: Callable[..., dict[str, Any]]  # ``ServerCapabilities`` (stateless=), cached
    tasks_of: Callable[[], Tasks]  # the server's, made (and the runner loaded) on first use

    @property
    def tasks(self) -> Tasks:
        """The tasks extension's records and running tasks."""
        return self.tasks_of()


Handler = Callable[[Runtime, RequestContext, dict[str, Any]], Awaitable[dict[str, Any]]]
Instead = Callable[[Runtime, dict[str, Any], Unencodable], dict[str, Any]]
"""Makes the result that answers in place of one JSON cannot carry, from the request's params."""
Failed = Callable[[Runtime, dict[str, Any], BaseException], dict[str, Any]]
"""Makes the result that answers a request whose middleware failed (see ``protocol.pipeline``)."""


@frozen
class MethodSpec:
    """A method's handler, the capability that gates it, and the eras that know it."""

    handler: Handler
    capability: str | None = None
    handshake: bool = True
    stateless: bool = True
    cacheable: bool = False
    unencodable: Instead | None = None  # else a result JSON cannot carry answers -32603
    failed: Failed | None = None  # else a middleware's failure answers -32603
