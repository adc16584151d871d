"""MCP protocol versions and the rules that differ between them (one place for era facts)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ALL_VERSIONS",
    "BATCH_VERSION",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "STATELESS_VERSIONS",
    "at_least",
    "is_stateless",
    "negotiate",
]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Versions opened by ``initialize``, oldest first."""

STATELESS_VERSIONS = ("2026-07-28",)
"""Versions carried in every request's ``_meta`` (no handshake)."""

ALL_VERSIONS = HANDSHAKE_VERSIONS + STATELESS_VERSIONS
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
BATCH_VERSION = "2025-03-26"
"""The only version with JSON-RPC batches."""

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"

_STATELESS_METHODS = frozenset({"server/discover", "subscriptions/listen"})


def negotiate(requested: object) -> str:
    """The version ``initialize`` answers: the requested one if it is a handshake version,
    else the latest handshake version (never a stateless one: clients reject that)."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE


def at_least(version: str, minimum: str) -> bool:
    """Versions are dates (``YYYY-MM-DD``), so they order as strings."""
    return version >= minimum


def is_stateless(method: str, params: dict[str, Any]) -> bool:
    """Whether a request is stateless-era: its ``_meta`` names a version, or its method exists
    only in that era; otherwise it belongs to the handshake session."""
    if method in _STATELESS_METHODS:
        return True
    meta = params.get("_meta")
    return isinstance(meta, dict) and META_VERSION in meta
