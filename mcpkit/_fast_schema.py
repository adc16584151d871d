"""The fast path: published schemas of common simple types, computed without pydantic.

Compiling a tool whose parameters are all common types (and answering ``tools/list``) then
builds no ``TypeAdapter``; the adapter waits for the tool's first call.
"""

from __future__ import annotations

import enum
import inspect
import types
from typing import Any, Union

import typing_extensions

from mcpkit._param_headers import Header
from mcpkit._pydantic import flag_values

__all__ = ["admits_none", "fast_schema"]

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def fast_schema(tp: Any) -> dict[str, Any] | None:
    """The published schema of a common simple type, computed without pydantic.

    Covers ``str``, ``int``, ``float``, ``bool``, Enums of strings or integers, Literals of two
    or more strings, integers or booleans, ``Optional``, ``list[T]``, ``dict[str, T]`` and
    ``Annotated`` with only descriptions or :class:`Header`; anything else returns ``None`` and
    goes through pydantic. A property test holds it equal to pydantic's post-processed output.
    """
    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _fast_enum(tp)
    origin, args = typing_extensions.get_origin(tp), typing_extensions.get_args(tp)
    if origin is typing_extensions.Literal:
        return _fast_enum_values(list(args))
    if origin is typing_extensions.Annotated:
        plain = all(isinstance(m, (str, Header)) for m in tp.__metadata__)
        return fast_schema(args[0]) if plain else None
    if origin is Union or origin is types.UnionType:
        return _fast_optional(args)
    if origin is list and len(args) == 1:
        items = fast_schema(args[0])
        return None if items is None else {"type": "array", "items": items}
    if origin is dict and len(args) == 2 and args[0] is str:
        values = fast_schema(args[1])
        return None if values is None else {"type": "object", "additionalProperties": values}
    return None


def _fast_enum(cls: type[enum.Enum]) -> dict[str, Any] | None:
    if issubclass(cls, enum.Flag):
        schema: dict[str, Any] | None = flag_values(cls)
    else:
        schema = _fast_enum_values([member.value for member in cls])
    doc = cls.__doc__
    if schema is not None and doc and doc != "An enumeration.":  # 3.10's default docstring
        schema["description"] = inspect.cleandoc(doc)
    return schema


def _fast_enum_values(values: list[Any]) -> dict[str, Any] | None:
    kinds = {type(v) for v in values}
    if len(values) < 2 or len(kinds) != 1 or kinds.pop() not in (str, int, bool):
        return None
    return {"type": _PRIMITIVES[type(values[0])], "enum": values}


def _fast_optional(args: tuple[Any, ...]) -> dict[str, Any] | None:
    rest = [a for a in args if a is not type(None)]
    if len(rest) != 1 or len(args) != 2 or admits_none(rest[0]):
        return None  # pydantic flattens nested Optionals; leave those to it
    inner = fast_schema(rest[0])
    return None if inner is None else {"anyOf": [inner, {"type": "null"}]}


def admits_none(tp: Any) -> bool:
    """Whether ``None`` is already a value of ``tp`` (wrapping it again would nest ``anyOf``)."""
    if typing_extensions.get_origin(tp) is typing_extensions.Annotated:
        return admits_none(typing_extensions.get_args(tp)[0])
    if tp is None or tp is type(None) or tp is Any:
        return True
    return any(admits_none(arg) for arg in _union_args(tp))


def _union_args(tp: Any) -> tuple[Any, ...]:
    origin = typing_extensions.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return typing_extensions.get_args(tp)
    return ()
