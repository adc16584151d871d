"""Reading JSON Schema: pure functions over schema dicts, the one place that walks them.

Schema post-processing, argument validation and its error messages, the docs generator and lint
all look inside schemas through here. Schemas are walked *by keyword*: a keyword's value is a
schema, a list of schemas or a map of name -> schema, and a property called ``items`` or ``$ref``
is a name, never walked into. Only local references (``#/$defs/Name``, the form mcpkit
publishes) are followed.

:func:`clean_schema` is built on these: it rewrites pydantic's raw schema into the shape mcpkit
publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "branches",
    "child_path",
    "children",
    "clean_schema",
    "deref",
    "local_name",
    "map_subschemas",
    "mentions",
    "named_types",
    "nested_properties",
    "recursive_defs",
    "step",
    "subschemas",
    "type_set",
    "union_members",
    "without_null",
]

_REF_PREFIX = "#/$defs/"

# Keywords whose value is a schema, a list of schemas, or a map of name -> schema. Older
# drafts' forms are read too (lint reads hand-written schemas): ``items`` as a list of schemas,
# ``definitions``, and ``dependencies`` (whose lists of names are no schemas).
_SUBSCHEMA = (
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_SUBSCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAP = (
    "properties",
    "patternProperties",
    "$defs",
    "dependentSchemas",
    "definitions",
    "dependencies",
)
_HOLDS: dict[str, type] = {
    **dict.fromkeys(_SUBSCHEMA, object),
    **dict.fromkeys(_SUBSCHEMA_LIST, list),
    **dict.fromkeys(_SUBSCHEMA_MAP, dict),
}
"""Keyword -> what its value must be to hold subschemas: a list, a map, or (object) a schema
(or a list of schemas, the older ``items``)."""


# ------------------------------------------------------------------------------ subschemas


def subschemas(node: Mapping[str, Any]) -> Iterator[Any]:
    """The direct subschemas of a schema (by keyword, never by property name)."""
    for key, value in node.items():
        holds = _HOLDS.get(key)
        if holds is None:
            continue
        if isinstance(value, list) and holds is not dict:
            yield from value
        elif isinstance(value, dict) and holds is dict:
            yield from value.values()
        elif holds is object:
            yield value


def children(node: Mapping[str, Any]) -> Iterator[tuple[str, str | int | None, Any]]:
    """:func:`subschemas` with where each comes from: ``(keyword, name or index, subschema)``
    (``None`` for a keyword whose value is one schema)."""
    for key, value in node.items():
        holds = _HOLDS.get(key)
        if holds is None:
            continue
        if isinstance(value, list) and holds is not dict:
            yield from ((key, i, v) for i, v in enumerate(value))
        elif isinstance(value, dict) and holds is dict:
            yield from ((key, name, v) for name, v in value.items())
        elif holds is object:
            yield key, None, value


def child_path(path: str, keyword: str, key: str | int | None) -> str:
    """Where a subschema sits, for messages: ``$.a.b`` (properties), ``$.a[*]`` (items),
    ``$.a[0]`` (tuple items), ``$.a.*`` (other keys) and ``$.a<anyOf 1>`` for the rest."""
    if keyword == "properties":
        return f"{path}.{key}"
    if keyword in ("items", "prefixItems"):
        return f"{path}[*]" if key is None else f"{path}[{key}]"
    if keyword == "additionalProperties":
        return f"{path}.*"
    return f"{path}<{keyword}>" if key is None else f"{path}<{keyword} {key}>"


def map_subschemas(node: Mapping[str, Any], change: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of ``node`` with ``change`` applied to each direct subschema, keys in order."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        holds = _HOLDS.get(key)
        if holds is None:
            out[key] = value
        elif isinstance(value, list) and holds is not dict:
            out[key] = [change(v) for v in value]
        elif isinstance(value, dict) and holds is dict:
            out[key] = {name: change(v) for name, v in value.items()}
        else:
            out[key] = change(value) if holds is object else value
    return out


def mentions(schema: Any, keyword: str) -> bool:
    """Whether ``keyword`` is used in the schema or any of its subschemas."""
    if not isinstance(schema, dict):
        return False
    return keyword in schema or any(mentions(s, keyword) for s in subschemas(schema))


def nested_properties(
    schema: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """``(path, schema)`` of every property reachable through ``properties``, parents first."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for key, sub in properties.items():
        if isinstance(sub, Mapping):
            path = (*prefix, key)
            yield path, sub
            yield from nested_properties(sub, path)


