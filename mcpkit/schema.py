"""Type hints -> JSON Schema: the one place where mcpkit derives a schema.

Every schema mcpkit publishes (tool input and output, prompt arguments, template variables,
elicitation forms) comes from here, in three stages, each a function of its own:

1. the caller hands over resolved parameters (:class:`Param`) or a return type;
2. pydantic builds a ``TypeAdapter`` and its raw JSON Schema (titles switched off);
3. :func:`clean_schema` (:mod:`mcpkit._jsonschema`) rewrites the raw schema into the shape
   clients handle best: local ``$ref`` inlined (only recursive types keep ``$defs``), invented
   titles dropped, ``T | None = None`` published as plain ``T``.

The post-processing walks schemas *by keyword*: a property called ``title`` or ``default`` is a
name, never rewritten.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any, Union

import typing_extensions
from pydantic import ConfigDict, PydanticSchemaGenerationError, TypeAdapter
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import PydanticSerializationError, to_jsonable_python

from mcpkit._compat import compatible_type
from mcpkit._jsonschema import clean_schema, subschemas, without_null
from mcpkit._records import record
from mcpkit.exceptions import DefinitionError

__all__ = [
    "ArgumentsSchema",
    "Header",
    "Param",
    "ReturnSchema",
    "arguments_schema",
    "clean_schema",
    "elicitation_schema",
    "return_schema",
    "subschemas",
]

EMPTY = inspect.Parameter.empty
_STRICT_ARGS = ConfigDict(extra="forbid")


class _NoTitles(GenerateJsonSchema):
    """pydantic's generator without the invented field titles (``Field(title=...)`` stays)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def enum_schema(self, schema: Any) -> dict[str, Any]:
        result: dict[str, Any] = super().enum_schema(schema)
        if issubclass(schema["cls"], enum.Flag):  # every combination, not just the members
            del result["enum"]
            result.update(_flag_values(schema["cls"]))
        return result


_MAX_FLAG_BITS = 8
"""A Flag with up to this many bits publishes every combination as its ``enum``."""


def _flag_values(cls: type[enum.Flag]) -> dict[str, Any]:
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


@record
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


# --------------------------------------------------------------------------- input schemas


def arguments_schema(params: Sequence[Param], *, where: str) -> ArgumentsSchema:
    """Build the object schema and validator for a list of parameters.

    ``where`` names the definition in error messages ("tool 'build-app'").
    """
    fast = _fast_arguments(params)
    if fast is not None:
        _finish_properties(fast, params, where)
        return ArgumentsSchema(fast, lambda: _arguments_adapter(params, where))
    adapter = _arguments_adapter(params, where)
    raw = _raw_schema(adapter, "validation", where=where)
    schema = clean_schema(raw, strip_optional=True)
    _finish_properties(schema, params, where)
    return ArgumentsSchema(schema, lambda: adapter)


def _arguments_adapter(params: Sequence[Param], where: str) -> TypeAdapter[Any]:
    """A strict ``TypedDict`` of the parameters (unknown keys rejected), as an adapter."""
    try:
        fields = {p.name: _field_type(p) for p in params}
    except _BUILD_ERRORS as exc:  # a stdlib TypedDict rebuilt on < 3.12 has a bad annotation
        raise _cannot(where, _culprit(params) or "its parameters", exc) from exc
    container = typing_extensions.TypedDict("Arguments", fields)  # type: ignore[misc]
    setattr(container, "__pydantic_config__", _STRICT_ARGS)  # noqa: B010 - pydantic reads it
    return _adapter(container, where=where, what="its parameters", params=params)


def _field_type(param: Param) -> Any:
    tp = compatible_type(param.annotation)
    if param.default is None and not _admits_none(tp):
        tp = typing_extensions.Optional[tp]  # noqa: UP045 - "= None" accepts an explicit null
    wrapper = typing_extensions.Required if param.required else typing_extensions.NotRequired
    return wrapper[tp]


def _admits_none(tp: Any) -> bool:
    """Whether ``None`` is already a value of ``tp`` (wrapping it again would nest ``anyOf``)."""
    if typing_extensions.get_origin(tp) is typing_extensions.Annotated:
        return _admits_none(typing_extensions.get_args(tp)[0])
    if tp is None or tp is type(None) or tp is Any:
        return True
    return any(_admits_none(arg) for arg in _union_args(tp))


