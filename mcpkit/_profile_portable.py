"""``schema_profile="portable"``: the subset of JSON Schema that non-strict OpenAI, Anthropic and
Gemini (``parameters`` and ``parametersJsonSchema``) all accept, and that the sanitizers MCP
clients run cannot mangle.

A whitelist: each node is rebuilt from the keywords below, nothing else is emitted. Every
validation keyword of the real schema is also stated in the description ("Between 1 and 50
characters."), since sanitizers drop even the kept ones (promptfoo/promptfoo PR#6904 keeps no
bounds). Sources: keys of the table in ``docs/schemas.md`` or ``owner/name#N``.

Kept keywords (sources):

- ``type``, exactly one and never ``null``, on every node (n8n-io/n8n#15553,
  P0luz/Ombre-Brain#119); ``description`` everywhere;
- objects: ``properties``, non-empty except at the root (vercel/ai#3371,
  github/copilot-cli#1825), ``required`` naming defined properties (Kilo-Org/kilocode#11950);
- arrays: ``items``, one typed schema (apify/apify-mcp-server#36, anomalyco/opencode#5832),
  ``minItems``, ``maxItems`` ([G-SCHEMA]);
- strings: ``enum`` of strings only (JetBrains/mcp-jetbrains#71), ``minLength``,
  ``maxLength``, ``pattern`` without look-around ([G-SCHEMA], [pyd-oai]), ``format`` only
  ``date-time`` ([FB-SCHEMA], [OAI-SO], [ant-sdk]);
- numbers: ``minimum``, ``maximum`` ([G-SCHEMA]); ``default`` unless ``null`` ([LC-13850]).

Refused (:class:`Unpublishable`; the author changes the type): recursive ``$ref`` ([pyd-goo],
[ANT-SO]), unions of two non-null types (clients keep the first member: LibreChat PR#13850),
objects without named properties (``dict[str, T]``, ``Any``: Gemini needs ``properties`` and a
``type`` everywhere), tuples and untyped ``items`` ([LC-13850], apify/apify-mcp-server#36).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mcpkit._jsonschema import child_path, named_types, union_members
from mcpkit._profile_shapes import Refs, Unpublishable, is_null, merged_all_of
from mcpkit._profile_words import DESCRIBED, described, words
from mcpkit._provider_facts import MCP_ANNOTATIONS, PORTABLE_FORMATS, has_lookaround

__all__ = ["portable"]

_NUMBER_KEYS = ("minimum", "maximum")
_STRING_KEYS = ("minLength", "maxLength", "pattern")
_ARRAY_KEYS = ("minItems", "maxItems")
_FLATTEN = (
    "make it one type: one object with a string-enum field saying which kind, the other "
    "fields optional (or split the tool)"
)


def portable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The portable form of a tool's input schema (raises :class:`Unpublishable`)."""
    return _Shaper(Refs(schema)).node(schema, "$", root=True)


