"""Type hints -> JSON Schema: the one place where mcpkit derives a schema.

Every schema mcpkit publishes (tool input and output, prompt arguments, template variables,
elicitation forms) is derived through this module, in three stages, each a function of its own:

1. the caller hands over resolved parameters (:class:`Param`) or a return type;
2. pydantic builds a ``TypeAdapter`` and its raw JSON Schema, titles switched off
   (:mod:`mcpkit._pydantic`), unless the type is common enough to publish without it
   (:func:`fast_schema`, :mod:`mcpkit._fast_schema`);
3. :func:`clean_schema` (:mod:`mcpkit._jsonschema`) rewrites the raw schema into the shape
   clients handle best: local ``$ref`` inlined (only recursive types keep ``$defs``), invented
   titles dropped, ``T | None = None`` published as plain ``T``.

This module is the public face: parameters, their descriptions and defaults, :class:`Header`
mirroring (:mod:`mcpkit._param_headers`) and the ``{"result": ...}`` wrapper of non-object
return values. Elicitation forms are shaped in :mod:`mcpkit._elicitation`; schemas are read
and walked (by keyword, never by property name) in :mod:`mcpkit._jsonschema`.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from mcpkit import _codec, _typing
from mcpkit._elicitation import elicitation_schema
from mcpkit._fast_schema import (
    admits_none,
    distinct_names,
    fast_parameter,
    fast_schema,
)
from mcpkit._frozen import frozen
from mcpkit._jsonschema import clean_schema, map_subschemas, subschemas, without_null
from mcpkit._param_headers import Header, mirror_headers
from mcpkit._pydantic_loaded import is_field_info

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "ArgumentsSchema",
    "Header",
    "Param",
    "ReturnSchema",
    "arguments_schema",
    "clean_schema",
    "elicitation_schema",
    "fast_schema",
    "return_schema",
    "subschemas",
]

EMPTY = inspect.Parameter.empty
_STRICT_ARGS = {"extra": "forbid"}  # a pydantic ConfigDict


@frozen
class Param:
    """One published parameter: its name, resolved type, default and description."""

    name: str
    annotation: Any
    default: Any = EMPTY
    description: str | None = None

    @property
    def required(self) -> bool:
        return self.default is EMPTY


class ArgumentsSchema:
    """The published input schema and the adapter that validates against it.

    The adapter is built on first use: common types publish their schema without pydantic
    (see :func:`fast_schema`), so a tool pays for its validator only when it is first called.
    """

    def __init__(self, schema: dict[str, Any], build: Callable[[], TypeAdapter[Any]]) -> None:
        self.schema = schema
        self._build = build

    @cached_property
    def adapter(self) -> TypeAdapter[Any]:
        return self._build()


class ReturnSchema:
    """The published output schema (``None``: unstructured) and how values are checked.

    ``wrapped`` is true when a non-object value travels as ``{"result": value}``; the adapter
    is built on first use.
    """

    def __init__(
        self,
        schema: dict[str, Any] | None,
        build: Callable[[], TypeAdapter[Any]] | None,
        wrapped: bool,
    ) -> None:
        self.schema = schema
        self._build = build
        self.wrapped = wrapped

    @cached_property
    def adapter(self) -> TypeAdapter[Any] | None:
        return None if self._build is None else self._build()

    def dump(self, value: Any) -> Any:
        """A structured tool's returned ``value`` checked against the schema, as JSON data
        (``{"result": value}`` when wrapped); what :class:`~mcpkit._explicit_schema.ExplicitOutput`
        does for an explicit schema, so a call asks neither which one it has."""
        adapter: Any = self.adapter  # its core validator and serializer, without their wrappers
        data = adapter.serializer.to_python(adapter.validator.validate_python(value), mode="json")
        return {"result": data} if self.wrapped else data


# --------------------------------------------------------------------------- input schemas


def arguments_schema(params: Sequence[Param], *, where: str) -> ArgumentsSchema:
    """Build the object schema and validator for a list of parameters.

    ``where`` names the definition in error messages ("tool 'build-app'").
    """
    fast = _fast_arguments(params)
    if fast is not None:
        _finish_properties(fast, params, where)
        return ArgumentsSchema(fast, lambda: _arguments_adapter(params, where))
    from mcpkit._pydantic import raw_schema  # pydantic loads when a type needs it

    built = _arguments_adapter(params, where)
    raw = raw_schema(built, "validation", where=where)
    schema = clean_schema(raw, strip_optional=True)
    _finish_properties(schema, params, where)
    return ArgumentsSchema(schema, lambda: built)


def _arguments_adapter(params: Sequence[Param], where: str) -> TypeAdapter[Any]:
    """A strict ``TypedDict`` of the parameters (unknown keys rejected), as an adapter."""
    import typing_extensions  # pydantic needs its TypedDict (< 3.12), and loads it anyway

    from mcpkit._pydantic import BUILD_ERRORS, adapter, cannot, culprit  # loads pydantic

    try:
        fields = {p.name: _field_type(p) for p in params}
    except BUILD_ERRORS as exc:  # a stdlib TypedDict rebuilt on < 3.12 has a bad annotation
        raise cannot(where, culprit(_annotations(params)) or "its parameters", exc) from exc
    container = typing_extensions.TypedDict("Arguments", fields)  # type: ignore[misc]
    setattr(container, "__pydantic_config__", _STRICT_ARGS)  # noqa: B010 - pydantic reads it
    return adapter(container, where=where, what="its parameters", parameters=_annotations(params))


def _field_type(param: Param) -> Any:
    from mcpkit._pydantic_compat import compatible_type  # loads pydantic

    tp = _accepting_null(compatible_type(param.annotation), param)
    wrapper = _typing.Required if param.required else _typing.NotRequired
    return wrapper[tp]


def _fast_arguments(params: Sequence[Param]) -> dict[str, Any] | None:
    """The object schema of parameters that all have a fast schema, else ``None``."""
    properties: dict[str, Any] = {}
    reached: set[Any] = set()  # pydantic keeps the titles of TypedDicts that share a name
    for param in params:
        prop, inside = fast_parameter(param.annotation, param.default is None)
        if prop is None or inside is None:
            return None
        reached |= inside
        properties[param.name] = _closed(prop) if inside else prop
    if not distinct_names(reached):
        return None
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    return schema


def _closed(schema: Any) -> Any:
    """A fast schema as a parameter publishes it: the strict container's ``extra="forbid"``
    reaches every TypedDict inside (the subschemas with ``properties``), which then carry
    ``additionalProperties: false`` right after their ``type``, as pydantic writes it."""
    if not isinstance(schema, dict):
        return schema
    out = map_subschemas(schema, _closed)
    if "properties" in out:
        out = {"type": out.pop("type"), "additionalProperties": False, **out}
    return out


def _accepting_null(tp: Any, param: Param) -> Any:
    """``= None`` accepts an explicit ``null``: ``T`` is validated as ``Optional[T]``."""
    if param.default is None and not admits_none(tp):
        return _typing.Optional[tp]
    return tp


def _annotations(params: Sequence[Param]) -> dict[str, Any]:
    return {p.name: p.annotation for p in params}


def _finish_properties(schema: dict[str, Any], params: Sequence[Param], where: str) -> None:
    """Descriptions, defaults and Optional style of top-level properties."""
    properties: dict[str, Any] = schema.setdefault("properties", {})
    for param in params:
        prop = properties[param.name]
        if param.default is None:
            properties[param.name] = prop = without_null(prop)
        elif not param.required:
            default = _jsonable(param.default)
            if default is not EMPTY:
                prop["default"] = default
        explicit = _explicit_description(param.annotation)
        description = explicit or param.description
        if description:
            prop["description"] = description
    mirror_headers(properties, _annotations(params), where)


def _explicit_description(annotation: Any) -> str | None:
    """``Annotated[T, Field(description=...)]`` or ``Annotated[T, "text"]``."""
    if isinstance(annotation, type):  # a class (most are): cheaper to tell than get_origin
        return None
    if _typing.get_origin(annotation) is not _typing.Annotated:
        return None
    for meta in reversed(annotation.__metadata__):
        if is_field_info(meta) and meta.description:
            return meta.description
        if isinstance(meta, str):
            return meta
    return None


def _jsonable(value: Any) -> Any:
    if type(value) in _PLAIN:  # what the serializer gives back as it is
        return value
    if isinstance(value, enum.Enum) and type(value.value) in _PLAIN:  # the serializer: its value
        return value.value  # (and not its first use, which imports ~10 ms of modules)
    try:
        return _codec.to_jsonable_python(value)
    except _codec.PydanticSerializationError:
        return EMPTY


_PLAIN = frozenset({str, int, bool})


# -------------------------------------------------------------------------- output schemas


def return_schema(annotation: Any, *, where: str, force: bool | None = None) -> ReturnSchema:
    """The output schema for a return annotation (``EMPTY`` when the function has none).

    ``force=True`` structures even ``str``; ``force=False`` never structures.
    """
    if force is False or annotation is EMPTY or annotation is None or annotation is type(None):
        return ReturnSchema(None, None, wrapped=False)
    if annotation is str and not force:
        return ReturnSchema(None, None, wrapped=False)

    def build() -> TypeAdapter[Any]:
        from mcpkit._pydantic import adapter  # pydantic loads on the first validation

        return adapter(annotation, where=where, what="its return type")

    schema = fast_schema(annotation)
    if schema is None:
        from mcpkit._pydantic import raw_schema

        built = build()
        schema = clean_schema(raw_schema(built, "serialization", where=where))

        def build() -> TypeAdapter[Any]:
            return built

    if _is_object_schema(schema):
        return ReturnSchema(schema, build, wrapped=False)
    defs = schema.pop("$defs", None)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapper["$defs"] = defs
    return ReturnSchema(wrapper, build, wrapped=True)


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"
