"""Validation failures -> ``{field, expected, received}``, in the published schema's words.

pydantic reports where a value failed (``loc``) and why (an error type); the client only knows
the published schema. :func:`error_detail` walks each ``loc`` along that schema (dropping the
union member tags pydantic inserts), names the field with a dotted path, and says what the
schema expected there: an enum's values, a bound, a type word. Tools, prompts and resource
templates all report argument failures this way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcpkit import _codec
from mcpkit._jsonschema import branches, deref, step, union_members

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

__all__ = ["detail", "error_detail", "locate"]

_MAX_RECEIVED = 200  # characters of a received value shown back


def error_detail(exc: _codec.ValidationError, schema: Mapping[str, Any]) -> dict[str, Any]:
    """``{field, expected, received}`` for the first failure, ``errors`` when there are more."""
    collected: dict[tuple[Any, ...], dict[str, Any]] = {}
    for error in exc.errors(include_url=False):
        path, target = _locate_error(error, schema)
        if error["type"] in _TAG_ERRORS:
            path, tagged = _tag_detail(error, path, target, schema)
            collected.setdefault(path, tagged)
            continue
        if path in collected:
            collected[path]["expected"] = _union_phrase(target, collected[path]["expected"])
            continue
        received = None if error["type"] in _MISSING else error.get("input")
        collected[path] = detail(path, _expected(error, target, len(path)), received)
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
        return path, detail(path, _schema_phrase(target) or "object", error.get("input"))
    tags = [value for branch in branches(union, root) for value in _tag_values(branch, tag)]
    received = error.get("ctx", {}).get("tag") if error["type"] == "union_tag_invalid" else None
    return (*path, tag), detail((*path, tag), tags, received)


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


def detail(path: Sequence[Any], expected: Any, received: Any) -> dict[str, Any]:
    """One failure: the dotted field path, what the schema expects there, what came."""
    return {"field": _dotted(path), "expected": expected, "received": _truncated(received)}


def _dotted(path: Sequence[Any]) -> str:
    return ".".join(str(part) for part in path)


def _truncated(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_RECEIVED:
        return value[:_MAX_RECEIVED] + "…"
    if isinstance(value, (dict, list)):
        text = _codec.to_json(value, fallback=repr).decode()
        if len(text) > _MAX_RECEIVED:
            return text[:_MAX_RECEIVED] + "…"
    return value


def _locate_error(
    error: ErrorDetails, root: Mapping[str, Any]
) -> tuple[tuple[Any, ...], Mapping[str, Any] | None]:
    if error["type"] in _EXTRA and error["loc"]:
        parent, _ = locate(error["loc"][:-1], root)
        return (*parent, error["loc"][-1]), None
    return locate(error["loc"], root)


def locate(
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
