"""The JSON-RPC 2.0 envelope: bytes <-> messages, and the standard errors (no MCP here).

``decode`` turns bytes into JSON values (``-32700`` for broken JSON or UTF-8, ``-32600`` when
the message is too large or nested too deep); ``parse`` turns one JSON value into a
:class:`Request`, :class:`Notification` or :class:`Response` (``-32600`` when it is none of
them); ``encode`` writes compact UTF-8 JSON on one line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic_core import from_json, to_json

from mcpkit._records import record
from mcpkit.exceptions import InvalidRequest, ParseError, ProtocolError
from mcpkit.types import RequestId

__all__ = [
    "Limits",
    "Message",
    "Notification",
    "Request",
    "Response",
    "answer_batch",
    "as_id",
    "batch_error",
    "decode",
    "encode",
    "error_response",
    "parse",
    "readable_id",
    "result_response",
]

MiB = 1024 * 1024


@record
class Limits:
    """Per-message limits, the same on every transport."""

    max_bytes: int = 16 * MiB
    max_depth: int = 128
    max_batch: int = 1000  # messages in one batch (2025-03-26)


DEFAULT_LIMITS = Limits()


class _Message:
    """A parsed message: slotted, compared and shown by its fields.

    One is made per message read, so these are plain classes with their own ``__init__``
    (~0.2 us) rather than records (~2 us, which build ``__init__`` from shared code).
    """

    __slots__ = ()

    def _fields(self) -> dict[str, Any]:
        names: tuple[str, ...] = self.__slots__
        return {name: getattr(self, name) for name in names}

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(tuple(self._fields().values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self._fields().items())
        return f"{type(self).__name__}({shown})"


class Request(_Message):
    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: Any = None) -> None:
        self.id = id
        self.method = method
        self.params = params


class Notification(_Message):
    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Any = None) -> None:
        self.method = method
        self.params = params


class Response(_Message):
    """A client's answer to a request the server sent (``result`` or ``error``)."""

    __slots__ = ("error", "id", "result")

    def __init__(self, id: RequestId, result: Any = None, error: Any = None) -> None:
        self.id = id
        self.result = result
        self.error = error


Message = Request | Notification | Response


def decode(data: bytes | str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Bytes (or text) -> a JSON value, within ``limits``."""
    if len(data) > limits.max_bytes:
        raise InvalidRequest(f"Invalid Request: message larger than {limits.max_bytes} bytes")
    try:
        value = from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            raise _too_deep(limits) from None
        raise ParseError() from None
    if _may_be_deep(data, limits.max_depth) and _deeper_than(value, limits.max_depth):
        raise _too_deep(limits)
    return value


def _too_deep(limits: Limits) -> InvalidRequest:
    return InvalidRequest(f"Invalid Request: nesting too deep (limit {limits.max_depth})")


def _may_be_deep(data: bytes | str, max_depth: int) -> bool:
    if isinstance(data, str):
        return data.count("[") + data.count("{") > max_depth
    return data.count(b"[") + data.count(b"{") > max_depth


def _deeper_than(value: Any, max_depth: int) -> bool:
    """Whether containers nest more than ``max_depth`` levels (iterative, no recursion)."""
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > max_depth:
                    return True
                stack.append((child, depth + 1))
    return False


def readable_id(obj: Any) -> RequestId | None:
    """The ``id`` of a message when it is a valid MCP id (string or integer), else ``None``."""
    return as_id(obj.get("id")) if isinstance(obj, dict) else None


def as_id(value: Any) -> RequestId | None:
    """``value`` when it is a valid MCP id (a string or an integer), else ``None``.

    Booleans and floats are not ids, even where Python compares them equal to one (``True == 1``,
    ``7.0 == 7``): an id names the request whose id has the same type and value.
    """
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def parse(obj: Any) -> Message:
    """One JSON value -> a message; raises :class:`InvalidRequest` when it is not one."""
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        raise InvalidRequest()
    if "method" not in obj:
        return _parse_response(obj)
    method = obj["method"]
    params = obj.get("params")
    if not isinstance(method, str) or ("params" in obj and not isinstance(params, (dict, list))):
        raise InvalidRequest()
    if "id" not in obj:
        return Notification(method, params)
    request_id = readable_id(obj)
    if request_id is None:  # null, float, boolean, object: MCP ids are strings or integers
        raise InvalidRequest()
    return Request(request_id, method, params)


def _parse_response(obj: dict[str, Any]) -> Response:
    request_id = readable_id(obj)
    has_result, has_error = "result" in obj, "error" in obj
    if request_id is None or has_result == has_error:
        raise InvalidRequest()
    return Response(request_id, obj.get("result"), obj.get("error"))


def batch_error(items: list[Any], limits: Limits = DEFAULT_LIMITS) -> InvalidRequest | None:
    """Why a batch gets one ``-32600`` and nothing in it runs (empty, or too large), or ``None``."""
    if not items:
        return InvalidRequest()
    if len(items) > limits.max_batch:
        return InvalidRequest(
            f"Invalid Request: a batch holds at most {limits.max_batch} messages "
            f"({len(items)} sent)"
        )
    return None


async def answer_batch(
    items: list[Any],
    answer: Callable[[Any], Coroutine[Any, Any, Any]],
    width: int,
    stopped: Callable[[], bool],
) -> list[Any]:
    """``answer(item)`` for each item, in order: at most ``width`` at once, each in a task of its
    own (cancelling one leaves the rest); none is started once ``stopped()``."""
    answers: list[Any] = [None] * len(items)
    order = iter(range(len(items)))

    async def work() -> None:
        for index in order:
            if stopped():
                return
            answers[index] = await asyncio.ensure_future(answer(items[index]))

    await asyncio.gather(*(work() for _ in range(width)))
    return answers


def result_response(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: ProtocolError) -> dict[str, Any]:
    """An error response; ``request_id`` is ``None`` when the id could not be read."""
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_error()}


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON without a newline (``\\n`` inside strings is escaped)."""
    return to_json(message)
