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

from mcpkit._fast_schema import flag_values
from mcpkit._pydantic_compat import compatible_type
from mcpkit.exceptions import DefinitionError

__all__ = ["BUILD_ERRORS", "NoTitles", "adapter", "cannot", "culprit", "raw_schema"]

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
