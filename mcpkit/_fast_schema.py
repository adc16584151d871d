"""The fast path: published schemas of common simple types, computed without pydantic.

Compiling a tool whose parameters are all common types (and answering ``tools/list``) then
builds no ``TypeAdapter``; the adapter waits for the tool's first call.
"""

from __future__ import annotations

import enum
import inspect
import marshal
import types
from typing import Any, Union

from mcpkit import _typing
from mcpkit._param_headers import Header

__all__ = [
    "admits_none",
    "distinct_names",
    "fast_parameter",
    "fast_schema",
    "flag_values",
    "typeddicts",
]

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def fast_schema(tp: Any) -> dict[str, Any] | None:
    """The published schema of a common simple type, computed without pydantic.

    Covers ``str``, ``int``, ``float``, ``bool``, Enums of strings or integers, Literals of two
    or more strings, integers or booleans, ``Optional``, ``list[T]``, ``dict[str, T]``,
    ``Annotated`` with only descriptions or :class:`Header`, and plain TypedDicts of these
    (no docstring, not recursive, no ``Annotated`` field); anything else returns ``None`` and
    goes through pydantic. A property test holds it equal to pydantic's post-processed output.
    """
    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _fast_enum(tp)
    if _typing.is_typeddict(tp):
        return _fast_typeddict(tp)
    origin, args = _typing.get_origin(tp), _typing.get_args(tp)
    if origin is _typing.Literal:
        return _fast_enum_values(list(args))
    if origin is _typing.Annotated:
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


_MEMO: dict[tuple[int, bool], tuple[Any, dict[str, Any] | None, bytes | None]] = {}
_MEMO_SIZE = 4096  # distinct parameter annotations remembered (then forgotten all at once)


def fast_parameter(
    annotation: Any, default_none: bool
) -> tuple[dict[str, Any] | None, set[Any] | None]:
    """A parameter's fast schema (of ``Optional[annotation]`` when it defaults to ``None``
    and does not admit ``None`` yet: an explicit ``null`` is accepted) and the
    TypedDicts it reaches (``None``: a recursive one), as :func:`fast_schema` and
    :func:`typeddicts` give them. The tools of one server share a few annotation objects
    (``int``, an Enum, the ``Optional[int]`` ``typing`` caches): each one's schema is worked
    out once, by identity, and a copy handed out. Annotations reaching a TypedDict are not
    remembered (their forward references may resolve later)."""
    key = (id(annotation), default_none)
    known = _MEMO.get(key)
    if known is not None and known[0] is annotation:
        return (_copied(known[1]) if known[2] is None else marshal.loads(known[2])), set()
    inside = typeddicts(annotation)
    nullable = default_none and not admits_none(annotation)
    target = _typing.Optional[annotation] if nullable else annotation
    schema = fast_schema(target)
    if inside == set():
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = (annotation, _copied(schema), _marshalled(schema))
    return schema, inside


def _marshalled(schema: Any) -> bytes | None:
    """The schema as ``marshal`` bytes, whose ``loads`` is a copy like :func:`_copied` but done
    in C; ``None`` when it holds anything but exact ``dict``/``list``/``str``/``int``/``float``/
    ``bool``/``None`` (an Enum member: ``marshal`` refuses subclasses). Version 2 writes no
    back-references, so a value reached twice comes back as two copies, as ``_copied`` makes."""
    try:
        return marshal.dumps(schema, 2)
    except ValueError:
        return None


def _copied(schema: Any) -> Any:
    """A copy of a schema's dicts and lists (what callers change), sharing the scalars."""
    if type(schema) is dict:
        return {key: _copied(value) for key, value in schema.items()}
    if type(schema) is list:
        return [_copied(value) for value in schema]
    return schema


def _fast_enum(cls: type[enum.Enum]) -> dict[str, Any] | None:
    if issubclass(cls, enum.Flag):
        schema: dict[str, Any] | None = flag_values(cls)
    else:
        schema = _fast_enum_values([member.value for member in cls])
    doc = cls.__doc__
    if schema is not None and doc and doc != "An enumeration.":  # 3.10's default docstring
        schema["description"] = inspect.cleandoc(doc)
    return schema


_QUALIFIERS = (_typing.Required, _typing.NotRequired)  # ReadOnly: pydantic's


