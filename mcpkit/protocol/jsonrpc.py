"""The JSON-RPC 2.0 envelope: bytes <-> messages, and the standard errors (no MCP here).

``decode`` turns bytes into JSON values (``-32700`` for broken JSON or UTF-8, ``-32600`` when
the message is too large or nested too deep); ``parse`` turns one JSON value into a
:class:`Request`, :class:`Notification` or :class:`Response` (``-32600`` when it is none of
them); ``encode`` writes compact UTF-8 JSON on one line, and is the one place every message
leaves through: it never writes ``NaN`` or ``Infinity`` (JSON has neither) and raises
:class:`~mcpkit.exceptions.Unencodable` for what JSON cannot carry. ``encoded`` encodes a message
where it is built, so that a failure can still be answered there; the transports' ``encode``
then returns those bytes as they are.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from mcpkit import _codec
from mcpkit._frozen import frozen
from mcpkit.exceptions import InvalidRequest, ParseError, ProtocolError, Unencodable
from mcpkit.protocol.plain import DECLINED, plain_json, plain_value
from mcpkit.types import RequestId

__all__ = [
    "Encoded",
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
    "encoded",
    "error_response",
    "notification",
    "parse",
    "readable_id",
    "result_response",
]

MiB = 1024 * 1024


@frozen
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
    value = plain_value(data) if _plain_first else DECLINED  # the same value, or declined
    if value is DECLINED:
        try:
            value = _codec.from_json(data, allow_inf_nan=False)
        except ValueError as exc:
            if "recursion limit" in str(exc):
                raise _too_deep(limits) from None
            raise ParseError() from None
    # (Valid JSON needs two characters a level: a short message is never too deep.)
    deep = len(data) > 2 * limits.max_depth and _may_be_deep(data, limits.max_depth)
    if deep and _deeper_than(value, limits.max_depth):
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
    request_id = obj["id"]  # (as_id, inline: every request's)
    if not isinstance(request_id, str) and (
        not isinstance(request_id, int) or isinstance(request_id, bool)
    ):  # null, float, boolean, object: MCP ids are strings or integers
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


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notification (no ``params`` member when ``params`` is ``None``)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def error_response(request_id: RequestId | None, error: ProtocolError) -> dict[str, Any]:
    """An error response; ``request_id`` is ``None`` when the id could not be read."""
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_error()}


class Encoded(dict[str, Any]):
    """A message with its bytes, encoded once where it was built (see :func:`encoded`).

    Still the message (transports read its ``id`` and ``error``), but not to be changed: its
    bytes would not follow.
    """

    __slots__ = ("data",)

    data: bytes


def encoded(message: dict[str, Any]) -> Encoded:
    """``message`` with its bytes, encoded now; raises :class:`Unencodable` if JSON cannot
    carry it. :func:`encode` returns those bytes as they are."""
    if type(message) is Encoded:
        return message
    data = _encode(message)  # (a message: never a batch's list)
    answer = Encoded(message)
    answer.data = data
    return answer


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON without a newline (``\\n`` inside strings is escaped).

    Never ``NaN`` or ``Infinity``: a value JSON cannot carry raises :class:`Unencodable`, which
    says what and where. A list (a batch) is its members' bytes, joined: each member encoded
    once, where it was built.
    """
    if type(message) is Encoded:  # (_encode()'s first question, inline: every answer's)
        return message.data
    if type(message) is list:
        return b"[" + b",".join([_encode(item) for item in message]) + b"]"
    return _encode(message)


def _encode(message: Any) -> bytes:
    if type(message) is Encoded:
        return message.data
    if _plain_first:  # until pydantic_core's serializer is in use: see mcpkit.protocol.plain
        data = plain_json(message)
        if data is not None:
            return data
        serializer_in_use()
    try:
        data = _codec.to_json(message)
    except ValueError as exc:
        raise _unencodable_in(message) or Unencodable(str(exc)) from None
    # Cheap, and rarely true: a float JSON has no number for, or those letters in a string;
    # a number longer than clients read (or that many digits in a string). ``find``, not ``in``:
    # ``bytes in bytes`` first tries the needle as an int, which builds and drops a TypeError.
    if (
        data.find(b"NaN") >= 0
        or data.find(b"Infinity") >= 0
        or (len(data) > _MAX_DIGITS and _has_long_number(data))
    ):
        fault = _unencodable_in(message)
        if fault is not None:
            raise fault
    return data


_plain_first = True


def serializer_in_use() -> None:
    """From now on, every message is read and written by pydantic_core's codec, not by the
    standard library's ``json`` (:mod:`mcpkit.protocol.plain`): called by the first message
    ``plain_json`` declines, and by the warm-up (which imports pydantic, and with it everything
    the serializer's first use would)."""
    global _plain_first
    _plain_first = False


_MAX_DIGITS = 4300
"""The longest integer written: Python's default limit for reading one (``json.loads`` refuses
longer ones, and JavaScript reads them as ``Infinity``)."""
_TOO_LONG = 10**_MAX_DIGITS
_LONG = rb"[0-9]{%d}" % (_MAX_DIGITS + 1)  # compiled (and cached by re) at first use


def _has_long_number(data: bytes) -> bool:
    """A run of more than ``_MAX_DIGITS`` digits; the regex only when there are that many
    digits at all (counting them is ~20x cheaper than the search)."""
    if len(data) <= _MAX_DIGITS or len(data) - len(data.translate(None, _DIGITS)) <= _MAX_DIGITS:
        return False
    return re.search(_LONG, data) is not None


_DIGITS = b"0123456789"


_Path = tuple[str | int, ...]
_DEEPEST = 300  # past pydantic's serializer's own limit (~255 levels): circular, or too deep


def _unencodable_in(value: Any) -> Unencodable | None:
    """The first thing in ``value`` JSON cannot carry, and where: a NaN or infinite float, an
    integer longer than clients read, a string UTF-8 cannot encode, a value ``to_json`` cannot
    serialize, a circular reference. Iterative: no recursion."""
    stack: list[tuple[Any, _Path]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > _DEEPEST:
            return Unencodable(f"a circular reference, or nesting deeper than {_DEEPEST} levels")
        if isinstance(node, (dict, list, tuple)):
            pairs = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((item, (*path, key)) for key, item in reversed(list(pairs)))
        elif isinstance(node, (float, int, str)) or node is None:
            fault = _scalar_fault(node, path)
            if fault is not None:
                return fault
        else:
            try:  # a model, a dataclass, a set...: look at what the serializer makes of it
                stack.append((_codec.to_jsonable_python(node), path))
            except ValueError as exc:
                return Unencodable(str(exc), path)
    return None


def _scalar_fault(node: float | int | str | None, path: _Path) -> Unencodable | None:
    if isinstance(node, float):
        if not math.isfinite(node):
            return Unencodable(_codec.to_json(node).decode(), path, non_finite=True)
    elif isinstance(node, int):
        if abs(node) >= _TOO_LONG:
            return Unencodable(f"an integer of more than {_MAX_DIGITS} digits", path)
    elif isinstance(node, str) and not node.isascii() and _has_surrogate(node):
        return Unencodable("a string with a lone surrogate (not UTF-8)", path)
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False
