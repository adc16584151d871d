"""Helpers shared by the CLI tests: invoke ``mcpkit`` in process and name the test apps."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mcpkit.cli.commands import cli

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
BUILD_APP = f"{ROOT / 'examples' / 'build_app.py'}:app"
APPS = ROOT / "tests" / "cli_apps.py"


def app(name: str) -> str:
    """The TARGET of an app in tests/cli_apps.py."""
    return f"{APPS}:{name}"


def mcpkit(*args: str) -> Result:
    """Run ``mcpkit ARGS`` in process (stdout and stderr kept apart)."""
    return CliRunner().invoke(cli, list(args), prog_name="mcpkit", catch_exceptions=False)


def assert_usage_error(result: Result, command: str, *fragments: str) -> None:
    """Exit code 2, one line on stderr naming the command, nothing on stdout, no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"mcpkit {command}: error: ")
    assert "Traceback" not in result.output
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def forget_imported_modules() -> Iterator[None]:
    """Tests import temporary modules in process; drop them (and their sys.path) afterwards."""
    before = set(sys.modules)
    path = list(sys.path)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]
    sys.path[:] = path
