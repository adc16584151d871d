"""Two snapshots -> the changes between them, each breaking or compatible for clients.

Direction decides: inputs (what clients send: tool parameters, prompt arguments) break when
they narrow, outputs (what clients receive: output fields) break when they widen.

=========================  ===========================  ===========================
change                     input (parameter)            output (field)
=========================  ===========================  ===========================
removed                    breaking                     breaking
added                      breaking if required         compatible
optional <-> required      breaking when made required  breaking when made optional
type narrowed / widened    breaking / compatible        compatible / breaking
enum value removed / added breaking / compatible        compatible / breaking
constraint tightened/loose breaking / compatible        compatible / breaking
default changed            breaking (optional only)     --
description changed        compatible                   compatible
=========================  ===========================  ===========================

A tool, resource, template or prompt removed (or renamed) is breaking; one added is compatible.
Declared access (the snapshot's ``access``): a scope required or ``visible`` added is breaking
(callers without them lose the definition); one dropped, and a change of tags, compatible.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from mcpkit._frozen import frozen
from mcpkit._jsonschema import type_set

__all__ = [
    "INPUT",
    "OUTPUT",
    "Change",
    "compare",
    "render_markdown",
    "render_text",
    "schema_changes",
    "summary",
    "type_set",
]

Schema = dict[str, Any]
INPUT, OUTPUT = "input", "output"
_MISSING = object()
_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_EXACT = ("pattern", "format", "multipleOf", "uniqueItems", "const")
_LISTS = (
    ("tools/list", "tool", "name"),
    ("resources/list", "resource", "uri"),
    ("resources/templates/list", "resource template", "uriTemplate"),
    ("prompts/list", "prompt", "name"),
)


@frozen
class Change:
    """One difference: what it concerns (``tool 'build'``) and what changed."""

    breaking: bool
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.subject}: {self.detail}"


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every change from the ``old`` snapshot to the ``new`` one, in a stable order."""
    changes: list[Change] = []
    for key, kind, ident in _LISTS:
        changes += _lists(old.get(key) or [], new.get(key) or [], kind, ident)
        access = (_declared(old, key), _declared(new, key))
        kept = {str(i.get(ident)) for i in new.get(key) or [] if isinstance(i, dict)}
        for name in (n for n in _names(old.get(key), ident) if n in kept):
            found = _access(access[0].get(name) or {}, access[1].get(name) or {})
            changes += [Change(breaking, f"{kind} {name!r}", detail) for breaking, detail in found]
    return changes


def _declared(snapshot: dict[str, Any], key: str) -> dict[str, Any]:
    declared = (snapshot.get("access") or {}).get(key)
    return declared if isinstance(declared, dict) else {}


def _names(items: Any, ident: str) -> list[str]:
    return [str(i.get(ident)) for i in items or [] if isinstance(i, dict)]


def _access(old: dict[str, Any], new: dict[str, Any]) -> Found:
    before, after = set(old.get("scopes") or ()), set(new.get("scopes") or ())
    if after - before:
        added = ", ".join(sorted(after - before))
        yield True, f"now requires the scopes {added}: callers without them lose it"
    if before - after:
        yield False, f"no longer requires the scopes {', '.join(sorted(before - after))}"
    if bool(old.get("visible")) != bool(new.get("visible")):
        if new.get("visible"):
            yield True, "now visible per caller: some callers lose it"
        else:
            yield False, "no longer visible per caller only"
    if sorted(old.get("tags") or ()) != sorted(new.get("tags") or ()):
        shown = [", ".join(sorted(d.get("tags") or ())) or "none" for d in (old, new)]
        yield False, f"tags changed from {shown[0]} to {shown[1]}"


def _lists(old: list[Any], new: list[Any], kind: str, ident: str) -> list[Change]:
    before = {str(item.get(ident)): item for item in old if isinstance(item, dict)}
    after = {str(item.get(ident)): item for item in new if isinstance(item, dict)}
    changes = [
        Change(True, f"{kind} {name!r}", "removed (or renamed): clients that use it break")
        for name in before
        if name not in after
    ]
    changes += [Change(False, f"{kind} {name!r}", "added") for name in after if name not in before]
    for name in (n for n in before if n in after):
        found = _item(kind, before[name], after[name])
        changes += [Change(breaking, f"{kind} {name!r}", detail) for breaking, detail in found]
    return changes


Found = Iterator[tuple[bool, str]]


