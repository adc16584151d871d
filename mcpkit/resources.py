"""Resources: static ones (a fixed URI) and templates (RFC 6570 ``{var}`` / ``{+path}``).

::

    @app.resource("config://app", mime_type="application/json")
    def config() -> dict[str, str]: ...

    @app.resource("users://{user_id}/profile")
    def profile(user_id: int) -> str: ...      # "users://42/profile" -> user_id=42

Template variables arrive as strings and are parsed strictly into the parameter's type
(``"42"`` -> 42; ``"4x"`` is an error). A function returns ``str`` (text), ``bytes`` (a base64
blob), a model / dict / list (JSON text), :class:`Contents` or a list of those.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from mcpkit import _codec
from mcpkit._availability import AccessOptions, CacheScope, check_access, check_hint
from mcpkit._frozen import frozen
from mcpkit._pydantic_loaded import is_model
from mcpkit._signatures import Definition, check_options, declared_context
from mcpkit._validation_errors import error_detail
from mcpkit._workers import Workers
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError, InvalidParams
from mcpkit.schema import arguments_schema

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "Contents",
    "Resource",
    "ResourceOptions",
    "ResourceTemplate",
    "readers",
    "template_variables",
]


@frozen
class Contents:
    """One piece of a resource's contents: ``text`` or ``blob`` (bytes, base64 on the wire)."""

    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    uri: str | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("Contents takes exactly one of text= or blob=")

    def to_wire(self, uri: str, default_mime: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri or uri}
        mime = self.mime_type or default_mime
        if mime:
            out["mimeType"] = mime
        if self.text is not None:
            out["text"] = self.text
        else:
            out["blob"] = base64.b64encode(self.blob or b"").decode("ascii")
        if self.meta:
            out["_meta"] = self.meta
        return out


