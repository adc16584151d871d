"""A request's answer as it leaves the core: encoded once, here, where a value JSON cannot
carry can still answer the request's id (with what answers instead), and the one way a
handler's unexpected failure becomes ``-32603``."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from mcpkit.exceptions import InternalError, InvalidRequest, Unencodable
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.envelope import stateless_result
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.methods import HANDLERS, Runtime
from mcpkit.protocol.versions import is_stateless

__all__ = ["at_once", "encoded_answer", "internal"]

logger = logging.getLogger("mcpkit.server")


def encoded_answer(runtime: Runtime, request: Request, response: dict[str, Any]) -> dict[str, Any]:
    """``response`` to ``request``, encoded (:func:`jsonrpc.encoded`); when JSON cannot carry
    it, what answers instead, encoded."""
    try:
        return jsonrpc.encoded(response)
    except Unencodable as exc:
        replacement = _instead(runtime, request, response, exc)
    with contextlib.suppress(Unencodable):  # e.g. the App's serverInfo in a stateless _meta
        return jsonrpc.encoded(replacement)
    return jsonrpc.encoded(jsonrpc.error_response(request.id, InternalError()))


def _instead(runtime: Runtime, request: Request, response: dict[str, Any], exc: Unencodable) -> Any:
    """What answers in place of a response JSON cannot carry: an error without its data; the
    result its method makes of the fault (a tool's ``isError`` result); else ``-32603``."""
    method = HANDLERS.get(request.method)
    if "error" in response:
        logger.warning("the error answering %r lost its data: %s", request.method, exc)
        error = response["error"]
        return {**response, "error": {"code": error["code"], "message": error["message"]}}
    if method is None or method.unencodable is None:
        return jsonrpc.error_response(request.id, internal(request.method, exc))
    params = request.params if isinstance(request.params, dict) else {}
    result = method.unencodable(runtime, params, exc)
    if is_stateless(request.method, params):
        result = stateless_result(result, request.method, method, runtime.app)
    return jsonrpc.result_response(request.id, result)


def internal(method: str, exc: BaseException) -> InternalError:
    """A handler's unexpected failure: logged with its traceback, answered ``-32603``."""
    logger.error("internal error answering %r", method, exc_info=exc)
    return InternalError()


async def at_once(message: Any) -> dict[str, Any] | None:
    """What answers a message that runs nothing, as a session's coroutine: its error, or
    ``None`` (a notification, an answer); a request here is an ``initialize`` in a batch."""
    if isinstance(message, Request):
        error = InvalidRequest("Invalid Request: initialize must not be part of a batch")
        return jsonrpc.error_response(message.id, error)
    return message  # type: ignore[no-any-return]
