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
from mcpkit._profile_shapes import Unpublishable, is_null
from mcpkit.exceptions import DefinitionError

__all__ = ["SCHEMA_PROFILES", "SchemaProfile", "check_profile", "omitting_nulls", "published"]

SchemaProfile = Literal["default", "portable", "openai-strict"]
SCHEMA_PROFILES: tuple[SchemaProfile, ...] = ("default", "portable", "openai-strict")


def _shaper(profile: str) -> Callable[[Mapping[str, Any]], dict[str, Any]] | None:
    """The pass of a profile other than ``"default"``, imported on first use: a server that
    publishes its schemas as derived (most) never loads them (~2 ms of its start-up)."""
    if profile == "portable":
        from mcpkit._profile_portable import portable

        return portable
    if profile == "openai-strict":
        from mcpkit._profile_strict import openai_strict

        return openai_strict
    return None


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
    shape = _shaper(profile)
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

    Where such properties are is worked out once; a call then looks only there (and copies
    only what it changes). ``validate`` itself when there are none.
    """
    plan = _plan(schema, schema, {})
    if plan.empty:
        return validate

    def without_nulls(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return validate(plan.apply(arguments))

    return without_nulls


class _Plan:
    """Where nulls may be dropped in a value of one schema: the properties themselves, the
    properties to look into, the items to look into. Plans of recursive types refer to
    themselves."""

    def __init__(self) -> None:
        self.drop: tuple[str, ...] = ()
        self.inner: dict[str, _Plan] = {}
        self.items: _Plan | None = None
        self.done = False  # False while a recursive type's plan is still being made

    @property
    def empty(self) -> bool:
        return not (self.drop or self.inner or self.items)

    def apply(self, value: Any) -> Any:
        if isinstance(value, list) and self.items is not None:
            items = [self.items.apply(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if not isinstance(value, Mapping):
            return value
        out = value
        for name in self.drop:
            if name in out and out[name] is None:
                out = {k: v for k, v in out.items() if k != name}
        for name, plan in self.inner.items():
            if name in out and (found := plan.apply(out[name])) is not out[name]:
                out = {**out, name: found}
        return out


def _plan(schema: Any, root: Mapping[str, Any], memo: dict[int, _Plan]) -> _Plan:
    plan = _Plan()
    if not isinstance(schema, dict):
        return plan
    schema = deref(schema, root)
    kept = [b for b in branches(schema, root) if not is_null(b)]
    schema = kept[0] if len(kept) == 1 else schema
    if id(schema) in memo:
        return memo[id(schema)]
    memo[id(schema)] = plan
    items = schema.get("items")
    if isinstance(items, dict):
        found = _plan(items, root, memo)
        plan.items = None if found.done and found.empty else found
    properties = schema.get("properties")
    if isinstance(properties, dict):
        required = schema.get("required", ())
        plan.drop = tuple(
            n for n, s in properties.items() if n not in required and not _takes_null(s, root)
        )
        inner = {n: _plan(s, root, memo) for n, s in properties.items()}
        plan.inner = {n: p for n, p in inner.items() if not (p.done and p.empty)}
    plan.done = True
    return plan


def _takes_null(schema: Any, root: Mapping[str, Any]) -> bool:
    return isinstance(schema, dict) and bool({"null", "any"} & type_set(deref(schema, root)))
