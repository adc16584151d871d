"""What a handler's exception means: a real cancellation, or a protocol error inside a group.

Shared by the tools handler (a tool's failure becomes an ``isError`` result unless it is one of
these) and the server (any other handler's failure becomes ``-32603`` unless it is one).
"""

from __future__ import annotations

import asyncio

from mcpkit.exceptions import ProtocolError

__all__ = ["cancelled_for_real", "protocol_error_in"]


def cancelled_for_real(exc: BaseException) -> bool:
    """Whether ``exc`` is the running task's own cancellation (someone called its ``cancel()``)
    rather than a ``CancelledError`` a handler raised or let out of something else. Python 3.10
    cannot tell them apart: there, every ``CancelledError`` counts as a cancellation."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is None or bool(cancelling())


def protocol_error_in(exc: BaseException) -> ProtocolError | None:
    """The first protocol error inside an exception group (a tool's TaskGroup), if any."""
    for inner in getattr(exc, "exceptions", ()):
        if isinstance(inner, ProtocolError):
            return inner
        found = protocol_error_in(inner)
        if found is not None:
            return found
    return None
