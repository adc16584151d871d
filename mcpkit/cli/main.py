"""The ``mcpkit`` command: a click group that the subcommands hang from.

This module imports only :mod:`mcpkit._version` from mcpkit, so ``mcpkit --help`` and
``mcpkit --version`` work without loading the authoring API; each subcommand loads what it needs
when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from mcpkit._version import __version__
from mcpkit.cli.call import call
from mcpkit.cli.check import check
from mcpkit.cli.diff import diff
from mcpkit.cli.docs import docs
from mcpkit.cli.inspect import inspect
from mcpkit.cli.run import run

__all__ = ["cli", "main"]

PROG_NAME = "mcpkit"


@click.group(name=PROG_NAME, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name=PROG_NAME)
def cli() -> None:
    """Serve, document and check MCP tools written with mcpkit."""


cli.add_command(run)
cli.add_command(docs)
cli.add_command(inspect)
cli.add_command(call)
cli.add_command(check)
cli.add_command(diff)

# Subcommands (`run`, `docs`, `inspect`, `call`, `check`, `diff`) live one per module in
# mcpkit/cli/ and are registered here, one line each: `cli.add_command(run)`. Each new module
# goes into the L6 row of the layer table in docs/architecture.md.


def main(args: Sequence[str] | None = None) -> None:
    """Run the ``mcpkit`` command (the console script and ``python -m mcpkit``)."""
    cli.main(args=args, prog_name=PROG_NAME)
