"""The ``mcpkit`` command: a click group whose subcommands load when they are used.

``mcpkit run`` should start as fast as it can (stdio clients time out on slow servers), so the
group imports no subcommand module up front: ``mcpkit run`` loads only the server, and
``mcpkit --help`` and ``--version`` load none. Each subcommand lives in its own module under
``mcpkit/cli/`` and is listed once in ``COMMANDS`` with the one-line help ``--help`` shows
(a test keeps it equal to the command's own).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import click

from mcpkit._version import __version__

__all__ = ["COMMANDS", "cli", "main"]

PROG_NAME = "mcpkit"

COMMANDS: dict[str, tuple[str, str]] = {
    "bundle": (
        "mcpkit.cli.bundle",
        "Write the MCP Bundle manifest.json of the App that TARGET names.",
    ),
    "call": ("mcpkit.cli.call", "Call TOOL of the App that TARGET names and print the result."),
    "check": (
        "mcpkit.cli.check",
        "Compile and lint every definition of the App that TARGET names.",
    ),
    "dev": ("mcpkit.cli.dev", "Serve a live page to try the App that TARGET names."),
    "diff": ("mcpkit.cli.diff", "Compare two files written by `mcpkit docs --format json`."),
    "docs": ("mcpkit.cli.docs", "Document the tools of the App that TARGET names."),
    "install": ("mcpkit.cli.install", "Add the App that TARGET names to CLIENT's MCP servers."),
    "inspect": ("mcpkit.cli.inspect", "Summarize the App that TARGET names, one line per tool."),
    "registry": (
        "mcpkit.cli.registry",
        "Write the MCP Registry server.json of the App that TARGET names.",
    ),
    "run": ("mcpkit.cli.run", "Serve the App that TARGET names over stdio or HTTP."),
    "uninstall": (
        "mcpkit.cli.install",
        "Remove server NAME from CLIENT's MCP servers (the previous file is kept as FILE.bak).",
    ),
}
"""Subcommand name -> (module defining a click command of that name, one-line help)."""


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = getattr(module, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in sorted(COMMANDS)])


@click.group(
    name=PROG_NAME, cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "--version", prog_name=PROG_NAME)
def cli() -> None:
    """Serve, document and check MCP tools written with mcpkit."""


def main(args: Sequence[str] | None = None) -> None:
    """Run the ``mcpkit`` command (the console script and ``python -m mcpkit``)."""
    cli.main(args=args, prog_name=PROG_NAME)
