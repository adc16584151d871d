"""What model providers' tool-calling APIs refuse in a tool's ``inputSchema``: the rules tables
``mcpkit check --target`` reads against (and the schema profiles' tests hold their output to).

A rule is a row: the provider (target), whether the API refuses the request (400 for the whole
request, every other tool with it) or only loses the keyword, what it finds, and its source (a
key of the table in ``docs/schemas.md`` or an ``owner/name#N`` issue or pull request).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from mcpkit._frozen import frozen
from mcpkit._jsonschema import child_path, children, local_name, named_types
from mcpkit._provider_facts import (
    GEMINI_FIELDS,
    GEMINI_FORMATS,
    MCP_ANNOTATIONS,
    STRICT_FORMATS,
    STRICT_KEYWORDS,
    has_lookaround,
    strict_size_problems,
)

__all__ = ["RULES", "TARGETS", "ProviderFinding", "Rule", "Spot", "provider_findings"]


@frozen
class Spot:
    """One node of the schema being checked: where it is and how it was reached."""

    path: str
    node: Mapping[str, Any]
    root: Mapping[str, Any]
    keyword: str  # the keyword holding it: "properties", "items", "anyOf", ... ("" at the root)

    @property
    def is_root(self) -> bool:
        return self.keyword == ""

    @property
    def types(self) -> tuple[str, ...]:
        return named_types(self.node) or ()


Detect = Callable[[Spot], Iterator[str]]


@frozen
class Rule:
    """One row of a provider's table: ``detect`` yields what it finds at a node, in words."""

    target: str
    refused: bool
    source: str
    detect: Detect


@frozen
class ProviderFinding:
    target: str
    refused: bool
    path: str
    text: str
    source: str

    def __str__(self) -> str:
        verb = "refuses" if self.refused else "may lose"
        where = "the input schema" if self.path == "$" else f"parameter {self.path!r}"
        return f"{self.target} {verb} {where}: {self.text} ({self.source})"


def provider_findings(schema: Mapping[str, Any], target: str) -> list[ProviderFinding]:
    """What the providers of ``target`` (see :data:`TARGETS`) find in an input schema."""
    rules = [rule for rule in RULES if rule.target in TARGETS[target]]
    return [
        ProviderFinding(rule.target, rule.refused, spot.path, text, rule.source)
        for spot in _spots(schema)
        for rule in rules
        for text in rule.detect(spot)
    ]


def _spots(schema: Mapping[str, Any]) -> Iterator[Spot]:
    stack = [Spot("$", schema, schema, "")]
    while stack:
        spot = stack.pop(0)
        yield spot
        found = [
            Spot(child_path(spot.path, keyword, key), sub, schema, keyword)
            for keyword, key, sub in children(spot.node)
            if isinstance(sub, dict)
        ]
        stack[:0] = found  # depth first, in document order


# ----------------------------------------------------------------------------- detectors


def _when(test: Callable[[Spot], bool], text: str) -> Detect:
    def detect(spot: Spot) -> Iterator[str]:
        if test(spot):
            yield text

    return detect


def _root_not_object(spot: Spot) -> bool:
    return spot.is_root and spot.node.get("type") != "object"


def _root_has(*keys: str) -> Callable[[Spot], bool]:
    return lambda spot: spot.is_root and any(k in spot.node for k in keys)


def _is_object(spot: Spot) -> bool:
    return "object" in spot.types or (not spot.types and "properties" in spot.node)


def _untyped_items(spot: Spot) -> bool:
    items = spot.node.get("items")
    return "array" in spot.types and not (isinstance(items, dict) and items)


def _unknown_keys(known: frozenset[str], what: str, only: frozenset[str] | None = None) -> Detect:
    """Keys outside ``known`` (MCP's own annotations aside); ``only``: of those, just these."""

    def detect(spot: Spot) -> Iterator[str]:
        for key in spot.node:
            if key in known or key in MCP_ANNOTATIONS or (only is not None and key not in only):
                continue
            yield f"the keyword {key!r} {what}"

    return detect


def _bad_format(allowed: frozenset[str]) -> Detect:
    def detect(spot: Spot) -> Iterator[str]:
        value = spot.node.get("format")
        if value is not None and value not in allowed:
            yield f"the string format {value!r} (allowed: {', '.join(sorted(allowed))})"

    return detect


