"""``mcpkit diff OLD.json NEW.json``: the changes to a tool contract, breaking or compatible."""

from __future__ import annotations

from typing import Any

import click

from mcpkit.cli._io import fail, read_json
from mcpkit.docgen.changes import compare, render_markdown, render_text

__all__ = ["diff"]


@click.command()
@click.argument("old")
@click.argument("new")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="markdown suits a pull-request comment.",
)
def diff(old: str, new: str, fmt: str) -> None:
    """Compare two files written by `mcpkit docs --format json`.

    Inputs (what clients send) break when they narrow: a tool removed, a new required
    parameter, a type narrowed, an enum value removed, a constraint tightened, a default
    changed. Outputs (what clients receive) break when they widen. Exit 1 when anything breaks.
    """
    changes = compare(_snapshot(old), _snapshot(new))
    click.echo((render_markdown if fmt == "markdown" else render_text)(changes), nl=False)
    if any(change.breaking for change in changes):
        raise click.exceptions.Exit(1)


def _snapshot(path: str) -> dict[str, Any]:
    value = read_json("diff", path)
    if not isinstance(value, dict) or not isinstance(value.get("tools/list"), list):
        fail("diff", f"{path} is not a file written by `mcpkit docs --format json`")
    return value
