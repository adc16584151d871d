"""``mcpkit bundle``: an MCP Bundle manifest.json (0.3) valid against the official schema,
``user_config`` and ``mcp_config.env`` from the settings, ``--check``, and every failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import ROOT, assert_usage_error, mcpkit
from distribution_support import (
    MANIFEST_SCHEMA,
    PYPROJECT,
    SERVER,
    assert_fails,
    errors,
    needs_tomllib,
    project,
)

WEATHER = ROOT / "examples" / "weather"
COMMITTED = [
    ("weather", f"{WEATHER / 'weather_server.py'}:app", WEATHER / "pyproject.toml"),
    ("build_app", f"{ROOT / 'examples' / 'build_app.py'}:app", ROOT / "pyproject.toml"),
    ("everything", f"{ROOT / 'examples' / 'everything.py'}:app", ROOT / "pyproject.toml"),
]


@pytest.mark.parametrize(
    ("example", "target", "pyproject"), COMMITTED, ids=[c[0] for c in COMMITTED]
)
def test_committed_manifests_are_fresh_and_valid(
    example: str, target: str, pyproject: Path
) -> None:
    """The files ``.ci/run`` checks with ``--check``, against the official schema."""
    path = ROOT / "docs" / "examples" / f"{example}.manifest.json"
    result = mcpkit("bundle", target, "--pyproject", str(pyproject), "--check", str(path))
    if needs_tomllib(result, "bundle"):
        return
    assert (result.exit_code, result.stdout) == (0, f"{path} is up to date\n"), result.stderr
    manifest = json.loads(path.read_text(encoding="utf-8"))
    assert errors(manifest, MANIFEST_SCHEMA) == []
    assert manifest["manifest_version"] == "0.3"  # the schema cannot require it (the zod one does)


def test_the_manifest_comes_from_the_app_the_settings_and_pyproject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = project(tmp_path)
    monkeypatch.chdir(tmp_path)  # the nearest pyproject.toml is the project's
    result = mcpkit("bundle", target)
    if needs_tomllib(result, "bundle"):
        return
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(result.stdout)
    assert errors(manifest, MANIFEST_SCHEMA) == []
    assert manifest == {
        "manifest_version": "0.3",
        "name": "acme",
        "version": "2.0.0",
        "description": "Acme's tools.",
        "author": {"name": "Acme", "email": "dev@acme.example"},
        "license": "Apache-2.0",
        "compatibility": {"runtimes": {"python": ">=3.11"}},
        "tools": [{"name": "ping", "description": "Answer pong."}],
        "server": {
            "type": "python",
            "entry_point": "server.py",
            "mcp_config": {
                "command": "python",
                "args": ["-m", "mcpkit", "run", "${__dirname}/server.py:app"],
                "env": {
                    "PYTHONPATH": "${__dirname}/lib",
                    "ACME_TOKEN": "${user_config.token}",
                    "ACME_REGION": "${user_config.region}",
                    "ACME_RETRIES": "${user_config.retries}",
                    "ACME_VERBOSE": "${user_config.verbose}",
                },
                "platform_overrides": {
                    "darwin": {"command": "python3"},
                    "linux": {"command": "python3"},
                },
            },
        },
        "user_config": {
            "token": {
                "type": "string",
                "title": "token",
                "description": "The API token.",
                "required": True,
                "sensitive": True,
            },
            "region": {
                "type": "string",
                "title": "Region",
                "description": "region",
                "required": False,
                "default": "eu",
            },
            "retries": {
                "type": "number",
                "title": "retries",
                "description": "How often to retry.",
                "required": False,
                "default": 2,
                "min": 0,
                "max": 10,
            },
            "verbose": {
                "type": "boolean",
                "title": "verbose",
                "description": "verbose",
                "required": False,
                "default": False,
            },
        },
    }


def test_a_module_target_runs_as_named_and_prompts_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = SERVER + (
        "\n\n@app.prompt\ndef review(code: str, focus: str = 'all') -> str:\n"
        "    '''Review some code.'''\n    return code\n"
    )
    project(tmp_path, server=server, module="reviewing_server")
    monkeypatch.chdir(tmp_path)
    result = mcpkit("bundle", "reviewing_server:app")
    if needs_tomllib(result, "bundle"):
        return
    manifest = json.loads(result.stdout)
    assert errors(manifest, MANIFEST_SCHEMA) == []
    assert manifest["server"]["entry_point"] == "reviewing_server.py"
    assert manifest["server"]["mcp_config"]["args"] == [
        "-m",
        "mcpkit",
        "run",
        "reviewing_server:app",
    ]
    assert manifest["prompts"] == [
        {
            "name": "review",
            "description": "Review some code.",
            "text": "Review some code.",
            "arguments": ["code", "focus"],
        }
    ]


def test_check_shows_a_diff_and_exits_1_when_stale(tmp_path: Path) -> None:
    target = project(tmp_path)
    pyproject = str(tmp_path / "pyproject.toml")
    written = tmp_path / "manifest.json"
    result = mcpkit("bundle", target, "--pyproject", pyproject, "-o", str(written))
    if needs_tomllib(result, "bundle"):
        return
    assert (result.exit_code, result.output) == (0, "")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.replace('"Acme"', '"Acme Inc"'), "utf-8")
    stale = mcpkit("bundle", target, "--pyproject", pyproject, "--check", str(written))
    assert stale.exit_code == 1
    assert '-    "name": "Acme"\n+    "name": "Acme Inc"\n' in stale.stdout
    assert stale.stdout.startswith(f"--- {written}\n+++ {written} (generated)\n")
    assert stale.stderr == (
        f"mcpkit bundle: {written} is out of date; regenerate it with -o {written}\n"
    )


@pytest.mark.parametrize(
    ("pyproject", "server", "message"),
    [
        (
            PYPROJECT.replace('authors = [{ name = "Acme", email = "dev@acme.example" }]\n', ""),
            SERVER,
            "no author: add [project] authors = [{ name = ... }] to {pyproject}",
        ),
        (
            PYPROJECT.replace('description = "The package\'s own description."\n', ""),
            SERVER.replace('description="Acme\'s tools.", ', ""),
            "no description: pass App(description=...) or set [project] description in {pyproject}",
        ),
        (
            PYPROJECT,
            SERVER.replace('"2.0.0"', '"2.0.1"'),
            "the App's version '2.0.1' is not the package's '2.0.0' ([project] version in "
            "{pyproject}); make them one (e.g. App(version=importlib.metadata.version(...)))",
        ),
    ],
    ids=["no-author", "no-description", "versions-differ"],
)
def test_what_a_manifest_needs_is_asked_for(
    tmp_path: Path, pyproject: str, server: str, message: str
) -> None:
    target = project(tmp_path, pyproject, server)
    path = tmp_path / "pyproject.toml"
    result = mcpkit("bundle", target, "--pyproject", str(path))
    if needs_tomllib(result, "bundle"):
        return
    assert_fails(result, "bundle", message.replace("{pyproject}", str(path)))


def test_the_target_must_be_inside_the_project(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "elsewhere").mkdir()
    target = project(tmp_path / "elsewhere")
    pyproject = tmp_path / "pkg" / "pyproject.toml"
    pyproject.write_text(PYPROJECT, encoding="utf-8")
    result = mcpkit("bundle", target, "--pyproject", str(pyproject))
    if needs_tomllib(result, "bundle"):
        return
    assert_fails(
        result,
        "bundle",
        f"{tmp_path / 'elsewhere' / 'server.py'} is not inside the project ({tmp_path / 'pkg'}); "
        "a bundle holds the project's files: run from the project or pass --pyproject",
    )


def test_a_dynamic_version_is_the_apps(tmp_path: Path) -> None:
    target = project(tmp_path, PYPROJECT.replace('version = "2.0.0"', 'dynamic = ["version"]'))
    result = mcpkit("bundle", target, "--pyproject", str(tmp_path / "pyproject.toml"))
    if needs_tomllib(result, "bundle"):
        return
    assert json.loads(result.stdout)["version"] == "2.0.0"


def test_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = project(tmp_path, pyproject=None)
    monkeypatch.chdir(tmp_path)
    bundle_dir = tmp_path  # no pyproject.toml here nor above (tmp_path is under /tmp)
    assert not any((d / "pyproject.toml").exists() for d in (bundle_dir, *bundle_dir.parents))
    assert_usage_error(
        mcpkit("bundle", target),
        "bundle",
        "no pyproject.toml here or above; run in the project or pass --pyproject",
    )
    assert_usage_error(
        mcpkit("bundle", target, "-o", "a.json", "--check", "b.json"),
        "bundle",
        "use either -o/--output or --check, not both",
    )
    bad = tmp_path / "bad.toml"
    bad.write_text("[project\n", encoding="utf-8")
    result = mcpkit("bundle", target, "--pyproject", str(bad))
    if needs_tomllib(result, "bundle"):
        return
    assert_usage_error(result, "bundle", f"{bad} is not valid TOML: ")
    missing = tmp_path / "nope.toml"
    assert_usage_error(
        mcpkit("bundle", target, "--pyproject", str(missing)),
        "bundle",
        f"cannot read {missing}: no such file or directory",
    )
