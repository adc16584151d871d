"""MCP protocol versions and the rules that differ between them (one place for era facts)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ALL_VERSIONS",
    "BATCH_VERSION",
    "HANDSHAKE_VERSIONS",
    "HTTP_DEFAULT_VERSION",
    "LATEST_HANDSHAKE",
    "STATELESS_VERSIONS",
    "arguments_fail_as_results",
    "at_least",
    "elicitation_modes",
    "has_batches",
    "is_stateless",
    "is_stateless_version",
    "negotiate",
    "progress_messages",
    "sse_priming",
    "structured_output",
    "url_elicitation_ids",
]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Versions opened by ``initialize``, oldest first."""

STATELESS_VERSIONS = ("2026-07-28",)
"""Versions carried in every request's ``_meta`` (no handshake)."""

ALL_VERSIONS = HANDSHAKE_VERSIONS + STATELESS_VERSIONS
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
BATCH_VERSION = "2025-03-26"
"""The only version with JSON-RPC batches."""
HTTP_DEFAULT_VERSION = "2025-03-26"
"""The version of a handshake-era HTTP request without a version header or a session."""

_RANK = {version: rank for rank, version in enumerate(ALL_VERSIONS)}

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
    """Whether ``version`` is ``minimum`` or later (in :data:`ALL_VERSIONS`' order; a version
    this server does not know is older than every known one)."""
    return _RANK.get(version, -1) >= _RANK[minimum]


# Named gates: each rule that differs between versions, decided here and only here.


def progress_messages(version: str) -> bool:
    """Progress notifications carry a ``message``."""
    return at_least(version, "2025-03-26")


def structured_output(version: str) -> bool:
    """Tool results carry ``structuredContent`` without a mirrored text block."""
    return version in _STRUCTURED  # (at_least, computed once: read by every tools/call)


_STRUCTURED = frozenset(version for version in ALL_VERSIONS if at_least(version, "2025-06-18"))


def arguments_fail_as_results(version: str) -> bool:
    """Invalid tool arguments answer an ``isError`` result, not ``-32602``."""
    return at_least(version, "2025-11-25")


def elicitation_modes(version: str) -> bool:
    """Elicitation requests carry ``mode`` and titled enums/defaults (2025-11-25 forms)."""
    return at_least(version, "2025-11-25")


def url_elicitation_ids(version: str) -> bool:
    """URL elicitations carry an ``elicitationId``, and ``notifications/elicitation/complete``
    and the ``-32042`` error exist (2025-11-25 only: 2026-07-28 removed all three)."""
    return at_least(version, "2025-11-25") and not is_stateless_version(version)


def sse_priming(version: str) -> bool:
    """An SSE stream starts with a priming event (an id, empty data)."""
    return at_least(version, "2025-11-25")


def has_batches(version: str | None) -> bool:
    """JSON-RPC batches are allowed (only in :data:`BATCH_VERSION`)."""
    return version == BATCH_VERSION


def is_stateless_version(version: object) -> bool:
    """Whether a version header or ``_meta`` version names the stateless era."""
    return version in STATELESS_VERSIONS


def is_stateless(method: str, params: dict[str, Any]) -> bool:
    """Whether a request is stateless-era: its ``_meta`` names a version, or its method exists
    only in that era; otherwise it belongs to the handshake session."""
    if method in _STATELESS_METHODS:
        return True
    meta = params.get("_meta")
    return isinstance(meta, dict) and META_VERSION in meta
