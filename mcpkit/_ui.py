"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865): views and linked tools.

A view is an HTML resource at a ``ui://`` URI, served as ``text/html;profile=mcp-app`` with the
extension's resource ``_meta.ui`` fields (``csp``, ``permissions``, ``domain``,
``prefersBorder``) on its listing entry and on each content item it reads (the extension's
"Metadata Location": hosts prefer the content item, fall back to the listing). A tool links to
a view with ``_meta.ui.resourceUri`` (and ``visibility``). Both are published to every client
alike: hosts without MCP Apps ignore ``_meta`` and use the tool's text content.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal

from mcpkit._workers import Workers
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError
from mcpkit.resources import Resource, ResourceOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "MCP_APP_MIME",
    "UiOptions",
    "UiResource",
    "Visibility",
    "check_link",
    "has_views",
    "tool_meta",
]

MCP_APP_MIME = "text/html;profile=mcp-app"
"""The MIME type of an MCP Apps HTML view (the only one the extension defines)."""

Visibility = Literal["model", "app"]

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
_UI_OPTIONS = ("csp", "permissions", "domain", "prefers_border")


class UiOptions(ResourceOptions, total=False):
    """The options of ``@app.ui(uri, ...)``: a resource's (but ``mime_type``, which is
    always ``text/html;profile=mcp-app``, and ``completions``) and the view's ``_meta.ui``.

    ``csp`` maps ``connectDomains``, ``resourceDomains``, ``frameDomains`` and
    ``baseUriDomains`` to lists of origins; ``permissions`` names what the view asks for
    (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``); ``domain`` is a
    dedicated sandbox origin (its format is the host's); ``prefers_border`` asks the host for
    a visible border and background (``True``) or none (``False``).
    """

    csp: Mapping[str, Collection[str]] | None
    permissions: Collection[str] | None
    domain: str | None
    prefers_border: bool | None


class UiResource(Resource):
    """An MCP Apps view: a static ``ui://`` resource whose function returns the HTML."""

    def __init__(self, uri: str, fn: Callable[..., Any], **options: Unpack[UiOptions]) -> None:
        label = f"ui {uri!r}"
        if not uri.startswith("ui://"):
            raise DefinitionError(f"{label}: an MCP Apps view's URI starts with 'ui://'")
        for refused in ("mime_type", "completions"):
            if refused in options:
                raise DefinitionError(
                    f"{label}: {refused}= is not an option of a view (its MIME type is "
                    f"{MCP_APP_MIME!r} and its URI has no variables)"
                )
        given: dict[str, Any] = dict(options)
        self.ui_meta = _resource_meta({key: given.pop(key, None) for key in _UI_OPTIONS}, label)
        given["meta"] = _merged(given.get("meta"), self.ui_meta, label)
        super().__init__(uri, fn, mime_type=MCP_APP_MIME, **given)

    async def _read(
        self, uri: str, kwargs: dict[str, Any], context: Context | None, workers: Workers
    ) -> list[dict[str, Any]]:
        contents = await super()._read(uri, kwargs, context, workers)
        if self.ui_meta:
            for item in contents:
                item.setdefault("_meta", {"ui": self.ui_meta})
        return contents


def check_link(label: str, ui: str, resources: Mapping[str, Resource]) -> None:
    """Refuse a tool's link to a URI that is not (yet) a view of its app."""
    if not isinstance(resources.get(ui), UiResource):
        views = [uri for uri, found in resources.items() if isinstance(found, UiResource)]
        raise DefinitionError(
            f"{label} links ui={ui!r}, which is not a view of this app; declare "
            f"@app.ui({ui!r}) before the tool (views so far: {views or 'none'})"
        )


def tool_meta(
    meta: dict[str, Any] | None,
    ui: str | None,
    visibility: Collection[str] | None,
    label: str,
) -> dict[str, Any] | None:
    """A tool's ``_meta``: the user's ``meta`` plus ``ui`` (``resourceUri``, ``visibility``)
    when the tool links to a view."""
    if ui is None:
        if visibility is not None:
            raise DefinitionError(f"{label}: ui_visibility= needs ui= (the view it applies to)")
        return meta
    if not isinstance(ui, str) or not ui.startswith("ui://"):
        raise DefinitionError(f"{label}: ui= names a view's 'ui://' URI, not {ui!r}")
    linked: dict[str, Any] = {"resourceUri": ui}
    if visibility is not None:
        chosen = list(visibility)
        if not chosen or isinstance(visibility, str) or set(chosen) - {"model", "app"}:
            raise DefinitionError(
                f"{label}: ui_visibility= is a non-empty list of 'model' and 'app', "
                f"not {visibility!r}"
            )
        linked["visibility"] = chosen
    return _merged(meta, linked, label)


def has_views(resources: Mapping[str, Resource]) -> bool:
    """Whether an app serves a view (then it declares the extension)."""
    return any(isinstance(resource, UiResource) for resource in resources.values())


def _merged(meta: dict[str, Any] | None, ui: dict[str, Any], label: str) -> dict[str, Any] | None:
    if meta is not None and "ui" in meta:
        raise DefinitionError(
            f"{label}: meta= has a 'ui' key; mcpkit writes _meta.ui from the ui options"
        )
    if not ui:
        return meta
    return {**(meta or {}), "ui": ui}


def _resource_meta(options: dict[str, Any], label: str) -> dict[str, Any]:
    """A view's ``_meta.ui`` from its options, checked."""
    out: dict[str, Any] = {}
    if options["csp"] is not None:
        out["csp"] = _csp(options["csp"], label)
    if options["permissions"] is not None:
        out["permissions"] = _permissions(options["permissions"], label)
    if options["domain"] is not None:
        if not isinstance(options["domain"], str) or not options["domain"]:
            raise DefinitionError(f"{label}: domain= is a host name string")
        out["domain"] = options["domain"]
    if options["prefers_border"] is not None:
        if not isinstance(options["prefers_border"], bool):
            raise DefinitionError(f"{label}: prefers_border= is True or False")
        out["prefersBorder"] = options["prefers_border"]
    return out


def _csp(csp: Any, label: str) -> dict[str, list[str]]:
    if not isinstance(csp, Mapping) or set(csp) - set(_CSP_KEYS):
        raise DefinitionError(f"{label}: csp= maps some of {list(_CSP_KEYS)} to lists of origins")
    out: dict[str, list[str]] = {}
    for key, origins in csp.items():
        if isinstance(origins, str) or not all(isinstance(o, str) for o in origins):
            raise DefinitionError(f"{label}: csp[{key!r}] is a list of origin strings")
        out[key] = list(origins)
    return out


def _permissions(permissions: Any, label: str) -> dict[str, dict[str, Any]]:
    names = [permissions] if isinstance(permissions, str) else list(permissions)
    unknown = [name for name in names if name not in _PERMISSIONS]
    if unknown:
        raise DefinitionError(
            f"{label}: unknown permission(s) {unknown}; the extension defines {list(_PERMISSIONS)}"
        )
    return {name: {} for name in names}