def _gemini_enum(spot: Spot) -> bool:
    values = spot.node.get("enum")
    if not isinstance(values, list):
        return False
    return spot.node.get("type") != "string" or not all(isinstance(v, str) for v in values)


def _undefined_required(spot: Spot) -> Iterator[str]:
    properties = spot.node.get("properties") or {}
    for name in spot.node.get("required") or ():
        if name not in properties:
            yield f"'required' names {name!r}, which is not among the properties"


def _unresolved_ref(spot: Spot) -> Iterator[str]:
    ref = spot.node.get("$ref")
    if ref is None or ref == "#":
        return
    name = local_name(ref)
    if name is None or name not in (spot.root.get("$defs") or {}):
        yield f"$ref {ref!r} does not resolve in this schema"


_JSON_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def _not_2020_12(spot: Spot) -> Iterator[str]:
    kind = spot.node.get("type")
    named = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for name in named:
        if name not in _JSON_TYPES:
            yield f"type {name!r} is no JSON Schema type"
    if isinstance(spot.node.get("items"), list):
        yield "'items' as a list is the pre-2020-12 tuple form (use prefixItems)"
    required = spot.node.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(n, str) for n in required)
    ):
        yield "'required' must be a list of property names"


def _not_required(spot: Spot) -> Iterator[str]:
    if not _is_object(spot):
        return
    required = set(spot.node.get("required") or ())
    missing = [n for n in spot.node.get("properties") or {} if n not in required]
    if missing:
        yield f"properties not in 'required': {', '.join(missing)} (make them nullable instead)"


def _any_value(spot: Spot) -> bool:
    keys = ("type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const", "properties")
    return spot.keyword in ("properties", "items", "anyOf") and not any(
        k in spot.node for k in keys
    )


def _sizes(spot: Spot) -> Iterator[str]:
    if spot.is_root:
        yield from strict_size_problems(spot.node)


def _lookaround(spot: Spot) -> bool:
    return has_lookaround(spot.node.get("pattern"))


_STRICT_ANNOTATIONS = frozenset(
    {"title", "$comment", "examples", "deprecated", "readOnly", "writeOnly"}
)
_STRICT_KNOWN = STRICT_KEYWORDS | _STRICT_ANNOTATIONS

# ----------------------------------------------------------------------------- the tables

_OPENAI = [
    Rule("openai", True, "chatanywhere/GPT_API_free#403",
         _when(_root_not_object, 'the root must be {"type": "object"}')),
    Rule("openai", True, "nspady/google-calendar-mcp#39, langchain-ai/langchainjs#9804",
         _when(_root_has("oneOf", "anyOf", "allOf", "enum", "not"),
               "oneOf/anyOf/allOf/enum/not at the root")),
    Rule("openai", True, "apify/apify-mcp-server#36",
         _when(_untyped_items, "an array schema without typed 'items'")),
    Rule("openai", True, "github/copilot-cli#1825",
         _when(lambda s: _is_object(s) and "properties" not in s.node,
               "an object schema without 'properties'")),
    Rule("openai", True, "promptfoo/promptfoo PR#5965",
         _when(_root_has("$schema"), "'$schema' at the root")),
]  # fmt: skip

