"""The handle a running handler uses to ask for things: :class:`Context`.

Annotate a parameter with ``Context`` (any name) and mcpkit passes one in; it never appears in
the published schema::

    @app.tool
    async def crunch(n: int, ctx: Context) -> int:
        await ctx.report_progress(0, n)
        ...

The server supplies the powers behind the handle (:class:`RequestScope`), so a handler never
asks which protocol era or transport it runs on.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpkit.types import RequestId

__all__ = ["LOG_LEVELS", "Context", "RequestScope"]

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, lowest first, as MCP names them."""


class RequestScope(Protocol):
    """What the server knows and can do for one request (implemented by the server)."""

    request_id: RequestId | None
    protocol_version: str
    client_info: dict[str, Any] | None
    client_capabilities: dict[str, Any]
    state: Any

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Send ``notifications/progress`` if the request carried a progress token."""

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        """Send ``notifications/message`` if the client asked for this level."""


class Context:
    """What a running tool (or resource, or prompt) may ask of the client and server."""

    __slots__ = ("_scope",)

    def __init__(self, scope: RequestScope) -> None:
        self._scope = scope

    @property
    def request_id(self) -> RequestId | None:
        """The JSON-RPC id of the request being answered."""
        return self._scope.request_id

    @property
    def protocol_version(self) -> str:
        """The protocol version this request is served under (negotiated or from ``_meta``)."""
        return self._scope.protocol_version

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's self-reported ``Implementation`` (name, version, ...), if it sent one."""
        return self._scope.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (``{}`` when none)."""
        return self._scope.client_capabilities

    @property
    def state(self) -> Any:
        """What the ``App``'s lifespan yielded (``None`` without a lifespan)."""
        return self._scope.state

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress; sent only when the client asked (a ``progressToken``).

        ``progress`` must increase with every call; a value that does not is dropped.
        """
        await self._scope.progress(progress, total, message)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client at ``level`` (one of :data:`LOG_LEVELS`)."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        await self._scope.log(level, data, logger)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)
