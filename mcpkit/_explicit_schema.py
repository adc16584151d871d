"""Tools declared with an explicit JSON Schema: published verbatim, enforced with ``jsonschema``.

Only such tools import ``jsonschema`` (the ``mcpkit[jsonschema]`` extra), on first compile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import jsonschema

from mcpkit import _codec
from mcpkit.exceptions import InvalidArguments

__all__ = ["ExplicitOutput", "ExplicitValidator"]

_PHRASES = {
    "required": "required",
    "additionalProperties": "no such argument",
    "uniqueItems": "unique items",
}


class ExplicitValidator:
    """Validate arguments against a user-written input schema."""

    def __init__(self, schema: Mapping[str, Any], *, tool: str) -> None:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(dict(schema))
        self._validator = cls(schema)
        self._tool = tool

    def __call__(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        errors = sorted(self._validator.iter_errors(dict(arguments)), key=_order)
        if not errors:
            return dict(arguments)
        details = [_detail(e) for e in errors]
        first = dict(details[0])
        if len(details) > 1:
            first["errors"] = details
        raise InvalidArguments(first, tool=self._tool)


class ExplicitOutput:
    """A user-written output schema; returned values are checked against it."""

    adapter = None
    wrapped = False

    def __init__(self, schema: Mapping[str, Any], *, where: str) -> None:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(dict(schema))
        self.schema = dict(schema)
        self._validator = cls(schema)
        self._where = where

    def dump(self, value: Any) -> Any:
        data = _codec.to_jsonable_python(value)
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(data))
        if error is not None:
            raise ValueError(
                f"{self._where} returned a value its output schema rejects: {error.message}"
            )
        return data


def _order(error: jsonschema.ValidationError) -> tuple[int, str]:
    return (len(error.absolute_path), str(list(error.absolute_path)))


def _detail(error: jsonschema.ValidationError) -> dict[str, Any]:
    path = [str(p) for p in error.absolute_path]
    received: Any = error.instance
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        path.append(missing)
        received = None
    elif error.validator == "additionalProperties":
        instance = cast("dict[str, Any]", error.instance)
        declared = cast("dict[str, Any]", error.schema).get("properties", {})
        extra = sorted(set(instance) - set(declared))
        path.append(extra[0] if extra else "")
        received = instance.get(extra[0]) if extra else None
    expected: Any = _PHRASES.get(str(error.validator))
    if error.validator == "enum":
        expected = error.validator_value
    elif expected is None:
        expected = _constraint(error)
    return {"field": ".".join(path), "expected": expected, "received": received}


def _constraint(error: jsonschema.ValidationError) -> str:
    value = error.validator_value
    words = {
        "type": "{}",
        "minimum": ">= {}",
        "maximum": "<= {}",
        "exclusiveMinimum": "> {}",
        "exclusiveMaximum": "< {}",
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "pattern": "string matching {}",
        "multipleOf": "multiple of {}",
        "const": "{}",
    }
    template = words.get(str(error.validator))
    if template is None:
        return error.message
    if isinstance(value, list):
        value = " or ".join(str(v) for v in value)
    return template.format(value)
