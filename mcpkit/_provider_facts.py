"""What model providers' tool-calling APIs accept in a tool's parameter schema: the facts the
schema profiles (:mod:`mcpkit._profiles`) write to and ``mcpkit check --target`` reads against.

Each fact carries its source: a key of the table at the end of ``docs/schemas.md`` (``[OAI-SO]``
is OpenAI's Structured Outputs guide, ``[G-SCHEMA]`` Gemini's ``Schema`` reference, ...) or a
public ``owner/name#N`` issue or pull request. Providers change these rules without notice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcpkit._jsonschema import children, named_types

__all__ = [
    "GEMINI_FIELDS",
    "GEMINI_FORMATS",
    "MCP_ANNOTATIONS",
    "PORTABLE_FORMATS",
    "STRICT_FORMATS",
    "STRICT_KEYWORDS",
    "has_lookaround",
    "strict_size_problems",
]

GEMINI_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "anyOf",
        "default",
        "example",
        "propertyOrdering",
    }
)
"""The fields of Gemini's ``Schema`` ([G-SCHEMA], [genai-py] ``Schema``); any other key is
answered 400 "Invalid JSON payload received. Unknown name" (modelcontextprotocol/servers#1624,
keys live-probed in [LC-13850]). ``additionalProperties`` is left out: the Gemini API refuses it
("should not be set for TYPE_OBJECT", [LC-13850], promptfoo/promptfoo PR#6904)."""

GEMINI_FORMATS = frozenset({"enum", "date-time"})
"""String formats the Gemini Developer API takes ("must be either 'enum' or 'date-time',
otherwise requests will fail", [FB-SCHEMA])."""

PORTABLE_FORMATS = frozenset({"date-time"})
"""The one string format every path accepts: Gemini ([FB-SCHEMA]), OpenAI strict ([OAI-SO]),
Anthropic strict ([ant-sdk] ``SupportedStringFormats``)."""

STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""String formats OpenAI strict mode takes; others are refused ("'uri' is not a valid format",
[OAI-SO], [pyd-oai] ``_STRICT_COMPATIBLE_STRING_FORMATS``, posit-dev/chatlas PR#255)."""

STRICT_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
"""The keywords OpenAI strict mode supports ([OAI-SO]; numeric bounds only in its current docs,
liam-hq/liam PR#1162); the rest are refused or, in SDK transformers, moved into descriptions
([pyd-oai] ``_STRICT_INCOMPATIBLE_KEYS``, [oa-agents])."""

MCP_ANNOTATIONS = frozenset({"x-mcp-header"})
"""MCP's own schema annotations (2026-07-28 ``x-mcp-header``, SEP-2243): read by MCP clients,
kept in every profile (dropping one would silently switch the header mirroring off) and not
counted as provider keywords by ``mcpkit check --target``."""

_LOOKAROUND = re.compile(r"\(\?<?[=!]")

# [OAI-SO]: at most 5,000 object properties in total, 10 levels of object nesting, 120,000
# characters over property names, definition names, enum and const values, 1,000 enum values.
STRICT_MAX_PROPERTIES = 5_000
STRICT_MAX_DEPTH = 10
STRICT_MAX_CHARS = 120_000
STRICT_MAX_ENUM_VALUES = 1_000


def has_lookaround(pattern: Any) -> bool:
    """Whether a regular expression uses look-ahead or look-behind (OpenAI strict refuses it,
    [OAI-SO]; Gemini's RE2-style matcher has none either)."""
    return isinstance(pattern, str) and _LOOKAROUND.search(pattern) is not None


def strict_size_problems(schema: Mapping[str, Any]) -> list[str]:
    """The OpenAI strict size limits ([OAI-SO]) a schema exceeds, in words."""
    tally = _Tally()
    tally.walk(schema, 1)
    found = []
    if tally.properties > STRICT_MAX_PROPERTIES:
        found.append(f"{tally.properties} properties (at most {STRICT_MAX_PROPERTIES})")
    if tally.depth > STRICT_MAX_DEPTH:
        found.append(f"{tally.depth} levels of object nesting (at most {STRICT_MAX_DEPTH})")
    if tally.chars > STRICT_MAX_CHARS:
        found.append(f"{tally.chars} characters of names and values (at most {STRICT_MAX_CHARS})")
    if tally.enum_values > STRICT_MAX_ENUM_VALUES:
        found.append(f"{tally.enum_values} enum values (at most {STRICT_MAX_ENUM_VALUES})")
    return found


class _Tally:
    def __init__(self) -> None:
        self.properties = self.depth = self.chars = self.enum_values = 0

    def walk(self, node: Any, depth: int) -> None:
        if not isinstance(node, dict):
            return
        if "object" in (named_types(node) or ()) or "properties" in node:
            self.depth = max(self.depth, depth)
            depth += 1
        enum = node.get("enum")
        values: list[Any] = enum if isinstance(enum, list) else []
        self.enum_values += len(values)
        self.chars += sum(len(str(v)) for v in values)
        if "const" in node:
            self.chars += len(str(node["const"]))
        for keyword, key, sub in children(node):
            if keyword in ("properties", "$defs"):
                self.chars += len(str(key))
                self.properties += int(keyword == "properties")
            self.walk(sub, depth if keyword != "$defs" else 1)
