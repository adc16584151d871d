"""A client's config file: read it, edit its server table (JSON here), write it with a ``.bak``.

An edit is computed in full before anything is written, so a file mcpkit cannot read (not
UTF-8, not JSON, not an object where one belongs) raises :class:`ConfigError` and stays as it
was. A write copies the previous file to ``PATH.bak`` first, then replaces the file in one step
(a temporary file renamed over it), so a crash never leaves half a config behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ConfigError", "json_add", "json_remove", "json_servers", "read", "save"]


class ConfigError(Exception):
    """What went wrong, written for the command line, and the exit code it deserves."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def read(path: Path) -> str | None:
    """The file's text, or None when it does not exist yet."""
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; nothing written") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None


def save(path: Path, text: str, existed: bool) -> Path | None:
    """Write ``text`` to ``path`` (keeping the old file as ``PATH.bak``); the backup's path."""
    backup = path.with_name(path.name + ".bak") if existed else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if backup is not None:
            shutil.copy2(path, backup)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
        if backup is not None:
            shutil.copymode(backup, temporary)
        os.replace(temporary, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None
    return backup


def json_servers(text: str, key: str, where: str) -> dict[str, Any]:
    """The server table ``key`` of a JSON config ({} when absent), or a ConfigError."""
    return _servers(_document(text, where), key, where)


def json_add(text: str, key: str, name: str, value: Mapping[str, Any], where: str) -> str:
    """``text`` with server ``name`` set to ``value`` in table ``key``, everything else kept."""
    document = _document(text, where)
    _servers(document, key, where)
    document.setdefault(key, {})[name] = dict(value)
    return _dumps(document)


def json_remove(text: str, key: str, name: str, where: str) -> str:
    """``text`` without server ``name`` in table ``key``."""
    document = _document(text, where)
    del _servers(document, key, where)[name]
    return _dumps(document)


def _document(text: str, where: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where} is not valid JSON ({exc.msg}, line {exc.lineno}, column {exc.colno}; "
            "comments and trailing commas are not JSON); nothing written"
        ) from None
    if not isinstance(document, dict):
        raise ConfigError(f"{where} does not hold a JSON object; nothing written")
    return document


def _servers(document: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    servers = document.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f'{where}: "{key}" is not a JSON object; nothing written')
    return servers


def _dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
