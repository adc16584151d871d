"""The providers' rules tables (``mcpkit check --target``): each rule against a hand-written
schema and its literal findings, and the command's output and exit codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_support import ROOT, mcpkit

from mcpkit.docgen.providers import RULES, TARGETS, provider_findings

Schema = dict[str, Any]
APPS = ROOT / "tests" / "profile_apps.py"


def root(**properties: Schema) -> Schema:
    return {"type": "object", "properties": properties}


STR: Schema = {"type": "string"}
UNKNOWN = 'is no field of Gemini\'s Schema (400 "Unknown name")'
SERVERS = "(modelcontextprotocol/servers#1624, [LC-13850])"
STRICT_KEY = "is not supported in strict mode ([OAI-SO], [pyd-oai], 567-labs/instructor#1074)"
CLOSED = "an object without 'additionalProperties': false ([OAI-SO], [oa-agents])"

# (id, target, schema, the findings as `mcpkit check` prints them after "tool 't': ")
CASES: list[tuple[str, str, Schema, list[str]]] = [
    ("openai-clean", "openai", root(a=STR), []),
    (
        "openai-root",
        "openai",
        {"anyOf": [root(a=STR)], "$schema": "x"},
        [
            'openai refuses the input schema: the root must be {"type": "object"} '
            "(chatanywhere/GPT_API_free#403)",
            "openai refuses the input schema: oneOf/anyOf/allOf/enum/not at the root "
            "(nspady/google-calendar-mcp#39, langchain-ai/langchainjs#9804)",
            "openai refuses the input schema: '$schema' at the root (promptfoo/promptfoo PR#5965)",
        ],
    ),
    (
        "openai-shapes",
        "openai",
        root(a={"type": "array"}, b={"type": "object", "additionalProperties": False}),
        [
            "openai refuses parameter '$.a': an array schema without typed 'items' "
            "(apify/apify-mcp-server#36)",
            "openai refuses parameter '$.b': an object schema without 'properties' "
            "(github/copilot-cli#1825)",
        ],
    ),
    (
        "anthropic",
        "anthropic",
        {
            "type": "object",
            "allOf": [],
            "properties": {"a": {"$ref": "#/$defs/Gone"}, "b": {"type": "str", "items": [STR]}},
            "required": "a",
        },
        [
            "anthropic refuses the input schema: oneOf/allOf/anyOf at the top level "
            "(anthropics/claude-code#5319)",
            "anthropic refuses the input schema: 'required' must be a list of property names "
            "(anthropics/anthropic-sdk-java#241)",
            "anthropic refuses parameter '$.a': $ref '#/$defs/Gone' does not resolve in this "
            "schema (microsoft/vscode#286415)",
            "anthropic refuses parameter '$.b': type 'str' is no JSON Schema type "
            "(anthropics/anthropic-sdk-java#241)",
            "anthropic refuses parameter '$.b': 'items' as a list is the pre-2020-12 tuple form "
            "(use prefixItems) (anthropics/anthropic-sdk-java#241)",
        ],
    ),
    (
        "gemini",
        "gemini",
        {
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "format": "uri"},
                "b": {"anyOf": [STR, {"description": "x"}]},
                "c": {"type": "integer", "enum": [1, 2], "exclusiveMinimum": 0},
                "d": {"type": "object", "properties": {}},
                "e": {"type": "array", "title": "E"},
                "f": {"type": "string", "anyOf": [STR]},
            },
            "required": ["a", "z"],
        },
        [
            "gemini refuses the input schema: 'required' names 'z', which is not among the "
            "properties (Kilo-Org/kilocode#11950)",
            "gemini refuses parameter '$.a': a list of types (one type, and \"nullable\": true) "
            "(n8n-io/n8n#15553)",
            "gemini refuses parameter '$.a': the string format 'uri' (allowed: date-time, enum) "
            "([FB-SCHEMA])",
            "gemini refuses parameter '$.b': no 'type' (every property needs its own) "
            "(P0luz/Ombre-Brain#119, google-gemini/gemini-cli#6632)",
            "gemini refuses parameter '$.b<anyOf 1>': an anyOf member without 'type' "
            "(zereight/gitlab-mcp#166)",
            f"gemini refuses parameter '$.c': the keyword 'exclusiveMinimum' {UNKNOWN} {SERVERS}",
            'gemini refuses parameter \'$.c\': an enum that is not strings on "type": "string" '
            "(JetBrains/mcp-jetbrains#71, rikkahub/rikkahub#477)",
            "gemini refuses parameter '$.d': a nested object without properties (vercel/ai#3371)",
            "gemini may lose parameter '$.e': 'title': proto-based SDKs refuse it, Gemini 2.5 "
            "Flash fails the call (langchain-ai/langchain#28568, PrefectHQ/fastmcp#3860)",
            "gemini refuses parameter '$.e': an array without typed 'items' "
            "(anomalyco/opencode#5832)",
            "gemini refuses parameter '$.f': 'type' beside 'anyOf' (google-gemini/gemini-cli#4121)",
        ],
    ),
    (
        "gemini-refs",
        "gemini",
        {**root(a={"$ref": "#/$defs/A"}), "$defs": {"A": STR}},
        [
            f"gemini refuses the input schema: the keyword '$defs' {UNKNOWN} {SERVERS}",
            f"gemini refuses parameter '$.a': the keyword '$ref' {UNKNOWN} {SERVERS}",
            "gemini refuses parameter '$.a': no 'type' (every property needs its own) "
            "(P0luz/Ombre-Brain#119, google-gemini/gemini-cli#6632)",
        ],
    ),
    (
        "openai-strict",
        "openai-strict",
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "format": "uri", "pattern": "^(?!x)", "minLength": 1},
                "b": {"$ref": "#/$defs/B", "description": "b"},
                "c": {"oneOf": [STR], "title": "C"},
                "d": {"description": "anything"},
                "e": {"type": "array"},
            },
            "required": ["a", "b", "c", "d", "e"],
            "additionalProperties": False,
        },
        [
            f"openai-strict refuses parameter '$.a': the keyword 'minLength' {STRICT_KEY}",
            "openai-strict refuses parameter '$.a': the string format 'uri' (allowed: date, "
            "date-time, duration, email, hostname, ipv4, ipv6, time, uuid) ([OAI-SO], "
            "posit-dev/chatlas PR#255)",
            "openai-strict refuses parameter '$.a': a pattern with look-ahead or look-behind "
            "([OAI-SO])",
            "openai-strict refuses parameter '$.b': a $ref with other keywords beside it "
            "([oa-agents], [pyd-oai])",
            f"openai-strict refuses parameter '$.c': the keyword 'oneOf' {STRICT_KEY}",
            "openai-strict may lose parameter '$.c': the keyword 'title' is an annotation strict "
            "mode does not list; SDKs strip it ([pyd-oai])",
            "openai-strict refuses parameter '$.d': no type (any JSON value) ([OAI-SO])",
            "openai-strict refuses parameter '$.e': an array without typed 'items' ([pyd-oai] "
            "(pydantic/pydantic-ai#4425))",
        ],
    ),
    (
        "openai-strict-objects",
        "openai-strict",
        {"type": "object", "properties": {"a": {"type": "object"}}},
        [
            f"openai-strict refuses the input schema: {CLOSED}",
            "openai-strict refuses the input schema: properties not in 'required': a (make them "
            "nullable instead) ([OAI-SO], [oa-agents])",
            f"openai-strict refuses parameter '$.a': {CLOSED}",
            "openai-strict refuses parameter '$.a': an object without 'properties' ([oa-agents])",
        ],
    ),
    (
        "openai-strict-size",
        "openai-strict",
        {
            "type": "object",
            "properties": {"a": {"type": "string", "enum": [str(i) for i in range(1001)]}},
            "required": ["a"],
            "additionalProperties": False,
        },
        ["openai-strict refuses the input schema: 1001 enum values (at most 1000) ([OAI-SO])"],
    ),
]


@pytest.mark.parametrize(
    ("target", "schema", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rules(target: str, schema: Schema, expected: list[str]) -> None:
    assert [str(f) for f in provider_findings(schema, target)] == expected


def test_every_rule_cites_a_source_and_has_a_target() -> None:
    targets = {t for group in TARGETS.values() for t in group}
    for rule in RULES:
        assert rule.target in targets
        assert rule.source.strip()


def test_portable_is_the_three_non_strict_tables() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}
    assert [(f.target, f.text) for f in provider_findings(schema, "portable")] == [
        ("gemini", 'a list of types (one type, and "nullable": true)')
    ]


# ------------------------------------------------------------------------------- the command


def app(name: str) -> str:
    return f"{APPS}:{name}"


GEMINI_LIMIT = (
    "error: tool 'search': gemini refuses parameter '$.limit': no 'type' (every property needs "
    "its own) (P0luz/Ombre-Brain#119, google-gemini/gemini-cli#6632)\n"
)


def test_check_target_reports_and_exits_1() -> None:
    result = mcpkit("check", app("derived"), "--target", "gemini", "--target", "openai")
    assert (result.exit_code, result.stdout) == (
        1,
        GEMINI_LIMIT + "checked 1 definition: 1 error, 0 warnings\n",
    )


def test_check_target_openai_strict() -> None:
    result = mcpkit("check", app("derived"), "--target", "openai-strict")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [
        f"error: tool 'search': openai-strict refuses the input schema: {CLOSED}",
        "error: tool 'search': openai-strict refuses the input schema: properties not in "
        "'required': limit, tags (make them nullable instead) ([OAI-SO], [oa-agents])",
    ]
    assert result.stdout.splitlines()[-1] == "checked 1 definition: 5 errors, 0 warnings"


@pytest.mark.parametrize(
    ("name", "target"), [("portable", "portable"), ("strict", "openai-strict")]
)
def test_profiles_pass_their_targets(name: str, target: str) -> None:
    result = mcpkit("check", app(name), "--target", target)
    assert (result.exit_code, result.stdout) == (0, "checked 1 definition: 0 errors, 0 warnings\n")


def test_warnings_fail_only_with_strict() -> None:
    line = (
        "warning: tool 'search': gemini may lose the input schema: 'title': proto-based SDKs "
        "refuse it, Gemini 2.5 Flash fails the call (langchain-ai/langchain#28568, "
        "PrefectHQ/fastmcp#3860)\n"
        "checked 1 definition: 0 errors, 1 warning\n"
    )
    assert mcpkit("check", app("titled"), "--target", "gemini").stdout == line
    assert mcpkit("check", app("titled"), "--target", "gemini").exit_code == 0
    assert mcpkit("check", app("titled"), "--target", "gemini", "--strict").exit_code == 1


def test_unknown_target_is_a_usage_error() -> None:
    result = mcpkit("check", app("derived"), "--target", "mistral")
    assert result.exit_code == 2
    assert "'mistral' is not one of 'openai', 'openai-strict', 'anthropic', 'gemini'" in (
        result.stderr
    )


def test_diff_shows_what_a_profile_moved_into_words(tmp_path: Path) -> None:
    for name in ("bounded", "bounded_portable"):
        written = mcpkit("docs", app(name), "--format", "json", "-o", str(tmp_path / name))
        assert written.exit_code == 0
    result = mcpkit("diff", str(tmp_path / "bounded"), str(tmp_path / "bounded_portable"))
    assert (result.exit_code, result.stdout) == (
        0,
        "compatible  tool 'report': parameter 'link': format \"uri\" -> (none) (loosened)\n"
        "compatible  tool 'report': parameter 'link': description changed\n"
        "compatible  tool 'report': parameter 'period': multipleOf 5 -> (none) (loosened)\n"
        "compatible  tool 'report': parameter 'period': description changed\n"
        "compatible  tool 'report': parameter 'tags': uniqueItems true -> (none) (loosened)\n"
        "compatible  tool 'report': parameter 'tags': description changed\n"
        "6 changes: 0 breaking, 6 compatible\n",
    )
