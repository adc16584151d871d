"""mcpkit: typed Python functions become MCP tools.

::

    from mcpkit import App

    app = App("demo", version="1.0.0")

    @app.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

The public API is what ``__all__`` lists; everything else is private. Each name is imported
from its module when first asked for (``from mcpkit import App`` does), so ``import mcpkit``
alone loads nothing but the version: the console script pauses the garbage collector before
the rest loads (:mod:`mcpkit._collector`).
"""

from __future__ import annotations

import importlib
import typing

from mcpkit._version import __version__

if typing.TYPE_CHECKING:
    from mcpkit.app import App, ServerOptions
    from mcpkit.content import Audio, EmbeddedResource, Image, ResourceLink, Text
    from mcpkit.context import Context
    from mcpkit.exceptions import (
        ClientCapabilityError,
        DefinitionError,
        InvalidArguments,
        MCPKitError,
        ProtocolError,
        ResourceNotFound,
        SettingsError,
        ToolError,
        UrlElicitationRequired,
    )
    from mcpkit.middleware import Call
    from mcpkit.results import ToolResult
    from mcpkit.schema import Header
    from mcpkit.tools import Tool, ToolAnnotations

__all__ = [
    "App",
    "Audio",
    "Call",
    "ClientCapabilityError",
    "Context",
    "DefinitionError",
    "EmbeddedResource",
    "Header",
    "Image",
    "InvalidArguments",
    "MCPKitError",
    "ProtocolError",
    "ResourceLink",
    "ResourceNotFound",
    "ServerOptions",
    "SettingsError",
    "Text",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "UrlElicitationRequired",
    "__version__",
]

_HOMES = {
    "App": "mcpkit.app",
    "ServerOptions": "mcpkit.app",
    "Audio": "mcpkit.content",
    "EmbeddedResource": "mcpkit.content",
    "Image": "mcpkit.content",
    "ResourceLink": "mcpkit.content",
    "Text": "mcpkit.content",
    "Context": "mcpkit.context",
    "ClientCapabilityError": "mcpkit.exceptions",
    "DefinitionError": "mcpkit.exceptions",
    "InvalidArguments": "mcpkit.exceptions",
    "MCPKitError": "mcpkit.exceptions",
    "ProtocolError": "mcpkit.exceptions",
    "ResourceNotFound": "mcpkit.exceptions",
    "SettingsError": "mcpkit.exceptions",
    "ToolError": "mcpkit.exceptions",
    "UrlElicitationRequired": "mcpkit.exceptions",
    "Call": "mcpkit.middleware",
    "ToolResult": "mcpkit.results",
    "Header": "mcpkit.schema",
    "Tool": "mcpkit.tools",
    "ToolAnnotations": "mcpkit.tools",
}
"""Where each public name lives (the names of ``__all__`` but ``__version__``)."""


def __getattr__(name: str) -> typing.Any:
    """A public name, imported from its module on first use and kept here after it."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
