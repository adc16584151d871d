"""Shared helpers for the server-feature tests (resources, prompts, asking the client, ...)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from mcpkit.testing import Client, RPCError

T = TypeVar("T")

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
ERAS = (HANDSHAKE, STATELESS)
TIMEOUT = 10.0

era = pytest.mark.parametrize("version", ERAS)
"""Run a test once per protocol era (the handshake era and the stateless era)."""


def run(scenario: Callable[[], Awaitable[T]], timeout: float = TIMEOUT) -> T:
    """Run an async scenario with a bounded timeout."""

    async def bounded() -> T:
        return await asyncio.wait_for(scenario(), timeout)

    return asyncio.run(bounded())


async def rpc_error(call: Awaitable[Any]) -> RPCError:
    """The :class:`RPCError` a request fails with (fails the test if it succeeds)."""
    with pytest.raises(RPCError) as caught:
        await call
    return caught.value


async def settle() -> None:
    """Let notifications scheduled with ``call_soon_threadsafe`` reach the client."""
    for _ in range(5):
        await asyncio.sleep(0)


def accept(content: dict[str, Any]) -> Callable[[Any], dict[str, Any]]:
    """An elicitation handler that accepts with ``content``."""
    return lambda params: {"action": "accept", "content": content}


def text_of(result: dict[str, Any]) -> str:
    """The first text block of a tool result."""
    text: str = result["content"][0]["text"]
    return text


__all__ = [
    "ERAS",
    "HANDSHAKE",
    "STATELESS",
    "Client",
    "RPCError",
    "accept",
    "era",
    "rpc_error",
    "run",
    "settle",
    "text_of",
]
