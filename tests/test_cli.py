"""The ``mcpkit`` command: ``--help`` and ``--version``, in process and as real processes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpkit._version import __version__
from mcpkit.cli import main
from mcpkit.cli.commands import cli

ROOT = Path(__file__).resolve().parent.parent
VERSION_LINE = f"mcpkit, version {__version__}\n"


def run(*command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` from the repository root, with no stdin, and capture its output."""
    return subprocess.run(
        command,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("option", ["--help", "-h"])
def test_help(option: str) -> None:
    result = CliRunner().invoke(cli, [option], prog_name="mcpkit")
    assert result.exit_code == 0
    assert result.output.startswith("Usage: mcpkit [OPTIONS] COMMAND [ARGS]...")
    assert "--version" in result.output


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"], prog_name="mcpkit")
    assert (result.exit_code, result.output) == (0, VERSION_LINE)


def test_unknown_option_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["--no-such-option"], prog_name="mcpkit")
    assert result.exit_code == 2
    assert "--no-such-option" in result.output


def test_main_uses_the_program_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("Usage: mcpkit ")


@pytest.mark.parametrize(
    ("option", "expected"),
    [("--help", "Usage: mcpkit [OPTIONS] COMMAND [ARGS]..."), ("--version", VERSION_LINE)],
    ids=["help", "version"],
)
def test_python_dash_m(option: str, expected: str) -> None:
    done = run(sys.executable, "-m", "mcpkit", option)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(expected)


def test_console_script() -> None:
    script = shutil.which("mcpkit", path=str(Path(sys.executable).parent))
    assert script is not None, "install mcpkit next to this Python: pip install -e ."
    done = run(script, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, VERSION_LINE, "")


def test_lazy_commands_describe_themselves_as_they_load() -> None:
    """``mcpkit --help`` shows COMMANDS' one-liners without importing the commands: each must
    name a real command of that name and say what its own help says first."""
    import importlib

    import click

    from mcpkit.cli.commands import COMMANDS

    for name, (module, summary) in COMMANDS.items():
        command = getattr(importlib.import_module(module), name)
        assert isinstance(command, click.Command)
        assert command.name == name
        first_words = " ".join((command.help or "").split()[:3])
        assert summary.startswith(first_words), (name, summary, first_words)


def test_run_loads_no_other_subcommand() -> None:
    done = run(
        sys.executable,
        "-c",
        "import sys; from mcpkit.cli.commands import cli; cli.get_command(None, 'run');"
        "print(sorted(m for m in sys.modules if m.startswith('mcpkit.cli.')))",
    )
    assert done.stdout.strip() == (
        "['mcpkit.cli.commands', 'mcpkit.cli.loader', 'mcpkit.cli.run', 'mcpkit.cli.serve']"
    )


def test_the_click_group_is_still_importable_from_mcpkit_cli() -> None:
    done = run(
        sys.executable,
        "-c",
        "import sys, mcpkit.cli; print('click' in sys.modules);"
        "from mcpkit.cli import cli; import mcpkit.cli.commands as c; print(cli is c.cli)",
    )
    assert (done.returncode, done.stdout.split()) == (0, ["False", "True"])


def test_main_is_the_entry_point_even_after_the_commands_are_imported() -> None:
    """``mcpkit.cli.main`` (the console script's entry point) stays the function once the
    click commands' module has been imported (a submodule named ``main`` used to replace it)."""
    import mcpkit.cli
    import mcpkit.cli.commands

    assert callable(mcpkit.cli.main)
    assert mcpkit.cli.main.__module__ == "mcpkit.cli"
