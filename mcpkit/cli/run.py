"""``mcpkit run TARGET``: serve an App (stdio now; HTTP arrives with its issue)."""

from __future__ import annotations

import logging

import click

from mcpkit.cli.loader import TargetError, load_app

__all__ = ["run"]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


@click.command()
@click.argument("target")
@click.option(
    "--transport",
    type=click.Choice(["stdio"]),
    default="stdio",
    show_default=True,
    help="How clients connect.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS),
    default="warning",
    show_default=True,
    help="Server log level (logs go to stderr).",
)
def run(target: str, transport: str, log_level: str) -> None:
    """Serve the App that TARGET names (pkg.module:app or path/to/file.py:app).

    Over stdio the server reads JSON-RPC messages on stdin and writes only protocol messages on
    stdout; everything else, including a tool's print(), goes to stderr.
    """
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        app = load_app(target)
    except TargetError as exc:
        raise click.UsageError(str(exc)) from None
    from mcpkit.transports.stdio import run_stdio

    click.echo(
        f"mcpkit: serving {app.name!r} {app.version} ({len(app.tools)} tools) over "
        "stdio; waiting for a client on stdin",
        err=True,
    )
    run_stdio(app)
