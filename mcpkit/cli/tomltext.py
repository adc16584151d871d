"""Add or remove one ``[mcp_servers.NAME]`` table of a TOML text (Codex's ``config.toml``).

The text is edited as text, so the user's comments, order and spacing survive: a new server is
a table appended at the end, and removing one deletes exactly the lines of its tables
(``[mcp_servers.NAME]`` and ``[mcp_servers.NAME.*]``, with the blank line before them) and
keeps every other byte. The standard library's ``tomllib`` (Python 3.11+) reads the text before
and after each edit, and an edit whose result does not parse to exactly the expected document
(a server defined inline or with dotted keys, a table header inside a multi-line string) is
refused: nothing is written. No TOML writer is needed, so this adds no dependency.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from mcpkit.cli.configfile import ConfigError

__all__ = ["add", "remove", "servers", "table"]

KEY = "mcp_servers"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def add(text: str, name: str, value: Mapping[str, Any], where: str) -> str:
    """``text`` with the table of server ``name`` appended (the name must be free)."""
    expected = _parse(text, where)
    expected.setdefault(KEY, {})[name] = dict(value)
    if text and not text.endswith("\n"):
        text += "\n"
    edited = text + ("\n" if text else "") + table(name, value)
    _check(edited, expected, where, f"append [{KEY}.{_key(name)}] to")
    return edited


def remove(text: str, name: str, where: str) -> str:
    """``text`` without the tables of server ``name``, every other line kept as it is."""
    expected = _parse(text, where)
    del expected[KEY][name]
    lines = text.splitlines(keepends=True)
    gone: set[int] = set()
    for start, end in _regions(lines, name):
        gone.update(range(start, end))
        if start > 0 and not lines[start - 1].strip():
            gone.add(start - 1)
    edited = "".join(line for i, line in enumerate(lines) if i not in gone)
    if not expected[KEY] and KEY not in _parse(edited, where):
        del expected[KEY]
    _check(edited, expected, where, f"remove {name!r} from")
    return edited


def servers(text: str, where: str) -> dict[str, Any]:
    """The ``mcp_servers`` table of a TOML text ({} when absent), or a ConfigError."""
    found = _parse(text, where).get(KEY, {})
    if not isinstance(found, dict):
        raise ConfigError(f"{where}: {KEY} is not a table; nothing written")
    return found


def table(name: str, value: Mapping[str, Any]) -> str:
    """The TOML table of one server: ``[mcp_servers.NAME]`` and one line per field."""
    fields = "".join(f"{_key(k)} = {_value(v)}\n" for k, v in value.items())
    return f"[{KEY}.{_key(name)}]\n{fields}"


def _regions(lines: list[str], name: str) -> list[tuple[int, int]]:
    """(first, past last) line of each table of server ``name``, trailing comments left out."""
    headers = [(i, path) for i, line in enumerate(lines) if (path := _header(line)) is not None]
    regions = []
    for n, (start, path) in enumerate(headers):
        if path[:2] != [KEY, name]:
            continue
        end = headers[n + 1][0] if n + 1 < len(headers) else len(lines)
        while end > start + 1 and lines[end - 1].strip()[:1] in ("", "#"):
            end -= 1  # blank lines and comments before the next table belong to it
        regions.append((start, end))
    return regions


def _header(line: str) -> list[str] | None:
    """The key path of a table header line (``[a.b]``, ``[[a.b]]``), else None."""
    if not line.lstrip().startswith("["):
        return None
    try:
        node: Any = _loads(line)
    except _NotToml:
        return None  # a line of a multi-line array, not a header
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key, node = next(iter(node.items()))
        path.append(key)
        if isinstance(node, list) and node:
            node = node[-1]
    return path


class _NotToml(Exception):
    pass


def _loads(text: str) -> dict[str, Any]:
    """The document ``text`` holds, read by the standard library (Python 3.11+)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: no TOML reader without a dependency
        raise ConfigError(
            "editing a TOML config needs Python 3.11 or later (its tomllib); "
            "`mcpkit install --print codex TARGET` prints the table to add by hand"
        ) from None
    try:
        document: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _NotToml(str(exc)) from None
    return document


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        return _loads(text)
    except _NotToml as exc:
        raise ConfigError(f"{where} is not valid TOML ({exc}); nothing written") from None


def _check(edited: str, expected: dict[str, Any], where: str, action: str) -> None:
    try:
        result: dict[str, Any] | None = _loads(edited)
    except _NotToml:
        result = None
    if result != expected:
        raise ConfigError(
            f"cannot {action} {where} by editing its lines (mcp_servers is written there "
            "in a form mcpkit does not edit: inline or with dotted keys); edit it by hand; "
            "nothing written"
        )


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    pairs = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items())
    return "{ " + pairs + " }" if pairs else "{}"


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, plus DEL, which TOML wants escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