def _fast_typeddict(cls: Any) -> dict[str, Any] | None:
    """An object schema of a TypedDict's fields; ``None`` for anything pydantic might publish
    differently (a docstring, a config, generics, ``Annotated`` fields, a TypedDict that reaches
    itself, two TypedDicts of one name)."""
    if cls.__doc__ or hasattr(cls, "__pydantic_config__") or getattr(cls, "__parameters__", ()):
        return None
    reached = typeddicts(cls)
    if reached is None or not distinct_names(reached):
        return None
    hints = _hints(cls)
    if hints is None:
        return None
    properties: dict[str, Any] = {}
    for name, hint in hints.items():
        field = _unqualified(hint)
        prop = None if _has_annotated(field) else fast_schema(field)
        if prop is None:
            return None
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name, hint in hints.items() if _required(cls, name, hint)]
    if required:
        schema["required"] = required
    return schema


def _hints(cls: Any) -> dict[str, Any] | None:
    try:
        hints: dict[str, Any] = _typing.get_type_hints(cls, include_extras=True)
    except Exception:  # an unresolved forward reference: pydantic says what is wrong
        return None
    return hints


def _required(cls: Any, name: str, hint: Any) -> bool:
    """``Required``/``NotRequired`` on the resolved hint decide (a string annotation hides them
    from ``__required_keys__``); else the totality of the class that declared the key."""
    origin = _typing.get_origin(hint)
    if origin in (_typing.Required, _typing.NotRequired):
        return origin is _typing.Required
    return name in cls.__required_keys__


def _unqualified(hint: Any) -> Any:
    while _typing.get_origin(hint) in _QUALIFIERS:
        hint = _typing.get_args(hint)[0]
    return hint


def typeddicts(tp: Any, path: tuple[Any, ...] = ()) -> set[Any] | None:
    """Every TypedDict ``tp`` reaches (through its arguments and fields); ``None`` when one
    reaches itself (pydantic keeps a recursive one in ``$defs``). As a parameter such schemas
    are closed: see :func:`mcpkit.schema.arguments_schema`."""
    found: set[Any] = set()
    inner: list[Any] = list(_typing.get_args(tp))
    if _typing.is_typeddict(tp):
        if tp in path:
            return None
        found.add(tp)
        path = (*path, tp)
        inner = list((_hints(tp) or {}).values())
    for arg in inner:
        more = typeddicts(arg, path)
        if more is None:
            return None
        found |= more
    return found


def distinct_names(classes: set[Any]) -> bool:
    """No two of ``classes`` share a name (pydantic would keep their titles to tell them apart)."""
    return len({cls.__name__ for cls in classes}) == len(classes)


def _has_annotated(tp: Any) -> bool:
    if _typing.get_origin(tp) is _typing.Annotated:
        return True
    return any(_has_annotated(arg) for arg in _typing.get_args(tp))


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
    if _typing.get_origin(tp) is _typing.Annotated:
        return admits_none(_typing.get_args(tp)[0])
    if tp is None or tp is type(None) or tp is Any:
        return True
    return any(admits_none(arg) for arg in _union_args(tp))


def _union_args(tp: Any) -> tuple[Any, ...]:
    origin = _typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return _typing.get_args(tp)
    return ()


_MAX_FLAG_BITS = 8
"""A Flag with up to this many bits publishes every combination as its ``enum``."""


def flag_values(cls: type[enum.Flag]) -> dict[str, Any]:
    """The integers a Flag parameter takes: its members and every combination of them.

    Up to :data:`_MAX_FLAG_BITS` bits that is an ``enum`` of all combinations (``0``, no flag,
    included), checked on every call; past it, the range ``0``..all bits.
    """
    values = [int(member.value) for member in cls.__members__.values()]
    if any(value < 0 for value in values):  # e.g. ALL = -1: no bit pattern to enumerate
        return {"type": "integer", "enum": sorted(set(values))}
    mask = 0
    for value in values:
        mask |= value
    bits = [1 << i for i in range(mask.bit_length()) if mask >> i & 1]
    if len(bits) > _MAX_FLAG_BITS:
        return {"type": "integer", "minimum": 0, "maximum": mask}
    combinations = [0]
    for bit in bits:
        combinations += [value | bit for value in combinations]
    return {"type": "integer", "enum": sorted(combinations)}
