"""``@frozen``: frozen value classes without the import-time cost of ``dataclasses``' methods.

``@dataclass(frozen=True)`` writes each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and frozen ``__setattr__`` as source text and compiles it when the class is
created: about 1.3 ms per class here, ~30 ms for mcpkit's classes, which was a tenth of a stdio
server's spawn -> ``tools/list``. ``@frozen`` lets ``dataclasses`` do only the part that compiles
nothing (the fields: ``init=False, repr=False, eq=False``, ~0.3 ms) and adds the methods from
functions shared by every frozen class. So a frozen class *is* a dataclass --
``dataclasses.fields()``,
``replace()`` and ``asdict()`` work, and pydantic validates, serializes and describes it like
one -- and type checkers see a frozen dataclass (PEP 681).

What a frozen class supports is what mcpkit's value classes use: fields with plain defaults,
arguments by position or keyword, ``__post_init__`` after the fields are set, and instances
that are immutable, equal when their class and fields are, hashable and ``repr``-ed like a
dataclass.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

from mcpkit._typing import dataclass_transform

__all__ = ["frozen"]

T = TypeVar("T", bound=type)


@dataclass_transform(frozen_default=True)
def frozen(cls: T) -> T:
    """Make ``cls`` a frozen value class of its annotated fields (see the module docstring)."""
    dataclasses.dataclass(init=False, repr=False, eq=False)(cls)  # fields only: nothing compiled
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
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
        "__frozen_fields__": tuple(names),
        "__frozen_defaults__": defaults,
        "__frozen_post_init__": post_init,
        "__signature__": signature,
        "__init__": _init_of(tuple(names), _plain(cls, names), post_init),
        "__repr__": _repr,
        "__eq__": _eq,
        "__hash__": _hash,
        "__setattr__": _refuse_change,
        "__delattr__": _refuse_change,
    }
    for name, value in methods.items():
        setattr(cls, name, value)
    return cls


_EMPTY = inspect.Parameter.empty


def _plain(cls: type, names: list[str]) -> bool:
    """Whether the fields can be stored straight into the instance ``__dict__``: instances have
    one and no field is a data descriptor on the class (which ``object.__setattr__`` would call)."""
    if not getattr(cls, "__dictoffset__", 0):
        return False
    return not any(hasattr(type(inspect.getattr_static(cls, n, None)), "__set__") for n in names)


def _check_order(cls: type, names: list[str], defaults: dict[str, Any]) -> None:
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
        value = values.get(name, dataclasses.MISSING)
        if value is dataclasses.MISSING:
            value = defaults.get(name, dataclasses.MISSING)
            if value is dataclasses.MISSING:
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
