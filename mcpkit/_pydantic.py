"""The pydantic boundary: adapters, their raw JSON Schema, and pydantic's failures in our words.

Every ``TypeAdapter`` mcpkit builds for a schema comes from :func:`adapter`, and every raw
schema from :func:`raw_schema` (pydantic's generator without invented titles, Flag enums
published as the integers they take). A type pydantic cannot handle becomes a
:class:`~mcpkit.DefinitionError` naming the definition and, where it can, the parameter.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from pydantic import PydanticSchemaGenerationError, TypeAdapter
from pydantic.errors import PydanticUserError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from mcpkit._pydantic_compat import compatible_type
from mcpkit.exceptions import DefinitionError

__all__ = ["BUILD_ERRORS", "NoTitles", "adapter", "cannot", "culprit", "flag_values", "raw_schema"]

BUILD_ERRORS = (PydanticSchemaGenerationError, PydanticUserError, TypeError, NameError)
"""What pydantic raises for a type it cannot build a validator or schema for."""


class NoTitles(GenerateJsonSchema):
    """pydantic's generator without the invented field titles (``Field(title=...)`` stays)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def enum_schema(self, schema: Any) -> dict[str, Any]:
        result: dict[str, Any] = super().enum_schema(schema)
        if issubclass(schema["cls"], enum.Flag):  # every combination, not just the members
            del result["enum"]
            result.update(flag_values(schema["cls"]))
        return result


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


def adapter(
    tp: Any, *, where: str, what: str, parameters: Mapping[str, Any] | None = None
) -> TypeAdapter[Any]:
    """A ``TypeAdapter`` for ``tp``; a failure names ``what`` (or the culprit of ``parameters``,
    a map of parameter name -> annotation)."""
    try:
        return TypeAdapter(compatible_type(tp))
    except BUILD_ERRORS as exc:
        raise cannot(where, culprit(parameters or {}) or what, exc) from exc


def cannot(where: str, what: str, exc: BaseException) -> DefinitionError:
    return DefinitionError(
        f"{where}: pydantic cannot build a schema for {what}: {_first_line(exc)}"
    )


def culprit(parameters: Mapping[str, Any]) -> str | None:
    """Name the first parameter whose type pydantic rejects on its own."""
    for name, annotation in parameters.items():
        try:
            TypeAdapter(compatible_type(annotation))
        except BUILD_ERRORS:
            return f"parameter {name!r} ({_type_name(annotation)})"
    return None


def raw_schema(adapter: TypeAdapter[Any], mode: JsonSchemaMode, *, where: str) -> dict[str, Any]:
    """pydantic's JSON Schema of an adapter, before mcpkit's post-processing."""
    try:
        return adapter.json_schema(mode=mode, schema_generator=NoTitles)
    except (PydanticUserError, TypeError) as exc:
        raise DefinitionError(
            f"{where}: no JSON Schema can express it: {_first_line(exc)}"
        ) from exc


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
