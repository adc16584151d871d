"""Tools: a function recorded at decoration, compiled into schemas and a validator on first use.

Decoration checks only the signature's shape (cheap, at import); types are resolved and the
pydantic adapters built on first use (or by ``App.compile()``), so import time does not grow
with the number of tools and forward references have a chance to resolve.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import typing_extensions

from mcpkit._arguments import ArgumentValidator
from mcpkit._docstrings import parse_docstring
from mcpkit._workers import Workers
from mcpkit.content import Content
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError
from mcpkit.results import ToolResult, structured_result, tool_result, unstructured_result
from mcpkit.schema import EMPTY, Param, arguments_schema, return_schema

__all__ = ["TOOL_NAME", "Tool", "ToolAnnotations", "check_signature", "resolve_hints"]

TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
"""Tool names: 1-128 of ``A-Z a-z 0-9 _ - .`` (MCP 2025-11-25 and later)."""


@dataclass(frozen=True)
class ToolAnnotations:
    """Hints about a tool's behaviour for clients (all optional; clients treat them as hints)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    def to_wire(self) -> dict[str, Any]:
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only_hint,
            "destructiveHint": self.destructive_hint,
            "idempotentHint": self.idempotent_hint,
            "openWorldHint": self.open_world_hint,
        }
        return {k: v for k, v in pairs.items() if v is not None}


_ANNOTATION_KEYS = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}


def _annotations_wire(value: ToolAnnotations | Mapping[str, Any] | None, where: str) -> Any:
    if value is None:
        return None
    if isinstance(value, ToolAnnotations):
        return value.to_wire()
    unknown = set(value) - _ANNOTATION_KEYS
    if unknown:
        raise DefinitionError(
            f"{where}: unknown annotation(s) {sorted(unknown)}; use {sorted(_ANNOTATION_KEYS)}"
        )
    return dict(value)


# ------------------------------------------------------------------- signature (decoration)


def check_signature(
    fn: Callable[..., Any], where: str, *, explicit: bool = False
) -> inspect.Signature:
    """Reject signatures no client could call, naming the parameter and the fix.

    With an ``explicit`` input schema the function takes what that schema allows: annotations
    are optional and ``**kwargs`` may collect the arguments.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise DefinitionError(f"{where}: cannot read the signature of {fn!r}: {exc}") from exc
    for param in signature.parameters.values():
        if not (explicit and (param.kind is param.VAR_KEYWORD or param.annotation is EMPTY)):
            _check_parameter(param, where)
    return signature


def _check_parameter(param: inspect.Parameter, where: str) -> None:
    name = param.name
    if param.kind is param.VAR_POSITIONAL:
        raise DefinitionError(f"{where}: *{name} cannot be sent by a client; list each argument")
    if param.kind is param.VAR_KEYWORD:
        raise DefinitionError(
            f"{where}: **{name} cannot be described by a schema; list each "
            "argument or take one model/TypedDict parameter"
        )
    if param.kind is param.POSITIONAL_ONLY:
        raise DefinitionError(
            f"{where}: parameter {name!r} is positional-only; clients send "
            "arguments by name, so remove the '/'"
        )
    if name.startswith("_"):
        raise DefinitionError(
            f"{where}: parameter {name!r} starts with '_'; rename it (a "
            "client cannot see private parameters)"
        )
    if param.annotation is EMPTY:
        raise DefinitionError(
            f"{where}: parameter {name!r} has no type annotation; add one "
            f"(e.g. '{name}: str') so mcpkit can publish its schema"
        )


def resolve_hints(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    """Evaluate the annotations (forward references, ``from __future__ import annotations``)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise DefinitionError(
            f"{where}: {_unresolved(fn)} cannot be resolved: {exc}; define or "
            "import that name at module level"
        ) from exc
    except TypeError as exc:
        raise DefinitionError(f"{where}: an annotation is not a valid type: {exc}") from exc


def _unresolved(fn: Callable[..., Any]) -> str:
    """Which annotation fails to resolve: 'parameter 'x'', 'the return type' or 'an annotation'."""
    namespace = getattr(inspect.unwrap(fn), "__globals__", {})
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        probe = types.SimpleNamespace(__annotations__={name: annotation}, __globals__=namespace)
        try:
            typing.get_type_hints(probe, include_extras=True)
        except NameError:
            return "the return type" if name == "return" else f"parameter {name!r}"
    return "an annotation"


def _is_context(hint: Any) -> bool:
    if typing_extensions.get_origin(hint) is typing_extensions.Annotated:
        hint = typing_extensions.get_args(hint)[0]
    args = typing_extensions.get_args(hint)
    if args and type(None) in args:  # Context | None
        hint = next(a for a in args if a is not type(None))
    return isinstance(hint, type) and issubclass(hint, Context)


def _is_unstructured(hint: Any) -> bool:
    """Return types that are content, not data: ToolResult, content helpers, lists of them."""
    # On 3.10 ``isinstance(list[X], type)`` is true: only a bare class is a class here.
    if isinstance(hint, type) and typing_extensions.get_origin(hint) is None:
        return issubclass(hint, (ToolResult, *Content))
    return any(_is_unstructured(arg) for arg in typing_extensions.get_args(hint))


# ----------------------------------------------------------------------------- definition


@dataclass(frozen=True)
class _Compiled:
    definition: dict[str, Any]
    validate: Callable[[Mapping[str, Any]], dict[str, Any]]
    context_params: tuple[str, ...]
    output: Any  # ReturnSchema


