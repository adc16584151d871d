"""``@frozen``: frozen value classes without the import-time cost of ``dataclasses``.

``@dataclass(frozen=True)`` writes each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and frozen ``__setattr__`` as source text and compiles it when the class is
created: about 1.3 ms per class here, ~30 ms for mcpkit's classes, which was a tenth of a stdio
server's spawn -> ``tools/list``. Even its part that compiles nothing (collecting the fields,
~70 us a class) and the import of ``dataclasses`` itself were ~4% of that start-up. So
``@frozen`` reads the fields from the annotations itself (a few us) and adds the methods from
functions shared by every frozen class; the class becomes a dataclass to the standard library
on first sight: ``__dataclass_fields__`` and ``__dataclass_params__`` are placeholders whose
first read runs ``dataclasses`` over the class (fields only: ``init=False, repr=False,
eq=False``), so ``dataclasses.is_dataclass``, ``fields()``, ``replace()`` and ``asdict()`` work,
and pydantic validates, serializes and describes a frozen class like any dataclass. Type
checkers see a frozen dataclass (PEP 681).

What a frozen class supports is what mcpkit's value classes use: fields with plain (hashable)
defaults, annotated in the class or in a frozen base, ``ClassVar`` annotations left out,
arguments by position or keyword, ``__post_init__`` after the fields are set, and instances
that are immutable, equal when their class and fields are, hashable and ``repr``-ed like a
dataclass. :func:`replace` is ``dataclasses.replace`` for them, without importing it.
"""

from __future__ import annotations

import inspect
import threading
import types
from typing import Any, ClassVar, TypeVar, get_origin

from mcpkit._typing import dataclass_transform

__all__ = ["frozen", "replace"]

T = TypeVar("T", bound=type)
V = TypeVar("V")

_MISSING: Any = object()
_EMPTY = inspect.Parameter.empty


@dataclass_transform(frozen_default=True)
def frozen(cls: T) -> T:
    """Make ``cls`` a frozen value class of its annotated fields (see the module docstring)."""
    fields = _fields(cls)
    names = tuple(fields)
    defaults = {name: value for name, value in fields.items() if value is not _MISSING}
    _check_order(cls, names, defaults)
    signature = inspect.Signature(  # what help() and inspect.signature() show
        [
            inspect.Parameter(
                n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=defaults.get(n, _EMPTY)
            )
            for n in names
        ]
    )
    post_init = hasattr(cls, "__post_init__")
    methods = {
        "__frozen_fields__": names,
        "__frozen_defaults__": defaults,
        "__frozen_post_init__": post_init,
        "__signature__": signature,
        "__init__": _init_of(names, _plain(cls, names), post_init),
        "__repr__": _repr,
        "__eq__": _eq,
        "__hash__": _hash,
        "__setattr__": _refuse_change,
        "__delattr__": _refuse_change,
        "__dataclass_fields__": _AsDataclass(cls, "__dataclass_fields__"),
        "__dataclass_params__": _AsDataclass(cls, "__dataclass_params__"),
    }
    if "__match_args__" not in vars(cls):
        methods["__match_args__"] = names
    for name, value in methods.items():
        setattr(cls, name, value)
    return cls


def replace(value: V, /, **changes: Any) -> V:
    """A copy of the frozen ``value`` with ``changes`` (``dataclasses.replace``, which works
    too, without importing ``dataclasses``)."""
    current = {name: getattr(value, name) for name in type(value).__frozen_fields__}  # type: ignore[attr-defined]
    return type(value)(**{**current, **changes})


def _fields(cls: type) -> dict[str, Any]:
    """Field name -> default (``_MISSING`` for none), in ``dataclasses``' order: the frozen
    bases' fields (furthest first), then the class's own annotations; a redefined field keeps
    its place and takes the new default."""
    fields: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        if "__frozen_fields__" in vars(base):
            base_defaults = base.__frozen_defaults__  # type: ignore[attr-defined]
            for name in base.__frozen_fields__:  # type: ignore[attr-defined]
                fields[name] = base_defaults.get(name, _MISSING)
    for name, annotation in inspect.get_annotations(cls).items():
        if _is_class_var(annotation):
            continue
        default = getattr(cls, name, _MISSING)
        if isinstance(default, types.MemberDescriptorType):  # a slot: no default
            default = _MISSING
        elif default is not _MISSING and type(default).__hash__ is None:
            message = f"mutable default {type(default)} for field {name} is not allowed"
            raise ValueError(message)  # what dataclasses says, at the class, not at first use
        fields[name] = default
    return fields


