"""Version shims: stdlib ``typing.TypedDict`` on Python < 3.12, ``enum.Flag`` on 3.10.

pydantic refuses ``typing.TypedDict`` before 3.12 ("use typing_extensions.TypedDict"). Tool
authors should not have to know that, so such classes are rebuilt once, recursively, as
``typing_extensions.TypedDict`` classes with the same fields, docs and names. The user's
function still receives a plain ``dict``.

On 3.10 a plain ``enum.Flag`` raises ``TypeError`` (not ``ValueError``) when pydantic offers it
anything but an integer (``Flag._missing_`` compares it with 0), which would escape validation
as a tool failure; such a parameter is checked to be an integer first.
"""

from __future__ import annotations

import enum
import sys
import threading
import types
import typing
from typing import Any

import typing_extensions
from pydantic import BeforeValidator

__all__ = ["compatible_type"]

_NEEDS_REBUILD = sys.version_info < (3, 12)
_FLAG_NEEDS_INT = sys.version_info < (3, 11)


def compatible_type(tp: Any) -> Any:
    """Return ``tp`` with every stdlib TypedDict inside it made usable by pydantic."""
    if not _NEEDS_REBUILD:
        return tp
    return _rebuild(tp)


def _is_plain_flag(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Flag) and not issubclass(tp, int)


def _integer(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("Input should be an integer")
    return value


def _is_stdlib_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp) and type(tp).__module__ == "typing"


def _rebuild(tp: Any) -> Any:
    if _is_stdlib_typeddict(tp):
        return _rebuild_typeddict(tp)
    if _FLAG_NEEDS_INT and _is_plain_flag(tp):
        return typing_extensions.Annotated[tp, BeforeValidator(_integer)]
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is None or not args or origin is typing.Literal:
        return tp
    if origin is typing_extensions.Annotated:
        inner = _rebuild(args[0])
        if inner is args[0]:
            return tp
        annotated_args = (inner, *tp.__metadata__)
        return typing_extensions.Annotated[annotated_args]
    new_args = tuple(_rebuild(a) for a in args)
    if all(n is a for n, a in zip(new_args, args, strict=True)):
        return tp
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[new_args]  # noqa: UP007 - built at run time from a tuple
    if origin in (typing_extensions.Required, typing_extensions.NotRequired):
        return origin[new_args[0]]
    return origin[new_args]


_REBUILT: dict[Any, Any] = {}
_LOCK = threading.RLock()


def _rebuild_typeddict(cls: Any) -> Any:
    """The ``typing_extensions`` twin of ``cls`` (registered before its fields are rebuilt, so a
    recursive TypedDict refers to its own twin instead of recursing forever)."""
    with _LOCK:
        if cls not in _REBUILT:
            try:
                _fill_twin(cls)
            except BaseException:
                del _REBUILT[cls]  # a half-built twin must not be reused
                raise
        return _REBUILT[cls]


def _fill_twin(cls: Any) -> None:
    new: Any = typing_extensions.TypedDict(cls.__name__, {})  # type: ignore[misc]
    _REBUILT[cls] = new
    required = cls.__required_keys__
    fields: dict[str, Any] = {}
    for key, hint in typing.get_type_hints(cls, include_extras=True).items():
        wrapper = typing_extensions.Required if key in required else typing_extensions.NotRequired
        fields[key] = wrapper[_rebuild(_strip_required(hint))]
    new.__annotations__ = fields
    new.__required_keys__ = frozenset(k for k in fields if k in required)
    new.__optional_keys__ = frozenset(k for k in fields if k not in required)
    new.__total__ = cls.__total__
    new.__doc__ = cls.__doc__
    new.__module__ = cls.__module__
    new.__qualname__ = cls.__qualname__


def _strip_required(hint: Any) -> Any:
    origin = typing_extensions.get_origin(hint)
    if origin is not None and origin in _REQUIRED_MARKERS:
        return typing_extensions.get_args(hint)[0]
    return hint


# On 3.10 ``typing`` has no Required/NotRequired: collect the markers that exist, without None.
_REQUIRED_MARKERS = tuple(
    marker
    for module in (typing, typing_extensions)
    for name in ("Required", "NotRequired")
    if (marker := getattr(module, name, None)) is not None
)