def _item(kind: str, old: dict[str, Any], new: dict[str, Any]) -> Found:
    for key in ("title", "description", "annotations", "name"):
        if old.get(key) != new.get(key) and not (kind in ("tool", "prompt") and key == "name"):
            yield False, f"{key} changed"
    if old.get("mimeType") != new.get("mimeType"):
        yield (
            True,
            f"MIME type changed from {_show(old.get('mimeType'))} to {_show(new.get('mimeType'))}",
        )
    if kind == "tool":
        yield from schema_changes(old.get("inputSchema") or {}, new.get("inputSchema") or {}, INPUT)
        yield from _output(old.get("outputSchema"), new.get("outputSchema"))
    elif kind == "prompt":
        yield from schema_changes(_arguments(old), _arguments(new), INPUT, "argument")


def _output(old: Any, new: Any) -> Found:
    if isinstance(old, dict) and isinstance(new, dict):
        yield from schema_changes(old, new, OUTPUT)
    elif isinstance(old, dict):
        yield True, "output schema removed: structured results are no longer promised"
    elif isinstance(new, dict):
        yield False, "output schema added"


def _arguments(prompt: dict[str, Any]) -> Schema:
    arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict)]
    return {
        "properties": {
            str(a.get("name")): {"description": a.get("description")} for a in arguments
        },
        "required": [str(a.get("name")) for a in arguments if a.get("required")],
    }


def schema_changes(old: Schema, new: Schema, direction: str, label: str | None = None) -> Found:
    """The changes between two object schemas, seen from ``direction`` (INPUT or OUTPUT)."""
    label = label or ("parameter" if direction == INPUT else "output field")
    yield from _object(old, new, direction, label, "")


def _object(old: Schema, new: Schema, direction: str, label: str, prefix: str) -> Found:
    before, after = old.get("properties") or {}, new.get("properties") or {}
    was_required, is_required = set(old.get("required") or ()), set(new.get("required") or ())
    for name in before:
        if name not in after:
            yield True, f"{label} {prefix + name!r} removed"
    for name in after:
        if name not in before:
            yield _added(direction, label, prefix + name, name in is_required)
    for name in (n for n in before if n in after):
        where = f"{label} {prefix + name!r}"
        yield from _required(direction, where, name in was_required, name in is_required)
        optional = name not in was_required
        yield from _value(before[name], after[name], direction, label, prefix + name, optional)


def _added(direction: str, label: str, path: str, required: bool) -> tuple[bool, str]:
    if direction == OUTPUT:
        return False, f"{label} {path!r} added"
    if required:
        return True, f"new required {label} {path!r}"
    return False, f"new optional {label} {path!r}"


def _required(direction: str, where: str, was: bool, now: bool) -> Found:
    if was == now:
        return
    if direction == INPUT:
        yield (True, f"{where} made required") if now else (False, f"{where} made optional")
    else:
        yield (
            (True, f"{where} may now be missing")
            if not now
            else (False, f"{where} now always present")
        )


def _value(old: Any, new: Any, direction: str, label: str, path: str, optional: bool) -> Found:
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    where = f"{label} {path!r}"
    yield from _types(old, new, direction, where)
    yield from _enums(old, new, direction, where)
    yield from _constraints(old, new, direction, where)
    if direction == INPUT and optional:
        yield from _default(old, new, where)
    if old.get("description") != new.get("description"):
        yield False, f"{where}: description changed"
    if old.get("properties") or new.get("properties"):
        yield from _object(old, new, direction, label, path + ".")
    if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
        yield from _value(old["items"], new["items"], direction, label, path + "[]", False)


# ----------------------------------------------------------------------------- types


def _covers(wide: frozenset[str], narrow: frozenset[str]) -> bool:
    return "any" in wide or all(t in wide or (t == "integer" and "number" in wide) for t in narrow)


def _types(old: Schema, new: Schema, direction: str, where: str) -> Found:
    before, after = type_set(old), type_set(new)
    if before == after:
        return
    change = f"type changed from {_words(before)} to {_words(after)}"
    if _covers(after, before):
        yield direction == OUTPUT, f"{where}: {change} (widened)"
    elif _covers(before, after):
        yield direction == INPUT, f"{where}: {change} (narrowed)"
    else:
        yield True, f"{where}: {change}"


def _words(types: frozenset[str]) -> str:
    return " or ".join(sorted(types))


# --------------------------------------------------------------------- enums, bounds


