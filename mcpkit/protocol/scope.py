"""What the server knows about one request, in either era: :class:`RequestContext`.

Handshake-era facts (version, capabilities, log level) live on the session; stateless-era
requests carry them in ``_meta``. Both end up here, so handlers never ask which era they serve.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.context import LOG_LEVELS
from mcpkit.protocol.versions import at_least
from mcpkit.types import RequestId

__all__ = ["RequestContext", "Send"]

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Writes one message to the client (the transport supplies it)."""


@dataclass
class RequestContext:
    """One request's facts and the powers behind :class:`mcpkit.Context`."""

    request_id: RequestId | None
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    stateless: bool
    send: Send
    log_level: str | None = None
    progress_token: str | int | None = None
    state: Any = None
    session: Any = None  # the handshake-era Session, None for stateless requests
    _last_progress: float | None = field(default=None, repr=False)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.progress_token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            return  # progress MUST increase; a value that does not is dropped
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and at_least(self.protocol_version, "2025-03-26"):
            params["message"] = message
        await self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if self.log_level is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
