"""Elicitation: the modes a client declared, and forms (a model, dataclass or TypedDict -> the
flat ``requestedSchema`` to show)."""

from __future__ import annotations

import enum
from typing import Any

from mcpkit import _typing
from mcpkit._jsonschema import clean_schema
from mcpkit.exceptions import ClientCapabilityError, DefinitionError
from mcpkit.protocol.versions import elicitation_modes

__all__ = ["accepted_content", "elicitation_schema", "require_mode"]


def require_mode(capabilities: dict[str, Any], version: str, mode: str) -> None:
    """Raise :class:`ClientCapabilityError` unless the client declared elicitation ``mode``.

    ``elicitation: {}`` means form mode only (the spec's backwards-compatible reading); URL
    mode exists from 2025-11-25 and needs ``elicitation.url``.
    """
    caps = capabilities.get("elicitation")
    if mode == "form":
        declared = isinstance(caps, dict) and (not caps or "form" in caps)
        missing = "Missing required client capability: elicitation"
    else:
        declared = isinstance(caps, dict) and "url" in caps and elicitation_modes(version)
        missing = "Missing required client capability: elicitation (url mode)"
    if not declared:
        raise ClientCapabilityError({"elicitation": {mode: {}}}, missing)


def elicitation_schema(form: Any, *, version: str, where: str = "elicitation") -> dict[str, Any]:
    """A flat ``requestedSchema`` for an elicitation form, shaped for the client's version.

    ``form`` is a model, dataclass or TypedDict of primitive fields (string, number, integer,
    boolean, enums, and from 2025-11-25 lists of enum values). Enum classes become titled
    enums (member names as titles): ``enum`` + ``enumNames`` for 2025-06-18, ``oneOf`` of
    ``{const, title}`` from 2025-11-25; Literals stay plain ``enum``. Defaults are kept on
    booleans only for 2025-06-18 and on every primitive from 2025-11-25.
    """
    from mcpkit._pydantic import adapter, raw_schema  # pydantic loads for the first form

    modern = elicitation_modes(version)
    built = adapter(form, where=where, what="its form")
    schema = clean_schema(raw_schema(built, "validation", where=where), strip_optional=True)
    types = _field_types(form)
    properties = {
        name: _form_field(name, prop, types.get(name), modern=modern, where=where)
        for name, prop in schema.get("properties", {}).items()
    }
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        out["required"] = schema["required"]
    return out


def accepted_content(form: Any, content: Any) -> Any:
    """The content a client accepted, validated as ``form`` (pydantic's ``ValidationError``
    when it does not fit)."""
    from mcpkit._pydantic import adapter  # the form's schema loaded pydantic already

    return adapter(form, where="elicitation", what="its form").validate_python(content)


def _field_types(form: Any) -> dict[str, Any]:
    fields = getattr(form, "model_fields", None)
    if isinstance(fields, dict):
        return {name: f.annotation for name, f in fields.items()}
    import typing_extensions  # a form's fields: pydantic (loaded for its schema) imports it too

    return dict(typing_extensions.get_type_hints(form))


def _enum_class(tp: Any) -> type[enum.Enum] | None:
    for candidate in (tp, *_typing.get_args(tp)):
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
