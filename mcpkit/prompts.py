"""Prompts: a function whose parameters are the prompt's arguments and whose return value is
the messages.

::

    @app.prompt
    def review(code: str, strict: bool = False) -> str:
        \"\"\"Review some code.\"\"\"
        return f"Please review this code{' strictly' if strict else ''}:\\n{code}"

Arguments arrive as strings and are parsed strictly into the parameter types. A ``str`` is one
user message; :class:`Message`, content helpers (``Text``, ``Image``, ``EmbeddedResource``, ...)
and lists of them are accepted too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from mcpkit import _codec
from mcpkit._availability import AccessOptions, check_access
from mcpkit._frozen import frozen
from mcpkit._signatures import Definition, check_name, check_options
from mcpkit._validation_errors import error_detail
from mcpkit._workers import Workers
from mcpkit.content import Content
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError, InvalidParams
from mcpkit.schema import ArgumentsSchema, arguments_schema

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Message", "Prompt", "PromptOptions", "messages_of"]


@frozen
class Message:
    """One prompt message: ``content`` is a ``str``, a content helper or a content block."""

    content: Any
    role: Literal["user", "assistant"] = "user"

    def to_wire(self) -> dict[str, Any]:
        return {"role": self.role, "content": _block(self.content)}


def _block(content: Any) -> dict[str, Any]:
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, Content):
        return content.to_block()
    if isinstance(content, dict) and "type" in content:
        return content
    raise TypeError(f"cannot use {type(content).__name__} as prompt message content")


def messages_of(value: Any) -> list[dict[str, Any]]:
    """A returned value -> ``messages``."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return [_message(item) for item in items]


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, Message):
        return item.to_wire()
    if isinstance(item, dict) and "role" in item and "content" in item:
        return {"role": item["role"], "content": _block(item["content"])}
    return Message(item).to_wire()


class PromptOptions(AccessOptions, total=False):
    """The options of ``@app.prompt(...)`` and ``app.add_prompt(fn, ...)``.

    ``name`` defaults to the function's name and ``description`` to its docstring;
    ``completions`` maps an argument to its completer; ``scopes``, ``visible`` and ``tags``
    say who sees it (:class:`~mcpkit._availability.AccessOptions`).
    """

    name: str | None
    title: str | None
    description: str | None
    icons: list[dict[str, Any]] | None
    meta: dict[str, Any] | None
    completions: Mapping[str, Callable[..., Any]] | None


class Prompt(Definition):
    """One prompt: what ``@app.prompt`` records. Compiles itself on first use."""

    listed_in = "prompts"

    def __init__(self, fn: Callable[..., Any], **options: Unpack[PromptOptions]) -> None:
        name = options.get("name")
        name = name if name is not None else getattr(fn, "__name__", "")
        label = f"prompt {name!r}"
        check_name(name, label, "prompt")
        check_options(options, PromptOptions.__optional_keys__, label)
        super().__init__(fn, name, label, access=check_access(options, label))
        self.title = options.get("title")
        self.description = options.get("description")
        self.icons = options.get("icons")
        self.meta = options.get("meta")
        self.completions = dict(options.get("completions") or {})
        unknown = set(self.completions) - {name for name, _ in self.declared}
        if unknown:
            raise DefinitionError(f"{label}: completions for unknown arguments {sorted(unknown)}")

    def __repr__(self) -> str:
        return f"<Prompt {self.name!r}>"

    @cached_property
    def _schema(self) -> ArgumentsSchema:
        return arguments_schema(self._parameters.params, where=self.label)

    def compile(self) -> None:
        _ = self.definition

    def prepare(self) -> None:
        """Compile, then build the arguments validator a first ``prompts/get`` would build."""
        self.compile()
        _ = self._schema.adapter

    @cached_property
    def definition(self) -> dict[str, Any]:
        """The ``Prompt`` object as ``prompts/list`` publishes it."""
        definition: dict[str, Any] = {"name": self.name}
        if self.title:
            definition["title"] = self.title
        description = self.description or self._parameters.description
        if description:
            definition["description"] = description
        properties = self._schema.schema.get("properties", {})
        definition["arguments"] = [
            _argument(p.name, properties.get(p.name, {}), p.required)
            for p in self._parameters.params
        ]
        if self.icons:
            definition["icons"] = self.icons
        if self.meta:
            definition["_meta"] = self.meta
        return definition

    def argument_schema(self, name: str) -> dict[str, Any] | None:
        """The published schema of one argument (``None`` if there is no such argument)."""
        result: dict[str, Any] | None = self._schema.schema.get("properties", {}).get(name)
        return result

    def parse(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """String arguments -> typed values; ``-32602`` when missing or malformed."""
        strings = {k: v for k, v in arguments.items() if isinstance(v, str)}
        if len(strings) != len(arguments):
            raise InvalidParams("Invalid params: prompt arguments must be strings")
        try:
            parsed: dict[str, Any] = self._schema.adapter.validate_strings(strings, strict=True)
        except _codec.ValidationError as exc:
            raise InvalidParams("Invalid params", error_detail(exc, self._schema.schema)) from None
        return parsed

    async def get(
        self, arguments: Mapping[str, Any], context: Context | None, workers: Workers
    ) -> dict[str, Any]:
        value = await self.invoke(self.parse(arguments), context, workers)
        result: dict[str, Any] = {"messages": messages_of(value)}
        if "description" in self.definition:
            result["description"] = self.definition["description"]
        return result


def _argument(name: str, schema: Mapping[str, Any], required: bool) -> dict[str, Any]:
    argument: dict[str, Any] = {"name": name}
    if schema.get("description"):
        argument["description"] = schema["description"]
    argument["required"] = required
    return argument
