"""Where each MCP client keeps its server list, and the shape of one stdio entry in it.

The locations are the ones each client documents (sources next to each), per operating system
and per scope: ``user`` (every project of this user) or ``project`` (a file in the current
directory, meant to be committed). Everything here is pure: the platform, the environment and
the current directory are parameters, so the tests can ask for any OS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

__all__ = ["CLIENTS", "Client", "LocationError", "entry", "location"]

SCOPES = ("user", "project")


class LocationError(Exception):
    """The client documents no config file for this OS or scope (message for the user)."""


@dataclass(frozen=True)
class Client:
    """One client: its display name, the key holding servers, and its file format."""

    title: str
    key: str
    """The table of servers: ``mcpServers``, ``servers`` (VS Code) or ``mcp_servers`` (Codex)."""
    toml: bool = False
    stdio_type: bool = False
    """Whether an entry states ``"type": "stdio"`` (VS Code requires it)."""
    default_scope: str = "user"


CLIENTS: dict[str, Client] = {
    "claude-desktop": Client("Claude Desktop", "mcpServers"),
    "claude-code": Client("Claude Code", "mcpServers", default_scope="project"),
    "cursor": Client("Cursor", "mcpServers"),
    "vscode": Client("VS Code", "servers", stdio_type=True),
    "codex": Client("Codex", "mcp_servers", toml=True),
}
"""Client name on the command line -> how its config is written."""

GENERIC = Client("an MCP client", "mcpServers")
"""The shape ``--print`` shows for a client mcpkit does not know (most accept it)."""


def entry(client: Client, command: str, args: list[str], env: Mapping[str, str]) -> dict[str, Any]:
    """One server's entry as the client reads it (``env`` only when there is one)."""
    value: dict[str, Any] = {"type": "stdio"} if client.stdio_type else {}
    value |= {"command": command, "args": args}
    if env:
        value["env"] = dict(env)
    return value


def location(
    name: str, scope: str, platform: str, environ: Mapping[str, str], cwd: PurePath
) -> Path:
    """The config file of client ``name`` for ``scope`` on ``platform`` (``sys.platform``)."""
    if scope == "project":
        return _project(name, Path(cwd))
    home = _home(platform, environ)
    if name == "claude-desktop":
        return _claude_desktop(platform, environ, home)
    if name == "claude-code":
        # https://code.claude.com/docs/en/mcp.md#mcp-installation-scopes: user scope is the
        # top-level "mcpServers" of ~/.claude.json, on every OS.
        return home / ".claude.json"
    if name == "cursor":
        # https://cursor.com/docs/mcp: global ~/.cursor/mcp.json (%USERPROFILE% on Windows).
        return home / ".cursor" / "mcp.json"
    if name == "vscode":
        # https://code.visualstudio.com/docs/copilot/reference/mcp-configuration: mcp.json in
        # the user profile, the folder of the user settings.json
        # (https://code.visualstudio.com/docs/configure/settings#_settings-json-file).
        return _app_data(platform, environ, home) / "Code" / "User" / "mcp.json"
    # https://developers.openai.com/codex/mcp and
    # https://github.com/openai/codex/blob/main/docs/config.md: $CODEX_HOME/config.toml,
    # ~/.codex/config.toml by default.
    codex_home = environ.get("CODEX_HOME")
    return Path(codex_home) / "config.toml" if codex_home else home / ".codex" / "config.toml"


def _project(name: str, cwd: Path) -> Path:
    # Claude Code: .mcp.json at the project root (docs above); Cursor: .cursor/mcp.json;
    # VS Code: .vscode/mcp.json; Codex: .codex/config.toml (trusted projects only).
    files = {
        "claude-code": cwd / ".mcp.json",
        "cursor": cwd / ".cursor" / "mcp.json",
        "vscode": cwd / ".vscode" / "mcp.json",
        "codex": cwd / ".codex" / "config.toml",
    }
    if name not in files:
        raise LocationError(f"{CLIENTS[name].title} has no project config; use --scope user")
    return files[name]


def _claude_desktop(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    # https://modelcontextprotocol.io/quickstart/user: macOS
    # ~/Library/Application Support/Claude/claude_desktop_config.json, Windows
    # %APPDATA%\Claude\claude_desktop_config.json; there is no Linux release.
    if platform not in ("darwin", "win32"):
        raise LocationError(
            "Claude Desktop documents no config location on Linux; "
            "pass --config PATH (the claude_desktop_config.json it reads)"
        )
    return _app_data(platform, environ, home) / "Claude" / "claude_desktop_config.json"


def _home(platform: str, environ: Mapping[str, str]) -> Path:
    home = environ.get("USERPROFILE" if platform == "win32" else "HOME")
    return Path(home) if home else Path.home()


def _app_data(platform: str, environ: Mapping[str, str], home: Path) -> Path:
    """The per-user application data folder (Electron's ``appData``)."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