def _is_class_var(annotation: object) -> bool:
    if isinstance(annotation, str):  # a string: its name before any ``[``
        return annotation.partition("[")[0].strip() in ("ClassVar", "typing.ClassVar")
    return annotation is ClassVar or get_origin(annotation) is ClassVar


class _AsDataclass:
    """``__dataclass_fields__`` or ``__dataclass_params__`` of a frozen class until first read:
    then ``dataclasses`` collects the class's fields (as it would have at its creation, its
    methods left alone) and the real attributes replace both placeholders."""

    _lock = threading.RLock()  # the warm-up's compile thread may be first; bases nest

    def __init__(self, cls: type, name: str) -> None:
        self.cls = cls
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        cls = self.cls
        with self._lock:
            if isinstance(vars(cls).get(self.name), _AsDataclass):
                del cls.__dataclass_fields__, cls.__dataclass_params__  # type: ignore[attr-defined]
                import dataclasses

                dataclasses.dataclass(init=False, repr=False, eq=False, match_args=False)(cls)
        return getattr(cls if instance is None else instance, self.name)


def _plain(cls: type, names: tuple[str, ...]) -> bool:
    """Whether the fields can be stored straight into the instance ``__dict__``: instances have
    one and no field is a data descriptor on the class (which ``object.__setattr__`` would call)."""
    if not getattr(cls, "__dictoffset__", 0):
        return False
    for name in names:
        for klass in cls.__mro__:
            if name in vars(klass):
                if hasattr(type(vars(klass)[name]), "__set__"):
                    return False
                break
    return True


def _check_order(cls: type, names: tuple[str, ...], defaults: dict[str, Any]) -> None:
    seen_default = False
    for name in names:
        if name in defaults:
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with")


def _init_of(names: tuple[str, ...], plain: bool, post_init: bool) -> Any:
    """A class's ``__init__``: every field by position, into an instance ``__dict__`` (the
    common case) in one update, what it needs known in advance (closure cells are ~35%
    cheaper to read than class attributes: compiling 1,000 tools makes ~6,500 frozen values);
    anything else through :func:`_init`."""
    count = len(names)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if plain and not kwargs and len(args) == count:
            # what object.__setattr__ does for them, straight; strict=False: the lengths are
            # equal (checked above)
            self.__dict__.update(zip(names, args, strict=False))
            if post_init:
                self.__post_init__()
        else:
            _init(self, *args, **kwargs)

    return __init__


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    """Fields by keyword, defaults, or a class whose fields ``object.__setattr__`` must set."""
    cls = type(self)
    names: tuple[str, ...] = cls.__frozen_fields__
    setter = object.__setattr__
    if not kwargs and len(args) == len(names):  # every field by position
        for name, value in zip(names, args, strict=True):
            setter(self, name, value)
    else:
        for name, value in _arguments(cls, names, args, kwargs):
            setter(self, name, value)
    if cls.__frozen_post_init__:
        self.__post_init__()


def _arguments(
    cls: type, names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[tuple[str, Any]]:
    if len(args) > len(names):
        raise TypeError(
            f"{cls.__name__}() takes {len(names)} positional arguments but {len(args)} were given"
        )
    values = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key in values:
            raise TypeError(f"{cls.__name__}() got multiple values for argument {key!r}")
        if key not in names:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {key!r}")
        values[key] = value
    defaults: dict[str, Any] = cls.__frozen_defaults__  # type: ignore[attr-defined]
    pairs = []
    for name in names:
        value = values.get(name, _MISSING)
        if value is _MISSING:
            value = defaults.get(name, _MISSING)
            if value is _MISSING:
                raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
        pairs.append((name, value))
    return pairs


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in type(self).__frozen_fields__)


def _repr(self: Any) -> str:
    fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).__frozen_fields__)
    return f"{type(self).__qualname__}({fields})"


def _eq(self: Any, other: object) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _refuse_change(self: Any, name: str, value: Any = None) -> None:
    raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")
