"""Validation keywords in words, for descriptions: what a schema profile tells the model when a
provider cannot be given the keyword itself ("Between 1 and 50 characters.")."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

__all__ = ["DESCRIBED", "described", "words"]

DESCRIBED = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "enum",
        "const",
        "default",
        "examples",
    }
)
"""Every keyword :func:`words` can put into words."""


def described(description: Any, phrases: list[str]) -> str | None:
    """``description`` followed by the phrases as one sentence (``None`` when both are empty)."""
    text = description if isinstance(description, str) else ""
    if not phrases:
        return text or None
    sentence = "; ".join(phrases)
    sentence = sentence[0].upper() + sentence[1:] + "."
    if not text:
        return sentence
    return f"{text}{' ' if text.rstrip()[-1:] in '.!?:' else '. '}{sentence}"


def words(node: Mapping[str, Any], keys: Collection[str]) -> list[str]:
    """The phrases for those of ``keys`` that ``node`` uses, in a fixed order."""
    picked = {k: v for k, v in node.items() if k in keys and v is not None}
    return [phrase for make in _PHRASES for phrase in make(picked)]


def _bounds(node: Mapping[str, Any]) -> Iterator[str]:
    low, high = _number(node.get("minimum")), _number(node.get("maximum"))
    above, below = _number(node.get("exclusiveMinimum")), _number(node.get("exclusiveMaximum"))
    if low is not None and high is not None and above is None and below is None:
        yield f"between {_show(low)} and {_show(high)}"
    else:
        pairs = (
            ("at least", low),
            ("greater than", above),
            ("at most", high),
            ("less than", below),
        )
        parts = [f"{text} {_show(value)}" for text, value in pairs if value is not None]
        if parts:
            yield " and ".join(parts)
    if _number(node.get("multipleOf")) is not None:
        yield f"a multiple of {_show(node['multipleOf'])}"


def _counts(low_key: str, high_key: str, noun: str) -> Callable[[Mapping[str, Any]], Iterator[str]]:
    def phrase(node: Mapping[str, Any]) -> Iterator[str]:
        low, high = _number(node.get(low_key)), _number(node.get(high_key))
        if low is not None and high is not None:
            yield f"between {low} and {high} {noun}s"
        elif low is not None:
            yield f"at least {low} {noun}{'' if low == 1 else 's'}"
        elif high is not None:
            yield f"at most {high} {noun}{'' if high == 1 else 's'}"

    return phrase


def _strings(node: Mapping[str, Any]) -> Iterator[str]:
    if isinstance(node.get("pattern"), str):
        yield f"matching the regular expression {node['pattern']}"
    if isinstance(node.get("format"), str):
        yield f"format: {node['format']}"


def _others(node: Mapping[str, Any]) -> Iterator[str]:
    if node.get("uniqueItems") is True:
        yield "no duplicate items"
    if isinstance(node.get("enum"), list):
        yield "one of " + ", ".join(_show(v) for v in node["enum"])
    if "const" in node:
        yield f"always {_show(node['const'])}"
    if "default" in node:
        yield f"default {_show(node['default'])}"
    if isinstance(node.get("examples"), list) and node["examples"]:
        yield "for example " + ", ".join(_show(v) for v in node["examples"])


_PHRASES = (
    _bounds,
    _counts("minLength", "maxLength", "character"),
    _strings,
    _counts("minItems", "maxItems", "item"),
    _counts("minProperties", "maxProperties", "key"),
    _others,
)


def _number(value: Any) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _show(value: Any) -> str:
    if isinstance(value, str) and value and value.strip() == value:
        return value
    return json.dumps(value, ensure_ascii=False)