def contents_of(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """A returned value -> ``contents`` (never empty)."""
    if isinstance(value, Contents):
        return [value.to_wire(uri, mime_type)]
    if isinstance(value, list) and value and all(isinstance(v, Contents) for v in value):
        return [v.to_wire(uri, mime_type) for v in value]
    if isinstance(value, str):
        return [Contents(text=value).to_wire(uri, mime_type or "text/plain")]
    if isinstance(value, (bytes, bytearray)):
        blob = Contents(blob=bytes(value))
        return [blob.to_wire(uri, mime_type or "application/octet-stream")]
    if is_model(value):
        value = value.model_dump(mode="json")
    text = _codec.to_json(value, fallback=str).decode()
    return [Contents(text=text).to_wire(uri, mime_type or "application/json")]


class ResourceOptions(AccessOptions, total=False):
    """The options of ``@app.resource(uri, ...)`` and ``app.add_resource(uri, fn, ...)``.

    ``name`` defaults to the function's name and ``description`` to its docstring;
    ``mime_type`` is published and given to the contents; ``completions`` (templates only)
    maps a variable to its completer; ``scopes``, ``visible`` and ``tags`` say who sees it
    (:class:`~mcpkit._availability.AccessOptions`); ``ttl_ms`` and ``cache_scope`` are the
    2026-07-28 cache hints of its ``resources/read`` results (over the App's).
    """

    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    icons: list[dict[str, Any]] | None
    annotations: dict[str, Any] | None
    meta: dict[str, Any] | None
    completions: Mapping[str, Callable[..., Any]] | None
    ttl_ms: int | None
    cache_scope: CacheScope | None


class _Readable(Definition):
    """What static resources and templates share: identity, options and the call."""

    listed_in = "resources"

    def __init__(self, fn: Callable[..., Any], label: str, options: ResourceOptions) -> None:
        check_options(options, ResourceOptions.__optional_keys__, label)
        name = options.get("name")
        name = name if name is not None else getattr(fn, "__name__", "resource")
        super().__init__(fn, name, label, access=check_access(options, label))
        self.ttl_ms, self.cache_scope = options.get("ttl_ms"), options.get("cache_scope")
        check_hint(self.ttl_ms, self.cache_scope, label)
        self.title = options.get("title")
        self.explicit_description = options.get("description")
        self.mime_type = options.get("mime_type")
        self.icons = options.get("icons")
        self.annotations = options.get("annotations")
        self.meta = options.get("meta")

    def _declared(self) -> list[str]:
        """The parameters a URI must fill (all but the Context), known at decoration."""
        params = self.signature.parameters.items()
        return [n for n, p in params if not declared_context(self.fn, p.annotation)]

    def _common(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        description = self.explicit_description
        if description is None:
            description = self._parameters.description
        extra = {
            "title": self.title,
            "description": description,
            "mimeType": self.mime_type,
            "icons": self.icons,
            "annotations": self.annotations,
            "_meta": self.meta,
        }
        out.update({k: v for k, v in extra.items() if v})
        return out

    async def _read(
        self, uri: str, kwargs: dict[str, Any], context: Context | None, workers: Workers
    ) -> list[dict[str, Any]]:
        value = await self.invoke(kwargs, context, workers)
        return contents_of(value, uri, self.mime_type)


class Resource(_Readable):
    """A resource with a fixed URI."""

    def __init__(
        self, uri: str, fn: Callable[..., Any], **options: Unpack[ResourceOptions]
    ) -> None:
        super().__init__(fn, f"resource {uri!r}", options)
        if template_variables(uri):
            raise DefinitionError(f"{self.label}: has template variables; use a template")
        if options.get("completions"):
            raise DefinitionError(
                f"{self.label}: completions complete template variables; this URI has none"
            )
        self.uri = uri
        self._no_parameters(self._declared())

    def _no_parameters(self, names: list[str]) -> None:
        if names:
            raise DefinitionError(
                f"{self.label}: a static resource takes no parameters (got "
                f"{', '.join(names)}); put {{variables}} in the URI for a template"
            )

    def compile(self) -> None:
        self._no_parameters([p.name for p in self._parameters.params])

    @property
    def definition(self) -> dict[str, Any]:
        return {"uri": self.uri, **self._common()}

    async def read(self, context: Context | None, workers: Workers) -> list[dict[str, Any]]:
        return await self._read(self.uri, {}, context, workers)


class ResourceTemplate(_Readable):
    """A URI template whose variables are the function's parameters."""

    def __init__(
        self, uri_template: str, fn: Callable[..., Any], **options: Unpack[ResourceOptions]
    ) -> None:
        super().__init__(fn, f"resource template {uri_template!r}", options)
        from mcpkit._uritemplate import UriTemplate  # loads with the first template

        self.uri_template = uri_template
        self._uri = UriTemplate(uri_template)
        self.variables = self._uri.names
        self._check_variables()
        self.completions = dict(options.get("completions") or {})
        unknown = sorted(set(self.completions) - set(self.variables))
        if unknown:
            raise DefinitionError(f"{self.label}: completions for unknown variables {unknown}")

    def _check_variables(self) -> None:
        declared = set(self._declared())
        twice = sorted({name for name in self.variables if self.variables.count(name) > 1})
        if twice:
            raise DefinitionError(f"{self.label}: each variable may appear once (twice: {twice})")
        wanted = set(self.variables)
        missing, extra = sorted(wanted - declared), sorted(declared - wanted)
        if missing or extra:
            raise DefinitionError(
                f"{self.label}: the function's parameters must match the template's variables "
                f"exactly (missing parameters: {missing or 'none'}; parameters not in the "
                f"template: {extra or 'none'})"
            )

    @cached_property
    def _adapter(self) -> Any:
        return arguments_schema(self._parameters.params, where=self.label)

    def compile(self) -> None:
        _ = self._adapter

    def prepare(self) -> None:
        """Compile, then build the variables' validator a first read would build."""
        self.compile()
        _ = self._adapter.adapter

    @property
    def definition(self) -> dict[str, Any]:
        return {"uriTemplate": self.uri_template, **self._common()}

    def argument_schema(self, name: str) -> dict[str, Any] | None:
        """The schema of one variable (``None`` if there is no such variable)."""
        result: dict[str, Any] | None = self._adapter.schema.get("properties", {}).get(name)
        return result

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values in ``uri``, percent-decoded; ``None`` if it does not match."""
        return self._uri.match(uri)

    def parse(self, values: dict[str, str]) -> dict[str, Any]:
        """Strings -> typed values, strictly; ``-32602`` with the detail when they don't fit."""
        built = self._adapter
        try:
            parsed: dict[str, Any] = built.adapter.validate_strings(values, strict=True)
        except _codec.ValidationError as exc:
            raise InvalidParams("Invalid params", error_detail(exc, built.schema)) from None
        return parsed

    async def read(
        self, uri: str, values: dict[str, str], context: Context | None, workers: Workers
    ) -> list[dict[str, Any]]:
        return await self._read(uri, self.parse(values), context, workers)


def template_variables(uri_template: str) -> tuple[str, ...]:
    from mcpkit._uritemplate import VARIABLE  # loads with the first resource

    return tuple(name for _, name in VARIABLE.findall(uri_template))


def readers(
    resources: Mapping[str, Resource], templates: Mapping[str, ResourceTemplate], uri: str
) -> Iterator[tuple[Resource | ResourceTemplate, dict[str, str] | None]]:
    """What may serve ``uri``, in the order a read tries it: the resource of that URI, then
    every template matching it (with its variables' values), in registration order."""
    resource = resources.get(uri)
    if resource is not None:
        yield resource, None
    for template in templates.values():
        values = template.match(uri)
        if values is not None:
            yield template, values
