"""``mcpkit registry``: an MCP Registry server.json valid against the official schema, one pypi
package launched by its console script, environment variables from the settings, the README's
``mcp-name`` line, ``--check``, and every failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import ROOT, assert_usage_error, mcpkit
from distribution_support import (
    PYPROJECT,
    SERVER,
    SERVER_SCHEMA,
    assert_fails,
    errors,
    needs_tomllib,
    project,
)

WEATHER = ROOT / "examples" / "weather"
README = "# acme\n\n<!-- mcp-name: io.github.acme/server -->\n"


def test_the_committed_server_json_is_fresh_and_valid() -> None:
    path = ROOT / "docs" / "examples" / "weather.server.json"
    target = f"{WEATHER / 'weather_server.py'}:app"
    result = mcpkit(
        "registry", target, "--pyproject", str(WEATHER / "pyproject.toml"), "--check", str(path)
    )
    if needs_tomllib(result, "registry"):
        return
    assert (result.exit_code, result.output) == (0, f"{path} is up to date\n")
    assert errors(json.loads(path.read_text(encoding="utf-8")), SERVER_SCHEMA) == []


def test_server_json_comes_from_the_app_the_settings_and_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = project(tmp_path, readme=README)
    monkeypatch.chdir(tmp_path)
    result = mcpkit("registry", target)
    if needs_tomllib(result, "registry"):
        return
    assert (result.exit_code, result.stderr) == (0, "")
    server = json.loads(result.stdout)
    assert errors(server, SERVER_SCHEMA) == []
    assert server == {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.acme/server",
        "description": "Acme's tools.",
        "version": "2.0.0",
        "packages": [
            {
                "registryType": "pypi",
                "registryBaseUrl": "https://pypi.org",
                "identifier": "acme-mcp",
                "version": "2.0.0",
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "environmentVariables": [
                    {
                        "name": "ACME_TOKEN",
                        "description": "The API token.",
                        "isRequired": True,
                        "isSecret": True,
                        "format": "string",
                    },
                    {
                        "name": "ACME_REGION",
                        "description": "region",
                        "isRequired": False,
                        "isSecret": False,
                        "format": "string",
                        "default": "eu",
                    },
                    {
                        "name": "ACME_RETRIES",
                        "description": "How often to retry.",
                        "isRequired": False,
                        "isSecret": False,
                        "format": "number",
                        "default": "2",
                    },
                    {
                        "name": "ACME_VERBOSE",
                        "description": "verbose",
                        "isRequired": False,
                        "isSecret": False,
                        "format": "boolean",
                        "default": "false",
                    },
                ],
            }
        ],
    }


def test_name_overrides_pyproject_and_an_app_without_settings_has_no_variables(
    tmp_path: Path,
) -> None:
    server = "from mcpkit import App\napp = App('acme', '2.0.0', title='Acme', website_url='https://acme.example')\n"
    target = project(tmp_path, server=server, readme="mcp-name: io.github.acme/other\n")
    pyproject = str(tmp_path / "pyproject.toml")
    result = mcpkit("registry", target, "--pyproject", pyproject, "--name", "io.github.acme/other")
    if needs_tomllib(result, "registry"):
        return
    server_json = json.loads(result.stdout)
    assert errors(server_json, SERVER_SCHEMA) == []
    assert server_json["name"] == "io.github.acme/other"
    assert (server_json["title"], server_json["websiteUrl"]) == ("Acme", "https://acme.example")
    assert server_json["description"] == "The package's own description."
    assert "environmentVariables" not in server_json["packages"][0]


def test_check_verifies_the_readme_names_the_server(tmp_path: Path) -> None:
    target = project(tmp_path, readme="# acme\n")
    pyproject = str(tmp_path / "pyproject.toml")
    written = tmp_path / "server.json"
    result = mcpkit("registry", target, "--pyproject", pyproject, "-o", str(written))
    if needs_tomllib(result, "registry"):
        return
    unproven = (
        f"{tmp_path / 'README.md'} lacks the line `mcp-name: io.github.acme/server`, which the "
        "MCP Registry reads on PyPI to prove the package is this server's (an HTML comment hides "
        "it: <!-- mcp-name: ... -->)"
    )
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == f"mcpkit registry: warning: {unproven}\n"
    checked = mcpkit("registry", target, "--pyproject", pyproject, "--check", str(written))
    assert (checked.exit_code, checked.stdout) == (1, f"{written} is up to date\n")
    assert checked.stderr == f"mcpkit registry: error: {unproven}\n"
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    checked = mcpkit("registry", target, "--pyproject", pyproject, "--check", str(written))
    assert (checked.exit_code, checked.output) == (0, f"{written} is up to date\n")


def test_check_shows_a_diff_when_stale(tmp_path: Path) -> None:
    target = project(tmp_path, readme=README)
    pyproject = tmp_path / "pyproject.toml"
    written = tmp_path / "server.json"
    result = mcpkit("registry", target, "--pyproject", str(pyproject), "-o", str(written))
    if needs_tomllib(result, "registry"):
        return
    pyproject.write_text(PYPROJECT.replace('version = "2.0.0"', 'dynamic = ["version"]'), "utf-8")
    (tmp_path / "server.py").write_text(SERVER.replace('"2.0.0"', '"2.1.0"'), encoding="utf-8")
    stale = mcpkit("registry", target, "--pyproject", str(pyproject), "--check", str(written))
    assert stale.exit_code == 1
    assert '-  "version": "2.0.0"\n+  "version": "2.1.0"\n' in stale.stdout
    assert stale.stderr == (
        f"mcpkit registry: {written} is out of date; regenerate it with -o {written}\n"
    )


LONG = "x" * 101


@pytest.mark.parametrize(
    ("pyproject", "server", "message"),
    [
        (
            PYPROJECT.replace('registry-name = "io.github.acme/server"', ""),
            SERVER,
            'no registry name: set [tool.mcpkit] registry-name = "io.github.you/server" in '
            "{pyproject}, or pass --name",
        ),
        (
            PYPROJECT.replace("io.github.acme/server", "acme server"),
            SERVER,
            "registry name 'acme server' is not a reverse-DNS namespace/name, like "
            "io.github.you/server (letters, digits, '.' and '-', then '/', then letters, "
            "digits, '.', '_' and '-')",
        ),
        (
            PYPROJECT,
            SERVER.replace("Acme's tools.", LONG),
            "the description is 101 characters; the MCP Registry takes at most 100: shorten "
            "App(description=...) (or [project] description)",
        ),
        (
            PYPROJECT.replace('[project.scripts]\nacme-mcp = "server:main"\n', ""),
            SERVER,
            "{pyproject} has no console script to launch: add [project.scripts] acme-mcp = "
            '"your_module:main" (a function that calls app.run())',
        ),
        (
            PYPROJECT.replace('acme-mcp = "server:main"', 'acme = "server:main"'),
            SERVER,
            "uvx launches the console script named like the package ('acme-mcp'), and "
            "[project.scripts] has only 'acme'; add acme-mcp = ...",
        ),
        (
            PYPROJECT.replace('name = "acme-mcp"\n', ""),
            SERVER,
            "{pyproject} has no [project] name",
        ),
    ],
    ids=["no-name", "bad-name", "long-description", "no-script", "other-script", "no-package"],
)
def test_what_server_json_needs_is_asked_for(
    tmp_path: Path, pyproject: str, server: str, message: str
) -> None:
    target = project(tmp_path, pyproject, server, readme=README)
    path = tmp_path / "pyproject.toml"
    result = mcpkit("registry", target, "--pyproject", str(path))
    if needs_tomllib(result, "registry"):
        return
    assert_fails(result, "registry", message.replace("{pyproject}", str(path)))


def test_a_script_name_matches_the_package_name_as_pypi_normalizes_it(tmp_path: Path) -> None:
    pyproject = PYPROJECT.replace('acme-mcp = "server:main"', 'Acme_MCP = "server:main"')
    target = project(tmp_path, pyproject, readme=README)
    result = mcpkit("registry", target, "--pyproject", str(tmp_path / "pyproject.toml"))
    if needs_tomllib(result, "registry"):
        return
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["packages"][0]["identifier"] == "acme-mcp"


def test_both_outputs_is_a_usage_error(tmp_path: Path) -> None:
    target = project(tmp_path)
    assert_usage_error(
        mcpkit("registry", target, "-o", "a.json", "--check", "b.json"),
        "registry",
        "use either -o/--output or --check, not both",
    )


def test_the_readme_is_the_one_pyproject_names(tmp_path: Path) -> None:
    pyproject = PYPROJECT.replace("[project]\n", '[project]\nreadme = { file = "docs/PYPI.md" }\n')
    target = project(tmp_path, pyproject, readme=README)  # README.md names it: not the one
    (tmp_path / "docs").mkdir()
    result = mcpkit("registry", target, "--pyproject", str(tmp_path / "pyproject.toml"))
    if needs_tomllib(result, "registry"):
        return
    assert result.stderr == (
        f"mcpkit registry: warning: {tmp_path / 'docs' / 'PYPI.md'} lacks the line "
        "`mcp-name: io.github.acme/server`, which the MCP Registry reads on PyPI to prove the "
        "package is this server's (an HTML comment hides it: <!-- mcp-name: ... -->)\n"
    )
    (tmp_path / "docs" / "PYPI.md").write_text(README, encoding="utf-8")
    result = mcpkit("registry", target, "--pyproject", str(tmp_path / "pyproject.toml"))
    assert (result.exit_code, result.stderr) == (0, "")


def test_without_any_readme_the_warning_names_readme_md(tmp_path: Path) -> None:
    target = project(tmp_path)
    result = mcpkit("registry", target, "--pyproject", str(tmp_path / "pyproject.toml"))
    if needs_tomllib(result, "registry"):
        return
    assert result.exit_code == 0
    assert result.stderr.startswith(
        f"mcpkit registry: warning: {tmp_path / 'README.md'} lacks the line "
    )
