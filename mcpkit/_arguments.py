"""JSON arguments -> validated keyword arguments, and failures -> ``{field, expected, received}``.

Validation equals the published schema: strict JSON-mode pydantic (``"5"`` is no ``integer``,
``"arm64"`` is an Enum value, ISO strings become datetimes), plus two checks pydantic leaves out
(``uniqueItems`` for sets). The documented kindnesses: a JSON-encoded string sent for an object
or array parameter is decoded first, and an explicit ``null`` is fine for ``= None``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails, to_json

from mcpkit._jsonschema import branches, deref, mentions, step, union_members
from mcpkit.exceptions import InvalidArguments
from mcpkit.schema import ArgumentsSchema

__all__ = ["ArgumentValidator", "error_detail"]

_MAX_RECEIVED = 200  # characters of a received value shown back


class ArgumentValidator:
    """Validate a tool's arguments against its published input schema."""

    def __init__(self, arguments: ArgumentsSchema, *, tool: str) -> None:
        self._arguments = arguments
        self._schema = arguments.schema
        self._tool = tool

    # Worked out on the first call, so that compiling many tools stays cheap.

    @cached_property
    def _validator(self) -> Any:
        """The adapter's core validator, called directly: one Python frame less per call."""
        return self._arguments.adapter.validator

    @cached_property
    def _decodable(self) -> frozenset[str]:
        properties = self._schema.get("properties", {})
        return frozenset(
            n for n, p in properties.items() if _takes_container(p) and not _takes_string(p)
        )

    @cached_property
    def _recheck(self) -> bool:
        keywords = ("uniqueItems", "enum", "const", "minimum", "maximum")
        return any(mentions(self._schema, k) for k in keywords)

    def __call__(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self._decodable:
            arguments = self._decode_json_strings(arguments)
        try:
            values: dict[str, Any] = self._validator.validate_json(to_json(arguments), strict=True)
        except ValidationError as exc:
            arguments, values = self._retry_integral_floats(arguments, exc)
        if self._recheck:
            found = _first_violation(arguments, self._schema, (), self._schema)
            if found is not None:
                path, expected = found
                raise InvalidArguments(
                    _detail(path, expected, _value_at(arguments, path)), tool=self._tool
                )
        return values

    def _retry_integral_floats(
        self, arguments: Mapping[str, Any], exc: ValidationError
    ) -> tuple[Mapping[str, Any], dict[str, Any]]:
        """JSON Schema counts ``1.0`` as an integer, strict pydantic does not: where pydantic
        wanted an integer and got a whole float, send the integer and validate once more."""
        fixed: Any = copy.deepcopy(dict(arguments))
        changed = False
        for error in exc.errors(include_url=False):
            value = error.get("input")
            if error["type"] == "int_type" and isinstance(value, float) and value.is_integer():
                path, _ = _locate(error["loc"], self._schema)
                changed = _replace_at(fixed, path, int(value)) or changed
        if not changed:
            raise InvalidArguments(error_detail(exc, self._schema), tool=self._tool) from None
        try:
            return fixed, self._validator.validate_json(to_json(fixed), strict=True)
        except ValidationError as again:
            raise InvalidArguments(error_detail(again, self._schema), tool=self._tool) from None

    def _decode_json_strings(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """An LLM-client quirk: ``"{\\"a\\": 1}"`` sent where an object is expected."""
        fixed = dict(arguments)
        for name in self._decodable.intersection(arguments):
            value = arguments[name]
            if isinstance(value, str):
                try:
                    decoded = json.loads(value)
                except ValueError:
                    continue
                if isinstance(decoded, (dict, list)):
                    fixed[name] = decoded
        return fixed


def _takes_container(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") in ("object", "array"):
        return True
    members = union_members(schema) or ()
    return any(isinstance(b, dict) and _takes_container(b) for b in members)


def _takes_string(schema: Mapping[str, Any]) -> bool:
    """A string is a valid value here: it must reach the function as sent, never decoded."""
    if schema.get("type") == "string":
        return True
    members = union_members(schema) or ()
    return any(isinstance(b, dict) and _takes_string(b) for b in members)


# ------------------------------------------------------------------------ uniqueItems


def _first_violation(
    value: Any, schema: Any, path: tuple[Any, ...], root: Mapping[str, Any]
) -> tuple[tuple[Any, ...], Any] | None:
    """What strict pydantic lets through but the schema forbids: duplicates in a set,
    ``true``/``false`` for an integer enum value (``True == 1`` in Python), and an integer
    outside a published enum or range (pydantic takes any integer for an ``IntFlag``)."""
    if not isinstance(schema, dict):
        return None
    schema = _only_branch(deref(schema, root), value, root)
    if isinstance(value, bool) and _refuses_bool(schema, root):
        return path, [v for branch in branches(schema, root) for v in _enum_values(branch)]
    if isinstance(value, list):
        if schema.get("uniqueItems") and _has_duplicates(value):
            return path, "unique items"
        prefix = schema.get("prefixItems") or []
        children: Iterable[tuple[Any, Any, Any]] = (
            (i, item, prefix[i] if i < len(prefix) else schema.get("items"))
            for i, item in enumerate(value)
        )
    elif isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        children = ((k, item, properties.get(k, extra)) for k, item in value.items())
    else:
        return _scalar_violation(value, schema, path)
    for key, item, sub in children:
        found = _first_violation(item, sub, (*path, key), root)
        if found is not None:
            return found
    return None


def _scalar_violation(
    value: Any, schema: Mapping[str, Any], path: tuple[Any, ...]
) -> tuple[tuple[Any, ...], Any] | None:
    # Integers only: a Flag takes any integer in pydantic, and its published enum or range is
    # what holds. Anything else pydantic accepted stays accepted (an Enum's own ``_missing_``
    # may take "FAST" for "fast"; ``null`` passes where a parameter defaults to None).
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    allowed = schema.get("enum")
    if isinstance(allowed, list) and value not in allowed:
        return path, allowed
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        return path, f">= {low}"
    if isinstance(high, (int, float)) and value > high:
        return path, f"<= {high}"
    return None


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _only_branch(schema: Mapping[str, Any], value: Any, root: Mapping[str, Any]) -> Any:
    """The one union member that can hold ``value`` (the union itself when unclear)."""
    union = union_members(schema)
    if union is None:
        return schema
    kind = "array" if isinstance(value, list) else "object" if isinstance(value, dict) else None
    kind = kind or _JSON_TYPES.get(type(value))
    kinds = (kind, "number", None) if kind == "integer" else (kind, None)  # 5 is a number too
    fits = [b for b in (deref(u, root) for u in union) if b.get("type") in kinds]
    return fits[0] if len(fits) == 1 else schema


def _refuses_bool(schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    union = union_members(schema)
    if union is not None:
        return all(_refuses_bool(deref(b, root), root) for b in union if isinstance(b, dict))
    if "enum" in schema or "const" in schema:
        return not any(isinstance(v, bool) for v in _enum_values(schema))
    return schema.get("type") not in ("boolean", None)


def _enum_values(schema: Mapping[str, Any]) -> list[Any]:
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    return [schema["const"]] if "const" in schema else []


def _has_duplicates(items: list[Any]) -> bool:
    seen = {to_json(item, by_alias=False) for item in items}
    return len(seen) != len(items)


def _replace_at(container: Any, path: Sequence[Any], value: Any) -> bool:
    """Set ``value`` at ``path`` inside nested dicts/lists; false when the path is not there."""
    for part in path[:-1]:
        try:
            container = container[part]
        except (KeyError, IndexError, TypeError):
            return False
    if not path or not isinstance(container, (dict, list)):
        return False
    try:
        container[path[-1]] = value
    except (IndexError, TypeError):
        return False
    return True


def _value_at(value: Any, path: Sequence[Any]) -> Any:
    for part in path:
        value = value[part]
    return value


# ---------------------------------------------------------------------- error details


def error_detail(exc: ValidationError, schema: Mapping[str, Any]) -> dict[str, Any]:
    """``{field, expected, received}`` for the first failure, ``errors`` when there are more."""
    collected: dict[tuple[Any, ...], dict[str, Any]] = {}
    for error in exc.errors(include_url=False):
        path, target = _locate_error(error, schema)
        if error["type"] in _TAG_ERRORS:
            path, detail = _tag_detail(error, path, target, schema)
            collected.setdefault(path, detail)
            continue
        if path in collected:
            collected[path]["expected"] = _union_phrase(target, collected[path]["expected"])
            continue
        received = None if error["type"] in _MISSING else error.get("input")
        collected[path] = _detail(path, _expected(error, target, len(path)), received)
    details = list(collected.values())
    first = dict(details[0])
    if len(details) > 1:
        first["errors"] = details
    return first


_TAG_ERRORS = ("union_tag_invalid", "union_tag_not_found")


def _tag_detail(
    error: ErrorDetails,
    path: tuple[Any, ...],
    target: Mapping[str, Any] | None,
    root: Mapping[str, Any],
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A discriminated union's tag is missing or unknown: report the tag field and its values."""
    union = _discriminated(target, root)
    tag = union["discriminator"].get("propertyName") if union else None
    if union is None or not isinstance(tag, str):
        return path, _detail(path, _schema_phrase(target) or "object", error.get("input"))
    tags = [value for branch in branches(union, root) for value in _tag_values(branch, tag)]
    received = error.get("ctx", {}).get("tag") if error["type"] == "union_tag_invalid" else None
    return (*path, tag), _detail((*path, tag), tags, received)


def _discriminated(schema: Mapping[str, Any] | None, root: Mapping[str, Any]) -> Any:
    if schema is None:
        return None
    schema = deref(schema, root)
    if isinstance(schema.get("discriminator"), dict):
        return schema
    for branch in schema.get("anyOf") or ():
        found = _discriminated(branch, root)
        if found is not None:
            return found
    return None


def _tag_values(branch: Mapping[str, Any], tag: str) -> list[Any]:
    prop = branch.get("properties", {}).get(tag, {})
    if "const" in prop:
        return [prop["const"]]
    return list(prop.get("enum", ()))


def _detail(path: Sequence[Any], expected: Any, received: Any) -> dict[str, Any]:
    return {"field": _dotted(path), "expected": expected, "received": _truncated(received)}


def _dotted(path: Sequence[Any]) -> str:
    return ".".join(str(part) for part in path)


def _truncated(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_RECEIVED:
        return value[:_MAX_RECEIVED] + "…"
    if isinstance(value, (dict, list)):
        text = to_json(value, fallback=repr).decode()
        if len(text) > _MAX_RECEIVED:
            return text[:_MAX_RECEIVED] + "…"
    return value


def _locate_error(
    error: ErrorDetails, root: Mapping[str, Any]
) -> tuple[tuple[Any, ...], Mapping[str, Any] | None]:
    if error["type"] in _EXTRA and error["loc"]:
        parent, _ = _locate(error["loc"][:-1], root)
        return (*parent, error["loc"][-1]), None
    return _locate(error["loc"], root)


def _locate(
    loc: Sequence[Any], root: Mapping[str, Any]
) -> tuple[tuple[Any, ...], Mapping[str, Any] | None]:
    """Walk pydantic's ``loc`` along the published schema, dropping union member tags."""
    path: list[Any] = []
    current: list[Mapping[str, Any]] = [root]
    for part in loc:
        following = [s for schema in current for s in step(schema, part, root)]
        if following:
            path.append(part)
            current = following
        # else: a union tag such as 'int' or 'Dog': not a place in the value
    return tuple(path), (current[0] if current else None)


_TYPE_WORDS = {
    "int": "integer",
    "float": "number",
    "string": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "frozenset": "array",
    "dict": "object",
    "model": "object",
    "dataclass": "object",
    "typed_dict": "object",
    "model_attributes": "object",
    "none": "null",
    "date": "date string (YYYY-MM-DD)",
    "datetime": "date-time string (ISO 8601)",
    "time": "time string (HH:MM:SS)",
    "time_delta": "duration string (ISO 8601)",
    "uuid": "UUID string",
    "decimal": "number or numeric string",
    "url": "URL string",
    "bytes": "string",
}

# pydantic error type -> (phrase, its ctx key, the JSON Schema keyword the phrase quotes)
_BOUNDS = {
    "greater_than_equal": (">= {}", "ge", "minimum"),
    "less_than_equal": ("<= {}", "le", "maximum"),
    "greater_than": ("> {}", "gt", "exclusiveMinimum"),
    "less_than": ("< {}", "lt", "exclusiveMaximum"),
    "multiple_of": ("multiple of {}", "multiple_of", "multipleOf"),
    "string_too_short": ("at least {} characters", "min_length", "minLength"),
    "string_too_long": ("at most {} characters", "max_length", "maxLength"),
    "too_short": ("at least {} items", "min_length", "minItems"),
    "too_long": ("at most {} items", "max_length", "maxItems"),
    "string_pattern_mismatch": ("string matching {}", "pattern", "pattern"),
}
_MISSING = frozenset({"missing", "missing_argument", "missing_keyword_only_argument"})
_EXTRA = frozenset({"extra_forbidden", "unexpected_keyword_argument"})


def _expected(error: ErrorDetails, target: Mapping[str, Any] | None, depth: int) -> Any:
    kind = error["type"]
    if target is not None and isinstance(target.get("enum"), list):
        return target["enum"]
    if kind in _MISSING:
        return "required"
    if kind in _EXTRA:
        return "no such argument" if depth <= 1 else "no such field"
    if kind in _BOUNDS:
        template, key, keyword = _BOUNDS[kind]
        bound = target.get(keyword) if target is not None else None
        return template.format(bound if bound is not None else error.get("ctx", {}).get(key, "?"))
    if kind in ("literal_error", "enum"):
        return str(error.get("ctx", {}).get("expected", "one of the allowed values"))
    for prefix, word in _TYPE_WORDS.items():
        if kind.startswith(prefix + "_") or kind == prefix:
            return word
    return _schema_phrase(target) or error["msg"]


def _schema_phrase(schema: Mapping[str, Any] | None) -> str | None:
    if not schema:
        return None
    if isinstance(schema.get("type"), str):
        return str(schema["type"])
    members = union_members(schema)
    if members is not None:
        words = [w for b in members if isinstance(b, dict) and (w := _schema_phrase(b))]
        return " or ".join(dict.fromkeys(words)) or None
    return None


def _union_phrase(target: Mapping[str, Any] | None, previous: Any) -> Any:
    """Several failures at one place come from a union's members: say what the union takes."""
    return _schema_phrase(target) or previous
