"""What the schema profiles share: the refusal they raise, ``allOf`` merging, local ``$ref``
resolution and the null branch of a union."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit._jsonschema import local_name, named_types, recursive_defs

__all__ = ["Refs", "Unpublishable", "is_null", "merged_all_of"]


class Unpublishable(Exception):
    """A schema part a profile cannot publish: where (``$.a.b``) and why, with the fix."""

    def __init__(self, path: str, text: str) -> None:
        super().__init__(f"{path}: {text}")
        self.path = path
        self.text = text


def is_null(member: Any) -> bool:
    """``{"type": "null"}`` (with or without a description): the ``None`` of ``Optional``."""
    return isinstance(member, dict) and named_types(member) == ("null",)


def merged_all_of(node: Mapping[str, Any], path: str) -> dict[str, Any]:
    """``allOf`` folded into one object: properties and ``required`` united, other keys kept
    ([LC-13850] ``mergeAllOf``; [OAI-SO] and [G-SCHEMA] have no ``allOf``)."""
    out = {k: v for k, v in node.items() if k != "allOf"}
    for member in node["allOf"]:
        if not isinstance(member, dict) or "$ref" in member or "allOf" in member:
            raise Unpublishable(path, "an allOf member that is not a plain schema")
        properties = {**out.get("properties", {}), **member.get("properties", {})}
        required = [*out.get("required", []), *member.get("required", [])]
        out = {**member, **out}
        if properties:
            out["properties"] = properties
        if required:
            out["required"] = list(dict.fromkeys(required))
    return out


class Refs:
    """The local definitions of a schema and which of them are recursive."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = root.get("$defs") or {}
        self.recursive = recursive_defs(self.defs)

    def target(self, ref: Any, path: str) -> tuple[str, Any]:
        """The definition a ``$ref`` names (refusing anything but a local ``#/$defs/...``)."""
        if ref == "#":
            return "#", None
        name = local_name(ref)
        if name is None or name not in self.defs:
            raise Unpublishable(path, f"$ref {ref!r} is not a local #/$defs/... definition")
        return name, self.defs[name]