class _Shaper:
    def __init__(self, refs: Refs) -> None:
        self.refs = refs

    def node(self, node: Mapping[str, Any], path: str, *, root: bool = False) -> dict[str, Any]:
        node = self.plain(node, path)
        kind = _kind(node, path)
        out: dict[str, Any] = {"type": kind}
        if kind == "object":
            shape = self.object(node, path, root)
        elif kind == "array":
            shape = self.array(node, path)
        else:
            shape = _scalar(node, kind)
        told = DESCRIBED - {"enum", "const"} if "enum" in shape else DESCRIBED
        text = described(node.get("description"), words(node, told))
        if text:
            out["description"] = text
        out.update(shape)
        if node.get("default") is not None:
            out["default"] = node["default"]
        out.update({k: v for k, v in node.items() if k in MCP_ANNOTATIONS})
        return out

    def plain(self, node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        """``$ref`` inlined, ``allOf`` merged and ``Optional`` unwrapped, until none is left."""
        while True:
            if "$ref" in node:
                name, target = self.refs.target(node["$ref"], path)
                if name == "#" or name in self.refs.recursive:
                    raise Unpublishable(
                        path,
                        f"a recursive type ({name} contains itself), which Gemini and "
                        "Anthropic's strict mode cannot take ([pyd-goo], [ANT-SO]); give it a "
                        "fixed depth or pass the tree as a JSON string",
                    )
                node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            elif isinstance(node.get("allOf"), list):
                node = merged_all_of(node, path)
            elif union_members(node) is not None:
                node = _unwrapped(node, path)
            else:
                return node

    def object(self, node: Mapping[str, Any], path: str, root: bool) -> dict[str, Any]:
        properties = node.get("properties")
        if not isinstance(properties, dict) or not properties:
            if root and node.get("additionalProperties") in (None, False):
                return {"properties": {}}  # a tool without parameters (github/copilot-cli#1825)
            raise Unpublishable(
                path,
                "an object without named properties (dict[str, T], Any, an open object): "
                "Gemini needs non-empty properties (vercel/ai#3371); use a list of "
                "{key, value} objects or a JSON string",
            )
        shaped = {n: self.node(s, child_path(path, "properties", n)) for n, s in properties.items()}
        out: dict[str, Any] = {"properties": shaped}
        required = [n for n in node.get("required", ()) if n in shaped]
        if required:
            out["required"] = required
        return out

    def array(self, node: Mapping[str, Any], path: str) -> dict[str, Any]:
        items = node.get("items")
        if "prefixItems" in node or isinstance(items, list):
            raise Unpublishable(
                path, "a tuple (prefixItems), which Gemini cannot take ([LC-13850]); use an object"
            )
        if not isinstance(items, dict) or not items:
            raise Unpublishable(
                path, "an array whose items have no type (apify/apify-mcp-server#36); type them"
            )
        out = {"items": self.node(items, child_path(path, "items", None))}
        out.update({k: node[k] for k in _ARRAY_KEYS if _is_count(node.get(k))})
        return out


def _unwrapped(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    """``anyOf: [T, null]`` -> ``T`` (the validator still takes null); other unions refused."""
    members = union_members(node) or []
    kept = [m for m in members if not is_null(m)]
    if len(kept) != 1 or not isinstance(kept[0], dict):
        raise Unpublishable(
            path,
            f"a union of {len(kept)} types, which Gemini refuses beside a type and clients "
            f"cut to its first member (LibreChat PR#13850); {_FLATTEN}",
        )
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    return {**kept[0], **rest}


def _kind(node: Mapping[str, Any], path: str) -> str:
    """The one type of a node (``null`` left out: an omitted parameter says it)."""
    named = named_types(node)
    if named is not None:
        kinds = [k for k in named if k != "null"]
        if len(kinds) == 1:
            return kinds[0]
        raise Unpublishable(
            path,
            f"type {list(named)!r}: Gemini takes exactly one type (n8n-io/n8n#15553); {_FLATTEN}",
        )
    if "properties" in node:
        return "object"
    if "items" in node:
        return "array"
    values = node["enum"] if isinstance(node.get("enum"), list) else []
    values = [node["const"]] if "const" in node else values
    found = {_JSON_TYPES.get(type(v), "") for v in values}
    if len(found) == 1 and "" not in found:
        return found.pop()
    raise Unpublishable(
        path,
        "no type (any JSON value): Gemini needs a type on every property (P0luz/Ombre-Brain#119); "
        "give the parameter a type",
    )


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _scalar(node: Mapping[str, Any], kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    values = node.get("enum")
    values = [node["const"]] if "const" in node else values
    if kind == "string" and isinstance(values, list) and all(isinstance(v, str) for v in values):
        out["enum"] = values  # non-string enums: only in the description (opencode PR#14234)
    if kind == "string":
        keys = [k for k in _STRING_KEYS if k != "pattern" or not has_lookaround(node.get(k))]
        out.update({k: node[k] for k in keys if k in node})
        if node.get("format") in PORTABLE_FORMATS:
            out["format"] = node["format"]
    if kind in ("integer", "number"):
        out.update(_bounds(node, kind))
    if kind == "integer" and not out and isinstance(values, list) and _contiguous(values):
        out.update(minimum=min(values), maximum=max(values))  # [pyd-goo]: an int enum as a range
    return out


def _contiguous(values: list[Any]) -> bool:
    if not values:
        return False
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return False
    return sorted(values) == list(range(min(values), max(values) + 1))


def _bounds(node: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """``minimum``/``maximum``, exclusive bounds folded in: ``n + 1`` for integers, ``n`` for
    numbers (the description says "greater than n"; modelcontextprotocol/servers#1624)."""
    out = {k: node[k] for k in _NUMBER_KEYS if _is_number(node.get(k))}
    integral = kind == "integer"
    above, below = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    if above is not None and _is_number(above):
        low = math.floor(above) + 1 if integral else above
        out["minimum"] = max(out.get("minimum", low), low)
    if below is not None and _is_number(below):
        high = math.ceil(below) - 1 if integral else below
        out["maximum"] = min(out.get("maximum", high), high)
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
