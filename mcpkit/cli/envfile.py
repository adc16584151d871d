"""The environment an installed server gets: ``--env-file`` lines, then ``--env`` pairs.

An env file holds ``KEY=VALUE`` lines; blank lines and ``#`` comments are skipped, a leading
``export`` is allowed, and a value wrapped in matching single or double quotes loses them
(nothing else is interpreted: no escapes, no ``$VAR`` expansion). ``--env`` wins over the file.
"""

from __future__ import annotations

from pathlib import Path

from mcpkit.cli.configfile import ConfigError

__all__ = ["environment", "pair"]


def environment(env_file: str | None, pairs: tuple[str, ...]) -> dict[str, str]:
    """The variables to set, in the order given, or a ConfigError naming the bad line."""
    env: dict[str, str] = {}
    if env_file is not None:
        env |= _read(env_file)
    for item in pairs:
        key, value = pair(item, "--env")
        env[key] = value
    return env


def pair(line: str, where: str) -> tuple[str, str]:
    """``KEY=VALUE`` split at the first ``=``, or a ConfigError saying where it came from."""
    key, sep, value = line.partition("=")
    key = key.strip()
    if not sep or not key or any(c.isspace() for c in key):
        raise ConfigError(f"{where}: {line!r} is not KEY=VALUE")
    return key, value


def _read(path: str) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read --env-file {path}: {exc}") from None
    env: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, value = pair(line.removeprefix("export "), f"{path}, line {number}")
        env[key] = _unquoted(value.strip())
    return env


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
