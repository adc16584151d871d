"""Questions about pydantic's classes, answered without importing pydantic.

``import mcpkit`` and a server whose definitions are all on the fast path
(:mod:`mcpkit._fast_schema`) never import the ``pydantic`` package (``pydantic_core``, the JSON
codec and the home of ``ValidationError``, does load). An object can only be a pydantic model or
``FieldInfo`` once pydantic has been imported, so these checks look in ``sys.modules`` first: no
import, and the answer is the same as ``isinstance`` would give.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

__all__ = ["is_field_info", "is_model", "is_model_class"]


def _loaded_class(module: str, name: str) -> type | None:
    found = sys.modules.get(module)
    cls: type | None = getattr(found, name, None) if found is not None else None
    return cls


def is_model(value: Any) -> TypeGuard[BaseModel]:
    """``value`` is an instance of a pydantic ``BaseModel``."""
    cls = _loaded_class("pydantic.main", "BaseModel")
    return cls is not None and isinstance(value, cls)


def is_model_class(tp: Any) -> TypeGuard[type[BaseModel]]:
    """``tp`` is a pydantic ``BaseModel`` subclass."""
    cls = _loaded_class("pydantic.main", "BaseModel")
    return cls is not None and isinstance(tp, type) and issubclass(tp, cls)


def is_field_info(meta: Any) -> TypeGuard[FieldInfo]:
    """``meta`` is a pydantic ``FieldInfo`` (``Field(...)`` inside ``Annotated``)."""
    cls = _loaded_class("pydantic.fields", "FieldInfo")
    return cls is not None and isinstance(meta, cls)
