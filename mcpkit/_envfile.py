"""``KEY=VALUE`` files (``.env``): the one small parser ``mcpkit install`` and settings share.

Blank lines and ``#`` comments are skipped, a leading ``export`` is allowed, and a value wrapped
in matching single or double quotes loses them. Nothing else is interpreted: no escapes, no
``$VAR`` expansion.
"""

from __future__ import annotations

__all__ = ["EnvFileError", "pair", "read_env_file"]


class EnvFileError(ValueError):
    """A file that cannot be read, or a line that is not ``KEY=VALUE`` (message for the user)."""


def pair(line: str, where: str) -> tuple[str, str]:
    """``KEY=VALUE`` split at the first ``=``, or an EnvFileError saying where it came from."""
    key, sep, value = line.partition("=")
    key = key.strip()
    if not sep or not key or any(c.isspace() for c in key):
        raise EnvFileError(f"{where}: {line!r} is not KEY=VALUE")
    return key, value


def read_env_file(path: str) -> dict[str, tuple[str, int]]:
    """Each variable of the file at ``path``: its value and its line number (the last wins)."""
    try:
        with open(path, encoding="utf-8") as file:  # as Path(path).read_text() would
            text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvFileError(f"cannot read --env-file {path}: {exc}") from None
    found: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, value = pair(line.removeprefix("export "), f"{path}, line {number}")
        found[key] = (_unquoted(value.strip()), number)
    return found


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
