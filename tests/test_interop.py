"""Interop with the official ``mcp`` 2.3.0 client over a real stdio subprocess.

``ClientSession`` speaks the ``initialize`` handshake; ``mcp.Client`` in auto mode probes
``server/discover`` first and lands in the stateless 2026-07-28 era.
"""

from __future__ import annotations

from typing import Any

import pytest
from interop_support import run, stdio_params
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

BUILD = {"project_dir": "./app", "configuration": "Release", "arch": "arm64"}


def params() -> StdioServerParameters:
    return stdio_params("examples/build_app.py:app")


def test_client_session_handshake_list_and_call() -> None:
    async def scenario() -> dict[str, Any]:
        async with stdio_client(params()) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            built = await session.call_tool("build-app", BUILD)
            with pytest.raises(MCPError) as unknown:
                await session.call_tool("no-such-tool", {})
            # at 2025-11-25 argument failures are isError results, not protocol errors
            invalid = await session.call_tool("build-app", {"project_dir": "./app", "arch": "ARM"})
            return {
                "version": init.protocol_version,
                "server": (init.server_info.name, init.server_info.version),
                "tools": [tool.name for tool in tools.tools],
                "schema": tools.tools[0].input_schema,
                "built": (built.is_error, built.structured_content),
                "unknown": (unknown.value.code, unknown.value.message),
                "invalid": invalid.is_error,
            }

    got = run(scenario)
    assert got["version"] == "2025-11-25"
    assert got["server"] == ("builder", "1.0.0")
    assert got["tools"] == ["build-app", "lint-check"]
    assert set(got["schema"]["required"]) == {"project_dir", "arch"}
    assert got["built"] == (False, {"exit_code": 0, "output": "app-release-arm64.pkg"})
    assert got["unknown"] == (-32602, "Unknown tool: no-such-tool")
    assert got["invalid"] is True


def test_client_auto_mode_lands_in_the_stateless_era() -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(params(), mode="auto", cache=None) as client:
            tools = await client.list_tools()
            built = await client.call_tool("build-app", BUILD)
            bad = await client.call_tool("build-app", {"project_dir": "./app", "arch": "ARM"})
            lint = await client.call_tool("lint-check", {})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no-such-tool", {})
            return {
                "version": client.protocol_version,
                "server": client.server_info,
                "tools": [tool.name for tool in tools.tools],
                "built": (built.is_error, built.structured_content),
                "bad": (bad.is_error, bad.content[0].text if bad.content else ""),  # type: ignore[union-attr]
                "lint": lint.structured_content,
                "unknown": unknown.value.code,
            }

    got = run(scenario)
    assert got["version"] == "2026-07-28"
    assert (got["server"].name, got["server"].version) == ("builder", "1.0.0")
    assert got["tools"] == ["build-app", "lint-check"]
    assert got["built"] == (False, {"exit_code": 0, "output": "app-release-arm64.pkg"})
    assert got["bad"][0] is True
    assert "arch" in got["bad"][1]
    assert "ARM" in got["bad"][1]
    assert got["lint"] == {"exit_code": 0, "output": "no problems found"}
    assert got["unknown"] == -32602


def test_client_legacy_mode() -> None:
    async def scenario() -> tuple[str | None, list[str], bool | None]:
        async with Client(params(), mode="legacy", cache=None) as client:
            tools = await client.list_tools()
            built = await client.call_tool("build-app", BUILD)
            return client.protocol_version, [tool.name for tool in tools.tools], built.is_error

    assert run(scenario) == ("2025-11-25", ["build-app", "lint-check"], False)
