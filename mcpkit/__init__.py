"""mcpkit: typed Python functions become MCP tools.

::

    from mcpkit import App

    app = App("demo", version="1.0.0")

    @app.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

The public API is what ``__all__`` lists; everything else is private.
"""

from mcpkit._version import __version__
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
    "Text",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "UrlElicitationRequired",
    "__version__",
]
