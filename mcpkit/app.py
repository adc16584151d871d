"""``App``: the registry of an MCP server's tools, and the decorators that fill it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, overload

from mcpkit.exceptions import DefinitionError
from mcpkit.tools import Tool, ToolAnnotations

__all__ = ["App"]

F = TypeVar("F", bound=Callable[..., Any])
Listener = Callable[[str], None]


class App:
    """An MCP server's definitions and identity.

    ``version`` is your app's own version (it is sent as ``serverInfo.version``).
    ``invalid_arguments`` forces how argument failures travel for every protocol version:
    ``"protocol"`` (a JSON-RPC ``-32602`` error) or ``"result"`` (``isError: true``); by default
    it follows the client's version. ``mask_errors=False`` shows exception text to clients
    (for development). ``page_size`` sets list pagination; ``ttl_ms`` and ``cache_scope`` are
    the caching hints of 2026-07-28 list results.
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
        mask_errors: bool = True,
        invalid_arguments: Literal["protocol", "result"] | None = None,
        page_size: int = 100,
        ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "public",
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.mask_errors = mask_errors
        self.invalid_arguments = invalid_arguments
        self.page_size = page_size
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        self._tools: dict[str, Tool] = {}
        self._listeners: list[Listener] = []

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

    # -------------------------------------------------------------------------- tools

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
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
    ) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a function as a tool; ``@app.tool`` and ``@app.tool(...)`` both work.

        The function is returned unchanged. Options are those of :meth:`add_tool`.
        """
        if fn is not None:
            self.add_tool(fn)
            return fn

        def register(func: F) -> F:
            self.add_tool(func, **options)
            return func

        return register

    def add_tool(self, fn: Callable[..., Any], /, **options: Any) -> Tool:
        """Register ``fn`` as a tool and return its definition.

        Options: ``name``, ``title``, ``description``, ``annotations``, ``icons``, ``meta``,
        ``input_schema``, ``output_schema``, ``structured_output``, ``text_mirror``, and
        ``inline`` (run a sync function on the event loop; only for code that never blocks).
        """
        tool = Tool(fn, **options)
        if tool.name in self._tools:
            raise DefinitionError(f"tool {tool.name!r} is defined twice; pass name=... to one")
        self._tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        """Remove a tool (clients that listen are told the list changed)."""
        try:
            del self._tools[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r}") from None
        self._changed("tools")

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools by name, in registration order (read-only view)."""
        return self._tools

    # ------------------------------------------------------------------------ compile

    def compile(self) -> None:
        """Build every definition now; raises the first :class:`DefinitionError`."""
        for tool in list(self._tools.values()):
            tool.compile()

    # ----------------------------------------------------------------------- changes

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(kind)`` when tools (``"tools"``) change; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _changed(self, kind: str) -> None:
        for listener in list(self._listeners):
            listener(kind)
