"""What the commands share: one-line usage errors (exit 2), loading the TARGET, reading files."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, NoReturn

import click

from mcpkit.app import App
from mcpkit.cli.loader import TargetError, load_app
from mcpkit.exceptions import DefinitionError
from mcpkit.protocol.versions import ALL_VERSIONS, LATEST_HANDSHAKE

__all__ = [
    "check_fresh",
    "check_option",
    "emit",
    "fail",
    "load",
    "load_compiled",
    "one_output",
    "output_option",
    "protocol_version_option",
    "read_json",
    "read_text",
    "write_text",
]

protocol_version_option = click.option(
    "--protocol-version",
    type=click.Choice(ALL_VERSIONS),
    default=LATEST_HANDSHAKE,
    show_default=True,
    help="The protocol version the in-memory client speaks.",
)

output_option = click.option(
    "-o", "--output", metavar="FILE", help="Write to FILE instead of stdout."
)
check_option = click.option(
    "--check",
    metavar="FILE",
    help="Compare with FILE instead of writing; exit 1 with a diff when they differ.",
)
"""The options of a command that generates a file (see :func:`emit`)."""


def fail(command: str, message: str, code: int = 2) -> NoReturn:
    """One clear line on stderr and exit ``code`` (2: a usage error), with no traceback."""
    click.echo(f"mcpkit {command}: error: {message}", err=True)
    raise click.exceptions.Exit(code)


def load(command: str, target: str) -> App:
    """The App that TARGET names, or a usage error."""
    try:
        return load_app(target)
    except TargetError as exc:
        fail(command, str(exc))


def load_compiled(command: str, target: str) -> App:
    """The App that TARGET names with every definition compiled, or one line and exit 1."""
    app = load(command, target)
    try:
        app.compile()
    except DefinitionError as exc:
        fail(command, f"{exc} (mcpkit check lists every problem)", code=1)
    return app


def read_text(command: str, path: str) -> str:
    """A UTF-8 file's text, or a usage error naming the file."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(command, f"cannot read {path}: {_reason(exc)}")


def read_json(command: str, path: str) -> Any:
    """A JSON file's value, or a usage error naming the file and the line."""
    try:
        return json.loads(read_text(command, path))
    except json.JSONDecodeError as exc:
        fail(command, f"{path} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")


def write_text(command: str, path: str, text: str) -> None:
    """Write a UTF-8 file with ``\\n`` line ends, or a usage error naming the file."""
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
    except OSError as exc:
        fail(command, f"cannot write {path}: {_reason(exc)}")


def check_fresh(command: str, path: str, text: str, regenerate: str) -> None:
    """``--check``: the committed ``path`` equals ``text``, else a diff and exit 1."""
    current = read_text(command, path)
    if current == text:
        click.echo(f"{path} is up to date")
        return
    diff = difflib.unified_diff(
        current.splitlines(keepends=True),
        text.splitlines(keepends=True),
        fromfile=path,
        tofile=f"{path} (generated)",
    )
    click.echo("".join(line if line.endswith("\n") else line + "\n" for line in diff), nl=False)
    click.echo(
        f"mcpkit {command}: {path} is out of date; regenerate it with {regenerate}", err=True
    )
    raise click.exceptions.Exit(1)


def one_output(command: str, output: str | None, check: str | None) -> None:
    """A usage error when both ``-o`` and ``--check`` are given (checked before any work)."""
    if output is not None and check is not None:
        fail(command, "use either -o/--output or --check, not both")


def emit(command: str, text: str, output: str | None, check: str | None) -> None:
    """A generated file: compared with ``check``, written to ``output``, or printed."""
    if check is not None:
        check_fresh(command, check, text, f"-o {check}")
    elif output is not None:
        write_text(command, output, text)
    else:
        click.echo(text, nl=False)


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if exc.strerror[:1].isupper() else exc.strerror
    return str(exc)
