"""``schema_profile="openai-strict"``: what OpenAI's strict mode (``strict: true``, Structured
Outputs; also what the Responses API makes of a schema when ``strict`` is omitted) demands.

- every object: ``additionalProperties: false``, ``properties`` (``{}`` for none), every
  property in ``required`` ([OAI-SO], [oa-agents]);
- a property that may be omitted: a union with null, ``type: [T, "null"]`` (else
  ``anyOf: [T, {"type": "null"}]``) ([OAI-SO], [oa-agents]);
- ``$ref`` with keys beside it: ``anyOf: [{"$ref": ...}]`` + those keys ([oa-agents],
  [pyd-oai]); ``$defs`` and recursion kept ([OAI-SO]);
- ``allOf`` merged into one object ([OAI-SO]); ``oneOf`` becomes ``anyOf`` ([oa-agents]);
- keywords outside :data:`STRICT_KEYWORDS`, formats outside :data:`STRICT_FORMATS`, patterns
  with look-around and ``default``: dropped, constraints stated in the description
  ([pyd-oai], [OAI-SO], 567-labs/instructor#1074);
- refused: ``dict[str, T]``, ``Any``, untyped ``items``, tuples, a root union, the size limits
  ([oa-agents], [pyd-oai], [OAI-SO]).

An argument the model sends as ``null`` because strict mode made it required, where the real
type takes no ``null``, counts as omitted (:func:`mcpkit._profiles.omitting_nulls`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit._jsonschema import child_path, local_name, named_types, union_members
from mcpkit._profile_shapes import Refs, Unpublishable, is_null, merged_all_of
from mcpkit._profile_words import DESCRIBED, described, words
from mcpkit._provider_facts import (
    MCP_ANNOTATIONS,
    STRICT_FORMATS,
    STRICT_KEYWORDS,
    has_lookaround,
    strict_size_problems,
)

__all__ = ["openai_strict"]

_SHAPED = ("properties", "required", "additionalProperties", "items", "anyOf", "oneOf", "allOf")
_OPEN = (
    "an object without named properties (dict[str, T], Any, extra keys allowed), which "
    "strict mode cannot express ([OAI-SO], [oa-agents]); use a list of {key, value} objects, "
    "a model, or a JSON string"
)


def openai_strict(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The strict form of a tool's input schema (raises :class:`Unpublishable`)."""
    if union_members(schema) is not None or "object" not in (named_types(schema) or ("object",)):
        raise Unpublishable("$", "the root must be an object, not a union ([OAI-SO])")
    refs = Refs(schema)
    body = {k: v for k, v in schema.items() if k != "$defs"}
    out = _node(body, "$")
    if refs.defs:
        out["$defs"] = {n: _node(d, f"$<$defs {n}>") for n, d in refs.defs.items()}
    problems = strict_size_problems(out)
    if problems:
        raise Unpublishable("$", f"over OpenAI's strict limits ([OAI-SO]): {'; '.join(problems)}")
    return out


def _node(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    if isinstance(node.get("allOf"), list):
        node = merged_all_of(node, path)
    if "$ref" in node:
        return _reference(node, path)
    kinds = named_types(node) or ()
    members = union_members(node)  # a oneOf is published as anyOf ([oa-agents])
    if not kinds and members is None and "enum" not in node and "const" not in node:
        if "properties" not in node:
            raise Unpublishable(
                path, "no type (any JSON value), which strict mode refuses ([OAI-SO]); type it"
            )
        kinds = ("object",)
    out = _kept(node)
    if "object" in kinds and "type" not in node:
        out = {"type": "object", **out}
    if members is not None:
        out["anyOf"] = [_node(m, child_path(path, "anyOf", i)) for i, m in enumerate(members)]
    if "object" in kinds:
        out.update(_object(node, path))
    if "array" in kinds:
        out.update(_array(node, path))
    return out


def _kept(node: Mapping[str, Any]) -> dict[str, Any]:
    """The supported keywords as they are; the others dropped, constraints said in words."""
    out: dict[str, Any] = {}
    dropped: set[str] = set()
    for key, value in node.items():
        if key in _SHAPED or key == "$defs":
            continue
        if key in MCP_ANNOTATIONS or (key in STRICT_KEYWORDS and _supported(key, value)):
            out[key] = value
        else:
            dropped.add(key)
    text = described(node.get("description"), words(node, dropped & DESCRIBED))
    if text:
        out["description"] = text
    return out


def _supported(key: str, value: Any) -> bool:
    if key == "format":
        return value in STRICT_FORMATS
    if key == "pattern":
        return not has_lookaround(value)
    return True


def _reference(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    if node["$ref"] != "#" and local_name(node["$ref"]) is None:
        raise Unpublishable(path, f"$ref {node['$ref']!r} is not a local #/$defs/... definition")
    rest = _kept({k: v for k, v in node.items() if k != "$ref"})
    if not rest:
        return {"$ref": node["$ref"]}
    return {"anyOf": [{"$ref": node["$ref"]}], **rest}


def _object(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    extra = node.get("additionalProperties")
    properties = node.get("properties", {} if extra is False else None)  # closed: no keys
    if not isinstance(properties, dict) or extra not in (None, False):
        raise Unpublishable(path, _OPEN)
    required = set(node.get("required", ()))
    shaped = {
        name: _node(sub, child_path(path, "properties", name)) for name, sub in properties.items()
    }
    return {
        "properties": {n: s if n in required else _nullable(s) for n, s in shaped.items()},
        "required": list(shaped),
        "additionalProperties": False,
    }


def _array(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    items = node.get("items")
    if "prefixItems" in node or not isinstance(items, dict) or not items:
        raise Unpublishable(
            path, "an array of untyped items or a tuple, which strict mode refuses ([pyd-oai])"
        )
    return {"items": _node(items, child_path(path, "items", None))}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional property as strict mode has it: required, and ``null`` allowed."""
    kinds = named_types(schema)
    members = schema.get("anyOf")
    if (kinds and "null" in kinds) or (isinstance(members, list) and any(map(is_null, members))):
        return schema
    if isinstance(schema.get("type"), str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [schema["type"], "null"]}
    if isinstance(members, list):
        return {**schema, "anyOf": [*members, {"type": "null"}]}
    inner = {k: v for k, v in schema.items() if k != "description"}
    outer = {"description": schema["description"]} if "description" in schema else {}
    return {"anyOf": [inner, {"type": "null"}], **outer}
