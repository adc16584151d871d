"""``mcpkit docs TARGET``: the App's tools as Markdown, HTML or the JSON a client receives."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import click

from mcpkit.cli._io import fail, load_compiled, protocol_version_option, read_text, write_text
from mcpkit.cli.snapshot import dumps, snapshot
from mcpkit.docgen import html, markdown

__all__ = ["RENDERERS", "docs", "generate"]

RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "markdown": markdown.render,
    "html": html.render,
    "json": dumps,
}


@click.command()
@click.argument("target")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(RENDERERS)),
    default="markdown",
    show_default=True,
    help="markdown and html for people; json is exactly what clients receive.",
)
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@click.option(
    "--check",
    metavar="FILE",
    help="Compare with FILE instead of writing; exit 1 with a diff when they differ.",
)
@protocol_version_option
def docs(
    target: str, fmt: str, output: str | None, check: str | None, protocol_version: str
) -> None:
    """Document the tools of the App that TARGET names (as for mcpkit run).

    Everything comes from the definitions the server publishes, read over the real protocol
    path, so the docs cannot drift from what clients see.
    """
    if output is not None and check is not None:
        fail("docs", "use either -o/--output or --check, not both")
    text = generate(load_compiled("docs", target), fmt, protocol_version)
    if check is not None:
        _check(check, text)
    elif output is not None:
        write_text("docs", output, text)
    else:
        click.echo(text, nl=False)


def generate(app: Any, fmt: str, protocol_version: str) -> str:
    """The page (or JSON) for an App."""
    return RENDERERS[fmt](snapshot(app, protocol_version))


def _check(path: str, text: str) -> None:
    current = read_text("docs", path)
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
    click.echo(f"mcpkit docs: {path} is out of date; regenerate it with -o {path}", err=True)
    raise click.exceptions.Exit(1)
