"""Findings about published definitions: what ``mcpkit check`` reports.

Errors are what clients or the conformance suite reject; warnings are what trips common clients
or costs model context. :func:`lint` reads definitions (the ``tools/list`` objects and the like)
and nothing else.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from mcpkit._frozen import frozen
from mcpkit._jsonschema import mentions, named_types
from mcpkit._signatures import is_name
from mcpkit.docgen.fields import fields

__all__ = ["LONG_NAME", "TOKEN_BUDGET", "Finding", "estimated_tokens", "lint"]

LONG_NAME = 64
"""Names longer than this are cut or refused by some clients."""

TOKEN_BUDGET = 10_000
"""Estimated tokens of all definitions together above which a warning is given."""

Definitions = Mapping[str, list[dict[str, Any]]]
"""Definitions by kind: ``{"tool": [...], "prompt": [...], "resource": [...], ...}``."""


@frozen
class Finding:
    error: bool
    subject: str
    message: str

    def __str__(self) -> str:
        return f"{'error' if self.error else 'warning'}: {self.subject}: {self.message}"


def lint(definitions: Definitions) -> list[Finding]:
    """Every finding, errors and warnings, in the order of the definitions."""
    found: list[Finding] = []
    for kind, items in definitions.items():
        found += _duplicates(kind, items)
        for item in items:
            subject = f"{kind} {_name(item)!r}"
            found += [Finding(error, subject, text) for error, text in _item(kind, item)]
    tokens = estimated_tokens(definitions)
    if tokens > TOKEN_BUDGET:
        found.append(Finding(False, "server", _budget_text(tokens)))
    return found


def _name(item: dict[str, Any]) -> str:
    return str(item.get("name") or item.get("uri") or item.get("uriTemplate") or "")


def _budget_text(tokens: int) -> str:
    return (
        f"the definitions take about {tokens} tokens of every model's context (over "
        f"{TOKEN_BUDGET}); shorten descriptions or split the server"
    )


def estimated_tokens(definitions: Definitions) -> int:
    """About four characters per token of the definitions' JSON."""
    text = json.dumps(dict(definitions), ensure_ascii=False, separators=(",", ":"))
    return len(text) // 4


def _duplicates(kind: str, items: list[dict[str, Any]]) -> Iterator[Finding]:
    for key in ("name", "title"):
        counts = Counter(str(i[key]) for i in items if i.get(key))
        for value, count in counts.items():
            if count > 1:
                yield Finding(
                    True, f"{kind} {value!r}", f"{count} {kind}s share the {key} {value!r}"
                )


Found = Iterator[tuple[bool, str]]


def _item(kind: str, item: dict[str, Any]) -> Found:
    name = _name(item)
    if kind in ("tool", "prompt") and not item.get("description"):
        yield True, "no description (clients and the conformance suite need one); add a docstring"
    if kind in ("tool", "prompt") and not is_name(name):
        yield True, "the name must be 1-128 characters of A-Z a-z 0-9 _ - ."
    if len(name) > LONG_NAME:
        yield False, f"the name has {len(name)} characters; some clients cut names at {LONG_NAME}"
    if kind == "tool":
        yield from _schema("parameter", item.get("inputSchema") or {}, describe=True)
        yield from _schema("output field", item.get("outputSchema") or {}, describe=False)
    if kind == "prompt":
        for argument in item.get("arguments") or []:
            if not argument.get("description"):
                yield False, f"argument {argument.get('name')!r} has no description"


def _schema(label: str, schema: dict[str, Any], *, describe: bool) -> Found:
    if mentions(schema, "$ref"):
        yield False, f"the {label} schema keeps a $ref (a recursive type); some clients fail on it"
    for name, sub in (schema.get("properties") or {}).items():
        if describe and not (isinstance(sub, dict) and sub.get("description")):
            yield False, f"{label} {name!r} has no description; add one to the docstring's Args"
    for field in fields(schema):
        yield from _shape(f"{label} {field.path!r}", field.schema)


def _shape(where: str, schema: dict[str, Any]) -> Found:
    for key in ("anyOf", "oneOf"):
        if key in schema:
            yield False, f"{where} is a union ({key}); some clients only read a plain 'type'"
    if _open_object(schema):
        yield False, f"{where} is an open-ended object (any keys); give it a typed model"


def _open_object(schema: dict[str, Any]) -> bool:
    return (
        "object" in (named_types(schema) or ())
        and not schema.get("properties")
        and schema.get("additionalProperties") in (None, True, {})
    )
