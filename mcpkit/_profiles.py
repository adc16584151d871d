"""Schema profiles: the published ``inputSchema`` of a tool, reshaped for model providers.

``"default"`` publishes the schema as derived. ``"portable"`` (:mod:`mcpkit._profile_portable`)
publishes the subset non-strict OpenAI, Anthropic and Gemini all accept; ``"openai-strict"``
(:mod:`mcpkit._profile_strict`) what OpenAI's strict mode demands. Either is one pure pass over
the derived schema, run once when the tool compiles; validation keeps the derived (real)
schema, so a refused argument is still answered with the real constraint.

Only ``inputSchema`` is reshaped: providers see nothing else, and clients check
``structuredContent`` against ``outputSchema``, which a profile would loosen (moving keywords
into words) or falsify (strict's null unions).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from mcpkit._jsonschema import branches, deref, type_set
from mcpkit._profile_portable import portable
from mcpkit._profile_shapes import Unpublishable, is_null
from mcpkit._profile_strict import openai_strict
from mcpkit.exceptions import DefinitionError

__all__ = ["SCHEMA_PROFILES", "SchemaProfile", "check_profile", "omitting_nulls", "published"]

SchemaProfile = Literal["default", "portable", "openai-strict"]
SCHEMA_PROFILES: tuple[SchemaProfile, ...] = ("default", "portable", "openai-strict")

_SHAPERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "portable": portable,
    "openai-strict": openai_strict,
}


def check_profile(
    value: Any, where: str, error: type[Exception] = DefinitionError
) -> SchemaProfile:
    """``value`` if it names a profile, else ``error`` (a :class:`DefinitionError`) naming them."""
    if value not in SCHEMA_PROFILES:
        names = ", ".join(repr(p) for p in SCHEMA_PROFILES)
        raise error(f"{where}schema_profile must be one of {names}, not {value!r}")
    profile: SchemaProfile = value
    return profile


def published(schema: dict[str, Any], profile: SchemaProfile, *, where: str) -> dict[str, Any]:
    """The input schema as ``profile`` publishes it (``schema`` itself for ``"default"``).

    Raises :class:`DefinitionError` naming the parameter (``$.a.b``) a profile cannot publish.
    """
    shape = _SHAPERS.get(profile)
    if shape is None:
        return schema
    try:
        return shape(schema)
    except Unpublishable as exc:
        raise DefinitionError(
            f"{where}: schema_profile={profile!r} cannot publish parameter {exc.path!r}: "
            f'{exc.text}; or publish this tool as it is with schema_profile="default"'
        ) from None


Validate = Callable[[Mapping[str, Any]], dict[str, Any]]


def omitting_nulls(validate: Validate, schema: Mapping[str, Any]) -> Validate:
    """``validate`` preceded by dropping each ``null`` the real ``schema`` does not take for a
    property it does not require: strict mode makes the model send ``null`` for what it would
    have omitted, so that ``null`` means "omitted" (the default applies).

    Costs one walk over the arguments per call, for ``openai-strict`` tools only.
    """

    def without_nulls(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return validate(_dropped(arguments, schema, schema))

    return without_nulls


def _dropped(value: Any, schema: Any, root: Mapping[str, Any]) -> Any:
    if not isinstance(schema, dict):
        return value
    schema = deref(schema, root)
    kept = [b for b in branches(schema, root) if not is_null(b)]
    if len(kept) == 1:
        schema = kept[0]
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_dropped(item, schema["items"], root) for item in value]
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, dict):
        return value
    required = schema.get("required", ())
    return {
        key: _dropped(item, properties.get(key), root)
        for key, item in value.items()
        if not (item is None and key in properties and key not in required)
        or _takes_null(properties[key], root)
    }


def _takes_null(schema: Any, root: Mapping[str, Any]) -> bool:
    return isinstance(schema, dict) and bool({"null", "any"} & type_set(deref(schema, root)))