def _enums(old: Schema, new: Schema, direction: str, where: str) -> Found:
    before, after = old.get("enum"), new.get("enum")
    if before == after:
        return
    if not isinstance(after, list):
        yield direction == OUTPUT, f"{where}: no longer limited to a list of values"
        return
    if not isinstance(before, list):
        yield direction == INPUT, f"{where}: now limited to {_values(after)}"
        return
    for value in (v for v in before if v not in after):
        yield direction == INPUT, f"{where}: enum value {_show(value)} removed"
    for value in (v for v in after if v not in before):
        yield direction == OUTPUT, f"{where}: enum value {_show(value)} added"


def _constraints(old: Schema, new: Schema, direction: str, where: str) -> Found:
    for key in (*_LOWER, *_UPPER, *_EXACT, "additionalProperties"):
        before, after = old.get(key, _MISSING), new.get(key, _MISSING)
        if before == after or (key == "additionalProperties" and False not in (before, after)):
            continue
        side = _BOUNDS.get(key)
        if side is not None and _bound(old, side) == _bound(new, side):
            continue  # the same bound written another way ("> 0" or ">= 1" for an integer)
        verdict = (
            _tightened(key, before, after)
            if side is None
            else _bound(new, side) > _bound(old, side)
        )
        text = f"{where}: {key} {_show(before)} -> {_show(after)}"
        if verdict is None:
            yield True, f"{text} (changed)"
        else:
            yield (
                verdict == (direction == INPUT),
                f"{text} ({'tightened' if verdict else 'loosened'})",
            )


_BOUNDS = {"minimum": 1, "exclusiveMinimum": 1, "maximum": -1, "exclusiveMaximum": -1}
"""The numeric bound keywords and their side: 1 the lower bound, -1 the upper (negated)."""


def _bound(schema: Schema, side: int) -> tuple[float, bool]:
    """A numeric bound as ``(value, exclusive)``, larger when tighter (the upper one negated);
    an integer's exclusive bound is the inclusive one next to it."""
    inclusive, exclusive = (
        ("minimum", "exclusiveMinimum") if side == 1 else ("maximum", "exclusiveMaximum")
    )
    found: list[tuple[float, bool]] = [(-math.inf, False)]
    if _numbers(schema.get(inclusive, _MISSING)):
        found.append((side * schema[inclusive], False))
    if _numbers(schema.get(exclusive, _MISSING)):
        value = side * schema[exclusive]
        integral = schema.get("type") == "integer"
        found.append((math.floor(value) + 1, False) if integral else (value, True))
    return max(found)


def _tightened(key: str, before: Any, after: Any) -> bool | None:
    """True: fewer values pass; False: more pass; None: different, neither."""
    if after is _MISSING:
        return False
    if before is _MISSING:
        return True
    if key == "additionalProperties":
        return after is False
    if key in _LOWER and _numbers(before, after):
        return bool(after > before)
    if key in _UPPER and _numbers(before, after):
        return bool(after < before)
    return None


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _default(old: Schema, new: Schema, where: str) -> Found:
    before, after = old.get("default", _MISSING), new.get("default", _MISSING)
    if before != after:
        yield True, f"{where}: default changed from {_show(before)} to {_show(after)}"


def _values(values: list[Any]) -> str:
    return ", ".join(_show(v) for v in values)


def _show(value: Any) -> str:
    return "(none)" if value is _MISSING else json.dumps(value, ensure_ascii=False)


# ----------------------------------------------------------------------------- reports


def summary(changes: list[Change]) -> str:
    """``3 changes: 1 breaking, 2 compatible`` (or ``no changes``)."""
    if not changes:
        return "no changes"
    broken = sum(c.breaking for c in changes)
    noun = "change" if len(changes) == 1 else "changes"
    return f"{len(changes)} {noun}: {broken} breaking, {len(changes) - broken} compatible"


def render_text(changes: list[Change]) -> str:
    """One line per change, breaking ones first, then the summary."""
    ordered = sorted(changes, key=lambda c: not c.breaking)
    lines = [f"{'breaking' if c.breaking else 'compatible':<11} {c}" for c in ordered]
    return "\n".join([*lines, summary(changes)]) + "\n"


def render_markdown(changes: list[Change]) -> str:
    """A pull-request comment: a heading, the summary, then a list per class."""
    lines = ["## Tool contract changes", "", f"**{summary(changes)}**", ""]
    for title, breaking in (("Breaking", True), ("Compatible", False)):
        chosen = [c for c in changes if c.breaking is breaking]
        if chosen:
            lines += [f"### {title}", "", *(f"- {_markdown_text(str(c))}" for c in chosen), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _markdown_text(text: str) -> str:
    for char in "\\`*_[]<>|":
        text = text.replace(char, "\\" + char)
    return text
