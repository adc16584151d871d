"""``mcpkit install`` and ``mcpkit uninstall``: every client's file, merged, backed up, refused.

Every test points HOME, USERPROFILE, APPDATA, XDG_CONFIG_HOME and CODEX_HOME into tmp_path and
runs in a project folder there, so no real config is ever touched.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path, PurePath
from typing import Any

import pytest
from cli_support import BUILD_APP, ROOT, app, assert_usage_error, mcpkit

from mcpkit.cli.clients import LocationError, location

PYTHON = os.path.abspath(sys.executable)
TARGET = f"{ROOT / 'examples' / 'build_app.py'}:app"


TRAILING_COMMA = '{"mcpServers": {},}'


def json_error(text: str) -> str:
    """What this Python's ``json`` says of ``text`` (its wording differs between versions)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"{exc.msg}, line {exc.lineno}, column {exc.colno}"
    raise AssertionError(f"{text!r} is valid JSON")


NO_TOMLLIB = sys.version_info < (3, 11)  # Python 3.10: no TOML reader in the standard library


def assert_needs_tomllib(path: Path, *args: str) -> None:
    """On Python 3.10 editing Codex's ``config.toml`` is refused (exit 2, a clear message) and
    ``path`` is left as it was: what every TOML-editing test checks there instead."""
    before = path.read_text(encoding="utf-8") if path.exists() else None
    assert_usage_error(mcpkit(*args), args[0], "needs Python 3.11 or later", "--print codex")
    assert (path.read_text(encoding="utf-8") if path.exists() else None) == before


