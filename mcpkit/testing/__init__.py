"""Test an App in memory, over the real wire format: :class:`Client`.

::

    from mcpkit.testing import Client

    def test_add():
        with Client(app) as client:
            assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
"""

from mcpkit.testing.client import Client, RPCError, SyncClient

__all__ = ["Client", "RPCError", "SyncClient"]
