"""``mcpkit docs TARGET``: the App's tools as Markdown, HTML or the JSON a client receives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from mcpkit.cli._io import (
    check_fresh,
    check_option,
    load_compiled,
    one_output,
    output_option,
    protocol_version_option,
    write_text,
)
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
@output_option
@check_option
@protocol_version_option
def docs(
    target: str, fmt: str, output: str | None, check: str | None, protocol_version: str
) -> None:
    """Document the tools of the App that TARGET names (as for mcpkit run).

    Everything comes from the definitions the server publishes, read over the real protocol
    path, so the docs cannot drift from what clients see.
    """
    one_output("docs", output, check)
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
    check_fresh("docs", path, text, f"-o {path}")
