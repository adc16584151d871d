"""Serving a TARGET over stdio, without click: what ``mcpkit run TARGET`` does.

``mcpkit run TARGET`` is how MCP clients start a server, and they wait for it: the plain form
(exactly ``run`` and a TARGET) is served from here before click is imported, ~20 ms sooner.
Any other form goes through the click command in :mod:`mcpkit.cli.run`, which calls the same
:func:`run_target`, so both behave alike.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from mcpkit import _collector
from mcpkit._compose import included_apps
from mcpkit._envfile import EnvFileError, pair, read_env_file
from mcpkit.app import App
from mcpkit.cli.loader import TargetError, load_app
from mcpkit.exceptions import SettingsError

__all__ = ["LOG_FORMAT", "configure", "load_or_report", "run_target"]

LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def load_or_report(target: str) -> App | None:
    """The App ``target`` names, or ``None`` after one line on stderr saying why not."""
    try:
        return load_app(target)
    except TargetError as exc:
        print(f"mcpkit run: error: {exc}", file=sys.stderr, flush=True)
        return None


def configure(
    app: App, env_file: str | None = None, sets: Sequence[str] = (), command: str = "run"
) -> bool:
    """Validate the App's settings from ``env_file``, the environment and ``--set`` pairs (and
    those of the apps it includes, from the environment); ``False`` after the problems on
    stderr (an App without settings takes neither option)."""
    try:
        for part in included_apps(app):  # an included app's tools read its own settings
            if part.settings_spec is not None:
                part.settings_spec.current()
        if app.settings_spec is None:
            if env_file is not None or sets:
                raise SettingsError(app.name, [f"  --env-file and --set: {_NO_SETTINGS}"])
            return True
        values = dict(pair(item, "--set") for item in sets)
        app.load_settings(values, env_file=env_file)
    except (SettingsError, EnvFileError) as exc:
        print(f"mcpkit {command}: error: {exc}", file=sys.stderr, flush=True)
        return False
    return True


def export_settings(app: App, env_file: str | None, sets: Sequence[str]) -> None:
    """Put ``--env-file`` (below the environment) and ``--set`` (over it) in this process's
    environment as ``PREFIX_FIELD`` variables, so each worker process reads the same values."""
    spec = app.settings_spec
    if spec is None:
        return
    if env_file is not None:
        for key, (value, _) in read_env_file(env_file).items():
            os.environ.setdefault(key, value)
    names = {setting.name: setting.env for setting in spec.fields}
    for item in sets:
        name, value = pair(item, "--set")
        os.environ[names[name]] = value


_NO_SETTINGS = "this App declares no settings (App(..., settings=MySettings))"


def run_target(
    target: str, log_level: str = "warning", env_file: str | None = None, sets: Sequence[str] = ()
) -> int:
    """Load the App that ``target`` names and serve it on stdin/stdout; the exit code.

    A TARGET that names no App, or whose module defines a tool, resource or prompt wrongly, is
    one line on stderr and exit code 2 (a usage error), and so are settings that fail
    validation (every problem listed, before any protocol message); any other error raised by
    the user's module while it imports propagates with its traceback.
    """
    logging.basicConfig(level=log_level.upper(), format=LOG_FORMAT)
    from mcpkit.transports.stdio import protect_stdout, run_stdio

    # Before the user's module runs: its import-time print()s must not reach the protocol.
    out = protect_stdout()
    _collector.pause()  # this process only serves: the collector waits for the warm-up
    try:
        app = load_or_report(target)
        if app is None or not configure(app, env_file, sets):
            return 2
        print(
            f"mcpkit: serving {app.summary} over stdio; waiting for a client on stdin",
            file=sys.stderr,
            flush=True,
        )
        run_stdio(app, stdout=out)
    finally:
        _collector.resume()
    return 0
