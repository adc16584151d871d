"""``mcpkit dev TARGET``: serve the live page of an App (docs + try it) on a loopback port."""

from __future__ import annotations

import socket
import webbrowser

import click

from mcpkit.cli._io import fail
from mcpkit.cli.reloading import LoadFailure, load_fresh

__all__ = ["dev", "listen", "page_origins"]


@click.command()
@click.argument("target")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="The port to bind (0: any free port).",
)
@click.option("--no-open", is_flag=True, help="Do not open the page in a browser.")
def dev(target: str, host: str, port: int, no_open: bool) -> None:
    """Serve a live page to try the App that TARGET names (as for mcpkit run): its docs, a
    form per tool, resources, prompts, notifications, and a reload when a file under TARGET's
    folder changes.

    The page is an MCP client of the App's real Streamable HTTP endpoint (at /mcp on the
    same port). It needs uvicorn: pip install "mcpkit[http]".
    """
    try:
        import uvicorn
    except ImportError:
        click.echo(
            'mcpkit dev: error: the dev page needs uvicorn: pip install "mcpkit[http]"', err=True
        )
        raise click.exceptions.Exit(2) from None
    from mcpkit.dev.server import DevServer

    try:
        app = load_fresh(target)
    except LoadFailure as exc:
        fail("dev", str(exc))
    sock = listen(host, port)
    port = sock.getsockname()[1]
    url = _url(host, port)
    click.echo(f"mcpkit dev: {app.summary} at {url} (Ctrl-C to stop)")
    if not no_open:
        webbrowser.open(url)
    server = DevServer(target, app, allowed_origins=page_origins(host, port))
    config = uvicorn.Config(
        server, log_level="warning", access_log=False, ws="none", timeout_graceful_shutdown=1
    )
    uvicorn.Server(config).run(sockets=[sock])


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free one), or exit 2 saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        hint = " (pass --port N, or --port 0 for any free port)" if port else ""
        click.echo(
            f"mcpkit dev: error: cannot listen on {host}:{port}: {exc.strerror}{hint}", err=True
        )
        raise click.exceptions.Exit(2) from None
    sock.listen(128)
    return sock


def page_origins(host: str, port: int) -> list[str]:
    """The origins the page itself has (loopback names and ``host``, at ``port``): the only
    ones allowed to call ``/mcp``, so no other site, not even another local one, drives it."""
    names = dict.fromkeys(["127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host])
    return [f"http://{name}:{port}" for name in names]


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"
