"""pytest plugin (entry point ``pytest11``): the ``mcp_client`` fixture.

::

    def test_add(mcp_client):
        client = mcp_client(app)                       # initialized, closed after the test
        assert client.call_tool("add", {"a": 1, "b": 2}).data == 3
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcpkit.app import App
from mcpkit.testing.client import Client, SyncClient

__all__ = ["mcp_client"]


@pytest.fixture
def mcp_client() -> Iterator[Callable[..., SyncClient]]:
    """A factory: ``mcp_client(app, protocol_version=...)`` -> a connected sync client."""
    opened: list[Client] = []

    def connect(app: App, **options: Any) -> SyncClient:
        client = Client(app, **options)
        opened.append(client)
        return client.__enter__()

    yield connect
    for client in reversed(opened):
        client.__exit__(None, None, None)
