"""Shared set-up for the interop tests with the official ``mcp`` client over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30.0


def stdio_params(target: str) -> StdioServerParameters:
    """``python -m mcpkit run TARGET`` from the repository root (the client passes no env)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcpkit", "run", target],
        env={
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        },
        cwd=str(ROOT),
    )


def run(scenario: Any) -> Any:
    """Run an async scenario to completion within ``TIMEOUT`` seconds."""

    async def bounded() -> Any:
        with anyio.fail_after(TIMEOUT):
            return await scenario()

    return anyio.run(bounded)