def _union_args(tp: Any) -> tuple[Any, ...]:
    origin = typing_extensions.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return typing_extensions.get_args(tp)
    return ()


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
    _mirror_headers(properties, params, where)


@record
class Header:
    """Mirror a parameter into an HTTP header (2026-07-28 ``x-mcp-header``).

    ``region: Annotated[str, Header("Region")]`` publishes ``"x-mcp-header": "Region"``;
    Streamable HTTP clients then also send the value as ``Mcp-Param-Region``, so proxies can
    route on it, and the server checks that header and body agree. Allowed on string,
    integer and boolean parameters; the name is an HTTP token, unique ignoring case. Never
    mark secrets: headers are logged by proxies.
    """

    name: str


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _mirror_headers(properties: dict[str, Any], params: Sequence[Param], owner: str) -> None:
    seen: dict[str, str] = {}
    for param in params:
        header = _header_of(param.annotation)
        if header is None:
            continue
        where = f"{owner}: parameter {param.name!r}"
        if not _TOKEN.fullmatch(header.name):
            raise DefinitionError(f"{where}: Header({header.name!r}) is not an HTTP token")
        if header.name.lower() in seen:
            raise DefinitionError(
                f"{where}: Header({header.name!r}) is already used by "
                f"parameter {seen[header.name.lower()]!r} (names ignore case)"
            )
        if properties[param.name].get("type") not in ("string", "integer", "boolean"):
            raise DefinitionError(
                f"{where}: Header(...) needs a string, integer or boolean parameter"
            )
        seen[header.name.lower()] = param.name
        properties[param.name]["x-mcp-header"] = header.name


def _header_of(annotation: Any) -> Header | None:
    if typing_extensions.get_origin(annotation) is not typing_extensions.Annotated:
        return None
    return next((m for m in annotation.__metadata__ if isinstance(m, Header)), None)


def _explicit_description(annotation: Any) -> str | None:
    """``Annotated[T, Field(description=...)]`` or ``Annotated[T, "text"]``."""
    if typing_extensions.get_origin(annotation) is not typing_extensions.Annotated:
        return None
    for meta in reversed(annotation.__metadata__):
        if isinstance(meta, FieldInfo) and meta.description:
            return meta.description
        if isinstance(meta, str):
            return meta
    return None