# ------------------------------------------------------------------------------ references


def local_name(ref: Any) -> str | None:
    """The definition a local ``$ref`` (``#/$defs/Name``) names; ``None`` for anything else."""
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        return ref[len(_REF_PREFIX) :]
    return None


def deref(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """What a local ``$ref`` points to in ``root`` (``{}`` if missing); else ``schema`` itself."""
    name = local_name(schema.get("$ref"))
    if name is None:
        return schema
    target: Mapping[str, Any] = root.get("$defs", {}).get(name, {})
    return target


def recursive_defs(defs: Mapping[str, Any]) -> set[str]:
    """The definitions that can reach themselves through ``$ref``s (cycle members)."""
    edges = {name: set(_refs(d)) & defs.keys() for name, d in defs.items()}
    return {name for name in defs if _reaches(edges, name, name)}


def _reaches(edges: Mapping[str, set[str]], start: str, target: str) -> bool:
    seen: set[str] = set()
    stack = list(edges[start])
    while stack:
        name = stack.pop()
        if name == target:
            return True
        if name not in seen:
            seen.add(name)
            stack.extend(edges.get(name, ()))
    return False


def _refs(node: Any) -> Iterator[str]:
    """Names of the local definitions a schema refers to, walking by keyword."""
    if not isinstance(node, dict):
        return
    name = local_name(node.get("$ref"))
    if name is not None:
        yield name
    for child in subschemas(node):
        yield from _refs(child)


# ---------------------------------------------------------------------------------- unions


def union_members(schema: Mapping[str, Any]) -> list[Any] | None:
    """The members of an ``anyOf`` (else a ``oneOf``) union; ``None`` when it is not one."""
    members = schema.get("anyOf") or schema.get("oneOf")
    return members if isinstance(members, list) else None


def branches(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The schemas a value may match: union members, nested unions flattened, refs followed."""
    members = union_members(schema)
    if members is None:
        return [schema]
    return [b for s in members if isinstance(s, dict) for b in branches(deref(s, root), root)]


def step(schema: Mapping[str, Any], part: Any, root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The schemas one step of a path leads to: an item index or a property name, in any
    branch of a union (an object's ``additionalProperties`` take the names it does not list)."""
    schema = deref(schema, root)
    found: list[Mapping[str, Any]] = []
    for branch in branches(schema, root):
        if isinstance(part, int) and not isinstance(part, bool):
            items = branch.get("items")
            prefix = branch.get("prefixItems")
            if isinstance(prefix, list) and part < len(prefix):
                found.append(deref(prefix[part], root))
            elif isinstance(items, dict):
                found.append(deref(items, root))
        elif isinstance(part, str):
            properties = branch.get("properties", {})
            extra = branch.get("additionalProperties")
            if part in properties:
                found.append(deref(properties[part], root))
            elif isinstance(extra, dict) and branch.get("type") == "object":
                found.append(deref(extra, root))
    return found


def without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf [T, null]`` with ``default: null`` -> ``T`` (other siblings kept)."""
    rest = {k: v for k, v in schema.items() if not (k == "default" and v is None)}
    members = rest.get("anyOf")
    if not isinstance(members, list):
        return rest
    kept = [b for b in members if b != {"type": "null"}]
    del rest["anyOf"]
    if len(kept) == 1 and isinstance(kept[0], dict):
        return {**kept[0], **rest}
    return {**rest, "anyOf": kept}


# ----------------------------------------------------------------------------------- types


def named_types(schema: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The types the ``type`` keyword names (one or a list); ``None`` when it names none."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(str(k) for k in kind)
    return None


def type_set(schema: Mapping[str, Any]) -> frozenset[str]:
    """The JSON types a schema admits, through unions (``any`` when it does not say)."""
    named = named_types(schema)
    if named is not None:
        return frozenset(named)
    members = union_members(schema)
    if members:
        return frozenset().union(*(type_set(m) for m in members if isinstance(m, dict)))
    return frozenset({"any"})


# ------------------------------------------------------------------ the published shape


def clean_schema(raw: Mapping[str, Any], *, strip_optional: bool = False) -> dict[str, Any]:
    """Rewrite a raw pydantic schema into mcpkit's published shape.

    Inlines every local ``$ref`` except recursive ones (merging the keys beside a ``$ref``),
    drops class titles that only repeat the class name, the root ``title``, the root
    ``additionalProperties: false`` and an empty root ``required``. With ``strip_optional``,
    properties defaulting to ``null`` lose their ``null`` branch and that default.
    """
    defs = {name: _untitled(name, d) for name, d in raw.get("$defs", {}).items()}
    keep = recursive_defs(defs)
    root = {k: v for k, v in raw.items() if k != "$defs"}
    schema = _inline(root, defs, keep, strip_optional)
    kept = {name: _inline(defs[name], defs, keep, strip_optional) for name in sorted(keep)}
    schema = _resolve_root_ref(schema, kept)
    schema.pop("title", None)
    if schema.get("additionalProperties") is False:
        del schema["additionalProperties"]
    if schema.get("required") == []:
        del schema["required"]
    if kept:
        schema["$defs"] = kept
    return _type_first(schema)


def _type_first(schema: dict[str, Any]) -> dict[str, Any]:
    if "type" not in schema or next(iter(schema)) == "type":
        return schema
    return {"type": schema["type"], **{k: v for k, v in schema.items() if k != "type"}}


def _untitled(name: str, definition: Mapping[str, Any]) -> dict[str, Any]:
    title = definition.get("title")
    if title is None or _class_name(name) != title:
        return dict(definition)
    return {k: v for k, v in definition.items() if k != "title"}


def _class_name(def_name: str) -> str:
    # pydantic names defs "Model", "Model-Input" or "module__Model" when names collide.
    return def_name.rsplit("__", 1)[-1].split("-", 1)[0]


def _resolve_root_ref(schema: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """A recursive root type is a bare ``$ref``: publish its definition at the root."""
    name = local_name(schema.get("$ref"))
    if name is None:
        return schema
    return {**kept[name], **_siblings(schema)}


def _siblings(node: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k != "$ref"}


def _inline(node: Any, defs: Mapping[str, Any], keep: set[str], strip_optional: bool) -> Any:
    if not isinstance(node, dict):
        return node
    name = local_name(node.get("$ref"))
    if name is not None and name not in keep:
        return _inline({**defs[name], **_siblings(node)}, defs, keep, strip_optional)
    out = map_subschemas(node, lambda child: _inline(child, defs, keep, strip_optional))
    if strip_optional and isinstance(out.get("properties"), dict):
        out["properties"] = {n: _optional_stripped(s) for n, s in out["properties"].items()}
    if isinstance(out.get("discriminator"), dict):
        out["discriminator"] = _discriminator(out["discriminator"], keep)
    return _type_first(out)


def _optional_stripped(schema: Any) -> Any:
    if isinstance(schema, dict) and "default" in schema and schema["default"] is None:
        return without_null(schema)
    return schema


def _discriminator(value: dict[str, Any], keep: set[str]) -> dict[str, Any]:
    """Keep only the mapping entries whose definition stays (the others were inlined)."""
    mapping = value.get("mapping")
    if not isinstance(mapping, dict):
        return value
    live = {tag: ref for tag, ref in mapping.items() if local_name(ref) in keep}
    out = {k: v for k, v in value.items() if k != "mapping"}
    if live:
        out["mapping"] = live
    return out
