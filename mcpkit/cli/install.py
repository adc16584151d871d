"""``mcpkit install CLIENT TARGET`` and ``mcpkit uninstall CLIENT NAME``: a client's config.

The entry written starts the server the way this shell would: the absolute path of the running
interpreter and ``-m mcpkit run ABSOLUTE_TARGET``, so nothing depends on the client's PATH
(no ``uv``, no ``npx``) or on the directory it starts servers in.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from mcpkit._envfile import EnvFileError, pair
from mcpkit.app import App
from mcpkit.cli import tomltext
from mcpkit.cli._io import fail, load_compiled
from mcpkit.cli.clients import (
    CLIENTS,
    GENERIC,
    SCOPES,
    Client,
    LocationError,
    entry,
    location,
)
from mcpkit.cli.configfile import ConfigError, json_add, json_remove, json_servers, read, save
from mcpkit.cli.envfile import environment
from mcpkit.cli.loader import absolute_target
from mcpkit.exceptions import SettingsError

__all__ = ["install", "uninstall"]

_client_argument = click.argument("client", metavar="CLIENT")
_config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="The config file to edit, instead of the client's documented one.",
)
_scope_option = click.option(
    "--scope",
    type=click.Choice(SCOPES),
    help="user: the client's per-user file; project: the one in the current directory "
    "(default: project for claude-code, user for the others).",
)


@click.command()
@_client_argument
@click.argument("target")
@click.option("--name", help="The server's name in the client (default: the App's name).")
@click.option("--env", "pairs", multiple=True, metavar="KEY=VALUE", help="Set for the server.")
@click.option("--env-file", type=click.Path(dir_okay=False), help="KEY=VALUE lines to set.")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="FIELD=VALUE",
    help="A setting of the App, set as its PREFIX_FIELD variable. Repeatable.",
)
@click.option("--force", is_flag=True, help="Replace a server of the same name.")
@click.option("--print", "show", is_flag=True, help="Print the entry instead of writing it.")
@_config_option
@_scope_option
def install(
    client: str,
    target: str,
    name: str | None,
    pairs: tuple[str, ...],
    env_file: str | None,
    sets: tuple[str, ...],
    force: bool,
    show: bool,
    config_path: str | None,
    scope: str | None,
) -> None:
    """Add the App that TARGET names to CLIENT's MCP servers.

    CLIENT is claude-desktop, claude-code, cursor, vscode or codex; with --print, any name
    (an unknown one gets the common "mcpServers" JSON). The file is merged, never replaced:
    other servers stay, the previous file is kept as FILE.bak. An App with settings gets them
    as environment variables, checked as the server will check them when it starts.
    """
    kind = _client("install", client, known_only=not show)
    app = load_compiled("install", target)
    try:
        env = environment(env_file, pairs)
    except ConfigError as exc:
        fail("install", str(exc), exc.code)
    env = _with_settings(app, env, sets)
    name = name or app.name
    value = entry(
        kind, os.path.abspath(sys.executable), ["-m", "mcpkit", "run", absolute_target(target)], env
    )
    if show:
        click.echo(_snippet(kind, name, value), nl=False)
        return
    path = _path("install", client, scope, config_path)
    _edit("install", path, lambda text: _added(kind, text, name, value, force, str(path)))
    click.echo(f"installed {name!r} in {path} ({kind.title}); restart the client to load it")


@click.command()
@_client_argument
@click.argument("name")
@_config_option
@_scope_option
def uninstall(client: str, name: str, config_path: str | None, scope: str | None) -> None:
    """Remove server NAME from CLIENT's MCP servers (the previous file is kept as FILE.bak)."""
    kind = _client("uninstall", client, known_only=True)
    path = _path("uninstall", client, scope, config_path)
    _edit("uninstall", path, lambda text: _removed(kind, text, name, str(path)))
    click.echo(f"removed {name!r} from {path} ({kind.title})")


def _with_settings(app: App, env: dict[str, str], sets: tuple[str, ...]) -> dict[str, str]:
    """``env`` with each ``--set FIELD=VALUE`` as the field's ``PREFIX_FIELD`` variable; the
    settings are checked with this environment alone, the one the client starts the server in."""
    spec = app.settings_spec
    if spec is None:
        if sets:
            fail("install", "--set: this App declares no settings (App(..., settings=MySettings))")
        return env
    names = {setting.name: setting.env for setting in spec.fields}
    for item in sets:
        try:
            field, value = pair(item, "--set")
        except EnvFileError as exc:
            fail("install", str(exc))
        if field not in names:
            fail("install", f"--set {field}: no setting named {field!r} ({', '.join(names)})")
        env[names[field]] = value
    try:
        spec.load(environ=env)
    except SettingsError as exc:
        fail("install", f"the server would not start: {exc}\n(give each with --set FIELD=VALUE)")
    return env


def _client(command: str, name: str, known_only: bool) -> Client:
    if name in CLIENTS:
        return CLIENTS[name]
    if known_only:
        known = ", ".join(CLIENTS)
        fail(command, f"unknown client {name!r} (known: {known}; --print shows any other's)")
    return GENERIC


def _path(command: str, client: str, scope: str | None, config_path: str | None) -> Path:
    if config_path is not None:
        return Path(config_path)
    scope = scope or CLIENTS[client].default_scope
    try:
        return location(client, scope, sys.platform, os.environ, Path.cwd())
    except LocationError as exc:
        fail(command, str(exc))


def _edit(command: str, path: Path, change: Callable[[str], str]) -> None:
    try:
        old = read(path)
        save(path, change(old or ""), existed=old is not None)
    except ConfigError as exc:
        fail(command, str(exc), exc.code)


def _added(
    client: Client, text: str, name: str, value: Mapping[str, Any], force: bool, where: str
) -> str:
    if name in _servers(client, text, where):
        if not force:
            raise ConfigError(
                f"{where} already has a server named {name!r}; --force replaces it", 1
            )
        text = _removed(client, text, name, where)
    if client.toml:
        return tomltext.add(text, name, value, where)
    return json_add(text, client.key, name, value, where)


def _removed(client: Client, text: str, name: str, where: str) -> str:
    if name not in _servers(client, text, where):
        raise ConfigError(f"{where} has no server named {name!r}", 1)
    if client.toml:
        return tomltext.remove(text, name, where)
    return json_remove(text, client.key, name, where)


def _servers(client: Client, text: str, where: str) -> dict[str, Any]:
    if client.toml:
        return tomltext.servers(text, where)
    return json_servers(text, client.key, where)


def _snippet(client: Client, name: str, value: Mapping[str, Any]) -> str:
    if client.toml:
        return tomltext.table(name, value)
    return json.dumps({client.key: {name: dict(value)}}, indent=2, ensure_ascii=False) + "\n"