def _jsonable(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        return EMPTY


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
        return _adapter(annotation, where=where, what="its return type")

    schema = fast_schema(annotation)
    if schema is None:
        adapter = build()
        schema = clean_schema(_raw_schema(adapter, "serialization", where=where))

        def build() -> TypeAdapter[Any]:
            return adapter

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


# ------------------------------------------------------------------------------ fast path

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
        schema: dict[str, Any] | None = _flag_values(cls)
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
    if len(rest) != 1 or len(args) != 2 or _admits_none(rest[0]):
        return None  # pydantic flattens nested Optionals; leave those to it
    inner = fast_schema(rest[0])
    return None if inner is None else {"anyOf": [inner, {"type": "null"}]}


def _fast_arguments(params: Sequence[Param]) -> dict[str, Any] | None:
    properties: dict[str, Any] = {}
    for param in params:
        tp = param.annotation
        if param.default is None and not _admits_none(tp):
            tp = typing_extensions.Optional[tp]  # noqa: UP045 - as _field_type does
        prop = fast_schema(tp)
        if prop is None:
            return None
        properties[param.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    return schema


# ---------------------------------------------------------------------------- pydantic calls


_BUILD_ERRORS = (PydanticSchemaGenerationError, PydanticUserError, TypeError, NameError)


def _adapter(tp: Any, *, where: str, what: str, params: Sequence[Param] = ()) -> TypeAdapter[Any]:
    try:
        return TypeAdapter(compatible_type(tp))
    except _BUILD_ERRORS as exc:
        raise _cannot(where, _culprit(params) or what, exc) from exc


def _cannot(where: str, what: str, exc: BaseException) -> DefinitionError:
    return DefinitionError(
        f"{where}: pydantic cannot build a schema for {what}: {_first_line(exc)}"
    )


def _culprit(params: Sequence[Param]) -> str | None:
    """Name the first parameter whose type pydantic rejects on its own."""
    for param in params:
        try:
            TypeAdapter(compatible_type(param.annotation))
        except _BUILD_ERRORS:
            return f"parameter {param.name!r} ({_type_name(param.annotation)})"
    return None


def _raw_schema(adapter: TypeAdapter[Any], mode: JsonSchemaMode, *, where: str) -> dict[str, Any]:
    try:
        return adapter.json_schema(mode=mode, schema_generator=_NoTitles)
    except (PydanticUserError, TypeError) as exc:
        raise DefinitionError(
            f"{where}: no JSON Schema can express it: {_first_line(exc)}"
        ) from exc


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# ---------------------------------------------------------------------- elicitation forms


def elicitation_schema(form: Any, *, version: str, where: str = "elicitation") -> dict[str, Any]:
    """A flat ``requestedSchema`` for an elicitation form, shaped for the client's version.

    ``form`` is a model, dataclass or TypedDict of primitive fields (string, number, integer,
    boolean, enums, and from 2025-11-25 lists of enum values). Enum classes become titled
    enums (member names as titles): ``enum`` + ``enumNames`` for 2025-06-18, ``oneOf`` of
    ``{const, title}`` from 2025-11-25; Literals stay plain ``enum``. Defaults are kept on
    booleans only for 2025-06-18 and on every primitive from 2025-11-25.
    """
    modern = version >= "2025-11-25"
    adapter = _adapter(compatible_type(form), where=where, what="its form")
    schema = clean_schema(_raw_schema(adapter, "validation", where=where), strip_optional=True)
    types = _field_types(form)
    properties = {
        name: _form_field(name, prop, types.get(name), modern=modern, where=where)
        for name, prop in schema.get("properties", {}).items()
    }
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        out["required"] = schema["required"]
    return out


def _field_types(form: Any) -> dict[str, Any]:
    fields = getattr(form, "model_fields", None)
    if isinstance(fields, dict):
        return {name: f.annotation for name, f in fields.items()}
    return dict(typing_extensions.get_type_hints(form))


def _enum_class(tp: Any) -> type[enum.Enum] | None:
    for candidate in (tp, *typing_extensions.get_args(tp)):
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            return candidate
    return None


def _form_field(
    name: str, prop: dict[str, Any], tp: Any, *, modern: bool, where: str
) -> dict[str, Any]:
    kind = prop.get("type")
    if kind == "array":
        if not modern:
            raise DefinitionError(
                f"{where}: field {name!r} is a multi-select, which clients "
                "before 2025-11-25 cannot show"
            )
        prop = {
            **prop,
            "items": _titled(prop.get("items", {}), _enum_class(tp), modern, multi=True),
        }
    elif kind not in ("string", "number", "integer", "boolean"):
        raise DefinitionError(
            f"{where}: field {name!r} is not a primitive (string, number, "
            "integer, boolean or an enum)"
        )
    else:
        prop = _titled(prop, _enum_class(tp), modern)
    if "default" in prop and not (modern or kind == "boolean"):
        prop = {k: v for k, v in prop.items() if k != "default"}
    return prop


def _titled(
    prop: dict[str, Any], cls: type[enum.Enum] | None, modern: bool, *, multi: bool = False
) -> dict[str, Any]:
    """Titles for an Enum class's values: ``enumNames`` (2025-06-18), else ``oneOf`` (a
    single select) or, for a multi-select's ``items``, ``anyOf`` of ``{const, title}``."""
    if cls is None or "enum" not in prop or issubclass(cls, enum.Flag):
        return prop  # a Flag's combinations have no names of their own
    members = [m for m in cls if m.value in prop["enum"]]
    titles = [m.name for m in members]
    if not modern:
        return {**prop, "enumNames": titles}
    options = [{"const": m.value, "title": m.name} for m in members]
    if multi:  # TitledMultiSelectEnumSchema: items is exactly {anyOf: [...]}
        return {"anyOf": options}
    rest = {k: v for k, v in prop.items() if k != "enum"}
    return {**rest, "oneOf": options}
