"""Test an App in memory, over the real wire format: :class:`Client`.

::

    from mcpkit.testing import Client

    def test_add():
        with Client(app) as client:
            result = client.call_tool("add", {"a": 1, "b": 2})
            assert result.data == 3            # the value, without the {"result": ...} wrapper
            assert result["structuredContent"] == {"result": 3}   # the wire dict, as sent
"""

from mcpkit.testing.client import Client, RPCError, SyncClient
from mcpkit.testing.result import CallToolResult

__all__ = ["CallToolResult", "Client", "RPCError", "SyncClient"]