ARGS = ["-m", "mcpkit", "run", TARGET]
ENTRY = {"command": PYTHON, "args": ARGS}
OTHER = {"command": "node", "args": ["other.js"]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home; the current directory is its ``project`` folder."""
    for name in ("HOME", "USERPROFILE"):
        monkeypatch.setenv(name, str(tmp_path))
    monkeypatch.setenv("APPDATA", str(tmp_path / "AppData"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


def json_file(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dumped(value: Any) -> str:
    return json.dumps(value, indent=2) + "\n"


def toml_table(name: str = "builder", env: str = "") -> str:
    return (
        f"[mcp_servers.{name}]\n"
        f"command = {json.dumps(PYTHON)}\n"
        f'args = ["-m", "mcpkit", "run", {json.dumps(TARGET)}]\n' + env
    )


# ------------------------------------------------------------------------ where each file is

JSON_CLIENTS = [
    ("cursor", "Cursor", ".cursor/mcp.json", "mcpServers", ENTRY),
    ("vscode", "VS Code", "xdg/Code/User/mcp.json", "servers", {"type": "stdio", **ENTRY}),
    ("claude-code", "Claude Code", "project/.mcp.json", "mcpServers", ENTRY),
]


@pytest.mark.parametrize(("client", "title", "relative", "key", "entry"), JSON_CLIENTS)
def test_install_writes_the_documented_file(
    home: Path, client: str, title: str, relative: str, key: str, entry: dict[str, Any]
) -> None:
    result = mcpkit("install", client, BUILD_APP)
    assert result.exit_code == 0, result.output
    path = home / relative
    assert path.read_text(encoding="utf-8") == dumped({key: {"builder": entry}})
    assert result.stdout == (
        f"installed 'builder' in {path} ({title}); restart the client to load it\n"
    )
    assert not path.with_name(path.name + ".bak").exists()  # nothing existed to back up


def test_claude_code_user_scope_keeps_the_rest_of_claude_json(home: Path) -> None:
    settings = {"numStartups": 3, "projects": {"/x": {"mcpServers": {}}}, "mcpServers": {}}
    (home / ".claude.json").write_text(json.dumps(settings), encoding="utf-8")
    assert mcpkit("install", "claude-code", BUILD_APP, "--scope", "user").exit_code == 0
    assert json_file(home / ".claude.json") == settings | {"mcpServers": {"builder": ENTRY}}


def test_codex_appends_a_table_to_config_toml(home: Path) -> None:
    if NO_TOMLLIB:
        return assert_needs_tomllib(home / ".codex" / "config.toml", "install", "codex", BUILD_APP)
    assert mcpkit("install", "codex", BUILD_APP).exit_code == 0
    assert (home / ".codex" / "config.toml").read_text(encoding="utf-8") == toml_table()


def test_codex_home_is_honoured(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(home / "elsewhere"))
    if NO_TOMLLIB:
        return assert_needs_tomllib(
            home / "elsewhere" / "config.toml", "install", "codex", BUILD_APP
        )
    assert mcpkit("install", "codex", BUILD_APP).exit_code == 0
    assert (home / "elsewhere" / "config.toml").read_text(encoding="utf-8") == toml_table()


def test_claude_desktop_on_linux_needs_config(home: Path) -> None:
    assert_usage_error(
        mcpkit("install", "claude-desktop", BUILD_APP),
        "install",
        "Claude Desktop documents no config location on Linux; pass --config PATH",
    )
    path = home / "claude_desktop_config.json"
    assert mcpkit("install", "claude-desktop", BUILD_APP, "--config", str(path)).exit_code == 0
    assert path.read_text(encoding="utf-8") == dumped({"mcpServers": {"builder": ENTRY}})


@pytest.mark.parametrize(
    ("client", "platform", "expected"),
    [
        (
            "claude-desktop",
            "darwin",
            "H/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "win32", "A/Claude/claude_desktop_config.json"),
        ("vscode", "darwin", "H/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "win32", "A/Code/User/mcp.json"),
        ("vscode", "linux", "X/Code/User/mcp.json"),
        ("cursor", "win32", "U/.cursor/mcp.json"),
        ("cursor", "linux", "H/.cursor/mcp.json"),
        ("claude-code", "darwin", "H/.claude.json"),
        ("codex", "win32", "U/.codex/config.toml"),
    ],
)
def test_user_locations_per_os(client: str, platform: str, expected: str) -> None:
    environ = {"HOME": "H", "USERPROFILE": "U", "APPDATA": "A", "XDG_CONFIG_HOME": "X"}
    assert location(client, "user", platform, environ, PurePath("P")) == Path(expected)


def test_app_data_fallbacks() -> None:
    environ = {"HOME": "H", "USERPROFILE": "U"}
    assert location("vscode", "user", "linux", environ, PurePath("P")) == Path(
        "H/.config/Code/User/mcp.json"
    )
    assert location("vscode", "user", "win32", environ, PurePath("P")) == Path(
        "U/AppData/Roaming/Code/User/mcp.json"
    )


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        ("claude-code", "P/.mcp.json"),
        ("cursor", "P/.cursor/mcp.json"),
        ("vscode", "P/.vscode/mcp.json"),
        ("codex", "P/.codex/config.toml"),
    ],
)
def test_project_locations(client: str, expected: str) -> None:
    assert location(client, "project", "linux", {}, PurePath("P")) == Path(expected)


def test_claude_desktop_has_no_project_scope(home: Path) -> None:
    with pytest.raises(LocationError, match="Claude Desktop has no project config"):
        location("claude-desktop", "project", "darwin", {}, PurePath("P"))
    assert_usage_error(
        mcpkit("install", "claude-desktop", BUILD_APP, "--scope", "project"),
        "install",
        "Claude Desktop has no project config; use --scope user",
    )


# ---------------------------------------------------------------- merging, backups, refusals


@pytest.mark.parametrize("client", ["cursor", "vscode", "claude-code"])
def test_merges_with_other_servers_and_keeps_a_backup(home: Path, client: str) -> None:
    mcpkit("install", client, BUILD_APP, "--name", "first")
    path = {"cursor": home / ".cursor/mcp.json", "vscode": home / "xdg/Code/User/mcp.json"}.get(
        client, home / "project/.mcp.json"
    )
    key = "servers" if client == "vscode" else "mcpServers"
    before = dumped({"theme": "dark", key: {"other": OTHER}, "inputs": []})
    path.write_text(before, encoding="utf-8")
    assert mcpkit("install", client, BUILD_APP).exit_code == 0
    entry = {"type": "stdio", **ENTRY} if client == "vscode" else ENTRY
    assert path.read_text(encoding="utf-8") == dumped(
        {"theme": "dark", key: {"other": OTHER, "builder": entry}, "inputs": []}
    )
    assert path.with_name(path.name + ".bak").read_text(encoding="utf-8") == before


def test_same_name_is_refused_without_force(home: Path) -> None:
    path = home / ".cursor/mcp.json"
    path.parent.mkdir()
    before = dumped({"mcpServers": {"builder": OTHER}})
    path.write_text(before, encoding="utf-8")
    result = mcpkit("install", "cursor", BUILD_APP)
    assert result.exit_code == 1
    assert result.stderr == (
        f"mcpkit install: error: {path} already has a server named 'builder'; --force replaces it\n"
    )
    assert path.read_text(encoding="utf-8") == before
    assert not path.with_name("mcp.json.bak").exists()
    assert mcpkit("install", "cursor", BUILD_APP, "--force").exit_code == 0
    assert json_file(path) == {"mcpServers": {"builder": ENTRY}}
    assert path.with_name("mcp.json.bak").read_text(encoding="utf-8") == before


CODEX_BEFORE = """\
# my Codex settings
model = "o3"  # keep this comment

[mcp_servers.other]
command = "node"   # odd spacing kept
args = ["other.js"]

[mcp_servers.other.env]
TOKEN = "x"
"""


def test_codex_merge_keeps_every_byte_and_a_backup(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_BEFORE, encoding="utf-8")
    if NO_TOMLLIB:
        return assert_needs_tomllib(path, "install", "codex", BUILD_APP, "--env", "A=1")
    assert mcpkit("install", "codex", BUILD_APP, "--env", "A=1").exit_code == 0
    assert path.read_text(encoding="utf-8") == CODEX_BEFORE + "\n" + toml_table(
        env='env = { A = "1" }\n'
    )
    assert path.with_name("config.toml.bak").read_text(encoding="utf-8") == CODEX_BEFORE


def test_codex_same_name_and_force(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_BEFORE, encoding="utf-8")
    if NO_TOMLLIB:
        return assert_needs_tomllib(path, "install", "codex", BUILD_APP, "--name", "other")
    result = mcpkit("install", "codex", BUILD_APP, "--name", "other")
    assert result.exit_code == 1
    assert "already has a server named 'other'; --force replaces it" in result.stderr
    assert path.read_text(encoding="utf-8") == CODEX_BEFORE
    assert mcpkit("install", "codex", BUILD_APP, "--name", "other", "--force").exit_code == 0
    head = '# my Codex settings\nmodel = "o3"  # keep this comment\n'
    assert path.read_text(encoding="utf-8") == head + "\n" + toml_table("other")


@pytest.mark.parametrize(
    ("client", "relative", "text", "message"),
    [
        (
            "cursor",
            ".cursor/mcp.json",
            TRAILING_COMMA,
            "is not valid JSON ("
            + json_error(TRAILING_COMMA)
            + "; comments and trailing commas are not JSON); nothing written",
        ),
        ("vscode", "xdg/Code/User/mcp.json", "[1]", "does not hold a JSON object; nothing written"),
        (
            "claude-code",
            "project/.mcp.json",
            '{"mcpServers": []}',
            ': "mcpServers" is not a JSON object; nothing written',
        ),
        ("codex", ".codex/config.toml", "a = \n", "is not valid TOML (Invalid value (at line 1,"),
        (
            "codex",
            ".codex/config.toml",
            'mcp_servers = { x = { command = "a" } }\n',
            "cannot append [mcp_servers.builder] to",
        ),
    ],
)
def test_a_malformed_file_is_an_error_and_nothing_is_written(
    home: Path, client: str, relative: str, text: str, message: str
) -> None:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if client == "codex" and NO_TOMLLIB:
        return assert_needs_tomllib(path, "install", client, BUILD_APP)
    assert_usage_error(mcpkit("install", client, BUILD_APP), "install", str(path), message)
    assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_target_that_does_not_load_writes_nothing(home: Path) -> None:
    missing = home / "missing.py"
    assert_usage_error(
        mcpkit("install", "cursor", str(missing)), "install", f"no such file: {missing}"
    )
    result = mcpkit("install", "cursor", app("flawed"))
    assert result.exit_code == 1
    assert "(mcpkit check lists every problem)" in result.stderr
    assert not (home / ".cursor").exists()


def test_unknown_client(home: Path) -> None:
    assert_usage_error(
        mcpkit("install", "zed", BUILD_APP),
        "install",
        "unknown client 'zed' (known: claude-desktop, claude-code, cursor, vscode, codex; "
        "--print shows any other's)",
    )


# -------------------------------------------------------------------- --print, --env, names


def test_print_shows_the_entry_and_writes_nothing(home: Path) -> None:
    result = mcpkit("install", "--print", "zed", BUILD_APP, "--name", "b")
    assert result.stdout == dumped({"mcpServers": {"b": ENTRY}})
    result = mcpkit("install", "--print", "vscode", BUILD_APP)
    assert result.stdout == dumped({"servers": {"builder": {"type": "stdio", **ENTRY}}})
    result = mcpkit("install", "--print", "codex", BUILD_APP, "--name", "my server")
    assert result.stdout == toml_table('"my server"')
    assert sorted(p.name for p in home.iterdir()) == ["project"]


def test_a_relative_file_target_is_made_absolute(home: Path) -> None:
    (home / "project" / "srv.py").write_text(
        'from mcpkit import App\nsrv = App("srv", version="1")\n', encoding="utf-8"
    )
    result = mcpkit("install", "--print", "cursor", "srv.py")
    absolute = str(home / "project" / "srv.py")
    assert json.loads(result.stdout)["mcpServers"]["srv"]["args"] == [
        "-m",
        "mcpkit",
        "run",
        absolute,
    ]


def test_env_and_env_file(home: Path) -> None:
    env_file = home / "server.env"
    env_file.write_text(
        '# secrets\n\nexport TOKEN="a b"\nMODE=fast\nURL=http://x/?a=1\n', encoding="utf-8"
    )
    result = mcpkit(
        "install", "--print", "cursor", BUILD_APP, "--env-file", str(env_file), "--env", "MODE=slow"
    )
    expected = {"TOKEN": "a b", "MODE": "slow", "URL": "http://x/?a=1"}
    assert json.loads(result.stdout)["mcpServers"]["builder"]["env"] == expected
    result = mcpkit("install", "--print", "codex", BUILD_APP, "--env", 'K=a"b\\c')
    assert result.stdout.endswith('env = { K = "a\\"b\\\\c" }\n')


def test_bad_env_is_a_usage_error(home: Path) -> None:
    assert_usage_error(
        mcpkit("install", "cursor", BUILD_APP, "--env", "NOVALUE"),
        "install",
        "--env: 'NOVALUE' is not KEY=VALUE",
    )
    env_file = home / "bad.env"
    env_file.write_text("A=1\njunk\n", encoding="utf-8")
    assert_usage_error(
        mcpkit("install", "cursor", BUILD_APP, "--env-file", str(env_file)),
        "install",
        f"{env_file}, line 2: 'junk' is not KEY=VALUE",
    )
    assert not (home / ".cursor").exists()


# -------------------------------------------------------------------------------- uninstall


@pytest.mark.parametrize(
    ("client", "relative", "key"),
    [
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("vscode", "xdg/Code/User/mcp.json", "servers"),
        ("claude-code", "project/.mcp.json", "mcpServers"),
        ("claude-desktop", "desktop.json", "mcpServers"),
    ],
)
def test_uninstall_json(home: Path, client: str, relative: str, key: str) -> None:
    path = home / relative
    config = ["--config", str(path)] if client == "claude-desktop" else []
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumped({"x": 1, key: {"other": OTHER}}), encoding="utf-8")
    assert mcpkit("install", client, BUILD_APP, *config).exit_code == 0
    installed = path.read_text(encoding="utf-8")
    result = mcpkit("uninstall", client, "builder", *config)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"removed 'builder' from {path} (")
    assert path.read_text(encoding="utf-8") == dumped({"x": 1, key: {"other": OTHER}})
    assert path.with_name(path.name + ".bak").read_text(encoding="utf-8") == installed


def test_uninstall_codex_restores_the_file_byte_for_byte(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_BEFORE, encoding="utf-8")
    if NO_TOMLLIB:
        return assert_needs_tomllib(path, "uninstall", "codex", "other")
    mcpkit("install", "codex", BUILD_APP, "--env", "A=1")
    assert mcpkit("uninstall", "codex", "builder").exit_code == 0
    assert path.read_text(encoding="utf-8") == CODEX_BEFORE


def test_uninstall_codex_removes_exactly_the_tables_of_that_server(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    if NO_TOMLLIB:
        path.write_text(CODEX_BEFORE, encoding="utf-8")
        return assert_needs_tomllib(path, "uninstall", "codex", "other")
    path.write_text(CODEX_BEFORE + '\n# the next one\n[profiles.fast]\nmodel = "x"\n', "utf-8")
    assert mcpkit("uninstall", "codex", "other").exit_code == 0
    assert path.read_text(encoding="utf-8") == (
        '# my Codex settings\nmodel = "o3"  # keep this comment\n'
        '\n# the next one\n[profiles.fast]\nmodel = "x"\n'
    )


def test_uninstall_refuses_what_it_cannot_remove_cleanly(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    text = '[mcp_servers]\nother = { command = "node" }\n'
    path.write_text(text, encoding="utf-8")
    if NO_TOMLLIB:
        return assert_needs_tomllib(path, "uninstall", "codex", "other")
    assert_usage_error(mcpkit("uninstall", "codex", "other"), "uninstall", "edit it by hand")
    assert path.read_text(encoding="utf-8") == text


def test_uninstall_an_unknown_name(home: Path) -> None:
    result = mcpkit("uninstall", "cursor", "nope")
    assert result.exit_code == 1
    assert result.stderr == (
        f"mcpkit uninstall: error: {home / '.cursor/mcp.json'} has no server named 'nope'\n"
    )
    assert not (home / ".cursor").exists()


def test_uninstall_a_malformed_file(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("[mcp_servers.x\n", encoding="utf-8")
    if NO_TOMLLIB:
        return assert_needs_tomllib(path, "uninstall", "codex", "x")
    assert_usage_error(mcpkit("uninstall", "codex", "x"), "uninstall", "is not valid TOML")
    assert path.read_text(encoding="utf-8") == "[mcp_servers.x\n"