_OPENAI_STRICT = [
    Rule("openai-strict", True, "[OAI-SO]",
         _when(lambda s: _root_not_object(s) or _root_has("anyOf")(s),
               "the root must be an object, not a union")),
    Rule("openai-strict", True, "[OAI-SO], [oa-agents]",
         _when(lambda s: _is_object(s) and s.node.get("additionalProperties") is not False,
               "an object without 'additionalProperties': false")),
    Rule("openai-strict", True, "[OAI-SO], [oa-agents]", _not_required),
    Rule("openai-strict", True, "[oa-agents]",
         _when(lambda s: _is_object(s) and "properties" not in s.node,
               "an object without 'properties'")),
    Rule("openai-strict", True, "[oa-agents], [pyd-oai]",
         _when(lambda s: "$ref" in s.node and len(s.node) > 1,
               "a $ref with other keywords beside it")),
    Rule("openai-strict", True, "[OAI-SO], [pyd-oai], 567-labs/instructor#1074",
         _unknown_keys(_STRICT_KNOWN, "is not supported in strict mode")),
    Rule("openai-strict", False, "[pyd-oai]",
         _unknown_keys(STRICT_KEYWORDS, "is an annotation strict mode does not list; SDKs "
                       "strip it", only=_STRICT_ANNOTATIONS)),
    Rule("openai-strict", True, "[OAI-SO], posit-dev/chatlas PR#255",
         _bad_format(STRICT_FORMATS)),
    Rule("openai-strict", True, "[OAI-SO]",
         _when(_lookaround, "a pattern with look-ahead or look-behind")),
    Rule("openai-strict", True, "[pyd-oai] (pydantic/pydantic-ai#4425)",
         _when(_untyped_items, "an array without typed 'items'")),
    Rule("openai-strict", True, "[OAI-SO]",
         _when(_any_value, "no type (any JSON value)")),
    Rule("openai-strict", True, "[OAI-SO]", _sizes),
]  # fmt: skip

_ANTHROPIC = [
    Rule("anthropic", True, "Kilo-Org/kilocode#12238",
         _when(_root_not_object, 'input_schema.type must be "object"')),
    Rule("anthropic", True, "anthropics/claude-code#5319",
         _when(_root_has("oneOf", "allOf", "anyOf"), "oneOf/allOf/anyOf at the top level")),
    Rule("anthropic", True, "microsoft/vscode#286415", _unresolved_ref),
    Rule("anthropic", True, "anthropics/anthropic-sdk-java#241", _not_2020_12),
]  # fmt: skip

_GEMINI = [
    Rule("gemini", True, "[G-FD]", _when(_root_not_object, "the root must be an object")),
    Rule("gemini", True, "modelcontextprotocol/servers#1624, [LC-13850]",
         _unknown_keys(GEMINI_FIELDS, 'is no field of Gemini\'s Schema (400 "Unknown name")')),
    Rule("gemini", False, "langchain-ai/langchain#28568, PrefectHQ/fastmcp#3860",
         _when(lambda s: "title" in s.node,
               "'title': proto-based SDKs refuse it, Gemini 2.5 Flash fails the call")),
    Rule("gemini", True, "n8n-io/n8n#15553",
         _when(lambda s: isinstance(s.node.get("type"), list),
               'a list of types (one type, and "nullable": true)')),
    Rule("gemini", True, "P0luz/Ombre-Brain#119, google-gemini/gemini-cli#6632",
         _when(lambda s: s.keyword in ("properties", "items") and "type" not in s.node,
               "no 'type' (every property needs its own)")),
    Rule("gemini", True, "google-gemini/gemini-cli#4121",
         _when(lambda s: "type" in s.node and "anyOf" in s.node, "'type' beside 'anyOf'")),
    Rule("gemini", True, "zereight/gitlab-mcp#166",
         _when(lambda s: s.keyword == "anyOf" and not s.types, "an anyOf member without 'type'")),
    Rule("gemini", True, "JetBrains/mcp-jetbrains#71, rikkahub/rikkahub#477",
         _when(_gemini_enum, 'an enum that is not strings on "type": "string"')),
    Rule("gemini", True, "vercel/ai#3371",
         _when(lambda s: not s.is_root and _is_object(s) and not s.node.get("properties"),
               "a nested object without properties")),
    Rule("gemini", True, "anomalyco/opencode#5832",
         _when(_untyped_items, "an array without typed 'items'")),
    Rule("gemini", True, "Kilo-Org/kilocode#11950", _undefined_required),
    Rule("gemini", True, "[FB-SCHEMA]", _bad_format(GEMINI_FORMATS)),
]  # fmt: skip

RULES: tuple[Rule, ...] = (*_OPENAI, *_OPENAI_STRICT, *_ANTHROPIC, *_GEMINI)
"""Every provider's rules, in table order."""

TARGETS: dict[str, tuple[str, ...]] = {
    "openai": ("openai",),
    "openai-strict": ("openai-strict",),
    "anthropic": ("anthropic",),
    "gemini": ("gemini",),
    "portable": ("openai", "anthropic", "gemini"),
}
"""What ``--target`` names: one provider's table, or ``portable``: the three non-strict ones."""
