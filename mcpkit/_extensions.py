"""Extension identifiers (SEP-2133) and the settings a server declares for them.

An extension id is a ``_meta`` key name with its prefix made mandatory: dot-separated labels
(each starting with a letter and ending with a letter or digit, hyphens inside), a slash, then a
name that starts and ends with a letter or digit (``-``, ``_`` and ``.`` inside), e.g.
``com.example/thing``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["TASKS", "UI", "extension_settings", "is_extension_id"]

TASKS = "io.modelcontextprotocol/tasks"
"""The tasks extension (SEP-2663); mcpkit declares it itself when a tool supports tasks."""

UI = "io.modelcontextprotocol/ui"
"""MCP Apps (SEP-1865); mcpkit declares it (``{}`` unless ``extensions=`` sets it) when the
app has a view (``@app.ui``)."""

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_EXTENSION_ID = rf"{_LABEL}(?:\.{_LABEL})*/{_NAME}"  # compiled by its first use (re's cache)


def is_extension_id(value: object) -> bool:
    """Whether ``value`` is a well-formed extension identifier."""
    return isinstance(value, str) and re.fullmatch(_EXTENSION_ID, value) is not None


def extension_settings(extensions: object) -> Mapping[str, dict[str, Any]]:
    """``ServerOptions.extensions`` checked and copied (read-only); raises ``ValueError``."""
    if not isinstance(extensions, Mapping):
        raise ValueError(f"extensions must be a dict of id -> settings dict, not {extensions!r}")
    checked: dict[str, dict[str, Any]] = {}
    for key, settings in extensions.items():
        if not is_extension_id(key):
            raise ValueError(
                f"extension id {key!r} is not of the form 'com.example/name' (a reversed "
                "domain, a slash, a name of letters, digits, '-', '_' or '.')"
            )
        if key == TASKS:
            raise ValueError(
                f"{TASKS!r} is declared by mcpkit itself when a tool has task='optional' "
                "or task='required'; do not list it in extensions"
            )
        if not isinstance(settings, dict):
            raise ValueError(f"extension {key!r}: settings must be a dict ({{}} for none)")
        checked[key] = dict(settings)
    return MappingProxyType(checked)
