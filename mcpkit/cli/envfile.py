"""The environment an installed server gets: ``--env-file`` lines, then ``--env`` pairs.

The file's format is :mod:`mcpkit._envfile`'s (``KEY=VALUE`` lines, ``#`` comments, optional
``export`` and quotes). ``--env`` wins over the file.
"""

from __future__ import annotations

from mcpkit._envfile import EnvFileError, read_env_file
from mcpkit._envfile import pair as _pair
from mcpkit.cli.configfile import ConfigError

__all__ = ["environment"]


def environment(env_file: str | None, pairs: tuple[str, ...]) -> dict[str, str]:
    """The variables to set, in the order given, or a ConfigError naming the bad line."""
    env: dict[str, str] = {}
    try:
        if env_file is not None:
            env |= {key: value for key, (value, _) in read_env_file(env_file).items()}
        for item in pairs:
            key, value = _pair(item, "--env")
            env[key] = value
    except EnvFileError as exc:
        raise ConfigError(str(exc)) from None
    return env
