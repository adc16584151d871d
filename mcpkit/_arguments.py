"""JSON arguments -> validated keyword arguments, and failures -> ``{field, expected, received}``.

Validation equals the published schema: strict JSON-mode pydantic (``"5"`` is no ``integer``,
``"arm64"`` is an Enum value, ISO strings become datetimes), plus the checks pydantic leaves out
(:mod:`mcpkit._recheck`); failures are reported by :mod:`mcpkit._validation_errors`. The
documented kindnesses: a JSON-encoded string sent for an object or array parameter is decoded
first, and an explicit ``null`` is fine for ``= None``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from mcpkit import _codec
from mcpkit._jsonschema import mentions, union_members
from mcpkit._recheck import KEYWORDS, first_violation
from mcpkit._validation_errors import detail, error_detail, locate
from mcpkit.exceptions import InvalidArguments
from mcpkit.schema import ArgumentsSchema

__all__ = ["ArgumentValidator"]


class ArgumentValidator:
    """Validate a tool's arguments against its published input schema."""

    def __init__(self, arguments: ArgumentsSchema, *, tool: str) -> None:
        self._arguments = arguments
        self._schema = arguments.schema
        self._tool = tool

    # Worked out on the first call, so that compiling many tools stays cheap.

    @cached_property
    def _validator(self) -> Any:
        """The adapter's core validator, called directly: one Python frame less per call."""
        return self._arguments.adapter.validator

    def prepare(self) -> None:
        """Build the validator now (importing pydantic) instead of on the first call."""
        _ = self._validator

    @cached_property
    def _decodable(self) -> frozenset[str]:
        properties = self._schema.get("properties", {})
        return frozenset(
            n for n, p in properties.items() if _takes_container(p) and not _takes_string(p)
        )

    @cached_property
    def _recheck(self) -> bool:
        return any(mentions(self._schema, keyword) for keyword in KEYWORDS)

    def __call__(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if self._decodable:
            arguments = self._decode_json_strings(arguments)
        try:
            values: dict[str, Any] = self._validator.validate_json(
                _codec.to_json(arguments), strict=True
            )
        except _codec.ValidationError as exc:
            arguments, values = self._retry_integral_floats(arguments, exc)
        if self._recheck:
            found = first_violation(arguments, self._schema, (), self._schema)
            if found is not None:
                path, expected = found
                raise InvalidArguments(
                    detail(path, expected, _value_at(arguments, path)), tool=self._tool
                )
        return values

    def _retry_integral_floats(
        self, arguments: Mapping[str, Any], exc: _codec.ValidationError
    ) -> tuple[Mapping[str, Any], dict[str, Any]]:
        """JSON Schema counts ``1.0`` as an integer, strict pydantic does not: where pydantic
        wanted an integer and got a whole float, send the integer and validate once more."""
        import copy  # this rare path's own: not on every server's start-up

        fixed: Any = copy.deepcopy(dict(arguments))
        changed = False
        for error in exc.errors(include_url=False):
            value = error.get("input")
            if error["type"] == "int_type" and isinstance(value, float) and value.is_integer():
                path, _ = locate(error["loc"], self._schema)
                changed = _replace_at(fixed, path, int(value)) or changed
        if not changed:
            raise InvalidArguments(error_detail(exc, self._schema), tool=self._tool) from None
        try:
            return fixed, self._validator.validate_json(_codec.to_json(fixed), strict=True)
        except _codec.ValidationError as again:
            raise InvalidArguments(error_detail(again, self._schema), tool=self._tool) from None

    def _decode_json_strings(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """An LLM-client quirk: ``"{\\"a\\": 1}"`` sent where an object is expected."""
        fixed = dict(arguments)
        for name in self._decodable.intersection(arguments):
            value = arguments[name]
            if isinstance(value, str):
                try:
                    decoded = json.loads(value)
                except ValueError:
                    continue
                if isinstance(decoded, (dict, list)):
                    fixed[name] = decoded
        return fixed


def _takes_container(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") in ("object", "array"):
        return True
    members = union_members(schema) or ()
    return any(isinstance(b, dict) and _takes_container(b) for b in members)


def _takes_string(schema: Mapping[str, Any]) -> bool:
    """A string is a valid value here: it must reach the function as sent, never decoded."""
    if schema.get("type") == "string":
        return True
    members = union_members(schema) or ()
    return any(isinstance(b, dict) and _takes_string(b) for b in members)


def _replace_at(container: Any, path: Sequence[Any], value: Any) -> bool:
    """Set ``value`` at ``path`` inside nested dicts/lists; false when the path is not there."""
    for part in path[:-1]:
        try:
            container = container[part]
        except (KeyError, IndexError, TypeError):
            return False
    if not path or not isinstance(container, (dict, list)):
        return False
    try:
        container[path[-1]] = value
    except (IndexError, TypeError):
        return False
    return True


def _value_at(value: Any, path: Sequence[Any]) -> Any:
    for part in path:
        value = value[part]
    return value