class Tool:
    """One tool: what ``@app.tool`` records. Compiles itself on first use."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        text_mirror: bool = True,
        inline: bool = False,
    ) -> None:
        self.fn = fn
        self.name = name if name is not None else getattr(fn, "__name__", "")
        self.where = f"tool {self.name!r}"
        if not TOOL_NAME.fullmatch(self.name):
            raise DefinitionError(
                f"{self.where}: a tool name is 1-128 characters of A-Z a-z "
                "0-9 _ - . (pass name=... to choose another)"
            )
        self.signature = check_signature(fn, self.where, explicit=input_schema is not None)
        self.title = title
        self.description = description
        self.annotations = _annotations_wire(annotations, self.where)
        self.icons = icons
        self.meta = meta
        self.explicit_input = _checked_explicit(input_schema, self.where, "input_schema")
        self.explicit_output = _checked_explicit(output_schema, self.where, "output_schema")
        self.structured_output = structured_output
        self.text_mirror = text_mirror
        self.is_async = inspect.iscoroutinefunction(fn)
        self.inline = inline

    def __repr__(self) -> str:
        return f"<Tool {self.name!r}>"

    def compile(self) -> None:
        """Build schemas and validators now (raises :class:`DefinitionError` if impossible)."""
        _ = self._compiled

    @property
    def definition(self) -> dict[str, Any]:
        """The ``Tool`` object as ``tools/list`` publishes it."""
        return self._compiled.definition

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self._compiled.definition["inputSchema"]
        return schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._compiled.definition.get("outputSchema")

    @cached_property
    def _compiled(self) -> _Compiled:
        hints = resolve_hints(self.fn, self.where)
        doc = parse_docstring(self.fn.__doc__)
        context_params = tuple(n for n in self.signature.parameters if _is_context(hints.get(n)))
        params = [
            Param(name, hints[name], p.default, doc.params.get(name))
            for name, p in self.signature.parameters.items()
            if name not in context_params and self.explicit_input is None
        ]
        input_schema, validate = self._input(params)
        output = self._output(hints.get("return", EMPTY))
        definition = self._definition(doc.description, input_schema, output.schema)
        return _Compiled(definition, validate, context_params, output)

    def _input(self, params: list[Param]) -> tuple[dict[str, Any], Any]:
        if self.explicit_input is not None:
            from mcpkit._explicit import ExplicitValidator

            return self.explicit_input, ExplicitValidator(self.explicit_input, tool=self.name)
        built = arguments_schema(params, where=self.where)
        return built.schema, ArgumentValidator(built.adapter, built.schema, tool=self.name)

    def _output(self, annotation: Any) -> Any:
        if self.explicit_output is not None:
            from mcpkit._explicit import ExplicitOutput

            return ExplicitOutput(self.explicit_output, where=self.where)
        if annotation is not EMPTY and _is_unstructured(annotation):
            return return_schema(EMPTY, where=self.where)
        return return_schema(annotation, where=self.where, force=self.structured_output)

    def _definition(
        self, doc: str | None, input_schema: dict[str, Any], output: dict[str, Any] | None
    ) -> dict[str, Any]:
        definition: dict[str, Any] = {"name": self.name}
        if self.title:
            definition["title"] = self.title
        description = self.description if self.description is not None else doc
        if description:
            definition["description"] = description
        definition["inputSchema"] = input_schema
        if output is not None:
            definition["outputSchema"] = output
        if self.annotations:
            definition["annotations"] = self.annotations
        if self.icons:
            definition["icons"] = self.icons
        if self.meta:
            definition["_meta"] = self.meta
        return definition

    # ------------------------------------------------------------------------- calling

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments (raises :class:`~mcpkit.InvalidArguments`)."""
        return self._compiled.validate(arguments)

    async def run(
        self, arguments: Mapping[str, Any], context: Context | None, workers: Workers
    ) -> Any:
        """Validate, call the function (sync ones in a worker thread) and return its value."""
        compiled = self._compiled
        kwargs = compiled.validate(arguments)
        for name in compiled.context_params:
            kwargs[name] = context
        if self.is_async:
            return await self.fn(**kwargs)
        if self.inline:
            return self.fn(**kwargs)
        return await workers.run(self.fn, **kwargs)

    def to_result(self, value: Any, *, force_mirror: bool = False) -> dict[str, Any]:
        """Wrap a returned value into a ``CallToolResult`` (checked against the output schema).

        ``force_mirror`` keeps the JSON text block for clients that predate structured output.
        """
        mirror = force_mirror or self.text_mirror
        if isinstance(value, ToolResult):
            return tool_result(value, text_mirror=mirror)
        output = self._compiled.output
        if output.adapter is None and output.schema is None:
            return unstructured_result(value)
        structured = output.dump(value) if hasattr(output, "dump") else _dump(output, value)
        return structured_result(structured, text_mirror=mirror)


def _dump(output: Any, value: Any) -> Any:
    adapter = output.adapter
    data = adapter.dump_python(adapter.validate_python(value), mode="json")
    return {"result": data} if output.wrapped else data


def _checked_explicit(schema: dict[str, Any] | None, where: str, what: str) -> Any:
    if schema is None:
        return None
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise DefinitionError(
            f'{where}: {what} must be a JSON Schema object with "type": "object" at its root'
        )
    if importlib.util.find_spec("jsonschema") is None:
        raise DefinitionError(
            f"{where}: an explicit {what} is enforced with the jsonschema "
            'package: pip install "mcpkit[jsonschema]"'
        )
    return schema
