"""``App``: the registry of an MCP server's tools, and the decorators that fill it. A feature's
module (``prompts``, ``resources``, ``_ui``) loads with the first definition of its kind."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from mcpkit import _compose
from mcpkit._announcer import Announcer
from mcpkit._availability import Switches
from mcpkit._signatures import Definition
from mcpkit.exceptions import DefinitionError
from mcpkit.middleware import Middleware
from mcpkit.options import ServerOptions
from mcpkit.tools import Tool, ToolOptions

if TYPE_CHECKING:  # annotations only: these load where the feature is used (see each use)
    from pathlib import Path

    from typing_extensions import Unpack

    from mcpkit._ui import UiOptions
    from mcpkit.prompts import Prompt, PromptOptions
    from mcpkit.resources import Resource, ResourceOptions, ResourceTemplate
    from mcpkit.settings import SettingsSources, SettingsSpec
    from mcpkit.transports.http import BearerAuth, HttpApp, Verifier  # App.asgi loads it

__all__ = ["App", "ServerOptions"]

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound="Middleware")
Lifespan = Callable[["App"], AbstractAsyncContextManager[Any]]
Completer = Callable[..., Any]


class App(Announcer):
    """An MCP server's identity, lifespan and definitions.

    ``version`` is your app's own version (it is sent as ``serverInfo.version``). How the
    server speaks the protocol (error masking, pagination, caching hints, the ``requestState``
    key) is ``options``, a :class:`ServerOptions`. What the server itself is configured with
    (an API key, a base URL) is ``settings``, a model, dataclass or TypedDict read from the
    environment with ``settings_prefix`` (see :mod:`mcpkit.settings` and ``docs/settings.md``).
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        lifespan: Lifespan | None = None,
        options: ServerOptions | None = None,
        middleware: Iterable[Middleware] = (),
        settings: type[Any] | None = None,
        settings_prefix: str | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.lifespan: Lifespan = lifespan or _compose.no_lifespan
        self.options = options if options is not None else ServerOptions()
        self.completer: Completer | None = None
        self.settings_spec = (
            None if settings is None else _settings(settings, settings_prefix, name)
        )
        self._tools: dict[str, Tool] = {}
        self._resources: dict[str, Resource] = {}
        self._templates: dict[str, ResourceTemplate] = {}
        self._prompts: dict[str, Prompt] = {}
        self._tools_view = MappingProxyType(self._tools)  # (read-only views, made once)
        self._resources_view = MappingProxyType(self._resources)
        self._templates_view = MappingProxyType(self._templates)
        self._prompts_view = MappingProxyType(self._prompts)
        self.switches = Switches()  # enable/disable rules; who may be hidden from whom
        self._includes: list[_compose.Include] = []  # the apps this one includes
        self.middleware_chain: tuple[Middleware, ...] = ()  # the first is the outermost
        for each in middleware:
            self.middleware(each)

    def __repr__(self) -> str:
        return f"<App {self.name!r} {self.version!r}: {len(self._tools)} tools>"

    # ----------------------------------------------------------------------- identity

    @property
    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` object sent as ``serverInfo``."""
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        optional = {
            "title": self.title,
            "description": self.description,
            "websiteUrl": self.website_url,
            "icons": self.icons,
        }
        info.update({k: v for k, v in optional.items() if v})
        return info

    @property
    def settings(self) -> Any:
        """The validated settings (``None`` without ``settings=``), loaded on first use."""
        return None if self.settings_spec is None else self.settings_spec.current()

    def load_settings(
        self, values: Mapping[str, Any] | None = None, /, **sources: Unpack[SettingsSources]
    ) -> Any:
        """Validate the settings from ``env_file``, ``environ`` (default ``os.environ``) and
        ``values``; keep and return them, or raise :class:`~mcpkit.SettingsError`."""
        if self.settings_spec is None:
            raise ValueError(f"App {self.name!r} has no settings (pass settings=... to App)")
        return self.settings_spec.load(values, **sources)

    # -------------------------------------------------------------------------- tools

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(self, fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Unpack[ToolOptions]) -> F | Callable[[F], F]:
        """Register a function as a tool; ``@app.tool`` and ``@app.tool(...)`` both work. The
        function is returned unchanged. Options are those of :meth:`add_tool`."""
        register = _registrar(lambda func: self.add_tool(func, **options))
        return register if fn is None else register(fn)

    def add_tool(self, fn: Callable[..., Any], /, **options: Unpack[ToolOptions]) -> Tool:
        """Register ``fn`` as a tool and return its definition (options: :class:`ToolOptions`).

        Options: ``name``, ``title``, ``description``, ``annotations``, ``icons``, ``meta``,
        ``input_schema``, ``output_schema``, ``structured_output``, ``text_mirror``,
        ``blocking`` (``False`` runs a sync function on the event loop; only for code that
        never blocks), ``timeout`` (seconds; see :class:`ToolOptions`) and ``schema_profile``
        (``None``: ``ServerOptions.schema_profile``).
        """
        if options.get("schema_profile") is None:
            options["schema_profile"] = self.options.schema_profile
        tool = Tool(fn, **options)
        if tool.ui is not None:
            from mcpkit._ui import check_link  # the views feature: with its first use

            check_link(tool.label, tool.ui, self._resources)
        self._add_unique(self._tools, tool.name, tool, "tool", "; pass name=... to one")
        self._changed("tools")
        return tool

    # ---------------------------------------------------------------------- resources

    def resource(self, uri: str, /, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a resource (``"scheme://path"``) or a template (``"users://{id}"``).

        Options: ``name``, ``title``, ``description``, ``mime_type``, ``icons``,
        ``annotations``, ``meta``, and for templates ``completions``. The function is
        returned unchanged.
        """
        return _registrar(lambda fn: self.add_resource(uri, fn, **options))

    def add_resource(
        self, uri: str, fn: Callable[..., Any], /, **options: Unpack[ResourceOptions]
    ) -> Resource | ResourceTemplate:
        """Register ``fn`` as the resource (or template, when ``uri`` has variables)."""
        from mcpkit.resources import Resource, ResourceTemplate, template_variables

        if template_variables(uri):
            template = ResourceTemplate(uri, fn, **options)
            self._add_unique(self._templates, uri, template, "resource template")
            self._changed("resources")
            return template
        resource = Resource(uri, fn, **options)
        self._add_unique(self._resources, uri, resource, "resource")
        self._changed("resources")
        return resource

    def ui(self, uri: str, /, **options: Unpack[UiOptions]) -> Callable[[F], F]:
        """Register an MCP Apps view: the function returns the HTML of ``uri`` (``ui://...``),
        served as ``text/html;profile=mcp-app`` with ``_meta.ui`` from the options
        (:class:`~mcpkit._ui.UiOptions`); tools link to it with ``@app.tool(ui=uri)``."""

        def add(fn: Callable[..., Any]) -> None:
            from mcpkit._ui import UiResource

            self._add_unique(self._resources, uri, UiResource(uri, fn, **options), "resource")
            self._changed("resources")

        return _registrar(add)

    def add_directory(
        self, root: str | Path, *, uri_prefix: str = "file:///", **options: Unpack[ResourceOptions]
    ) -> ResourceTemplate:
        """Serve the files under ``root`` as the template ``{uri_prefix}{+path}`` (named
        ``files`` unless ``name=`` says otherwise).

        Paths that leave ``root`` (``..``, absolute paths, symlinks pointing outside) are
        refused with ``-32602``.
        """
        from pathlib import Path  # here, not at import: a server without it skips pathlib

        from mcpkit._directory import directory_reader
        from mcpkit.resources import ResourceTemplate

        reader = directory_reader(root)

        def read_file(path: str) -> Any:
            return reader(path)

        template = f"{uri_prefix}{{+path}}"
        read_file.__doc__ = options.pop("description", f"Files under {Path(root).name}/.")
        options.setdefault("name", "files")
        added = self.add_resource(template, read_file, **options)
        assert isinstance(added, ResourceTemplate)
        return added

    def remove_resource(self, uri: str) -> None:
        """Remove a resource or template by its URI (template) string."""
        if uri not in self._resources and uri not in self._templates:
            raise KeyError(f"no resource or template {uri!r}")
        _compose.remove(self, "resource" if uri in self._resources else "resource template", uri)
        self._changed("resources")

    @property
    def resources(self) -> Mapping[str, Resource]:
        """Static resources by URI, in registration order (a read-only view)."""
        return self._resources_view

    @property
    def resource_templates(self) -> Mapping[str, ResourceTemplate]:
        """Resource templates by URI template, in registration order (a read-only view)."""
        return self._templates_view

    # ------------------------------------------------------------------------ prompts

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(self, fn: None = None, /, **options: Unpack[PromptOptions]) -> Callable[[F], F]: ...

    def prompt(
        self, fn: F | None = None, /, **options: Unpack[PromptOptions]
    ) -> F | Callable[[F], F]:
        """Register a function as a prompt; ``@app.prompt`` and ``@app.prompt(...)`` work."""
        register = _registrar(lambda func: self.add_prompt(func, **options))
        return register if fn is None else register(fn)

    def add_prompt(self, fn: Callable[..., Any], /, **options: Unpack[PromptOptions]) -> Prompt:
        """Register ``fn`` as a prompt and return its definition."""
        from mcpkit.prompts import Prompt

        prompt = Prompt(fn, **options)
        self._add_unique(self._prompts, prompt.name, prompt, "prompt")
        self._changed("prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        if name not in self._prompts:
            raise KeyError(f"no prompt named {name!r}")
        _compose.remove(self, "prompt", name)
        self._changed("prompts")

    @property
    def prompts(self) -> Mapping[str, Prompt]:
        """The registered prompts by name, in registration order (a read-only view)."""
        return self._prompts_view

    def completion(self, fn: F) -> F:
        """Register the app-level completion handler.

        ``fn(ref, argument, value, context_arguments)`` returns a list of strings; it answers
        every ``completion/complete`` that no per-argument completer handles.
        """
        self.completer = fn
        self._changed("capabilities")  # may add `completions`
        return fn

    def _add_unique(
        self, registry: dict[str, Any], key: str, item: Definition, what: str, hint: str = ""
    ) -> None:
        _compose.admit(self, what, key, item, hint)  # here, and in the apps including this one
        if self.settings_spec is not None and not _compose.is_view(item):
            item.settings_type = self.settings_spec.cls  # such a parameter is injected
        _compose.put(self, what, key, item)

    def remove_tool(self, name: str) -> None:
        """Remove a tool (clients that listen are told the list changed)."""
        if name not in self._tools:
            raise KeyError(f"no tool named {name!r}")
        _compose.remove(self, "tool", name)
        self._changed("tools")

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools by name, in registration order (a read-only view)."""
        return self._tools_view

    # ------------------------------------------------------------------ enable/disable

    def disable(self, *, name: str | None = None, tags: Iterable[str] | None = None) -> None:
        """Hide what is named ``name`` (a tool's or prompt's name, a resource's name or URI, a
        template's name or URI template) or carries one of ``tags`` from lists and calls (a
        call answers as for an unknown one). The latest enable/disable naming a definition or
        one of its tags decides, for definitions added later too; clients hear list_changed."""
        self._switch(False, name, tags)

    def enable(self, *, name: str | None = None, tags: Iterable[str] | None = None) -> None:
        """Undo :meth:`disable` for ``name`` and ``tags`` (same matching, latest call wins)."""
        self._switch(True, name, tags)

    def _switch(self, enabled: bool, name: str | None, tags: Iterable[str] | None) -> None:
        self._switched(self.switches.switch(enabled, name, tags, self.definitions()))

    def _switched(self, changed: set[Any]) -> None:
        _compose.refresh_includers(self)  # their views of what changed here (heard through us)
        kinds = {definition.listed_in for definition in changed}
        for kind in ("tools", "resources", "prompts"):
            if kind in kinds:
                self._changed(kind)

    # --------------------------------------------------------------------- middleware

    def middleware(self, fn: M, /) -> M:
        """Register ``async def fn(call, call_next)`` to run around every request (see
        :mod:`mcpkit.middleware`); the first registered is the outermost. Returns ``fn``."""
        call = getattr(fn, "__call__", None)  # noqa: B004 (a callable object's async __call__)
        if not (inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)):
            raise DefinitionError(
                f"middleware {getattr(fn, '__qualname__', fn)!r} must be an async function "
                "taking (call, call_next)"
            )
        if self._includers:
            raise DefinitionError(f"app {self.name!r} is included in another app; {_NO_MW}")
        self.middleware_chain = (*self.middleware_chain, fn)
        return fn

    # ------------------------------------------------------------------------ include

    def include(self, other: App, /, *, prefix: str | None, uri_prefix: str | None = None) -> None:
        """Serve ``other``'s definitions from this app too: tools and prompts as
        ``{prefix}_{name}`` (``prefix=None`` keeps the names), resources and templates at their
        URIs, or with ``uri_prefix="p"`` at ``scheme://p/...``. Later changes to ``other``
        show here (clients hear ``list_changed``); a clash, now or later, is a
        :class:`DefinitionError` naming both. ``other``'s tools see its own lifespan's state;
        its lifespan starts before this app's. See ``docs/composition.md``."""
        _compose.include(self, other, prefix, uri_prefix)

    # ------------------------------------------------------------------------ compile

    def compile(self) -> None:
        """Build every definition now; raises the first :class:`DefinitionError`."""
        for item in self.definitions():
            item.compile()

    def definitions(self) -> list[Definition]:
        """Every tool, resource, template and prompt, in that order."""
        return [
            *self._tools.values(),
            *self._resources.values(),
            *self._templates.values(),
            *self._prompts.values(),
        ]

    # -------------------------------------------------------------------------- serve

    def run(self, transport: Literal["stdio"] = "stdio") -> None:
        """Serve this app over stdio, as ``mcpkit run`` does (blocks until stdin closes).

        Only protocol messages reach stdout; a one-line note on stderr says what is served.
        For HTTP use ``mcpkit run --transport http`` or serve :meth:`asgi` with any ASGI server.
        """
        if transport != "stdio":
            raise ValueError("App.run() serves stdio; for HTTP serve app.asgi() with uvicorn")
        from mcpkit.transports.stdio import run_stdio

        if self.settings_spec is not None:
            self.settings_spec.current_or_exit()  # validated before serving: invalid exits 2
        sys.stderr.write(
            f"mcpkit: serving {self.summary} over stdio; waiting for a client on stdin\n"
        )
        run_stdio(self)

    @property
    def summary(self) -> str:
        """One line for humans: ``'name' version (N tools)``."""
        return f"{self.name!r} {self.version} ({len(self._tools)} tools)"

    def asgi(
        self,
        path: str = "/mcp",
        *,
        stateless: bool = False,
        json_response: bool = False,
        allowed_origins: Iterable[str] | None = None,
        allowed_hosts: Iterable[str] | None = None,
        max_body_bytes: int = 16 * 1024 * 1024,
        auth: BearerAuth | Verifier | None = None,
        max_sessions: int = 10_000,
        session_idle_seconds: float = 3600.0,
        owns_process: bool = False,
    ) -> HttpApp:
        """This app as a Streamable HTTP ASGI application, to serve with any ASGI server or mount
        in Starlette/FastAPI: ``mcpkit.transports.http.HttpApp``, whose docstring says what each
        option does (and ``docs/http.md``)."""
        from mcpkit.transports.http import HttpApp

        return HttpApp(
            self,
            path,
            stateless=stateless,
            json_response=json_response,
            allowed_origins=allowed_origins,
            allowed_hosts=allowed_hosts,
            max_body_bytes=max_body_bytes,
            auth=auth,
            max_sessions=max_sessions,
            session_idle_seconds=session_idle_seconds,
            owns_process=owns_process,
        )


def _registrar(add: Callable[[Callable[..., Any]], object]) -> Callable[[F], F]:
    """The decorator ``@app.tool(...)`` and its siblings return: ``add(fn)``, then ``fn``."""

    def register(fn: F) -> F:
        add(fn)
        return fn

    return register


_NO_MW = "its middleware would not run (register middleware on the including app)"


def _settings(settings: Any, prefix: str | None, name: str) -> SettingsSpec:
    """``App(settings=...)``'s spec; :mod:`mcpkit.settings` loads only for an app that has one."""
    from mcpkit.settings import SettingsSpec

    return SettingsSpec(settings, prefix, name)
